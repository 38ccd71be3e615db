/**
 * The sandbox gateway's HTTP(S) server: authentication, routing to the services, faults, the hosted payment page,
 * OAuth, and routing of the test-only admin endpoints under `/__sandbox/` (admin.ts). See README, section "Sandbox".
 */
import { createHmac } from 'node:crypto';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { parseDecimal, toDecimalString } from '../money/index.js';
import { maskPan } from '../emv/index.js';
import { silentLogger, type Logger } from '../log/index.js';
import { adminAnswer, tooManyFaults, type AdminHost } from './admin.js';
import { looksLikeJwt, verifyHttpSignature, verifyJwt, type AuthResult, type MerchantKey } from './auth.js';
import { cardTypeOfPan, isExpired, luhnValid } from './card.js';
import {
  checkDccAuthorization,
  DCC_OFFER_PATH,
  DEFAULT_DCC_TABLE,
  isSignatureAuthorization,
  makeOffer,
  offerHeadersProblem,
  type DccTable,
} from './dcc.js';
import { NEVER_SEND_TAGS, decodeEmvTags, type DecodedTag } from './emv-rules.js';
import { GatewayAnswer, SandboxError } from './errors.js';
import { FieldReader, invalidRequest, isoSeconds, valueAt } from './fields.js';
import {
  buildLedger,
  checkConsistency,
  type Consistency,
  type ConsistencyOptions,
  type Ledger,
  type MerchantStanding,
} from './ledger.js';
import {
  isJsonContentType,
  jsonDepthExceeds,
  MAX_BODY_BYTES,
  MAX_JSON_DEPTH,
  MAX_KEPT_BODY_BYTES,
} from './limits.js';
import { linkError, PaymentLinkService, type StoredLink } from './links.js';
import { DEFAULT_OAUTH_CLIENT, OAuthService, type OAuthClient } from './oauth.js';
import { consentPage, HOSTED_LOCALES, messagePage, paymentPage, resultPage } from './pages.js';
import { PaymentService, type ApiCall, type ApiOutcome } from './payments.js';
import { findPersonalData } from './personal-data.js';
import { RequestRecord } from './request-record.js';
import { SandboxStore, type LedgerTransaction } from './store.js';
import { selfSignedCertificate } from './tls.js';
import {
  amountTrigger,
  DECLINING_CARDS,
  FAULT_KINDS,
  faultBeforeCommit,
  type Fault,
  type FaultKind,
} from './triggers.js';

/** The public demo merchant of the gateway SDK samples (issue: sample code runs unchanged against the sandbox). */
export const DEMO_MERCHANT: MerchantKey = {
  merchantId: 'testrest',
  keyId: '08c94330-f618-42a3-b09d-e1e43be5efda',
  sharedSecret: 'yBJxy6LjM2TmcPGu+GaJrHtkke25fPpUX+UY6/L/1tE=',
};

/** Options of {@link startSandbox}. */
export interface SandboxOptions {
  /** TCP port; 0 (default) picks a free one. */
  port?: number;
  /** Interface to listen on; default 127.0.0.1. */
  host?: string;
  /** SQLite file for a durable ledger; in memory when absent. */
  dataFile?: string;
  /** Serve HTTPS with a self-signed certificate made at start (its PEM is `Sandbox.certificatePem`). */
  tls?: boolean;
  /** The clock (default: system time); `advanceClock` and `/__sandbox/clock` add to it. */
  now?: () => Date;
  /** Merchants and their keys; default the demo merchant `testrest`. */
  merchants?: MerchantKey[];
  /** Void cut-off, local time of the sandbox process "HH:MM"; default end of the local day (24:00). */
  settlementCutoff?: string;
  /** Where the signed payment-link webhook is POSTed. */
  webhookUrl?: string;
  logger?: Logger;
  /** Milliseconds the `late-response` fault holds an answer (default 35 000: past a 30 s client timeout). */
  lateResponseMs?: number;
  /** DCC BIN ranges and rates; default {@link DEFAULT_DCC_TABLE}. */
  dcc?: DccTable;
  /** OAuth partner applications; default {@link DEFAULT_OAUTH_CLIENT}. */
  oauthClients?: OAuthClient[];
  /**
   * The id an incremental authorization answers with: `increment` (default, a new id; reference/gateway.md §7) or
   * `original` (the authorization's id; §2). The two public facts conflict.
   */
  incrementalAnswerId?: 'increment' | 'original';
}

