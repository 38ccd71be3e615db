import QRCode from 'qrcode';
import { describe, expect, it } from 'vitest';
import {
  hostedPageOriginsOf,
  hostedPageUrlProblem,
  linkPath,
  MAX_HOSTED_PAGE_URL,
  parseCreatedPaymentLink,
  parsePaymentLink,
  parsePaymentLinkPage,
  type PaymentLinkInput,
} from './payment-links.js';

const GATEWAY = hostedPageOriginsOf('https://api.gateway.example');

describe('the URL of a hosted payment page', () => {
  it('takes https URLs, and plain http only on this machine (the embedded sandbox)', () => {
    for (const url of [
      'https://pay.example/L1',
      'https://businesscenter.example/paylink/abc?x=1#y',
      'http://127.0.0.1:41234/pay/202611241305N0042',
      'http://localhost:8080/pay/L1',
      'http://[::1]:8080/pay/L1',
    ])
      expect(hostedPageUrlProblem(url), url).toBeUndefined();
  });

  it('refuses what a customer must not be sent to, or what cannot be drawn', () => {
    for (const url of [
      'http://pay.example/L1',
      'http://127.0.0.1.evil.example/pay',
      'ftp://pay.example/L1',
      'javascript:alert(1)',
      'https://user:secret@pay.example/L1',
      'https://pay.example/L 1',
      'https://pay.example/ü',
      'https://pay.example/L1\n',
      'pay.example/L1',
      `https://pay.example/${'x'.repeat(MAX_HOSTED_PAGE_URL)}`,
    ])
      expect(hostedPageUrlProblem(url), url).toBeDefined();
  });

  it('bounds the length so that the QR code always fits at error correction M', () => {
    const longest = `https://pay.example/${'x'.repeat(MAX_HOSTED_PAGE_URL - 20)}`;
    expect(longest).toHaveLength(MAX_HOSTED_PAGE_URL);
    expect(hostedPageUrlProblem(longest)).toBeUndefined();
    expect(QRCode.create(longest, { errorCorrectionLevel: 'M' }).version).toBeLessThanOrEqual(18);
  });
});

