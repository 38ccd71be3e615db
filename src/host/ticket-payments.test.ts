import { describe, expect, it } from 'vitest';
import type { OriginalTransaction } from '../flows/index.js';
import type { StoredPayment, TicketPayment } from '../journal/index.js';
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

const stored = (): StoredPayment => ({
  id: 1,
  transactionId: 'S',
  service: 'sale',
  comments: 'Parking Sale',
  amountMinor: 600,
  currency: 'GBP',
  entryMode: 'contact',
  state: 'stored',
  hasBody: true,
  storedAt: '2030-01-15T09:00:00.000Z',
});

const nothingStored = (): undefined => undefined;

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
      nothingStored,
    );
    expect(paid).toEqual({ standingMinor: 800, lastPaidAtMs: 2_000 });
  });

  it('counts a payment by link in full (the terminal neither voids nor refunds one), and no alternative method', () => {
    const link: TicketPayment = { ...card('L-1', 3_000), method: 'link', amountMinor: 450 };
    const alt: TicketPayment = { ...card('7', 4_000), method: 'alt' };
    expect(ticketPaidOf([card('A', 1_000), link, alt], () => sale(), nothingStored)).toEqual({
      standingMinor: 1_050,
      lastPaidAtMs: 3_000,
    });
  });

  it('is undefined when nothing stands: voided, refunded in full, or never paid', () => {
    expect(ticketPaidOf([card('A', 1_000)], () => sale({ voided: true }), nothingStored)).toBeUndefined();
    expect(
      ticketPaidOf([card('A', 1_000)], () => sale({ refundedMinor: 600 }), nothingStored),
    ).toBeUndefined();
    expect(ticketPaidOf([], () => sale(), nothingStored)).toBeUndefined();
  });

  it('counts a card sale stored offline for its stored amount while its outcome is not known, then as the journal says', () => {
    const awaiting = (tx: string): StoredPayment | undefined => (tx === 'S' ? stored() : undefined);
    // Stored (or its forward unanswered): the journal holds no sale that stands; the stored amount stands.
    expect(ticketPaidOf([card('S', 1_000)], () => null, awaiting)).toEqual({
      standingMinor: 600,
      lastPaidAtMs: 1_000,
    });
    // Forwarded and approved for less: the journal's sale, for the part approved.
    expect(ticketPaidOf([card('S', 1_000)], () => sale({ amountMinor: 300 }), awaiting)).toEqual({
      standingMinor: 300,
      lastPaidAtMs: 1_000,
    });
    // Forwarded and declined (or undone by recovery): no sale stands and nothing awaits its outcome.
    expect(ticketPaidOf([card('S', 1_000)], () => null, nothingStored)).toBeUndefined();
  });
});
