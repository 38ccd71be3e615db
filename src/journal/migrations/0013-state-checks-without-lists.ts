import type { Migration } from './migration.js';
import { rebuildTable } from './rebuild-table.js';

/**
 * The state CHECKs of `journal_entries` and `offline_payments` as equalities joined by OR, the same rule.
 *
 * SQLite evaluates `x IN (…)` over more than two constants through a temporary index of the list, built again on
 * every run of a statement that checks it (EXPLAIN: `OpenEphemeral` and one `IdxInsert` per value). A state CHECK is
 * checked by every insert and every state change: each append, claim, outcome and completion of a payment built one
 * (about 2 µs of SQLite per statement, more right after a disk sync). As equalities the check is a few comparisons.
 *
 * SQLite cannot alter a CHECK: both tables are rebuilt ({@link rebuildTable}), their rows, ids, indexes and
 * sequences kept. Other tables' CHECKs keep their lists: they are checked a few times per customer, not per write of
 * the money path.
 */
export const migration0013: Migration = {
  version: 13,
  name: 'state-checks-without-lists',
  foreignKeysOff: true,
  up(db) {
    rebuildTable(db, 'journal_entries', (sql) =>
      sql.replace(
        "CHECK (state IN ('pending', 'sent', 'approved', 'declined', 'rejected', 'unknown', 'resolved'))",
        `CHECK (state = 'pending' OR state = 'sent' OR state = 'approved' OR state = 'declined' OR state = 'rejected'
          OR state = 'unknown' OR state = 'resolved')`,
      ),
    );
    rebuildTable(db, 'offline_payments', (sql) =>
      sql.replace(
        "CHECK (state IN ('stored', 'forwarding', 'approved', 'declined', 'rejected', 'unknown'))",
        `CHECK (state = 'stored' OR state = 'forwarding' OR state = 'approved' OR state = 'declined'
          OR state = 'rejected' OR state = 'unknown')`,
      ),
    );
  },
};
