import type Database from 'better-sqlite3';
import type { SchemaRewrite } from './migration.js';

function missing(db: Database.Database): boolean {
  return (
    db
      .prepare<[string, string], { n: number }>(
        'SELECT COUNT(*) AS n FROM pragma_table_info(?) WHERE name = ?',
      )
      .get('payment_links', 'payment_in_doubt')?.n === 0
  );
}

/**
 * `payment_links.payment_in_doubt`: 1 for a fee link, shown to its customer, that a restart closed while its payment was
 * unknown (the notification may have gone to the process that died), written by `PaymentLinkStore.paymentInDoubt` in
 * the transaction that journals the link's closing; NULL otherwise. An approved payment of such a link counts for its
 * fee however late it is notified (the gateway takes no payment of an INACTIVE link: it was made before) — the pay
 * station's ticket is recorded paid with it, as without the restart. A plain column the previous terminal never names:
 * it reads its rows with `SELECT *` and writes them by named columns (NULL here), so the file keeps its version.
 */
export const feeLinksInDoubt: SchemaRewrite = {
  name: 'fee-links-in-doubt',
  needed: (db) => missing(db),
  apply(db) {
    if (missing(db)) db.exec('ALTER TABLE payment_links ADD COLUMN payment_in_doubt INTEGER');
  },
};
