import { crc16CcittFalse } from './crc.js';

/**
 * ViVOtech2 frame codec (reader-protocol.md, Frame):
 *   host -> reader : "ViVOtech2\0" | CMD | SUBCMD | LEN (2, MSB first) | DATA | CRC (2, LSB first)
 *   reader -> host : "ViVOtech2\0" | CMD | STATUS | LEN (2, MSB first) | DATA | CRC (2, MSB first)
 * Pure functions, no I/O.
 */

/** Which way a frame travels; it decides the CRC byte order. */
export type Direction = 'host-to-reader' | 'reader-to-host';

/** `56 69 56 4F 74 65 63 68 32 00`: ASCII "ViVOtech2" and a NUL. */
export const FRAME_HEADER: Uint8Array = Uint8Array.from([
  0x56, 0x69, 0x56, 0x4f, 0x74, 0x65, 0x63, 0x68, 0x32, 0x00,
]);
/** Bytes before DATA: header, CMD, SUBCMD/STATUS, LEN. */
export const FRAME_PREFIX_LENGTH = FRAME_HEADER.length + 4;
/** Bytes of a frame without data: prefix and CRC. */
export const FRAME_OVERHEAD = FRAME_PREFIX_LENGTH + 2;
/**
 * Largest DATA length accepted. A reader never sends more than a few KiB (reader-protocol.md): a LEN above this is a
 * corrupt length, and bounding it keeps a parser from waiting for bytes that will never come.
 */
export const MAX_DATA_LENGTH = 4096;

/** A frame without its header and CRC. */
export interface RawFrame {
  /** Command byte (the reply repeats the command it answers). */
  readonly cmd: number;
  /** Sub-command (host to reader) or status code (reader to host). */
  readonly code: number;
  readonly data: Uint8Array;
}

/** A frame decoded from bytes, with the CRC it carried. */
export interface DecodedFrame extends RawFrame {
  readonly direction: Direction;
  /** DATA length from the LEN field. */
  readonly length: number;
  /** CRC as carried by the frame, in the byte order of `direction`. */
  readonly crc: number;
  /** Whether `crc` equals the CRC computed over the frame. */
  readonly crcOk: boolean;
}

export type FrameErrorCode =
  | 'FRAME_HEADER' // the bytes do not start with "ViVOtech2\0"
  | 'FRAME_TRUNCATED' // fewer bytes than the header and LEN announce
  | 'FRAME_TRAILING' // bytes after the CRC
  | 'FRAME_TOO_LONG' // LEN above MAX_DATA_LENGTH, or data too long to encode
  | 'FRAME_FIELD' // a CMD/SUBCMD/STATUS outside 0–255
  | 'FRAME_BAD_CRC'; // a frame in a stream whose CRC does not match (FrameParser)

