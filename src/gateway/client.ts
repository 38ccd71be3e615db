import { silentLogger, type Logger } from '../log/index.js';
import { GatewayError, GatewayInvalidRequestError } from './errors.js';
import { isGatewayId } from './gateway-id.js';
import {
  classifyPaymentAnswer,
  errorForStatus,
  fieldProblems,
  parseJsonBody,
  reasonCode,
  type Outcome,
} from './outcome.js';
import type { Authenticator } from './auth/authenticator.js';
import type { Reachability } from './connect-probe.js';
import type { ExchangeDispatcher } from './connection-pool.js';
import {
  buildDccOfferBody,
  DCC_OFFER_PATH,
  dccOfferAuthHeaders,
  parseDccOfferAnswer,
  type DccOfferRequest,
  type DccOfferResult,
} from './services/dcc.js';
import {
  buildPaymentLinkBody,
  hostedPageOriginsOf,
  linkPath,
  listPath,
  parseCreatedPaymentLink,
  parsePaymentLinkOf,
  parsePaymentLinkPage,
  type PaymentLink,
  type PaymentLinkInput,
  type PaymentLinkPage,
} from './services/payment-links.js';
import {
  buildAltStatus,
  parseAltSaleAnswer,
  parseAltStatusAnswer,
  type AltRefundStatus,
  type AltSaleRequest,
  type AltSaleResult,
  type AltSaleStatus,
  type AltStatusRequest,
  type AltStatusResult,
  type PreparedAltCall,
} from './services/alt-payments.js';
import { preparePayment, type PaymentBuilderOptions } from './services/payments.js';
import type { PreparedRequest, ServiceRequest } from './services/types.js';
import {
  createTransport,
  type Answer,
  type Exchange,
  type RetryOptions,
  type Timeouts,
  type TransportOptions,
} from './transport.js';

/** Options of {@link createGatewayClient}. */
export interface GatewayClientOptions {
  /** e.g. `https://apitest.cybersource.com`, or the sandbox's URL. */
  baseUrl: string;
  /** The transacting merchant (`v-c-merchant-id`). */
  merchantId: string;
  auth: Authenticator;
  timeouts: Timeouts;
  /** Retry budget of requests that cannot move money twice; default 3 attempts, 200 ms, 5 s. */
  retry?: RetryOptions;
  logger?: Logger;
  /** Clock (tests); read once per request. */
  now?: () => Date;
  /** Replaces the keep-alive pool (tests: undici MockAgent). */
  dispatcher?: ExchangeDispatcher;
  /** Builder choices where public guides disagree (comments of a pre-authorization). */
  builder?: PaymentBuilderOptions;
  /** Jitter source (tests). */
  random?: () => number;
  /**
   * Most keep-alive connections to the gateway at once (default 16): requests beyond it wait for a free connection.
   * Sockets open on demand, so a terminal with one request in flight keeps one.
   */
  maxConnections?: number;
  /** As the transport's `onAnswer`: each answer's `Date` header and its timing (the clock skew). */
  onAnswer?: TransportOptions['onAnswer'];
  /**
   * Hosts (`links.hostedPageHosts`) whose pages a payment link's `paymentLink` may open; default the host and port of
   * `baseUrl` ({@link hostedPageOriginsOf}). A link whose page is elsewhere is shown without it.
   */
  hostedPageHosts?: readonly string[];
}

/** Status check of an alternative-method payment (spec 001, Check status). */
export interface PaymentStatusRequest {
  /** Gateway id of the pending sale or refund. */
  id: string;
  code: string;
  /** `paymentInformation.paymentType.name` and `.method.name`, as in the sale. */
  paymentTypeName: string;
  methodName: string;
}

/** The answer of a status check: PENDING, SETTLED, FUNDED, ABANDONED, FAILED (sales) or REFUNDED, FAILED (refunds). */
export interface PaymentStatusResult {
  id: string;
  status: string;
  responseCode?: string;
  body: unknown;
}

