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
  /** A card sale's journal entry while it is in flight (`isInFlight`: its outcome not known yet), else undefined. */
  inFlight: (transactionId: string) => JournalEntry | undefined;
}

/**
 * The journal entries of a ticket's card sales whose outcome is not known yet: in flight (being sent, or their answer
 * lost and recovery not done with them), neither found by the operator desk's reading nor stored offline. Each may have
 * taken the customer's money, or not: while any is, nothing says what stands of the ticket's payments, and the ticket
 * is neither charged again nor counted paid (src/flows/kiosk.ts, `TicketLookup.paymentUnresolved`).
 */
export function unresolvedTicketSales(
  payments: readonly TicketPayment[],
  readers: TicketPaymentReaders,
): JournalEntry[] {
  const unresolved: JournalEntry[] = [];
  for (const p of payments) {
    if (p.method !== 'card' || readers.find(p.paymentRef) !== null) continue;
    if (readers.awaitingOutcome(p.paymentRef) !== undefined) continue;
    const entry = readers.inFlight(p.paymentRef);
    if (entry !== undefined) unresolved.push(entry);
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
