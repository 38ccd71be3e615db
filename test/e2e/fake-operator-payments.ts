import type {
  AltSaleSummary,
  DisplayAmount,
  OperatorAction,
  OperatorLink,
  OperatorResponse,
  Result,
} from '../../src/host/api.js';

/**
 * The operator's payment links and alternative-method sales of the FakeTerminal: twelve links at the gateway (the
 * first eight created by this terminal, the others by another terminal of the merchant), and four sales — pending,
 * settled (€12.50), failed, abandoned. Deactivation, reactivation and refunds follow the host's rules: only a link
 * of this terminal changes; a refund above what remains of the settled amount is refused with ALT_REFUND_ABOVE_SETTLED.
 */

const eur = (minor: number): DisplayAmount => ({
  minor,
  currency: 'EUR',
  text: `€${(minor / 100).toFixed(2)}`,
});

function sampleLinks(): OperatorLink[] {
  return Array.from({ length: 12 }, (_, i) => {
    const n = String(i + 1).padStart(2, '0');
    const mine = i < 8;
    const status = i === 1 ? 'INACTIVE' : 'ACTIVE';
    return {
      id: `PARK-${n}`,
      status,
      linkType: 'PURCHASE',
      purchaseNumber: `PARK-${n}`,
      amountMinor: 400 + i * 50,
      currency: 'EUR',
      amount: eur(400 + i * 50),
      createdDate: `2030-01-01T09:${n}:00Z`,
      ...(status === 'ACTIVE' ? { url: `https://pay.example.test/pay/PARK-${n}` } : {}),
      ...(mine
        ? {
            terminal: {
              state: status === 'ACTIVE' ? 'active' : 'deactivated',
              reference: `TICKET-${n}`,
              purpose: 'fee',
              ...(status === 'INACTIVE' ? { closeReason: 'timeout' } : {}),
              gatewayInactive: status === 'INACTIVE',
              watchUntil: '2030-01-01T10:00:00Z',
              createdAt: `2030-01-01T09:${n}:00Z`,
            },
          }
        : {}),
      allowed: mine ? [status === 'ACTIVE' ? 'deactivate' : 'reactivate'] : [],
    };
  });
}

function sale(
  id: number,
  status: AltSaleSummary['status'],
  state: string,
  settledMinor: number,
): AltSaleSummary {
  return {
    id,
    label: 'Bank transfer',
    methodName: 'METHOD_1',
    reference: `TICKET-A${id}`,
    status,
    state,
    amount: eur(1250),
    settled: eur(settledMinor),
    refunded: eur(0),
    refundable: eur(settledMinor),
    gatewayId: `AP-${id}`,
    at: `2030-01-01T08:0${id}:00Z`,
    refunds: [],
    allowed: settledMinor > 0 ? ['refund'] : [],
  };
}

const refused = <T>(code: string, message: string): Result<T> => ({ ok: false, error: { code, message } });

export class FakeOperatorPayments {
  readonly links = sampleLinks();
  readonly sales: AltSaleSummary[] = [
    sale(4, 'abandoned', 'ABANDONED', 0),
    sale(3, 'failed', 'FAILED', 0),
    sale(2, 'settled', 'SETTLED', 1250),
    sale(1, 'pending', 'PENDING', 0),
  ];

  /** How many of the next refunds are answered as the terminal answers one whose gateway answer was lost. */
  lostRefundAnswers = 0;

  handle(
    action: Extract<
      OperatorAction,
      { type: 'links' | 'link-deactivate' | 'link-reactivate' | 'alt-sales' | 'alt-refund' }
    >,
  ): Result<OperatorResponse> {
    switch (action.type) {
      case 'links': {
        const offset = action.offset ?? 0;
        const limit = action.limit ?? 20;
        const next = offset + limit < this.links.length ? { offset: offset + limit, limit } : undefined;
        return {
          ok: true,
          value: {
            type: 'links',
            offset,
            limit,
            totalLinks: this.links.length,
            ...(next ? { next } : {}),
            links: this.links.slice(offset, offset + limit),
          },
        };
      }
      case 'link-deactivate':
      case 'link-reactivate': {
        const link = this.links.find((l) => l.id === action.linkId);
        if (!link?.terminal)
          return refused('LINK_NOT_FOUND', `no payment link ${action.linkId} of this terminal`);
        const active = action.type === 'link-reactivate';
        link.status = active ? 'ACTIVE' : 'INACTIVE';
        link.terminal = {
          ...link.terminal,
          state: active ? 'active' : 'deactivated',
          gatewayInactive: !active,
        };
        link.allowed = [active ? 'deactivate' : 'reactivate'];
        return { ok: true, value: { type: action.type, link } };
      }
      case 'alt-sales': {
        const wanted = action.status;
        return {
          ok: true,
          value: {
            type: 'alt-sales',
            sales: this.sales.filter((s) => wanted === undefined || wanted.includes(s.status)),
          },
        };
      }
      case 'alt-refund': {
        const s = this.sales.find((x) => x.id === action.saleId);
        if (!s) return refused('ALT_NOT_FOUND', `no alternative-method sale ${action.saleId}`);
        if (s.status !== 'settled')
          return refused('ALT_NOT_REFUNDABLE', `a ${s.state} sale cannot be refunded`);
        const amount = action.amountMinor ?? s.refundable.minor;
        if (amount > s.refundable.minor)
          return refused(
            'ALT_REFUND_ABOVE_SETTLED',
            `at most ${s.refundable.minor} minor units may still be refunded`,
          );
        const refund = {
          entryId: 100 + s.refunds.length,
          amount: eur(amount),
          state: this.lostRefundAnswers-- > 0 ? ('in-flight' as const) : ('accepted' as const),
          at: '2030-01-01T10:00:00Z',
        };
        s.refunds.push(refund);
        s.refunded = eur(s.refunded.minor + amount);
        s.refundable = eur(s.refundable.minor - amount);
        s.allowed = s.refundable.minor > 0 ? ['refund'] : [];
        return { ok: true, value: { type: 'alt-refund', saleId: s.id, refund, sale: s } };
      }
    }
  }
}
