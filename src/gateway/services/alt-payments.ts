/**
 * The redirect-based alternative methods of spec 001 ("Alternative-method sale", "Check status", "Refund (alternative
 * methods)"): request builders and answer parsers, pure (no I/O). `AP_SALE` and `AP_STATUS` move no money by
 * themselves (the customer pays at the `paymentUrl`); the client sends each once, never retried — a resent status
 * check would break spec 001's polling interval, a resent sale would open a second redirect nobody pays.
 * `AP_REFUND` moves money: it is prepared here as the vocabulary's `refund-payment` (the same endpoint, POST
 * /pts/v2/payments/{id}/refunds; recovered by a timeout void keyed by its own transactionId) and goes through the
 * journaled sender and the one classification (outcome.ts) like every refund.
 *
 * Personal data: the sale's e-mail and name travel in the body only; nothing here logs or keeps them.
 */
import { currencyByAlpha, MAX_MINOR, toDecimalString } from '../../money/index.js';
import { GatewayError, GatewayInvalidRequestError } from '../errors.js';
import { isGatewayId } from '../gateway-id.js';
import { fieldProblems, parseJsonBody, quotedCode, reasonCode } from '../outcome.js';
import { newTransactionId } from '../transaction-id.js';
import { hostedPageUrlProblem } from './payment-links.js';
import type { PreparedRequest } from './types.js';

/** `paymentInformation.paymentType.method.name` and `.name` of a profile (spec 001, Profiles). */
export interface AltMethod {
  methodName: string;
  paymentTypeName: string;
}

/** What the customer gives for a sale (spec 001: billTo country, email, firstName, lastName; profile 3 more). */
export interface AltCustomer {
  email: string;
  firstName: string;
  lastName: string;
  /** ISO 3166 alpha-2 (the profile's country). */
  country: string;
  address1?: string;
  phoneNumber?: string;
}

/** An alternative-method sale (`AP_SALE`). */
export interface AltSaleRequest {
  /** `clientReferenceInformation.code`: the ticket or session reference. */
  code: string;
  amountMinor: number;
  currency: string;
  method: AltMethod;
  customer: AltCustomer;
  /** Where the redirect page sends the customer afterwards (spec 001: all three required). */
  urls: { successUrl: string; cancelUrl: string; failureUrl: string };
  /** Optional line item (spec 001 allows line items; the grand total stays in totalAmount). */
  productName?: string;
}

/** A status check (`AP_STATUS`) of a sale or refund. */
export interface AltStatusRequest {
  /** Gateway id of the sale or refund. */
  id: string;
  code: string;
  method: AltMethod;
}

/** An alternative-method refund (`AP_REFUND`). */
export interface AltRefundRequest {
  /** Gateway id of the sale. */
  saleId: string;
  code: string;
  amountMinor: number;
  currency: string;
  method: AltMethod;
}

/** Sale statuses of spec 001 ("Check status"). */
export const ALT_SALE_STATUSES = ['PENDING', 'SETTLED', 'FUNDED', 'FAILED', 'ABANDONED'] as const;
export type AltSaleStatus = (typeof ALT_SALE_STATUSES)[number];
/** Refund statuses of spec 001. */
export const ALT_REFUND_STATUSES = ['REFUNDED', 'FAILED'] as const;
export type AltRefundStatus = (typeof ALT_REFUND_STATUSES)[number];

/** Paths of spec 001's endpoints. */
export const ALT_SALE_PATH = '/pts/v2/payments';
export function altStatusPath(id: string): string {
  return `/pts/v2/refresh-payment-status/${checkedId(id, 'id')}`;
}
export function altRefundPath(saleId: string): string {
  return `/pts/v2/payments/${checkedId(saleId, 'id')}/refunds`;
}

/** Why an answer of an alternative-method call cannot be used. */
export type AltAnswerProblem =
  /** HTTP 429: the gateway refused a status check as too early (polling faster than spec 001's interval). */
  | 'too-early'
  /** A status (or HTTP status) spec 001 does not document for this call. */
  | 'undocumented'
  /**
   * No JSON, no id, no status, or a PENDING sale without a paymentUrl the terminal can show a customer (the payment
   * links' rule, `hostedPageUrlProblem`).
   */
  | 'unreadable';

/**
 * An answer to AP_SALE or AP_STATUS the terminal cannot act on. Code `GW_UNDOCUMENTED` or `GW_PARSE`; neither call
 * moves money, so `outcomeUnknown` only says whether a sale may exist at the gateway.
 */
