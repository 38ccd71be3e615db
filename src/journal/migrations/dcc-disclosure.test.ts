import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { dccDisclosure } from './dcc-disclosure.js';
import { LATEST_VERSION, migrate, REWRITES, schemaVersion } from './index.js';

function columns(db: Database.Database): string[] {
  return db
    .prepare<[], { name: string }>("SELECT name FROM pragma_table_info('authorization_data') ORDER BY cid")
    .all()
    .map((c) => c.name);
}

/** The previous terminal's statements: it names its columns when it reads and writes this table. */
const PREVIOUS_PUT_DCC = `INSERT INTO authorization_data (transaction_id, dcc_terms, created_at, updated_at)
  VALUES (@tx, @terms, @at, @at)
  ON CONFLICT (transaction_id) DO UPDATE SET dcc_terms = excluded.dcc_terms, updated_at = excluded.updated_at`;
const PREVIOUS_GET =
  'SELECT transaction_id, tags_enc, dcc_terms FROM authorization_data WHERE transaction_id = ?';
const TERMS = '{"indicator":"1","family":"A"}';

/** A file as the previous terminal left it: every migration and every other rewrite, a converted sale's terms in it. */
function previousFile(): Database.Database {
  const db = new Database(':memory:');
  migrate(db, LATEST_VERSION);
  db.exec('ALTER TABLE authorization_data DROP COLUMN dcc_disclosure');
  db.prepare(PREVIOUS_PUT_DCC).run({ tx: 'S1', terms: TERMS, at: 1 });
  return db;
}

describe('schema rewrite: dcc disclosure', () => {
  it('adds the column to a file of the previous terminal, its rows kept without a disclosure, its version kept, once', () => {
    expect(REWRITES).toContain(dccDisclosure);
    const db = previousFile();
    const before = db.prepare('SELECT * FROM authorization_data').all() as Record<string, unknown>[];
    expect(dccDisclosure.needed(db)).toBe(true);
    expect(migrate(db)).toEqual([]);
    expect(schemaVersion(db)).toBe(LATEST_VERSION);
    expect(columns(db)).toContain('dcc_disclosure');
    expect(dccDisclosure.needed(db)).toBe(false);
    expect(db.prepare('SELECT * FROM authorization_data').all()).toEqual(
      before.map((row) => ({ ...row, dcc_disclosure: null })),
    );
    const schema = db.prepare('SELECT type, name, sql FROM sqlite_schema ORDER BY name').all();
    expect(migrate(db)).toEqual([]);
    expect(db.prepare('SELECT type, name, sql FROM sqlite_schema ORDER BY name').all()).toEqual(schema);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    db.close();
  });

  it("leaves the previous terminal's reads and writes as they were: a disclosure written since is neither read nor refused", () => {
    const db = new Database(':memory:');
    migrate(db);
    db.prepare(
      `INSERT INTO authorization_data (transaction_id, dcc_terms, dcc_disclosure, created_at, updated_at)
        VALUES ('S2', ?, '{"marginRate":"3.5","disclaimer":"As shown."}', 1, 1)`,
    ).run(TERMS);
    expect(db.prepare(PREVIOUS_GET).get('S2')).toEqual({
      transaction_id: 'S2',
      tags_enc: null,
      dcc_terms: TERMS,
    });
    expect(db.prepare(PREVIOUS_PUT_DCC).run({ tx: 'S3', terms: TERMS, at: 2 }).changes).toBe(1);
    expect(
      db.prepare('SELECT dcc_disclosure FROM authorization_data WHERE transaction_id = ?').get('S3'),
    ).toEqual({
      dcc_disclosure: null,
    });
    db.close();
  });
});
