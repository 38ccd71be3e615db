/**
 * The sandbox gateway's HTTP(S) server: options, state, listening, and the dispatch of each request through the
 * route table (routes.ts) to the API (api-requests.ts), the hosted pages (hosted-pages.ts) or the test-only admin
 * endpoints under `/__sandbox/` (admin.ts). See README, section "Sandbox".
 */
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { silentLogger, type Logger } from '../log/index.js';
import { adminAnswer, type AdminHost } from './admin.js';
import { AltPaymentService } from './alt-payments.js';
import { ApiRequests } from './api-requests.js';
import type { MerchantKey } from './auth.js';
import { SandboxClock } from './clock.js';
import { checkDccAuthorization, DEFAULT_DCC_TABLE, type DccTable } from './dcc.js';
import { SandboxError } from './errors.js';
import { FaultQueue } from './fault-queue.js';
import { HostedPages } from './hosted-pages.js';
import { readBody, sendJson } from './http-io.js';
import {
  buildLedger,
  checkConsistency,
  type Consistency,
  type ConsistencyOptions,
  type Ledger,
  type MerchantStanding,
} from './ledger.js';
import { PaymentLinkService } from './links.js';
import { DEFAULT_OAUTH_CLIENT, OAuthService, type OAuthClient } from './oauth.js';
import { PaymentService } from './payments.js';
import type { ServiceContext } from './service-types.js';
import { matchHostRoute } from './routes.js';
import { SandboxStore } from './store.js';
import { TimeoutRequests } from './timeout-requests.js';
import { selfSignedCertificate } from './tls.js';
import type { Fault } from './triggers.js';

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
function parseCutoff(text: string | undefined): { h: number; m: number } {
  if (text === undefined) return { h: 24, m: 0 };
  const m = /^([01]\d|2[0-4]):([0-5]\d)$/.exec(text);
  if (!m || (m[1] === '24' && m[2] !== '00'))
    throw new SandboxError('SANDBOX_OPTIONS', `settlementCutoff "${text}" is not HH:MM`);
  return { h: Number(m[1]), m: Number(m[2]) };
}

/** Whether a transaction created at a time may still be voided: before the next settlement cut-off after it. */
function voidableUntil(cutoff: { h: number; m: number }, now: () => Date): (createdAt: Date) => boolean {
  return (createdAt) => {
    const limit = new Date(createdAt.getTime());
    limit.setHours(cutoff.h, cutoff.m, 0, 0);
    if (limit.getTime() <= createdAt.getTime()) limit.setDate(limit.getDate() + 1);
    return now().getTime() < limit.getTime();
  };
}

/** A merchant's standing (suspended after personal data in a payment link; spec 000). */
function standingOf(store: SandboxStore, merchantId: string): MerchantStanding {
  return store.get<MerchantStanding>('merchant', merchantId) ?? { merchantId, suspended: false };
}

/** Every merchant the ledger shows: the configured ones and any with a recorded standing. */
function merchantList(store: SandboxStore, merchants: readonly MerchantKey[]): MerchantStanding[] {
  const ids = new Set([
    ...merchants.map((m) => m.merchantId),
    ...store.values<MerchantStanding>('merchant').map((m) => m.merchantId),
  ]);
  return [...ids].map((id) => standingOf(store, id));
}

/** The path and query of a request target; undefined when it is not a valid target. */
function splitTarget(target: string): { path: string; query: URLSearchParams } | undefined {
  // Nothing for the URL parser to normalise: the path is the target as received.
  if (PLAIN_PATH.test(target)) return { path: target, query: new URLSearchParams() };
  let parsedUrl: URL;
  try {
    parsedUrl = new URL(target, 'http://sandbox.invalid');
  } catch {
    return undefined;
  }
  return { path: parsedUrl.pathname, query: parsedUrl.searchParams };
}

/** A request listener that answers 500 (or drops the connection) when handling a request fails. */
function guarded(
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  logger: Logger,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
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
}

/** Creates the HTTP(S) server and listens; resolves with its base URL (and certificate, with TLS). */
async function listen(
  options: SandboxOptions,
  listener: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ server: Server; url: string; certificatePem?: string }> {
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
  });
  const address = server.address() as AddressInfo;
  const hostText = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `${options.tls ? 'https' : 'http'}://${hostText}:${address.port}`;
  return { server, url, ...(certificatePem !== undefined ? { certificatePem } : {}) };
}

