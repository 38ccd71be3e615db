import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { migrate, schemaVersion } from './index.js';

const insertHold = `INSERT INTO holds (hold_id, fingerprint, masked_pan, gateway_id, transaction_id, authorized_minor,
  currency, card_ref, include_emv_tags, entered_at, expires_at, claimed, closed_at, resolution)
  VALUES (@id, 'fp', '411111******1111', 'G1', @id, 2000, 'GBP', 'card-1', 1, 10, 20, @claimed, @closed, @resolution)`;

describe('migration 0004 (holds)', () => {
  it('keeps version-3 rows and adds the holds table with one row per hold id', () => {
    const db = new Database(':memory:');
    migrate(db, 3);
    db.prepare(
      `INSERT INTO journal_entries (transaction_id, service, comments, method, path, body_length, money_moving,
      state, created_at) VALUES ('H1', 'preauth', 'Parking Auth', 'POST', '/pts/v2/payments', 10, 1, 'approved', 5)`,
    ).run();
    db.prepare(`INSERT INTO meta (key, value) VALUES ('offline_key_check', 'abc')`).run();
    expect(migrate(db, 4)).toEqual([4]);
    expect(schemaVersion(db)).toBe(4);
    expect(db.prepare('SELECT transaction_id, state FROM journal_entries').all()).toEqual([
      { transaction_id: 'H1', state: 'approved' },
    ]);
    expect(db.prepare('SELECT value FROM meta').all()).toEqual([{ value: 'abc' }]);

    const insert = db.prepare(insertHold);
    insert.run({ id: 'H1', claimed: 0, closed: null, resolution: null });
    insert.run({ id: 'H2', claimed: 0, closed: 30, resolution: 'captured' });
    expect(() => insert.run({ id: 'H1', claimed: 0, closed: null, resolution: null })).toThrow(/UNIQUE/);
    // A closed hold says how it ended, and is never claimed.
    expect(() => insert.run({ id: 'H3', claimed: 0, closed: 30, resolution: null })).toThrow(/CHECK/);
    expect(() => insert.run({ id: 'H4', claimed: 1, closed: 30, resolution: 'reversed' })).toThrow(/CHECK/);
    expect(() => insert.run({ id: 'H5', claimed: 0, closed: 30, resolution: 'returned' })).toThrow(/CHECK/);
    expect(db.prepare('SELECT hold_id FROM holds WHERE closed_at IS NULL').all()).toEqual([
      { hold_id: 'H1' },
    ]);
    db.close();
  });
});
