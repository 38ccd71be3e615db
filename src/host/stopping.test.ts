import { describe, expect, it } from 'vitest';
import { closedWithin } from './stopping.js';

describe('closedWithin', () => {
  it('is true once the closing has finished, or failed', async () => {
    expect(await closedWithin(Promise.resolve(), 60_000)).toBe(true);
    expect(await closedWithin(Promise.reject(new Error('a step failed')), 60_000)).toBe(true);
  });

  it('is false when the limit comes first: a closing that never ends does not hold the stop', async () => {
    expect(await closedWithin(new Promise(() => undefined), 0)).toBe(false);
  });
});
