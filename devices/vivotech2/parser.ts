import { crc16CcittFalse } from './crc.js';
import {
  FRAME_HEADER,
  FRAME_OVERHEAD,
  FRAME_PREFIX_LENGTH,
  FrameError,
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
  /** Frames abandoned because the line went quiet before all their bytes arrived (`lineQuiet`). */
  abandoned: number;
  /** Frames with a good CRC not taken because they lie inside the data of a frame whose CRC was wrong. */
  nested: number;
  frames: number;
}

/**
 * Streaming ViVOtech2 frame parser (reader-protocol.md, Frame): feed it bytes as they arrive; it returns every complete
 * frame with a correct CRC. It resynchronises on the header after garbage, rejects frames with a wrong CRC, and bounds
 * LEN so that a corrupt length cannot make it wait for bytes that never come. Memory is bounded by MAX_DATA_LENGTH plus
 * one chunk.
 *
 * Nothing inside the data of a frame rejected for its CRC is taken as a frame. Card data (a TLV value the card chose)
 * can hold the bytes of a whole frame with a good CRC; inside a good frame they are data, and a frame damaged on the
 * line does not turn them into a reply. After such a frame the parser resynchronises on the next header from its
 * second byte (its LEN may be the damaged byte), and takes a frame found there only when it does not lie inside the data
 * the rejected frame's LEN declared: one that starts in its header or LEN, or runs past that end (a frame cut short and
 * followed by the next one), is taken.
 *
 * Nothing inside a frame whose bytes have not all arrived is taken either: a good frame may come in several reads, and
 * a frame with a good CRC in the card data of its first read is data, not a reply. A frame is known to be cut short
 * only when the line goes quiet before its last byte (a reader sends a frame without pauses): the owner of the parser
 * times the gap between reads and calls `lineQuiet`, which abandons what is held and finds the frames behind it. Until
 * then (or until `reset`) a frame cut short holds back what follows it, at most MAX_DATA_LENGTH bytes.
 *
 * Every rejected frame is reported to `onError` as a FrameError whose `offset` counts bytes from the start of the
 * stream (the first byte pushed since the parser was made): FRAME_BAD_CRC, FRAME_TOO_LONG (LEN above the limit),
 * FRAME_TRUNCATED (abandoned by `lineQuiet`). It never throws on any input.
 */
export class FrameParser {
  private buf = new Uint8Array(1024);
  private start = 0;
  private end = 0;
  /** Stream offset of `buf[start]`: bytes consumed or dropped so far. */
  private consumed = 0;
  /** Stream offsets [from, to) of the data of the last frames rejected for their CRC: no frame inside is taken. */
  private shieldFrom = 0;
  private shieldTo = 0;
  readonly stats: ParserStats = {
    garbageBytes: 0,
    badCrc: 0,
    oversize: 0,
    abandoned: 0,
    nested: 0,
    frames: 0,
  };

  constructor(
    readonly direction: Direction,
    private readonly maxDataLength = MAX_DATA_LENGTH,
    private readonly onError?: (error: FrameError) => void,
  ) {}

  /** Bytes held while waiting for the rest of a frame. */
  get pending(): number {
    return this.end - this.start;
  }

  /** Drops everything held: the driver calls it to resynchronise after a timeout. */
  reset(): void {
    this.consumed += this.end - this.start;
    this.start = 0;
    this.end = 0;
  }

  /** Appends `chunk` and returns the frames it completed, in order. */
  push(chunk: Uint8Array): RawFrame[] {
    this.append(chunk);
    const frames: RawFrame[] = [];
    this.drain(frames);
    return frames;
  }

