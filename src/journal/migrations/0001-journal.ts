import type { Migration } from './migration.js';

/**
 * The write-ahead message journal (DESIGN.md, money safety rules 1–3). One row per gateway request, written before a
 * byte is sent. The request body is kept only encrypted (`body_enc`) and wiped once the outcome is final.
 * `transaction_id` is unique among live rows: a row resolved as `not-sent` (provably never left the terminal) frees
 * its id so that the same stored payment can be forwarded later (see OfflineQueue).
 */
export const migration0001: Migration = {
  version: 1,
  name: 'journal',
  up(db) {
    db.exec(`
      CREATE TABLE journal_entries (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        transaction_id TEXT,
        referenced_transaction_id TEXT,
        service TEXT NOT NULL,
        comments TEXT NOT NULL,
        method TEXT NOT NULL,
        path TEXT NOT NULL,
        body_enc BLOB,
        body_length INTEGER NOT NULL,
        amount_minor INTEGER,
        currency TEXT,
        flow_id TEXT,
        parent_gateway_id TEXT,
        masked_pan TEXT,
        money_moving INTEGER NOT NULL CHECK (money_moving IN (0, 1)),
        state TEXT NOT NULL CHECK (state IN ('pending', 'sent', 'approved', 'declined', 'rejected', 'unknown', 'resolved')),
        gateway_id TEXT,
        status TEXT,
        http_status INTEGER,
        authorized_minor INTEGER,
        reason TEXT,
        resolution TEXT,
        resolved_by_entry_id INTEGER REFERENCES journal_entries(id),
        created_at INTEGER NOT NULL,
        sent_at INTEGER,
        outcome_at INTEGER,
        resolved_at INTEGER
      );
      CREATE UNIQUE INDEX journal_entries_transaction_id ON journal_entries(transaction_id)
        WHERE transaction_id IS NOT NULL AND (resolution IS NULL OR resolution <> 'not-sent');
      CREATE INDEX journal_entries_in_flight ON journal_entries(state) WHERE state IN ('pending', 'sent', 'unknown');
      CREATE INDEX journal_entries_flow ON journal_entries(flow_id) WHERE flow_id IS NOT NULL;
      CREATE INDEX journal_entries_gateway_id ON journal_entries(gateway_id) WHERE gateway_id IS NOT NULL;
      CREATE INDEX journal_entries_referenced ON journal_entries(referenced_transaction_id)
        WHERE referenced_transaction_id IS NOT NULL;
    `);
  },
};
