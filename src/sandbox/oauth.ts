/**
 * Delegated access (spec 000 part A): the consent page, the token endpoint with both grants, and the check of the
 * access tokens it issued. Lifetimes: code 10 minutes, access 15 minutes, refresh one year reset on each use, and a
 * six-month grace period after a refresh token expires. Every token failure answers HTTP 500 (spec 000, Errors).
 */
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import type { SandboxStore } from './store.js';

/** A registered partner application. */
export interface OAuthClient {
  clientId: string;
  clientSecret: string;
  /** Must match the `redirect_url` of the consent request exactly. */
  redirectUrl: string;
  /** The merchant that consents (the sandbox has no portal login). */
  merchantId: string;
  scope?: string;
  /** False: the partner account is not active (`client_not_active`). */
  active?: boolean;
}

/** The sandbox's demo partner application. */
export const DEFAULT_OAUTH_CLIENT: OAuthClient = {
  clientId: 'sandbox-partner',
  clientSecret: 'sandbox-partner-secret',
  redirectUrl: 'http://127.0.0.1:8080/oauth/callback',
  merchantId: 'testrest',
  scope: 'payments',
};

export const CODE_LIFETIME_MS = 10 * 60 * 1000;
export const ACCESS_LIFETIME_MS = 15 * 60 * 1000;
export const REFRESH_LIFETIME_MS = 365 * 24 * 3600 * 1000;
export const REFRESH_GRACE_MS = 182 * 24 * 3600 * 1000;

/** Token endpoint error codes (spec 000, Errors). */
export type OAuthErrorCode =
  | 'access_denied'
  | 'server_error'
  | 'invalid_scope'
  | 'invalid_client'
  | 'invalid_request'
  | 'unauthorized_client'
  | 'invalid_redirect_uri'
  | 'client_not_found'
  | 'invalid_client_type'
  | 'merchant_not_active'
  | 'client_not_active';

interface Grant {
  kind: 'code' | 'access' | 'refresh';
  clientId: string;
  merchantId: string;
  scope: string;
  expiresAt: number;
  /** Codes and refresh tokens are single use (refresh tokens rotate). */
  used?: boolean;
}

/** The answer of the token endpoint. */
export interface TokenAnswer {
  httpStatus: number;
  body: Record<string, unknown>;
}

/** What a bearer token proves. */
export type BearerCheck =
  | { ok: true; merchantId: string }
  | { ok: false; error: 'ACCESS_TOKEN_EXPIRED' | 'UNAUTHORIZED_PARTNER' }
  | { ok: 'unknown' };

/** OAuth state over the store. */
export class OAuthService {
  private readonly signingKey = randomBytes(32);

  constructor(
    private readonly store: SandboxStore,
    private readonly clients: readonly OAuthClient[],
    private readonly now: () => Date,
  ) {}

  client(clientId: string | null): OAuthClient | undefined {
    return this.clients.find((c) => c.clientId === clientId);
  }

  /** Checks a consent request; the error message, or undefined when the page may be shown. */
  checkConsent(query: URLSearchParams): string | undefined {
    if (query.get('sub') !== 'oauth') return 'sub must be oauth';
    const client = this.client(query.get('client_id'));
    if (!client) return 'unknown client_id';
    // Spec 000: the redirect_url must match the registered one exactly.
    if (query.get('redirect_url') !== client.redirectUrl)
      return 'redirect_url does not match the registered URL';
    return undefined;
  }

  /** Allow: issues a code and returns the redirect location; deny: the redirect URL without parameters. */
  decide(query: URLSearchParams, allow: boolean): string {
    const client = this.client(query.get('client_id'));
    if (!client) throw new Error('checkConsent first');
    if (!allow) return client.redirectUrl;
    const code = randomBytes(24).toString('base64url');
    this.store.put('oauth', `code:${code}`, {
      kind: 'code',
      clientId: client.clientId,
      merchantId: client.merchantId,
      scope: client.scope ?? '',
      expiresAt: this.now().getTime() + CODE_LIFETIME_MS,
    } satisfies Grant);
    const url = new URL(client.redirectUrl);
    url.searchParams.set('code', code);
    const state = query.get('state');
    if (state !== null) url.searchParams.set('state', state);
    return url.toString();
  }