export class AltPaymentAnswerError extends GatewayError {
  override readonly name = 'AltPaymentAnswerError';
  /** The id of the sale the answer names, when it names one: the sale exists at the gateway, unusable as it is. */
  readonly gatewayId?: string;
  constructor(
    readonly problem: AltAnswerProblem,
    message: string,
    options: { httpStatus?: number; outcomeUnknown?: boolean; gatewayId?: string } = {},
  ) {
    const { gatewayId, ...rest } = options;
    super(problem === 'unreadable' ? 'GW_PARSE' : 'GW_UNDOCUMENTED', message, rest);
    if (gatewayId !== undefined) this.gatewayId = gatewayId;
  }
}

function checkedId(id: string, field: string): string {
  if (!isGatewayId(id))
    throw new GatewayInvalidRequestError(
      field,
      'INVALID_DATA',
      'the gateway id is not 1–64 letters, digits, _ or -',
    );
  return id;
}

function required(field: string, value: string | undefined): string {
  if (value === undefined || value.trim() === '')
    throw new GatewayInvalidRequestError(field, 'MISSING_FIELD', `${field} is required`);
  return value;
}

function amount(field: string, minor: number, currency: string): string {
  if (currencyByAlpha(currency) === undefined)
    throw new GatewayInvalidRequestError(
      'orderInformation.amountDetails.currency',
      'INVALID_DATA',
      `${currency} is not ISO 4217`,
    );
  if (!Number.isSafeInteger(minor) || minor <= 0 || minor > MAX_MINOR)
    throw new GatewayInvalidRequestError(field, 'INVALID_DATA', `${field} must be a positive amount`);
  return toDecimalString(minor, currency);
}

function paymentType(method: AltMethod): Record<string, unknown> {
  return {
    paymentType: {
      name: required('paymentInformation.paymentType.name', method.paymentTypeName),
      method: { name: required('paymentInformation.paymentType.method.name', method.methodName) },
    },
  };
}

/** A prepared call: the exact bytes, sent once. */
export interface PreparedAltCall {
  method: 'POST';
  path: string;
  body: Buffer;
  /** The sale's own transactionId (AP_SALE only). */
  transactionId?: string;
}

/**
 * Builds an `AP_SALE` with every field spec 001 requires ("All listed required fields must be sent so that the
 * redirect page renders correctly"). @throws GatewayInvalidRequestError naming the field.
 */
export function buildAltSale(request: AltSaleRequest): PreparedAltCall {
  const transactionId = newTransactionId();
  const total = amount('orderInformation.amountDetails.totalAmount', request.amountMinor, request.currency);
  const c = request.customer;
  const billTo: Record<string, string> = {
    country: required('orderInformation.billTo.country', c.country),
    email: required('orderInformation.billTo.email', c.email),
    firstName: required('orderInformation.billTo.firstName', c.firstName),
    lastName: required('orderInformation.billTo.lastName', c.lastName),
    ...(c.address1 !== undefined ? { address1: c.address1 } : {}),
    ...(c.phoneNumber !== undefined ? { phoneNumber: c.phoneNumber } : {}),
  };
  const body = {
    clientReferenceInformation: {
      code: required('clientReferenceInformation.code', request.code),
      transactionId,
    },
    merchantInformation: {
      cancelUrl: required('merchantInformation.cancelUrl', request.urls.cancelUrl),
      failureUrl: required('merchantInformation.failureUrl', request.urls.failureUrl),
      successUrl: required('merchantInformation.successUrl', request.urls.successUrl),
    },
    orderInformation: {
      amountDetails: { totalAmount: total, currency: request.currency },
      billTo,
      ...(request.productName !== undefined
        ? {
            lineItems: [
              { productName: request.productName, quantity: 1, unitPrice: total, totalAmount: total },
            ],
          }
        : {}),
    },
    paymentInformation: paymentType(request.method),
    processingInformation: { actionList: ['AP_SALE'] },
  };
  return {
    method: 'POST',
    path: ALT_SALE_PATH,
    body: Buffer.from(JSON.stringify(body), 'utf8'),
    transactionId,
  };
}

