import { describe, expect, it } from 'vitest';
import { FieldReader } from '../fields.js';
import { sampleCapture, sampleEmvTags } from '../sample-requests.js';
import { validateCapture } from './capture.js';
import { callOf, DCC_TERMS, ledgerTx, NOW, RATE, refusalOf, requestWithTags } from './testing/fixtures.js';

function capture(body: Record<string, unknown>, auth = ledgerTx(2000), dcc = false): { amountMinor: number } {
  return validateCapture(new FieldReader(body, NOW), callOf(body), auth, dcc ? DCC_TERMS : undefined, NOW);
}

describe('validateCapture (spec 001 capture rules; reference/gateway.md §7)', () => {
  it('accepts a capture below the authorization named "Parking Capture Less Than Auth"', () => {
    expect(capture(sampleCapture(1500, 2000, 'cap-1'))).toEqual({ amountMinor: 1500 });
  });

  it('refuses a capture below the authorization named "Parking Capture"', () => {
    const body = sampleCapture(1500, 1500, 'cap-2');
    const a = refusalOf(() => capture(body));
    expect(a.body).toMatchObject({ status: 'INVALID_REQUEST', reason: 'INVALID_DATA' });
    expect(a.body.details).toEqual([
      { field: 'clientReferenceInformation.comments', reason: 'INVALID_DATA' },
    ]);
  });

  it('refuses the capture of an EMV contact pre-authorization without tags, and accepts it with 95, 9F10, 9F26', () => {
    const contact = ledgerTx(2000, 'EUR', { emv: { present: true, contact: true } });
    const a = refusalOf(() => capture(sampleCapture(2000, 2000, 'cap-3'), contact));
    expect(a.body).toMatchObject({ reason: 'MISSING_FIELD' });
    expect(a.body.details).toEqual([{ field: 'pointOfSaleInformation.emv.tags', reason: 'MISSING_FIELD' }]);
    const withTags = {
      ...sampleCapture(2000, 2000, 'cap-4'),
      pointOfSaleInformation: { emv: { tags: sampleEmvTags(2000, 'EUR') } },
    };
    expect(capture(withTags, contact)).toEqual({ amountMinor: 2000 });
  });

  it('refuses card data repeated on a capture', () => {
    const body = {
      ...sampleCapture(2000, 2000, 'cap-5'),
      pointOfSaleInformation: { trackData: ';4111111111111111=3012?' },
    };
    expect(refusalOf(() => capture(body)).body.details).toEqual([
      { field: 'pointOfSaleInformation.trackData', reason: 'INVALID_DATA' },
    ]);
  });

  it('refuses a capture of a converted authorization without the DCC field set, naming each field', () => {
    const a = refusalOf(() =>
      capture(sampleCapture(2241, 2241, 'cap-6', 'USD'), ledgerTx(2241, 'USD'), true),
    );
    expect(a.body.reason).toBe('MISSING_FIELD');
    for (const field of ['exchangeRate', 'originalAmount', 'originalCurrency'])
      expect(a.body.details).toContainEqual({
        field: `orderInformation.amountDetails.${field}`,
        reason: 'MISSING_FIELD',
      });
  });

  it("refuses a capture of a converted authorization at another rate, and accepts it at the authorization's", () => {
    const body = (rate: string): Record<string, unknown> => {
      const b = sampleCapture(2241, 2241, 'cap-7', 'USD');
      Object.assign((b.orderInformation as { amountDetails: Record<string, unknown> }).amountDetails, {
        exchangeRate: rate,
        originalAmount: '20.00',
        originalCurrency: 'EUR',
      });
      return b;
    };
    expect(refusalOf(() => capture(body('1.2'), ledgerTx(2241, 'USD'), true)).body.details).toEqual([
      { field: 'orderInformation.amountDetails.exchangeRate', reason: 'INVALID_DATA' },
    ]);
    expect(capture(body(RATE), ledgerTx(2241, 'USD'), true)).toEqual({ amountMinor: 2241 });
  });

  it('refuses a capture without clientReferenceInformation.code (spec 001, Capture request)', () => {
    const body = sampleCapture(2000, 2000, 'cap-8');
    delete (body.clientReferenceInformation as Record<string, unknown>).code;
    expect(refusalOf(() => capture(body)).body.details).toEqual([
      { field: 'clientReferenceInformation.code', reason: 'MISSING_FIELD' },
    ]);
  });

  it("refuses the capture of an EMV contact pre-authorization whose tags are not the pre-authorization's", () => {
    const tags = sampleEmvTags(2000, 'EUR');
    const contact = ledgerTx(2000, 'EUR', {
      emv: { present: true, contact: true },
      requests: [requestWithTags(tags)],
    });
    const withTags = (hex: string, id: string) => ({
      ...sampleCapture(2000, 2000, id),
      pointOfSaleInformation: { emv: { tags: hex } },
    });
    expect(capture(withTags(tags, 'cap-9'), contact)).toEqual({ amountMinor: 2000 });
    const a = refusalOf(() => capture(withTags(sampleEmvTags(2000, 'GBP'), 'cap-10'), contact));
    expect(a.body.details).toEqual([{ field: 'pointOfSaleInformation.emv.tags', reason: 'INVALID_DATA' }]);
  });
});
