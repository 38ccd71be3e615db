import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { LATEST_VERSION, migrate, schemaVersion } from './index.js';
import { LOOKUP_INDEX_NAMES, lookupIndexes, UNACKNOWLEDGED_SHORTFALL } from './lookup-indexes.js';

function indexNames(db: Database.Database): string[] {
  return db
    .prepare<[], { name: string }>("SELECT name FROM sqlite_schema WHERE type = 'index' ORDER BY name")
    .all()
    .map((r) => r.name);
}

describe('schema rewrite: lookup indexes', () => {
  it('adds its indexes to a file of the previous terminal, keeping its version and its rows, once', () => {
    const db = new Database(':memory:');
    migrate(db);
    // As the previous terminal left it: every rewrite but this one.
    for (const name of LOOKUP_INDEX_NAMES) db.exec(`DROP INDEX ${name}`);
    db.prepare(
      `INSERT INTO journal_entries (transaction_id, service, comments, method, path, body_length, money_moving, state,
      created_at, resolution) VALUES ('N1', 'sale', 'Parking', 'POST', '/pts/v2/payments', 64, 1, 'resolved', 1, 'not-sent')`,
    ).run();
    expect(lookupIndexes.needed(db)).toBe(true);
    expect(migrate(db)).toEqual([]);
    expect(schemaVersion(db)).toBe(LATEST_VERSION);
    expect(indexNames(db)).toEqual(expect.arrayContaining([...LOOKUP_INDEX_NAMES]));
    expect(lookupIndexes.needed(db)).toBe(false);
    const schema = db.prepare('SELECT type, name, sql FROM sqlite_schema ORDER BY name').all();
    expect(migrate(db)).toEqual([]);
    expect(db.prepare('SELECT type, name, sql FROM sqlite_schema ORDER BY name').all()).toEqual(schema);
    // The entry resolved as never sent is in its index.
    expect(
      db
        .prepare(
          "SELECT transaction_id FROM journal_entries INDEXED BY journal_entries_not_sent WHERE resolution = 'not-sent' AND transaction_id = 'N1'",
        )
        .pluck()
        .all(),
    ).toEqual(['N1']);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    db.close();
  });
  it('adds the index of payments approved for less when forwarded to a file that has the others, keeping its version', () => {
    const db = new Database(':memory:');
    migrate(db);
    // As a terminal that had this rewrite before that index left it.
    db.exec('DROP INDEX offline_payments_short');
    db.prepare(
      `INSERT INTO offline_payments (transaction_id, service, comments, method, path, body_enc, amount_minor,
      currency, entry_mode, state, reason, stored_at) VALUES ('P1', 'sale', 'Parking Sale', 'POST', '/pts/v2/payments',
      NULL, 1221, 'GBP', 'contact', 'approved', 'PARTIAL_APPROVAL', 1)`,
    ).run();
    expect(lookupIndexes.needed(db)).toBe(true);
    expect(migrate(db)).toEqual([]);
    expect(schemaVersion(db)).toBe(LATEST_VERSION);
    expect(indexNames(db)).toEqual(expect.arrayContaining([...LOOKUP_INDEX_NAMES]));
    expect(
      db
        .prepare(
          `SELECT transaction_id FROM offline_payments INDEXED BY offline_payments_short WHERE ${UNACKNOWLEDGED_SHORTFALL}`,
        )
        .pluck()
        .all(),
    ).toEqual(['P1']);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    db.close();
  });
});
