import QRCode from 'qrcode';
import { describe, expect, it } from 'vitest';
import {
  hostedPageUrlProblem,
  linkPath,
  MAX_HOSTED_PAGE_URL,
  parsePaymentLink,
  parsePaymentLinkPage,
} from './payment-links.js';

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
      const page = parsePaymentLinkPage({
        totalLinks: 2,
        links: [link('PT000001_A', { totalAmount: '4.50', currency: 'GBP' }), link('OTHER_B', odd)],
      });
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
      parsePaymentLink({
        id: 'PT000001_A',
        status: 'ACTIVE',
        orderInformation: { amountDetails: { totalAmount: '1.005', currency: 'GBP' } },
      }),
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