export interface GatewayClient {
  /**
   * Pure: builds and validates the exact request (path, body bytes serialised once, comments), assigning a new
   * transactionId to original requests. Nothing is sent.
   * @throws GatewayInvalidRequestError (GW_INVALID_REQUEST, field named) when a required field of spec 001 is
   *   missing or a value is invalid.
   */
  prepare(request: ServiceRequest): PreparedRequest;
  /**
   * Sends a prepared request once (money-moving requests are never retried; a 401 ACCESS_TOKEN_EXPIRED is resent
   * once after a token refresh since it was not processed) and classifies the answer. Never throws for gateway
   * answers or transport failures: they are in the outcome.
   */
  send(prepared: PreparedRequest, options?: { signal?: AbortSignal }): Promise<Outcome>;
  /**
   * Asks for a DCC offer (retried: it moves no money).
   * @throws GatewayError when no usable answer arrives (GW_INVALID_REQUEST with details on 400).
   */
  dccOffer(request: DccOfferRequest, options?: { signal?: AbortSignal }): Promise<DccOfferResult>;
  /** Payment links of spec 000. Each method throws GatewayError (GW_NOT_FOUND on 404, GW_INVALID_REQUEST on 400). */
  readonly paymentLinks: {
    /** Creates a link (not retried: a second POST would answer DUPLICATE_RECORD). */
    create(link: PaymentLinkInput, options?: { signal?: AbortSignal }): Promise<PaymentLink>;
    /** Replaces every field of a link; `status: INACTIVE` deactivates it. */
    update(id: string, link: PaymentLinkInput, options?: { signal?: AbortSignal }): Promise<PaymentLink>;
    get(id: string, options?: { signal?: AbortSignal }): Promise<PaymentLink>;
    /** One page; follow `next` for the rest. `limit` ≤ 1000. */
    list(
      query?: { offset?: number; limit?: number; status?: 'ACTIVE' | 'INACTIVE' },
      options?: { signal?: AbortSignal },
    ): Promise<PaymentLinkPage>;
  };
  /**
   * Status of an alternative-method payment (`POST /pts/v2/refresh-payment-status/{id}`); retried: it is a read.
   * A retry is a second check inside spec 001's 60-minute interval: polling code uses `alternativeMethods.status`,
   * which is sent once.
   * @throws GatewayError when no usable answer arrives.
   */
  paymentStatus(
    request: PaymentStatusRequest,
    options?: { signal?: AbortSignal },
  ): Promise<PaymentStatusResult>;
  /**
   * The redirect-based alternative methods of spec 001 (services/alt-payments.ts). Each call is sent ONCE, never
   * retried: a resent status check would break spec 001's 60-minute interval, a resent sale would open a second
   * redirect. `AP_REFUND` moves money and goes through `send` (journaled) with `buildAltRefund`.
   */
  readonly alternativeMethods: {
    /**
     * `AP_SALE`: PENDING with the paymentUrl, or FAILED. Pass a request built once by `buildAltSale` (its
     * transactionId is journaled before the call).
     * @throws GatewayError (GatewayInvalidRequestError on 400, AltPaymentAnswerError when undocumented).
     */
    sale(prepared: PreparedAltCall, options?: { signal?: AbortSignal }): Promise<AltSaleResult>;
    /**
     * `AP_STATUS` of a sale or a refund.
     * @throws GatewayError (AltPaymentAnswerError `too-early` when the gateway says it came before the interval).
     */
    status<K extends 'sale' | 'refund'>(
      of: K,
      request: AltStatusRequest,
      options?: { signal?: AbortSignal },
    ): Promise<AltStatusResult<K extends 'sale' ? AltSaleStatus : AltRefundStatus>>;
  };
  /**
   * Whether a request could reach the gateway now, sending nothing (a TCP connection closed at once to the gateway, and
   * to the OAuth token host when the access token must be fetched from it first: the transport's `reachable`); when not,
   * which of them did not open. Asked before stored payments are claimed for forwarding, so that a claim is not made
   * while its request could not leave.
   */
  reachable(): Promise<Reachability>;
  /** Closes the connection pool; in-flight requests finish first. */
  close(): Promise<void>;
}

export type { AltSaleRequest };

const DEFAULT_RETRY: RetryOptions = { maxAttempts: 3, initialDelayMs: 200, maxDelayMs: 5_000 };

/** Turns a non-2xx answer of a non-payment service into the hierarchy. */
function answerError(answer: Answer, label: string): GatewayError {
  const body = parseJsonBody(answer.body);
  if (answer.httpStatus === 400) {
    const details = fieldProblems(body);
    const reason = reasonCode((body as { reason?: unknown } | undefined)?.reason);
    const first = details[0];
    return new GatewayInvalidRequestError(
      first?.field ?? '(body)',
      first?.reason === 'MISSING_FIELD' ? 'MISSING_FIELD' : 'INVALID_DATA',
      `${label}: the gateway refused the request${reason !== undefined ? ` (${reason})` : ''}`,
      { details },
    );
  }
  if (answer.httpStatus === 404) {
    return new GatewayError('GW_NOT_FOUND', `${label}: not found`, { httpStatus: 404 });
  }
  const err = errorForStatus(answer.httpStatus, body, answer.clockSkew);
  // Reads and offers move no money: "outcome unknown" carries no risk there, but keep the flag truthful.
  return err;
}

/**
 * The JSON of a 2xx answer. `changes`: the request creates or changes something (a link's create or update), which the
 * 2xx says happened: an answer that cannot be read then leaves its outcome unknown.
 */
