import { amountStanding, type OriginalTransaction, type TicketPaid } from '../flows/index.js';
import type { TicketPayment } from '../journal/index.js';

/**
 * What stands of a ticket's recorded payments (`ticket_payments`, the `ticket-payments` schema rewrite): a payment by
 * link in full, each card payment as the operator desk reads it (`findTransaction`, with its voids and refunds) less what was given back
 * (`amountStanding`, the rule of operator refunds and of a paid tap-and-go exit); a payment the journal no longer
 * shows as money taken stands for nothing. Undefined when nothing stands: the ticket is charged as if never paid.
 * `lastPaidAtMs`: the latest payment that still stands.
 */
export function ticketPaidOf(
  payments: readonly TicketPayment[],
  find: (transactionId: string) => OriginalTransaction | null,
): TicketPaid | undefined {
  let standingMinor = 0;
  let lastPaidAtMs: number | undefined;
  for (const p of payments) {
    if (p.method === 'alt') continue;
    const original = p.method === 'card' ? find(p.paymentRef) : null;
    // A payment by link stands as paid: the terminal neither refunds nor voids it (the operator does so at the
    // gateway, which the terminal does not learn).
    const standing =
      p.method === 'link' ? p.amountMinor : original === null ? 0 : Math.max(0, amountStanding(original));
    if (standing <= 0) continue;
    standingMinor += standing;
    lastPaidAtMs = Math.max(lastPaidAtMs ?? 0, p.paidAtMs);
  }
  return lastPaidAtMs !== undefined && standingMinor > 0 ? { standingMinor, lastPaidAtMs } : undefined;
}
