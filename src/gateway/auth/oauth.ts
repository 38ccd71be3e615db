import { createCipheriv, createDecipheriv, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { removePrivateFileDurably, writePrivateFileDurably } from '../../config/durable-file.js';
import { silentLogger, type Logger } from '../../log/index.js';
import { connectTargetOf, type ConnectTarget } from '../connect-probe.js';
import type { ExchangeDispatcher } from '../connection-pool.js';
import { GatewayError, GatewayOAuthError } from '../errors.js';
import { parseJsonBody } from '../outcome.js';
import { requestTarget } from '../request-target.js';
import { backoffDelayMs } from '../retry.js';
import { createTransport, type RetryOptions, type Timeouts, type Transport } from '../transport.js';
import type { BearerTokenSource } from './authenticator.js';
import { MAX_TIMER_DELAY_MS } from '../../vocabulary/timer.js';

/** The grant as the terminal keeps it (spec 000, token response). Times are epoch milliseconds. */
export interface OAuthTokens {
  accessToken: string;
  /** When the access token expires (issued + `expires_in`; fifteen minutes). */
  accessTokenExpiresAt: number;
  refreshToken: string;
  /** When the refresh token expires (issued + `refresh_token_expires_in`; one year, reset at every token request). */
  refreshTokenExpiresAt: number;
  scope?: string;
}

/** Where the rotated refresh token lives between runs. */
export interface TokenStore {
  load(): OAuthTokens | undefined;
  save(tokens: OAuthTokens): void;
  clear(): void;
}

/** Six months after the refresh token expired, a refresh grant still gets a new one (spec 000, Limits). */
export const REFRESH_GRACE_MS = 183 * 24 * 3600 * 1000;
/**
 * Renew the access token in the background this long before it expires (`oauth.renewBeforeExpirySeconds`): five
 * minutes of the fifteen, room for a renewal that waits out the token request's timeouts and for retries after it,
 * while the token in hand serves every request.
 */
export const DEFAULT_REFRESH_MARGIN_MS = 300_000;
/**
 * A token in hand is sent until this long before it expires (at most half the renewal margin): a request sent with it
 * reaches the gateway while it is valid. Past that, a request waits for the renewal.
 */
export const EXPIRY_GUARD_MS = 10_000;
/** The wait before a failed renewal is tried again: from one second, doubling, to one minute (jittered). */
const RENEWAL_BACKOFF = { initialDelayMs: 1_000, maxDelayMs: 60_000 };
const ONE_YEAR_MS = 365 * 24 * 3600 * 1000;
/** RFC 6750 `b64token`: what may follow `Bearer ` in an Authorization header. */
const BEARER_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** A token lifetime of a token answer: whole seconds, at least one, at most `maxSeconds`. */
function isLifetime(v: unknown, maxSeconds: number): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v > 0 && v <= maxSeconds;
}

/**
 * A token store in one file, AES-256-GCM encrypted with a 32-byte key, written whole, atomically and durably with mode
 * 0600 (`writePrivateFileDurably`, src/config/durable-file.ts), and removed durably (`removePrivateFileDurably`). A file that cannot be decrypted (wrong key, tampering)
 * reads as "no grant" — the merchant re-authorizes — and is never half-trusted.
 */
