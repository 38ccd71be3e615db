import { parseDecimal } from '../money/index.js';
import {
  GatewayAuthError,
  GatewayClockSkewError,
  GatewayError,
  GatewayServerError,
  type AuthClockSkew,
  type FieldProblem,
} from './errors.js';
import { isGatewayId } from './gateway-id.js';
import { valueAt } from './services/required-fields.js';
import type { PreparedRequest, ServiceName } from './services/types.js';
import { approvalCodeOf } from '../vocabulary/approval-code.js';
import { declineHolds, REVIEW_STATUS, RISK_DECLINED_STATUS } from '../vocabulary/services.js';

/**
 * The one classification of a payment-service answer, used everywhere (issue 5, Outcomes). A decline is a result,
 * not an error; `unknown` is everything that is not a decision of the gateway.
 */
export type Outcome =
  | {
      kind: 'approved';
      /** The gateway `id` of the new transaction (follow-ons use it). */
      gatewayId: string;
      status: string;
      /**
       * Authorized amount in minor units (AVR, pre-authorization, sale, incremental: the new total). Reversals must
       * use this, not the requested amount (spec 001).
       */
      authorizedMinor?: number;
      /** Amount the gateway reports processed (reversed, captured, refunded, credited, voided), minor units. */
      amountMinor?: number;
      /** Approved for less than requested (status PARTIAL_AUTHORIZED or a smaller authorized amount). */
      partial: boolean;
      /** `processorInformation.approvalCode`: the issuer's authorization code, printed on the receipt. */
      approvalCode?: string;
      httpStatus: number;
      body: unknown;
    }
  | {
      kind: 'declined';
      gatewayId?: string;
      /**
       * DECLINED, FAILED, … AUTHORIZED_RISK_DECLINED means the issuer approved and the gateway's risk check refused:
       * funds may be held; PENDING_REVIEW, the merchant's review may yet accept and charge it. The caller reverses
       * either with `gatewayId` (the vocabulary's declineHolds).
       */
      status: string;
      /**
       * AUTHORIZED_RISK_DECLINED, PENDING_REVIEW: the amount the issuer authorized and holds (the answer's
       * `authorizedAmount`), minor units — the amount its reversal carries; absent when the answer states none (then
       * it held what was asked).
       */
      authorizedMinor?: number;
      /** `errorInformation.reason` (EXPIRED_CARD, INSUFFICIENT_FUND, …), or the status when absent. */
      reason: string;
      message?: string;
      httpStatus: number;
      body: unknown;
    }
  | {
      kind: 'rejected';
      /** The 400 `reason` (MISSING_FIELD, INVALID_DATA, EXCEEDS_AUTH_AMOUNT, NOT_VOIDABLE, …). Never retried. */
      reason: string;
      details: FieldProblem[];
      httpStatus: number;
      body: unknown;
    }
  | {
      kind: 'unknown';
      /**
       * Why there is no decision. `error.outcomeUnknown` says whether the request may have been processed (timeout
       * after sending, reset after writing, 5xx, unreadable 2xx, undocumented status): then the caller resolves it
       * with a timeout reversal or void. When false (connection refused, 401) nothing was processed.
       */
      error: GatewayError;
      httpStatus?: number;
    };

interface StatusSets {
  approved: readonly string[];
  declined: readonly string[];
  /** 201 statuses that mean "the request was invalid" (documented for payments, refunds and credits). */
  rejected: readonly string[];
}

const PAYMENTS: StatusSets = {
  approved: ['AUTHORIZED', 'PARTIAL_AUTHORIZED', 'AUTHORIZED_PENDING_REVIEW'],
  // PENDING_AUTHENTICATION and PENDING_REVIEW cannot complete at a card-present terminal: no customer step-up, no
  // waiting for the merchant's review. A payment in review may yet be accepted and charged: it is reversed
  // (the vocabulary's declineHolds), as a risk decline is.
  declined: ['DECLINED', RISK_DECLINED_STATUS, 'PENDING_AUTHENTICATION', REVIEW_STATUS],
  rejected: ['INVALID_REQUEST'],
};

