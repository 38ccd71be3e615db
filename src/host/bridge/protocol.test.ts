import { describe, expect, it } from 'vitest';
import { operatorRequestSchema } from './protocol.js';

describe('operator requests over the bridge', () => {
  it("keeps a refund's requestId, so that the desk carries the same refund out once", () => {
    for (const action of [
      { type: 'refund', transactionId: 'S1', amountMinor: 250, requestId: 'R-1' },
      { type: 'alt-refund', saleId: 3, requestId: '0b6c3a52-5f0e-4c55-9a53-2d1c1d6f0e11' },
    ])
      expect(operatorRequestSchema.parse({ pin: '123456', action })).toEqual({ pin: '123456', action });
  });

  it('refuses a requestId that is empty, too long or not a plain id', () => {
    for (const requestId of ['', 'x'.repeat(65), 'R 1', 'R/1'])
      expect(
        operatorRequestSchema.safeParse({
          pin: '123456',
          action: { type: 'refund', transactionId: 'S1', requestId },
        }).success,
      ).toBe(false);
  });

  it('takes the open stays and the release of one by its hold id; refuses anything else, and no PIN', () => {
    for (const action of [
      { type: 'stays' },
      { type: 'stays', limit: 1000 },
      { type: 'hold-release', holdId: 'tx_9f2c-01' },
    ])
      expect(operatorRequestSchema.parse({ pin: '123456', action })).toEqual({ pin: '123456', action });
    for (const request of [
      { pin: '123456', action: { type: 'stays', limit: 0 } },
      { pin: '123456', action: { type: 'stays', limit: 1001 } },
      { pin: '123456', action: { type: 'hold-release' } },
      { pin: '123456', action: { type: 'hold-release', holdId: '' } },
      { pin: '123456', action: { type: 'hold-release', holdId: 'H 1' } },
      { pin: '123456', action: { type: 'hold-release', holdId: 'x'.repeat(65) } },
      { pin: '123456', action: { type: 'hold-release', holdId: 'H1', amountMinor: 100 } },
      { pin: '', action: { type: 'hold-release', holdId: 'H1' } },
      { action: { type: 'hold-release', holdId: 'H1' } },
    ])
      expect(operatorRequestSchema.safeParse(request).success).toBe(false);
  });
});