/** Starts the sandbox gateway. Resolves once it listens; `url` is its base URL. */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const logger = options.logger ?? silentLogger();
  const cutoff = parseCutoff(options.settlementCutoff);
  const merchants = options.merchants?.length ? options.merchants : [DEMO_MERCHANT];
  const clock = new SandboxClock(options.now ?? ((): Date => new Date()));
  const now = clock.now;
  const lateResponseMs = options.lateResponseMs ?? 35_000;
  const dccTable = options.dcc ?? DEFAULT_DCC_TABLE;
  const store = new SandboxStore(options.dataFile);
  const seenJti = new Set<string>();
  const faults = new FaultQueue();
  const timers = new Set<NodeJS.Timeout>();
  let url = '';

  const serviceContext: ServiceContext = {
    store,
    now,
    voidable: voidableUntil(cutoff, now),
    incrementalAnswerId: options.incrementalAnswerId ?? 'increment',
    checkDccAuthorization: (r, merchantId, at) => checkDccAuthorization(store, r, merchantId, at),
  };
  const payments = new PaymentService(serviceContext);
  const altPayments = new AltPaymentService(serviceContext, (id) => `${url}/ap/${encodeURIComponent(id)}`);
  const timeouts = new TimeoutRequests(serviceContext);
  const links = new PaymentLinkService(store, now, (id) => `${url}/pay/${encodeURIComponent(id)}`);
  const oauth = new OAuthService(store, options.oauthClients ?? [DEFAULT_OAUTH_CLIENT], now);

  const standing = (merchantId: string): MerchantStanding => standingOf(store, merchantId);

  const api = new ApiRequests({
    store,
    now,
    logger,
    merchants,
    seenJti,
    payments,
    altPayments,
    timeouts,
    links,
    oauth,
    dccTable,
    lateResponseMs,
    timers,
    standing,
    takeFault: (method, path) => faults.take(method, path),
  });
  const pages = new HostedPages({
    oauth,
    links,
    payments,
    merchants,
    standing,
    now,
    webhookUrl: options.webhookUrl,
    logger,
  });

  /** The admin endpoints' view of this sandbox (admin.ts). */
  const adminHost: AdminHost = {
    ledger: () => sandbox.ledger(),
    consistency: (o) => sandbox.consistency(o),
    now,
    clockOffsetMs: () => clock.offsetMs(),
    advanceClock: (ms) => sandbox.advanceClock(ms),
    faults: () => faults.list(),
    scheduleFaults: (list) => sandbox.scheduleFaults(list),
    clearFaults: () => faults.clear(),
    reset: () => sandbox.reset(),
    reinstate(merchantId) {
      store.put('merchant', merchantId, { merchantId, suspended: false } satisfies MerchantStanding);
      return standing(merchantId);
    },
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    if (body === undefined)
      return sendJson(res, 413, {
        status: 'INVALID_REQUEST',
        reason: 'INVALID_DATA',
        message: 'body too large',
      });
    const target = req.url ?? '/';
    const split = splitTarget(target);
    if (split === undefined)
      return sendJson(res, 400, {
        status: 'INVALID_REQUEST',
        reason: 'INVALID_DATA',
        message: 'bad request target',
      });
    const { path, query } = split;
    const host = matchHostRoute(path);
    if (host === undefined) return api.handle(req, res, path, target, query, body);
    switch (host.page) {
      case 'admin': {
        const a = adminAnswer(adminHost, req.method ?? 'GET', path, query, body);
        return sendJson(res, a.status, a.body);
      }
      case 'oauth-consent':
        return pages.consent(req, res, query, body);
      case 'oauth-token':
        return pages.token(req, res, query, body);
      case 'payment-page':
        return pages.payPage(req, res, host.params.linkId ?? '', query, body);
      case 'alt-payment-page':
        return altPayments.page(req, res, host.params.saleId ?? '', body);
    }
  }

  const listening = await listen(options, guarded(handle, logger)).catch((e: unknown) => {
    store.close();
    throw e;
  });
  const { server, certificatePem } = listening;
  url = listening.url;
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
    ledger: () => buildLedger(store, merchantList(store, merchants), now()),
    consistency: (opts) => checkConsistency(store, opts),
    advanceClock: (ms) => clock.advance(ms),
    scheduleFaults: (list) => faults.schedule(list),
    reset() {
      store.clear();
      faults.clear();
      clock.reset();
      seenJti.clear();
    },
  };
  return sandbox;
}
