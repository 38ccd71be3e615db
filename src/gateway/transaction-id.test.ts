import { describe, expect, it } from 'vitest';
import { newTransactionId } from './transaction-id.js';

describe('newTransactionId', () => {
  it('is 27 characters, never purely numeric', () => {
    const id = newTransactionId();
    expect(id).toMatch(/^T[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(/^\d+$/.test(id)).toBe(false);
  });

  it('sorts in time order across milliseconds and within one millisecond', () => {
    const t = 1_900_000_000_000;
    const ids = [newTransactionId(t), newTransactionId(t), newTransactionId(t), newTransactionId(t + 1)];
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('keeps increasing when the clock steps back', () => {
    const a = newTransactionId(1_950_000_000_000);
    const b = newTransactionId(1_949_999_999_000);
    expect(b > a).toBe(true);
  });

  it('gives no duplicate in 20000 ids', () => {
    const ids = new Set(Array.from({ length: 20_000 }, () => newTransactionId()));
    expect(ids.size).toBe(20_000);
  });
});
