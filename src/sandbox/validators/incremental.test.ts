import { describe, expect, it } from 'vitest';
import type { DccAuthorizationTerms } from '../dcc.js';
import { FieldReader } from '../fields.js';
import { validateIncrement } from './incremental.js';
import { ledgerTx, NOW, refusalOf } from './testing/fixtures.js';

function increment(
  amountDetails: Record<string, unknown>,
  extra: Record<string, unknown> = {},
  dcc?: DccAuthorizationTerms,
): { addMinor: number } {
  const body = {
    clientReferenceInformation: { comments: 'Parking Incremental Auth' },
    merchantInformation: { transactionLocalDateTime: '20261122101500' },
    orderInformation: { amountDetails: { currency: 'EUR', ...amountDetails } },
    processingInformation: { authorizationOptions: { initiator: { storedCredentialUsed: true } } },
    ...extra,
  };
  return validateIncrement(new FieldReader(body, NOW), ledgerTx(2000), dcc);
}

describe('validateIncrement (reference/gateway.md §7)', () => {
  it('accepts additionalAmount, or a new totalAmount above the authorized one', () => {
    expect(increment({ additionalAmount: '5.00' })).toEqual({ addMinor: 500 });
    expect(increment({ totalAmount: '25.00' })).toEqual({ addMinor: 500 });
  });

  it('refuses an increment with neither amount, naming additionalAmount', () => {
    const a = refusalOf(() => increment({}));
    expect(a.body).toMatchObject({ status: 'INVALID_REQUEST', reason: 'MISSING_FIELD' });
    expect(a.body.details).toEqual([
      { field: 'orderInformation.amountDetails.additionalAmount', reason: 'MISSING_FIELD' },
    ]);
  });

  it('refuses a parking increment without storedCredentialUsed', () => {
    const a = refusalOf(() => increment({ additionalAmount: '5.00' }, { processingInformation: {} }));
    expect(a.body.details).toEqual([
      {
        field: 'processingInformation.authorizationOptions.initiator.storedCredentialUsed',
        reason: 'INVALID_DATA',
      },
    ]);
  });
});

describe('an increment of a converted authorization (spec 001, DCC)', () => {
  // A family B authorization of 20.00 EUR = 22.41 USD at 1.120388, its rate time 10:15:00 GMT.
  const TERMS: DccAuthorizationTerms = {
    offer: {
      merchantId: 'm',
      reconciliationId: 'r1',
      rateId: 'rate-1',
      originalMinor: 2000,
      originalCurrency: 'EUR',
      amountMinor: 2241,
      currency: 'USD',
      exchangeRate: '1.120388',
      expiresAt: '2026-11-22T10:25:00.000Z',
      createdAt: '2026-11-22T10:15:00.000Z',
    },
    family: 'B',
    exchangeRateTimeStamp: '20261122101500',
  };
  const RATE = 'orderInformation.amountDetails.exchangeRate';
  const STAMP = 'orderInformation.amountDetails.exchangeRateTimeStamp';

  it("takes one without DCC fields, and one that repeats the authorization's rate and rate time", () => {
    expect(increment({ additionalAmount: '5.00' }, {}, TERMS)).toEqual({ addMinor: 500 });
    expect(
      increment(
        {
          additionalAmount: '5.00',
          exchangeRate: '1.120388',
          exchangeRateTimeStamp: '20261122101500',
          currencyConversion: { indicator: '1' },
        },
        {},
        TERMS,
      ),
    ).toEqual({ addMinor: 500 });
  });

  it("refuses another rate or another rate time than the authorization's, as INVALID_DATA naming each", () => {
    const a = refusalOf(() =>
      increment(
        { additionalAmount: '5.00', exchangeRate: '1.2', exchangeRateTimeStamp: '20261122102000' },
        {},
        TERMS,
      ),
    );
    expect(a.body).toMatchObject({ status: 'INVALID_REQUEST', reason: 'INVALID_DATA' });
    expect(a.body.details).toEqual([
      { field: RATE, reason: 'INVALID_DATA' },
      { field: STAMP, reason: 'INVALID_DATA' },
    ]);
    const iso = refusalOf(() =>
      increment({ additionalAmount: '5.00', exchangeRateTimeStamp: '2026-11-22T10:15:00Z' }, {}, TERMS),
    );
    expect(iso.body.details).toEqual([{ field: STAMP, reason: 'INVALID_DATA' }]);
  });
});
