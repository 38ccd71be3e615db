import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Dispatcher } from 'undici';
import { gatewayUrlProblem } from '../config/index.js';
import type { Logger } from '../log/index.js';
import type { Authenticator } from './auth/authenticator.js';
import { authClockSkew } from './clock-skew.js';
import { ConnectionPool, type ExchangeDispatcher } from './connection-pool.js';
import {
  connectTargetOf,
  probeAll,
  sameEndpoint,
  type ConnectTarget,
  type Reachability,
} from './connect-probe.js';
import { GatewayConnectionError, GatewayError, GatewayTimeoutError, type AuthClockSkew } from './errors.js';
import { parseJsonBody } from './outcome.js';
import { backoffDelayMs, shouldRetry, type AttemptFailure } from './retry.js';

/** Timeouts of one request, milliseconds (configuration `gateway.timeouts`). */
export interface Timeouts {
  /** Establishing the TCP/TLS connection; nothing has been sent when it expires. */
  connectMs: number;
  /** From sending to the response headers. */
  headersMs: number;
  /** From the headers to the end of the body. */
  bodyMs: number;
}

/** Retry budget for requests that cannot move money twice (configuration `gateway.retry`). */
export interface RetryOptions {
  maxAttempts: number;
  initialDelayMs: number;
  maxDelayMs: number;
}

/** One HTTP exchange as the services see it. */
export interface Exchange {
  method: 'GET' | 'POST' | 'PATCH';
  /** Path with query string. */
  path: string;
  /** Exact body bytes; undefined for GET. */
  body?: Buffer;
  /** Whether a duplicate could move money twice: then never retried, whatever the failure. */
  moneyMoving: boolean;
  /** Content type of the body (default JSON; the token endpoint is form-encoded). */
  contentType?: string;
  /** Replaces the authenticator (the OAuth token endpoint is unsigned). */
  unauthenticated?: boolean;
  /** Aborts the exchange (and any wait before a retry). */
  signal?: AbortSignal;
  /** Label for logs. */
  label: string;
}

/** The raw answer: status, headers and the complete body bytes. */
export interface Answer {
  httpStatus: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /**
   * Set on a 401 only: this terminal's clock, measured against that answer's `Date`, is further from the gateway's
   * than the authentication method's credentials allow (src/gateway/clock-skew.ts) — the likely cause of the refusal.
   */
  clockSkew?: AuthClockSkew;
}

/** Largest answer body read (the gateway's answers are a few kilobytes): a larger one is refused, not buffered. */
export const MAX_ANSWER_BYTES = 1024 * 1024;

/** Failures of connecting: no request is written before the connection (and its TLS handshake) is up. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'CERT_HAS_EXPIRED',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/**
 * Failures of connecting that an established socket reports too (Linux hands a soft ICMP error of the route to the
 * next read or write): "never connected" only while the request had no socket.
 */
const UNREACHABLE_CODES = new Set(['EHOSTUNREACH', 'ENETUNREACH']);

/**
 * undici's refusal of a request it was handed (a header value no HTTP header may carry, e.g. one with CR or LF): raised
 * while it builds the request, before any socket is given it, so that nothing was written. Not sent only then.
 */
const REFUSED_BEFORE_WRITING = 'UND_ERR_INVALID_ARG';

