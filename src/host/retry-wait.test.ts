import { describe, expect, it } from 'vitest';
import { MAX_RETRY_WAIT_MS, retryWaitMs } from './retry-wait.js';

describe('the wait before the next try of a reversal', () => {
  it('doubles from the base with each earlier try, at most an hour', () => {
    expect([0, 1, 2, 3].map((n) => retryWaitMs(1_000, n))).toEqual([1_000, 2_000, 4_000, 8_000]);
    expect(retryWaitMs(1_000, 12)).toBe(MAX_RETRY_WAIT_MS);
    expect(retryWaitMs(1_000, 1_000)).toBe(MAX_RETRY_WAIT_MS);
    expect(MAX_RETRY_WAIT_MS).toBe(3_600_000);
  });
});
