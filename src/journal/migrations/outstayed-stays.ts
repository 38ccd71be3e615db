import type Database from 'better-sqlite3';
import type { SchemaRewrite } from './migration.js';

function missing(db: Database.Database): boolean {
  return (
    db
      .prepare<[string, string], { n: number }>(
        'SELECT COUNT(*) AS n FROM pragma_table_info(?) WHERE name = ?',
      )
      .get('holds', 'outstayed_at')?.n === 0
  );
}

/**
 * `holds.outstayed_at`: when the expiry watch took a tap-and-go hold at the end of its maximum stay (epoch ms on the
 * holds' clock), written before its reversal is sent (`HoldStore.outstayed`). The car that entered on it has not
 * come out through the exit: once the hold is released, its exit still finds the stay (`HoldStore.claimAtExit`:
 * `outstayed`) and charges its fee by a sale on the card presented, instead of answering that the card never
 * entered. NULL for a hold whose stay ended otherwise (an exit, the operator's release, the card entering again).
 *
 * A plain column, no CHECK: the store checks each value before it writes it. An added column that the previous
 * terminal never names: it reads its rows with `SELECT *` and writes them by named columns (the new one stays
 * NULL), so the file keeps its version.
 */
export const outstayedStays: SchemaRewrite = {
  name: 'outstayed-stays',
  needed: missing,
  apply(db) {
    if (missing(db)) db.exec('ALTER TABLE holds ADD COLUMN outstayed_at INTEGER');
  },
};