function errorCode(e: unknown): string | undefined {
  let cur: unknown = e;
  for (let i = 0; i < 4 && cur !== null && typeof cur === 'object'; i++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    cur = (cur as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * Maps a transport failure to the hierarchy, deciding whether the request may have reached the gateway. `onSocket`:
 * the request was handed to a connected socket (undici starts it just before writing it), after which an unreachable
 * host or network says nothing of whether the request was processed. Once an answer has begun (`phase` body), no
 * failure is "not sent".
 */
export function transportError(
  e: unknown,
  phase: 'headers' | 'body',
  label: string,
  onSocket = false,
): GatewayError {
  if (e instanceof GatewayError) return e;
  const code = errorCode(e);
  if (code === 'UND_ERR_CONNECT_TIMEOUT') {
    return new GatewayTimeoutError('connect', `${label}: connect timeout`, { cause: e });
  }
  if (code === 'UND_ERR_HEADERS_TIMEOUT') {
    return new GatewayTimeoutError('headers', `${label}: no response headers in time`, { cause: e });
  }
  if (code === 'UND_ERR_BODY_TIMEOUT') {
    return new GatewayTimeoutError('body', `${label}: response body not complete in time`, { cause: e });
  }
  if (code === REFUSED_BEFORE_WRITING && phase === 'headers' && !onSocket) {
    return new GatewayConnectionError(`${label}: the request was refused before sending (${code})`, {
      cause: e,
    });
  }
  if (
    code !== undefined &&
    phase === 'headers' &&
    (NOT_SENT_CODES.has(code) || (UNREACHABLE_CODES.has(code) && !onSocket))
  ) {
    // The connection was never established: not a byte of the request left the terminal.
    return new GatewayConnectionError(`${label}: cannot connect (${code})`, { cause: e });
  }
  // A reset, a closed socket or anything else once connected: the request may have been written and processed.
  return new GatewayConnectionError(
    `${label}: connection failed${code ? ` (${code})` : ''} during ${phase}`,
    {
      outcomeUnknown: true,
      cause: e,
    },
  );
}

const EMPTY = Buffer.alloc(0);

/**
 * When the transport has neither sent nor been answered for longer than this (ms), the event loop may not have read
 * what its idle connections received meanwhile: above all a gateway's close of a connection it kept idle, which arrived
 * while a long synchronous step (a slow disk sync) held the loop. A request then first lets the loop turn twice — a
 * poll of the connections, their close handlers, and the pool's keep-alive timers — so that it goes out on a
 * connection still open, not on one the gateway dropped: there it would meet a reset, and a payment's outcome would be
 * unknown (a timeout reversal, and a sale lost). Requests that follow each other closely pay nothing.
 */
const QUIET_MS = 50;

/** Two turns of the event loop: the second runs after a poll of every connection. */
function twoTurns(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}

const ACCEPT = 'application/hal+json;charset=utf-8, application/json';
const JSON_CONTENT_TYPE = 'application/json;charset=utf-8';

/**
 * Receives one answer straight from the dispatcher (no stream, no abort signal per request: the exchange is the
 * hot path of every payment) and enforces our own deadlines on top of the pool's, so that they also hold with
 * injected dispatchers. Settles exactly once; anything undici reports after that is ignored.
 */
class AnswerCollector implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  private abortReason: GatewayError | undefined;
  private settled = false;
  private phase: 'headers' | 'body' = 'headers';
  private httpStatus = 0;
  private headers: Record<string, string | string[] | undefined> = {};
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private timer: NodeJS.Timeout;
  private readonly onCallerAbort: (() => void) | undefined;

  constructor(
    private readonly label: string,
    private readonly timeouts: Timeouts,
    private readonly resolve: (answer: Answer) => void,
    private readonly reject: (error: GatewayError) => void,
    private readonly signal: AbortSignal | undefined,
  ) {
    this.timer = setTimeout(() => this.expire(), timeouts.headersMs);
    if (signal !== undefined) {
      // The caller gave up: once a request may have left, its outcome is unknown.
      this.onCallerAbort = () =>
        this.fail(new GatewayError('GW_CANCELLED', `${label}: cancelled`, { outcomeUnknown: true }));
      signal.addEventListener('abort', this.onCallerAbort, { once: true });
    }
  }

  /** The deadline of the current phase passed. */
  private expire(): void {
    this.fail(
      this.phase === 'headers'
        ? new GatewayTimeoutError('headers', `${this.label}: no answer in time`)
        : new GatewayTimeoutError('body', `${this.label}: answer body not complete in time`),
    );
  }

  /** Settles with `error` now and stops the exchange (now, or as soon as undici hands over its controller). */
  private fail(error: GatewayError): void {
    if (this.settled) return;
    this.abortReason = error;
    this.controller?.abort(error);
    this.finish();
    this.reject(error);
  }

  private finish(): void {
    this.settled = true;
    clearTimeout(this.timer);
    if (this.onCallerAbort !== undefined) this.signal?.removeEventListener('abort', this.onCallerAbort);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.abortReason !== undefined) controller.abort(this.abortReason);
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    if (this.settled || statusCode < 200) return; // 1xx informational answers precede the real one
    this.httpStatus = statusCode;
    this.headers = headers;
    this.phase = 'body';
    // The body's deadline runs from now: the same timer re-armed when both deadlines are equal.
    if (this.timeouts.bodyMs === this.timeouts.headersMs) this.timer.refresh();
    else {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.expire(), this.timeouts.bodyMs);
    }
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    this.size += chunk.length;
    if (this.size > MAX_ANSWER_BYTES) {
      this.fail(
        new GatewayError('GW_PARSE', `${this.label}: answer larger than ${MAX_ANSWER_BYTES} bytes`, {
          outcomeUnknown: true,
          httpStatus: this.httpStatus,
        }),
      );
      return;
    }
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.settled) return;
    this.finish();
    const body = this.chunks.length === 1 ? (this.chunks[0] ?? EMPTY) : Buffer.concat(this.chunks, this.size);
    this.resolve({ httpStatus: this.httpStatus, headers: this.headers, body });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    if (this.settled) return;
    this.finish();
    this.reject(transportError(error, this.phase, this.label, this.controller !== undefined));
  }
}

