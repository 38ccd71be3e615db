import type Database from 'better-sqlite3';
import type { SchemaRewrite } from './migration.js';

/** The statements that create what {@link ticketPayments} adds. */
const TICKET_PAYMENTS_SQL: readonly string[] = [
  `CREATE TABLE ticket_payments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    ticket TEXT NOT NULL,
    method TEXT NOT NULL CHECK (method = 'card' OR method = 'link' OR method = 'alt'),
    payment_ref TEXT NOT NULL,
    amount_minor INTEGER NOT NULL,
    currency TEXT NOT NULL,
    paid_at INTEGER NOT NULL,
    UNIQUE (method, payment_ref)
  )`,
  'CREATE INDEX ticket_payments_by_ticket ON ticket_payments(ticket, paid_at)',
];

function present(db: Database.Database): boolean {
  return (
    (db
      .prepare<[], { n: number }>(
        "SELECT COUNT(*) AS n FROM sqlite_schema WHERE type = 'table' AND name = 'ticket_payments'",
      )
      .get()?.n ?? 0) > 0
  );
}

/**
 * `ticket_payments`: the pay station's tickets that were paid, one row per payment — the ticket as inserted, how it
 * was paid (`card`: a card sale, `payment_ref` its transactionId), the amount and currency of the approval and when
 * (epoch ms, the pay station's clock). Written with the payment's outcome, in its transaction (no statement and no
 * commit of its own): a crash cannot leave a payment approved and its ticket unpaid. Read when a ticket is inserted
 * again: the payment's journal entry (with its voids and refunds) says what of it still stands. No card data: a ticket
 * is the paper the entry gate printed, the transactionId the terminal's own.
 *
 * A table the previous terminal never names: it reads and writes every other table as before, so the file keeps its
 * version and that terminal still opens it (an update that fails its trial is rolled back to it). The payments it
 * takes after such a rollback are not recorded here: their tickets are charged as before this table.
 */
export const ticketPayments: SchemaRewrite = {
  name: 'ticket-payments',
  needed: (db) => !present(db),
  apply(db) {
    for (const sql of TICKET_PAYMENTS_SQL) db.exec(sql);
  },
};
