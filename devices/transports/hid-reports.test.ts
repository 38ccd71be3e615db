import { describe, expect, it } from 'vitest';
import { bytesToHex, hexToBytes } from '../../src/emv/index.js';
import { encodeReaderFrame } from '../vivotech2/frame.js';
import { PING_REPLY, VENDOR_REPLY } from '../vivotech2/testing/published-frames.js';
import { frameToReports, HID_REPORT_SIZE, HidReassembler } from './hid-reports.js';

const report = (id: number, body: Uint8Array = new Uint8Array(0)): Uint8Array => {
  const r = new Uint8Array(HID_REPORT_SIZE);
  r[0] = id;
  r.set(body.subarray(0, HID_REPORT_SIZE - 1), 1);
  return r;
};

describe('HID report chunking', () => {
  it('sends a frame of at most 63 bytes as one report with ID 1, padded with 00', () => {
    const reports = frameToReports(hexToBytes(PING_REPLY));
    expect(reports).toHaveLength(1);
    expect(reports[0]?.[0]).toBe(1);
    expect(reports[0]?.length).toBe(64);
    expect(bytesToHex(reports[0]?.subarray(17) ?? new Uint8Array(1))).toBe('00'.repeat(47));
  });

  it('splits a longer frame into IDs 2, 3 … 4 and reassembles it by LEN', () => {
    const frame = hexToBytes(VENDOR_REPLY);
    const reports = frameToReports(frame);
    expect(reports.map((r) => r[0])).toEqual([2, 3, 4]);
    const r = new HidReassembler();
    expect(r.push(reports[0] as Uint8Array)).toBeUndefined();
    expect(r.push(reports[1] as Uint8Array)).toBeUndefined();
    expect(bytesToHex(r.push(reports[2] as Uint8Array) ?? new Uint8Array(0))).toBe(bytesToHex(frame));
  });

  it('keeps trailing 00 bytes that belong to the frame (CRC or data), never trimming by content', () => {
    // Find a frame whose CRC ends in 00, so that trimming zeros would corrupt it.
    let frame: Uint8Array = new Uint8Array(0);
    for (let i = 0; i < 100_000; i++) {
      frame = encodeReaderFrame({
        cmd: 0x29,
        status: 0,
        data: Uint8Array.of(i >> 16, (i >> 8) & 0xff, i & 0xff, 0),
      });
      if (frame[frame.length - 1] === 0) break;
    }
    expect(frame[frame.length - 1]).toBe(0);
    const out = new HidReassembler().push(frameToReports(frame)[0] as Uint8Array);
    expect(bytesToHex(out ?? new Uint8Array(0))).toBe(bytesToHex(frame));
  });

  it('ignores IDs 3 and 4 that do not follow 2 or 3, and unknown IDs', () => {
    const r = new HidReassembler();
    const reports = frameToReports(hexToBytes(VENDOR_REPLY));
    expect(r.push(reports[1] as Uint8Array)).toBeUndefined();
    expect(r.push(reports[2] as Uint8Array)).toBeUndefined();
    expect(r.push(report(9, hexToBytes(PING_REPLY)))).toBeUndefined();
    expect(r.ignored).toBe(3);
    expect(r.push(frameToReports(hexToBytes(PING_REPLY))[0] as Uint8Array)).toBeDefined();
  });

  it('drops a sequence whose last chunk leaves the frame short (a lost middle report)', () => {
    const long = encodeReaderFrame({ cmd: 0x03, status: 0, data: new Uint8Array(200).fill(0x41) });
    const reports = frameToReports(long);
    expect(reports.map((x) => x[0])).toEqual([2, 3, 3, 4]);
    const r = new HidReassembler();
    r.push(reports[0] as Uint8Array);
    r.push(reports[1] as Uint8Array);
    expect(r.push(reports[3] as Uint8Array)).toBeUndefined();
    for (const x of reports) r.push(x);
    expect(r.ignored).toBe(1);
  });

  it('ignores a first report that is not a frame start or announces a LEN above the bound', () => {
    const r = new HidReassembler();
    expect(r.push(report(1, new Uint8Array(63).fill(0x55)))).toBeUndefined();
    const bad = hexToBytes(PING_REPLY);
    bad[12] = 0xff;
    expect(r.push(report(2, bad))).toBeUndefined();
    expect(r.ignored).toBe(2);
  });
});