  private token(
    kind: 'access' | 'refresh',
    grant: Omit<Grant, 'kind' | 'expiresAt'>,
    expiresAt: number,
  ): string {
    const header = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');
    const payload = Buffer.from(
      JSON.stringify({
        iss: 'sandbox',
        sub: grant.merchantId,
        client_id: grant.clientId,
        typ: kind,
        jti: randomUUID(),
        exp: Math.floor(expiresAt / 1000),
      }),
    ).toString('base64url');
    const sig = createHmac('sha256', this.signingKey).update(`${header}.${payload}`).digest('base64url');
    const token = `${header}.${payload}.${sig}`;
    this.store.put('oauth', `${kind}:${token}`, { ...grant, kind, expiresAt } satisfies Grant);
    return token;
  }

  private fail(error: OAuthErrorCode, description: string): TokenAnswer {
    return { httpStatus: 500, body: { error, error_description: description } };
  }

  private issue(grant: Omit<Grant, 'kind' | 'expiresAt'>): TokenAnswer {
    const now = this.now().getTime();
    return {
      httpStatus: 200,
      body: {
        access_token: this.token('access', grant, now + ACCESS_LIFETIME_MS),
        token_type: 'bearer',
        refresh_token: this.token('refresh', grant, now + REFRESH_LIFETIME_MS),
        expires_in: 899,
        scope: grant.scope,
        refresh_token_expires_in: REFRESH_LIFETIME_MS / 1000,
        client_status: 'active',
      },
    };
  }

  /** POST /oauth2/v3/token with a form body; `queryPresent` when the URL carried parameters (not allowed). */
  exchange(contentType: string | undefined, form: URLSearchParams, queryPresent: boolean): TokenAnswer {
    if (!contentType?.toLowerCase().startsWith('application/x-www-form-urlencoded'))
      return this.fail('invalid_request', 'the body must be application/x-www-form-urlencoded');
    if (queryPresent) return this.fail('invalid_request', 'parameters go in the body, none in the URL');
    for (const k of new Set(form.keys()))
      if (form.getAll(k).length > 1) return this.fail('invalid_request', `${k} repeated`);
    const grantType = form.get('grant_type');
    const clientId = form.get('client_id');
    const secret = form.get('client_secret');
    if (!grantType || !clientId || !secret)
      return this.fail('invalid_request', 'grant_type, client_id and client_secret are required');
    const client = this.client(clientId);
    if (!client) return this.fail('client_not_found', 'client_id is not registered');
    if (client.clientSecret !== secret) return this.fail('invalid_client', 'client authentication failed');
    if (client.active === false) return this.fail('client_not_active', 'the partner account is not active');
    const now = this.now().getTime();
    if (grantType === 'authorization_code') {
      const code = form.get('code');
      if (!code) return this.fail('invalid_request', 'code is required');
      const grant = this.store.get<Grant>('oauth', `code:${code}`);
      if (!grant || grant.clientId !== clientId) return this.fail('invalid_request', 'code is not valid');
      if (grant.used) return this.fail('invalid_request', 'code was already used');
      if (grant.expiresAt < now)
        return this.fail('invalid_request', 'code expired; repeat the consent redirect');
      this.store.put('oauth', `code:${code}`, { ...grant, used: true });
      return this.issue({ clientId, merchantId: grant.merchantId, scope: grant.scope });
    }
    if (grantType === 'refresh_token') {
      const token = form.get('refresh_token');
      if (!token) return this.fail('invalid_request', 'refresh_token is required');
      const grant = this.store.get<Grant>('oauth', `refresh:${token}`);
      if (!grant || grant.clientId !== clientId)
        return this.fail('invalid_request', 'refresh_token is not valid');
      if (grant.used) return this.fail('invalid_request', 'refresh_token was replaced by a newer one');
      // Spec 000: an expired refresh token still works during the six-month grace period; after it the grant is lost.
      if (grant.expiresAt + REFRESH_GRACE_MS < now)
        return this.fail('access_denied', 'the grant is lost; the merchant must authorize again');
      this.store.put('oauth', `refresh:${token}`, { ...grant, used: true });
      return this.issue({ clientId, merchantId: grant.merchantId, scope: grant.scope });
    }
    return this.fail('invalid_request', 'grant_type must be authorization_code or refresh_token');
  }

  /** Checks a bearer token: one of ours (valid or expired), or unknown to OAuth (maybe a JWT). */
  checkBearer(token: string): BearerCheck {
    const grant = this.store.get<Grant>('oauth', `access:${token}`);
    if (!grant) return { ok: 'unknown' };
    if (grant.expiresAt < this.now().getTime()) return { ok: false, error: 'ACCESS_TOKEN_EXPIRED' };
    const client = this.client(grant.clientId);
    if (!client || client.active === false) return { ok: false, error: 'UNAUTHORIZED_PARTNER' };
    return { ok: true, merchantId: grant.merchantId };
  }
}
