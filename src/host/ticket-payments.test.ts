import { describe, expect, it } from 'vitest';
import type { OriginalTransaction } from '../flows/index.js';
import type { JournalEntry, StoredPayment, TicketPayment } from '../journal/index.js';
import type { AltSaleView } from './alt-payment-desk.js';
import {
  cardSaleToGiveBack,
  ticketPaidOf,
  unresolvedTicketSales,
  type TicketPaymentReaders,
} from './ticket-payments.js';

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

const altSale = (over: Partial<AltSaleView> = {}): AltSaleView => ({
  id: 7,
  profile: 1,
  label: 'Bank transfer',
  methodName: 'METHOD_1',
  code: 'T-1',
  amountMinor: 500,
  currency: 'GBP',
  state: 'PENDING',
  createdAt: '2030-01-15T09:00:00.000Z',
  checks: 0,
  settledMinor: 0,
  refundedMinor: 0,
  refundableMinor: 0,
  refunds: [],
  ...over,
});

/** Readers of a journal where every card sale reads as `find` says, nothing is stored, no alternative sale exists. */
const readers = (over: Partial<TicketPaymentReaders> = {}): TicketPaymentReaders => ({
  find: () => sale(),
  awaitingOutcome: () => undefined,
  altSale: () => undefined,
  undecided: () => [],
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
      readers({ find: (tx) => journal[tx] ?? null }),
    );
    expect(paid).toEqual({ standingMinor: 800, lastPaidAtMs: 2_000 });
  });

  it('counts a payment by link in full (the terminal neither voids nor refunds one)', () => {
    const link: TicketPayment = { ...card('L-1', 3_000), method: 'link', amountMinor: 450 };
    expect(ticketPaidOf([card('A', 1_000), link], readers())).toEqual({
      standingMinor: 1_050,
      lastPaidAtMs: 3_000,
    });
  });

  it('is undefined when nothing stands: voided, refunded in full, or never paid', () => {
    expect(ticketPaidOf([card('A', 1_000)], readers({ find: () => sale({ voided: true }) }))).toBeUndefined();
    expect(
      ticketPaidOf([card('A', 1_000)], readers({ find: () => sale({ refundedMinor: 600 }) })),
    ).toBeUndefined();
    expect(ticketPaidOf([], readers())).toBeUndefined();
  });

  it('counts a card sale stored offline for its stored amount while its outcome is not known, then as the journal says', () => {
    const awaitingOutcome = (tx: string): StoredPayment | undefined => (tx === 'S' ? stored() : undefined);
    // Stored (or its forward unanswered): the journal holds no sale that stands; the stored amount stands.
    expect(ticketPaidOf([card('S', 1_000)], readers({ find: () => null, awaitingOutcome }))).toEqual({
      standingMinor: 600,
      lastPaidAtMs: 1_000,
    });
    // Forwarded and approved for less: the journal's sale, for the part approved.
    expect(
      ticketPaidOf([card('S', 1_000)], readers({ find: () => sale({ amountMinor: 300 }), awaitingOutcome })),
    ).toEqual({ standingMinor: 300, lastPaidAtMs: 1_000 });
    // Forwarded and declined (or undone by recovery): no sale stands and nothing awaits its outcome.
    expect(ticketPaidOf([card('S', 1_000)], readers({ find: () => null }))).toBeUndefined();
  });

  it('counts an alternative-method sale pending for its amount, settled for what settled less refunds, else not', () => {
    const alt: TicketPayment = { ...card('7', 4_000), method: 'alt', amountMinor: 500 };
    const paidBy = (over: Partial<AltSaleView> | undefined) =>
      ticketPaidOf(
        [alt],
        readers({ altSale: (id) => (id === 7 && over !== undefined ? altSale(over) : undefined) }),
      );
    expect(paidBy({})).toEqual({ standingMinor: 500, lastPaidAtMs: 4_000 });
    expect(paidBy({ state: 'SETTLED', settledMinor: 500, refundedMinor: 200, refundableMinor: 300 })).toEqual(
      {
        standingMinor: 300,
        lastPaidAtMs: 4_000,
      },
    );
    expect(paidBy({ state: 'SETTLED', settledMinor: 500, refundedMinor: 500 })).toBeUndefined();
    expect(paidBy({ state: 'ABANDONED' })).toBeUndefined();
    expect(paidBy({ state: 'FAILED' })).toBeUndefined();
    expect(paidBy(undefined)).toBeUndefined();
  });
});

describe('unresolvedTicketSales', () => {
  const entry = { id: 4, transactionId: 'S', service: 'sale', state: 'unknown' } as JournalEntry;
  const undecided = (tx: string): JournalEntry[] => (tx === 'S' ? [entry] : []);

  it('names what is in flight of a card sale of the ticket: the sale, or a refund or void of it', () => {
    expect(unresolvedTicketSales([card('A', 1_000), card('S', 2_000)], readers({ undecided }))).toEqual([
      entry,
    ]);
  });

  it('names none once the journal has decided, while the sale is stored offline, or for a payment by link', () => {
    const awaitingOutcome = (tx: string): StoredPayment | undefined => (tx === 'S' ? stored() : undefined);
    expect(unresolvedTicketSales([card('S', 1_000)], readers())).toEqual([]);
    expect(unresolvedTicketSales([card('S', 1_000)], readers({ awaitingOutcome, undecided }))).toEqual([]);
    const link: TicketPayment = { ...card('S', 3_000), method: 'link' };
    expect(unresolvedTicketSales([link], readers({ undecided }))).toEqual([]);
  });
});

describe('cardSaleToGiveBack', () => {
  const paid = { amountMinor: 600, currency: 'GBP' };

  it('gives back no more of a card sale than it still holds', () => {
    expect(
      cardSaleToGiveBack([card('S', 1)], readers({ find: () => sale({ refundedMinor: 200 }) }), paid),
    ).toEqual({
      transactionId: 'S',
      gatewayId: 'G',
      amountMinor: 400,
      currency: 'GBP',
    });
    expect(
      cardSaleToGiveBack([card('S', 1)], readers({ find: () => sale({ amountMinor: 900 }) }), paid)
        ?.amountMinor,
    ).toBe(600);
  });

  it('gives back nothing of a sale voided, refunded in full, of another currency or of no gateway id', () => {
    for (const over of [
      { voided: true },
      { refundedMinor: 600 },
      { currency: 'EUR' },
      { gatewayId: undefined },
    ] as const)
      expect(cardSaleToGiveBack([card('S', 1)], readers({ find: () => sale(over) }), paid)).toBeUndefined();
  });

  it('gives back nothing while what a sale holds is not known', () => {
    const inFlight = { ...readers({ find: () => sale() }), undecided: () => [{ id: 1 } as JournalEntry] };
    expect(cardSaleToGiveBack([card('S', 1)], inFlight, paid)).toBeUndefined();
    const offline = { ...readers({ find: () => null }), awaitingOutcome: () => stored() };
    expect(cardSaleToGiveBack([card('S', 1)], offline, paid)).toBeUndefined();
  });
});