/** A running sandbox. */
export interface Sandbox {
  /** Base URL without trailing slash, e.g. `http://127.0.0.1:40123`. */
  url: string;
  /** PEM of the self-signed certificate when `tls` is on (clients pin it as their CA). */
  certificatePem?: string;
  /** Stops listening, drops open connections, closes the ledger file. */
  close(): Promise<void>;
  /** The same JSON as `GET /__sandbox/ledger`. */
  ledger(): Ledger;
  /**
   * The invariants of the ledger (see README): `ok` false lists each broken rule. With `requireResolved`, every
   * approved authorization must also be captured or reversed (`OPEN_AUTHORIZATION`).
   */
  consistency(options?: ConsistencyOptions): Consistency;
  /** Moves the sandbox clock forward by `ms` milliseconds (token, offer and code expiry; cut-offs). */
  advanceClock(ms: number): void;
  /** Queues faults; each is consumed by the next API request it matches. */
  scheduleFaults(faults: Fault[]): void;
  /** Forgets every transaction, link, offer, token, fault and suspension; the clock offset returns to 0. */
  reset(): void;
}

/**
 * A request target of non-empty segments of unreserved characters, without query: `new URL` would return it
 * unchanged as the path (no dot segments, escapes, empty segments or backslashes to normalise).
 */
const PLAIN_PATH = /^(?:\/[A-Za-z0-9_~-]+)+$/;
/** The ledger body of a request whose body is not JSON. */
const NOT_JSON = JSON.stringify('[not JSON]');
/** The ledger body of a request whose JSON nests deeper than {@link MAX_JSON_DEPTH}. */
const TOO_DEEP = JSON.stringify(`[JSON nested deeper than ${MAX_JSON_DEPTH} levels]`);

function parseCutoff(text: string | undefined): { h: number; m: number } {
  if (text === undefined) return { h: 24, m: 0 };
  const m = /^([01]\d|2[0-4]):([0-5]\d)$/.exec(text);
  if (!m || (m[1] === '24' && m[2] !== '00'))
    throw new SandboxError('SANDBOX_OPTIONS', `settlementCutoff "${text}" is not HH:MM`);
  return { h: Number(m[1]), m: Number(m[2]) };
}

/** Keys whose string value is replaced whole (track data, security codes, cryptograms, generic values). */
const REDACTED_KEYS: ReadonlySet<string> = new Set([
  'trackdata',
  'securitycode',
  'cryptogram',
  'value',
  'track1',
  'track2',
]);
const CARD_NUMBER_RUN = /(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)/g;
const PAN_TEXT = /^\d{12,19}$/;

/** The `emv.tags` text of a request with its decoded tags, when the service already decoded it. */
interface KnownEmvTags {
  hex: string;
  tags: readonly DecodedTag[];
}

/** Fewer than 13 digits cannot hold a card number: most strings are settled without running the pattern. */
function mayHoldCardNumber(text: string): boolean {
  let digits = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57 && ++digits >= 13) return true;
  }
  return false;
}

function maskString(value: string, key: string, known: KnownEmvTags | undefined): string {
  const k = key.toLowerCase();
  if (k === 'number') return PAN_TEXT.test(value) ? maskPan(value) : '[REDACTED]';
  if (k === 'tags') {
    const tags =
      known !== undefined && known.hex === value
        ? known.tags
        : ((d) => (d.ok ? d.tags : undefined))(decodeEmvTags(value));
    return tags !== undefined && !tags.some((t) => NEVER_SEND_TAGS.has(t.tag)) ? value : '[REDACTED]';
  }
  if (k === 'transactionlocaldatetime') return value;
  if (REDACTED_KEYS.has(k)) return '[REDACTED]';
  // Any Luhn-valid card-number-like run elsewhere (a link field, a comment) is masked too.
  if (!mayHoldCardNumber(value)) return value;
  return value.replace(CARD_NUMBER_RUN, (run) => {
    const digits = run.replace(/[ -]/g, '');
    return luhnValid(digits) ? maskPan(digits) : run;
  });
}