/** Options of {@link createTransport}. */
export interface TransportOptions {
  baseUrl: string;
  auth: Authenticator;
  timeouts: Timeouts;
  retry: RetryOptions;
  logger: Logger;
  now: () => Date;
  /** Replaces the keep-alive pool (tests: undici MockAgent). Not closed by {@link Transport.close}. */
  dispatcher?: ExchangeDispatcher;
  /** Random source for backoff jitter (tests). */
  random?: () => number;
  /** Most keep-alive connections to the gateway at once; sockets open on demand (default 16). */
  maxConnections?: number;
  /**
   * Told of every answer's `Date` header with when the request went out and the answer came (epoch ms): the host's
   * clock skew against the gateway (the fleet heartbeat reports it).
   */
  onAnswer?: (answer: { date: string | undefined; sentAtMs: number; receivedAtMs: number }) => void;
}

export interface Transport {
  /** The bare host sent in `host` and signed. */
  readonly host: string;
  /**
   * Sends the exchange, retrying only what {@link shouldRetry} allows, and returns the last answer. Never resolves
   * with a 401 that a renewed OAuth token could fix: that one retry is made here.
   * @throws GatewayError when no answer arrived (timeout, connection, cancellation, authenticator failure).
   */
  send(exchange: Exchange): Promise<Answer>;
  /**
   * Whether a request could reach the gateway now: a TCP connection to its host and port, closed at once without a
   * byte written, within the connect timeout (the host name resolved as a request's would be) — and, at the same
   * time, one to the host the request's credentials must first be fetched from when it is another
   * ({@link Authenticator.connectionNeeded}: an OAuth token host while the access token must be renewed), since the
   * request would wait on that connection before its first byte. Nothing is sent, so nothing can be processed.
   * Unreachable names the endpoint that did not open (`gateway 127.0.0.1:8443`, `OAuth token host …`). The gateway
   * is taken as reachable without trying when the transport does not own its connections (a dispatcher given by the
   * caller: tests).
   */
  reachable(): Promise<Reachability>;
  close(): Promise<void>;
}