describe("the host of a payment link's hosted page", () => {
  it("is by default the gateway's own host and port or a host of its domain, https only unless the gateway is plain http on this machine", () => {
    expect(GATEWAY).toEqual({ hosts: ['api.gateway.example', '*.gateway.example'], plainHttp: false });
    for (const url of [
      'https://api.gateway.example/pay/L1',
      'https://api.gateway.example:443/pay/L1',
      // The gateway's pages on another host of its own domain.
      'https://pay.gateway.example/pay/L1',
      'https://sub.api.gateway.example/pay/L1',
    ])
      expect(hostedPageUrlProblem(url, GATEWAY), url).toBeUndefined();
    // A gateway named by a domain of two labels: its host only (its parent is a top-level domain).
    expect(hostedPageOriginsOf('https://gateway.example:8443').hosts).toEqual(['gateway.example:8443']);
    for (const url of [
      'https://pay.attacker.example/pay/L1',
      'https://api.gateway.example.attacker.example/pay/L1',
      'https://gateway.example/pay/L1',
      'https://evilgateway.example/pay/L1',
      'https://pay.gateway.example:8443/pay/L1',
      'https://api.gateway.example:8443/pay/L1',
      'https://api.gateway.example./pay/L1',
      'https://user@api.gateway.example/pay/L1',
      'http://api.gateway.example/pay/L1',
      // Loopback http is the sandbox's page: not from a remote gateway.
      'http://127.0.0.1:8080/pay/L1',
      'http://localhost/pay/L1',
    ])
      expect(hostedPageUrlProblem(url, GATEWAY), url).toBeDefined();
    const sandbox = hostedPageOriginsOf('http://127.0.0.1:41234');
    expect(sandbox).toEqual({ hosts: ['127.0.0.1:41234'], plainHttp: true });
    expect(hostedPageUrlProblem('http://127.0.0.1:41234/pay/L1', sandbox)).toBeUndefined();
    for (const url of [
      'http://127.0.0.1:41235/pay/L1',
      'http://127.0.0.1/pay/L1',
      'http://localhost:41234/pay/L1',
      'http://u:p@127.0.0.1:41234/pay/L1',
    ])
      expect(hostedPageUrlProblem(url, sandbox), url).toBeDefined();
  });

  it('is the host that every reader of the QR code finds in it, not only the URL standard (a backslash)', () => {
    // A reader of RFC 3986 (urllib, android.net.Uri, a scanner app's preview): the authority runs to the first `/`, `?`
    // or `#`, and its host follows the last `@`.
    const rfc3986Host = (url: string): string => {
      const authority = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(url)?.[1] ?? '';
      return authority.slice(authority.lastIndexOf('@') + 1).replace(/:\d*$/, '');
    };
    for (const url of [
      'https://api.gateway.example\\@attacker.example/pay/L1',
      'https://api.gateway.example:443\\@attacker.example/pay/L1',
      'https://pay.gateway.example\\\\@attacker.example/',
    ]) {
      // The URL standard reads the gateway's host; another reader goes to the attacker's.
      expect(new URL(url).hostname, url).not.toBe('attacker.example');
      expect(rfc3986Host(url), url).toBe('attacker.example');
      expect(hostedPageUrlProblem(url, GATEWAY), url).toBeDefined();
      expect(hostedPageUrlProblem(url), url).toBeDefined();
    }
    // Nor any other character no URI holds (RFC 3986 §2), which readers mend each in their own way.
    for (const url of [
      'https://pay.gateway.example/a"b',
      'https://pay.gateway.example/{L1}',
      'https://pay.gateway.example/a|b',
    ])
      expect(hostedPageUrlProblem(url, GATEWAY), url).toBeDefined();
  });

  it('is, when configured, a listed host exactly, or a host below a listed `*.` domain, on the port listed', () => {
    const origins = hostedPageOriginsOf('https://api.gateway.example', [
      'pay.gateway.example',
      '*.links.example',
      'pages.example:8443',
      '[::1]:9000',
    ]);
    for (const url of [
      'https://pay.gateway.example/L1',
      'https://a.links.example/L1',
      'https://a.b.links.example/L1',
      'https://pages.example:8443/L1',
      'https://[::1]:9000/L1',
    ])
      expect(hostedPageUrlProblem(url, origins), url).toBeUndefined();
    for (const url of [
      // The configured list replaces the default.
      'https://api.gateway.example/L1',
      'https://links.example/L1',
      'https://evillinks.example/L1',
      'https://a.links.example.evil/L1',
      'https://pages.example/L1',
      'https://pay.gateway.example:8443/L1',
      'https://[::1]/L1',
    ])
      expect(hostedPageUrlProblem(url, origins), url).toBeDefined();
  });

  it('refuses a create answered with a page elsewhere as an undocumented answer of unknown outcome, and an unreadable one as unreadable', () => {
    const requested: PaymentLinkInput = {
      linkType: 'PURCHASE',
      purchaseNumber: 'PT000001_A',
      currency: 'GBP',
      totalAmountMinor: 450,
      lineItems: [{ productName: 'Parking', unitPriceMinor: 450 }],
    };
    const answer = (paymentLink: string) => ({
      id: 'PT000001_A',
      status: 'ACTIVE',
      purchaseInformation: { purchaseNumber: 'PT000001_A', paymentLink },
    });
    expect(
      parseCreatedPaymentLink(answer('https://api.gateway.example/pay/A'), requested, GATEWAY).paymentLink,
    ).toBe('https://api.gateway.example/pay/A');
    expect(() =>
      parseCreatedPaymentLink(answer('https://pay.attacker.example/pay/A'), requested, GATEWAY),
    ).toThrow(expect.objectContaining({ code: 'GW_UNDOCUMENTED', outcomeUnknown: true }));
    expect(() => parseCreatedPaymentLink(answer('javascript:alert(1)'), requested, GATEWAY)).toThrow(
      expect.objectContaining({ code: 'GW_PARSE', outcomeUnknown: true }),
    );
    // A read of the link keeps it, without a page to show.
    expect(
      parsePaymentLink(answer('https://pay.attacker.example/pay/A'), GATEWAY).paymentLink,
    ).toBeUndefined();
  });
});

describe('a page of the list of payment links', () => {
  it('lists every link when one of them has an amount the terminal cannot read (that one without its amount)', () => {
    const link = (id: string, amountDetails: Record<string, unknown>) => ({
      id,
      status: 'ACTIVE',
      purchaseInformation: { purchaseNumber: id },
      orderInformation: {
        amountDetails,
        lineItems: [{ productName: 'Parking', unitPrice: amountDetails.totalAmount }],
      },
    });
    for (const odd of [
      { totalAmount: '1.005', currency: 'GBP' },
      { totalAmount: '-1.00', currency: 'GBP' },
      { totalAmount: 1e17, currency: 'GBP' },
      { totalAmount: '1.00', currency: 'XYZ' },
      { totalAmount: '1.00', currency: 'gbp' },
    ]) {
      const page = parsePaymentLinkPage(
        {
          totalLinks: 2,
          links: [link('PT000001_A', { totalAmount: '4.50', currency: 'GBP' }), link('OTHER_B', odd)],
        },
        GATEWAY,
      );
      expect(
        page.links.map((l) => l.id),
        JSON.stringify(odd),
      ).toEqual(['PT000001_A', 'OTHER_B']);
      expect(page.links[0]).toMatchObject({ totalAmountMinor: 450, currency: 'GBP' });
      expect(page.links[1]?.totalAmountMinor).toBeUndefined();
      expect(page.links[1]?.lineItems[0]?.unitPriceMinor).toBeUndefined();
    }
  });

  it('still refuses a single link read with an amount the terminal cannot read (its update must repeat it)', () => {
    expect(() =>
      parsePaymentLink(
        {
          id: 'PT000001_A',
          status: 'ACTIVE',
          orderInformation: { amountDetails: { totalAmount: '1.005', currency: 'GBP' } },
        },
        GATEWAY,
      ),
    ).toThrow(expect.objectContaining({ code: 'GW_PARSE' }));
  });
});