export function encryptedFileTokenStore(path: string, key: Buffer): TokenStore {
  if (key.length !== 32) throw new GatewayError('GW_CONFIG', 'the token store key must be 32 bytes');
  return {
    load() {
      let raw: string;
      try {
        raw = readFileSync(path, 'utf8');
      } catch {
        return undefined;
      }
      try {
        const f = JSON.parse(raw) as { v: number; iv: string; tag: string; data: string };
        if (f.v !== 1) return undefined;
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(f.iv, 'base64'));
        decipher.setAuthTag(Buffer.from(f.tag, 'base64'));
        const clear = Buffer.concat([decipher.update(Buffer.from(f.data, 'base64')), decipher.final()]);
        const t = JSON.parse(clear.toString('utf8')) as OAuthTokens;
        if (typeof t.accessToken !== 'string' || typeof t.refreshToken !== 'string') return undefined;
        return t;
      } catch {
        return undefined;
      }
    },
    save(tokens) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const data = Buffer.concat([cipher.update(JSON.stringify(tokens), 'utf8'), cipher.final()]);
      const file = JSON.stringify({
        v: 1,
        iv: iv.toString('base64'),
        tag: cipher.getAuthTag().toString('base64'),
        data: data.toString('base64'),
      });
      // Renamed over the previous grant once synced: a power cut, or a crash after a key rotation sealed it again,
      // leaves the old grant or the new one, never a store that is empty or cut short (the merchant would have to
      // authorize the terminal again).
      writePrivateFileDurably(path, file, 'replace');
    },
    // Removed with its directory synced: a grant forgotten stays forgotten after a power cut.
    clear() {
      removePrivateFileDurably(path);
    },
  };
}

/** The grant's state, for the operator's status bar and `oauth status`. */
export type OAuthGrantState =
  | 'not-authorized'
  | 'authorized'
  /** The refresh token expired; a refresh within six months still renews the grant. */
  | 'grace-period'
  /** The grace period passed (or the grant was revoked): the merchant must authorize again. */
  | 'reauthorization-required';

/**
 * The state of a stored grant at `nowMs` (epoch milliseconds), from its refresh-token expiry alone (spec 000,
 * Limits): authorized until it expires, then six months of grace in which a refresh still renews it, then lost.
 * Pure: `oauth status` reads it without contacting the token endpoint.
 */
export function oauthGrantState(tokens: OAuthTokens | undefined, nowMs: number): OAuthGrantState {
  if (tokens === undefined) return 'not-authorized';
  if (nowMs < tokens.refreshTokenExpiresAt) return 'authorized';
  if (nowMs < tokens.refreshTokenExpiresAt + REFRESH_GRACE_MS) return 'grace-period';
  return 'reauthorization-required';
}

export interface OAuthTokenManagerOptions {
  /** Base URL of the token host; the endpoint is `/oauth2/v3/token` under it. */
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  store: TokenStore;
  timeouts: Timeouts;
  retry?: RetryOptions;
  /** Epoch milliseconds (tests). */
  now?: () => number;
  /**
   * How long before the access token expires it is renewed in the background (default
   * {@link DEFAULT_REFRESH_MARGIN_MS}); half its life when it lives less than twice this.
   */
  refreshMarginMs?: number;
  logger?: Logger;
  dispatcher?: ExchangeDispatcher;
  random?: () => number;
}

/**
 * Keeps the partner's OAuth grant usable (spec 000): renews the fifteen-minute access token ahead of its expiry,
 * persists the rotated refresh token (encrypted by the store), renews an expired refresh token within the six-month
 * grace period, and reports "merchant must re-authorize" as a state and a typed error (GW_OAUTH_REAUTHORIZE).
 *
 * Renewal ahead, once {@link keepRenewed} was called (the terminal): when the token in hand is due
 * ({@link DEFAULT_REFRESH_MARGIN_MS} before it expires) it is renewed in the background — by a timer, and by the first
 * request that finds it due — while it goes on serving every request. One token request at a time, shared by every
 * caller; a renewal that fails is tried again with backoff and never reaches a request while the token in hand is
 * valid. A request waits on the token host only when no token it may send is in hand: none yet, or the renewals
 * failed until {@link EXPIRY_GUARD_MS} before it expired. Without {@link keepRenewed} (a command that lives for one
 * request or a few) nothing runs in the background, where the process's exit could lose a rotated refresh token: a
 * request that finds the token due waits for its renewal.
 */
