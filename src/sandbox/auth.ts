/**
 * Request authentication, written from reference/gateway.md §1 and independent of the client's signer (DESIGN.md:
 * the sandbox must never share signing code with the client). Every function here is pure: the server passes the
 * received headers, the exact body bytes and the sandbox clock.
 */
import { createHmac, createPublicKey, hash, timingSafeEqual, verify as verifySignature } from 'node:crypto';

/** A merchant the sandbox knows, with the key its requests are signed with. */
export interface MerchantKey {
  merchantId: string;
  /** Key id (`keyid` of the signature header; `kid` of an HS256 JWT). */
  keyId: string;
  /** Base64 shared secret, exactly as the merchant portal shows it. */
  sharedSecret: string;
  /**
   * A portfolio "meta key" (reference/gateway.md §1) also signs for these transacting merchants, named by the
   * `v-c-merchant-id` header.
   */
  metaKeyFor?: string[];
  /** PEM certificate or public key for RS256 JWTs, with the `kid` (certificate serial number) it is named by. */
  jwt?: { kid: string; publicKeyPem: string };
}

/** How a request proved who it is. */
export type AuthScheme = 'http-signature' | 'jwt' | 'oauth' | 'none';

/** The verdict on one request; `reason` says why verification failed (recorded in the ledger and the log). */
export interface AuthResult {
  scheme: AuthScheme;
  verified: boolean;
  merchantId?: string;
  reason?: string;
  /** OAuth only: the answer body when the token is expired or unknown (spec 000, Errors). */
  oauthError?: 'ACCESS_TOKEN_EXPIRED' | 'UNAUTHORIZED_PARTNER';
}

/** Allowed distance between the request date and the sandbox clock (reference/gateway.md §1: ±5 minutes). */
export const MAX_CLOCK_SKEW_MS = 5 * 60 * 1000;

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/** The signed header lists must name these (reference/gateway.md §1), `digest` on POST/PUT/PATCH. */
const SIGNED_WITH_BODY = ['host', 'v-c-merchant-id', 'digest'];
const SIGNED_WITHOUT_BODY = ['host', 'v-c-merchant-id'];

/** One `name="value"` parameter of a signature header and its separator; sticky, its lastIndex set before each use. */
const SIGNATURE_PARAMETER = /\s*([A-Za-z]+)\s*=\s*"([^"]*)"\s*(?:,|$)/y;

/** Parses `keyid="..", algorithm="..", headers="..", signature=".."`; undefined when malformed. */
export function parseSignatureHeader(header: string): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  const re = SIGNATURE_PARAMETER;
  let pos = 0;
  while (pos < header.length) {
    re.lastIndex = pos;
    const m = re.exec(header);
    if (!m) return undefined;
    const key = (m[1] ?? '').toLowerCase();
    if (key in out) return undefined;
    out[key] = m[2] ?? '';
    pos = re.lastIndex;
  }
  return out;
}

/**
 * Decoded HMAC keys by their base64 text: a merchant's secret is decoded once, not on every request it signs.
 * Bounded by the configured merchants (and the few secrets the tests make up).
 */
const DECODED_SECRETS = new Map<string, Buffer>();
const MAX_DECODED_SECRETS = 256;

function secretKey(base64: string): Buffer {
  let key = DECODED_SECRETS.get(base64);
  if (key === undefined) {
    key = Buffer.from(base64, 'base64');
    if (DECODED_SECRETS.size < MAX_DECODED_SECRETS) DECODED_SECRETS.set(base64, key);
  }
  return key;
}

function sha256Base64(body: Uint8Array): string {
  return hash('sha256', body, 'base64');
}

function equalText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function headerValue(
  headers: Readonly<Record<string, string | string[] | undefined>>,
  name: string,
): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

/** The last date header parsed and its time: the requests of one second carry the same text. */
let lastDateText = '';
let lastDateMs = Number.NaN;

function parseDateHeader(dateText: string): number {
  if (dateText !== lastDateText) {
    lastDateMs = Date.parse(dateText);
    lastDateText = dateText;
  }
  return lastDateMs;
}

function checkDate(dateText: string | undefined, now: Date): string | undefined {
  if (dateText === undefined) return 'date header missing';
  const t = parseDateHeader(dateText);
  if (Number.isNaN(t)) return 'date header is not an RFC 1123 date';
  if (Math.abs(t - now.getTime()) > MAX_CLOCK_SKEW_MS)
    return 'date is more than 5 minutes away from the gateway clock';
  return undefined;
}