/** Builds an `AP_STATUS` (actionList a single string, as spec 001's examples send it). */
export function buildAltStatus(request: AltStatusRequest): PreparedAltCall {
  const body = {
    clientReferenceInformation: { code: required('clientReferenceInformation.code', request.code) },
    paymentInformation: paymentType(request.method),
    processingInformation: { actionList: 'AP_STATUS' },
  };
  return { method: 'POST', path: altStatusPath(request.id), body: Buffer.from(JSON.stringify(body), 'utf8') };
}

/**
 * Builds an `AP_REFUND` as the journal's `refund-payment`: its own transactionId (gateway.md §2: every original
 * carries one; its timeout void is keyed by it), money-moving, never retried. No comments: spec 001 lists none.
 */
export function buildAltRefund(request: AltRefundRequest): PreparedRequest {
  const transactionId = newTransactionId();
  const total = amount('orderInformation.amountDetails.totalAmount', request.amountMinor, request.currency);
  const body = {
    clientReferenceInformation: {
      code: required('clientReferenceInformation.code', request.code),
      transactionId,
    },
    orderInformation: { amountDetails: { totalAmount: total, currency: request.currency } },
    paymentInformation: paymentType(request.method),
    processingInformation: { actionList: 'AP_REFUND' },
  };
  return {
    service: 'refund-payment',
    method: 'POST',
    path: altRefundPath(request.saleId),
    body: Buffer.from(JSON.stringify(body), 'utf8'),
    comments: '',
    transactionId,
    amountMinor: request.amountMinor,
    currency: request.currency,
    moneyMoving: true,
  };
}

/** What an `AP_SALE` answered. */
export type AltSaleResult =
  | {
      status: 'PENDING';
      id: string;
      /** Where the customer pays (shown as a QR code). */
      paymentUrl: string;
      reconciliationId?: string;
    }
  | { status: 'FAILED'; id?: string; reason: string; message?: string };

