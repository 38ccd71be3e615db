import type { Migration } from './migration.js';

/**
 * Open tap-and-go holds (DESIGN.md, money safety rule 6), formerly the side file `holds.json`. One row per
 * pre-authorization held while a car is inside: `hold_id` is the pre-authorization's transactionId. A row is never
 * deleted: closing it records when and how (`captured` at the exit, `reversed` at expiry, `dropped` when its
 * authorization was settled elsewhere), so a hold id can never be opened twice. `claimed` marks a hold taken out of
 * expiry watch by an exit or an expiry in progress; it is reset when the terminal starts (an exit interrupted by a
 * crash never completed).
 *
 * No card data: `fingerprint` is a keyed hash of the card, `masked_pan` shows the first 6 and last 4 digits at most,
 * `card_ref` names the in-memory card read (lost with the process).
 */
export const migration0004: Migration = {
  version: 4,
  name: 'holds',
  up(db) {
    db.exec(`
      CREATE TABLE holds (
        hold_id TEXT PRIMARY KEY NOT NULL,
        fingerprint TEXT NOT NULL,
        masked_pan TEXT NOT NULL,
        gateway_id TEXT NOT NULL,
        transaction_id TEXT NOT NULL,
        authorized_minor INTEGER NOT NULL CHECK (authorized_minor >= 0),
        currency TEXT NOT NULL,
        card_ref TEXT NOT NULL,
        include_emv_tags INTEGER NOT NULL CHECK (include_emv_tags IN (0, 1)),
        entered_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        claimed INTEGER NOT NULL DEFAULT 0 CHECK (claimed IN (0, 1)),
        closed_at INTEGER,
        resolution TEXT CHECK (resolution IN ('captured', 'reversed', 'dropped')),
        CHECK ((closed_at IS NULL) = (resolution IS NULL)),
        CHECK (closed_at IS NULL OR claimed = 0)
      );
      CREATE INDEX holds_open_by_fingerprint ON holds(fingerprint, entered_at) WHERE closed_at IS NULL;
    `);
  },
};
