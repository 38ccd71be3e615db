import { amountStanding, type OriginalTransaction, type TicketPaid } from '../flows/index.js';
import type { StoredPayment, TicketPayment } from '../journal/index.js';

/**
 * What stands of a ticket's recorded payments (`ticket_payments`, the `ticket-payments` schema rewrite): a payment by
 * link in full, each card payment as the operator desk reads it (`findTransaction`, with its voids and refunds) less what was given back
 * (`amountStanding`, the rule of operator refunds and of a paid tap-and-go exit); a payment the journal no longer
 * shows as money taken stands for nothing. Undefined when nothing stands: the ticket is charged as if never paid.
 * `lastPaidAtMs`: the latest payment that still stands.
 *
 * A card sale stored offline (`awaitingOutcome`: OfflineQueue.awaitingOutcome) stands for its stored amount while
 * what it collects is not known — its customer was told it was approved; once its forward's outcome is journaled, the
 * journal says what it took, as for any sale: approved, the sale (approved for less, the part approved); declined,
 * rejected or undone by recovery, nothing.
 */
export function ticketPaidOf(
  payments: readonly TicketPayment[],
  find: (transactionId: string) => OriginalTransaction | null,
  awaitingOutcome: (transactionId: string) => StoredPayment | undefined,
): TicketPaid | undefined {
  let standingMinor = 0;
  let lastPaidAtMs: number | undefined;
  for (const p of payments) {
    if (p.method === 'alt') continue;
    // A payment by link stands as paid: the terminal neither refunds nor voids it (the operator does so at the
    // gateway, which the terminal does not learn).
    const standing = p.method === 'link' ? p.amountMinor : cardStanding(p.paymentRef, find, awaitingOutcome);
    if (standing <= 0) continue;
    standingMinor += standing;
    lastPaidAtMs = Math.max(lastPaidAtMs ?? 0, p.paidAtMs);
  }
  return lastPaidAtMs !== undefined && standingMinor > 0 ? { standingMinor, lastPaidAtMs } : undefined;
}

/** What stands of a card sale: as the journal shows it, or, stored offline and not yet collected, its stored amount. */
function cardStanding(
  transactionId: string,
  find: (transactionId: string) => OriginalTransaction | null,
  awaitingOutcome: (transactionId: string) => StoredPayment | undefined,
): number {
  const original = find(transactionId);
  if (original !== null) return Math.max(0, amountStanding(original));
  return awaitingOutcome(transactionId)?.amountMinor ?? 0;
}
