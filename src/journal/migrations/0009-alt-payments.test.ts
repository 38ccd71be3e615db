import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { migrate, schemaVersion } from './index.js';

describe('migration 0009 (alternative-method sales)', () => {
  it('keeps version-8 rows and adds sales that carry a gateway id once answered', () => {
    const db = new Database(':memory:');
    migrate(db, 8);
    db.prepare(
      `INSERT INTO follow_ups (kind, authorization_transaction_id, gateway_id, amount_minor, currency,
      include_emv_tags, reason, created_at, due_at) VALUES ('reverse-authorization', 'A1', 'G1', 500, 'GBP', 0, 'r', 1, 1)`,
    ).run();
    expect(migrate(db, 9)).toEqual([9]);
    expect(schemaVersion(db)).toBe(9);
    expect(db.prepare('SELECT authorization_transaction_id AS t FROM follow_ups').all()).toEqual([
      { t: 'A1' },
    ]);

    const insert = db.prepare(
      `INSERT INTO alt_sales (transaction_id, code, profile, method_name, payment_type_name, amount_minor, currency,
        state, gateway_id, created_at, updated_at) VALUES (?, 'T', 1, 'METHOD_1', 'bankTransfer', 1250, 'EUR', ?, ?, 1, 1)`,
    );
    insert.run('X1', 'sending', null);
    insert.run('X2', 'PENDING', 'G2');
    expect(() => insert.run('X3', 'PENDING', null)).toThrow(/CHECK/);
    expect(() => insert.run('X4', 'PAID', 'G4')).toThrow(/CHECK/);
    expect(() => insert.run('X1', 'sending', null)).toThrow(/UNIQUE/);
    db.close();
  });
});