function jsonOf(answer: Answer, label: string, changes: boolean): unknown {
  const body = parseJsonBody(answer.body);
  if (body === undefined) {
    throw new GatewayError('GW_PARSE', `${label}: HTTP ${answer.httpStatus} without a JSON body`, {
      httpStatus: answer.httpStatus,
      outcomeUnknown: changes,
    });
  }
  return body;
}

/**
 * The configured authenticator, with the two header fields spec 001 requires of DCC offer calls added to the offer
 * request (`Authorization` and `keyId`, see {@link dccOfferAuthHeaders}); every other request is left as it is.
 */
function withDccOfferHeaders(auth: Authenticator): Authenticator {
  // Every request but the offer gets the authenticator's own promise: no second promise and await per request. (The
  // transport calls this inside its try, where an authenticator that throws is the same failure as one that rejects.)
  const authenticate: Authenticator['authenticate'] = (request) =>
    request.method !== 'POST' || request.path !== DCC_OFFER_PATH
      ? auth.authenticate(request)
      : auth.authenticate(request).then((headers) => Object.assign(headers, dccOfferAuthHeaders(headers)));
  // The rest as the authenticator has them: a renewal after a 401, and the connection its credentials need first
  // (an OAuth token host), which the reachability probe opens too.
  return {
    method: auth.method,
    authenticate,
    ...(auth.renewAfterUnauthorized
      ? { renewAfterUnauthorized: auth.renewAfterUnauthorized.bind(auth) }
      : {}),
    ...(auth.connectionNeeded ? { connectionNeeded: auth.connectionNeeded.bind(auth) } : {}),
  };
}

/**
 * One exchange as the transport reads it, every member present (undefined where absent): every exchange has the
 * same shape, so the transport's reads of it stay monomorphic.
 */
function exchange(
  label: string,
  method: Exchange['method'],
  path: string,
  body: Buffer | undefined,
  moneyMoving: boolean,
  signal: AbortSignal | undefined,
): Exchange {
  return {
    method,
    path,
    body,
    moneyMoving,
    contentType: undefined,
    unauthenticated: undefined,
    signal,
    label,
  };
}

/**
 * The gateway client: transport (undici keep-alive pool), the configured authenticator, the service builders and the
 * one outcome classification. The terminal's only way to move money.
 */
