import { createHmac } from 'node:crypto';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { GatewayAuthError } from '../errors.js';
import { createHttpSigner, digestHeader, signRequest, signingString } from './http-signature.js';

const require = createRequire(import.meta.url);

/** The official Node SDK's HTTP-signature code, run on the same inputs as ours: an independent implementation. */
const sdkToken = require('cybersource-rest-client/src/authentication/http/HTTPSigToken.js') as {
  getToken(config: unknown, logger: unknown, date: string): string;
};

const SECRET = 'yBJxy6LjM2TmcPGu+GaJrHtkke25fPpUX+UY6/L/1tE=';
const KEY_ID = '08c94330-f618-42a3-b09d-e1e43be5efda';
const DATE = 'Thu, 18 Jul 2019 00:18:03 GMT';

function sdkSignature(method: string, path: string, host: string, body: string): string {
  const config = {
    getRequestType: () => method,
    getMerchantKeyID: () => KEY_ID,
    getRequestHost: () => host,
    getRequestTarget: () => path,
    getRequestJsonData: () => body,
    getUseMetaKey: () => false,
    getMerchantID: () => 'testrest',
    getMerchantsecretKey: () => SECRET,
  };
  const logger = {
    info: () => undefined,
    error: (e: unknown) => {
      throw new Error(String(e));
    },
  };
  return sdkToken.getToken(config, logger, DATE);
}

describe('signRequest', () => {
  it.each([
    ['POST', '/pts/v2/payments', '{"clientReferenceInformation":{"code":"TC50171_3"}}'],
    [
      'PATCH',
      '/pts/v2/payments/7000000000000000000001',
      '{"orderInformation":{"amountDetails":{"additionalAmount":"2.00"}}}',
    ],
    ['GET', '/ipl/v2/payment-links?offset=0&limit=100', ''],
  ])('gives the same signature header as the official SDK for %s %s', (method, path, body) => {
    const ours = signRequest({
      method,
      path,
      host: 'apitest.cybersource.com',
      date: DATE,
      merchantId: 'testrest',
      keyId: KEY_ID,
      secretBase64: SECRET,
      ...(method === 'GET' ? {} : { body }),
    });
    // The SDK always writes the method in lower case in the request target, as we do.
    expect(ours.signature).toBe(sdkSignature(method.toLowerCase(), path, 'apitest.cybersource.com', body));
  });

  it('lists digest only for methods with a body and signs the lines in the order of the list', () => {
    const post = signingString({
      method: 'POST',
      path: '/p',
      host: 'h',
      date: DATE,
      merchantId: 'm',
      body: '{}',
    });
    expect(post.headerList).toBe('host date request-target digest v-c-merchant-id');
    expect(post.text).toBe(
      `host: h\ndate: ${DATE}\nrequest-target: post /p\ndigest: ${digestHeader('{}')}\nv-c-merchant-id: m`,
    );
    const get = signingString({ method: 'GET', path: '/p?x=1', host: 'h', date: DATE, merchantId: 'm' });
    expect(get.headerList).toBe('host date request-target v-c-merchant-id');
    expect(get.text).not.toContain('digest');
    expect(get.text).toContain('request-target: get /p?x=1');
  });

  it('keys the HMAC with the base64-decoded secret, not the base64 text', () => {
    const h = signRequest({
      method: 'GET',
      path: '/p',
      host: 'h',
      date: DATE,
      merchantId: 'm',
      keyId: 'k',
      secretBase64: SECRET,
    });
    const text = signingString({ method: 'GET', path: '/p', host: 'h', date: DATE, merchantId: 'm' }).text;
    const right = createHmac('sha256', Buffer.from(SECRET, 'base64')).update(text).digest('base64');
    const wrong = createHmac('sha256', SECRET).update(text).digest('base64');
    expect(h.signature).toContain(`signature="${right}"`);
    expect(h.signature).not.toContain(wrong);
  });

  it('hashes the exact body bytes for the digest (a plain SHA-256)', () => {
    expect(digestHeader('{"a":1}')).toBe('SHA-256=AVq9f1zFei3ZS3WQ8ErYCEJzkF7jPsXOvq5iJ2qX+GI=');
    expect(digestHeader(Buffer.from('{"a":1}'))).toBe(digestHeader('{"a":1}'));
  });

  it('refuses a shared secret that is not base64', () => {
    expect(() =>
      signRequest({
        method: 'GET',
        path: '/',
        host: 'h',
        date: DATE,
        merchantId: 'm',
        keyId: 'k',
        secretBase64: 'not base64!',
      }),
    ).toThrow(GatewayAuthError);
  });
});

describe('createHttpSigner and the values it sends', () => {
  it.each([
    ['a merchant id with a header line of its own', 'testrest\r\nx-injected: 1', KEY_ID],
    ['a merchant id with a line feed', 'testrest\nx', KEY_ID],
    ['a merchant id with a space', 'test rest', KEY_ID],
    ['a key id that ends the quoted keyid parameter', 'testrest', 'k", algorithm="none'],
    ['a key id with a backslash', 'testrest', 'k\\'],
    ['a key id with a line feed', 'testrest', 'k\nx'],
    ['an empty key id', 'testrest', ''],
  ])('refuses %s with GW_AUTH before anything is signed', (_, merchantId, keyId) => {
    expect(() => createHttpSigner(merchantId, keyId, SECRET)).toThrow(GatewayAuthError);
  });
});
