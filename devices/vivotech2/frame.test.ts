import { describe, expect, it } from 'vitest';
import { bytesToHex, hexToBytes } from '../../src/emv/index.js';
import { crc16CcittFalse } from './crc.js';
import { PING_REPLY, PING_REQUEST, VENDOR_DATA, VENDOR_REPLY } from './testing/published-frames.js';
import { decodeFrame, encodeHostFrame, encodeReaderFrame, FrameError, MAX_DATA_LENGTH } from './frame.js';

describe('CRC-16/CCITT-FALSE', () => {
  it('gives the check value 0x29B1 for ASCII 123456789', () => {
    expect(crc16CcittFalse(new TextEncoder().encode('123456789'))).toBe(0x29b1);
  });

  it('continues a computation from an intermediate value', () => {
    const bytes = new TextEncoder().encode('123456789');
    expect(crc16CcittFalse(bytes, 4, 9, crc16CcittFalse(bytes, 0, 4))).toBe(0x29b1);
  });
});

describe('frame codec', () => {
  it('encodes the published Ping command with the CRC low byte first', () => {
    expect(bytesToHex(encodeHostFrame({ cmd: 0x18, sub: 0x01 }))).toBe(bytesToHex(hexToBytes(PING_REQUEST)));
  });

  it('encodes the published Ping reply with the CRC high byte first', () => {
    expect(bytesToHex(encodeReaderFrame({ cmd: 0x18, status: 0x00 }))).toBe(
      bytesToHex(hexToBytes(PING_REPLY)),
    );
  });

  it('decodes and re-encodes the published Ping frames exactly', () => {
    const req = decodeFrame(hexToBytes(PING_REQUEST), 'host-to-reader');
    expect(req).toMatchObject({ cmd: 0x18, code: 0x01, length: 0, crc: 0xcdb3, crcOk: true });
    expect(bytesToHex(encodeHostFrame({ cmd: req.cmd, sub: req.code, data: req.data }))).toBe(
      bytesToHex(hexToBytes(PING_REQUEST)),
    );
    const rep = decodeFrame(hexToBytes(PING_REPLY), 'reader-to-host');
    expect(rep).toMatchObject({ cmd: 0x18, code: 0x00, length: 0, crc: 0xfa83, crcOk: true });
  });

  it("round-trips the vendor's data-bearing reply frame exactly (LEN 0x0076, CRC 6A44)", () => {
    const bytes = hexToBytes(VENDOR_REPLY);
    const frame = decodeFrame(bytes, 'reader-to-host');
    expect(frame).toMatchObject({ cmd: 0x03, code: 0x00, length: 0x76, crc: 0x6a44, crcOk: true });
    expect(bytesToHex(frame.data)).toBe(bytesToHex(hexToBytes(VENDOR_DATA)));
    expect(bytesToHex(encodeReaderFrame({ cmd: frame.cmd, status: frame.code, data: frame.data }))).toBe(
      bytesToHex(bytes),
    );
  });

  it('reports a CRC in the wrong byte order as not ok', () => {
    // The reader's Ping reply read as if it came from the host: same bytes, other byte order.
    expect(decodeFrame(hexToBytes(PING_REPLY), 'host-to-reader').crcOk).toBe(false);
  });

  it('rejects a frame whose header is wrong, naming the byte', () => {
    const bytes = hexToBytes(PING_REPLY);
    bytes[3] = 0x6f;
    expect(() => decodeFrame(bytes, 'reader-to-host')).toThrow(
      expect.objectContaining({ code: 'FRAME_HEADER', offset: 3 }),
    );
  });

  it('rejects truncated frames and trailing bytes', () => {
    const bytes = hexToBytes(VENDOR_REPLY);
    expect(() => decodeFrame(bytes.subarray(0, bytes.length - 1), 'reader-to-host')).toThrow(
      expect.objectContaining({ code: 'FRAME_TRUNCATED' }),
    );
    expect(() => decodeFrame(bytes.subarray(0, 12), 'reader-to-host')).toThrow(FrameError);
    const longer = new Uint8Array(bytes.length + 1);
    longer.set(bytes);
    expect(() => decodeFrame(longer, 'reader-to-host')).toThrow(
      expect.objectContaining({ code: 'FRAME_TRAILING' }),
    );
  });

  it('rejects a LEN above the bound instead of waiting for it', () => {
    const bytes = hexToBytes(PING_REPLY);
    bytes[12] = 0xff;
    expect(() => decodeFrame(bytes, 'reader-to-host')).toThrow(
      expect.objectContaining({ code: 'FRAME_TOO_LONG' }),
    );
    expect(() => encodeHostFrame({ cmd: 1, sub: 1, data: new Uint8Array(MAX_DATA_LENGTH + 1) })).toThrow(
      expect.objectContaining({ code: 'FRAME_TOO_LONG' }),
    );
  });

  it('refuses command bytes outside 0-255', () => {
    expect(() => encodeHostFrame({ cmd: 256, sub: 0 })).toThrow(
      expect.objectContaining({ code: 'FRAME_FIELD' }),
    );
    expect(() => encodeReaderFrame({ cmd: 1, status: -1 })).toThrow(
      expect.objectContaining({ code: 'FRAME_FIELD' }),
    );
  });
});
