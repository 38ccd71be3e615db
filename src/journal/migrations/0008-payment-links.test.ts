import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { migrate, schemaVersion } from './index.js';

describe('migration 0008 (payment links)', () => {
  it('keeps version-7 rows and adds the links table with its states', () => {
    const db = new Database(':memory:');
    migrate(db, 7);
    db.prepare(
      `INSERT INTO audit_log (at, actor, action, result) VALUES (1, 'system', 'recovery', 'ok')`,
    ).run();
    expect(migrate(db, 8)).toEqual([8]);
    expect(schemaVersion(db)).toBe(8);
    expect(db.prepare('SELECT action FROM audit_log').all()).toEqual([{ action: 'recovery' }]);

    const insert = db.prepare(
      `INSERT INTO payment_links (link_id, reference, purpose, amount_minor, currency, state, watch_until,
      gateway_inactive, created_at, updated_at) VALUES (?, 'T-1', 'fee', ?, 'GBP', ?, 10, ?, 1, 1)`,
    );
    insert.run('T-1', 450, 'creating', 0);
    expect(() => insert.run('T-1', 450, 'creating', 0)).toThrow(/UNIQUE/);
    expect(() => insert.run('T-2', 450, 'lost', 0)).toThrow(/CHECK/);
    expect(() => insert.run('T-3', 0, 'creating', 0)).toThrow(/CHECK/);
    // Deactivated means the gateway confirmed INACTIVE.
    expect(() => insert.run('T-4', 450, 'deactivated', 0)).toThrow(/CHECK/);
    insert.run('T-5', 450, 'deactivated', 1);
    insert.run('T-6', 450, 'paid', 0);
    expect(
      db
        .prepare(
          `SELECT link_id FROM payment_links WHERE state IN ('creating', 'active')
          OR (state = 'paid' AND gateway_inactive = 0) ORDER BY link_id`,
        )
        .all(),
    ).toEqual([{ link_id: 'T-1' }, { link_id: 'T-6' }]);
    db.close();
  });
});
