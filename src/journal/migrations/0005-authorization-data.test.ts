import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { migrate, schemaVersion } from './index.js';

describe('migration 0005 (authorization data)', () => {
  it('keeps version-4 holds and adds one row of follow-on data per authorization', () => {
    const db = new Database(':memory:');
    migrate(db, 4);
    db.prepare(
      `INSERT INTO holds (hold_id, fingerprint, masked_pan, gateway_id, transaction_id, authorized_minor, currency,
      card_ref, include_emv_tags, entered_at, expires_at) VALUES ('H1', 'fp', '4111…1111', 'G1', 'H1', 2000, 'GBP',
      'card-1', 0, 10, 20)`,
    ).run();
    expect(migrate(db, 5)).toEqual([5]);
    expect(schemaVersion(db)).toBe(5);
    expect(db.prepare('SELECT hold_id, claimed FROM holds').all()).toEqual([{ hold_id: 'H1', claimed: 0 }]);

    const insert = db.prepare(
      `INSERT INTO authorization_data (transaction_id, tags_enc, dcc_terms, created_at, updated_at)
      VALUES (?, ?, ?, 1, 1)`,
    );
    insert.run('A1', Buffer.from([1, 2, 3]), null);
    insert.run('A2', null, '{"indicator":"1"}');
    expect(() => insert.run('A1', null, '{}')).toThrow(/UNIQUE/);
    // A row holds something, and DCC terms are JSON.
    expect(() => insert.run('A3', null, null)).toThrow(/CHECK/);
    expect(() => insert.run('A4', null, 'not json')).toThrow(/CHECK/);
    db.close();
  });
});
