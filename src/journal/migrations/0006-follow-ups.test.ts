import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { migrate, schemaVersion } from './index.js';

describe('migration 0006 (follow-ups)', () => {
  it('keeps version-5 rows and adds obligations unique per kind and authorization', () => {
    const db = new Database(':memory:');
    migrate(db, 5);
    db.prepare(
      `INSERT INTO authorization_data (transaction_id, tags_enc, created_at, updated_at) VALUES ('A1', x'0102', 1, 1)`,
    ).run();
    expect(migrate(db, 6)).toEqual([6]);
    expect(schemaVersion(db)).toBe(6);
    expect(db.prepare('SELECT transaction_id, hex(tags_enc) AS t FROM authorization_data').all()).toEqual([
      { transaction_id: 'A1', t: '0102' },
    ]);

    const insert = db.prepare(
      `INSERT INTO follow_ups (kind, authorization_transaction_id, gateway_id, amount_minor, currency,
      include_emv_tags, reason, created_at, due_at, done_at, outcome) VALUES (?, ?, 'G1', 500, 'GBP', 1,
      'capture voided', 1, 1, ?, ?)`,
    );
    insert.run('reverse-authorization', 'A1', null, null);
    insert.run('other-kind', 'A1', null, null);
    expect(() => insert.run('reverse-authorization', 'A1', null, null)).toThrow(/UNIQUE/);
    // A finished obligation records its outcome.
    expect(() => insert.run('reverse-authorization', 'A2', 5, null)).toThrow(/CHECK/);
    expect(
      db.prepare('SELECT kind, attempts, last_error FROM follow_ups WHERE done_at IS NULL ORDER BY id').all(),
    ).toEqual([
      { kind: 'reverse-authorization', attempts: 0, last_error: null },
      { kind: 'other-kind', attempts: 0, last_error: null },
    ]);
    db.close();
  });
});
