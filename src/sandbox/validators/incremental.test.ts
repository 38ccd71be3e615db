import { describe, expect, it } from 'vitest';
import { FieldReader } from '../fields.js';
import { validateIncrement } from './incremental.js';
import { ledgerTx, NOW, refusalOf } from './testing/fixtures.js';

function increment(
  amountDetails: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): { addMinor: number } {
  const body = {
    clientReferenceInformation: { comments: 'Parking Incremental Auth' },
    merchantInformation: { transactionLocalDateTime: '20261122101500' },
    orderInformation: { amountDetails: { currency: 'EUR', ...amountDetails } },
    processingInformation: { authorizationOptions: { initiator: { storedCredentialUsed: true } } },
    ...extra,
  };
  return validateIncrement(new FieldReader(body, NOW), ledgerTx(2000));
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