function maskValue(value: unknown, key: string, known: KnownEmvTags | undefined): unknown {
  if (typeof value === 'string') return maskString(value, key, known);
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const out: unknown[] = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = maskValue(value[i], '', known);
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(value)) {
    const v = maskValue((value as Record<string, unknown>)[k], k, known);
    // A JSON key "__proto__" is an own property of the parsed body; keep it one (no prototype change).
    if (k === '__proto__')
      Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    else out[k] = v;
  }
  return out;
}

/**
 * Masks card data in a request body before it is stored in the ledger (DESIGN.md, money safety rule 4): a copy
 * with PANs masked (first 6 + last 4), track data, security codes and cryptograms redacted, and an `emv.tags`
 * carrying a never-send tag redacted. `known` passes tags the service already decoded, so they are not decoded twice.
 */
export function maskBody(value: unknown, key = '', known?: KnownEmvTags): unknown {
  return maskValue(value, key, known);
}

/**
 * The request body, or undefined when it is larger than {@link MAX_BODY_BYTES}: refused from its `content-length`
 * before any of it is read, or as soon as a chunked body passes the limit; the rest is drained, not kept.
 */
function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > MAX_BODY_BYTES) {
    req.resume();
    return Promise.resolve(undefined);
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        resolve(undefined);
        req.removeAllListeners('data');
        req.resume();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json;charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

function sendHtml(res: ServerResponse, status: number, html: string): void {
  res.writeHead(status, {
    'content-type': 'text/html;charset=utf-8',
    'content-length': Buffer.byteLength(html),
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'",
    'x-frame-options': 'DENY',
  });
  res.end(html);
}

/** Starts the sandbox gateway. Resolves once it listens; `url` is its base URL. */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const logger = options.logger ?? silentLogger();
  const cutoff = parseCutoff(options.settlementCutoff);
  const merchants = options.merchants?.length ? options.merchants : [DEMO_MERCHANT];
  const baseNow = options.now ?? ((): Date => new Date());
  let clockOffset = 0;
  const now = (): Date => new Date(baseNow().getTime() + clockOffset);
  const lateResponseMs = options.lateResponseMs ?? 35_000;
  const dccTable = options.dcc ?? DEFAULT_DCC_TABLE;
  const store = new SandboxStore(options.dataFile);
  const seenJti = new Set<string>();
  let faults: Fault[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let url = '';

  const voidable = (createdAt: Date): boolean => {
    const limit = new Date(createdAt.getTime());
    limit.setHours(cutoff.h, cutoff.m, 0, 0);
    if (limit.getTime() <= createdAt.getTime()) limit.setDate(limit.getDate() + 1);
    return now().getTime() < limit.getTime();
  };
  const payments = new PaymentService({
    store,
    now,
    voidable,
    incrementalAnswerId: options.incrementalAnswerId ?? 'increment',
    checkDccAuthorization: (r, merchantId, at) => checkDccAuthorization(store, r, merchantId, at),
  });
  const links = new PaymentLinkService(store, now, (id) => `${url}/pay/${encodeURIComponent(id)}`);
  const oauth = new OAuthService(store, options.oauthClients ?? [DEFAULT_OAUTH_CLIENT], now);

  const standing = (merchantId: string): MerchantStanding =>
    store.get<MerchantStanding>('merchant', merchantId) ?? { merchantId, suspended: false };
  const merchantList = (): MerchantStanding[] => {
    const ids = new Set([
      ...merchants.map((m) => m.merchantId),
      ...store.values<MerchantStanding>('merchant').map((m) => m.merchantId),
    ]);
    return [...ids].map(standing);
  };

  function authenticate(req: IncomingMessage, target: string, body: Buffer): AuthResult {
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
      if (looksLikeJwt(token)) return verifyJwt(received, token, merchants, now(), seenJti);
      return {
        scheme: 'oauth',
        verified: false,
        reason: 'unknown bearer token',
        oauthError: 'UNAUTHORIZED_PARTNER',
      };
    }
    if (req.headers.signature !== undefined) return verifyHttpSignature(received, merchants, now());
    return { scheme: 'none', verified: false, reason: 'no signature or bearer token' };
  }

  function takeFault(method: string, path: string): Fault | undefined {
    const i = faults.findIndex(
      (f) =>
        (f.method === undefined || f.method === method) && (f.path === undefined || path.includes(f.path)),
    );
    if (i < 0) return undefined;
    const [f] = faults.splice(i, 1);
    return f;
  }

  /** Routes one authenticated API call. */
  function dispatch(call: ApiCall, query: URLSearchParams): ApiOutcome {
    const { method, path } = call;
    // The one route every authorization takes, before the general segment split below.
    if (method === 'POST' && path === '/pts/v2/payments') return payments.createPayment(call);
    const seg = path.split('/').filter(Boolean).map(decodeURIComponent);
    const plain = (r: { httpStatus: number; body: Record<string, unknown> }): ApiOutcome => ({
      ...r,
      created: [],
      touched: [],
    });
    if (seg[0] === 'pts' && seg[1] === 'v2') {
      const [, , coll, id, sub] = seg;
      if (seg.length === 3 && method === 'POST') {
        if (coll === 'payments') return payments.createPayment(call);
        if (coll === 'reversals') return payments.timeoutReversal(call);
        if (coll === 'voids') return payments.timeoutVoid(call);
        if (coll === 'credits') return payments.credit(call);
      }
      if (seg.length === 4 && id !== undefined && coll !== undefined) {
        if (method === 'GET') return payments.get(call, coll, id);
        if (method === 'PATCH' && coll === 'payments') return payments.increment(call, id);
        if (method === 'POST' && coll === 'refresh-payment-status') return payments.refreshStatus(call, id);
      }
      if (seg.length === 5 && method === 'POST' && id !== undefined) {
        if (coll === 'payments' && sub === 'captures') return payments.capture(call, id);
        if (coll === 'payments' && sub === 'reversals') return payments.reverse(call, id);
        if ((coll === 'payments' || coll === 'captures') && sub === 'refunds')
          return payments.refund(call, coll, id);
        if (
          (coll === 'payments' || coll === 'captures' || coll === 'refunds' || coll === 'credits') &&
          sub === 'voids'
        )
          return payments.voidOne(call, coll, id);
      }
    }
    if (path === '/vas/v1/currencyconversion' && method === 'POST')
      return plain(makeOffer(store, dccTable, new FieldReader(call.body, now()), call.merchantId, now()));
    if (seg[0] === 'ipl' && seg[1] === 'v2' && seg[2] === 'payment-links') {
      if (seg.length === 3 && method === 'POST') return plain(createLink(call));
      if (seg.length === 3 && method === 'GET') return plain(links.list(call.merchantId, query));
      if (seg.length === 4 && seg[3] !== undefined) {
        if (method === 'GET') return plain(links.get(call.merchantId, seg[3]));
        if (method === 'PATCH')
          return plain(checkedLinkWrite(call, () => links.update(call.merchantId, seg[3] ?? '', call.body)));
      }
    }
    throw new GatewayAnswer(
      404,
      { status: 'NOT_FOUND', reason: 'NOT_FOUND', message: `no service at ${method} ${path}` },
      'NOT_FOUND',
    );
  }

  /** Spec 000: personal data in any link field suspends the merchant immediately. */
  function checkedLinkWrite(
    call: ApiCall,
    write: () => { httpStatus: number; body: Record<string, unknown> },
  ): { httpStatus: number; body: Record<string, unknown> } {
    const found = findPersonalData(call.body);
    if (found) {
      store.put('merchant', call.merchantId, {
        merchantId: call.merchantId,
        suspended: true,
        reason: `personal data (${found.kind}) in payment-link field ${found.field}`,
      } satisfies MerchantStanding);
      logger.warn(
        { merchantId: call.merchantId, field: found.field },
        'merchant suspended: personal data in a payment link',
      );
      throw linkError(
        now(),
        'ACTION_NOT_ALLOWED',
        `personal data is not allowed in payment-link fields (${found.field}); the merchant account is suspended`,
        [{ field: found.field, reason: 'INVALID_DATA' }],
      );
    }
    return write();
  }

  function createLink(call: ApiCall): { httpStatus: number; body: Record<string, unknown> } {
    return checkedLinkWrite(call, () => links.create(call.merchantId, call.body));
  }

  function record(
    req: RequestRecord,
    outcome: { created: LedgerTransaction[]; touched: LedgerTransaction[] } | undefined,
    target: LedgerTransaction | undefined,
  ): void {
    const owner = outcome?.created[0] ?? target ?? outcome?.touched[0];
    // A rejected or unmatched request keeps only the head of its body (limits.ts): abuse cannot fill the ledger.
    if (owner === undefined || req.httpStatus >= 400) req.limitBody(MAX_KEPT_BODY_BYTES);
    store.fileRequest(owner, req);
  }

  function handleApi(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    target: string,
    query: URLSearchParams,
    body: Buffer,
  ): void {
    const method = (req.method ?? 'GET').toUpperCase();
    const arrived = now().getTime();
    const auth = authenticate(req, target, body);
    const entry = new RequestRecord(arrived, method, target, req.headers, auth);
    let parsed: unknown = {};
    // Nesting is bounded before parsing: masking, validation and the ledger walk the body recursively.
    const tooDeep = body.length > 0 && jsonDepthExceeds(body, MAX_JSON_DEPTH);
    if (tooDeep) parsed = undefined;
    else if (body.length > 0) {
      try {
        parsed = JSON.parse(body.toString('utf8'));
      } catch {
        parsed = undefined;
      }
    }
    // The EMV tags the services decoded; the masked copy of the body is made once they have run, so that the tags
    // are not decoded twice.
    let decodedTags: DecodedTag[] | undefined;
    const maskEntry = (): void => {
      const tags = decodedTags;
      const hex = tags ? valueAt(parsed, 'pointOfSaleInformation.emv.tags') : undefined;
      const known = tags && typeof hex === 'string' ? { hex, tags } : undefined;
      entry.fileBody(
        tooDeep ? TOO_DEEP : parsed === undefined ? NOT_JSON : JSON.stringify(maskBody(parsed, '', known)),
        known,
      );
    };
    const answer = (
      status: number,
      payload: Record<string, unknown>,
      outcome?: ApiOutcome,
      targetTx?: LedgerTransaction,
    ): void => {
      maskEntry();
      entry.httpStatus = status;
      entry.response = payload;
      res.on('finish', () => entry.markDelivered());
      record(entry, outcome, targetTx);
      sendJson(res, status, payload);
    };
    if (!auth.verified) {
      logger.warn({ method, path, scheme: auth.scheme, reason: auth.reason }, 'authentication failed');
      const payload = auth.oauthError
        ? { response: { rmsg: { error: auth.oauthError, error_description: auth.oauthError } } }
        : { response: { rmsg: 'Authentication Failed' } };
      answer(401, payload);
      return;
    }
    // spec 001: DCC offer calls carry the `Authorization` and `keyId` header fields (src/sandbox/dcc.ts).
    const offerProblem =
      method === 'POST' && path === DCC_OFFER_PATH ? offerHeadersProblem(req.headers, auth) : undefined;
    if (offerProblem !== undefined) {
      logger.warn({ method, path, reason: offerProblem }, 'authentication failed');
      answer(401, { response: { rmsg: 'Authentication Failed' } });
      return;
    }
    const merchantId = auth.merchantId ?? '';
    if (standing(merchantId).suspended) {
      const payload = path.startsWith('/ipl/')
        ? linkError(now(), 'ACTION_NOT_ALLOWED', 'the merchant account is suspended').body
        : invalidRequest(now(), 'INVALID_MERCHANT_CONFIGURATION', 'the merchant account is suspended').body;
      answer(400, payload);
      return;
    }
    // reference/gateway.md and the specs do not say how the gateway answers a body of another content type: the
    // sandbox answers 400 INVALID_REQUEST naming the content type (README, "Limits"); parameters are accepted.
    if (
      (method === 'POST' || method === 'PATCH') &&
      body.length > 0 &&
      !isJsonContentType(req.headers['content-type'])
    ) {
      const received = req.headers['content-type'];
      answer(
        400,
        invalidRequest(
          now(),
          'INVALID_DATA',
          `content-type must be application/json (received ${received === undefined ? 'none' : `"${received}"`})`,
        ).body,
      );
      return;
    }
    if (tooDeep) {
      answer(
        400,
        invalidRequest(now(), 'INVALID_DATA', `the JSON body nests deeper than ${MAX_JSON_DEPTH} levels`)
          .body,
      );
      return;
    }
    if (
      parsed === undefined ||
      (body.length > 0 && (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)))
    ) {
      answer(400, invalidRequest(now(), 'INVALID_DATA', 'the body is not a JSON object').body);
      return;
    }
    if (method === 'POST' && path.includes('/voids') && body.length === 0) {
      // gateway.md §7: a void needs a body; `{}` is accepted.
      answer(400, invalidRequest(now(), 'MISSING_FIELD', 'a void needs a JSON body ({} is accepted)').body);
      return;
    }
    const scheduled = takeFault(method, path);
    if (scheduled && faultBeforeCommit(scheduled.kind)) {
      entry.fault = scheduled.kind;
      maskEntry();
      deliverFault(res, entry, scheduled.kind, undefined);
      return;
    }
    const call: ApiCall = { merchantId, method, path, body: (parsed ?? {}) as Record<string, unknown> };
    let outcome: ApiOutcome;
    try {
      outcome = dispatch(call, query);
    } catch (e) {
      decodedTags = call.emvTags;
      if (e instanceof GatewayAnswer) {
        answer(e.httpStatus, e.body, undefined, call.target);
        return;
      }
      throw e;
    }
    decodedTags = call.emvTags;
    const fault = scheduled?.kind ?? outcome.fault;
    if (fault) {
      maskEntry();
      entry.fault = fault;
      deliverFault(res, entry, fault, outcome);
      return;
    }
    answer(outcome.httpStatus, outcome.body, outcome, call.target);
    if (outcome.replayOf) {
      const replayed = outcome.replayOf;
      res.on('finish', () => {
        // The client now holds the answer it had lost: the outcome is known.
        if (replayed.outcomeUnknown) {
          replayed.outcomeUnknown = false;
          store.saveTx(replayed);
        }
      });
    }
  }

  /** Delivers an answer through a fault (triggers.ts); marks the created transactions' outcome unknown. */
  function deliverFault(
    res: ServerResponse,
    entry: RequestRecord,
    fault: FaultKind,
    outcome: ApiOutcome | undefined,
  ): void {
    const created = outcome?.created ?? [];
    entry.httpStatus = outcome?.httpStatus ?? 0;
    entry.response = outcome?.body;
    for (const tx of created) tx.outcomeUnknown = true;
    record(entry, outcome, undefined);
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
      case 'late-response': {
        const timer = setTimeout(() => {
          timers.delete(timer);
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
        }, lateResponseMs);
        timers.add(timer);
        return;
      }
    }
  }

  /** The admin endpoints' view of this sandbox (admin.ts). */
  const adminHost: AdminHost = {
    ledger: () => sandbox.ledger(),
    consistency: (o) => sandbox.consistency(o),
    now,
    clockOffsetMs: () => clockOffset,
    advanceClock: (ms) => sandbox.advanceClock(ms),
    faults: () => faults,
    scheduleFaults: (list) => sandbox.scheduleFaults(list),
    clearFaults: () => {
      faults = [];
    },
    reset: () => sandbox.reset(),
    reinstate(merchantId) {
      store.put('merchant', merchantId, { merchantId, suspended: false } satisfies MerchantStanding);
      return standing(merchantId);
    },
  };

  function handleConsent(
    req: IncomingMessage,
    res: ServerResponse,
    query: URLSearchParams,
    body: Buffer,
  ): void {
    const params = req.method === 'POST' ? new URLSearchParams(body.toString('utf8')) : query;
    const problem = oauth.checkConsent(params);
    // Never redirect to an unregistered URL: show the problem instead.
    if (problem) return sendHtml(res, 400, messagePage('en_US', 'Authorization request not valid', problem));
    if (req.method === 'GET') {
      const client = oauth.client(params.get('client_id'));
      return sendHtml(res, 200, consentPage(client?.clientId ?? '', client?.scope ?? '', params));
    }
    if (req.method !== 'POST')
      return sendHtml(res, 405, messagePage('en_US', 'Method not allowed', 'GET or POST'));
    const decision = params.get('decision');
    params.delete('decision');
    const location = oauth.decide(params, decision === 'allow');
    res.writeHead(302, { location, 'content-length': 0 });
    res.end();
  }

  function handleToken(
    req: IncomingMessage,
    res: ServerResponse,
    query: URLSearchParams,
    body: Buffer,
  ): void {
    if (req.method !== 'POST')
      return sendJson(res, 500, { error: 'invalid_request', error_description: 'POST only' });
    const answer = oauth.exchange(
      req.headers['content-type'],
      new URLSearchParams(body.toString('utf8')),
      [...query.keys()].length > 0,
    );
    logger.info({ status: answer.httpStatus }, 'oauth token request');
    sendJson(res, answer.httpStatus, answer.body, {
      'content-type': 'application/json;charset=UTF-8',
      'cache-control': 'no-store',
      pragma: 'no-cache',
    });
  }

  /** The hosted payment page: GET shows it, POST pays with a test card, records the sale and sends the webhook. */
  function handlePayPage(
    req: IncomingMessage,
    res: ServerResponse,
    id: string,
    query: URLSearchParams,
    body: Buffer,
  ): void {
    const requested = query.get('locale') ?? 'en_US';
    const locale = HOSTED_LOCALES.includes(requested) ? requested : 'en_US';
    const link = links.find(undefined, id);
    if (!link || link.status !== 'ACTIVE' || standing(link.merchantId).suspended)
      return sendHtml(
        res,
        404,
        messagePage(locale, 'Link not available', 'This payment link is not active.'),
      );
    if (req.method === 'GET') return sendHtml(res, 200, paymentPage(link, locale));
    if (req.method !== 'POST')
      return sendHtml(res, 405, messagePage(locale, 'Method not allowed', 'GET or POST'));
    const form = new URLSearchParams(body.toString('utf8'));
    const pan = (form.get('cardNumber') ?? '').replace(/[\s-]/g, '');
    const expiry = /^(\d{2})\s*\/\s*(\d{2})$/.exec(form.get('expiry') ?? '');
    const cvv = form.get('securityCode') ?? '';
    if (!/^\d{12,19}$/.test(pan) || !luhnValid(pan) || !cardTypeOfPan(pan))
      return sendHtml(
        res,
        400,
        paymentPage(link, locale, 'The card number is not valid (Visa or Mastercard test cards).'),
      );
    if (!expiry?.[1] || !expiry[2] || Number(expiry[1]) < 1 || Number(expiry[1]) > 12)
      return sendHtml(res, 400, paymentPage(link, locale, 'The expiry must be MM/YY.'));
    if (!/^\d{3,4}$/.test(cvv))
      return sendHtml(res, 400, paymentPage(link, locale, 'The security code must be 3 or 4 digits.'));
    let amount = link.totalMinor ?? 0;
    if (link.linkType === 'DONATION') {
      try {
        amount = parseDecimal(form.get('amount') ?? '', link.currency);
      } catch {
        return sendHtml(res, 400, paymentPage(link, locale, 'The amount is not valid.'));
      }
      if (
        amount < (link.minMinor ?? 0) ||
        (link.maxMinor !== undefined && amount > link.maxMinor) ||
        amount === 0
      )
        return sendHtml(res, 400, paymentPage(link, locale, 'The amount is outside the allowed range.'));
    }
    const at = now();
    let decline = DECLINING_CARDS[pan];
    if (!decline && isExpired(`${expiry[2]}${expiry[1]}`, at)) decline = 'EXPIRED_CARD';
    const trigger = amountTrigger(amount, { canDecline: true, canBePartial: false });
    if (!decline && trigger.kind === 'decline') decline = trigger.reason;
    const masked = maskPan(pan);
    const created = payments.linkPayment(
      link.merchantId,
      link.id,
      amount,
      link.currency,
      masked,
      cardTypeOfPan(pan) ?? '',
      decline,
    );
    link.payments.push(created.id);
    links.save(link);
    const money = `${toDecimalString(amount, link.currency)} ${link.currency}`;
    sendHtml(res, 200, resultPage(locale, decline === undefined, masked, money, decline));
    sendWebhook(link, created);
  }

  function sendWebhook(link: StoredLink, tx: LedgerTransaction): void {
    if (!options.webhookUrl) return;
    const key = merchants.find((m) => m.merchantId === link.merchantId);
    const payload = JSON.stringify({
      eventType: 'payByLink.payment',
      eventDate: isoSeconds(now()),
      merchantId: link.merchantId,
      payload: {
        paymentLinkId: link.id,
        purchaseNumber: link.id,
        paymentId: tx.id,
        status: tx.status,
        amount: toDecimalString(tx.amounts.requested, tx.currency),
        currency: tx.currency,
        card: { maskedNumber: tx.card?.masked, type: tx.card?.type },
      },
    });
    const t = String(Math.floor(now().getTime() / 1000));
    // Signature: HMAC-SHA256 keyed with the merchant's base64-decoded shared secret over "<t>.<body>" (README).
    const sig = createHmac('sha256', Buffer.from(key?.sharedSecret ?? '', 'base64'))
      .update(`${t}.${payload}`)
      .digest('base64');
    fetch(options.webhookUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'v-c-merchant-id': link.merchantId,
        'v-c-signature': `t=${t},sig=${sig}`,
      },
      body: payload,
    }).then(
      (r) => logger.info({ status: r.status, link: link.id }, 'payment-link webhook delivered'),
      (e: unknown) =>
        logger.warn(
          { err: e instanceof Error ? e.message : String(e), link: link.id },
          'payment-link webhook failed',
        ),
    );
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    if (body === undefined)
      return sendJson(res, 413, {
        status: 'INVALID_REQUEST',
        reason: 'INVALID_DATA',
        message: 'body too large',
      });
    const target = req.url ?? '/';
    let path: string;
    let query: URLSearchParams;
    if (PLAIN_PATH.test(target)) {
      // Nothing for the URL parser to normalise: the path is the target as received.
      path = target;
      query = new URLSearchParams();
    } else {
      let parsedUrl: URL;
      try {
        parsedUrl = new URL(target, 'http://sandbox.invalid');
      } catch {
        return sendJson(res, 400, {
          status: 'INVALID_REQUEST',
          reason: 'INVALID_DATA',
          message: 'bad request target',
        });
      }
      path = parsedUrl.pathname;
      query = parsedUrl.searchParams;
    }
    if (path.startsWith('/__sandbox/')) {
      const a = adminAnswer(adminHost, req.method ?? 'GET', path, query, body);
      return sendJson(res, a.status, a.body);
    }
    if (path === '/ebc2/oauth/authorize') return handleConsent(req, res, query, body);
    if (path === '/oauth2/v3/token' || path === '/oauth/v3/token') return handleToken(req, res, query, body);
    const pay = /^\/pay\/([^/]+)$/.exec(path);
    if (pay?.[1]) return handlePayPage(req, res, decodeURIComponent(pay[1]), query, body);
    return handleApi(req, res, path, target, query, body);
  }

  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    handle(req, res).catch((e: unknown) => {
      logger.error(
        { err: e instanceof Error ? e.message : String(e), path: req.url },
        'sandbox request failed',
      );
      if (!res.headersSent)
        sendJson(res, 500, {
          status: 'SERVER_ERROR',
          reason: 'SYSTEM_ERROR',
          message: 'sandbox internal error',
        });
      else res.destroy();
    });
  };

  let certificatePem: string | undefined;
  let server: Server;
  if (options.tls) {
    const cert = await selfSignedCertificate(options.host ?? '127.0.0.1');
    certificatePem = cert.certPem;
    server = createHttpsServer({ key: cert.keyPem, cert: cert.certPem }, listener);
  } else {
    server = createHttpServer(listener);
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e) =>
      reject(new SandboxError('SANDBOX_LISTEN', `cannot listen: ${e.message}`, { cause: e })),
    );
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  }).catch((e: unknown) => {
    store.close();
    throw e;
  });
  const address = server.address() as AddressInfo;
  const hostText = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  url = `${options.tls ? 'https' : 'http'}://${hostText}:${address.port}`;
  logger.info({ url }, 'sandbox gateway listening');

  const sandbox: Sandbox = {
    url,
    ...(certificatePem !== undefined ? { certificatePem } : {}),
    async close() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      store.close();
    },
    ledger: () => buildLedger(store, merchantList(), now()),
    consistency: (opts) => checkConsistency(store, opts),
    advanceClock(ms) {
      if (!Number.isFinite(ms) || ms < 0)
        throw new SandboxError('SANDBOX_OPTIONS', 'advanceClock takes a non-negative number of milliseconds');
      clockOffset += ms;
    },
    scheduleFaults(list) {
      for (const f of list)
        if (!FAULT_KINDS.includes(f.kind))
          throw new SandboxError('SANDBOX_OPTIONS', `unknown fault kind ${String(f.kind)}`);
      const tooMany = tooManyFaults(faults.length, list.length);
      if (tooMany !== undefined) throw new SandboxError('SANDBOX_OPTIONS', tooMany);
      faults.push(...list);
    },
    reset() {
      store.clear();
      faults = [];
      clockOffset = 0;
      seenJti.clear();
    },
  };
  return sandbox;
}
