import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { LATEST_VERSION, migrate, schemaVersion } from './index.js';

const insertRecord = `INSERT INTO audit_log (at, actor, action, subject, result, code, details)
  VALUES (@at, 'operator', 'refund', 'T1', @result, 'APPROVED', @details)`;

describe('migration 0007 (audit log)', () => {
  it('keeps version-6 rows and adds an audit log that refuses UPDATE and DELETE', () => {
    const db = new Database(':memory:');
    migrate(db, 6);
    db.prepare(
      `INSERT INTO follow_ups (kind, authorization_transaction_id, gateway_id, amount_minor, currency,
      include_emv_tags, reason, created_at, due_at) VALUES ('reverse-authorization', 'A1', 'G1', 500, 'GBP', 1,
      'capture voided', 1, 1)`,
    ).run();
    expect(migrate(db, 7)).toEqual([7]);
    expect(schemaVersion(db)).toBe(7);
    expect(LATEST_VERSION).toBeGreaterThanOrEqual(7);
    expect(db.prepare('SELECT kind, authorization_transaction_id AS tx FROM follow_ups').all()).toEqual([
      { kind: 'reverse-authorization', tx: 'A1' },
    ]);

    const insert = db.prepare(insertRecord);
    insert.run({ at: 10, result: 'ok', details: '{"amountMinor":500}' });
    // The result is one of three; details are a JSON object.
    expect(() => insert.run({ at: 11, result: 'maybe', details: '{}' })).toThrow(/CHECK/);
    expect(() => insert.run({ at: 11, result: 'ok', details: 'not json' })).toThrow(/CHECK/);
    expect(() => insert.run({ at: 11, result: 'ok', details: '[1]' })).toThrow(/CHECK/);
    // Append-only, whatever the statement.
    expect(() => db.prepare(`UPDATE audit_log SET result = 'refused'`).run()).toThrow(/append-only/);
    expect(() => db.prepare('DELETE FROM audit_log').run()).toThrow(/append-only/);
    expect(() =>
      db
        .prepare(
          `INSERT OR REPLACE INTO audit_log (id, at, actor, action, result)
      VALUES (1, 12, 'system', 'recovery', 'ok')`,
        )
        .run(),
    ).toThrow(/append-only/);
    expect(
      db.prepare('SELECT at, actor, action, subject, result, code, details FROM audit_log').all(),
    ).toEqual([
      {
        at: 10,
        actor: 'operator',
        action: 'refund',
        subject: 'T1',
        result: 'ok',
        code: 'APPROVED',
        details: '{"amountMinor":500}',
      },
    ]);
    db.close();
  });
});
