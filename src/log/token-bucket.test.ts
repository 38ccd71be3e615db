import { describe, expect, it } from 'vitest';
import { TokenBucket } from './token-bucket.js';

describe('a token bucket', () => {
  it('gives its burst at once, then one token per refill period', () => {
    const bucket = new TokenBucket(3, 0.5);
    expect([1, 2, 3, 4].map(() => bucket.take(1_000))).toEqual([true, true, true, false]);
    expect(bucket.take(2_000)).toBe(false);
    expect(bucket.take(3_000)).toBe(true);
    expect(bucket.take(3_000)).toBe(false);
  });

  it('refills no more than its burst after a long pause or a clock jumping forward', () => {
    const bucket = new TokenBucket(2, 1);
    bucket.take(0);
    bucket.take(0);
    expect([1, 2, 3].map(() => bucket.take(86_400_000))).toEqual([true, true, false]);
  });

  it('refills nothing while the clock goes back, and counts from the latest time it saw', () => {
    const bucket = new TokenBucket(1, 1);
    expect(bucket.take(10_000)).toBe(true);
    expect(bucket.take(5_000)).toBe(false);
    expect(bucket.take(10_500)).toBe(false);
    expect(bucket.take(11_000)).toBe(true);
  });
});
