/**
 * A minimal HTTP-signed JSON client of the sandbox, for its own tests (a `testing/` folder: not built, not packaged).
 * The terminal never uses it (its client is src/gateway).
 */
import type { MerchantKey } from '../auth.js';
import { signRequest } from '../request-signer.js';
import { DEMO_MERCHANT } from '../server.js';

/** One answer: HTTP status and parsed JSON body (`{}` when the body is empty or not JSON). */
export interface SignedAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** Sends signed JSON requests to `baseUrl`. */
export interface SignedClient {
  send(
    method: string,
    path: string,
    body?: unknown,
    extraHeaders?: Record<string, string>,
  ): Promise<SignedAnswer>;
}

/** `clock` dates the requests (tests that advance the sandbox clock advance this one too). */
export function createSignedClient(
  baseUrl: string,
  merchant: MerchantKey = DEMO_MERCHANT,
  clock: () => Date = () => new Date(),
): SignedClient {
  const host = new URL(baseUrl).host;
  return {
    async send(method, path, body, extraHeaders = {}) {
      const upper = method.toUpperCase();
      const text = body === undefined ? '' : JSON.stringify(body);
      const headers = signRequest({
        method: upper,
        path,
        host,
        body: text,
        merchant,
        date: clock().toUTCString(),
      });
      // spec 001: DCC offer calls also carry `Authorization` and `keyId` (the signature, and its key id).
      const offer: Record<string, string> =
        path === '/vas/v1/currencyconversion'
          ? { authorization: `Signature ${headers.signature ?? ''}`, keyid: merchant.keyId }
          : {};
      const res = await fetch(`${baseUrl}${path}`, {
        method: upper,
        headers: { ...headers, ...offer, 'content-type': 'application/json', ...extraHeaders },
        ...(upper === 'GET' ? {} : { body: text }),
      });
      const raw = await res.text();
      let parsed: unknown = {};
      try {
        parsed = raw ? JSON.parse(raw) : {};
      } catch {
        parsed = {};
      }
      const isObject = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed);
      return { status: res.status, body: isObject ? (parsed as Record<string, unknown>) : {} };
    },
  };
}
