/**
 * Every route the sandbox answers, in one place: the gateway's API (authenticated, JSON, filed in the ledger;
 * reference/gateway.md §2) and the host's own pages (admin endpoints, OAuth consent and token, the hosted payment
 * page). The server matches a request here and dispatches to what the route names; nothing else routes.
 */
import type { AltPaymentService } from './alt-payments.js';
import type { PaymentService } from './payments.js';
import type { ApiCall, ApiOutcome } from './service-types.js';
import type { TimeoutRequests } from './timeout-requests.js';
import type { VoidCollection } from './validators/void.js';

/** The parameters a pattern's `{name}` segments captured, decoded. */
export type RouteParams = Readonly<Record<string, string>>;

/** What the API routes hand a request to. */
export interface ApiServices {
  payments: PaymentService;
  /** Alternative methods (spec 001): AP_SALE, AP_STATUS, AP_REFUND (alt-payments.ts). */
  altPayments: AltPaymentService;
  timeouts: TimeoutRequests;
  /** `POST /vas/v1/currencyconversion` (dcc.ts). */
  offer(call: ApiCall): ApiOutcome;
  createLink(call: ApiCall): ApiOutcome;
  listLinks(call: ApiCall, query: URLSearchParams): ApiOutcome;
  getLink(call: ApiCall, id: string): ApiOutcome;
  updateLink(call: ApiCall, id: string): ApiOutcome;
}

/** One route of the gateway's API. */
export interface ApiRoute {
  method: 'GET' | 'POST' | 'PATCH';
  /**
   * Literal segments and `{name}` parameters; `{name:a|b}` accepts the listed values only. Matched segment by
   * segment, empty segments ignored and each segment decoded, unless `exact`.
   */
  pattern: string;
  /** Matched against the path exactly as received (the offer service: its header check keys on that path). */
  exact?: boolean;
  answer(services: ApiServices, call: ApiCall, params: RouteParams, query: URLSearchParams): ApiOutcome;
}

/** The parameter of a matched route, which the pattern guarantees. */
function param(params: RouteParams, name: string): string {
  return params[name] ?? '';
}

/** The gateway API the sandbox answers (reference/gateway.md §2; spec 001 and 000). */
export const API_ROUTES: readonly ApiRoute[] = [
  // Authorization, pre-authorization, sale, account verification: the body decides the variant.
  {
    method: 'POST',
    pattern: '/pts/v2/payments',
    answer: (s, c) => (s.altPayments.claimsSale(c) ? s.altPayments.sale(c) : s.payments.createPayment(c)),
  },
  { method: 'POST', pattern: '/pts/v2/reversals', answer: (s, c) => s.timeouts.timeoutReversal(c) },
  { method: 'POST', pattern: '/pts/v2/voids', answer: (s, c) => s.timeouts.timeoutVoid(c) },
  { method: 'POST', pattern: '/pts/v2/credits', answer: (s, c) => s.payments.credit(c) },
  {
    method: 'GET',
    pattern: '/pts/v2/{collection}/{id}',
    answer: (s, c, p) => s.payments.get(c, param(p, 'collection'), param(p, 'id')),
  },
  {
    method: 'PATCH',
    pattern: '/pts/v2/payments/{id}',
    answer: (s, c, p) => s.payments.increment(c, param(p, 'id')),
  },
  {
    method: 'POST',
    pattern: '/pts/v2/refresh-payment-status/{id}',
    answer: (s, c, p) =>
      s.altPayments.owns(c, param(p, 'id'))
        ? s.altPayments.status(c, param(p, 'id'))
        : s.payments.refreshStatus(c, param(p, 'id')),
  },
  {
    method: 'POST',
    pattern: '/pts/v2/payments/{id}/captures',
    answer: (s, c, p) => s.payments.capture(c, param(p, 'id')),
  },
  {
    method: 'POST',
    pattern: '/pts/v2/payments/{id}/reversals',
    answer: (s, c, p) => s.payments.reverse(c, param(p, 'id')),
  },
  {
    method: 'POST',
    pattern: '/pts/v2/{collection:payments|captures}/{id}/refunds',
    answer: (s, c, p) =>
      param(p, 'collection') === 'payments' && s.altPayments.owns(c, param(p, 'id'))
        ? s.altPayments.refund(c, param(p, 'id'))
        : s.payments.refund(c, param(p, 'collection') as 'payments' | 'captures', param(p, 'id')),
  },
  {
    method: 'POST',
    pattern: '/pts/v2/{collection:payments|captures|refunds|credits}/{id}/voids',
    answer: (s, c, p) => s.payments.voidOne(c, param(p, 'collection') as VoidCollection, param(p, 'id')),
  },
  { method: 'POST', pattern: '/vas/v1/currencyconversion', exact: true, answer: (s, c) => s.offer(c) },
  { method: 'POST', pattern: '/ipl/v2/payment-links', answer: (s, c) => s.createLink(c) },
  { method: 'GET', pattern: '/ipl/v2/payment-links', answer: (s, c, _p, q) => s.listLinks(c, q) },
  { method: 'GET', pattern: '/ipl/v2/payment-links/{id}', answer: (s, c, p) => s.getLink(c, param(p, 'id')) },
  {
    method: 'PATCH',
    pattern: '/ipl/v2/payment-links/{id}',
    answer: (s, c, p) => s.updateLink(c, param(p, 'id')),
  },
];

