import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool, request, type Dispatcher } from 'undici';
import type { Logger } from '../log/index.js';
import type { Authenticator } from './auth/authenticator.js';
import { GatewayConnectionError, GatewayError, GatewayTimeoutError } from './errors.js';
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
}

/** Largest answer body read (the gateway's answers are a few kilobytes): a larger one is refused, not buffered. */
export const MAX_ANSWER_BYTES = 1024 * 1024;

const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'CERT_HAS_EXPIRED',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

function errorCode(e: unknown): string | undefined {
  let cur: unknown = e;
  for (let i = 0; i < 4 && cur !== null && typeof cur === 'object'; i++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    cur = (cur as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Maps a transport failure to the hierarchy, deciding whether the request may have reached the gateway. */
export function transportError(e: unknown, phase: 'headers' | 'body', label: string): GatewayError {
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
  if (code !== undefined && NOT_SENT_CODES.has(code)) {
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

/** Options of {@link createTransport}. */
export interface TransportOptions {
  baseUrl: string;
  auth: Authenticator;
  timeouts: Timeouts;
  retry: RetryOptions;
  logger: Logger;
  now: () => Date;
  /** Replaces the keep-alive pool (tests: undici MockAgent). Not closed by {@link Transport.close}. */
  dispatcher?: Dispatcher;
  /** Random source for backoff jitter (tests). */
  random?: () => number;
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
  close(): Promise<void>;
}

/** The HTTP transport on undici: one keep-alive pool per gateway origin, timeouts from configuration. */
export function createTransport(options: TransportOptions): Transport {
  const url = new URL(options.baseUrl);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new GatewayError('GW_CONFIG', `gateway.baseUrl: ${url.protocol} is not http or https`);
  }
  const origin = url.origin;
  const prefix = url.pathname.replace(/\/+$/, '');
  const host = url.host; // URL.host omits the default port, as the signature requires (reference §1).
  const own = options.dispatcher === undefined;
  const dispatcher =
    options.dispatcher ??
    new Pool(origin, {
      connect: { timeout: options.timeouts.connectMs },
      headersTimeout: options.timeouts.headersMs,
      bodyTimeout: options.timeouts.bodyMs,
      keepAliveTimeout: 30_000,
      connections: 8,
    });
  const random = options.random ?? Math.random;

  async function once(x: Exchange): Promise<Answer> {
    const path = `${prefix}${x.path}`;
    const body = x.body ?? Buffer.alloc(0);
    // reference §1: read the clock once; the authenticator signs and returns the date that is sent.
    const now = options.now();
    const authHeaders = x.unauthenticated
      ? {}
      : await options.auth.authenticate({ method: x.method, host, path, body, now });
    const headers: Record<string, string> = {
      accept: 'application/hal+json;charset=utf-8, application/json',
      'v-c-client-correlation-id': randomUUID(),
      ...(x.body !== undefined ? { 'content-type': x.contentType ?? 'application/json;charset=utf-8' } : {}),
      ...authHeaders,
    };
    // Our own deadline on top of the pool's timeouts: it also holds with injected dispatchers (mocks, proxies).
    const deadline = new AbortController();
    let phase: 'headers' | 'body' = 'headers';
    const onCallerAbort = (): void => deadline.abort(x.signal?.reason);
    if (x.signal?.aborted) throw new GatewayError('GW_CANCELLED', `${x.label}: cancelled before sending`);
    x.signal?.addEventListener('abort', onCallerAbort, { once: true });
    let timer = setTimeout(
      () => deadline.abort(new GatewayTimeoutError('headers', `${x.label}: no answer in time`)),
      options.timeouts.headersMs,
    );
    try {
      const res = await request(`${origin}${path}`, {
        dispatcher,
        method: x.method,
        headers,
        ...(x.body !== undefined ? { body: x.body } : {}),
        signal: deadline.signal,
        headersTimeout: options.timeouts.headersMs,
        bodyTimeout: options.timeouts.bodyMs,
      });
      phase = 'body';
      clearTimeout(timer);
      timer = setTimeout(
        () => deadline.abort(new GatewayTimeoutError('body', `${x.label}: answer body not complete in time`)),
        options.timeouts.bodyMs,
      );
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > MAX_ANSWER_BYTES) {
          res.body.destroy();
          throw new GatewayError('GW_PARSE', `${x.label}: answer larger than ${MAX_ANSWER_BYTES} bytes`, {
            outcomeUnknown: true,
            httpStatus: res.statusCode,
          });
        }
        chunks.push(chunk);
      }
      return { httpStatus: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) };
    } catch (e) {
      if (deadline.signal.aborted) {
        const reason: unknown = deadline.signal.reason;
        if (reason instanceof GatewayTimeoutError) throw reason;
        // The caller aborted: once a request may have left, its outcome is unknown.
        throw new GatewayError('GW_CANCELLED', `${x.label}: cancelled`, { outcomeUnknown: true, cause: e });
      }
      throw transportError(e, phase, x.label);
    } finally {
      clearTimeout(timer);
      x.signal?.removeEventListener('abort', onCallerAbort);
    }
  }

  async function send(x: Exchange): Promise<Answer> {
    let renewed = false;
    for (let attempt = 1; ; attempt++) {
      const started = Date.now();
      let failure: AttemptFailure;
      let answer: Answer | undefined;
      let error: GatewayError | undefined;
      try {
        answer = await once(x);
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
        if (
          answer.httpStatus === 401 &&
          !renewed &&
          options.auth.renewAfterUnauthorized &&
          !x.unauthenticated
        ) {
          // spec 000: an expired access token answers 401 ACCESS_TOKEN_EXPIRED; one refresh, one retry. A 401 was
          // not processed, so resending is safe even for money-moving requests.
          renewed = true;
          if (await options.auth.renewAfterUnauthorized(parseJsonBody(answer.body))) {
            attempt--;
            continue;
          }
        }
        if (answer.httpStatus < 500 && answer.httpStatus !== 408 && answer.httpStatus !== 429) return answer;
        failure = { kind: 'status', httpStatus: answer.httpStatus };
      } catch (e) {
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

  return {
    host,
    send,
    async close() {
      if (own) await dispatcher.close();
    },
  };
}
