import type { Migration } from './migration.js';

/**
 * Links each resolution request (timeout reversal, timeout void) to the entry it resolves, so that recovery after a
 * crash can tell "an attempt at resolving entry N" from an original request. Rows written before this step are linked
 * through the transactionId they reference (gateway.md §7: timeout requests are keyed by the original's
 * transactionId).
 */
export const migration0003: Migration = {
  version: 3,
  name: 'resolution-links',
  up(db) {
    db.exec(`
      ALTER TABLE journal_entries ADD COLUMN resolves_entry_id INTEGER REFERENCES journal_entries(id);
      UPDATE journal_entries
        SET resolves_entry_id = (
          SELECT o.id FROM journal_entries o
          WHERE o.transaction_id = journal_entries.referenced_transaction_id
          ORDER BY o.id DESC LIMIT 1
        )
        WHERE service IN ('timeout-reversal', 'timeout-void') AND referenced_transaction_id IS NOT NULL;
      CREATE INDEX journal_entries_resolves ON journal_entries(resolves_entry_id) WHERE resolves_entry_id IS NOT NULL;
    `);
  },
};
