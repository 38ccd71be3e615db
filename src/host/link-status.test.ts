import { describe, expect, it } from 'vitest';
import type { PaymentLink } from '../gateway/index.js';
import type { StoredLink } from '../journal/index.js';
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

  it('shows the last failure the terminal kept of its link the same way: it may quote what the gateway answered', () => {
    const mine = (lastError: string): StoredLink => ({
      linkId: 'PT000001_T-1',
      reference: 'T-1',
      purpose: 'fee',
      amountMinor: 600,
      currency: 'GBP',
      state: 'failed',
      watchUntilMs: 0,
      gatewayInactive: false,
      lastError,
      createdAtMs: 0,
      updatedAtMs: 0,
    });
    for (const text of [
      'GW_INVALID_REQUEST: purchaseNumber \u202Eexe.gnp',
      'GW_INVALID_REQUEST: \u001b[2J\u001b[1;1Hall links deactivated',
      'GW_SERVER_ERROR: \u2066PT000002\u2069 \u200B',
      // As much as the journal keeps (src/journal/payment-links.ts: 500 characters).
      `GW_INVALID_REQUEST: ${'x'.repeat(480)}`,
    ]) {
      const shown = paymentLinkSummary(link('PT000001_T-1'), mine(text)).terminal?.lastError;
      expect(shown, JSON.stringify(text)).toBeDefined();
      expect(shown, JSON.stringify(text)).not.toMatch(/[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/u);
      expect((shown ?? '').length, JSON.stringify(text)).toBeLessThanOrEqual(200);
    }
    expect(
      paymentLinkSummary(link('PT000001_T-1'), mine('LINK_REFUSED: \u202Egnp')).terminal?.lastError,
    ).toBe('LINK_REFUSED: \\u{202E}gnp');
    expect(
      paymentLinkSummary(link('PT000001_T-1'), mine('LINK_UNAVAILABLE: timeout')).terminal?.lastError,
    ).toBe('LINK_UNAVAILABLE: timeout');
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
