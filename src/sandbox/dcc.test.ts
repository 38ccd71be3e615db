import { describe, expect, it } from 'vitest';
import type { AuthResult } from './auth.js';
import { convertAtRate, isSignatureAuthorization, offerHeadersProblem } from './dcc.js';
import { signRequest } from './request-signer.js';

const MERCHANT = {
  merchantId: 'testrest',
  keyId: '08c94330-f618-42a3-b09d-e1e43be5efda',
  sharedSecret: 'yBJxy6LjM2TmcPGu+GaJrHtkke25fPpUX+UY6/L/1tE=',
};
const SIGNED: AuthResult = { scheme: 'http-signature', verified: true, merchantId: 'testrest' };

function signed(): Record<string, string> {
  return signRequest({
    method: 'POST',
    path: '/vas/v1/currencyconversion',
    host: 'localhost:1',
    body: '{}',
    merchant: MERCHANT,
    date: 'Thu, 18 Jul 2019 00:18:03 GMT',
  });
}

function jwtWithKid(kid: string): string {
  const part = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url');
  return `${part({ alg: 'HS256', typ: 'JWT', kid })}.${part({ iat: 1 })}.c2ln`;
}

describe('offerHeadersProblem (spec 001: DCC offer calls require the Authorization and keyId headers)', () => {
  it('accepts a signed call that repeats its signature in Authorization and names its key id', () => {
    const h = signed();
    expect(
      offerHeadersProblem({ ...h, authorization: `Signature ${h.signature}`, keyid: MERCHANT.keyId }, SIGNED),
    ).toBeUndefined();
  });

  it('refuses a signed call without Authorization', () => {
    expect(offerHeadersProblem({ ...signed(), keyid: MERCHANT.keyId }, SIGNED)).toMatch(/Authorization/);
  });

  it('refuses a signed call without keyId', () => {
    const h = signed();
    expect(offerHeadersProblem({ ...h, authorization: `Signature ${h.signature}` }, SIGNED)).toMatch(
      /keyId header/,
    );
  });

  it("refuses a keyId that is not the signature's key id", () => {
    const h = signed();
    expect(
      offerHeadersProblem({ ...h, authorization: `Signature ${h.signature}`, keyid: 'other-key' }, SIGNED),
    ).toMatch(/key id/);
  });

  it('refuses an Authorization that is not the signature of the request', () => {
    const h = signed();
    const other = h.signature!.replace(/signature="[^"]+"/, 'signature="AAAA"');
    expect(
      offerHeadersProblem({ ...h, authorization: `Signature ${other}`, keyid: MERCHANT.keyId }, SIGNED),
    ).toMatch(/signature of the request/);
    expect(
      offerHeadersProblem({ ...h, authorization: 'Basic dXNlcjpwYXNz', keyid: MERCHANT.keyId }, SIGNED),
    ).toMatch(/Signature scheme/);
  });

  it("asks a JWT caller for keyId = the token's kid", () => {
    const jwt: AuthResult = { scheme: 'jwt', verified: true, merchantId: 'testrest' };
    const authorization = `Bearer ${jwtWithKid('serial-42')}`;
    expect(offerHeadersProblem({ authorization, keyid: 'serial-42' }, jwt)).toBeUndefined();
    expect(offerHeadersProblem({ authorization }, jwt)).toMatch(/keyId header/);
    expect(offerHeadersProblem({ authorization, keyid: 'serial-43' }, jwt)).toMatch(/kid/);
  });

  it('asks no keyId of an OAuth access token, which no merchant key made', () => {
    const oauth: AuthResult = { scheme: 'oauth', verified: true, merchantId: 'testrest' };
    expect(offerHeadersProblem({ authorization: 'Bearer opaque-token' }, oauth)).toBeUndefined();
  });

  it('recognises the Signature authentication scheme only', () => {
    expect(isSignatureAuthorization('Signature keyid="k", signature="s"')).toBe(true);
    expect(isSignatureAuthorization('signature keyid="k"')).toBe(true);
    expect(isSignatureAuthorization('Bearer abc')).toBe(false);
    expect(isSignatureAuthorization('Signature')).toBe(false);
  });
});

describe('convertAtRate', () => {
  it('rounds half up in the target exponent', () => {
    // 20.00 EUR × 1.120388 = 22.40776 → 22.41 USD; 10.00 EUR → 11.20388 → 11.20 USD.
    expect(convertAtRate(2000, 'EUR', 'USD', '1.120388')).toBe(2241);
    expect(convertAtRate(1000, 'EUR', 'USD', '1.120388')).toBe(1120);
    // To a currency without minor units: 12.50 EUR × 167.01795 = 2087.72 → 2088 JPY.
    expect(convertAtRate(1250, 'EUR', 'JPY', '167.01795')).toBe(2088);
    // Exactly half a unit rounds up: 0.05 EUR × 10 = 0.5 JPY → 1.
    expect(convertAtRate(5, 'EUR', 'JPY', '10')).toBe(1);
  });
});
