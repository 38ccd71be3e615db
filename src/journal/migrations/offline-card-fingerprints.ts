import type Database from 'better-sqlite3';
import type { SchemaRewrite } from './migration.js';

/** The column {@link offlineCardFingerprints} adds to `offline_payments`. */
export const OFFLINE_CARD_COLUMN = 'card_fingerprint';

/** The index of the stored payments still in the queue, by card: what the per-card offline limit counts. */
export const OFFLINE_OPEN_BY_CARD_INDEX = 'offline_payments_open_by_card';

function hasColumn(db: Database.Database): boolean {
  return (
    db
      .prepare<[string], { n: number }>(
        "SELECT count(*) AS n FROM pragma_table_info('offline_payments') WHERE name = ?",
      )
      .get(OFFLINE_CARD_COLUMN)?.n === 1
  );
}

function hasIndex(db: Database.Database): boolean {
  return (
    db
      .prepare<[string], { n: number }>(
        "SELECT count(*) AS n FROM sqlite_schema WHERE type = 'index' AND name = ?",
      )
      .get(OFFLINE_OPEN_BY_CARD_INDEX)?.n === 1
  );
}

/**
 * The card a stored offline payment was read from, as its keyed fingerprint (`CardSummary.fingerprint`: an HMAC of PAN
 * and expiry under the terminal's secret, never the PAN nor a plain hash of it), so that the queue bounds how many
 * payments of one card it holds (`offline.maxCountPerCard`, refusal `OFFLINE_CARD_LIMIT`). An index of the payments
 * still in the queue (stored or forwarding) by card: the count each store makes reads only that card's.
 *
 * NULL in every row written before, and in the rows the previous terminal writes: such a payment counts for no card.
 * An added column that the previous terminal never names (it reads its rows with `SELECT *` and writes them by named
 * columns) and an index: the file keeps its version, and that terminal still opens it (an update that fails its trial
 * is rolled back to it).
 */
export const offlineCardFingerprints: SchemaRewrite = {
  name: 'offline-card-fingerprints',
  needed: (db) => !hasColumn(db) || !hasIndex(db),
  apply(db) {
    if (!hasColumn(db)) db.exec(`ALTER TABLE offline_payments ADD COLUMN ${OFFLINE_CARD_COLUMN} TEXT`);
    if (!hasIndex(db))
      db.exec(`CREATE INDEX ${OFFLINE_OPEN_BY_CARD_INDEX} ON offline_payments(${OFFLINE_CARD_COLUMN})
        WHERE state IN ('stored', 'forwarding')`);
  },
};
