import { crc16CcittFalse } from './crc.js';
import {
  FRAME_HEADER,
  FRAME_OVERHEAD,
  FRAME_PREFIX_LENGTH,
  MAX_DATA_LENGTH,
  headerMatchesAt,
  readCrc,
  type Direction,
  type RawFrame,
} from './frame.js';

/** Counters of what the parser threw away, for diagnostics. */
export interface ParserStats {
  /** Bytes skipped while looking for a header. */
  garbageBytes: number;
  /** Candidate frames rejected because their CRC did not match. */
  badCrc: number;
  /** Candidate frames rejected because LEN was above the limit. */
  oversize: number;
  /** Candidate frames abandoned because a complete valid frame started inside them. */
  abandoned: number;
  frames: number;
}

/**
 * Streaming ViVOtech2 frame parser (reader-protocol.md, Frame): feed it bytes as they arrive; it returns every complete
 * frame with a correct CRC. It resynchronises on the header after garbage, rejects frames with a wrong CRC (dropping
 * only their first byte, so that a real frame starting inside them is still found), and bounds LEN so that a corrupt
 * length cannot make it wait for bytes that never come. Memory is bounded by MAX_DATA_LENGTH plus one chunk.
 *
 * It never throws on any input.
 */
export class FrameParser {
  private buf = new Uint8Array(1024);
  private start = 0;
  private end = 0;
  readonly stats: ParserStats = { garbageBytes: 0, badCrc: 0, oversize: 0, abandoned: 0, frames: 0 };

  constructor(
    readonly direction: Direction,
    private readonly maxDataLength = MAX_DATA_LENGTH,
  ) {}

  /** Bytes held while waiting for the rest of a frame. */
  get pending(): number {
    return this.end - this.start;
  }

  /** Drops everything held: the driver calls it to resynchronise after a timeout. */
  reset(): void {
    this.start = 0;
    this.end = 0;
  }

  /** Appends `chunk` and returns the frames it completed, in order. */
  push(chunk: Uint8Array): RawFrame[] {
    this.append(chunk);
    const frames: RawFrame[] = [];
    for (;;) {
      const frame = this.next();
      if (frame === undefined) break;
      frames.push(frame);
    }
    return frames;
  }

  private append(chunk: Uint8Array): void {
    const needed = this.end - this.start + chunk.length;
    if (this.end + chunk.length > this.buf.length) {
      if (needed <= this.buf.length) {
        this.buf.copyWithin(0, this.start, this.end);
      } else {
        let size = this.buf.length * 2;
        while (size < needed) size *= 2;
        const grown = new Uint8Array(size);
        grown.set(this.buf.subarray(this.start, this.end), 0);
        this.buf = grown;
      }
      this.end -= this.start;
      this.start = 0;
    }
    this.buf.set(chunk, this.end);
    this.end += chunk.length;
  }

  /** Skips to the next position where a header (or the beginning of one, at the end of the buffer) starts. */
  private seekHeader(from: number): number {
    const first = FRAME_HEADER[0] as number;
    let i = from;
    while (i < this.end) {
      i = this.buf.indexOf(first, i);
      if (i < 0 || i >= this.end) return this.end;
      if (headerMatchesAt(this.buf, i, this.end)) return i;
      i++;
    }
    return this.end;
  }

  /** The length of a complete frame with a good CRC at `at`, or 0. */
  private validFrameAt(at: number): number {
    if (this.end - at < FRAME_OVERHEAD || !headerMatchesAt(this.buf, at, this.end)) return 0;
    const len = ((this.buf[at + 12] as number) << 8) | (this.buf[at + 13] as number);
    if (len > this.maxDataLength || this.end - at < FRAME_OVERHEAD + len) return 0;
    const crcAt = at + FRAME_PREFIX_LENGTH + len;
    return readCrc(this.buf, crcAt, this.direction) === crc16CcittFalse(this.buf, at, crcAt)
      ? FRAME_OVERHEAD + len
      : 0;
  }

  private drop(count: number, reason: 'garbageBytes' | 'badCrc' | 'oversize' | 'abandoned'): void {
    this.stats[reason] += reason === 'garbageBytes' ? count : 1;
    if (reason !== 'garbageBytes') this.stats.garbageBytes += count;
    this.start += count;
    if (this.start === this.end) this.reset();
  }

  private next(): RawFrame | undefined {
    for (;;) {
      const h = this.seekHeader(this.start);
      if (h > this.start) this.drop(h - this.start, 'garbageBytes');
      const avail = this.end - this.start;
      if (avail < FRAME_PREFIX_LENGTH) return undefined;
      const at = this.start;
      const len = ((this.buf[at + 12] as number) << 8) | (this.buf[at + 13] as number);
      if (len > this.maxDataLength) {
        this.drop(1, 'oversize');
        continue;
      }
      const total = FRAME_OVERHEAD + len;
      if (avail < total) {
        // A truncated frame followed by a real one would otherwise hold the real one back until enough bytes arrive
        // to fill the truncated frame's LEN: if a complete frame with a good CRC starts inside, the truncated one is
        // abandoned (reader-protocol.md: resynchronise on the header).
        for (let i = this.seekHeader(at + 1); i < this.end; i = this.seekHeader(i + 1)) {
          if (this.validFrameAt(i) > 0) {
            this.drop(i - at, 'abandoned');
            break;
          }
        }
        if (this.start !== at) continue;
        return undefined;
      }
      const crcAt = at + FRAME_PREFIX_LENGTH + len;
      if (readCrc(this.buf, crcAt, this.direction) !== crc16CcittFalse(this.buf, at, crcAt)) {
        this.drop(1, 'badCrc');
        continue;
      }
      const frame: RawFrame = {
        cmd: this.buf[at + 10] as number,
        code: this.buf[at + 11] as number,
        data: this.buf.slice(at + FRAME_PREFIX_LENGTH, crcAt),
      };
      this.stats.frames++;
      this.start += total;
      if (this.start === this.end) this.reset();
      return frame;
    }
  }
}
