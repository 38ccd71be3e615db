/**
 * HTTP-signature headers for requests *to* the sandbox, for its own tests, the benchmark and the admin tooling.
 * Written from reference/gateway.md §1 for this purpose only: the terminal's client signs with src/gateway, and the
 * official SDK test (test/integration/sandbox-sdk.test.ts) proves the verifier against an independent signer.
 */
import { createHash, createHmac } from 'node:crypto';
import type { MerchantKey } from './auth.js';

/** What is signed. */
export interface SignInput {
  method: string;
  /** Path with query string. */
  path: string;
  /** Host header value (host[:port]). */
  host: string;
  /** Exact body bytes (POST/PUT/PATCH). */
  body?: Uint8Array | string;
  merchant: MerchantKey;
  /** RFC 1123 date; now when absent. */
  date?: string;
}

/** The headers of a signed request (host, date, digest on body methods, v-c-merchant-id, signature). */
export function signRequest(input: SignInput): Record<string, string> {
  const method = input.method.toUpperCase();
  const date = input.date ?? new Date().toUTCString();
  const withBody = method === 'POST' || method === 'PUT' || method === 'PATCH';
  const headers: Record<string, string> = {
    host: input.host,
    date,
    'v-c-merchant-id': input.merchant.merchantId,
  };
  if (withBody)
    headers.digest = `SHA-256=${createHash('sha256')
      .update(input.body ?? '')
      .digest('base64')}`;
  const names = withBody
    ? ['host', 'date', 'request-target', 'digest', 'v-c-merchant-id']
    : ['host', 'date', 'request-target', 'v-c-merchant-id'];
  const text = names
    .map((n) =>
      n === 'request-target'
        ? `request-target: ${method.toLowerCase()} ${input.path}`
        : `${n}: ${headers[n] ?? ''}`,
    )
    .join('\n');
  const mac = createHmac('sha256', Buffer.from(input.merchant.sharedSecret, 'base64'))
    .update(text, 'utf8')
    .digest('base64');
  headers.signature = `keyid="${input.merchant.keyId}", algorithm="HmacSHA256", headers="${names.join(' ')}", signature="${mac}"`;
  return headers;
}
