import { createHash, createHmac, generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifyHttpSignature, verifyJwt, type MerchantKey, type ReceivedRequest } from './auth.js';
import { signRequest } from './request-signer.js';

const merchant: MerchantKey = {
  merchantId: 'testrest',
  keyId: '08c94330-f618-42a3-b09d-e1e43be5efda',
  sharedSecret: 'yBJxy6LjM2TmcPGu+GaJrHtkke25fPpUX+UY6/L/1tE=',
};
const other: MerchantKey = {
  merchantId: 'other',
  keyId: 'k2',
  sharedSecret: Buffer.from('another secret').toString('base64'),
};
const now = new Date('2026-11-22T10:00:00Z');
const body = Buffer.from('{"a":1}');

function signed(overrides: Partial<ReceivedRequest> = {}, date = now.toUTCString()): ReceivedRequest {
  const headers = signRequest({
    method: 'POST',
    path: '/pts/v2/payments',
    host: 'sandbox.test:8089',
    body,
    merchant,
    date,
  });
  return { method: 'POST', target: '/pts/v2/payments', headers, body, ...overrides };
}

/** A signature written by hand, so that a shared bug in signRequest and the verifier cannot hide. */
function manual(requestTargetName: string, keyMaterial: Buffer): Record<string, string> {
  const date = now.toUTCString();
  const digest = `SHA-256=${createHash('sha256').update(body).digest('base64')}`;
  const names = ['host', 'date', requestTargetName, 'digest', 'v-c-merchant-id'];
  const text = [
    'host: sandbox.test:8089',
    `date: ${date}`,
    `${requestTargetName}: post /pts/v2/payments?x=1`,
    `digest: ${digest}`,
    'v-c-merchant-id: testrest',
  ].join('\n');
  const mac = createHmac('sha256', keyMaterial).update(text).digest('base64');
  return {
    host: 'sandbox.test:8089',
    date,
    digest,
    'v-c-merchant-id': 'testrest',
    signature: `keyid="${merchant.keyId}", algorithm="HmacSHA256", headers="${names.join(' ')}", signature="${mac}"`,
  };
}

describe('verifyHttpSignature', () => {
  it('accepts a request signed with the base64-decoded secret', () => {
    expect(verifyHttpSignature(signed(), [merchant], now)).toEqual({
      scheme: 'http-signature',
      verified: true,
      merchantId: 'testrest',
    });
  });

  it.each(['request-target', '(request-target)'])('accepts the %s form with a query string', (name) => {
    const headers = manual(name, Buffer.from(merchant.sharedSecret, 'base64'));
    const r = verifyHttpSignature(
      { method: 'POST', target: '/pts/v2/payments?x=1', headers, body },
      [merchant],
      now,
    );
    expect(r.verified).toBe(true);
  });

  it('refuses a MAC keyed with the base64 text instead of the decoded secret', () => {
    const headers = manual('request-target', Buffer.from(merchant.sharedSecret, 'utf8'));
    const r = verifyHttpSignature(
      { method: 'POST', target: '/pts/v2/payments?x=1', headers, body },
      [merchant],
      now,
    );
    expect(r).toMatchObject({ verified: false, reason: 'signature does not verify' });
  });

  it('refuses a body that differs from the digest', () => {
    const r = verifyHttpSignature(signed({ body: Buffer.from('{"a":2}') }), [merchant], now);
    expect(r).toMatchObject({ verified: false, reason: 'digest does not match the body received' });
  });

  it('refuses a date more than five minutes away and accepts one within', () => {
    const late = new Date(now.getTime() - 5 * 60 * 1000 - 1000).toUTCString();
    expect(verifyHttpSignature(signed({}, late), [merchant], now).reason).toBe(
      'date is more than 5 minutes away from the gateway clock',
    );
    const near = new Date(now.getTime() - 4 * 60 * 1000).toUTCString();
    expect(verifyHttpSignature(signed({}, near), [merchant], now).verified).toBe(true);
  });

  it('checks the host header as received', () => {
    const req = signed();
    const r = verifyHttpSignature(
      { ...req, headers: { ...req.headers, host: 'apitest.cybersource.com' } },
      [merchant],
      now,
    );
    expect(r.verified).toBe(false);
  });

  it('refuses an unknown key id and a key of another merchant', () => {
    expect(verifyHttpSignature(signed(), [other], now).reason).toBe('unknown key id');
    const req = signed();
    const foreign = { ...req, headers: { ...req.headers, 'v-c-merchant-id': 'other' } };
    expect(verifyHttpSignature(foreign, [merchant, other], now).reason).toBe(
      'key id does not belong to v-c-merchant-id',
    );
  });

  it('accepts a meta key signing for a merchant of its portfolio', () => {
    const meta: MerchantKey = { ...merchant, merchantId: 'portfolio', metaKeyFor: ['testrest'] };
    expect(verifyHttpSignature(signed(), [meta], now)).toMatchObject({
      verified: true,
      merchantId: 'testrest',
    });
  });

  it('refuses a POST whose signed header list omits digest', () => {
    const headers = signRequest({
      method: 'GET',
      path: '/pts/v2/payments',
      host: 'h',
      merchant,
      date: now.toUTCString(),
    });
    const r = verifyHttpSignature(
      { method: 'POST', target: '/pts/v2/payments', headers, body },
      [merchant],
      now,
    );
    expect(r.reason).toBe('signed headers omit digest');
  });

  it('refuses a malformed signature header without throwing', () => {
    const req = signed();
    const r = verifyHttpSignature(
      { ...req, headers: { ...req.headers, signature: 'keyid=unquoted' } },
      [merchant],
      now,
    );
    expect(r).toMatchObject({ verified: false, reason: 'signature header is malformed' });
  });
});

