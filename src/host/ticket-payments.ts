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
    // gateway, which the terminal does not learn). A ticket paid by card too has its card sale given back instead
    // (`cardSaleToGiveBack`).
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

/** A card sale of a ticket to give back, and how much of it (minor units of `currency`). */
export interface SaleToGiveBack {
  transactionId: string;
  gatewayId: string;
  amountMinor: number;
  currency: string;
}

/**
 * The card sale of a ticket to give back when the ticket is paid again by phone (`paid`: the payment by link, which the
 * terminal cannot refund): the latest card sale that stands and is known (its gateway id too), in the link's currency,
 * for as much of `paid` as it still holds (`amountStanding`: never more than the sale took less what was given back).
 * Undefined when none stands, or while what stands of the ticket's card sales is not known (a sale, refund or void of
 * one in flight; a sale stored offline, whose outcome is not known yet): the operator settles it.
 */
export function cardSaleToGiveBack(
  payments: readonly TicketPayment[],
  readers: TicketPaymentReaders,
  paid: { amountMinor: number; currency: string },
): SaleToGiveBack | undefined {
  if (unresolvedTicketSales(payments, readers).length > 0) return undefined;
  let found: { payment: TicketPayment; original: OriginalTransaction } | undefined;
  for (const p of payments) {
    if (p.method !== 'card') continue;
    if (readers.awaitingOutcome(p.paymentRef) !== undefined) return undefined;
    const original = readers.find(p.paymentRef);
    if (original === null || amountStanding(original) <= 0) continue;
    if (found === undefined || p.paidAtMs >= found.payment.paidAtMs) found = { payment: p, original };
  }
  if (found === undefined) return undefined;
  const { original } = found;
  if (original.gatewayId === undefined || original.currency !== paid.currency) return undefined;
  return {
    transactionId: original.transactionId,
    gatewayId: original.gatewayId,
    amountMinor: Math.min(paid.amountMinor, amountStanding(original)),
    currency: original.currency,
  };
}
