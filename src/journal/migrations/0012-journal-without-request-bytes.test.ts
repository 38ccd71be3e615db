import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { migrate, schemaVersion } from './index.js';

describe('migration 0012 (the journal keeps no request bytes)', () => {
  it('wipes the request bytes entries still held, drops their column and the in-flight index, keeps every row', () => {
    const db = new Database(':memory:');
    db.pragma('secure_delete = ON');
    migrate(db, 11);
    const insert =
      db.prepare(`INSERT INTO journal_entries (transaction_id, service, comments, method, path, body_enc,
      body_length, money_moving, state, created_at) VALUES (?, 'sale', 'Parking Sale', 'POST', '/pts/v2/payments', ?, 64,
      1, ?, 1)`);
    insert.run('kept-unknown', Buffer.from('sealed bytes of an unknown outcome'), 'unknown');
    insert.run('wiped-approved', null, 'approved');
    expect(migrate(db, 12)).toEqual([12]);
    expect(schemaVersion(db)).toBe(12);
    const columns = db.prepare<[], { name: string }>('PRAGMA table_info(journal_entries)').all();
    expect(columns.map((c) => c.name)).not.toContain('body_enc');
    expect(columns.map((c) => c.name)).toContain('body_length');
    const indexes = db.prepare<[], { name: string }>('PRAGMA index_list(journal_entries)').all();
    expect(indexes.map((i) => i.name)).not.toContain('journal_entries_in_flight');
    expect(indexes.map((i) => i.name)).toContain('journal_entries_transaction_id');
    expect(
      db.prepare('SELECT transaction_id, state, body_length FROM journal_entries ORDER BY id').all(),
    ).toEqual([
      { transaction_id: 'kept-unknown', state: 'unknown', body_length: 64 },
      { transaction_id: 'wiped-approved', state: 'approved', body_length: 64 },
    ]);
  });
});