/** What the verifiers need of a received request. */
export interface ReceivedRequest {
  method: string;
  /** Path with query string, exactly as received. */
  target: string;
  headers: Readonly<Record<string, string | string[] | undefined>>;
  body: Uint8Array;
}

/**
 * Verifies an HTTP signature (reference/gateway.md §1): known merchant and key, the signed header list covers host,
 * date (or v-c-date), request-target (with or without parentheses), v-c-merchant-id and, on POST/PUT/PATCH, digest;
 * the digest is the SHA-256 of the bytes received; the date is within ±5 minutes; the MAC is HMAC-SHA256 keyed with
 * the base64-decoded secret. The host line is rebuilt from the `host` header as received.
 */
export function verifyHttpSignature(
  req: ReceivedRequest,
  merchants: readonly MerchantKey[],
  now: Date,
): AuthResult {
  const fail = (reason: string, merchantId?: string): AuthResult => ({
    scheme: 'http-signature',
    verified: false,
    reason,
    ...(merchantId !== undefined ? { merchantId } : {}),
  });
  const merchantId = headerValue(req.headers, 'v-c-merchant-id');
  if (merchantId === undefined) return fail('v-c-merchant-id header missing');
  const sigHeader = headerValue(req.headers, 'signature');
  if (sigHeader === undefined) return fail('signature header missing', merchantId);
  const params = parseSignatureHeader(sigHeader);
  if (!params) return fail('signature header is malformed', merchantId);
  const { keyid, algorithm, headers: list, signature } = params;
  if (!keyid || !list || !signature)
    return fail('signature header lacks keyid, headers or signature', merchantId);
  if (algorithm !== undefined && algorithm !== 'HmacSHA256')
    return fail(`algorithm ${algorithm} is not HmacSHA256`, merchantId);
  const key = merchants.find((m) => m.keyId === keyid);
  if (!key) return fail('unknown key id', merchantId);
  if (key.merchantId !== merchantId && !key.metaKeyFor?.includes(merchantId))
    return fail('key id does not belong to v-c-merchant-id', merchantId);
  const names = list.trim().toLowerCase().split(/\s+/);
  const method = req.method.toUpperCase();
  const needs = BODY_METHODS.has(method) ? SIGNED_WITH_BODY : SIGNED_WITHOUT_BODY;
  for (const n of needs) if (!names.includes(n)) return fail(`signed headers omit ${n}`, merchantId);
  if (!names.includes('date') && !names.includes('v-c-date'))
    return fail('signed headers omit date', merchantId);
  if (!names.includes('request-target') && !names.includes('(request-target)'))
    return fail('signed headers omit request-target', merchantId);
  const dateName = names.includes('date') ? 'date' : 'v-c-date';
  const dateProblem = checkDate(headerValue(req.headers, dateName), now);
  if (dateProblem) return fail(dateProblem, merchantId);
  if (BODY_METHODS.has(method)) {
    const digest = headerValue(req.headers, 'digest');
    if (digest === undefined) return fail('digest header missing', merchantId);
    if (!equalText(digest, `SHA-256=${sha256Base64(req.body)}`))
      return fail('digest does not match the body received', merchantId);
  }
  const lines: string[] = [];
  for (const n of names) {
    if (n === 'request-target' || n === '(request-target)') {
      lines.push(`${n}: ${req.method.toLowerCase()} ${req.target}`);
      continue;
    }
    const v = headerValue(req.headers, n);
    if (v === undefined) return fail(`signed header ${n} missing`, merchantId);
    lines.push(`${n}: ${v}`);
  }
  const mac = createHmac('sha256', secretKey(key.sharedSecret))
    .update(lines.join('\n'), 'utf8')
    .digest('base64');
  if (!equalText(mac, signature)) return fail('signature does not verify', merchantId);
  return { scheme: 'http-signature', verified: true, merchantId };
}

function base64UrlJson(part: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return typeof v === 'object' && v !== null && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** True when `token` has the three-part shape of a JWS. */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token);
}

