import { describe, expect, it } from 'vitest';
import { FieldReader } from '../fields.js';
import { validateTimeoutVoid, validateVoid } from './void.js';
import { ledgerTx, NOW, refusalOf } from './testing/fixtures.js';

const SALE = ledgerTx(2000, 'EUR', { kind: 'sale' });
const reader = (body: Record<string, unknown>): FieldReader => new FieldReader(body, NOW);

describe('validateVoid', () => {
  it('accepts a void of a sale named "VOID Payment"', () => {
    expect(() =>
      validateVoid(reader({ clientReferenceInformation: { comments: 'VOID Payment' } }), 'payments', SALE),
    ).not.toThrow();
  });

  it('refuses a void of a card-present sale without comments, naming the field', () => {
    const a = refusalOf(() => validateVoid(reader({}), 'payments', SALE));
    expect(a.body).toMatchObject({ status: 'INVALID_REQUEST', reason: 'MISSING_FIELD' });
    expect(a.body.details).toEqual([
      { field: 'clientReferenceInformation.comments', reason: 'MISSING_FIELD' },
    ]);
  });

  it('refuses comments of another void', () => {
    const a = refusalOf(() =>
      validateVoid(reader({ clientReferenceInformation: { comments: 'VOID Refund' } }), 'captures', SALE),
    );
    expect(a.body.details).toEqual([
      { field: 'clientReferenceInformation.comments', reason: 'INVALID_DATA' },
    ]);
  });
});

describe('validateTimeoutVoid', () => {
  it('accepts a timeout void keyed by transactionId alone', () => {
    expect(
      validateTimeoutVoid(reader({ clientReferenceInformation: { transactionId: 'tx-9' } }), NOW),
    ).toEqual({
      transactionId: 'tx-9',
    });
  });

  it('refuses a timeout void without transactionId', () => {
    const a = refusalOf(() =>
      validateTimeoutVoid(reader({ clientReferenceInformation: { comments: 'VOID Timeout' } }), NOW),
    );
    expect(a.body).toMatchObject({ reason: 'MISSING_FIELD' });
    expect(a.body.details).toEqual([
      { field: 'clientReferenceInformation.transactionId', reason: 'MISSING_FIELD' },
    ]);
  });
});
