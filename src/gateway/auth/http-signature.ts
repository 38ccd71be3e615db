import { createHmac, createSecretKey, hash } from 'node:crypto';
import { GatewayAuthError } from '../errors.js';

/** Inputs of {@link signRequest}: everything that goes into the signed string, and the key. */
export interface SignRequestInput {
  /** HTTP method; compared case-insensitively. */
  method: string;
  /** Path with query string exactly as sent, e.g. `/ipl/v2/payment-links?offset=0&limit=100`. */
  path: string;
  /** Bare host as sent in the `host` header: no scheme; port only when not the default of the scheme. */
  host: string;
  /**
   * The RFC 1123 date, read once by the caller: the same string must be signed and sent (reference/gateway.md §1;
   * reading the clock twice fails with 401 when a second ticks in between).
   */
  date: string;
  /** Value of `v-c-merchant-id`: the transacting merchant (also with a portfolio "meta key"). */
  merchantId: string;
  /** Key id of the shared secret (the `keyid` parameter). */
  keyId: string;
  /** The shared secret as issued: base64 text. It is base64-decoded before use as the HMAC key. */
  secretBase64: string;
  /** The exact body bytes sent (POST, PUT, PATCH). A string is taken as its UTF-8 bytes. */
  body?: Buffer | string;
}

/**
 * The headers that authenticate one request (names in lower case). A type alias rather than an interface so that it
 * is assignable to the `Record<string, string>` of headers sent, without a copy.
 */
export type SignedHeaders = {
  host: string;
  date: string;
  /** `SHA-256=<base64>`; present on POST, PUT and PATCH only. */
  digest?: string;
  'v-c-merchant-id': string;
  signature: string;
};

const METHODS_WITH_DIGEST = new Set(['post', 'put', 'patch']);
const EMPTY = Buffer.alloc(0);
const WITH_DIGEST = 'host date request-target digest v-c-merchant-id';
const WITHOUT_DIGEST = 'host date request-target v-c-merchant-id';

/** `SHA-256=<base64 of the SHA-256 of the bytes>`: a plain hash of the exact bytes sent, not an HMAC (§1). */
export function digestHeader(body: Buffer | string): string {
  // The one-shot hash: no Hash object per request (a string is hashed as its UTF-8 bytes, as Hash.update does).
  return `SHA-256=${hash('sha256', body, 'base64')}`;
}

/**
 * Decodes the shared secret. Base64 that does not round-trip (wrong alphabet, stray characters) is refused rather
 * than silently keyed with garbage: the gateway would answer 401 with no hint why.
 */
export function decodeSharedSecret(secretBase64: string): Buffer {
  const text = secretBase64.trim();
  const key = Buffer.from(text, 'base64');
  const canonical = key.toString('base64').replace(/=+$/, '');
  if (key.length === 0 || canonical !== text.replace(/=+$/, '')) {
    throw new GatewayAuthError('the shared secret is not base64 text');
  }
  return key;
}

/**
 * The string that is signed: one `name: value` line per entry of the header list, in order, joined by `\n`, no
 * trailing newline; the request-target line is the lower-case method and the path with its query (§1).
 */
export function signingString(input: Omit<SignRequestInput, 'keyId' | 'secretBase64'>): {
  headerList: string;
  text: string;
  digest?: string;
} {
  const { text, digest } = signedLines(input, `\nv-c-merchant-id: ${input.merchantId}`);
  return digest === undefined
    ? { headerList: WITHOUT_DIGEST, text }
    : { headerList: WITH_DIGEST, text, digest };
}

/** The lines of {@link signingString}, and the digest among them; `merchantLine` is the last one with its newline. */
function signedLines(
  input: Pick<SignRequestInput, 'method' | 'path' | 'host' | 'date' | 'body'>,
  merchantLine: string,
): { text: string; digest?: string } {
  const method = input.method.toLowerCase();
  const text = `host: ${input.host}\ndate: ${input.date}\nrequest-target: ${method} ${input.path}`;
  if (!METHODS_WITH_DIGEST.has(method)) return { text: text + merchantLine };
  const digest = digestHeader(input.body ?? EMPTY);
  return { text: `${text}\ndigest: ${digest}${merchantLine}`, digest };
}

/**
 * Refuses a merchant id or key id that cannot be sent as it is signed: it must be printable ASCII without spaces,
 * quotes or backslashes. A CR or LF would start a header line of its own (undici refuses such a header, and the
 * request would fail as if it may have been sent), a quote or backslash would end or escape the quoted `keyid`
 * parameter of the signature header, a space makes two words of one value. Checked once, when a signer is made.
 * @throws GatewayAuthError naming `what` (never the value: it may be a key).
 */
export function assertSignedIdentity(what: 'merchant id' | 'key id', value: string): void {
  if (!/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(value)) {
    throw new GatewayAuthError(
      `the ${what} is empty or holds a character a signed header cannot carry (printable ASCII without spaces, quotes or backslashes)`,
    );
  }
}

/** Signs requests for one key: the secret is decoded and checked once, not per request. */
export type HttpSigner = (
  request: Omit<SignRequestInput, 'merchantId' | 'keyId' | 'secretBase64'>,
) => SignedHeaders;

/**
 * A signer bound to one merchant and key (the authenticator's hot path): same output as {@link signRequest}, with
 * the key decoded once and the signed string built in one pass.
 * @throws GatewayAuthError when the secret is not base64 text, or the merchant id or key id cannot be sent
 *   ({@link assertSignedIdentity}).
 */
export function createHttpSigner(merchantId: string, keyId: string, secretBase64: string): HttpSigner {
  assertSignedIdentity('merchant id', merchantId);
  assertSignedIdentity('key id', keyId);
  const key = createSecretKey(decodeSharedSecret(secretBase64));
  // What does not change between requests is built once: the signature parameters before the MAC, and the last line
  // of the signed string.
  const prefixWithDigest = `keyid="${keyId}", algorithm="HmacSHA256", headers="${WITH_DIGEST}", signature="`;
  const prefixWithoutDigest = `keyid="${keyId}", algorithm="HmacSHA256", headers="${WITHOUT_DIGEST}", signature="`;
  const merchant = `\nv-c-merchant-id: ${merchantId}`;
  return (input) => {
    const { host, date } = input;
    const { text, digest } = signedLines(input, merchant);
    const mac = createHmac('sha256', key).update(text, 'utf8').digest('base64');
    return digest === undefined
      ? { host, date, 'v-c-merchant-id': merchantId, signature: `${prefixWithoutDigest}${mac}"` }
      : { host, date, digest, 'v-c-merchant-id': merchantId, signature: `${prefixWithDigest}${mac}"` };
  };
}

/**
 * Signs one request with the HTTP-signature scheme of reference/gateway.md §1 (HMAC-SHA256 keyed with the decoded
 * shared secret) and returns every header that authenticates it. Pure: the caller supplies the date string and sends
 * exactly the returned headers with exactly the bytes hashed.
 */
export function signRequest(input: SignRequestInput): SignedHeaders {
  return createHttpSigner(input.merchantId, input.keyId, input.secretBase64)(input);
}
