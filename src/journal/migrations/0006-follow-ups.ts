import type { Migration } from './migration.js';

/**
 * Durable obligations that recovery finishes before the terminal accepts the next card (DESIGN.md, money safety
 * rule 3), e.g. "reverse authorization T because its capture was voided" (gateway.md §7: voiding a capture leaves the
 * authorization hold in place). A row is written in the same transaction as the outcome that creates the obligation,
 * so a crash between the two requests cannot leave a hold on the customer's card.
 *
 * `kind` is text checked by the store (first kind `reverse-authorization`), so that a new kind needs no table rebuild.
 * One obligation per kind and authorization: the unique key makes a second `add` find the first. `attempts` and
 * `last_error` record refused or failed tries, so a caller can space and bound its retries.
 */
export const migration0006: Migration = {
  version: 6,
  name: 'follow-ups',
  up(db) {
    db.exec(`
      CREATE TABLE follow_ups (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL,
        authorization_transaction_id TEXT NOT NULL,
        gateway_id TEXT NOT NULL,
        amount_minor INTEGER NOT NULL CHECK (amount_minor >= 0),
        currency TEXT NOT NULL,
        include_emv_tags INTEGER NOT NULL CHECK (include_emv_tags IN (0, 1)),
        reason TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        due_at INTEGER NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
        last_error TEXT,
        done_at INTEGER,
        outcome TEXT,
        CHECK ((done_at IS NULL) = (outcome IS NULL)),
        UNIQUE (kind, authorization_transaction_id)
      );
      CREATE INDEX follow_ups_open ON follow_ups(due_at, id) WHERE done_at IS NULL;
    `);
  },
};
