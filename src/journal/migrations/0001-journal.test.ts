import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { migrate, schemaVersion } from './index.js';

describe('migration 0001 (journal)', () => {
  it('creates the journal on an empty file and enforces one live row per transactionId', () => {
    const db = new Database(':memory:');
    expect(migrate(db, 1)).toEqual([1]);
    expect(schemaVersion(db)).toBe(1);
    const insert =
      db.prepare(`INSERT INTO journal_entries (transaction_id, service, comments, method, path, body_length,
      money_moving, state, created_at, resolution) VALUES (?, 'sale', '', 'POST', '/p', 0, 1, ?, 0, ?)`);
    insert.run('T1', 'resolved', 'not-sent');
    insert.run('T1', 'sent', null);
    expect(() => insert.run('T1', 'pending', null)).toThrow(/UNIQUE/);
    expect(() => insert.run('T2', 'bogus', null)).toThrow(/CHECK/);
    db.close();
  });
});