export class OAuthTokenManager implements BearerTokenSource {
  private tokens: OAuthTokens | undefined;
  /**
   * When the token in hand is due for renewal (epoch ms): the refresh margin before it expires, or half its life when
   * it lives less than twice the margin (else it would be renewed all the time); for a stored grant, whose lifetime is
   * not known, the margin.
   */
  private renewAt: number;
  /**
   * Until when the token in hand is sent while it is renewed ahead (epoch ms): {@link EXPIRY_GUARD_MS} before it
   * expires (less for a token that lives less than twice that).
   */
  private usableUntil: number;
  /** After a failed renewal: the earliest time of the next one (epoch ms); -Infinity otherwise. */
  private retryAt = -Infinity;
  /** Renewals failed in a row since the last token (the backoff's attempt number). */
  private renewalFailures = 0;
  /** The wake-up of the renewal ahead; set only after {@link keepRenewed}, never while closed. */
  private renewalTimer: ReturnType<typeof setTimeout> | undefined;
  private keepingRenewed = false;
  private closed = false;
  private revoked = false;
  private inflight: Promise<OAuthTokens> | undefined;
  private readonly transport: Transport;
  /** The token host's endpoint; undefined when the connections are not this manager's (an injected dispatcher). */
  private readonly tokenHost: ConnectTarget | undefined;
  private readonly now: () => number;
  private readonly logger: Logger;

  constructor(private readonly options: OAuthTokenManagerOptions) {
    this.now = options.now ?? Date.now;
    this.logger = options.logger ?? silentLogger();
    this.tokens = options.store.load();
    this.renewAt = -Infinity;
    this.usableUntil = -Infinity;
    // A stored access token that cannot be sent as a bearer token (one kept before token answers were checked) is
    // refreshed before its first use, as an expired one.
    if (this.tokens !== undefined && BEARER_TOKEN.test(this.tokens.accessToken))
      this.setDeadlines(this.tokens.accessTokenExpiresAt, undefined);
    this.tokenHost =
      options.dispatcher === undefined
        ? connectTargetOf(new URL(options.tokenUrl), 'OAuth token host')
        : undefined;
    this.transport = createTransport({
      baseUrl: options.tokenUrl,
      // The token endpoint is unsigned (reference §1): every exchange below is `unauthenticated`.
      auth: { method: 'oauth', authenticate: () => Promise.resolve({}) },
      timeouts: options.timeouts,
      retry: { maxAttempts: 1, initialDelayMs: 1, maxDelayMs: 1 },
      logger: this.logger,
      now: () => new Date(this.now()),
      ...(options.dispatcher !== undefined ? { dispatcher: options.dispatcher } : {}),
    });
  }

  /** The grant's state now. */
  state(): OAuthGrantState {
    return this.revoked ? 'reauthorization-required' : oauthGrantState(this.tokens, this.now());
  }

  /** The current grant (for `oauth status`; never log the tokens). */
  current(): OAuthTokens | undefined {
    return this.tokens;
  }

  /**
   * The token in hand while it may be sent, at once: when it is due, its renewal starts beside the request (should the
   * timer fire late: after a suspend, a clock step) and its failure is not the request's. Otherwise the request waits
   * for a token from the token host.
   */
  async accessToken(): Promise<string> {
    const t = this.tokens;
    const now = this.now();
    if (t !== undefined && now < this.sendableUntil()) {
      if (now >= this.renewAt && now >= this.retryAt) this.renewInBackground();
      return t.accessToken;
    }
    return (await this.refresh()).accessToken;
  }

  /** The last time the token in hand is sent without waiting: while renewed ahead, until its last seconds. */
  private sendableUntil(): number {
    return this.keepingRenewed ? this.usableUntil : this.renewAt;
  }

  /**
   * The token host, while the next {@link accessToken} must fetch a token from it: no token in hand may be sent
   * (expired, within {@link EXPIRY_GUARD_MS} of it, not sendable, or due without {@link keepRenewed}) and the grant is
   * one a refresh may renew. Undefined while the token in hand serves — when renewed ahead, even while it is due, the
   * renewal going on beside the requests and not waited on: no connection is opened for it, whether or not the token
   * host answers — and when no token request would be made (no grant, or one past its grace period or withdrawn: the
   * request fails at once with GW_OAUTH_REAUTHORIZE, sending nothing). The same test as {@link accessToken}'s, so the
   * probe and the request agree; only a token whose renewals kept failing until its last seconds can fall due between
   * the two.
   */
  connectionNeeded(): ConnectTarget | undefined {
    if (this.tokens !== undefined && this.now() < this.sendableUntil()) return undefined;
    const state = this.state();
    return state === 'authorized' || state === 'grace-period' ? this.tokenHost : undefined;
  }