/** Statuses per service (reference/gateway.md §4). */
const STATUSES: Readonly<Record<ServiceName, StatusSets>> = {
  avr: PAYMENTS,
  preauth: PAYMENTS,
  sale: PAYMENTS,
  incremental: {
    approved: ['AUTHORIZED', 'AUTHORIZED_PENDING_REVIEW'],
    declined: ['DECLINED'],
    rejected: [],
  },
  reversal: { approved: ['REVERSED'], declined: [], rejected: [] },
  'timeout-reversal': { approved: ['REVERSED'], declined: [], rejected: [] },
  capture: { approved: ['PENDING', 'TRANSMITTED'], declined: [], rejected: [] },
  'refund-capture': { approved: ['PENDING'], declined: ['DECLINED'], rejected: ['INVALID_REQUEST'] },
  // The same endpoint refunds an alternative-method sale (spec 001, AP_REFUND): REFUNDED (accepted) or FAILED.
  'refund-payment': {
    approved: ['PENDING', 'REFUNDED'],
    declined: ['DECLINED', 'FAILED'],
    rejected: ['INVALID_REQUEST'],
  },
  credit: {
    approved: ['PENDING', 'AUTHORIZED', 'COMPLETED'],
    declined: ['DECLINED'],
    rejected: ['INVALID_REQUEST'],
  },
  // CANCELLED: the voided transaction was cancelled before it moved money — the goal of the void is reached.
  'void-capture': { approved: ['VOIDED', 'CANCELLED'], declined: ['FAILED'], rejected: [] },
  'void-payment': { approved: ['VOIDED', 'CANCELLED'], declined: ['FAILED'], rejected: [] },
  'void-refund': { approved: ['VOIDED', 'CANCELLED'], declined: ['FAILED'], rejected: [] },
  'void-credit': { approved: ['VOIDED', 'CANCELLED'], declined: ['FAILED'], rejected: [] },
  'timeout-void': { approved: ['VOIDED', 'CANCELLED'], declined: ['FAILED'], rejected: [] },
};

/**
 * Whether an answer of `status` to a request of `service` refused it, so that it moved nothing: the INVALID_REQUEST of
 * a 400 answer, or a decline or rejection among the service's statuses that holds nothing. Any other status — an
 * approval, a decline that may hold, one the service does not document (the terminal's outcome unknown) — may have.
 */
export function refusedStatus(service: ServiceName, status: string): boolean {
  const sets = STATUSES[service];
  return (
    status === 'INVALID_REQUEST' ||
    sets.rejected.includes(status) ||
    (sets.declined.includes(status) && !declineHolds(status))
  );
}

/** Where each service's answer states the amount it processed. */
const PROCESSED_AMOUNT: Partial<Record<ServiceName, string>> = {
  reversal: 'reversalAmountDetails.reversedAmount',
  'timeout-reversal': 'reversalAmountDetails.reversedAmount',
  capture: 'orderInformation.amountDetails.totalAmount',
  'refund-capture': 'refundAmountDetails.refundAmount',
  'refund-payment': 'refundAmountDetails.refundAmount',
  credit: 'creditAmountDetails.creditAmount',
  'void-capture': 'voidAmountDetails.voidAmount',
  'void-payment': 'voidAmountDetails.voidAmount',
  'void-refund': 'voidAmountDetails.voidAmount',
  'void-credit': 'voidAmountDetails.voidAmount',
  'timeout-void': 'voidAmountDetails.voidAmount',
};

/** Where each service's answer states the currency of the amount it processed: beside the amount. */
const PROCESSED_CURRENCY: Partial<Record<ServiceName, string>> = Object.fromEntries(
  Object.entries(PROCESSED_AMOUNT).map(([service, path]) => [service, path.replace(/\.[^.]+$/, '.currency')]),
);

const AUTHORIZING: ReadonlySet<ServiceName> = new Set(['avr', 'preauth', 'sale', 'incremental']);