/** The pages of the sandbox host itself, answered before (and without) the API's authentication. */
export type HostPage = 'admin' | 'oauth-consent' | 'oauth-token' | 'payment-page' | 'alt-payment-page';

/** One route of the host's own pages; any method (the page answers a wrong one itself). */
export interface HostRoute {
  /** Literal segments and `{name}` parameters, matched exactly; with `prefix`, the start of the path. */
  pattern: string;
  prefix?: boolean;
  page: HostPage;
}

/** The host's own pages. A path none of them matches goes to the API. */
export const HOST_ROUTES: readonly HostRoute[] = [
  // Test-only admin endpoints (admin.ts): ledger, clock, faults, reset.
  { pattern: '/__sandbox/', prefix: true, page: 'admin' },
  // Spec 000: the consent page of the OAuth partner flow, and the token endpoint under both documented paths.
  { pattern: '/ebc2/oauth/authorize', page: 'oauth-consent' },
  { pattern: '/oauth2/v3/token', page: 'oauth-token' },
  { pattern: '/oauth/v3/token', page: 'oauth-token' },
  // The hosted page of a payment link.
  { pattern: '/pay/{linkId}', page: 'payment-page' },
  // The page an alternative-method sale's paymentUrl leads to (alt-payments.ts).
  { pattern: '/ap/{saleId}', page: 'alt-payment-page' },
];

/** One segment of a pattern, read once: a literal, or a `{name}` parameter with the values it accepts, if listed. */
type PatternSegment = { literal: string } | { name: string; allowed: readonly string[] | undefined };

/** A pattern's segments, parsed once when the module loads (not on every request). */
function compilePattern(patternSegments: readonly string[]): readonly PatternSegment[] {
  return patternSegments.map((want) => {
    const named = /^\{(\w+)(?::([^}]+))?\}$/.exec(want);
    if (named?.[1] === undefined) return { literal: want };
    return { name: named[1], allowed: named[2]?.split('|') };
  });
}

/** Matches `segments` against a pattern's segments; the captured parameters, or undefined. */
function matchSegments(
  pattern: readonly PatternSegment[],
  segments: readonly string[],
  alreadyDecoded: boolean,
): RouteParams | undefined {
  if (pattern.length !== segments.length) return undefined;
  let params: Record<string, string> | undefined;
  for (let i = 0; i < segments.length; i++) {
    const want = pattern[i];
    const got = segments[i] ?? '';
    if (want === undefined) return undefined;
    if ('literal' in want) {
      if (want.literal !== got) return undefined;
      continue;
    }
    if (got === '') return undefined;
    const value = alreadyDecoded ? got : decodeURIComponent(got);
    if (want.allowed !== undefined && !want.allowed.includes(value)) return undefined;
    params ??= {};
    params[want.name] = value;
  }
  return params ?? {};
}

/**
 * Each API route with its pattern's segments (empty segments ignored, as the paths' are), and whether they are all
 * literal: a path equal to such a pattern matches it without being split (the usual authorization).
 */
const COMPILED_API_ROUTES = API_ROUTES.map((route) => {
  const segments = compilePattern(route.pattern.split('/').filter(Boolean));
  return { route, segments, literal: segments.every((p) => 'literal' in p) };
});

/**
 * Each host route with its pattern's segments (matched exactly: empty segments count), and the pattern up to its first
 * parameter, which a path it matches begins with (a path that does not is not split for it).
 */
const COMPILED_HOST_ROUTES = HOST_ROUTES.map((route) => {
  const brace = route.pattern.indexOf('{');
  return {
    route,
    segments: compilePattern(route.pattern.split('/')),
    head: brace < 0 ? route.pattern : route.pattern.slice(0, brace),
  };
});

/** A matched API route with its parameters. */
export interface ApiMatch {
  route: ApiRoute;
  params: RouteParams;
}

/**
 * The API route of `method` and `path` (path without query), or undefined (the server answers 404). Segments are
 * decoded as the sandbox always matched them: `%` escapes of a malformed path throw (a 500, as before).
 */
export function matchApiRoute(method: string, path: string): ApiMatch | undefined {
  let segments: string[] | undefined;
  for (const { route, segments: pattern, literal } of COMPILED_API_ROUTES) {
    if (route.method !== method) continue;
    if (route.exact) {
      if (path === route.pattern) return { route, params: {} };
      continue;
    }
    if (literal && path === route.pattern) return { route, params: {} };
    segments ??= path.split('/').filter(Boolean).map(decodeURIComponent);
    const params = matchSegments(pattern, segments, true);
    if (params) return { route, params };
  }
  return undefined;
}

/** A matched host page with its parameters. */
export interface HostMatch {
  page: HostPage;
  params: RouteParams;
}

/** The host page `path` names, or undefined when the path belongs to the API. */
export function matchHostRoute(path: string): HostMatch | undefined {
  let segments: string[] | undefined;
  for (const { route, segments: pattern, head } of COMPILED_HOST_ROUTES) {
    if (route.prefix) {
      if (path.startsWith(route.pattern)) return { page: route.page, params: {} };
      continue;
    }
    if (!path.startsWith(head)) continue;
    segments ??= path.split('/');
    const params = matchSegments(pattern, segments, false);
    if (params) return { page: route.page, params };
  }
  return undefined;
}