/** A byte sequence that is not one ViVOtech2 frame. `offset` is the byte where the problem is. */
export class FrameError extends Error {
  override readonly name = 'FrameError';
  constructor(
    readonly code: FrameErrorCode,
    message: string,
    readonly offset: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

function checkByte(value: number, field: string): void {
  if (!Number.isInteger(value) || value < 0 || value > 0xff)
    throw new FrameError('FRAME_FIELD', `${field} must be a byte (0-255), got ${value}`, 0);
}

function encode(frame: RawFrame, direction: Direction, maxDataLength: number): Uint8Array {
  checkByte(frame.cmd, 'CMD');
  checkByte(frame.code, direction === 'host-to-reader' ? 'SUBCMD' : 'STATUS');
  const len = frame.data.length;
  if (len > maxDataLength)
    throw new FrameError(
      'FRAME_TOO_LONG',
      `data of ${len} bytes exceeds ${maxDataLength}`,
      FRAME_HEADER.length + 2,
    );
  const out = new Uint8Array(FRAME_OVERHEAD + len);
  out.set(FRAME_HEADER, 0);
  const h = FRAME_HEADER.length;
  out[h] = frame.cmd;
  out[h + 1] = frame.code;
  out[h + 2] = len >> 8;
  out[h + 3] = len & 0xff;
  out.set(frame.data, FRAME_PREFIX_LENGTH);
  const crc = crc16CcittFalse(out, 0, FRAME_PREFIX_LENGTH + len);
  writeCrc(out, FRAME_PREFIX_LENGTH + len, crc, direction);
  return out;
}

/** Writes `crc` at `at`: low byte first towards the reader, high byte first towards the host (reader-protocol.md). */
function writeCrc(out: Uint8Array, at: number, crc: number, direction: Direction): void {
  const hi = crc >> 8;
  const lo = crc & 0xff;
  out[at] = direction === 'host-to-reader' ? lo : hi;
  out[at + 1] = direction === 'host-to-reader' ? hi : lo;
}

/** Reads the CRC at `at` in the byte order of `direction`. */
export function readCrc(bytes: Uint8Array, at: number, direction: Direction): number {
  const a = bytes[at] as number;
  const b = bytes[at + 1] as number;
  return direction === 'host-to-reader' ? a | (b << 8) : (a << 8) | b;
}

/** Encodes a command frame (host to reader): CRC low byte first. */
export function encodeHostFrame(
  frame: { cmd: number; sub: number; data?: Uint8Array },
  maxDataLength = MAX_DATA_LENGTH,
): Uint8Array {
  return encode(
    { cmd: frame.cmd, code: frame.sub, data: frame.data ?? new Uint8Array(0) },
    'host-to-reader',
    maxDataLength,
  );
}

/** Encodes a reply frame (reader to host): CRC high byte first. */
export function encodeReaderFrame(
  frame: { cmd: number; status: number; data?: Uint8Array },
  maxDataLength = MAX_DATA_LENGTH,
): Uint8Array {
  return encode(
    { cmd: frame.cmd, code: frame.status, data: frame.data ?? new Uint8Array(0) },
    'reader-to-host',
    maxDataLength,
  );
}

/** Whether `bytes[at..]` begins with as much of the header as it holds (a partial header at the end counts). */
export function headerMatchesAt(bytes: Uint8Array, at: number, end = bytes.length): boolean {
  const n = Math.min(FRAME_HEADER.length, end - at);
  for (let i = 0; i < n; i++) if (bytes[at + i] !== FRAME_HEADER[i]) return false;
  return true;
}

/**
 * Decodes exactly one frame. A wrong CRC is reported through `crcOk`, not thrown, so that captured traffic can be
 * inspected; a wrong header, a truncated frame, trailing bytes or a LEN above `maxDataLength` throw a FrameError.
 */
export function decodeFrame(
  bytes: Uint8Array,
  direction: Direction,
  maxDataLength = MAX_DATA_LENGTH,
): DecodedFrame {
  for (let i = 0; i < Math.min(FRAME_HEADER.length, bytes.length); i++)
    if (bytes[i] !== FRAME_HEADER[i])
      throw new FrameError('FRAME_HEADER', 'frame does not start with "ViVOtech2\\0"', i);
  const h = FRAME_HEADER.length;
  if (bytes.length < FRAME_PREFIX_LENGTH)
    throw new FrameError(
      'FRAME_TRUNCATED',
      `frame of ${bytes.length} bytes ends before its LEN field`,
      bytes.length,
    );
  const length = ((bytes[h + 2] as number) << 8) | (bytes[h + 3] as number);
  if (length > maxDataLength)
    throw new FrameError('FRAME_TOO_LONG', `LEN ${length} exceeds the limit of ${maxDataLength}`, h + 2);
  const total = FRAME_OVERHEAD + length;
  if (bytes.length < total)
    throw new FrameError(
      'FRAME_TRUNCATED',
      `LEN ${length} needs ${total} bytes, got ${bytes.length}`,
      bytes.length,
    );
  if (bytes.length > total)
    throw new FrameError('FRAME_TRAILING', `${bytes.length - total} bytes after the CRC`, total);
  const crc = readCrc(bytes, FRAME_PREFIX_LENGTH + length, direction);
  return {
    direction,
    cmd: bytes[h] as number,
    code: bytes[h + 1] as number,
    length,
    data: bytes.slice(FRAME_PREFIX_LENGTH, FRAME_PREFIX_LENGTH + length),
    crc,
    crcOk: crc === crc16CcittFalse(bytes, 0, FRAME_PREFIX_LENGTH + length),
  };
}
