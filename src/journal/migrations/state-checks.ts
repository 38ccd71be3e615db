import type Database from 'better-sqlite3';
import type { SchemaRewrite } from './migration.js';
import { rebuildTable, storedCreateTable } from './rebuild-table.js';

/** Each table's state CHECK as migrations 0001 and 0002 wrote it, and as the same rule in equalities. */
const STATE_CHECKS: readonly { table: string; list: string; equalities: string }[] = [
  {
    table: 'journal_entries',
    list: "CHECK (state IN ('pending', 'sent', 'approved', 'declined', 'rejected', 'unknown', 'resolved'))",
    equalities: `CHECK (state = 'pending' OR state = 'sent' OR state = 'approved' OR state = 'declined'
          OR state = 'rejected' OR state = 'unknown' OR state = 'resolved')`,
  },
  {
    table: 'offline_payments',
    list: "CHECK (state IN ('stored', 'forwarding', 'approved', 'declined', 'rejected', 'unknown'))",
    equalities: `CHECK (state = 'stored' OR state = 'forwarding' OR state = 'approved' OR state = 'declined'
          OR state = 'rejected' OR state = 'unknown')`,
  },
];

/** Whether `table`'s stored CREATE still has its state CHECK as a list. */
function hasList(db: Database.Database, c: (typeof STATE_CHECKS)[number]): boolean {
  return storedCreateTable(db, c.table)?.includes(c.list) === true;
}

/**
 * The state CHECKs of `journal_entries` and `offline_payments` as equalities joined by OR: the same rule.
 *
 * SQLite evaluates `x IN (…)` over more than two constants through a temporary index of the list, built again on
 * every run of a statement that checks it (EXPLAIN: `OpenEphemeral` and one `IdxInsert` per value). A state CHECK is
 * checked by every insert and every state change: each append, claim, outcome and completion of a payment built one
 * (about 2 µs of SQLite per statement, more right after a disk sync). As equalities the check is a few comparisons.
 *
 * SQLite cannot alter a CHECK: each table is rebuilt ({@link rebuildTable}), its rows, ids, indexes and sequence
 * kept. The columns, names and rule are those of version 12, so the file keeps that version. Other tables' CHECKs keep
 * their lists: they are checked a few times per customer, not per write of the money path.
 */
export const stateChecksWithoutLists: SchemaRewrite = {
  name: 'state-checks-without-lists',
  needed: (db) => STATE_CHECKS.some((c) => hasList(db, c)),
  apply(db) {
    for (const c of STATE_CHECKS)
      if (hasList(db, c)) rebuildTable(db, c.table, (sql) => sql.replace(c.list, c.equalities));
  },
};
