import type { Migration } from './migration.js';

/**
 * Redirect-based alternative-method sales (spec 001; issue 14): one row per `AP_SALE`, written durably with its own
 * transactionId BEFORE the request goes out (`state` 'sending'), its answer (gateway id, paymentUrl) and every
 * status change written durably as they come. `last_check_at` is written before each `AP_STATUS` is sent, so that the
 * spec's interval between two checks holds across a crash and a restart (the scheduler reads it back).
 *
 * No personal data: the customer's e-mail and name travel in the sale request only and are not stored here (nor in
 * `journal_entries`: the sale is not a journal entry of the money protocol — it moves no money by itself).
 *
 * Refunds (`AP_REFUND`) are journal entries of the money protocol (service `refund-payment`, flow id
 * `alt-sale:<id>`); `alt_refund_checks` keeps the status checks of a refund by its journal entry.
 */
export const migration0009: Migration = {
  version: 9,
  name: 'alt-payments',
  up(db) {
    db.exec(`
      CREATE TABLE alt_sales (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        transaction_id TEXT NOT NULL UNIQUE,
        code TEXT NOT NULL,
        profile INTEGER NOT NULL CHECK (profile BETWEEN 1 AND 8),
        method_name TEXT NOT NULL,
        payment_type_name TEXT NOT NULL,
        amount_minor INTEGER NOT NULL CHECK (amount_minor > 0),
        currency TEXT NOT NULL,
        flow_id TEXT,
        state TEXT NOT NULL
          CHECK (state IN ('sending', 'unknown', 'PENDING', 'SETTLED', 'FUNDED', 'FAILED', 'ABANDONED')),
        gateway_id TEXT,
        payment_url TEXT,
        reason TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        last_check_at INTEGER,
        checks INTEGER NOT NULL DEFAULT 0 CHECK (checks >= 0),
        CHECK (state IN ('sending', 'unknown', 'FAILED') OR gateway_id IS NOT NULL)
      );
      CREATE INDEX alt_sales_pending ON alt_sales(state) WHERE state = 'PENDING';
      CREATE TABLE alt_refund_checks (
        journal_entry_id INTEGER PRIMARY KEY REFERENCES journal_entries(id),
        sale_id INTEGER NOT NULL REFERENCES alt_sales(id),
        status TEXT CHECK (status IS NULL OR status IN ('REFUNDED', 'FAILED')),
        last_check_at INTEGER,
        checks INTEGER NOT NULL DEFAULT 0 CHECK (checks >= 0),
        created_at INTEGER NOT NULL
      );
    `);
  },
};
