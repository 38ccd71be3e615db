/**
 * One request to the gateway's API, from arrival to answer: authentication, the checks every request passes
 * (the offer's headers, a suspended merchant, content type, JSON depth and shape), scheduled and triggered faults,
 * dispatch through the route table (routes.ts) and the ledger's record of what was received and answered.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../log/index.js';
import { looksLikeJwt, verifyHttpSignature, verifyJwt, type AuthResult, type MerchantKey } from './auth.js';
import {
  DCC_OFFER_PATH,
  isSignatureAuthorization,
  makeOffer,
  offerHeadersProblem,
  type DccTable,
} from './dcc.js';
import type { DecodedTag } from './emv-rules.js';
import { GatewayAnswer } from './errors.js';
import { FieldReader, invalidRequest, isoSeconds, valueAt } from './fields.js';
import { sendJson } from './http-io.js';
import type { MerchantStanding } from './ledger.js';
import { isJsonContentType, jsonDepthExceeds, MAX_JSON_DEPTH, MAX_KEPT_BODY_BYTES } from './limits.js';
import { linkError, type PaymentLinkService } from './links.js';
import { maskedBodyJson } from './masking.js';
import type { OAuthService } from './oauth.js';
import type { PaymentService } from './payments.js';
import { findPersonalData } from './personal-data.js';
import { RequestRecord } from './request-record.js';
import { matchApiRoute, type ApiServices } from './routes.js';
import type { AltPaymentService } from './alt-payments.js';
import type { ApiCall, ApiOutcome } from './service-types.js';
import type { LedgerTransaction, SandboxStore } from './store.js';
import type { TimeoutRequests } from './timeout-requests.js';
import { faultBeforeCommit, type Fault, type FaultKind } from './triggers.js';

/** The ledger body of a request whose body is not JSON. */
const NOT_JSON = JSON.stringify('[not JSON]');
/** The ledger body of a request whose JSON nests deeper than {@link MAX_JSON_DEPTH}. */
const TOO_DEEP = JSON.stringify(`[JSON nested deeper than ${MAX_JSON_DEPTH} levels]`);

/** What the API needs of the running sandbox. */
export interface ApiDeps {
  store: SandboxStore;
  now(): Date;
  logger: Logger;
  merchants: MerchantKey[];
  /** JWT ids seen (replay protection), cleared by a reset. */
  seenJti: Set<string>;
  payments: PaymentService;
  altPayments: AltPaymentService;
  timeouts: TimeoutRequests;
  links: PaymentLinkService;
  oauth: OAuthService;
  dccTable: DccTable;
  /** Milliseconds the `late-response` fault holds an answer. */
  lateResponseMs: number;
  /** Timers of held answers, cleared when the sandbox closes. */
  timers: Set<NodeJS.Timeout>;
  standing(merchantId: string): MerchantStanding;
  /** The first scheduled fault matching the request, removed from the queue. */
  takeFault(method: string, path: string): Fault | undefined;
}

/** A request as received: what every step of its handling reads. */
interface Received {
  req: IncomingMessage;
  res: ServerResponse;
  method: string;
  path: string;
  /** The request target with its query, as received. */
  target: string;
  query: URLSearchParams;
  body: Buffer;
  entry: RequestRecord;
  /** The parsed JSON body; undefined when it is not JSON or nests too deep. */
  parsed: unknown;
  tooDeep: boolean;
  /** The EMV tags the services decoded, so that masking does not decode them twice. */
  decodedTags?: DecodedTag[] | undefined;
}

/** The gateway API of the sandbox. */
export class ApiRequests {
  private readonly services: ApiServices;

  constructor(private readonly deps: ApiDeps) {
    const plain = (r: { httpStatus: number; body: Record<string, unknown> }): ApiOutcome => ({
      ...r,
      created: [],
      touched: [],
    });
    this.services = {
      payments: deps.payments,
      altPayments: deps.altPayments,
      timeouts: deps.timeouts,
      offer: (call) =>
        plain(
          makeOffer(
            deps.store,
            deps.dccTable,
            new FieldReader(call.body, deps.now()),
            call.merchantId,
            deps.now(),
          ),
        ),
      createLink: (call) =>
        plain(this.checkedLinkWrite(call, () => deps.links.create(call.merchantId, call.body))),
      listLinks: (call, query) => plain(deps.links.list(call.merchantId, query)),
      getLink: (call, id) => plain(deps.links.get(call.merchantId, id)),
      updateLink: (call, id) =>
        plain(this.checkedLinkWrite(call, () => deps.links.update(call.merchantId, id, call.body))),
    };
  }

