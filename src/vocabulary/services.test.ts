import { describe, expect, it } from 'vitest';
import { refusedForNow } from './services.js';

describe('refusedForNow', () => {
  it('is true for a refusal that passes and for a request provably never sent, in either shape', () => {
    expect(refusedForNow({ kind: 'rejected', reason: 'PROCESSOR_UNAVAILABLE' })).toBe(true);
    expect(refusedForNow({ kind: 'declined', reason: 'PROCESSOR_UNAVAILABLE' })).toBe(true);
    expect(refusedForNow({ kind: 'not-sent', reason: 'GW_CONNECTION' })).toBe(true);
    expect(refusedForNow({ kind: 'rejected', reason: 'GW_CONNECTION', notSent: true })).toBe(true);
  });

  it('is false for a definite refusal, an approval and an unknown outcome (recovery resolves that one)', () => {
    expect(refusedForNow({ kind: 'rejected', reason: 'INVALID_DATA' })).toBe(false);
    expect(refusedForNow({ kind: 'declined', reason: 'INSUFFICIENT_FUND' })).toBe(false);
    expect(refusedForNow({ kind: 'approved' })).toBe(false);
    expect(refusedForNow({ kind: 'unknown', reason: 'PROCESSOR_UNAVAILABLE', notSent: true })).toBe(false);
  });
});
