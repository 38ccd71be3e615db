import type { Migration } from './migration.js';

/**
 * The terminal's settings as they were at its last start (issue 13, item 7: configuration changes in the audit log).
 * One row: the effective configuration flattened to dotted keys (`offline.policy` → `"store-and-forward"`), as JSON.
 * At each start the host compares the configuration it runs with against this row, appends an audit record per
 * changed key and replaces the row in the same transaction. The configuration holds no secrets (only the paths of the
 * files that hold them), so the row does not either.
 */
export const migration0010: Migration = {
  version: 10,
  name: 'configuration-state',
  up(db) {
    db.exec(`
      CREATE TABLE configuration_state (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        at INTEGER NOT NULL CHECK (at >= 0),
        settings TEXT NOT NULL CHECK (json_valid(settings) AND json_type(settings) = 'object')
      );
    `);
  },
};