/** The HTTP transport: one keep-alive connection pool per gateway origin (connection-pool.ts), timeouts from configuration. */
export function createTransport(options: TransportOptions): Transport {
  const url = new URL(options.baseUrl);
  // A dispatcher given (tests: undici's MockAgent) connects nowhere by this URL.
  const problem = options.dispatcher === undefined ? gatewayUrlProblem(options.baseUrl) : undefined;
  if (problem !== undefined) throw new GatewayError('GW_CONFIG', `gateway.baseUrl: ${problem}`);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new GatewayError('GW_CONFIG', `gateway.baseUrl: ${url.protocol} is not http or https`);
  }
  const origin = url.origin;
  const prefix = url.pathname.replace(/\/+$/, '');
  const host = url.host; // URL.host omits the default port, as the signature requires (reference §1).
  const own = options.dispatcher === undefined;
  const dispatcher: ExchangeDispatcher =
    options.dispatcher ??
    new ConnectionPool(origin, {
      connectTimeoutMs: options.timeouts.connectMs,
      keepAliveMs: 30_000,
      connections: options.maxConnections ?? 16,
    });
  const random = options.random ?? Math.random;
  /** When a request was last sent or answered (performance.now()): see {@link QUIET_MS}. */
  let lastActivity = -Infinity;
  /** The turns of the event loop requests wait for after a quiet time, shared by the requests that come together. */
  let turns: Promise<void> | undefined;

  /** Resolves once the connections' news is read, at once when the transport was busy a moment ago. */
  function connectionsRead(): Promise<void> | undefined {
    if (performance.now() - lastActivity <= QUIET_MS) return undefined;
    turns ??= twoTurns().then(() => {
      turns = undefined;
      lastActivity = performance.now();
    });
    return turns;
  }

  function once(x: Exchange, path: string, authHeaders: Record<string, string>): Promise<Answer> {
    if (x.signal?.aborted) {
      return Promise.reject(new GatewayError('GW_CANCELLED', `${x.label}: cancelled before sending`));
    }
    const headers: Record<string, string> = authHeaders;
    headers.accept = ACCEPT;
    headers['v-c-client-correlation-id'] = randomUUID();
    if (x.body !== undefined) headers['content-type'] = x.contentType ?? JSON_CONTENT_TYPE;
    return new Promise<Answer>((resolve, reject) => {
      const exchange = new AnswerCollector(x.label, options.timeouts, resolve, reject, x.signal);
      // Two plain literals rather than a conditional spread: undici reads these options on every request.
      dispatcher.dispatch(
        x.body !== undefined
          ? {
              origin,
              path,
              method: x.method,
              headers,
              body: x.body,
              headersTimeout: options.timeouts.headersMs,
              bodyTimeout: options.timeouts.bodyMs,
            }
          : {
              origin,
              path,
              method: x.method,
              headers,
              headersTimeout: options.timeouts.headersMs,
              bodyTimeout: options.timeouts.bodyMs,
            },
        exchange,
      );
    });
  }

  /** The credentials of one attempt; the clock is read once and the same date is signed and sent (§1). */
  function credentials(x: Exchange, path: string): Promise<Record<string, string>> {
    if (x.unauthenticated) return Promise.resolve({});
    return options.auth.authenticate({
      method: x.method,
      host,
      path,
      body: x.body ?? EMPTY,
      now: options.now(),
    });
  }

  async function send(x: Exchange): Promise<Answer> {
    let renewed = false;
    // The path as signed and as sent: one string for both.
    const path = `${prefix}${x.path}`;
    for (let attempt = 1; ; attempt++) {
      const started = Date.now();
      let failure: AttemptFailure;
      let answer: Answer | undefined;
      let error: GatewayError | undefined;
      try {
        const authHeaders = await credentials(x, path);
        const read = connectionsRead();
        if (read !== undefined) await read;
        lastActivity = performance.now();
        answer = await once(x, path, authHeaders);
        lastActivity = performance.now();
        const date = answer.headers.date;
        options.onAnswer?.({
          date: typeof date === 'string' ? date : undefined,
          sentAtMs: started,
          receivedAtMs: Date.now(),
        });
        // The line's object is built only for a logger that writes debug lines: not on every payment otherwise.
        if (options.logger.isLevelEnabled('debug')) {
          options.logger.debug(
            {
              label: x.label,
              method: x.method,
              path: x.path,
              httpStatus: answer.httpStatus,
              ms: Date.now() - started,
              attempt,
            },
            'gateway answer',
          );
        }
        if (
          answer.httpStatus === 401 &&
          !renewed &&
          options.auth.renewAfterUnauthorized &&
          !x.unauthenticated
        ) {
          // spec 000: an expired access token answers 401 ACCESS_TOKEN_EXPIRED; one refresh, one retry. A 401 was
          // not processed, so resending is safe even for money-moving requests.
          renewed = true;
          if (await options.auth.renewAfterUnauthorized(parseJsonBody(answer.body), authHeaders)) {
            attempt--;
            continue;
          }
        }
        if (answer.httpStatus === 401 && !x.unauthenticated) {
          // Off the hot path: only a refusal of the credentials asks whether this terminal's clock explains it.
          const skew = authClockSkew(options.auth.method, {
            date: typeof date === 'string' ? date : undefined,
            sentAtMs: started,
            receivedAtMs: Date.now(),
          });
          if (skew !== undefined) answer.clockSkew = skew;
        }
        if (answer.httpStatus < 500 && answer.httpStatus !== 408 && answer.httpStatus !== 429) return answer;
        failure = { kind: 'status', httpStatus: answer.httpStatus };
      } catch (e) {
        lastActivity = performance.now();
        error = e instanceof GatewayError ? e : transportError(e, 'headers', x.label);
        options.logger.warn(
          {
            label: x.label,
            method: x.method,
            path: x.path,
            code: error.code,
            outcomeUnknown: error.outcomeUnknown,
            attempt,
          },
          'gateway exchange failed',
        );
        failure = { kind: 'error', code: error.code, outcomeUnknown: error.outcomeUnknown };
      }
      if (
        !shouldRetry({ moneyMoving: x.moneyMoving, attempt, maxAttempts: options.retry.maxAttempts, failure })
      ) {
        if (answer !== undefined) return answer;
        throw error ?? new GatewayError('GW_CONNECTION', `${x.label}: failed`, { outcomeUnknown: true });
      }
      try {
        await sleep(backoffDelayMs(attempt, options.retry, random()), undefined, { signal: x.signal });
      } catch (e) {
        throw new GatewayError('GW_CANCELLED', `${x.label}: cancelled while waiting to retry`, { cause: e });
      }
    }
  }

  const gatewayTarget = connectTargetOf(url, 'gateway');

  function reachable(): Promise<Reachability> {
    const targets: ConnectTarget[] = own ? [gatewayTarget] : [];
    // A request whose credentials need a connection of their own first (an access token to fetch) waits on it before
    // its first byte, as long as that connection's timeout: probed too, unless it is the gateway's own.
    const credentials = options.auth.connectionNeeded?.();
    if (credentials !== undefined && !(own && sameEndpoint(credentials, gatewayTarget)))
      targets.push(credentials);
    if (targets.length === 0) return Promise.resolve({ reachable: true });
    return probeAll(targets, options.timeouts.connectMs);
  }

  return {
    host,
    send,
    reachable,
    async close() {
      if (own) await dispatcher.close();
    },
  };
}