const at = valueAt;

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/**
 * A reason the answer states (`reason`, `errorInformation.reason`): the gateway's reasons are codes
 * (INSUFFICIENT_FUND, NOT_VOIDABLE, …), kept as the journal, the logs and the operator see them. Anything else — prose,
 * control characters, a text longer than a code, which the journal would refuse to record — is no reason the terminal
 * can use: undefined, and the caller falls back to the status.
 */
export const reasonCode = (v: unknown): string | undefined =>
  typeof v === 'string' && REASON_CODE.test(v) ? v : undefined;

const REASON_CODE = /^[\x21-\x7e]{1,64}$/;

/**
 * A status or code of an answer as an error's message names it (the logs, the operator's view and the journal's notes
 * quote messages): a code as it is ({@link reasonCode}), anything else — a text of any length — not repeated.
 */
export const quotedCode = (v: unknown): string => reasonCode(v) ?? '(not a code)';

/**
 * Parses a JSON body; undefined when it is not JSON (the caller decides what that means), or when an object names a
 * key twice: which of the two counts is up to the parser (JSON.parse keeps the last, others the first), so such an
 * answer — `"status":"DECLINED", … "status":"AUTHORIZED"` — states nothing the terminal may act on.
 */
export function parseJsonBody(bytes: Buffer): unknown {
  if (bytes.length === 0) return undefined;
  const text = bytes.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
  return typeof value === 'object' && value !== null && keysNamed(bytes) !== keysKept(value)
    ? undefined
    : value;
}

/**
 * How many keys the JSON text names, counting every key of every object (keys compared as decoded, `"status"` and
 * `"st\u0061tus"` being one, is left to JSON.parse: see {@link keysKept}). The text is well-formed JSON (JSON.parse
 * read it), where a colon outside a string follows a key and nothing else: the colons outside strings are counted.
 * Read from the UTF-8 bytes, where quote, backslash and colon are single bytes that no other character's bytes
 * contain (an undecodable byte is read as U+FFFD without taking the ASCII byte after it).
 */