  /**
   * Renews the access token ahead of its expiry by itself from now on: a timer (which keeps no process alive) at the
   * time it is due, and again with backoff after a renewal that failed, until {@link close}. A grant that no refresh
   * can renew (none, withdrawn, past its grace period) waits for {@link exchangeCode}. For the terminal, which
   * {@link close}s the manager when it stops (a renewal in flight finishes and is stored first); not for a command
   * whose exit could cut a renewal short after the token host rotated the refresh token.
   */
  keepRenewed(): void {
    if (this.closed) return;
    this.keepingRenewed = true;
    this.scheduleRenewal();
  }

  private refreshMarginMs(): number {
    return this.options.refreshMarginMs ?? DEFAULT_REFRESH_MARGIN_MS;
  }

  /**
   * The renewal time and the last sending time of a token expiring at `expiresAt` (epoch ms) that lives `lifetimeMs`
   * (undefined: a stored token, whose lifetime is not known).
   */
  private setDeadlines(expiresAt: number, lifetimeMs: number | undefined): void {
    const margin = this.refreshMarginMs();
    const lead = lifetimeMs === undefined ? margin : Math.min(margin, lifetimeMs / 2);
    this.renewAt = expiresAt - lead;
    this.usableUntil = expiresAt - Math.min(EXPIRY_GUARD_MS, lead / 2);
  }

  /** Starts a renewal unless one is in flight; its failure is logged and scheduled again (in {@link refresh}). */
  private renewInBackground(): void {
    if (!this.keepingRenewed || this.closed || this.inflight !== undefined) return;
    this.refresh().catch((err: unknown) => {
      if (this.closed) return;
      this.logger.warn(
        {
          code: err instanceof GatewayError ? err.code : undefined,
          failures: this.renewalFailures,
          state: this.state(),
        },
        'oauth token renewal failed; the token in hand serves while it is valid',
      );
    });
  }

  /**
   * Sets the timer of the renewal ahead at {@link renewAt} (or {@link retryAt}, after a failure), while
   * {@link keepRenewed} holds and a refresh may renew.
   */
  private scheduleRenewal(): void {
    if (this.renewalTimer !== undefined) clearTimeout(this.renewalTimer);
    this.renewalTimer = undefined;
    if (!this.keepingRenewed || this.closed || this.tokens === undefined) return;
    const state = this.state();
    if (state !== 'authorized' && state !== 'grace-period') return;
    const delay = Math.max(0, Math.max(this.renewAt, this.retryAt) - this.now());
    const timer = setTimeout(
      () => {
        this.renewalTimer = undefined;
        // A token that lives longer than a timer can wait (a lifetime of up to a year is accepted): wait again.
        if (delay > MAX_TIMER_DELAY_MS) this.scheduleRenewal();
        else this.renewInBackground();
      },
      Math.min(delay, MAX_TIMER_DELAY_MS),
    );
    // A terminal that is stopping is not held up by the next renewal.
    timer.unref();
    this.renewalTimer = timer;
  }

  async renewAfterUnauthorized(body: unknown, rejectedToken?: string): Promise<boolean> {
    const rmsg = (body as { response?: { rmsg?: { error?: unknown } } } | undefined)?.response?.rmsg;
    if (rmsg?.error !== 'ACCESS_TOKEN_EXPIRED') return false;
    // A request sent with a token that another request's 401 has already replaced goes again with the new one: the
    // requests in flight when a token expires cause one refresh, not one each (each would rotate the refresh token).
    if (rejectedToken !== undefined && this.tokens !== undefined && this.tokens.accessToken !== rejectedToken)
      return true;
    await this.refresh();
    return true;
  }

