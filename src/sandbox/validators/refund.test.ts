import { describe, expect, it } from 'vitest';
import { FieldReader } from '../fields.js';
import { sampleRefund } from '../sample-requests.js';
import { validateRefund } from './refund.js';
import { callOf, DCC_TERMS, ledgerTx, NOW, RATE, refusalOf } from './testing/fixtures.js';

const CAPTURE = ledgerTx(2000, 'EUR', {
  kind: 'capture',
  status: 'PENDING',
  parentId: '7000000000000000000000',
});

function refund(body: Record<string, unknown>, target = CAPTURE, dcc = false): { amountMinor: number } {
  return validateRefund(
    new FieldReader(body, NOW),
    callOf(body),
    'captures',
    target,
    dcc ? DCC_TERMS : undefined,
    NOW,
  );
}

describe('validateRefund (spec 001)', () => {
  it('accepts a refund of a capture named "REFUND Capture"', () => {
    expect(refund(sampleRefund(500, 'ref-1', 'capture'))).toEqual({ amountMinor: 500 });
  });

  it('refuses a refund of a capture named "REFUND Payment"', () => {
    const a = refusalOf(() => refund(sampleRefund(500, 'ref-2', 'sale')));
    expect(a.body).toMatchObject({ status: 'INVALID_REQUEST', reason: 'INVALID_DATA' });
    expect(a.body.details).toEqual([
      { field: 'clientReferenceInformation.comments', reason: 'INVALID_DATA' },
    ]);
  });

  it('refuses a refund in another currency than the original', () => {
    const a = refusalOf(() => refund(sampleRefund(500, 'ref-3', 'capture', 'USD')));
    expect(a.body.details).toEqual([
      { field: 'orderInformation.amountDetails.currency', reason: 'INVALID_DATA' },
    ]);
  });

  it('refuses tag 9F6E on a refund of card type 002', () => {
    const mastercard = { ...CAPTURE, card: { type: '002', entryMode: 'contactless' } };
    const body = {
      ...sampleRefund(500, 'ref-4', 'capture'),
      pointOfSaleInformation: { emv: { tags: '9F6E0420700000' } },
    };
    expect(refusalOf(() => refund(body, mastercard)).body.details).toEqual([
      { field: 'pointOfSaleInformation.emv.tags', reason: 'INVALID_DATA' },
    ]);
  });

  it("refuses a refund of a converted payment without the field set, and accepts it at the authorization's rate", () => {
    const usd = { ...CAPTURE, currency: 'USD' };
    const bare = refusalOf(() => refund(sampleRefund(560, 'ref-5', 'capture', 'USD'), usd, true));
    expect(bare.body.reason).toBe('MISSING_FIELD');
    expect(bare.body.details).toContainEqual({
      field: 'orderInformation.amountDetails.exchangeRate',
      reason: 'MISSING_FIELD',
    });
    const body = sampleRefund(560, 'ref-6', 'capture', 'USD');
    Object.assign((body.orderInformation as { amountDetails: Record<string, unknown> }).amountDetails, {
      exchangeRate: RATE,
      originalAmount: '5.00',
      originalCurrency: 'EUR',
    });
    expect(refund(body, usd, true)).toEqual({ amountMinor: 560 });
  });

  it('refuses a refund of a parking capture without clientReferenceInformation.code (gateway.md §7)', () => {
    const body = sampleRefund(500, 'ref-code', 'capture');
    delete (body.clientReferenceInformation as Record<string, unknown>).code;
    expect(refusalOf(() => refund(body)).body.details).toEqual([
      { field: 'clientReferenceInformation.code', reason: 'MISSING_FIELD' },
    ]);
  });
});
