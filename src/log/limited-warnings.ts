import type { Logger } from 'pino';
import { TokenBucket } from './token-bucket.js';

/** How long after the first warning left out the summary of those left out is logged. */
const SUMMARY_AFTER_MS = 60_000;

/**
 * Warnings about what strangers send — a request refused before anything proved who sent it — logged at most `burst`
 * at once, then `perSecond` a second; the rest are counted and told in one line a minute after the first one left out
 * (or at {@link flush}). Whoever can reach a listener of the terminal cannot fill its disk, or drown the lines that
 * matter, by sending what it refuses.
 */
export class LimitedWarnings {
  private readonly bucket: TokenBucket;
  private dropped: { count: number; since: string } | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly logger: Logger,
    /** What is counted, in the summary line: e.g. `bridge refusals`. */
    private readonly what: string,
    private readonly options: { burst?: number; perSecond?: number; now?: () => number } = {},
  ) {
    this.bucket = new TokenBucket(options.burst ?? 20, options.perSecond ?? 1);
  }

  /** Logs `message` with `fields` at warn level, or counts it for the summary. */
  warn(fields: Record<string, unknown>, message: string): void {
    const now = (this.options.now ?? Date.now)();
    if (this.bucket.take(now)) {
      this.logger.warn(fields, message);
      return;
    }
    this.dropped ??= { count: 0, since: new Date(now).toISOString() };
    this.dropped.count += 1;
    if (this.timer === undefined) {
      this.timer = setTimeout(() => this.flush(), SUMMARY_AFTER_MS);
      this.timer.unref();
    }
  }

  /** Logs the summary of the warnings left out since the last one, if any (call it when the listener closes). */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const dropped = this.dropped;
    if (!dropped) return;
    this.dropped = undefined;
    this.logger.warn(
      { dropped: dropped.count, since: dropped.since },
      `${dropped.count} ${this.what} not logged one by one since ${dropped.since}`,
    );
  }
}
