import type { Migration } from './migration.js';

/**
 * The payment links this terminal created (issue 14, item 1; DESIGN.md, money safety rule 6), one row per link, keyed
 * by the link id (spec 000: the id is the purchase number used at creation).
 *
 * A row is written durably in state `creating` **before** the create request is sent (rule 1), so that a crash after
 * sending leaves a row that recovery resolves by looking the link up. Then `active` (the gateway answered, `url` is the
 * hosted page), `paid` (the signed notification arrived), `deactivated` (the gateway confirmed INACTIVE) or `failed`
 * (the gateway refused the create, or has no such link). `close_reason` is the durable intent to deactivate (paid,
 * cancelled, timeout, recovery, operator), written before the deactivation is sent; `gateway_inactive` records that
 * the gateway confirmed it — a paid link is open until then (one use). `watch_until` bounds the wait for the payment.
 *
 * `purpose` and `close_reason` are text checked by the store (like `follow_ups.kind`). No personal or card data: the
 * fields are the terminal's own (references, amounts); the gateway's payment id of a paid link is an id.
 */
export const migration0008: Migration = {
  version: 8,
  name: 'payment-links',
  up(db) {
    db.exec(`
      CREATE TABLE payment_links (
        link_id TEXT PRIMARY KEY,
        reference TEXT NOT NULL,
        purpose TEXT NOT NULL,
        amount_minor INTEGER NOT NULL CHECK (amount_minor > 0),
        currency TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('creating', 'active', 'paid', 'deactivated', 'failed')),
        url TEXT,
        watch_until INTEGER NOT NULL,
        close_reason TEXT,
        gateway_inactive INTEGER NOT NULL DEFAULT 0 CHECK (gateway_inactive IN (0, 1)),
        payment_id TEXT,
        last_error TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        CHECK (state <> 'deactivated' OR gateway_inactive = 1)
      );
      CREATE INDEX payment_links_open ON payment_links(created_at)
        WHERE state IN ('creating', 'active') OR (state = 'paid' AND gateway_inactive = 0);
      CREATE INDEX payment_links_by_reference ON payment_links(reference);
    `);
  },
};
