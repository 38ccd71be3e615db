import { describe, expect, it } from 'vitest';
import { FieldReader } from '../fields.js';
import { samplePayment, sampleEmvTags } from '../sample-requests.js';
import { validateCredit } from './credit.js';
import { callOf, NOW, refusalOf } from './testing/fixtures.js';

/** A standalone credit built on the sample pre-authorization: comments, transaction type 20 in the tags. */
function creditBody(entryMode: 'contact' | 'contactless' = 'contactless'): Record<string, unknown> {
  const body = samplePayment({ amountMinor: 1000, transactionId: 'cr-1', entryMode });
  (body.clientReferenceInformation as Record<string, unknown>).comments = 'Parking Standalone Credit';
  (body.pointOfSaleInformation as { emv: { tags: string } }).emv.tags = sampleEmvTags(1000, 'EUR', {
    transactionType: '20',
  });
  delete (body.processingInformation as Record<string, unknown>).authorizationOptions;
  return body;
}

function credit(body: Record<string, unknown>): { currency: string; amountMinor: number } {
  return validateCredit(new FieldReader(body, NOW), callOf(body, '/pts/v2/credits'), NOW);
}

describe('validateCredit (reference/gateway.md §7)', () => {
  it('accepts a contactless standalone credit', () => {
    expect(credit(creditBody())).toMatchObject({ currency: 'EUR', amountMinor: 1000 });
  });

  it('refuses a credit with the comments of a pre-authorization', () => {
    const body = creditBody();
    (body.clientReferenceInformation as Record<string, unknown>).comments = 'Parking Authorization';
    const a = refusalOf(() => credit(body));
    expect(a.body).toMatchObject({ status: 'INVALID_REQUEST', reason: 'INVALID_DATA' });
    expect(a.body.details).toEqual([
      { field: 'clientReferenceInformation.comments', reason: 'INVALID_DATA' },
    ]);
  });

  it('refuses a credit for 0: INVALID_AMOUNT on the total amount', () => {
    const body = creditBody();
    (body.orderInformation as { amountDetails: Record<string, unknown> }).amountDetails.totalAmount = '0.00';
    (body.pointOfSaleInformation as { emv: { tags: string } }).emv.tags = sampleEmvTags(0, 'EUR', {
      transactionType: '20',
    });
    expect(refusalOf(() => credit(body)).body).toMatchObject({
      reason: 'INVALID_AMOUNT',
      details: [{ field: 'orderInformation.amountDetails.totalAmount', reason: 'INVALID_DATA' }],
    });
  });
});
