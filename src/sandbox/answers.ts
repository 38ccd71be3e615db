/**
 * The bodies of the payment services' answers (spec 001; reference/gateway.md §2, §7): built from the ledger
 * transaction a service has just changed, so that what the terminal is told and what the ledger holds agree.
 */
import { toDecimalString } from '../money/index.js';
import { isoSeconds } from './fields.js';
import type { LedgerTransaction } from './store.js';
import { REVIEW_REASON, RISK_DECLINE_REASON, type DeclineReason } from './triggers.js';

/** The processor response code of each decline (ISO 8583 field 39 values the gateway passes on). */
export const RESPONSE_CODES: Readonly<Record<DeclineReason, string>> = {
  PROCESSOR_DECLINED: '05',
  INSUFFICIENT_FUND: '51',
  EXPIRED_CARD: '54',
  STOLEN_LOST_CARD: '43',
  ISSUER_UNAVAILABLE: '91',
  UNAUTHORIZED_CARD: '57',
  INVALID_ACCOUNT: '14',
  GENERAL_DECLINE: '05',
  CONTACT_PROCESSOR: '01',
  ALLOWABLE_PIN_RETRIES_EXCEEDED: '75',
  PROCESSOR_ERROR: '96',
};

/** A HATEOAS link of an answer. */
export function link(href: string, method: string): { href: string; method: string } {
  return { href, method };
}

/**
 * `clientReferenceInformation` of an answer: the code and transactionId the request sent. Absent ones are undefined
 * members, which the answer's JSON leaves out.
 */
export function clientRef(tx: LedgerTransaction): Record<string, unknown> {
  return { code: tx.code, transactionId: tx.transactionId };
}

/**
 * An authorization or sale the issuer approved and the risk check declined (AUTHORIZED_RISK_DECLINED) or holds for
 * review (PENDING_REVIEW): not approved — nothing can be captured, incremented, refunded or voided — but the issuer
 * holds the funds until it is reversed.
 */
export function holdsUnapproved(tx: LedgerTransaction): boolean {
  return tx.status === 'AUTHORIZED_RISK_DECLINED' || tx.status === 'PENDING_REVIEW';
}

/**
 * The answer to `POST /pts/v2/payments` (authorization, sale, verification), approved or declined; `cardType` as the
 * request stated it, `emv` whether it carried EMV tags. One literal of every member, absent ones undefined (the JSON
 * leaves them out): an answer shaped by conditional spreads gets hidden classes of its own.
 */
export function paymentAnswer(
  tx: LedgerTransaction,
  service: 'authorization' | 'sale' | 'verification',
  decline: DeclineReason | undefined,
  cardType: string | undefined,
  emv: boolean,
  now: Date,
): Record<string, unknown> {
  const total = tx.amounts.requested;
  const currency = tx.currency;
  const base = `/pts/v2/payments/${tx.id}`;
  // A risk decline (AUTHORIZED_RISK_DECLINED) or a review (PENDING_REVIEW) holds the issuer's approval, a sale's
  // included: it is only reversed.
  const riskDeclined = holdsUnapproved(tx);
  const sale = !decline && !riskDeclined && service === 'sale';
  const held = !decline && (riskDeclined || service !== 'sale');
  const links = {
    self: link(base, 'GET'),
    void: sale ? link(`${base}/voids`, 'POST') : undefined,
    refund: sale ? link(`${base}/refunds`, 'POST') : undefined,
    authReversal: held ? link(`${base}/reversals`, 'POST') : undefined,
    capture:
      held && !riskDeclined && service === 'authorization' ? link(`${base}/captures`, 'POST') : undefined,
  };
  // The processor's references are the id's last digits; each is made once and written where the answer repeats it.
  const last6 = tx.id.slice(-6);
  const last12 = tx.id.slice(-12);
  const last15 = tx.id.slice(-15);
  const card = cardType !== undefined ? { card: { type: cardType } } : undefined;
  return {
    _links: links,
    id: tx.id,
    submitTimeUtc: isoSeconds(now),
    status: tx.status,
    reconciliationId: last12,
    clientReferenceInformation: clientRef(tx),
    orderInformation: {
      amountDetails: {
        totalAmount: toDecimalString(total, currency),
        authorizedAmount: toDecimalString(tx.amounts.authorized, currency),
        currency,
      },
    },
    paymentAccountInformation: card,
    paymentInformation: card,
    processorInformation: {
      responseCode: decline ? RESPONSE_CODES[decline] : '00',
      approvalCode: decline ? undefined : last6,
      transactionId: last15,
      networkTransactionId: last15,
      systemTraceAuditNumber: last6,
      retrievalReferenceNumber: last12,
    },
    errorInformation: decline
      ? { reason: decline, message: `Decline - ${decline}` }
      : tx.status === 'PENDING_REVIEW'
        ? { reason: REVIEW_REASON, message: 'Decision profile review' }
        : riskDeclined
          ? { reason: RISK_DECLINE_REASON, message: 'Decision profile reject' }
          : undefined,
    pointOfSaleInformation: emv ? { emv: { tags: decline ? '8A023035' : '8A023030' } } : undefined,
  };
}

