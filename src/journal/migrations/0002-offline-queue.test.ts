import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { migrate, schemaVersion } from './index.js';

describe('migration 0002 (offline queue)', () => {
  it('keeps version-1 journal rows and adds the queue and meta tables', () => {
    const db = new Database(':memory:');
    migrate(db, 1);
    db.prepare(
      `INSERT INTO journal_entries (transaction_id, service, comments, method, path, body_length, money_moving,
      state, created_at) VALUES ('T1', 'preauth', 'Parking Auth', 'POST', '/pts/v2/payments', 10, 1, 'unknown', 5)`,
    ).run();
    expect(migrate(db, 2)).toEqual([2]);
    expect(schemaVersion(db)).toBe(2);
    expect(db.prepare('SELECT transaction_id, state FROM journal_entries').all()).toEqual([
      { transaction_id: 'T1', state: 'unknown' },
    ]);
    db.prepare(
      `INSERT INTO offline_payments (transaction_id, service, comments, method, path, amount_minor, currency,
      entry_mode, state, stored_at) VALUES ('O1', 'sale', '', 'POST', '/p', 100, 'GBP', 'contact', 'stored', 1)`,
    ).run();
    expect(() =>
      db
        .prepare(
          `INSERT INTO offline_payments (transaction_id, service, comments, method, path, amount_minor, currency,
        entry_mode, state, stored_at) VALUES ('O1', 'sale', '', 'POST', '/p', 100, 'GBP', 'contact', 'stored', 1)`,
        )
        .run(),
    ).toThrow(/UNIQUE/);
    db.prepare(`INSERT INTO meta (key, value) VALUES ('k', 'v')`).run();
    db.close();
  });
});
