import type { Migration } from './migration.js';

/**
 * What a follow-on must repeat of its original (DESIGN.md, money safety rules 6 and 7), formerly the side file
 * `authorization-tags.json`: per original payment's transactionId, the EMV tag set sent with it (gateway.md §7: a
 * capture after an EMV contact pre-authorization and a reversal of an original with EMV data carry its tags) and the
 * DCC terms of a converted payment (spec 001: "DCC capture and refund require the same field set … use the exchange
 * rate of the authorization").
 *
 * `tags_enc` is AES-256-GCM under the at-rest key, bound to the row's transactionId (the tags can hold card data).
 * `dcc_terms` is JSON in clear: indicator, family, local and billing amounts and currencies, rate and its
 * direction, rate timestamp, offer and reconciliation ids — no card data. The row is deleted once the authorization is settled.
 */
export const migration0005: Migration = {
  version: 5,
  name: 'authorization-data',
  up(db) {
    db.exec(`
      CREATE TABLE authorization_data (
        transaction_id TEXT PRIMARY KEY NOT NULL,
        tags_enc BLOB,
        dcc_terms TEXT CHECK (dcc_terms IS NULL OR json_valid(dcc_terms)),
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        CHECK (tags_enc IS NOT NULL OR dcc_terms IS NOT NULL)
      );
    `);
  },
};
