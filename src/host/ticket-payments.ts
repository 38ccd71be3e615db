import { amountStanding, type OriginalTransaction, type TicketPaid } from '../flows/index.js';
import type { JournalEntry, StoredPayment, TicketPayment } from '../journal/index.js';
import { altSaleStanding, type AltSaleView } from './alt-payment-desk.js';

/** Where what stands of a ticket's payments is read. */
export interface TicketPaymentReaders {
  /** A card sale as the operator desk reads it (`findTransaction`), null when the journal shows no money taken. */
  find: (transactionId: string) => OriginalTransaction | null;
  /** A card sale stored offline while what it collects is not known (OfflineQueue.awaitingOutcome). */
  awaitingOutcome: (transactionId: string) => StoredPayment | undefined;
  /** An alternative-method sale by its id (AltPaymentDesk.get). */
  altSale: (id: number) => AltSaleView | undefined;
  /**
   * The journal's entries in flight that decide what stands of a card sale (`undecidedEntriesOf`: the sale's own, a
   * refund or void of it, a void of one of its refunds); none once each is decided.
   */
  undecided: (transactionId: string) => JournalEntry[];
}

/**
 * The journal's entries in flight on which what stands of a ticket's card sales depends: a sale whose answer was lost,
 * a refund or void of one whose answer was lost, recovery not done with them (a sale stored offline stands for its
 * stored amount meanwhile: `awaitingOutcome`). Each may have moved the customer's money, or not: while any is in
 * flight, nothing says what stands of the ticket's payments, and the ticket is neither charged again nor counted paid
 * (src/flows/kiosk.ts, `TicketLookup.paymentUnresolved`).
 */
export function unresolvedTicketSales(
  payments: readonly TicketPayment[],
  readers: TicketPaymentReaders,
): JournalEntry[] {
  const unresolved: JournalEntry[] = [];
  for (const p of payments) {
    if (p.method !== 'card' || readers.awaitingOutcome(p.paymentRef) !== undefined) continue;
    unresolved.push(...readers.undecided(p.paymentRef));
  }
  return unresolved;
}

/**
 * What stands of a ticket's recorded payments (`ticket_payments`, the `ticket-payments` schema rewrite): a payment by
 * link in full, each card payment as the operator desk reads it (`findTransaction`, with its voids and refunds) less
 * what was given back (`amountStanding`, the rule of operator refunds and of a paid tap-and-go exit); a payment the
 * journal no longer shows as money taken stands for nothing. Undefined when nothing stands: the ticket is charged as
 * if never paid. `lastPaidAtMs`: the latest payment that still stands.
 *
 * A card sale stored offline stands for its stored amount while what it collects is not known — its customer was told
 * it was approved; once its forward's outcome is journaled, the journal says what it took, as for any sale: approved,
 * the sale (approved for less, the part approved); declined, rejected or undone by recovery, nothing. An
 * alternative-method sale stands as `altSaleStanding` says: pending, its amount; settled, what settled less refunds;
 * failed or abandoned, nothing.
 */
export function ticketPaidOf(
  payments: readonly TicketPayment[],
  readers: TicketPaymentReaders,
): TicketPaid | undefined {
  let standingMinor = 0;
  let lastPaidAtMs: number | undefined;
  for (const p of payments) {
    const standing = standingOf(p, readers);
    if (standing <= 0) continue;
    standingMinor += standing;
    lastPaidAtMs = Math.max(lastPaidAtMs ?? 0, p.paidAtMs);
  }
  return lastPaidAtMs !== undefined && standingMinor > 0 ? { standingMinor, lastPaidAtMs } : undefined;
}

/** What stands of one recorded payment, minor units. */
function standingOf(p: TicketPayment, readers: TicketPaymentReaders): number {
  switch (p.method) {
    // A payment by link stands as paid: the terminal neither refunds nor voids it (the operator does so at the
    // gateway, which the terminal does not learn).
    case 'link':
      return p.amountMinor;
    case 'card': {
      const original = readers.find(p.paymentRef);
      if (original !== null) return Math.max(0, amountStanding(original));
      return readers.awaitingOutcome(p.paymentRef)?.amountMinor ?? 0;
    }
    case 'alt': {
      const sale = /^\d+$/.test(p.paymentRef) ? readers.altSale(Number(p.paymentRef)) : undefined;
      return sale === undefined ? 0 : altSaleStanding(sale);
    }
  }
}