export function createGatewayClient(options: GatewayClientOptions): GatewayClient {
  const logger = options.logger ?? silentLogger();
  const transport = createTransport({
    baseUrl: options.baseUrl,
    auth: withDccOfferHeaders(options.auth),
    timeouts: options.timeouts,
    retry: options.retry ?? DEFAULT_RETRY,
    logger,
    now: options.now ?? (() => new Date()),
    ...(options.dispatcher !== undefined ? { dispatcher: options.dispatcher } : {}),
    ...(options.random !== undefined ? { random: options.random } : {}),
    ...(options.maxConnections !== undefined ? { maxConnections: options.maxConnections } : {}),
    ...(options.onAnswer !== undefined ? { onAnswer: options.onAnswer } : {}),
  });
  const builder = options.builder ?? {};
  const pageOrigins = hostedPageOriginsOf(options.baseUrl, options.hostedPageHosts);

  async function call(
    label: string,
    method: 'GET' | 'POST' | 'PATCH',
    path: string,
    body: Buffer | undefined,
    moneyMoving: boolean,
    signal: AbortSignal | undefined,
    changes = false,
  ): Promise<unknown> {
    const answer = await transport.send(exchange(label, method, path, body, moneyMoving, signal));
    if (answer.httpStatus !== 200 && answer.httpStatus !== 201) throw answerError(answer, label);
    return jsonOf(answer, label, changes);
  }

  return {
    prepare: (request) => preparePayment(request, builder),

    async send(prepared, sendOptions) {
      try {
        const method = prepared.method;
        const answer = await transport.send(
          exchange(
            prepared.service,
            method,
            prepared.path,
            method !== 'GET' ? prepared.body : undefined,
            prepared.moneyMoving,
            sendOptions?.signal,
          ),
        );
        const outcome = classifyPaymentAnswer(prepared, answer.httpStatus, answer.body, answer.clockSkew);
        // The line's object is built only for a logger that writes info lines.
        if (logger.isLevelEnabled('info'))
          logger.info(
            outcome.kind === 'approved' || outcome.kind === 'declined'
              ? {
                  service: prepared.service,
                  transactionId: prepared.transactionId,
                  httpStatus: answer.httpStatus,
                  outcome: outcome.kind,
                  status: outcome.status,
                }
              : {
                  service: prepared.service,
                  transactionId: prepared.transactionId,
                  httpStatus: answer.httpStatus,
                  outcome: outcome.kind,
                },
            'gateway outcome',
          );
        return outcome;
      } catch (e) {
        if (e instanceof GatewayError) {
          logger.warn(
            {
              service: prepared.service,
              transactionId: prepared.transactionId,
              code: e.code,
              outcomeUnknown: e.outcomeUnknown,
            },
            // Not processed (refused before sending, a 5xx that committed nothing) is not "unknown" to the operator.
            e.outcomeUnknown ? 'gateway outcome unknown' : 'gateway request failed, not processed',
          );
          return {
            kind: 'unknown',
            error: e,
            ...(e.httpStatus !== undefined ? { httpStatus: e.httpStatus } : {}),
          };
        }
        throw e;
      }
    },

    async dccOffer(request, o) {
      const body = buildDccOfferBody(request);
      const answer = await call('dcc-offer', 'POST', DCC_OFFER_PATH, body, false, o?.signal);
      return parseDccOfferAnswer(answer);
    },

    paymentLinks: {
      async create(link, o) {
        const body = buildPaymentLinkBody(link, false);
        // Not retried although it moves no money: a resent create answers DUPLICATE_RECORD, which would hide
        // that the first one succeeded.
        return parseCreatedPaymentLink(
          await call('payment-link-create', 'POST', '/ipl/v2/payment-links', body, true, o?.signal, true),
          link,
          pageOrigins,
        );
      },
      async update(id, link, o) {
        const body = buildPaymentLinkBody(link, true);
        return parsePaymentLinkOf(
          await call('payment-link-update', 'PATCH', linkPath(id), body, false, o?.signal, true),
          id,
          true,
          pageOrigins,
        );
      },
      async get(id, o) {
        return parsePaymentLinkOf(
          await call('payment-link-get', 'GET', linkPath(id), undefined, false, o?.signal),
          id,
          false,
          pageOrigins,
        );
      },
      async list(query = {}, o) {
        return parsePaymentLinkPage(
          await call('payment-link-list', 'GET', listPath(query), undefined, false, o?.signal),
          pageOrigins,
        );
      },
    },

    async paymentStatus(request, o) {
      if (!isGatewayId(request.id)) {
        throw new GatewayInvalidRequestError(
          'id',
          'INVALID_DATA',
          'the gateway id is not 1–64 letters, digits, _ or -',
        );
      }
      for (const [field, v] of [
        ['clientReferenceInformation.code', request.code],
        ['paymentInformation.paymentType.name', request.paymentTypeName],
        ['paymentInformation.paymentType.method.name', request.methodName],
      ] as const) {
        if (v === '') throw new GatewayInvalidRequestError(field, 'MISSING_FIELD', `${field} is required`);
      }
      const body = Buffer.from(
        JSON.stringify({
          clientReferenceInformation: { code: request.code },
          paymentInformation: {
            paymentType: { name: request.paymentTypeName, method: { name: request.methodName } },
          },
          processingInformation: { actionList: 'AP_STATUS' },
        }),
        'utf8',
      );
      const answer = await call(
        'payment-status',
        'POST',
        `/pts/v2/refresh-payment-status/${request.id}`,
        body,
        false,
        o?.signal,
      );
      const b = answer as {
        id?: unknown;
        status?: unknown;
        processorInformation?: { responseCode?: unknown };
      };
      // A status is a code, an id in the shape the terminal keeps and sends back (gateway-id.ts): an answer with
      // another is unreadable; a response code that is no code is left out.
      const status = reasonCode(b.status);
      if (status === undefined)
        throw new GatewayError('GW_PARSE', 'payment-status: answer without a status code');
      if (b.id !== undefined && (typeof b.id !== 'string' || !isGatewayId(b.id)))
        throw new GatewayError(
          'GW_PARSE',
          'payment-status: answer with an id that is not 1–64 letters, digits, _ or -',
        );
      const responseCode = reasonCode(b.processorInformation?.responseCode);
      return {
        id: b.id ?? request.id,
        status,
        ...(responseCode !== undefined ? { responseCode } : {}),
        body: answer,
      };
    },

    alternativeMethods: {
      async sale(prepared, o) {
        // moneyMoving here only tells the transport "send once": see alternativeMethods.
        const answer = await transport.send(
          exchange('ap-sale', prepared.method, prepared.path, prepared.body, true, o?.signal),
        );
        if (answer.clockSkew !== undefined)
          throw errorForStatus(answer.httpStatus, undefined, answer.clockSkew);
        return parseAltSaleAnswer(answer.httpStatus, answer.body);
      },
      async status(of, request, o) {
        const prepared = buildAltStatus(request);
        const answer = await transport.send(
          exchange('ap-status', prepared.method, prepared.path, prepared.body, true, o?.signal),
        );
        if (answer.clockSkew !== undefined)
          throw errorForStatus(answer.httpStatus, undefined, answer.clockSkew);
        return parseAltStatusAnswer(of, answer.httpStatus, answer.body);
      },
    },

    reachable: () => transport.reachable(),
    close: () => transport.close(),
  };
}
