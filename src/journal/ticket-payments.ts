import { isTicket } from '../vocabulary/tickets.js';
import { JournalError } from './errors.js';
import {
  checkCurrency,
  checkEpochMs,
  checkIdentifier,
  checkMinor,
  readOn,
  type JournalConnection,
} from './field-checks.js';

/** How a ticket was paid: a card sale (its transactionId is the payment's reference). */
export const TICKET_PAYMENT_METHODS = ['card', 'link', 'alt'] as const;
export type TicketPaymentMethod = (typeof TICKET_PAYMENT_METHODS)[number];

/** A payment of a ticket (the `ticket-payments` schema rewrite). */
export interface TicketPayment {
  ticket: string;
  method: TicketPaymentMethod;
  /** The payment's own reference: a card sale's transactionId. */
  paymentRef: string;
  /** What was approved, minor units of `currency`. */
  amountMinor: number;
  currency: string;
  /** Epoch milliseconds of the approval, on the pay station's clock. */
  paidAtMs: number;
}

interface Row {
  ticket: string;
  method: string;
  payment_ref: string;
  amount_minor: number;
  currency: string;
  paid_at: number;
}

/**
 * The pay station's paid tickets, in the journal database. {@link record} is meant to run inside the transaction of
 * the payment's outcome (PaymentService.submit's `onOutcome`), so that the approval and the ticket's payment commit
 * together. Idempotent on (method, payment reference): an outcome written again adds nothing.
 */
export class TicketPaymentStore {
  private readonly stmts: {
    insert: ReturnType<JournalConnection['db']['prepare']>;
    forTicket: ReturnType<JournalConnection['db']['prepare']>;
  };

  constructor(private readonly connection: JournalConnection) {
    const db = connection.db;
    this.stmts = {
      insert: db.prepare(`INSERT OR IGNORE INTO ticket_payments
        (ticket, method, payment_ref, amount_minor, currency, paid_at)
        VALUES (@ticket, @method, @ref, @amount, @currency, @at)`),
      forTicket: db.prepare(
        'SELECT ticket, method, payment_ref, amount_minor, currency, paid_at FROM ticket_payments WHERE ticket = ? ORDER BY paid_at, id',
      ),
    };
  }

  /** Records a payment of `ticket` (in the caller's transaction when there is one). `JOURNAL_INVALID` for bad input. */
  record(payment: TicketPayment): void {
    if (!isTicket(payment.ticket))
      throw new JournalError('JOURNAL_INVALID', 'ticket must be 1 to 32 letters, digits or dashes');
    if (!(TICKET_PAYMENT_METHODS as readonly string[]).includes(payment.method))
      throw new JournalError(
        'JOURNAL_INVALID',
        `ticket payment method "${String(payment.method)}" is unknown`,
      );
    checkIdentifier(payment.paymentRef, 'paymentRef');
    checkMinor(payment.amountMinor, 'amountMinor');
    checkCurrency(payment.currency);
    checkEpochMs(payment.paidAtMs, 'paidAtMs');
    this.connection.atomically(true, () =>
      this.stmts.insert.run({
        ticket: payment.ticket,
        method: payment.method,
        ref: payment.paymentRef,
        amount: payment.amountMinor,
        currency: payment.currency,
        at: payment.paidAtMs,
      }),
    );
  }

  /** Every payment recorded for `ticket`, oldest first. */
  forTicket(ticket: string): TicketPayment[] {
    if (!isTicket(ticket)) return [];
    return readOn(this.connection, () =>
      (this.stmts.forTicket.all(ticket) as Row[]).map((r) => ({
        ticket: r.ticket,
        method: r.method as TicketPaymentMethod,
        paymentRef: r.payment_ref,
        amountMinor: r.amount_minor,
        currency: r.currency,
        paidAtMs: r.paid_at,
      })),
    );
  }
}
