import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { luhnValid } from './card.js';
import { findPersonalData } from './personal-data.js';
import { amountTrigger, DECLINING_CARDS, decliningCard } from './triggers.js';

const all = { canDecline: true, canBePartial: true };

describe('amount triggers', () => {
  it('approves every multiple of 0.50 (ordinary parking fees)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2_000_000 }), (halves) => {
        const minor = halves * 50;
        fc.pre(minor !== 990100);
        expect(amountTrigger(minor, all)).toEqual({ kind: 'approve' });
      }),
    );
  });

  it('selects declines, partial and faults by the last two digits', () => {
    expect(amountTrigger(1201, all)).toEqual({ kind: 'decline', reason: 'PROCESSOR_DECLINED' });
    expect(amountTrigger(1221, all)).toEqual({ kind: 'partial', authorizedMinor: 610 });
    expect(amountTrigger(1244, all)).toEqual({ kind: 'fault', fault: 'reset-after-commit' });
    expect(amountTrigger(990100, all)).toEqual({ kind: 'partial', authorizedMinor: 300000 });
  });

  it('risk-declines an authorization or sale ending in 22, and nothing else', () => {
    expect(amountTrigger(1222, { ...all, canRiskDecline: true })).toEqual({ kind: 'risk-decline' });
    expect(amountTrigger(1222, all)).toEqual({ kind: 'approve' });
    expect(amountTrigger(1224, { ...all, canRiskDecline: true })).toEqual({ kind: 'approve' });
  });

  it('holds an authorization or sale ending in 23 for review, and nothing else', () => {
    expect(amountTrigger(1223, { ...all, canRiskDecline: true })).toEqual({ kind: 'review' });
    expect(amountTrigger(1223, all)).toEqual({ kind: 'approve' });
  });

  it('never declines a capture or refund amount, but faults apply', () => {
    expect(amountTrigger(1201, { canDecline: false, canBePartial: false })).toEqual({ kind: 'approve' });
    expect(amountTrigger(1221, { canDecline: false, canBePartial: false })).toEqual({ kind: 'approve' });
    expect(amountTrigger(1245, { canDecline: false, canBePartial: false })).toEqual({
      kind: 'fault',
      fault: 'status-500',
    });
  });

  it('lists only Luhn-valid declining test cards', () => {
    for (const pan of Object.keys(DECLINING_CARDS)) expect(luhnValid(pan)).toBe(true);
  });

  it('declines each listed test card with its reason, and no other card', () => {
    for (const [pan, reason] of Object.entries(DECLINING_CARDS)) expect(decliningCard(pan)).toBe(reason);
    expect(decliningCard('4111111111111111')).toBeUndefined();
    expect(decliningCard('constructor')).toBeUndefined();
  });
});

describe('the personal-data rule of payment links', () => {
  it.each([
    [{ lineItems: [{ productName: 'Parking 4111 1111 1111 1111' }] }, 'card number'],
    [{ merchantDefinedInformation: [{ key: 'id', value: '078-05-1120' }] }, 'national identification number'],
    [{ lineItems: [{ productDescription: 'Deliver to 12 Main Street' }] }, 'address'],
    [{ billTo: { address1: 'anything' } }, 'address1'],
    [{ card: { securityCode: '123' } }, 'securityCode'],
  ])('finds personal data in %o', (body, kind) => {
    expect(findPersonalData(body)?.kind).toBe(kind);
  });

  it('lets ordinary parking link content pass', () => {
    expect(
      findPersonalData({
        purchaseInformation: { purchaseNumber: 'P-20261122-0042' },
        orderInformation: {
          amountDetails: { totalAmount: '12.50', currency: 'EUR' },
          lineItems: [{ productName: 'Parking 2 h, zone B', unitPrice: '12.50' }],
        },
      }),
    ).toBeUndefined();
  });
});
