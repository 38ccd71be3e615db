import { describe, expect, it } from 'vitest';
import type { OriginalTransaction } from '../flows/index.js';
import type { TicketPayment } from '../journal/index.js';
import { ticketPaidOf } from './ticket-payments.js';

const card = (paymentRef: string, paidAtMs: number): TicketPayment => ({
  ticket: 'T-1',
  method: 'card',
  paymentRef,
  amountMinor: 600,
  currency: 'GBP',
  paidAtMs,
});

const sale = (over: Partial<OriginalTransaction> = {}): OriginalTransaction => ({
  transactionId: 'S',
  gatewayId: 'G',
  service: 'sale',
  amountMinor: 600,
  currency: 'GBP',
  refundedMinor: 0,
  voided: false,
  voidPending: false,
  voidable: true,
  ...over,
});

describe('ticketPaidOf', () => {
  it('sums what stands of each payment, dated by the last that stands', () => {
    const journal: Record<string, OriginalTransaction | null> = {
      A: sale(),
      B: sale({ amountMinor: 300, refundedMinor: 100 }),
      C: sale({ voided: true }),
      D: sale({ refundedMinor: 600 }),
      E: null,
    };
    const paid = ticketPaidOf(
      [card('A', 1_000), card('B', 2_000), card('C', 3_000), card('D', 4_000), card('E', 5_000)],
      (tx) => journal[tx] ?? null,
    );
    expect(paid).toEqual({ standingMinor: 800, lastPaidAtMs: 2_000 });
  });

  it('counts a payment by link in full (the terminal neither voids nor refunds one), and no alternative method', () => {
    const link: TicketPayment = { ...card('L-1', 3_000), method: 'link', amountMinor: 450 };
    const alt: TicketPayment = { ...card('7', 4_000), method: 'alt' };
    expect(ticketPaidOf([card('A', 1_000), link, alt], () => sale())).toEqual({
      standingMinor: 1_050,
      lastPaidAtMs: 3_000,
    });
  });

  it('is undefined when nothing stands: voided, refunded in full, or never paid', () => {
    expect(ticketPaidOf([card('A', 1_000)], () => sale({ voided: true }))).toBeUndefined();
    expect(ticketPaidOf([card('A', 1_000)], () => sale({ refundedMinor: 600 }))).toBeUndefined();
    expect(ticketPaidOf([], () => sale())).toBeUndefined();
  });
});