function jwt(header: object, claims: object, signer: (data: Buffer) => Buffer): string {
  const h = Buffer.from(JSON.stringify(header)).toString('base64url');
  const p = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${h}.${p}.${signer(Buffer.from(`${h}.${p}`)).toString('base64url')}`;
}

describe('verifyJwt', () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const withCert: MerchantKey = {
    ...merchant,
    jwt: { kid: '7011', publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() },
  };
  const iat = Math.floor(now.getTime() / 1000);
  const claims = (extra: object = {}): object => ({
    iat,
    exp: iat + 120,
    jti: randomUUID(),
    iss: 'testrest',
    'v-c-merchant-id': 'testrest',
    'v-c-jwt-version': '2',
    'request-host': 'sandbox.test',
    'request-resource-path': '/pts/v2/payments',
    'request-method': 'POST',
    digest: createHash('sha256').update(body).digest('base64'),
    'digest-algorithm': 'SHA-256',
    ...extra,
  });
  const req: ReceivedRequest = {
    method: 'POST',
    target: '/pts/v2/payments',
    headers: { host: 'sandbox.test' },
    body,
  };
  const rs = (data: Buffer): Buffer => sign('RSA-SHA256', data, privateKey);
  const hs = (data: Buffer): Buffer =>
    createHmac('sha256', Buffer.from(merchant.sharedSecret, 'base64')).update(data).digest();

  it('accepts an RS256 v2 token once and refuses its replay', () => {
    const token = jwt({ alg: 'RS256', kid: '7011' }, claims(), rs);
    const seen = new Set<string>();
    expect(verifyJwt(req, token, [withCert], now, seen).verified).toBe(true);
    expect(verifyJwt(req, token, [withCert], now, seen).reason).toBe('jti replayed');
  });

  it('accepts an HS256 token keyed with the shared secret', () => {
    const token = jwt({ alg: 'HS256', kid: merchant.keyId }, claims(), hs);
    expect(verifyJwt(req, token, [merchant], now, new Set()).verified).toBe(true);
  });

  it.each([
    [{ 'request-resource-path': '/pts/v2/captures' }, 'request-resource-path does not match'],
    [{ 'v-c-jwt-version': '1' }, 'v-c-jwt-version is not "2"'],
    [{ exp: iat + 600 }, 'exp must be iat + 120'],
    [{ digest: 'AAAA' }, 'digest does not match the body received'],
    [{ iat: iat - 600, exp: iat - 480 }, 'iat is more than 5 minutes away'],
  ])('refuses claims %o', (extra, reason) => {
    const token = jwt({ alg: 'RS256', kid: '7011' }, claims(extra), rs);
    expect(verifyJwt(req, token, [withCert], now, new Set()).reason).toBe(reason);
  });

  it('refuses a token signed by another key and an unsupported algorithm', () => {
    const { privateKey: stranger } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const forged = jwt({ alg: 'RS256', kid: '7011' }, claims(), (d) => sign('RSA-SHA256', d, stranger));
    expect(verifyJwt(req, forged, [withCert], now, new Set()).reason).toBe('JWT signature does not verify');
    const none = jwt({ alg: 'none', kid: '7011' }, claims(), () => Buffer.alloc(0));
    expect(verifyJwt(req, none, [withCert], now, new Set()).verified).toBe(false);
  });
});
