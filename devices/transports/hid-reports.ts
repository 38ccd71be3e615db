import { FRAME_HEADER, FRAME_OVERHEAD, MAX_DATA_LENGTH } from '../vivotech2/frame.js';

/**
 * ViVOtech2 frames over USB-HID (reader-protocol.md, The same frames over USB-HID): 64-byte reports, a report ID and 63
 * data bytes. ID 1 carries a whole frame of at most 63 bytes; ID 2 the first 63 bytes of a longer one, ID 3 middle
 * chunks, ID 4 the last chunk. Padding is `00`, so frames are reassembled by LEN, never by trimming zeros.
 */

/** Bytes in one report, report ID included. */
export const HID_REPORT_SIZE = 64;
/** Frame bytes carried by one report. */
export const HID_CHUNK_SIZE = HID_REPORT_SIZE - 1;

export const REPORT_ID = { whole: 1, first: 2, middle: 3, last: 4 } as const;

/** Splits one frame into 64-byte reports (report ID first, padded with 00). */
export function frameToReports(frame: Uint8Array): Uint8Array[] {
  const reports: Uint8Array[] = [];
  const chunks = Math.max(1, Math.ceil(frame.length / HID_CHUNK_SIZE));
  for (let i = 0; i < chunks; i++) {
    const report = new Uint8Array(HID_REPORT_SIZE);
    report[0] =
      chunks === 1
        ? REPORT_ID.whole
        : i === 0
          ? REPORT_ID.first
          : i === chunks - 1
            ? REPORT_ID.last
            : REPORT_ID.middle;
    report.set(frame.subarray(i * HID_CHUNK_SIZE, (i + 1) * HID_CHUNK_SIZE), 1);
    reports.push(report);
  }
  return reports;
}

/** Total frame length announced by a frame's first bytes, or undefined when they are not a frame start. */
function announcedLength(bytes: Uint8Array): number | undefined {
  if (bytes.length < FRAME_HEADER.length + 4) return undefined;
  for (let i = 0; i < FRAME_HEADER.length; i++) if (bytes[i] !== FRAME_HEADER[i]) return undefined;
  const len = ((bytes[12] as number) << 8) | (bytes[13] as number);
  return len > MAX_DATA_LENGTH ? undefined : FRAME_OVERHEAD + len;
}

/**
 * Reassembles reports into frame bytes. Reports that do not fit the sequence (ID 3/4 without a preceding 2 or 3,
 * unknown IDs, a first chunk without a frame header or with a LEN above the limit) are ignored; the frame parser
 * downstream still checks the CRC. Never throws.
 */
export class HidReassembler {
  private parts: Uint8Array[] = [];
  private have = 0;
  private expected = 0;
  /** Reports ignored because they did not fit the sequence. */
  ignored = 0;

  /** Feeds one report (report ID first). Returns the bytes of a completed frame, or undefined. */
  push(report: Uint8Array): Uint8Array | undefined {
    const id = report[0] ?? 0;
    const body = report.subarray(1, HID_REPORT_SIZE);
    switch (id) {
      case REPORT_ID.whole: {
        this.reset();
        const total = announcedLength(body);
        if (total === undefined || total > body.length) return this.ignore();
        return body.slice(0, total);
      }
      case REPORT_ID.first: {
        this.reset();
        const total = announcedLength(body);
        if (total === undefined || total <= body.length) return this.ignore();
        this.expected = total;
        this.parts.push(body.slice());
        this.have = body.length;
        return undefined;
      }
      case REPORT_ID.middle:
      case REPORT_ID.last: {
        if (this.expected === 0) return this.ignore();
        const take = Math.min(body.length, this.expected - this.have);
        this.parts.push(body.slice(0, take));
        this.have += take;
        if (id === REPORT_ID.middle && this.have < this.expected) return undefined;
        if (this.have < this.expected) {
          // A last chunk that leaves the frame short: the sequence was broken (a lost report).
          this.reset();
          return this.ignore();
        }
        const out = new Uint8Array(this.expected);
        let at = 0;
        for (const p of this.parts) {
          out.set(p, at);
          at += p.length;
        }
        this.reset();
        return out;
      }
      default:
        return this.ignore();
    }
  }

  reset(): void {
    this.parts = [];
    this.have = 0;
    this.expected = 0;
  }

  private ignore(): undefined {
    this.ignored++;
    return undefined;
  }
}