  /** Answers one API request (path without query; `target` as received). */
  handle(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    target: string,
    query: URLSearchParams,
    body: Buffer,
  ): void {
    const method = (req.method ?? 'GET').toUpperCase();
    // One reading of the sandbox clock for the checks made before a service runs (authentication, refusals).
    const now = this.deps.now();
    const auth = this.authenticate(req, target, body, now);
    const entry = new RequestRecord(now.getTime(), method, target, req.headers, auth);
    // Nesting is bounded before parsing: masking, validation and the ledger walk the body recursively.
    const tooDeep = body.length > 0 && jsonDepthExceeds(body, MAX_JSON_DEPTH);
    let parsed: unknown = {};
    if (tooDeep) parsed = undefined;
    else if (body.length > 0) {
      try {
        parsed = JSON.parse(body.toString('utf8'));
      } catch {
        parsed = undefined;
      }
    }
    const r: Received = { req, res, method, path, target, query, body, entry, parsed, tooDeep };
    const refusal = this.refusal(r, auth, now);
    if (refusal !== undefined) {
      this.answer(r, refusal.status, refusal.body);
      return;
    }
    this.serve(r, auth.merchantId ?? '');
  }

  /**
   * The answer of a request refused before any service reads it: authentication (401), the offer's headers (401),
   * a suspended merchant, a body that is not a JSON object or not `application/json`, a void without a body (400).
   */
  private refusal(
    r: Received,
    auth: AuthResult,
    now: Date,
  ): { status: number; body: Record<string, unknown> } | undefined {
    const { req, method, path, body } = r;
    if (!auth.verified) {
      this.deps.logger.warn(
        { method, path, scheme: auth.scheme, reason: auth.reason },
        'authentication failed',
      );
      const payload = auth.oauthError
        ? { response: { rmsg: { error: auth.oauthError, error_description: auth.oauthError } } }
        : { response: { rmsg: 'Authentication Failed' } };
      return { status: 401, body: payload };
    }
    // spec 001: DCC offer calls carry the `Authorization` and `keyId` header fields (src/sandbox/dcc.ts).
    const offerProblem =
      method === 'POST' && path === DCC_OFFER_PATH ? offerHeadersProblem(req.headers, auth) : undefined;
    if (offerProblem !== undefined) {
      this.deps.logger.warn({ method, path, reason: offerProblem }, 'authentication failed');
      return { status: 401, body: { response: { rmsg: 'Authentication Failed' } } };
    }
    if (this.deps.standing(auth.merchantId ?? '').suspended) {
      const payload = path.startsWith('/ipl/')
        ? linkError(now, 'ACTION_NOT_ALLOWED', 'the merchant account is suspended').body
        : invalidRequest(now, 'INVALID_MERCHANT_CONFIGURATION', 'the merchant account is suspended').body;
      return { status: 400, body: payload };
    }
    // reference/gateway.md and the specs do not say how the gateway answers a body of another content type: the
    // sandbox answers 400 INVALID_REQUEST naming the content type (README, "Limits"); parameters are accepted.
    if (
      (method === 'POST' || method === 'PATCH') &&
      body.length > 0 &&
      !isJsonContentType(req.headers['content-type'])
    ) {
      const received = req.headers['content-type'];
      const named = received === undefined ? 'none' : `"${received}"`;
      return {
        status: 400,
        body: invalidRequest(now, 'INVALID_DATA', `content-type must be application/json (received ${named})`)
          .body,
      };
    }
    if (r.tooDeep)
      return {
        status: 400,
        body: invalidRequest(now, 'INVALID_DATA', `the JSON body nests deeper than ${MAX_JSON_DEPTH} levels`)
          .body,
      };
    const parsed = r.parsed;
    if (
      parsed === undefined ||
      (body.length > 0 && (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)))
    )
      return { status: 400, body: invalidRequest(now, 'INVALID_DATA', 'the body is not a JSON object').body };
    if (method === 'POST' && path.includes('/voids') && body.length === 0)
      // gateway.md §7: a void needs a body; `{}` is accepted.
      return {
        status: 400,
        body: invalidRequest(now, 'MISSING_FIELD', 'a void needs a JSON body ({} is accepted)').body,
      };
    return undefined;
  }

  /** Runs an accepted request through its faults and its service, and answers. */
  private serve(r: Received, merchantId: string): void {
    const { res, method, path, entry } = r;
    const scheduled = this.deps.takeFault(method, path);
    if (scheduled && faultBeforeCommit(scheduled.kind)) {
      entry.fault = scheduled.kind;
      this.maskEntry(r);
      this.deliverFault(res, entry, scheduled.kind, undefined);
      return;
    }
    const call: ApiCall = { merchantId, method, path, body: (r.parsed ?? {}) as Record<string, unknown> };
    let outcome: ApiOutcome;
    try {
      outcome = this.dispatch(call, r.query);
    } catch (e) {
      r.decodedTags = call.emvTags;
      if (e instanceof GatewayAnswer) {
        this.answer(r, e.httpStatus, e.body, undefined, call.target);
        return;
      }
      throw e;
    }
    r.decodedTags = call.emvTags;
    const fault = scheduled?.kind ?? outcome.fault;
    if (fault) {
      this.maskEntry(r);
      entry.fault = fault;
      this.deliverFault(res, entry, fault, outcome);
      return;
    }
    this.answer(r, outcome.httpStatus, outcome.body, outcome, call.target);
    if (outcome.replayOf) {
      const replayed = outcome.replayOf;
      res.on('finish', () => {
        // The client now holds the answer it had lost: the outcome is known.
        if (replayed.outcomeUnknown) {
          replayed.outcomeUnknown = false;
          this.deps.store.saveTx(replayed);
        }
      });
    }
  }

  /** Routes one authenticated API call through the route table; 404 when no route matches. */
  private dispatch(call: ApiCall, query: URLSearchParams): ApiOutcome {
    const match = matchApiRoute(call.method, call.path);
    if (match) return match.route.answer(this.services, call, match.params, query);
    throw new GatewayAnswer(
      404,
      { status: 'NOT_FOUND', reason: 'NOT_FOUND', message: `no service at ${call.method} ${call.path}` },
      'NOT_FOUND',
    );
  }

  /** Files the masked body (once the services have decoded its tags) in the request's ledger record. */
  private maskEntry(r: Received): void {
    const tags = r.decodedTags;
    const hex = tags ? valueAt(r.parsed, 'pointOfSaleInformation.emv.tags') : undefined;
    const known = tags && typeof hex === 'string' ? { hex, tags } : undefined;
    r.entry.fileBody(
      r.tooDeep ? TOO_DEEP : r.parsed === undefined ? NOT_JSON : maskedBodyJson(r.parsed, known),
      known,
    );
  }

  /** Records and sends an answer. */
  private answer(
    r: Received,
    status: number,
    payload: Record<string, unknown>,
    outcome?: ApiOutcome,
    targetTx?: LedgerTransaction,
  ): void {
    this.maskEntry(r);
    const entry = r.entry;
    entry.httpStatus = status;
    entry.response = payload;
    r.res.on('finish', () => entry.markDelivered());
    this.record(entry, outcome, targetTx);
    sendJson(r.res, status, payload);
  }

  private authenticate(req: IncomingMessage, target: string, body: Buffer, now: Date): AuthResult {
    const { merchants, oauth, seenJti } = this.deps;
    const received = { method: req.method ?? 'GET', target, headers: req.headers, body };
    const authz = req.headers.authorization;
    if (authz !== undefined && !isSignatureAuthorization(authz)) {
      const m = /^Bearer\s+(\S+)$/i.exec(authz);
      if (!m?.[1])
        return { scheme: 'none', verified: false, reason: 'authorization header is not a bearer token' };
      const token = m[1];
      const check = oauth.checkBearer(token);
      if (check.ok === true) return { scheme: 'oauth', verified: true, merchantId: check.merchantId };
      if (check.ok === false)
        return { scheme: 'oauth', verified: false, reason: check.error, oauthError: check.error };
      if (looksLikeJwt(token)) return verifyJwt(received, token, merchants, now, seenJti);
      return {
        scheme: 'oauth',
        verified: false,
        reason: 'unknown bearer token',
        oauthError: 'UNAUTHORIZED_PARTNER',
      };
    }
    if (req.headers.signature !== undefined) return verifyHttpSignature(received, merchants, now);
    return { scheme: 'none', verified: false, reason: 'no signature or bearer token' };
  }

  /** Spec 000: personal data in any link field suspends the merchant immediately. */
  private checkedLinkWrite(
    call: ApiCall,
    write: () => { httpStatus: number; body: Record<string, unknown> },
  ): { httpStatus: number; body: Record<string, unknown> } {
    const found = findPersonalData(call.body);
    if (found) {
      this.deps.store.put('merchant', call.merchantId, {
        merchantId: call.merchantId,
        suspended: true,
        reason: `personal data (${found.kind}) in payment-link field ${found.field}`,
      } satisfies MerchantStanding);
      this.deps.logger.warn(
        { merchantId: call.merchantId, field: found.field },
        'merchant suspended: personal data in a payment link',
      );
      throw linkError(
        this.deps.now(),
        'ACTION_NOT_ALLOWED',
        `personal data is not allowed in payment-link fields (${found.field}); the merchant account is suspended`,
        [{ field: found.field, reason: 'INVALID_DATA' }],
      );
    }
    return write();
  }

  private record(
    req: RequestRecord,
    outcome: { created: LedgerTransaction[]; touched: LedgerTransaction[] } | undefined,
    target: LedgerTransaction | undefined,
  ): void {
    const owner = outcome?.created[0] ?? target ?? outcome?.touched[0];
    // A rejected or unmatched request keeps only the head of its body (limits.ts): abuse cannot fill the ledger.
    if (owner === undefined || req.httpStatus >= 400) req.limitBody(MAX_KEPT_BODY_BYTES);
    this.deps.store.fileRequest(owner, req);
  }

  /** Delivers an answer through a fault (triggers.ts); marks the created transactions' outcome unknown. */
  private deliverFault(
    res: ServerResponse,
    entry: RequestRecord,
    fault: FaultKind,
    outcome: ApiOutcome | undefined,
  ): void {
    const { store, logger } = this.deps;
    const now = (): Date => this.deps.now();
    const created = outcome?.created ?? [];
    entry.httpStatus = outcome?.httpStatus ?? 0;
    entry.response = outcome?.body;
    for (const tx of created) tx.outcomeUnknown = true;
    this.record(entry, outcome, undefined);
    for (const tx of created) store.saveTx(tx);
    const serverError = (reason: string): Record<string, unknown> => ({
      submitTimeUtc: isoSeconds(now()),
      status: 'SERVER_ERROR',
      reason,
      message: 'Error - General system failure.',
    });
    logger.info({ path: entry.path, fault }, 'sandbox fault injected');
    switch (fault) {
      case 'reset-before-commit':
      case 'reset-after-commit':
        res.socket?.destroy();
        return;
      case 'server-error-502':
        sendJson(res, 502, serverError('SYSTEM_ERROR'));
        return;
      case 'timeout-502':
        sendJson(res, 502, serverError('SERVER_TIMEOUT'));
        return;
      case 'status-500':
        sendJson(res, 500, { message: 'Internal Server Error' });
        return;
      case 'status-202':
        sendJson(res, 202, outcome?.body ?? {});
        return;
      case 'processor-unavailable':
        sendJson(res, 400, {
          submitTimeUtc: isoSeconds(now()),
          status: 'INVALID_REQUEST',
          reason: 'PROCESSOR_UNAVAILABLE',
          message: 'The processor is unavailable.',
        });
        return;
      case 'late-response': {
        const timer = setTimeout(() => {
          this.deps.timers.delete(timer);
          if (res.destroyed || res.socket?.destroyed) return;
          res.on('finish', () => {
            // The client waited long enough: it has the answer after all.
            entry.markDelivered();
            for (const tx of created) {
              tx.outcomeUnknown = false;
              store.saveTx(tx);
            }
          });
          sendJson(res, outcome?.httpStatus ?? 502, outcome?.body ?? serverError('SERVER_TIMEOUT'));
        }, this.deps.lateResponseMs);
        this.deps.timers.add(timer);
        return;
      }
    }
  }
}
