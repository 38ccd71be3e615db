/**
 * Fixtures of the validators' unit tests (a `testing/` folder: not built, not packaged): ledger transactions, the
 * terms of a converted authorization, and a helper that runs a validator and returns the 400 answer it throws.
 */
import type { DccAuthorizationTerms } from '../../dcc.js';
import { GatewayAnswer } from '../../errors.js';
import type { ApiCall } from '../../service-types.js';
import { decodeEmvTags } from '../../emv-rules.js';
import type { LedgerRequest, LedgerTransaction } from '../../store.js';

/** The sandbox time of the tests. */
export const NOW = new Date('2026-11-22T10:15:00Z');

/** An approved card-present authorization of `authorizedMinor` in `currency`; `overrides` replace fields. */
export function ledgerTx(
  authorizedMinor: number,
  currency = 'EUR',
  overrides: Partial<LedgerTransaction> = {},
): LedgerTransaction {
  return {
    id: '7000000000000000000001',
    kind: 'authorization',
    merchantId: 'testrest',
    status: 'AUTHORIZED',
    currency,
    amounts: {
      requested: authorizedMinor,
      authorized: authorizedMinor,
      captured: 0,
      reversed: 0,
      refunded: 0,
    },
    card: { masked: '411111XXXXXX1111', type: '001', entryMode: 'contactless' },
    emv: { present: true, contact: false },
    voided: false,
    createdAt: NOW.toISOString(),
    outcomeUnknown: false,
    answer: { httpStatus: 201, body: {} },
    requests: [],
    ...overrides,
  };
}

/** The exchange rate (margin included) of {@link DCC_TERMS}. */
export const RATE = '1.120388';

/** A family A converted authorization: 20.00 EUR offered as 22.41 USD at {@link RATE}. */
export const DCC_TERMS: DccAuthorizationTerms = {
  offer: {
    merchantId: 'testrest',
    reconciliationId: '000000000001',
    rateId: 'rate-1',
    originalMinor: 2000,
    originalCurrency: 'EUR',
    amountMinor: 2241,
    currency: 'USD',
    exchangeRate: RATE,
    expiresAt: '2026-11-22T10:25:00Z',
    createdAt: '2026-11-22T10:15:00Z',
  },
  family: 'A',
};

/** The call of a request body (the validators keep its decoded EMV tags on it). */
export function callOf(body: Record<string, unknown>, path = '/pts/v2/payments'): ApiCall {
  return { merchantId: 'testrest', method: 'POST', path, body };
}

/** Runs `validate` and returns the answer it refuses with; fails the test when it accepts. */
export function refusalOf(validate: () => unknown): { httpStatus: number; body: Record<string, unknown> } {
  try {
    validate();
  } catch (e) {
    if (e instanceof GatewayAnswer) return { httpStatus: e.httpStatus, body: e.body };
    throw e;
  }
  throw new Error('the request was accepted');
}

/** The ledger's record of an original request sent with the EMV tags `hex` (only what the validators read of it). */
export function requestWithTags(hex: string): LedgerRequest {
  const decoded = decodeEmvTags(hex);
  if (!decoded.ok) throw new Error(decoded.message);
  return { emvTags: decoded.tags } as LedgerRequest;
}
