import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_OAUTH_CLIENT, startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { samplePayment } from '../../src/sandbox/sample-requests.js';

let sandbox: Sandbox;
const client = DEFAULT_OAUTH_CLIENT;

function consentQuery(extra: Record<string, string> = {}): URLSearchParams {
  return new URLSearchParams({
    sub: 'oauth',
    client_id: client.clientId,
    redirect_url: client.redirectUrl,
    state: 'xyz',
    ...extra,
  });
}

async function decide(decision: 'allow' | 'deny'): Promise<URL> {
  const form = consentQuery();
  form.set('decision', decision);
  const res = await fetch(`${sandbox.url}/ebc2/oauth/authorize`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form.toString(),
    redirect: 'manual',
  });
  expect(res.status).toBe(302);
  return new URL(res.headers.get('location') ?? '');
}

async function token(
  params: Record<string, string>,
  query = '',
): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const res = await fetch(`${sandbox.url}/oauth2/v3/token${query}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      client_id: client.clientId,
      client_secret: client.clientSecret,
      ...params,
    }).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
}

async function pay(accessToken: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${sandbox.url}/pts/v2/payments`, {
    method: 'POST',
    headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(samplePayment({ amountMinor: 1000, transactionId: `oauth-${Math.random()}` })),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await sandbox.close();
});
beforeEach(() => sandbox.reset());

describe('OAuth consent', () => {
  it('shows Allow and Deny for a registered client and redirect URL', async () => {
    const res = await fetch(`${sandbox.url}/ebc2/oauth/authorize?${consentQuery().toString()}`);
    const html = await res.text();
    expect(res.status).toBe(200);
    expect(html).toContain('id="allow"');
    expect(html).toContain('id="deny"');
  });

  it('refuses a redirect URL that does not match exactly, without redirecting', async () => {
    const res = await fetch(
      `${sandbox.url}/ebc2/oauth/authorize?${consentQuery({ redirect_url: `${client.redirectUrl}/` }).toString()}`,
      { redirect: 'manual' },
    );
    expect(res.status).toBe(400);
  });

  it('redirects with code and state on Allow, and with no parameters on Deny', async () => {
    const allowed = await decide('allow');
    expect(allowed.searchParams.get('code')).toBeTruthy();
    expect(allowed.searchParams.get('state')).toBe('xyz');
    const denied = await decide('deny');
    expect(denied.toString()).toBe(client.redirectUrl);
  });
});

describe('OAuth tokens', () => {
  it('exchanges a code once for 15-minute access and one-year refresh tokens that authorize payments', async () => {
    const code = (await decide('allow')).searchParams.get('code') ?? '';
    const t = await token({ grant_type: 'authorization_code', code });
    expect(t.status).toBe(200);
    expect(t.body).toMatchObject({
      token_type: 'bearer',
      expires_in: 899,
      refresh_token_expires_in: 31536000,
      client_status: 'active',
    });
    expect(t.headers.get('cache-control')).toBe('no-store');
    const paid = await pay(String(t.body.access_token));
    expect(paid.status).toBe(201);
    expect(sandbox.ledger().transactions[0]!.requests[0]!.auth).toEqual({ scheme: 'oauth', verified: true });
    const again = await token({ grant_type: 'authorization_code', code });
    expect(again).toMatchObject({ status: 500, body: { error: 'invalid_request' } });
  });

  it('expires codes after ten minutes', async () => {
    const code = (await decide('allow')).searchParams.get('code') ?? '';
    sandbox.advanceClock(10 * 60 * 1000 + 1000);
    expect((await token({ grant_type: 'authorization_code', code })).status).toBe(500);
  });

  it('answers 401 ACCESS_TOKEN_EXPIRED after fifteen minutes, and a refresh restores access', async () => {
    const code = (await decide('allow')).searchParams.get('code') ?? '';
    const t = await token({ grant_type: 'authorization_code', code });
    sandbox.advanceClock(15 * 60 * 1000 + 1000);
    const expired = await pay(String(t.body.access_token));
    expect(expired.status).toBe(401);
    expect(expired.body).toEqual({
      response: { rmsg: { error: 'ACCESS_TOKEN_EXPIRED', error_description: 'ACCESS_TOKEN_EXPIRED' } },
    });
    const refreshed = await token({
      grant_type: 'refresh_token',
      refresh_token: String(t.body.refresh_token),
    });
    expect(refreshed.status).toBe(200);
    expect((await pay(String(refreshed.body.access_token))).status).toBe(201);
    // The refresh token rotates: the old one is spent.
    expect(
      (await token({ grant_type: 'refresh_token', refresh_token: String(t.body.refresh_token) })).status,
    ).toBe(500);
  });

  it('accepts an expired refresh token within the six-month grace period and refuses it after', async () => {
    const code = (await decide('allow')).searchParams.get('code') ?? '';
    const t = await token({ grant_type: 'authorization_code', code });
    sandbox.advanceClock((365 + 100) * 24 * 3600 * 1000);
    const graced = await token({ grant_type: 'refresh_token', refresh_token: String(t.body.refresh_token) });
    expect(graced.status).toBe(200);
    sandbox.advanceClock((365 + 200) * 24 * 3600 * 1000);
    const lost = await token({
      grant_type: 'refresh_token',
      refresh_token: String(graced.body.refresh_token),
    });
    expect(lost).toMatchObject({ status: 500, body: { error: 'access_denied' } });
  });

  it.each([
    [{ grant_type: 'authorization_code', code: 'x', client_id: 'nobody' }, '', 'client_not_found'],
    [{ grant_type: 'authorization_code', code: 'x', client_secret: 'wrong' }, '', 'invalid_client'],
    [{ grant_type: 'password' }, '', 'invalid_request'],
    [{ grant_type: 'authorization_code', code: 'x' }, '?code=x', 'invalid_request'],
  ])('answers 500 with the spec error code for %o', async (params, query, error) => {
    const r = await token(params, query);
    expect(r.status).toBe(500);
    expect(r.body.error).toBe(error);
  });

  it('answers 401 UNAUTHORIZED_PARTNER to an unknown bearer token', async () => {
    const r = await pay('not-a-token');
    expect(r.status).toBe(401);
    expect(r.body).toEqual({
      response: { rmsg: { error: 'UNAUTHORIZED_PARTNER', error_description: 'UNAUTHORIZED_PARTNER' } },
    });
  });
});
