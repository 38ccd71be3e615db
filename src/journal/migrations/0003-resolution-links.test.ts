import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { LATEST_VERSION, migrate, schemaVersion } from './index.js';

describe('migration 0003 (resolution links)', () => {
  it('links existing timeout requests to the entry whose transactionId they reference', () => {
    const db = new Database(':memory:');
    migrate(db, 2);
    const insert =
      db.prepare(`INSERT INTO journal_entries (transaction_id, referenced_transaction_id, service, comments,
      method, path, body_length, money_moving, state, created_at) VALUES (?, ?, ?, '', 'POST', '/p', 0, 1, ?, 0)`);
    const auth = Number(insert.run('A1', null, 'preauth', 'resolved').lastInsertRowid);
    insert.run(null, 'A1', 'timeout-reversal', 'approved');
    insert.run(null, 'GONE', 'timeout-void', 'unknown');
    insert.run('C1', 'A1', 'capture', 'approved');
    expect(migrate(db, 3)).toEqual([3]);
    expect(schemaVersion(db)).toBe(3);
    expect(
      db.prepare('SELECT service, resolves_entry_id AS r FROM journal_entries ORDER BY id').all(),
    ).toEqual([
      { service: 'preauth', r: null },
      { service: 'timeout-reversal', r: auth },
      { service: 'timeout-void', r: null },
      { service: 'capture', r: null },
    ]);
    db.close();
  });

  it('refuses a file written by a newer terminal and does nothing on an up-to-date one', () => {
    const db = new Database(':memory:');
    migrate(db);
    expect(migrate(db)).toEqual([]);
    db.pragma(`user_version = ${LATEST_VERSION + 1}`);
    expect(() => migrate(db)).toThrowError(expect.objectContaining({ code: 'JOURNAL_MIGRATION' }) as Error);
    db.close();
  });
});