  /** Exchanges the authorization code of the consent redirect (valid ten minutes) for a new grant. */
  async exchangeCode(code: string): Promise<OAuthTokens> {
    const tokens = await this.tokenRequest({ grant_type: 'authorization_code', code });
    this.revoked = false;
    // A grant withdrawn before was not renewable when the token arrived: the renewal ahead resumes with this one.
    this.scheduleRenewal();
    return tokens;
  }

  /**
   * Refreshes now (one request at a time: concurrent callers share it).
   * @throws GatewayOAuthError GW_OAUTH_REAUTHORIZE when there is no grant, or it is past its grace period or revoked;
   *   GW_OAUTH_TOKEN for other token-endpoint failures.
   */
  refresh(): Promise<OAuthTokens> {
    this.inflight ??= this.doRefresh().then(
      (tokens) => {
        this.inflight = undefined;
        return tokens;
      },
      (err: unknown) => {
        this.inflight = undefined;
        this.renewalFailed();
        throw err;
      },
    );
    return this.inflight;
  }

  /** After a failed refresh: the next renewal after a backoff (none once the grant cannot be renewed). */
  private renewalFailed(): void {
    if (this.closed) return;
    this.renewalFailures++;
    this.retryAt =
      this.now() +
      backoffDelayMs(this.renewalFailures, RENEWAL_BACKOFF, (this.options.random ?? Math.random)());
    this.scheduleRenewal();
  }

