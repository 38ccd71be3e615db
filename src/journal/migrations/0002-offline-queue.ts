import type { Migration } from './migration.js';

/**
 * The offline store-and-forward queue (issue 7, item 3) and a small key/value table. A stored payment keeps the exact
 * request bytes encrypted (`body_enc`) until its authorization completes; `journal_entry_id` links the forward to the
 * journal row that records it. `meta` holds the key check value of the at-rest key.
 */
export const migration0002: Migration = {
  version: 2,
  name: 'offline-queue',
  up(db) {
    db.exec(`
      CREATE TABLE offline_payments (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        transaction_id TEXT NOT NULL UNIQUE,
        service TEXT NOT NULL,
        comments TEXT NOT NULL,
        method TEXT NOT NULL,
        path TEXT NOT NULL,
        body_enc BLOB,
        amount_minor INTEGER NOT NULL CHECK (amount_minor >= 0),
        currency TEXT NOT NULL,
        entry_mode TEXT NOT NULL,
        masked_pan TEXT,
        flow_id TEXT,
        state TEXT NOT NULL CHECK (state IN ('stored', 'forwarding', 'approved', 'declined', 'rejected', 'unknown')),
        journal_entry_id INTEGER REFERENCES journal_entries(id),
        gateway_id TEXT,
        status TEXT,
        reason TEXT,
        stored_at INTEGER NOT NULL,
        forwarded_at INTEGER,
        completed_at INTEGER,
        decline_acknowledged INTEGER NOT NULL DEFAULT 0
      );
      CREATE INDEX offline_payments_open ON offline_payments(state, id) WHERE state IN ('stored', 'forwarding');
      CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    `);
  },
};
