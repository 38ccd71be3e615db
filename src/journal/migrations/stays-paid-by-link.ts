import type Database from 'better-sqlite3';
import type { SchemaRewrite } from './migration.js';

/** The columns {@link staysPaidByLink} adds, as table and column: each NULL unless written as described there. */
export const STAY_LINK_COLUMNS: ReadonlyArray<readonly [table: 'payment_links' | 'holds', column: string]> = [
  ['payment_links', 'hold_id'],
  ['holds', 'paid_link_id'],
  ['holds', 'doubt_link_id'],
];

function missing(db: Database.Database): Array<readonly [table: string, column: string]> {
  return STAY_LINK_COLUMNS.filter(
    ([table, column]) =>
      db
        .prepare<[string, string], { n: number }>(
          'SELECT COUNT(*) AS n FROM pragma_table_info(?) WHERE name = ?',
        )
        .get(table, column)?.n === 0,
  );
}

/**
 * The tie between a tap-and-go stay and the payment link of its fee, so that a payment by phone settles that stay
 * after a restart too:
 *
 * - `payment_links.hold_id`: the hold whose stay a link charges for (the gate's exit paid by phone, or its fee left to
 *   pay later), written with the link as `creating`, before its create is sent. The reference alone is the time of the
 *   entry, which two stays can share.
 * - `holds.paid_link_id`: the link whose counted payment paid that stay, written in the transaction that makes the link
 *   `paid` (`HoldStore.paidByLink`). Such a hold is never charged again: its exit is shown paid, and its authorization
 *   is released (by that exit, or by its expiry watch, due from the payment on).
 * - `holds.doubt_link_id`: the fee link a restart closed while its customer may have paid it (shown, its payment's
 *   notification lost with the process that died), written in the transaction that journals its closing
 *   (`HoldStore.phonePaymentInDoubt`). Such a hold is never charged by card; a late notification of that link's
 *   payment counts for the stay (then `paid_link_id`), and its expiry watch releases it at its time.
 *
 * Plain columns, no CHECK and no reference (a link may outlive the hold's row as it is, and the other way round): the
 * stores check each value before they write it. Added columns that the previous terminal never names: it reads its rows
 * with `SELECT *` and writes them by named columns (the new ones stay NULL), so the file keeps its version.
 */
export const staysPaidByLink: SchemaRewrite = {
  name: 'stays-paid-by-link',
  needed: (db) => missing(db).length > 0,
  apply(db) {
    for (const [table, column] of missing(db)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} TEXT`);
  },
};
