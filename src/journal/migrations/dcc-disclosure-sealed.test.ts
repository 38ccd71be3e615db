import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { dccDisclosureSealed } from './dcc-disclosure-sealed.js';
import { LATEST_VERSION, migrate, REWRITES, schemaVersion } from './index.js';

/** The previous terminal's write of a converted payment's terms and clear disclosure: it names its columns. */
const PREVIOUS_PUT_DCC = `INSERT INTO authorization_data (transaction_id, dcc_terms, dcc_disclosure, created_at, updated_at)
  VALUES (@tx, '{"indicator":"1","family":"A"}', '{"marginRate":"3.5","disclaimer":"d"}', 1, 1)`;

describe('schema rewrite: sealed dcc disclosure', () => {
  it('adds its column to a file of the previous terminal, its clear disclosures kept, its version kept, once', () => {
    expect(REWRITES).toContain(dccDisclosureSealed);
    const db = new Database(':memory:');
    migrate(db, LATEST_VERSION);
    db.exec('ALTER TABLE authorization_data DROP COLUMN dcc_disclosure_enc');
    db.prepare(PREVIOUS_PUT_DCC).run({ tx: 'S1' });
    const rows = db.prepare('SELECT * FROM authorization_data').all() as Record<string, unknown>[];
    expect(dccDisclosureSealed.needed(db)).toBe(true);
    expect(migrate(db)).toEqual([]);
    expect(schemaVersion(db)).toBe(LATEST_VERSION);
    expect(dccDisclosureSealed.needed(db)).toBe(false);
    expect(db.prepare('SELECT * FROM authorization_data').all()).toEqual(
      rows.map((r) => ({ ...r, dcc_disclosure_enc: null })),
    );
    const schema = db.prepare('SELECT type, name, sql FROM sqlite_schema ORDER BY name').all();
    expect(migrate(db)).toEqual([]);
    expect(db.prepare('SELECT type, name, sql FROM sqlite_schema ORDER BY name').all()).toEqual(schema);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    db.close();
  });
});