/** The answer to an incremental authorization; `id` is the increment's or the authorization's (ServiceContext). */
export function incrementAnswer(
  tx: LedgerTransaction,
  auth: LedgerTransaction,
  id: string,
  decline: DeclineReason | undefined,
  now: Date,
): Record<string, unknown> {
  const add = tx.amounts.requested;
  const base = `/pts/v2/payments/${auth.id}`;
  return {
    _links: {
      self: link(`/pts/v2/payments/${tx.id}`, 'GET'),
      capture: link(`${base}/captures`, 'POST'),
      authReversal: link(`${base}/reversals`, 'POST'),
    },
    id,
    submitTimeUtc: isoSeconds(now),
    status: tx.status,
    reconciliationId: tx.id.slice(-12),
    clientReferenceInformation: clientRef(tx),
    orderInformation: {
      amountDetails: {
        additionalAmount: toDecimalString(add, auth.currency),
        authorizedAmount: toDecimalString(auth.amounts.authorized, auth.currency),
        currency: auth.currency,
      },
    },
    processorInformation: { responseCode: decline ? RESPONSE_CODES[decline] : '00' },
    ...(decline ? { errorInformation: { reason: decline, message: `Decline - ${decline}` } } : {}),
  };
}

/** The answer to a capture; `partialReversal` is what the gateway released of the rest of the hold. */
export function captureAnswer(
  tx: LedgerTransaction,
  partialReversal: number,
  now: Date,
): Record<string, unknown> {
  const amount = tx.amounts.captured;
  return {
    _links: {
      self: link(`/pts/v2/captures/${tx.id}`, 'GET'),
      void: link(`/pts/v2/captures/${tx.id}/voids`, 'POST'),
      refund: link(`/pts/v2/captures/${tx.id}/refunds`, 'POST'),
    },
    id: tx.id,
    submitTimeUtc: isoSeconds(now),
    status: 'PENDING',
    reconciliationId: tx.id.slice(-12),
    clientReferenceInformation: clientRef(tx),
    orderInformation: {
      amountDetails: { totalAmount: toDecimalString(amount, tx.currency), currency: tx.currency },
    },
    ...(partialReversal > 0
      ? {
          reversalAmountDetails: {
            reversedAmount: toDecimalString(partialReversal, tx.currency),
            currency: tx.currency,
          },
        }
      : {}),
  };
}

/** The answer to a reversal or timeout reversal that released `amount`. */
export function reversalAnswer(
  tx: LedgerTransaction,
  now: Date,
  amount: number,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    _links: { self: link(`/pts/v2/reversals/${tx.id}`, 'GET') },
    id: tx.id,
    submitTimeUtc: isoSeconds(now),
    status: 'REVERSED',
    reconciliationId: tx.id.slice(-12),
    clientReferenceInformation: clientRef(tx),
    reversalAmountDetails: {
      reversedAmount: toDecimalString(amount, tx.currency),
      currency: tx.currency,
      ...extra,
    },
    processorInformation: { responseCode: '00' },
  };
}

/** The answer to a void or timeout void of `amount`. */
export function voidAnswer(tx: LedgerTransaction, now: Date, amount: number): Record<string, unknown> {
  return {
    _links: { self: link(`/pts/v2/voids/${tx.id}`, 'GET') },
    id: tx.id,
    submitTimeUtc: isoSeconds(now),
    status: 'VOIDED',
    clientReferenceInformation: clientRef(tx),
    voidAmountDetails: { voidAmount: toDecimalString(amount, tx.currency), currency: tx.currency },
  };
}

/** The answer to a timeout void whose original never reached the gateway: no amount. */
export function voidOfNothingAnswer(tx: LedgerTransaction, now: Date): Record<string, unknown> {
  return {
    _links: { self: link(`/pts/v2/voids/${tx.id}`, 'GET') },
    id: tx.id,
    submitTimeUtc: isoSeconds(now),
    status: 'VOIDED',
    clientReferenceInformation: clientRef(tx),
  };
}

/** The answer to a refund. */
export function refundAnswer(tx: LedgerTransaction, now: Date): Record<string, unknown> {
  const amount = tx.amounts.refunded;
  return {
    _links: {
      self: link(`/pts/v2/refunds/${tx.id}`, 'GET'),
      void: link(`/pts/v2/refunds/${tx.id}/voids`, 'POST'),
    },
    id: tx.id,
    submitTimeUtc: isoSeconds(now),
    status: 'PENDING',
    reconciliationId: tx.id.slice(-12),
    clientReferenceInformation: clientRef(tx),
    refundAmountDetails: {
      refundAmount: toDecimalString(amount, tx.currency),
      currency: tx.currency,
    },
  };
}

/** The answer to a standalone credit of `amount`, approved or declined. */
export function creditAnswer(
  tx: LedgerTransaction,
  amount: number,
  decline: DeclineReason | undefined,
  now: Date,
): Record<string, unknown> {
  const currency = tx.currency;
  return {
    _links: {
      self: link(`/pts/v2/credits/${tx.id}`, 'GET'),
      ...(decline ? {} : { void: link(`/pts/v2/credits/${tx.id}/voids`, 'POST') }),
    },
    id: tx.id,
    submitTimeUtc: isoSeconds(now),
    status: tx.status,
    reconciliationId: tx.id.slice(-12),
    clientReferenceInformation: clientRef(tx),
    creditAmountDetails: { creditAmount: toDecimalString(decline ? 0 : amount, currency), currency },
    ...(decline ? { errorInformation: { reason: decline, message: `Decline - ${decline}` } } : {}),
  };
}

/** The stored answer of a payment made on a payment link's hosted page. */
export function linkPaymentAnswer(
  tx: LedgerTransaction,
  linkId: string,
  decline: DeclineReason | undefined,
  now: Date,
): Record<string, unknown> {
  const amount = tx.amounts.requested;
  const currency = tx.currency;
  return {
    id: tx.id,
    status: tx.status,
    submitTimeUtc: isoSeconds(now),
    clientReferenceInformation: { code: linkId },
    orderInformation: { amountDetails: { totalAmount: toDecimalString(amount, currency), currency } },
    ...(decline ? { errorInformation: { reason: decline, message: `Decline - ${decline}` } } : {}),
  };
}