  /** Stops the renewals and closes the token host's connections (a token request in flight finishes first). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.renewalTimer !== undefined) clearTimeout(this.renewalTimer);
    this.renewalTimer = undefined;
    await this.transport.close();
  }

  private async doRefresh(): Promise<OAuthTokens> {
    const state = this.state();
    if (state === 'not-authorized' || state === 'reauthorization-required' || this.tokens === undefined) {
      throw new GatewayOAuthError(
        'GW_OAUTH_REAUTHORIZE',
        'the merchant must authorize the terminal again (oauth authorize)',
      );
    }
    try {
      return await this.tokenRequest({
        grant_type: 'refresh_token',
        refresh_token: this.tokens.refreshToken,
      });
    } catch (e) {
      if (e instanceof GatewayOAuthError && e.oauthError === 'access_denied') {
        // The merchant withdrew the grant: only a new consent helps.
        this.revoked = true;
        throw new GatewayOAuthError(
          'GW_OAUTH_REAUTHORIZE',
          'the grant was withdrawn; the merchant must authorize again',
          'access_denied',
          { cause: e },
        );
      }
      throw e;
    }
  }

  private async tokenRequest(params: Record<string, string>): Promise<OAuthTokens> {
    const body = Buffer.from(
      new URLSearchParams({
        ...params,
        client_id: this.options.clientId,
        client_secret: this.options.clientSecret,
      }).toString(),
      'utf8',
    );
    const retry = this.options.retry ?? { maxAttempts: 3, initialDelayMs: 200, maxDelayMs: 5_000 };
    for (let attempt = 1; ; attempt++) {
      // A renewal that was waiting to try again when the terminal stopped ends there.
      if (this.closed) throw new GatewayError('GW_CANCELLED', 'the token manager is closed');
      try {
        return await this.tokenAttempt(body);
      } catch (e) {
        // Token requests move no money: transient failures (server_error, network) are retried; codes that
        // describe the request or the accounts are not.
        // A success whose grant cannot be used (below) is the token host's answer, not a transient state.
        const transient =
          e instanceof GatewayOAuthError
            ? e.oauthError === 'server_error' ||
              (e.oauthError === undefined && e.httpStatus !== 200 && e.httpStatus !== 201)
            : e instanceof GatewayError &&
              (e.code === 'GW_CONNECTION' || e.code === 'GW_TIMEOUT' || e.code === 'GW_SERVER');
        if (!transient || attempt >= retry.maxAttempts) throw tokenFailure(e);
        const delay = backoffDelayMs(attempt, retry, (this.options.random ?? Math.random)());
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  }

  private async tokenAttempt(body: Buffer): Promise<OAuthTokens> {
    const answer = await this.transport.send({
      label: 'oauth-token',
      method: 'POST',
      path: '/oauth2/v3/token',
      body,
      contentType: 'application/x-www-form-urlencoded',
      unauthenticated: true,
      moneyMoving: false,
    });
    const json = parseJsonBody(answer.body) as Record<string, unknown> | undefined;
    if (answer.httpStatus !== 200 && answer.httpStatus !== 201) {
      // spec 000: any token request failure answers HTTP 500 with one of its error codes.
      const code = typeof json?.error === 'string' ? json.error : undefined;
      throw new GatewayOAuthError(
        'GW_OAUTH_TOKEN',
        `token endpoint answered HTTP ${answer.httpStatus}${code ? ` ${code}` : ''}`,
        code,
        { httpStatus: answer.httpStatus },
      );
    }
    const access = json?.access_token;
    const refresh = json?.refresh_token;
    const expiresIn = json?.expires_in;
    const refreshExpiresIn = json?.refresh_token_expires_in;
    const unusable = (what: string): GatewayOAuthError =>
      new GatewayOAuthError('GW_OAUTH_TOKEN', `token endpoint answer: ${what}`, undefined, {
        httpStatus: answer.httpStatus,
      });
    if (typeof access !== 'string' || typeof refresh !== 'string' || typeof expiresIn !== 'number') {
      throw unusable('no access_token, refresh_token or expires_in');
    }
    // Sent as `Authorization: Bearer <token>`: only the characters of a bearer token (RFC 6750 b64token, which a JWT
    // is made of). Anything else could not be sent, or would add a header line of its own.
    if (!BEARER_TOKEN.test(access)) throw unusable('access_token is not a bearer token');
    if (refresh === '') throw unusable('refresh_token is empty');
    // Whole seconds (spec 000: an integer), at least one and at most the year of the grant itself: a lifetime of zero
    // or less would send every request to the token endpoint first.
    if (!isLifetime(expiresIn, ONE_YEAR_MS / 1000)) throw unusable('expires_in is not a lifetime');
    const issued = this.now();
    // The refresh token's lifetime only informs the grant's state (the token endpoint is the judge): one that is
    // absent or unusable is the documented year (spec 000, Limits), rather than the rotated token thrown away.
    const refreshIn = isLifetime(refreshExpiresIn, (10 * ONE_YEAR_MS) / 1000)
      ? refreshExpiresIn * 1000
      : ONE_YEAR_MS;
    const tokens: OAuthTokens = {
      accessToken: access,
      accessTokenExpiresAt: issued + expiresIn * 1000,
      refreshToken: refresh,
      refreshTokenExpiresAt: issued + refreshIn,
      ...(typeof json?.scope === 'string' ? { scope: json.scope } : {}),
    };
    // Persist before use: the old refresh token may already be invalid once the new one is issued.
    this.options.store.save(tokens);
    this.tokens = tokens;
    this.setDeadlines(tokens.accessTokenExpiresAt, expiresIn * 1000);
    this.renewalFailures = 0;
    this.retryAt = -Infinity;
    this.scheduleRenewal();
    this.logger.info({ accessTokenExpiresAt: tokens.accessTokenExpiresAt }, 'oauth tokens renewed');
    return tokens;
  }
}

/**
 * A token request's failure as the requests waiting for the token see it. The token request may have reached the
 * token host (a reset, a timeout after sending), but no request of the caller has been sent: nothing can have been
 * processed for it (`outcomeUnknown` false; a payment whose outcome is "unknown" would get a needless timeout
 * reversal). The code stays, so that an unreachable host is still told as one.
 */
function tokenFailure(e: unknown): unknown {
  if (!(e instanceof GatewayError) || !e.outcomeUnknown) return e;
  return new GatewayError(e.code, `token endpoint: ${e.message}`, {
    outcomeUnknown: false,
    ...(e.httpStatus !== undefined ? { httpStatus: e.httpStatus } : {}),
    cause: e,
  });
}

/** The consent page address (spec 000, A.1): `{portal_url}/ebc2/oauth/authorize?sub=oauth&client_id&redirect_url&state`. */
export function buildConsentUrl(o: {
  portalUrl: string;
  clientId: string;
  redirectUrl: string;
  state: string;
}): string {
  const q = new URLSearchParams({
    sub: 'oauth',
    client_id: o.clientId,
    redirect_url: o.redirectUrl,
    state: o.state,
  });
  return `${o.portalUrl.replace(/\/+$/, '')}/ebc2/oauth/authorize?${q.toString()}`;
}

/** A fresh unguessable `state` for one consent redirect. */
export function newConsentState(): string {
  return randomBytes(24).toString('base64url');
}

/** What came back to the redirect URL. */
export type ConsentResult = { kind: 'code'; code: string } | { kind: 'denied' };

function sameState(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Listens on the redirect URL (its host and port; on loopback) for the merchant's return from the consent page.
 * A `state` that differs from the one sent is answered 401 (spec 000: a possible forgery) and rejects with
 * GW_OAUTH_STATE; a return with no parameters is a denial (not a failure, spec 000); a code resolves.
 */
export function receiveConsent(o: {
  redirectUrl: string;
  state: string;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Called once the listener is ready, with the bound port (the URL's port, or the one picked for port 0). */
  onListening?: (port: number) => void;
}): Promise<ConsentResult> {
  const url = new URL(o.redirectUrl);
  return new Promise<ConsentResult>((resolve, reject) => {
    let done = false;
    const finish = (fn: () => void): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
      server.close();
      server.closeAllConnections();
      fn();
    };
    const server = createServer((req, res) => {
      const got = requestTarget(req.url, url);
      if (got === undefined) {
        res.writeHead(400).end();
        return;
      }
      if (req.method !== 'GET' || got.pathname !== url.pathname) {
        res.writeHead(404).end();
        return;
      }
      const code = got.searchParams.get('code');
      const state = got.searchParams.get('state');
      if (code === null && state === null) {
        res
          .writeHead(200, { 'content-type': 'text/plain; charset=utf-8' })
          .end('The terminal was not authorized.\n');
        finish(() => resolve({ kind: 'denied' }));
        return;
      }
      if (state === null || !sameState(state, o.state)) {
        res
          .writeHead(401, { 'content-type': 'text/plain; charset=utf-8' })
          .end('State mismatch: request refused.\n');
        finish(() =>
          reject(new GatewayOAuthError('GW_OAUTH_STATE', 'the consent redirect carried a different state')),
        );
        return;
      }
      if (code === null || code === '') {
        res.writeHead(400).end();
        finish(() =>
          reject(new GatewayOAuthError('GW_OAUTH_DENIED', 'the consent redirect carried no code')),
        );
        return;
      }
      res
        .writeHead(200, { 'content-type': 'text/plain; charset=utf-8' })
        .end('The terminal is authorized. You may close this page.\n');
      finish(() => resolve({ kind: 'code', code }));
    });
    const onAbort = (): void =>
      finish(() => reject(new GatewayError('GW_CANCELLED', 'consent wait cancelled')));
    o.signal?.addEventListener('abort', onAbort, { once: true });
    // The authorization code lives ten minutes (spec 000); waiting longer is pointless.
    const timer = setTimeout(
      () =>
        finish(() => reject(new GatewayOAuthError('GW_OAUTH_DENIED', 'no consent redirect arrived in time'))),
      o.timeoutMs ?? 600_000,
    );
    server.on('error', (e) =>
      finish(() => reject(new GatewayError('GW_CONFIG', `cannot listen on ${url.host}`, { cause: e }))),
    );
    server.listen(Number(url.port || (url.protocol === 'https:' ? 443 : 80)), url.hostname, () => {
      const addr = server.address();
      if (addr !== null && typeof addr === 'object') o.onListening?.(addr.port);
    });
  });
}