function keysNamed(bytes: Buffer): number {
  let keys = 0;
  const n = bytes.length;
  for (let i = 0; i < n; i++) {
    const c = bytes[i];
    if (c === 0x22 /* " */) {
      // To the closing quote, stepping over each escaped character.
      for (i++; i < n; i++) {
        const d = bytes[i];
        if (d === 0x5c /* \ */) i++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x3a /* : */) keys++;
  }
  return keys;
}

/**
 * How many keys the objects JSON.parse made of the text hold, all depths counted. Equal to {@link keysNamed} exactly
 * when no object names a key twice: each object keeps at most the keys it names, and one that names a key twice keeps
 * fewer — or none at all, when it sat in a value that the second naming of a key replaced. Iterative: JSON.parse reads
 * nesting deeper than any recursion could follow.
 */
function keysKept(root: object): number {
  let keys = 0;
  const pending: object[] = [root];
  for (let v = pending.pop(); v !== undefined; v = pending.pop()) {
    if (Array.isArray(v)) {
      for (const item of v as unknown[]) if (typeof item === 'object' && item !== null) pending.push(item);
      continue;
    }
    const names = Object.keys(v);
    keys += names.length;
    for (const name of names) {
      const item = (v as Record<string, unknown>)[name];
      if (typeof item === 'object' && item !== null) pending.push(item);
    }
  }
  return keys;
}

/**
 * The currency the answer states its amounts in at `path`: the request's. An answer that names another states an
 * amount that is not this payment's (12.50 USD read as 1250 euro cents would be held, captured and reversed as
 * euros): unreadable, its outcome unknown. The request's currency when the answer names none.
 */
function answerCurrency(body: unknown, path: string, prepared: PreparedRequest): string | undefined {
  const value = at(body, path);
  // A currency stated as something else than a code (840, true, an object) names no currency the terminal can
  // compare: not the request's by default.
  if (value !== undefined && value !== null && typeof value !== 'string')
    throw new GatewayError('GW_PARSE', `${path} is not a currency code`, { outcomeUnknown: true });
  const named = str(value);
  if (named === undefined) return prepared.currency;
  if (prepared.currency !== undefined && named.toUpperCase() !== prepared.currency.toUpperCase())
    throw new GatewayError(
      'GW_PARSE',
      `${path} is ${quotedCode(named)}, not the requested ${prepared.currency}`,
      {
        outcomeUnknown: true,
      },
    );
  return prepared.currency ?? named;
}

/** An amount of the answer in minor units: strings or numbers accepted; undefined when absent; throws when garbage. */
function amountAt(body: unknown, path: string, currency: string | undefined): number | undefined {
  const v = at(body, path);
  if (v === undefined || v === null || v === '') return undefined;
  if ((typeof v !== 'string' && typeof v !== 'number') || currency === undefined) {
    throw new GatewayError('GW_PARSE', `${path} is not an amount`, { outcomeUnknown: true });
  }
  try {
    return parseDecimal(v, currency);
  } catch (e) {
    throw new GatewayError('GW_PARSE', `${path} is not an amount of ${currency}`, {
      outcomeUnknown: true,
      cause: e,
    });
  }
}

/**
 * An amount of the answer that the request bounds — authorized, reversed, captured, refunded, credited: never more than
 * the request's amount (a partial approval is less). More is an answer nobody documented, most likely minor units or
 * the wrong exponent ("1250" for 12.50): an authorization "approved" for a hundred times the price would be held,
 * printed and reversed as such.
 * @throws GatewayError GW_PARSE (outcome unknown) when it is more.
 */
function withinRequest(
  minor: number | undefined,
  path: string,
  prepared: PreparedRequest,
): number | undefined {
  if (minor !== undefined && prepared.amountMinor !== undefined && minor > prepared.amountMinor) {
    throw new GatewayError('GW_PARSE', `${path} is more than the amount requested`, { outcomeUnknown: true });
  }
  return minor;
}

/**
 * What a risk-declined authorization holds (its answer's `authorizedAmount`): the amount its reversal must carry.
 * Undefined when the answer states none, or none the terminal can read in the requested currency (or more than was
 * asked): the decline stands either way (it is the gateway's decision), and its reversal then carries the amount asked,
 * the one figure known.
 */
function heldAmount(body: unknown, prepared: PreparedRequest): number | undefined {
  const path = 'orderInformation.amountDetails.authorizedAmount';
  try {
    return withinRequest(
      amountAt(body, path, answerCurrency(body, 'orderInformation.amountDetails.currency', prepared)),
      path,
      prepared,
    );
  } catch (e) {
    if (e instanceof GatewayError) return undefined;
    throw e;
  }
}

/**
 * A field path as a 400 answer's `details[].field` names one (spec 001: dotted names and array indexes, e.g.
 * `orderInformation.lineItems[0].unitPrice`), up to 256 characters: anything else — prose, a card number in words,
 * control characters, a text of any length — is no path the terminal repeats in its messages, logs or journal.
 */
export const fieldPath = (v: unknown): string | undefined =>
  typeof v === 'string' && FIELD_PATH.test(v) ? v : undefined;

const FIELD_PATH = /^[A-Za-z0-9_.[\]]{1,256}$/;

/**
 * The `details[]` of a 400 answer, tolerant of missing or odd entries, read in the shape the terminal keeps: an entry
 * whose field is no {@link fieldPath} is dropped, a reason that is no code ({@link reasonCode}) reads INVALID_DATA.
 */
export function fieldProblems(body: unknown): FieldProblem[] {
  const details = at(body, 'details');
  if (!Array.isArray(details)) return [];
  return details.flatMap((d: unknown) => {
    const field = fieldPath(at(d, 'field'));
    return field === undefined ? [] : [{ field, reason: reasonCode(at(d, 'reason')) ?? 'INVALID_DATA' }];
  });
}

/**
 * Errors for HTTP statuses that are not a decision: 401/403 (nothing processed), 5xx (502 is documented as "server
 * error or timeout": outcome unknown), anything else undocumented (outcome unknown: never assume nothing happened).
 * `clockSkew`: the transport found this terminal's clock too far from the gateway's for its credentials (set on a 401
 * only): the 401 is GW_AUTH_CLOCK, naming the skew, rather than a bare GW_AUTH.
 */
export function errorForStatus(httpStatus: number, body: unknown, clockSkew?: AuthClockSkew): GatewayError {
  if (httpStatus === 401 && clockSkew !== undefined) return new GatewayClockSkewError(httpStatus, clockSkew);
  if (httpStatus === 401 || httpStatus === 403) {
    return new GatewayAuthError(`the gateway refused the credentials (HTTP ${httpStatus})`, { httpStatus });
  }
  if (httpStatus >= 500) {
    const reason = reasonCode(at(body, 'reason'));
    return new GatewayServerError(
      `the gateway answered HTTP ${httpStatus}${reason ? ` ${reason}` : ''}`,
      reason,
      {
        httpStatus,
      },
    );
  }
  return new GatewayError('GW_UNDOCUMENTED', `undocumented HTTP status ${httpStatus}`, {
    outcomeUnknown: true,
    httpStatus,
  });
}

type Approved = Extract<Outcome, { kind: 'approved' }>;

/**
 * An approval, its optional members present only when known (callers may test their presence), in one order. One
 * literal per combination rather than conditional spreads, which give every object a shape of its own.
 */
function approved(
  gatewayId: string,
  status: string,
  authorizedMinor: number | undefined,
  amountMinor: number | undefined,
  partial: boolean,
  approvalCode: string | undefined,
  httpStatus: number,
  body: unknown,
): Approved {
  const kind = 'approved';
  if (authorizedMinor !== undefined) {
    if (amountMinor !== undefined) {
      return approvalCode !== undefined
        ? { kind, gatewayId, status, authorizedMinor, amountMinor, partial, approvalCode, httpStatus, body }
        : { kind, gatewayId, status, authorizedMinor, amountMinor, partial, httpStatus, body };
    }
    return approvalCode !== undefined
      ? { kind, gatewayId, status, authorizedMinor, partial, approvalCode, httpStatus, body }
      : { kind, gatewayId, status, authorizedMinor, partial, httpStatus, body };
  }
  if (amountMinor !== undefined) {
    return approvalCode !== undefined
      ? { kind, gatewayId, status, amountMinor, partial, approvalCode, httpStatus, body }
      : { kind, gatewayId, status, amountMinor, partial, httpStatus, body };
  }
  return approvalCode !== undefined
    ? { kind, gatewayId, status, partial, approvalCode, httpStatus, body }
    : { kind, gatewayId, status, partial, httpStatus, body };
}

/**
 * Classifies the answer to a prepared payment request (reference/gateway.md §4): decide on `status`, never on
 * `processorInformation.responseCode`; ignore unknown fields; amounts as strings or numbers.
 */
export function classifyPaymentAnswer(
  prepared: PreparedRequest,
  httpStatus: number,
  bytes: Buffer,
  clockSkew?: AuthClockSkew,
): Outcome {
  const body = parseJsonBody(bytes);
  if (httpStatus === 400) {
    return {
      kind: 'rejected',
      reason: reasonCode(at(body, 'reason')) ?? 'INVALID_REQUEST',
      details: fieldProblems(body),
      httpStatus,
      body,
    };
  }
  if (httpStatus !== 200 && httpStatus !== 201) {
    return { kind: 'unknown', error: errorForStatus(httpStatus, body, clockSkew), httpStatus };
  }
  const status = str(at(body, 'status'));
  if (body === undefined || status === undefined) {
    return {
      kind: 'unknown',
      error: new GatewayError('GW_PARSE', `HTTP ${httpStatus} without a readable JSON status`, {
        outcomeUnknown: true,
        httpStatus,
      }),
      httpStatus,
    };
  }
  const sets = STATUSES[prepared.service];
  // An id is kept only in the shape the terminal keeps, prints and puts into a follow-on's path (gateway-id.ts).
  const id = str(at(body, 'id'));
  const gatewayId = id !== undefined && isGatewayId(id) ? id : undefined;
  // An approval without one cannot be captured, reversed or voided, nor can a risk decline's hold or a payment in
  // review be given up by its id: unreadable, resolved by a timeout reversal or void by transactionId like any unknown
  // outcome.
  if (
    gatewayId === undefined &&
    (sets.approved.includes(status) || (sets.declined.includes(status) && declineHolds(status)))
  ) {
    return {
      kind: 'unknown',
      error: new GatewayError(
        'GW_PARSE',
        `${status} without an id the terminal can use${id !== undefined ? ' (not 1–64 letters, digits, _ or -)' : ''}`,
        { outcomeUnknown: true, httpStatus },
      ),
      httpStatus,
    };
  }
  if (sets.approved.includes(status) && gatewayId !== undefined) {
    try {
      const currency = answerCurrency(body, 'orderInformation.amountDetails.currency', prepared);
      let authorizedMinor: number | undefined;
      let partial = status === 'PARTIAL_AUTHORIZED';
      if (AUTHORIZING.has(prepared.service)) {
        const path = 'orderInformation.amountDetails.authorizedAmount';
        authorizedMinor = amountAt(body, path, currency);
        // An increment states the new total, more than the amount added: not bounded by it.
        if (prepared.service !== 'incremental') withinRequest(authorizedMinor, path, prepared);
        if (authorizedMinor === undefined && partial) {
          // A partial approval without its amount cannot be captured or reversed correctly.
          throw new GatewayError('GW_PARSE', 'PARTIAL_AUTHORIZED without authorizedAmount', {
            outcomeUnknown: true,
          });
        }
        // A full approval that omits the amount authorized what was asked (not for increments: they state totals).
        if (authorizedMinor === undefined && prepared.service !== 'incremental')
          authorizedMinor = prepared.amountMinor;
        if (
          prepared.service !== 'incremental' &&
          authorizedMinor !== undefined &&
          prepared.amountMinor !== undefined &&
          authorizedMinor < prepared.amountMinor
        ) {
          partial = true;
        }
      }
      const processedPath = PROCESSED_AMOUNT[prepared.service];
      const amountMinor =
        processedPath !== undefined
          ? withinRequest(
              amountAt(
                body,
                processedPath,
                answerCurrency(body, PROCESSED_CURRENCY[prepared.service] ?? '', prepared) ?? currency,
              ),
              processedPath,
              prepared,
            )
          : undefined;
      // Receipt only: a code of another shape (which the journal would not keep) is left out, the approval stands.
      const approvalCode = approvalCodeOf(at(body, 'processorInformation.approvalCode'));
      return approved(
        gatewayId,
        status,
        authorizedMinor,
        amountMinor,
        partial,
        approvalCode,
        httpStatus,
        body,
      );
    } catch (e) {
      if (e instanceof GatewayError) return { kind: 'unknown', error: e, httpStatus };
      throw e;
    }
  }
  if (sets.declined.includes(status)) {
    const message = str(at(body, 'errorInformation.message'));
    const authorizedMinor = declineHolds(status) ? heldAmount(body, prepared) : undefined;
    return {
      kind: 'declined',
      ...(gatewayId !== undefined ? { gatewayId } : {}),
      status,
      ...(authorizedMinor !== undefined ? { authorizedMinor } : {}),
      reason: reasonCode(at(body, 'errorInformation.reason')) ?? status,
      ...(message !== undefined ? { message } : {}),
      httpStatus,
      body,
    };
  }
  if (sets.rejected.includes(status)) {
    return {
      kind: 'rejected',
      reason: reasonCode(at(body, 'errorInformation.reason')) ?? reasonCode(at(body, 'reason')) ?? status,
      details: fieldProblems(body),
      httpStatus,
      body,
    };
  }
  return {
    kind: 'unknown',
    error: new GatewayError(
      'GW_UNDOCUMENTED',
      `status ${quotedCode(status)} is not documented for ${prepared.service}`,
      {
        outcomeUnknown: true,
        httpStatus,
      },
    ),
    httpStatus,
  };
}