describe('the path of a payment link', () => {
  it('is the link id as one path segment, or refused when the id could name another resource', () => {
    expect(linkPath('PT000001_202611N2413050005')).toBe('/ipl/v2/payment-links/PT000001_202611N2413050005');
    expect(linkPath('PARK-1.2')).toBe('/ipl/v2/payment-links/PARK-1.2');
    for (const id of [
      '',
      '.',
      '..',
      '...',
      '../captures',
      'a/b',
      'a?b',
      'a#b',
      'a%2Fb',
      'a\\b',
      'x'.repeat(65),
    ])
      expect(() => linkPath(id), id).toThrow(expect.objectContaining({ code: 'GW_INVALID_REQUEST' }));
    // Each of them, as the client would send it, stays on the link's own resource.
    for (const id of ['PT000001_T-1', 'a.b', '.a', 'a.'])
      expect(new URL(linkPath(id), 'https://gateway.example').pathname, id).toBe(
        `/ipl/v2/payment-links/${id}`,
      );
  });
});

describe('the values of a payment link the terminal keeps, shows or repeats', () => {
  const link = (fields: { id?: unknown; status?: unknown; item?: Record<string, unknown> }) => ({
    id: fields.id ?? 'PT000001_A',
    status: fields.status ?? 'ACTIVE',
    orderInformation: {
      amountDetails: { totalAmount: '4.50', currency: 'GBP' },
      lineItems: [{ productName: 'Parking', unitPrice: '4.50', ...fields.item }],
    },
  });

  it('an id that is no link id: a list leaves the link out, a single link is unreadable (GW_PARSE)', () => {
    for (const id of ['L'.repeat(200), 'two words', '..', 42]) {
      const page = parsePaymentLinkPage({ totalLinks: 2, links: [link({}), link({ id })] }, GATEWAY);
      expect(
        page.links.map((l) => l.id),
        String(id),
      ).toEqual(['PT000001_A']);
      expect(() => parsePaymentLink(link({ id }), GATEWAY), String(id)).toThrow(
        expect.objectContaining({ code: 'GW_PARSE' }),
      );
    }
  });

  it('a quantity that is no count of items: left out of a list item, unreadable in a single link', () => {
    expect(parsePaymentLink(link({ item: { quantity: 3 } }), GATEWAY).lineItems[0]).toMatchObject({
      quantity: 3,
    });
    for (const quantity of [1e12, -1, 0, 1.5, '3', 2 ** 53]) {
      const page = parsePaymentLinkPage({ links: [link({ item: { quantity } })] }, GATEWAY);
      expect(page.links[0]?.lineItems[0], String(quantity)).not.toHaveProperty('quantity');
      expect(() => parsePaymentLink(link({ item: { quantity } }), GATEWAY), String(quantity)).toThrow(
        expect.objectContaining({ code: 'GW_PARSE' }),
      );
    }
  });

  it('a text longer than a line item holds: left out of a list item, unreadable in a single link', () => {
    const long = 'P'.repeat(10_000);
    for (const item of [{ productName: long }, { productDescription: long }, { productSku: long }]) {
      const page = parsePaymentLinkPage({ links: [link({ item })] }, GATEWAY);
      expect(JSON.stringify(page.links[0]), Object.keys(item)[0]).not.toContain('PPPPPPPPPP');
      expect(() => parsePaymentLink(link({ item }), GATEWAY), Object.keys(item)[0]).toThrow(
        expect.objectContaining({ code: 'GW_PARSE' }),
      );
    }
  });

  it('a status that is no code reads as UNKNOWN', () => {
    expect(parsePaymentLink(link({ status: 'S'.repeat(10_000) }), GATEWAY).status).toBe('UNKNOWN');
    expect(parsePaymentLink(link({ status: 'INACTIVE' }), GATEWAY).status).toBe('INACTIVE');
  });
});

describe('the currency of a payment link', () => {
  it('is a currency the terminal knows: left out of a list item, unreadable in a single link', () => {
    const link = (currency: unknown) => ({
      id: 'PT000001_A',
      status: 'ACTIVE',
      orderInformation: { amountDetails: { currency } },
    });
    expect(parsePaymentLink(link('GBP'), GATEWAY).currency).toBe('GBP');
    for (const currency of ['C'.repeat(10_000), 'XYZ']) {
      const page = parsePaymentLinkPage({ links: [link(currency)] }, GATEWAY);
      expect(page.links[0], currency.slice(0, 3)).not.toHaveProperty('currency');
      expect(() => parsePaymentLink(link(currency), GATEWAY), currency.slice(0, 3)).toThrow(
        expect.objectContaining({ code: 'GW_PARSE' }),
      );
    }
  });
});
