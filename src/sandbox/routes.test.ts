import { describe, expect, it } from 'vitest';
import { API_ROUTES, matchApiRoute, matchHostRoute } from './routes.js';

describe('matchApiRoute', () => {
  it.each([
    ['POST', '/pts/v2/payments', '/pts/v2/payments', {}],
    ['POST', '/pts/v2/reversals', '/pts/v2/reversals', {}],
    ['POST', '/pts/v2/voids', '/pts/v2/voids', {}],
    ['POST', '/pts/v2/credits', '/pts/v2/credits', {}],
    ['GET', '/pts/v2/captures/123', '/pts/v2/{collection}/{id}', { collection: 'captures', id: '123' }],
    ['PATCH', '/pts/v2/payments/123', '/pts/v2/payments/{id}', { id: '123' }],
    ['POST', '/pts/v2/refresh-payment-status/9', '/pts/v2/refresh-payment-status/{id}', { id: '9' }],
    ['POST', '/pts/v2/payments/1/captures', '/pts/v2/payments/{id}/captures', { id: '1' }],
    ['POST', '/pts/v2/payments/1/reversals', '/pts/v2/payments/{id}/reversals', { id: '1' }],
    [
      'POST',
      '/pts/v2/captures/1/refunds',
      '/pts/v2/{collection:payments|captures}/{id}/refunds',
      { collection: 'captures', id: '1' },
    ],
    [
      'POST',
      '/pts/v2/credits/1/voids',
      '/pts/v2/{collection:payments|captures|refunds|credits}/{id}/voids',
      { collection: 'credits', id: '1' },
    ],
    ['POST', '/vas/v1/currencyconversion', '/vas/v1/currencyconversion', {}],
    ['GET', '/ipl/v2/payment-links', '/ipl/v2/payment-links', {}],
    ['PATCH', '/ipl/v2/payment-links/L1', '/ipl/v2/payment-links/{id}', { id: 'L1' }],
  ])('routes %s %s to %s', (method, path, pattern, params) => {
    const m = matchApiRoute(method, path);
    expect(m?.route.pattern).toBe(pattern);
    expect(m?.params).toEqual(params);
  });

  it('decodes path parameters', () => {
    expect(matchApiRoute('GET', '/ipl/v2/payment-links/a%20b')?.params).toEqual({ id: 'a b' });
  });

  it('matches nothing for an unknown path, a wrong method or a collection a route does not list', () => {
    expect(matchApiRoute('POST', '/pts/v2/unknown')).toBeUndefined();
    expect(matchApiRoute('DELETE', '/pts/v2/payments')).toBeUndefined();
    expect(matchApiRoute('POST', '/pts/v2/credits/1/refunds')).toBeUndefined();
    expect(matchApiRoute('POST', '/pts/v2/reversals/1/voids')).toBeUndefined();
  });

  it('matches a literal route also written with empty segments or escapes (its segments decide, not its text)', () => {
    for (const path of ['/pts/v2/payments', '//pts/v2/payments', '/pts/v2/payments/', '/pts/v2/%70ayments'])
      expect(matchApiRoute('POST', path)?.route.pattern).toBe('/pts/v2/payments');
    expect(() => matchApiRoute('POST', '/pts/v2/%E0%A4%A')).toThrow(URIError);
  });

  it('matches the offer service on its exact path only (its header check keys on that path)', () => {
    expect(matchApiRoute('POST', '/vas/v1/currencyconversion/')).toBeUndefined();
    expect(matchApiRoute('POST', '//vas/v1/currencyconversion')).toBeUndefined();
  });

  it('lists each method and pattern once', () => {
    const keys = API_ROUTES.map((r) => `${r.method} ${r.pattern}`);
    expect(new Set(keys).size).toBe(keys.length);
  });
});

describe('matchHostRoute', () => {
  it('routes the admin endpoints, the OAuth pages and the hosted payment page', () => {
    expect(matchHostRoute('/__sandbox/ledger')).toEqual({ page: 'admin', params: {} });
    expect(matchHostRoute('/ebc2/oauth/authorize')?.page).toBe('oauth-consent');
    expect(matchHostRoute('/oauth2/v3/token')?.page).toBe('oauth-token');
    expect(matchHostRoute('/oauth/v3/token')?.page).toBe('oauth-token');
    expect(matchHostRoute('/pay/link%201')).toEqual({ page: 'payment-page', params: { linkId: 'link 1' } });
  });

  it('leaves every other path to the API', () => {
    expect(matchHostRoute('/pts/v2/payments')).toBeUndefined();
    expect(matchHostRoute('/pay/a/b')).toBeUndefined();
    expect(matchHostRoute('/pay/')).toBeUndefined();
    expect(matchHostRoute('/__sandbox')).toBeUndefined();
    expect(matchHostRoute('//pay/x')).toBeUndefined();
    expect(matchHostRoute('/oauth2/v3/token/')).toBeUndefined();
  });
});
