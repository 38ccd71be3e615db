import { describe, expect, it } from 'vitest';
import type { PaymentLink } from '../gateway/index.js';
import { paymentLinkSummary } from './link-status.js';

describe('a payment link of the gateway as the operator reads it', () => {
  const link = (text: string): PaymentLink => ({
    id: text,
    status: text,
    linkType: text,
    purchaseNumber: text,
    currency: text,
    createdDate: text,
    lineItems: [{ productName: text, productDescription: text, productSku: text }],
  });

  it('shows what another merchant user wrote in a link visibly: no control, bidi, zero-width or lone surrogate, bounded', () => {
    for (const text of [
      'PT000001_T-1\u202Egnp.exe',
      'PT000001\u200B_T-1',
      'PT000001_T-1\u001b[2J',
      'PT000001\u2066_T-1\u2069',
      'PT000001_\uD800T-1',
      'PT000001_T-1\u2028line',
      'x'.repeat(100_000),
    ]) {
      const shown = paymentLinkSummary(link(text), undefined, { lineItems: true });
      const texts = [
        shown.id,
        shown.status,
        shown.linkType,
        shown.purchaseNumber,
        shown.currency,
        shown.createdDate,
        shown.lineItems?.[0]?.productName,
        shown.lineItems?.[0]?.productDescription,
        shown.lineItems?.[0]?.productSku,
      ];
      for (const t of texts) {
        expect(t, JSON.stringify(text)).toBeDefined();
        expect(t, JSON.stringify(text)).not.toMatch(/[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/u);
        expect((t ?? '').length, JSON.stringify(text)).toBeLessThanOrEqual(200);
      }
    }
    // The escape is visible: the operator sees that the text holds such a character, and which.
    expect(paymentLinkSummary(link('T-1\u202Egnp'), undefined).id).toBe('T-1\\u{202E}gnp');
  });

  it('leaves an ordinary link as the gateway wrote it', () => {
    const shown = paymentLinkSummary(
      {
        ...link('PT000001_202611N2413050005'),
        status: 'ACTIVE',
        currency: 'GBP',
        createdDate: '2026-11-24T13:05:00Z',
      },
      undefined,
    );
    expect(shown).toMatchObject({
      id: 'PT000001_202611N2413050005',
      status: 'ACTIVE',
      currency: 'GBP',
      createdDate: '2026-11-24T13:05:00Z',
    });
    expect(paymentLinkSummary(link('Stationnement — Île'), undefined).purchaseNumber).toBe(
      'Stationnement — Île',
    );
  });
});
