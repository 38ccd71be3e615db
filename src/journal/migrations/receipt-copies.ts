import type Database from 'better-sqlite3';
import type { SchemaRewrite } from './migration.js';

/** The columns {@link receiptCopies} adds to `journal_entries`, each NULL until the entry's receipt is issued. */
export const RECEIPT_COPY_COLUMNS: readonly string[] = ['receipt_locale', 'receipt_lines'];

function missing(db: Database.Database): string[] {
  const present = new Set(
    db
      .prepare<[], { name: string }>("SELECT name FROM pragma_table_info('journal_entries')")
      .all()
      .map((c) => c.name),
  );
  return RECEIPT_COPY_COLUMNS.filter((c) => !present.has(c));
}

/**
 * What a receipt stated beyond the journal's facts of its transaction, journaled on the transaction's entry when its
 * receipt is issued (one conditional UPDATE: the first receipt's note stays), so that the operator's copy of it after a
 * restart says what it said:
 *
 * - `receipt_locale`: the language the customer chose, the one the receipt was issued in (the printer's fallbacks
 *   applied to it again give the same document);
 * - `receipt_lines`: the machine's own lines (a pay station's ticket and stay, a meter's or a tap-and-go exit's
 *   parking and stay, a refund's original), JSON, as the machine worded them (en_GB: the receipt translates them).
 *   Never card data: the host removes it as the receipt does, and the journal refuses a line with a card number.
 *
 * NULL in every row written before, and in the rows of transactions whose receipt was never issued in this version:
 * their copy is in `terminal.locale` without those lines, as before. Plain columns without CHECKs: the journal checks
 * each value before it writes it.
 *
 * Added columns that the previous terminal never names: it reads its rows with `SELECT *` (a column it does not know
 * is ignored) and writes them by named columns (the new ones stay NULL), so the file keeps its version and that
 * terminal still opens it (an update that fails its trial is rolled back to it).
 */
export const receiptCopies: SchemaRewrite = {
  name: 'receipt-copies',
  needed: (db) => missing(db).length > 0,
  apply(db) {
    for (const column of missing(db)) db.exec(`ALTER TABLE journal_entries ADD COLUMN ${column} TEXT`);
  },
};
