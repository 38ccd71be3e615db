import { describe, expect, it } from 'vitest';
import { captureRule, heldAmount, refundRule, reversalRule } from './money-rules.js';

describe('heldAmount', () => {
  it('is authorized less captured and released, never below 0', () => {
    expect(heldAmount({ authorized: 1000, captured: 0, reversed: 0 })).toBe(1000);
    expect(heldAmount({ authorized: 1000, captured: 600, reversed: 400 })).toBe(0);
    expect(heldAmount({ authorized: 1000, captured: 300, reversed: 0 })).toBe(700);
    expect(heldAmount({ authorized: 1000, captured: 900, reversed: 400 })).toBe(0);
  });
});

describe('captureRule (capture ≤ held)', () => {
  it('accepts the whole hold with no partial reversal', () => {
    expect(captureRule(1000, 1000)).toEqual({ ok: true, partialReversal: 0 });
  });

  it('accepts less and releases the rest', () => {
    expect(captureRule(1000, 650)).toEqual({ ok: true, partialReversal: 350 });
  });

  it('refuses more than held: EXCEEDS_AUTH_AMOUNT on the total amount', () => {
    expect(captureRule(1000, 1001)).toMatchObject({
      ok: false,
      reason: 'EXCEEDS_AUTH_AMOUNT',
      field: 'orderInformation.amountDetails.totalAmount',
    });
    expect(captureRule(0, 1)).toMatchObject({ ok: false, reason: 'EXCEEDS_AUTH_AMOUNT' });
  });

  it('refuses 0: INVALID_AMOUNT', () => {
    expect(captureRule(1000, 0)).toMatchObject({ ok: false, reason: 'INVALID_AMOUNT' });
  });
});

describe('reversalRule (reversal = authorized)', () => {
  const auth = { authorized: 1500, captured: 0, reversed: 0 };

  it('accepts the authorized amount (increments included) and releases the hold', () => {
    expect(reversalRule(auth, 1500)).toEqual({ ok: true, amount: 1500, released: 1500 });
  });

  it('releases only what is still held', () => {
    expect(reversalRule({ authorized: 1500, captured: 0, reversed: 500 }, 1500)).toEqual({
      ok: true,
      amount: 1500,
      released: 1000,
    });
  });

  it.each([1000, 1501, 0, undefined])('refuses %s: INVALID_AMOUNT on the reversal amount', (amount) => {
    expect(reversalRule(auth, amount)).toMatchObject({
      ok: false,
      reason: 'INVALID_AMOUNT',
      field: 'reversalInformation.amountDetails.totalAmount',
    });
  });

  it('refuses a captured authorization first: TRANSACTION_ALREADY_REVERSED_OR_SETTLED', () => {
    expect(reversalRule({ authorized: 1500, captured: 1500, reversed: 0 }, 1500)).toMatchObject({
      ok: false,
      reason: 'TRANSACTION_ALREADY_REVERSED_OR_SETTLED',
      field: 'id',
    });
    expect(reversalRule({ authorized: 1500, captured: 1, reversed: 0 }, 7)).toMatchObject({
      reason: 'TRANSACTION_ALREADY_REVERSED_OR_SETTLED',
    });
  });
});

describe('refundRule (refunds ≤ captured)', () => {
  it('accepts refunds adding up to the captured amount', () => {
    expect(refundRule(1000, 0, 1000)).toEqual({ ok: true });
    expect(refundRule(1000, 600, 400)).toEqual({ ok: true });
  });

  it.each([
    [1000, 600, 401],
    [1000, 0, 1001],
    [0, 0, 1],
    [1000, 0, 0],
  ])('refuses captured %i, refunded %i, asked %i: INVALID_AMOUNT', (captured, refunded, amount) => {
    expect(refundRule(captured, refunded, amount)).toMatchObject({
      ok: false,
      reason: 'INVALID_AMOUNT',
      field: 'orderInformation.amountDetails.totalAmount',
    });
  });
});