  /**
   * The line went quiet (no byte for longer than a reader pauses inside a frame): no byte held will ever be completed.
   * A frame held, cut short, is reported FRAME_TRUNCATED and dropped by its first byte; the parser resynchronises on
   * the next header behind it, as after a wrong CRC, and returns the frames found there, in order. Leaves nothing held.
   */
  lineQuiet(): RawFrame[] {
    const frames: RawFrame[] = [];
    for (;;) {
      this.drain(frames);
      const avail = this.end - this.start;
      if (avail === 0) return frames;
      // What is left is the start of a frame (next() stopped there): its header, or its header and LEN and some data.
      if (avail >= FRAME_HEADER.length) {
        const what = avail >= FRAME_PREFIX_LENGTH ? `frame of LEN ${this.lenAt(this.start)}` : 'frame header';
        this.reject(
          'FRAME_TRUNCATED',
          `${what} cut short: the line went quiet after ${avail} bytes`,
          this.start,
        );
        this.drop(1, 'abandoned');
      } else {
        this.drop(avail, 'garbageBytes');
      }
    }
  }

  private drain(frames: RawFrame[]): void {
    for (;;) {
      const frame = this.next();
      if (frame === undefined) return;
      frames.push(frame);
    }
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

  /** The LEN field of the frame at `at` (its 14-byte prefix is held). */
  private lenAt(at: number): number {
    return ((this.buf[at + 12] as number) << 8) | (this.buf[at + 13] as number);
  }

  private drop(count: number, reason: 'garbageBytes' | 'badCrc' | 'oversize' | 'abandoned' | 'nested'): void {
    this.stats[reason] += reason === 'garbageBytes' ? count : 1;
    if (reason !== 'garbageBytes') this.stats.garbageBytes += count;
    this.consume(count);
  }

  private consume(count: number): void {
    this.start += count;
    this.consumed += count;
    if (this.start === this.end) {
      this.start = 0;
      this.end = 0;
    }
  }

  /** Stream offset of `buf[at]`. */
  private streamOffset(at: number): number {
    return this.consumed + (at - this.start);
  }

  /** Whether the `size` bytes at `at` lie inside the data of a frame rejected for its CRC. */
  private shielded(at: number, size: number): boolean {
    const from = this.streamOffset(at);
    return from >= this.shieldFrom && from + size <= this.shieldTo;
  }

  private shield(dataAt: number, len: number): void {
    const from = this.streamOffset(dataAt);
    const to = from + len;
    if (from < this.shieldTo) {
      this.shieldFrom = Math.min(this.shieldFrom, from);
      this.shieldTo = Math.max(this.shieldTo, to);
    } else {
      this.shieldFrom = from;
      this.shieldTo = to;
    }
  }

  private reject(
    code: 'FRAME_BAD_CRC' | 'FRAME_TOO_LONG' | 'FRAME_TRUNCATED',
    message: string,
    at: number,
  ): void {
    this.onError?.(new FrameError(code, message, this.streamOffset(at)));
  }

  private next(): RawFrame | undefined {
    for (;;) {
      const h = this.seekHeader(this.start);
      if (h > this.start) this.drop(h - this.start, 'garbageBytes');
      const avail = this.end - this.start;
      if (avail < FRAME_PREFIX_LENGTH) return undefined;
      const at = this.start;
      const len = this.lenAt(at);
      if (len > this.maxDataLength) {
        this.reject('FRAME_TOO_LONG', `frame LEN ${len} exceeds the limit of ${this.maxDataLength}`, at);
        this.drop(1, 'oversize');
        continue;
      }
      const total = FRAME_OVERHEAD + len;
      // The rest has not arrived yet: nothing inside is looked at until it has, or until the line goes quiet.
      if (avail < total) return undefined;
      const crcAt = at + FRAME_PREFIX_LENGTH + len;
      if (readCrc(this.buf, crcAt, this.direction) !== crc16CcittFalse(this.buf, at, crcAt)) {
        this.reject('FRAME_BAD_CRC', `frame of LEN ${len} has a wrong CRC`, at);
        this.shield(at + FRAME_PREFIX_LENGTH, len);
        this.drop(1, 'badCrc');
        continue;
      }
      if (this.shielded(at, total)) {
        // A good CRC inside the data of a frame rejected for its CRC: bytes of that frame, not a reply.
        this.drop(1, 'nested');
        continue;
      }
      const frame: RawFrame = {
        cmd: this.buf[at + 10] as number,
        code: this.buf[at + 11] as number,
        data: this.buf.slice(at + FRAME_PREFIX_LENGTH, crcAt),
      };
      this.stats.frames++;
      this.consume(total);
      return frame;
    }
  }
}
