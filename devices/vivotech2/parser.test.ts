import { describe, expect, it } from 'vitest';
import { bytesToHex, hexToBytes } from '../../src/emv/index.js';
import {
  encodeReaderFrame,
  FRAME_OVERHEAD,
  MAX_DATA_LENGTH,
  type FrameError,
  type RawFrame,
} from './frame.js';
import { FrameParser } from './parser.js';
import { PING_REPLY, VENDOR_REPLY } from './testing/published-frames.js';
import { xorshift32 } from '../../src/emv/testing/xorshift.js';

const concat = (...parts: Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

/** Reference CRC, bit by bit (independent of the table-driven implementation under test). */
function referenceCrc(bytes: Uint8Array): number {
  let crc = 0xffff;
  for (const b of bytes) {
    crc ^= b << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

describe('FrameParser', () => {
  it('parses the vendor reply delivered one byte at a time', () => {
    const parser = new FrameParser('reader-to-host');
    const bytes = hexToBytes(VENDOR_REPLY);
    const frames: RawFrame[] = [];
    for (const b of bytes) frames.push(...parser.push(Uint8Array.of(b)));
    expect(frames).toHaveLength(1);
    expect(frames[0]).toMatchObject({ cmd: 0x03, code: 0x00 });
    expect(frames[0]?.data.length).toBe(0x76);
    expect(parser.pending).toBe(0);
  });

  it('resynchronises on the header after garbage, including a partial header', () => {
    const parser = new FrameParser('reader-to-host');
    const garbage = hexToBytes('00 FF 56 69 56 4F 74 13 56 69 56');
    const frames = parser.push(concat(garbage, hexToBytes(PING_REPLY), garbage, hexToBytes(VENDOR_REPLY)));
    expect(frames.map((f) => f.cmd)).toEqual([0x18, 0x03]);
    expect(parser.stats.garbageBytes).toBe(2 * garbage.length);
  });

  it('rejects a frame whose CRC is wrong and still finds the next one', () => {
    const parser = new FrameParser('reader-to-host');
    const bad = hexToBytes(VENDOR_REPLY);
    bad[40] = (bad[40] as number) ^ 0x01;
    const frames = parser.push(concat(bad, hexToBytes(PING_REPLY)));
    expect(frames.map((f) => f.cmd)).toEqual([0x18]);
    expect(parser.stats.badCrc).toBe(1);
  });

  it('rejects a reply frame carrying the host byte order of the CRC', () => {
    const parser = new FrameParser('reader-to-host');
    expect(parser.push(hexToBytes('5669564F746563683200 18 01 0000 B3CD'))).toEqual([]);
  });

  it('bounds LEN: a corrupt length does not hold back the frames after it', () => {
    const parser = new FrameParser('reader-to-host');
    const corrupt = hexToBytes(PING_REPLY);
    corrupt[12] = 0xff;
    corrupt[13] = 0xff;
    expect(parser.push(concat(corrupt, hexToBytes(PING_REPLY))).map((f) => f.cmd)).toEqual([0x18]);
    expect(parser.stats.oversize).toBe(1);
  });

  it('abandons a truncated frame when the line goes quiet, and finds the frames behind it', () => {
    const errors: FrameError[] = [];
    const parser = new FrameParser('reader-to-host', MAX_DATA_LENGTH, (e) => errors.push(e));
    const vendor = hexToBytes(VENDOR_REPLY);
    const ping = hexToBytes(PING_REPLY);
    // Two frames cut short, each holding the frames behind it within its LEN, then the start of a header.
    const stream = concat(vendor.subarray(0, 50), ping, vendor.subarray(0, 20), ping, vendor.subarray(0, 6));
    // While bytes may still come, the frames behind a frame that has not fully arrived are its data.
    expect(parser.push(stream)).toEqual([]);
    expect(parser.pending).toBe(stream.length);
    expect(errors).toEqual([]);
    expect(parser.lineQuiet().map((f) => f.cmd)).toEqual([0x18, 0x18]);
    expect(errors.map((e) => [e.code, e.offset])).toEqual([
      ['FRAME_TRUNCATED', 0],
      ['FRAME_TRUNCATED', 50 + ping.length],
    ]);
    expect(parser.stats.abandoned).toBe(2);
    expect(parser.pending).toBe(0);
    expect(parser.lineQuiet()).toEqual([]);
    expect(parser.push(ping).map((f) => f.cmd)).toEqual([0x18]);
  });

  /**
   * An activate reply whose card data (a TLV value the card chose) holds a complete frame of its own: a "reply" with a
   * good CRC and another card number. Only the outer frame is a reply; its bytes are never frames.
   */
  const NESTED = encodeReaderFrame({
    cmd: 0x02,
    status: 0x00,
    data: hexToBytes('00 00 00 DF0125 ' + bytesToHex(nestedReply()) + ' 5A08 4761739001010119'),
  });
  function nestedReply(): Uint8Array {
    return encodeReaderFrame({ cmd: 0x02, status: 0x00, data: hexToBytes('00 00 00 5A08 5555555555554444') });
  }

  it('takes no frame from inside a frame whose CRC is wrong, reports it, and finds the frame after it', () => {
    const errors: FrameError[] = [];
    const parser = new FrameParser('reader-to-host', MAX_DATA_LENGTH, (e) => errors.push(e));
    const corrupt = NESTED.slice();
    corrupt[corrupt.length - 4] = (corrupt[corrupt.length - 4] as number) ^ 0x01;
    const frames = parser.push(concat(corrupt, hexToBytes(PING_REPLY)));
    expect(frames.map((f) => f.cmd)).toEqual([0x18]);
    expect(errors.map((e) => [e.code, e.offset])).toEqual([['FRAME_BAD_CRC', 0]]);
    expect(parser.pending).toBe(0);
  });

  it('takes no frame from the card data of a good frame that arrives in two reads', () => {
    const errors: FrameError[] = [];
    const parser = new FrameParser('reader-to-host', MAX_DATA_LENGTH, (e) => errors.push(e));
    const split = 14 + 3 + 3 + nestedReply().length + 2;
    const frames = [...parser.push(NESTED.subarray(0, split)), ...parser.push(NESTED.subarray(split))];
    expect(frames.map((f) => bytesToHex(f.data))).toEqual([
      bytesToHex(NESTED.subarray(14, NESTED.length - 2)),
    ]);
    expect(errors).toEqual([]);
    expect(parser.pending).toBe(0);
  });

  it('takes no frame from inside a frame whose LEN is wrong', () => {
    const errors: FrameError[] = [];
    const parser = new FrameParser('reader-to-host', MAX_DATA_LENGTH, (e) => errors.push(e));
    for (const delta of [-3, +3]) {
      const corrupt = NESTED.slice();
      corrupt[13] = (corrupt[13] as number) + delta;
      const frames = parser.push(concat(corrupt, hexToBytes(VENDOR_REPLY)));
      expect(frames.map((f) => f.cmd)).toEqual([0x03]);
    }
    expect(errors.map((e) => e.code)).toEqual(['FRAME_BAD_CRC', 'FRAME_BAD_CRC']);
  });

  it('keeps data bytes equal to 00 (frames are delimited by LEN, not content)', () => {
    const parser = new FrameParser('reader-to-host');
    const frame = encodeReaderFrame({ cmd: 0x29, status: 0, data: new Uint8Array(5) });
    expect(bytesToHex(parser.push(frame)[0]?.data ?? new Uint8Array(1))).toBe('0000000000');
  });

  it('drops everything held on reset()', () => {
    const parser = new FrameParser('reader-to-host');
    parser.push(hexToBytes(VENDOR_REPLY).subarray(0, 30));
    expect(parser.pending).toBe(30);
    parser.reset();
    expect(parser.pending).toBe(0);
    expect(parser.push(hexToBytes(PING_REPLY))).toHaveLength(1);
  });

  it('survives a fuzzed stream of 1,000,000 random, truncated and corrupted frames without accepting a bad CRC', () => {
    const next = xorshift32(0x5eed1234);
    // A pool of distinct valid frames; each carries its pool index in its first two data bytes.
    const POOL = 512;
    const pool: Uint8Array[] = [];
    for (let i = 0; i < POOL; i++) {
      const len = 2 + (next() % (i % 16 === 0 ? 600 : 48));
      const data = new Uint8Array(len);
      for (let j = 2; j < len; j++) data[j] = next() & 0xff;
      data[0] = i >> 8;
      data[1] = i & 0xff;
      pool.push(encodeReaderFrame({ cmd: next() & 0xff, status: next() & 0xff, data }));
    }
    // The pool's CRCs, checked by the independent bitwise CRC: a received frame equal to a pool frame has a good CRC.
    for (const f of pool) {
      const crcAt = f.length - 2;
      expect(referenceCrc(f.subarray(0, crcAt))).toBe(((f[crcAt] ?? 0) << 8) | (f[crcAt + 1] ?? 0));
    }
    const sameAsPool = (f: RawFrame, original: Uint8Array): boolean => {
      if (
        original.length !== f.data.length + FRAME_OVERHEAD ||
        original[10] !== f.cmd ||
        original[11] !== f.code
      )
        return false;
      for (let j = 0; j < f.data.length; j++) if (original[14 + j] !== f.data[j]) return false;
      return true;
    };
    const parser = new FrameParser('reader-to-host');
    const TOTAL = 1_000_000;
    let intactSent = 0;
    let intactReceived = 0;
    let foreign = 0;
    // Pool ids of the intact frames sent and not yet received, oldest first.
    const expected: number[] = [];
    let head = 0;
    const check = (frames: RawFrame[]): void => {
      for (const f of frames) {
        const id = ((f.data[0] ?? 0) << 8) | (f.data[1] ?? 0);
        const original = pool[id];
        if (original === undefined || !sameAsPool(f, original)) {
          // Not a frame we sent: random bytes whose CRC matched by chance. Its CRC must still be right.
          const bytes = encodeReaderFrame({ cmd: f.cmd, status: f.code, data: f.data });
          const crcAt = bytes.length - 2;
          expect(referenceCrc(bytes.subarray(0, crcAt))).toBe(
            ((bytes[crcAt] ?? 0) << 8) | (bytes[crcAt + 1] ?? 0),
          );
          foreign++;
          continue;
        }
        // In order: frames in between may only be lost, never reordered or duplicated.
        const at = expected.indexOf(id, head);
        if (at < head) expect.unreachable(`frame ${id} received out of order or twice`);
        head = at + 1;
        intactReceived++;
      }
    };
    const chunk = new Uint8Array(1 << 16);
    let fill = 0;
    const flush = (): void => {
      let at = 0;
      while (at < fill) {
        const size = 1 + (next() % 2048);
        check(parser.push(chunk.subarray(at, Math.min(fill, at + size))));
        at += size;
      }
      // The line goes quiet: whatever is held is cut short, and the frames behind it are found.
      check(parser.lineQuiet());
      expect(parser.pending).toBe(0);
      fill = 0;
      expected.splice(0, head);
      head = 0;
    };
    const put = (bytes: Uint8Array): void => {
      if (fill + bytes.length > chunk.length) flush();
      chunk.set(bytes, fill);
      fill += bytes.length;
    };
    for (let n = 0; n < TOTAL; n++) {
      const id = next() % POOL;
      const frame = pool[id] as Uint8Array;
      const kind = next() % 10;
      if (kind < 6) {
        put(frame);
        expected.push(id);
        intactSent++;
      } else if (kind === 6) {
        // Truncated anywhere, header included.
        put(frame.subarray(0, next() % frame.length));
      } else if (kind === 7) {
        // One byte corrupted (CRC-16 detects every error burst of up to 16 bits).
        const copy = frame.slice();
        const at = next() % copy.length;
        copy[at] = (copy[at] as number) ^ (1 + (next() % 255));
        put(copy);
      } else if (kind === 8) {
        const garbage = new Uint8Array(next() % 40);
        for (let j = 0; j < garbage.length; j++) garbage[j] = next() & 0xff;
        put(garbage);
      } else {
        // A frame whose LEN was corrupted upwards, beyond the bound.
        const copy = frame.slice();
        copy[12] = 0x10 | (next() & 0xef);
        put(copy.subarray(0, Math.min(copy.length, FRAME_OVERHEAD)));
      }
    }
    flush();
    expected.push(0);
    intactSent++;
    check(parser.push(pool[0] as Uint8Array));
    // Nothing but real, intact frames comes out, barring the odd chance CRC match of random bytes (2^-16 each).
    expect(foreign).toBeLessThanOrEqual(Math.ceil(TOTAL / 65_536) * 4);
    // Resynchronisation loses only frames glued to a damaged neighbour.
    expect(intactSent).toBeGreaterThan(TOTAL * 0.55);
    expect(intactReceived).toBeGreaterThan(intactSent * 0.9);
    expect(parser.pending).toBeLessThanOrEqual(MAX_DATA_LENGTH + FRAME_OVERHEAD);
  });
});
