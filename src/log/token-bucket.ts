/**
 * A token bucket: at most `burst` takes at once, refilled at `perSecond` tokens a second up to `burst`. Time is the
 * caller's (epoch ms), so that a test or a clock that jumps gives it any time: a clock that goes back refills nothing,
 * one that jumps forward refills at most to `burst`.
 */
export class TokenBucket {
  private tokens: number;
  private lastMs: number | undefined;

  constructor(
    private readonly burst: number,
    private readonly perSecond: number,
  ) {
    this.tokens = burst;
  }

  /** Takes one token at `nowMs`: true when there was one. */
  take(nowMs: number): boolean {
    if (this.lastMs !== undefined && nowMs > this.lastMs)
      this.tokens = Math.min(this.burst, this.tokens + ((nowMs - this.lastMs) / 1000) * this.perSecond);
    if (this.lastMs === undefined || nowMs > this.lastMs) this.lastMs = nowMs;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