/** What an `AP_STATUS` answered. */
export interface AltStatusResult<S extends string = AltSaleStatus | AltRefundStatus> {
  id: string;
  status: S;
  responseCode?: string;
  /** errorInformation.reason of a FAILED status. */
  reason?: string;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
function at(body: unknown, path: string): unknown {
  let cur: unknown = body;
  for (const key of path.split('.')) {
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

/** Turns a non-2xx answer into the hierarchy: 400 names the fields; 429 is a too-early status check. */
function answerError(httpStatus: number, body: unknown, label: string, saleMayExist: boolean): GatewayError {
  if (httpStatus === 400) {
    const details = fieldProblems(body);
    const first = details[0];
    const reason = reasonCode(at(body, 'reason'));
    return new GatewayInvalidRequestError(
      first?.field ?? '(body)',
      first?.reason === 'MISSING_FIELD' ? 'MISSING_FIELD' : 'INVALID_DATA',
      `${label}: the gateway refused the request${reason ? ` (${reason})` : ''}`,
      { details },
    );
  }
  if (httpStatus === 429)
    return new AltPaymentAnswerError(
      'too-early',
      `${label}: the gateway refused a status check as too early`,
      {
        httpStatus,
      },
    );
  if (httpStatus === 404) return new GatewayError('GW_NOT_FOUND', `${label}: not found`, { httpStatus });
  if (httpStatus === 401 || httpStatus === 403)
    return new GatewayError('GW_AUTH', `${label}: the gateway refused the credentials`, { httpStatus });
  return new AltPaymentAnswerError('undocumented', `${label}: HTTP ${httpStatus}`, {
    httpStatus,
    outcomeUnknown: saleMayExist,
  });
}

/**
 * Reads an `AP_SALE` answer (spec 001: id, status PENDING, processorInformation.paymentUrl; or FAILED). The
 * paymentUrl is put in front of a customer (QR code and text), so it must pass the rule of the payment links' hosted
 * pages ({@link hostedPageUrlProblem}: printable ASCII, short enough for the QR code, https — plain http only on this
 * machine, the embedded sandbox's page) without their host list: the page is the method provider's, on its own host.
 * @throws GatewayInvalidRequestError on 400, AltPaymentAnswerError on anything undocumented or unreadable — for a
 *   PENDING sale whose paymentUrl fails that rule, `unreadable` with the sale's `gatewayId` (it exists at the gateway;
 *   nobody can pay it, so it ends ABANDONED there).
 */
export function parseAltSaleAnswer(httpStatus: number, bytes: Buffer): AltSaleResult {
  const body = parseJsonBody(bytes);
  if (httpStatus !== 200 && httpStatus !== 201) throw answerError(httpStatus, body, 'AP_SALE', true);
  const status = str(at(body, 'status'));
  // Kept only in the shape the terminal stores and sends back in its status checks (gateway-id.ts): a PENDING sale
  // with another is as unreadable as one without.
  const answeredId = str(at(body, 'id'));
  const id = answeredId !== undefined && isGatewayId(answeredId) ? answeredId : undefined;
  if (status === 'FAILED') {
    const message = str(at(body, 'errorInformation.message'));
    return {
      status,
      ...(id !== undefined ? { id } : {}),
      // Journaled with the sale and shown to the operator: a code (reasonCode), else the status.
      reason: reasonCode(at(body, 'errorInformation.reason')) ?? 'FAILED',
      ...(message !== undefined ? { message } : {}),
    };
  }
  if (status !== 'PENDING')
    throw new AltPaymentAnswerError(
      status === undefined ? 'unreadable' : 'undocumented',
      `AP_SALE: status ${status === undefined ? '(none)' : quotedCode(status)} is not PENDING or FAILED`,
      { httpStatus, outcomeUnknown: true },
    );
  const paymentUrl = str(at(body, 'processorInformation.paymentUrl'));
  if (id === undefined || paymentUrl === undefined)
    throw new AltPaymentAnswerError('unreadable', 'AP_SALE: PENDING without an id or a paymentUrl', {
      httpStatus,
      outcomeUnknown: true,
      ...(id !== undefined ? { gatewayId: id } : {}),
    });
  // The URL itself is not repeated: it is the gateway's text, not ours to put in a log line.
  const problem = hostedPageUrlProblem(paymentUrl);
  if (problem !== undefined)
    throw new AltPaymentAnswerError(
      'unreadable',
      `AP_SALE ${id}: PENDING with a paymentUrl that cannot be shown to a customer (${problem})`,
      { httpStatus, outcomeUnknown: true, gatewayId: id },
    );
  // Only in the shape of an id (gateway-id.ts): nothing the terminal needs to act on, left out otherwise.
  const answeredReconciliationId = str(at(body, 'reconciliationId'));
  const reconciliationId =
    answeredReconciliationId !== undefined && isGatewayId(answeredReconciliationId)
      ? answeredReconciliationId
      : undefined;
  return { status, id, paymentUrl, ...(reconciliationId !== undefined ? { reconciliationId } : {}) };
}

/**
 * Reads an `AP_STATUS` answer of a sale or a refund; a status spec 001 does not list for it is an error.
 * @throws GatewayInvalidRequestError on 400, AltPaymentAnswerError (`too-early` on 429) otherwise.
 */
export function parseAltStatusAnswer<K extends 'sale' | 'refund'>(
  of: K,
  httpStatus: number,
  bytes: Buffer,
): AltStatusResult<K extends 'sale' ? AltSaleStatus : AltRefundStatus> {
  const body = parseJsonBody(bytes);
  if (httpStatus !== 200 && httpStatus !== 201) throw answerError(httpStatus, body, 'AP_STATUS', false);
  const status = str(at(body, 'status'));
  const answeredId = str(at(body, 'id'));
  // An id is taken only in the shape the terminal keeps and sends back (gateway-id.ts).
  const id = answeredId !== undefined && isGatewayId(answeredId) ? answeredId : undefined;
  if (status === undefined || id === undefined)
    throw new AltPaymentAnswerError('unreadable', 'AP_STATUS: an answer without an id or a status', {
      httpStatus,
    });
  const allowed: readonly string[] = of === 'sale' ? ALT_SALE_STATUSES : ALT_REFUND_STATUSES;
  if (!allowed.includes(status))
    throw new AltPaymentAnswerError(
      'undocumented',
      `AP_STATUS: ${quotedCode(status)} is not a ${of} status of spec 001`,
      {
        httpStatus,
      },
    );
  // Codes, journaled with the sale and shown to the operator: anything else is left out.
  const responseCode = reasonCode(at(body, 'processorInformation.responseCode'));
  const reason = reasonCode(at(body, 'errorInformation.reason'));
  return {
    id,
    status: status as K extends 'sale' ? AltSaleStatus : AltRefundStatus,
    ...(responseCode !== undefined ? { responseCode } : {}),
    ...(reason !== undefined ? { reason } : {}),
  };
}