/**
 * Verifies a v2 JWT (reference/gateway.md §1): RS256 with the merchant's registered public key named by `kid`, or
 * HS256 keyed with the base64-decoded shared secret named by its key id; claims `iat` within ±5 minutes, `exp` =
 * iat + 120 and not passed, `v-c-jwt-version` "2", `v-c-merchant-id` known, request host, path and method equal to
 * the request, and on POST/PUT/PATCH the body digest. `seenJti` refuses a replayed token.
 */
export function verifyJwt(
  req: ReceivedRequest,
  token: string,
  merchants: readonly MerchantKey[],
  now: Date,
  seenJti: Set<string>,
): AuthResult {
  const fail = (reason: string, merchantId?: string): AuthResult => ({
    scheme: 'jwt',
    verified: false,
    reason,
    ...(merchantId !== undefined ? { merchantId } : {}),
  });
  const [h, p, s] = token.split('.');
  const header = h === undefined ? undefined : base64UrlJson(h);
  const claims = p === undefined ? undefined : base64UrlJson(p);
  if (!header || !claims || s === undefined) return fail('token is not a JWS');
  const merchantId = typeof claims['v-c-merchant-id'] === 'string' ? claims['v-c-merchant-id'] : undefined;
  if (merchantId === undefined) return fail('v-c-merchant-id claim missing');
  const kid = typeof header.kid === 'string' ? header.kid : undefined;
  const signed = Buffer.from(`${h}.${p}`, 'utf8');
  const sig = Buffer.from(s, 'base64url');
  if (header.alg === 'RS256') {
    const key = merchants.find((m) => m.jwt?.kid === kid);
    if (!key?.jwt) return fail('unknown certificate kid', merchantId);
    if (key.merchantId !== merchantId) return fail('certificate does not belong to the merchant', merchantId);
    let ok = false;
    try {
      ok = verifySignature('RSA-SHA256', signed, createPublicKey(key.jwt.publicKeyPem), sig);
    } catch {
      ok = false;
    }
    if (!ok) return fail('JWT signature does not verify', merchantId);
  } else if (header.alg === 'HS256') {
    const key = merchants.find((m) => m.keyId === kid);
    if (!key) return fail('unknown key id', merchantId);
    if (key.merchantId !== merchantId) return fail('key id does not belong to the merchant', merchantId);
    const mac = createHmac('sha256', secretKey(key.sharedSecret)).update(signed).digest();
    if (mac.length !== sig.length || !timingSafeEqual(mac, sig))
      return fail('JWT signature does not verify', merchantId);
  } else {
    return fail(`JWT algorithm ${String(header.alg)} is not accepted`, merchantId);
  }
  if (claims['v-c-jwt-version'] !== '2') return fail('v-c-jwt-version is not "2"', merchantId);
  const iat = claims.iat;
  const exp = claims.exp;
  if (typeof iat !== 'number' || typeof exp !== 'number')
    return fail('iat and exp must be numbers', merchantId);
  if (Math.abs(iat * 1000 - now.getTime()) > MAX_CLOCK_SKEW_MS)
    return fail('iat is more than 5 minutes away', merchantId);
  if (exp !== iat + 120) return fail('exp must be iat + 120', merchantId);
  if (exp * 1000 < now.getTime()) return fail('token expired', merchantId);
  const jti = claims.jti;
  if (typeof jti !== 'string' || jti.length === 0) return fail('jti missing', merchantId);
  if (seenJti.has(jti)) return fail('jti replayed', merchantId);
  const host = headerValue(req.headers, 'host');
  if (claims['request-host'] !== host) return fail('request-host does not match the host header', merchantId);
  if (claims['request-resource-path'] !== req.target)
    return fail('request-resource-path does not match', merchantId);
  if (
    typeof claims['request-method'] !== 'string' ||
    claims['request-method'].toUpperCase() !== req.method.toUpperCase()
  )
    return fail('request-method does not match', merchantId);
  if (BODY_METHODS.has(req.method.toUpperCase())) {
    if (claims['digest-algorithm'] !== 'SHA-256') return fail('digest-algorithm must be SHA-256', merchantId);
    if (typeof claims.digest !== 'string' || !equalText(claims.digest, sha256Base64(req.body)))
      return fail('digest does not match the body received', merchantId);
  }
  seenJti.add(jti);
  return { scheme: 'jwt', verified: true, merchantId };
}
