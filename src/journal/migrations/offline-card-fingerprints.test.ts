import type Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { previousFile } from '../testing/previous-terminal.js';
import { LATEST_VERSION, migrate, REWRITES, schemaVersion } from './index.js';
import {
  OFFLINE_CARD_COLUMN,
  OFFLINE_OPEN_BY_CARD_INDEX,
  offlineCardFingerprints,
} from './offline-card-fingerprints.js';

/** The previous terminal's insert of a stored payment: it names its columns, never the fingerprint. */
const PREVIOUS_STORE = `INSERT INTO offline_payments (transaction_id, service, comments, method, path, body_enc,
  amount_minor, currency, entry_mode, masked_pan, flow_id, state, stored_at)
  VALUES (?, 'sale', 'Parking Sale', 'POST', '/pts/v2/payments', x'00', 500, 'GBP', 'contact', NULL, NULL, 'stored', 1)`;

/** A file as the previous terminal left it: every migration and every other rewrite, a stored payment in it. */
function previousFileWithout(): Database.Database {
  const db = previousFile((d) => {
    d.exec(`DROP INDEX ${OFFLINE_OPEN_BY_CARD_INDEX}`);
    d.exec(`ALTER TABLE offline_payments DROP COLUMN ${OFFLINE_CARD_COLUMN}`);
  });
  db.prepare(PREVIOUS_STORE).run('O1');
  return db;
}

describe('schema rewrite: offline card fingerprints', () => {
  it("adds the card's column and index to a file of the previous terminal, its rows kept without them, its version kept, once", () => {
    expect(REWRITES).toContain(offlineCardFingerprints);
    const db = previousFileWithout();
    const before = db
      .prepare<[], Record<string, unknown>>('SELECT * FROM offline_payments ORDER BY id')
      .all();
    expect(offlineCardFingerprints.needed(db)).toBe(true);
    expect(migrate(db)).toEqual([]);
    // The version the previous terminal opens.
    expect(schemaVersion(db)).toBe(LATEST_VERSION);
    expect(offlineCardFingerprints.needed(db)).toBe(false);
    expect(db.prepare('SELECT * FROM offline_payments ORDER BY id').all()).toEqual(
      before.map((row) => ({ ...row, [OFFLINE_CARD_COLUMN]: null })),
    );
    // The per-card count reads the index.
    const plan = db
      .prepare<[string], { detail: string }>(
        `EXPLAIN QUERY PLAN SELECT COUNT(*) FROM offline_payments
         WHERE ${OFFLINE_CARD_COLUMN} = ? AND state IN ('stored', 'forwarding')`,
      )
      .all('fp')
      .map((r) => r.detail)
      .join('\n');
    expect(plan).toContain(OFFLINE_OPEN_BY_CARD_INDEX);
    const schema = db.prepare('SELECT type, name, sql FROM sqlite_schema ORDER BY name').all();
    expect(migrate(db)).toEqual([]);
    expect(db.prepare('SELECT type, name, sql FROM sqlite_schema ORDER BY name').all()).toEqual(schema);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    // The previous terminal's store still writes, its payment of no card.
    db.prepare(PREVIOUS_STORE).run('O2');
    expect(
      db
        .prepare(`SELECT ${OFFLINE_CARD_COLUMN} AS fp FROM offline_payments WHERE transaction_id = 'O2'`)
        .get(),
    ).toEqual({ fp: null });
    db.close();
  });
});
