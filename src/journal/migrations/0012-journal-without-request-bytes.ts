import type { Migration } from './migration.js';

/**
 * The journal keeps no request bytes, and no index of its in-flight entries.
 *
 * - `body_enc`: every entry kept its request sealed until its outcome was final, and nothing ever read it: recovery
 *   resolves from the clear columns (a timeout reversal or void is keyed by the transactionId, never a resend, rule
 *   2), the tags a follow-on repeats are kept apart (`authorization_data`), and a stored offline payment's bytes live
 *   once, sealed, in its `offline_payments` row. Card data the terminal does not need is card data it does not keep
 *   (rule 4): bodies still held are wiped (`secure_delete` overwrites them) and the column goes.
 * - `journal_entries_in_flight`: a page written by every begin and every outcome. The journal finds its in-flight
 *   entries by scanning from the oldest one that may still be in flight instead (`SqliteJournal.inFlight`): ids only
 *   grow and a final entry never returns in flight.
 */
export const migration0012: Migration = {
  version: 12,
  name: 'journal-without-request-bytes',
  up(db) {
    db.exec(`
      UPDATE journal_entries SET body_enc = NULL WHERE body_enc IS NOT NULL;
      ALTER TABLE journal_entries DROP COLUMN body_enc;
      DROP INDEX journal_entries_in_flight;
    `);
  },
};
