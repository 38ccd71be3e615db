import { describe, expect, it } from 'vitest';
import { FieldReader } from '../fields.js';
import { sampleEmvTags, sampleReversal, sampleTimeoutReversal } from '../sample-requests.js';
import { validateReversal, validateTimeoutReversal } from './reversal.js';
import { callOf, DCC_TERMS, ledgerTx, NOW, RATE, refusalOf, requestWithTags } from './testing/fixtures.js';

const TAGS = sampleEmvTags(2000, 'EUR');

function reverse(body: Record<string, unknown>, auth = ledgerTx(2000), dcc = false): number | undefined {
  return validateReversal(new FieldReader(body, NOW), callOf(body), auth, () => (dcc ? DCC_TERMS : undefined))
    .requestedMinor;
}

function withAmountDetails(
  body: Record<string, unknown>,
  fields: Record<string, unknown>,
): Record<string, unknown> {
  const order = body.orderInformation as { amountDetails: Record<string, unknown> };
  Object.assign(order.amountDetails, fields);
  return body;
}

describe('validateReversal (reference/gateway.md §7, spec 001 Reversal)', () => {
  it('accepts a reversal of an EMV authorization that repeats its tags', () => {
    expect(reverse(sampleReversal(2000, 'EUR', TAGS))).toBe(2000);
  });

  it('refuses a reversal of a contactless authorization without emv.tags: MISSING_FIELD naming the field', () => {
    const a = refusalOf(() => reverse(sampleReversal(2000, 'EUR')));
    expect(a.httpStatus).toBe(400);
    expect(a.body).toMatchObject({ status: 'INVALID_REQUEST', reason: 'MISSING_FIELD' });
    expect(a.body.message).toContain('pointOfSaleInformation.emv.tags');
    expect(a.body.details).toEqual([{ field: 'pointOfSaleInformation.emv.tags', reason: 'MISSING_FIELD' }]);
  });

  it('refuses a reversal of a contact authorization whose emv.tags is empty', () => {
    const auth = ledgerTx(2000, 'EUR', { emv: { present: true, contact: true } });
    const a = refusalOf(() => reverse(sampleReversal(2000, 'EUR', ''), auth));
    expect(a.body.details).toEqual([{ field: 'pointOfSaleInformation.emv.tags', reason: 'MISSING_FIELD' }]);
  });

  it('asks no tags of a reversal of a swiped authorization', () => {
    const auth = ledgerTx(2000, 'EUR', {
      emv: { present: false, contact: false },
      card: { type: '001', entryMode: 'swiped' },
    });
    expect(reverse(sampleReversal(2000), auth)).toBe(2000);
  });

  it('refuses a reversal carrying a never-send tag', () => {
    const a = refusalOf(() => reverse(sampleReversal(2000, 'EUR', `${TAGS}5A084111111111111111`)));
    expect(a.body.details).toEqual([{ field: 'pointOfSaleInformation.emv.tags', reason: 'INVALID_DATA' }]);
  });

  it('accepts a reversal of a converted authorization without any DCC field (spec 001 asks it of captures and refunds)', () => {
    expect(reverse(sampleReversal(2241, 'USD', TAGS), ledgerTx(2241, 'USD'), true)).toBe(2241);
  });

  it('accepts a reversal of a converted authorization that repeats the field set at its rate', () => {
    const body = withAmountDetails(sampleReversal(2241, 'USD', TAGS), {
      exchangeRate: RATE,
      originalAmount: '20.00',
      originalCurrency: 'EUR',
    });
    expect(reverse(body, ledgerTx(2241, 'USD'), true)).toBe(2241);
  });

  it("refuses a reversal of a converted authorization at another rate than the authorization's", () => {
    const body = withAmountDetails(sampleReversal(2241, 'USD', TAGS), {
      exchangeRate: '1.2',
      originalAmount: '20.00',
      originalCurrency: 'EUR',
    });
    const a = refusalOf(() => reverse(body, ledgerTx(2241, 'USD'), true));
    expect(a.body).toMatchObject({ status: 'INVALID_REQUEST', reason: 'INVALID_DATA' });
    expect(a.body.message).toContain('exchangeRate');
    expect(a.body.details).toEqual([
      { field: 'orderInformation.amountDetails.exchangeRate', reason: 'INVALID_DATA' },
    ]);
  });

  it('refuses a reversal of a converted authorization with part of the field set, naming what is missing', () => {
    const body = withAmountDetails(sampleReversal(2241, 'USD', TAGS), { exchangeRate: RATE });
    const a = refusalOf(() => reverse(body, ledgerTx(2241, 'USD'), true));
    expect(a.body.reason).toBe('MISSING_FIELD');
    expect(a.body.details).toEqual([
      { field: 'orderInformation.amountDetails.originalCurrency', reason: 'MISSING_FIELD' },
      { field: 'orderInformation.amountDetails.originalAmount', reason: 'MISSING_FIELD' },
    ]);
  });
});

describe('validateTimeoutReversal', () => {
  it('accepts a timeout reversal keyed by the original transactionId', () => {
    const body = sampleTimeoutReversal('tx-1', 2000);
    expect(validateTimeoutReversal(new FieldReader(body, NOW), NOW)).toEqual({
      transactionId: 'tx-1',
      currency: 'EUR',
      amountMinor: 2000,
      comments: 'REVERSAL Timeout',
    });
  });

  it('refuses a timeout reversal without transactionId', () => {
    const body = sampleTimeoutReversal('tx-1', 2000);
    delete (body.clientReferenceInformation as Record<string, unknown>).transactionId;
    const a = refusalOf(() => validateTimeoutReversal(new FieldReader(body, NOW), NOW));
    expect(a.body.details).toEqual([
      { field: 'clientReferenceInformation.transactionId', reason: 'MISSING_FIELD' },
    ]);
  });

  it('refuses a reversal without clientReferenceInformation.code (spec 001, Reversal request)', () => {
    const body = sampleReversal(2000, 'EUR', TAGS);
    delete (body.clientReferenceInformation as Record<string, unknown>).code;
    expect(refusalOf(() => reverse(body)).body.details).toEqual([
      { field: 'clientReferenceInformation.code', reason: 'MISSING_FIELD' },
    ]);
  });

  it("refuses a reversal whose tags are not the authorization's (its 9F02 rebuilt for another amount)", () => {
    const auth = ledgerTx(2000, 'EUR', { requests: [requestWithTags(TAGS)] });
    expect(reverse(sampleReversal(2000, 'EUR', TAGS), auth)).toBe(2000);
    const a = refusalOf(() => reverse(sampleReversal(2000, 'EUR', sampleEmvTags(1500, 'EUR')), auth));
    expect(a.body.details).toEqual([{ field: 'pointOfSaleInformation.emv.tags', reason: 'INVALID_DATA' }]);
  });
});
