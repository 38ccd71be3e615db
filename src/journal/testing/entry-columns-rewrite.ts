import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { LATEST_VERSION, migrate, REWRITES, schemaVersion } from '../migrations/index.js';
import type { SchemaRewrite } from '../migrations/migration.js';
import { PREVIOUS_INSERT, PREVIOUS_OUTCOME, previousFile } from './previous-terminal.js';

function columnsOf(db: Database.Database): string[] {
  return db
    .prepare<[], { name: string }>("SELECT name FROM pragma_table_info('journal_entries') ORDER BY cid")
    .all()
    .map((c) => c.name);
}

const nulls = (columns: readonly string[]): Record<string, null> =>
  Object.fromEntries(columns.map((c) => [c, null]));

/**
 * The tests every schema rewrite that adds nullable columns to `journal_entries` owes (receipt facts, receipt copies):
 * on a file of the previous terminal — every migration and every other rewrite, an approved sale in it, `columns`
 * taken away — it adds `columns`, keeps the rows (the new columns null) and the version, and does it once; and the
 * previous terminal's own writes on a rewritten file are left as they were, nothing refusing them.
 */
export function describeEntryColumnsRewrite(
  name: string,
  rewrite: SchemaRewrite,
  columns: readonly string[],
): void {
  describe(`schema rewrite: ${name}`, () => {
    it(`adds its columns to a file of the previous terminal, its rows kept without them, its version kept, once`, () => {
      expect(REWRITES).toContain(rewrite);
      const db = previousFile((previous) => {
        for (const column of columns) previous.exec(`ALTER TABLE journal_entries DROP COLUMN ${column}`);
      });
      const before = db
        .prepare<[], Record<string, unknown>>('SELECT * FROM journal_entries ORDER BY id')
        .all();
      expect(rewrite.needed(db)).toBe(true);
      expect(migrate(db)).toEqual([]);
      // The version the previous terminal opens.
      expect(schemaVersion(db)).toBe(LATEST_VERSION);
      expect(columnsOf(db)).toEqual(expect.arrayContaining([...columns]));
      expect(rewrite.needed(db)).toBe(false);
      const after = db
        .prepare<[], Record<string, unknown>>('SELECT * FROM journal_entries ORDER BY id')
        .all();
      expect(after).toEqual(before.map((row) => ({ ...row, ...nulls(columns) })));
      const schema = db.prepare('SELECT type, name, sql FROM sqlite_schema ORDER BY name').all();
      expect(migrate(db)).toEqual([]);
      expect(db.prepare('SELECT type, name, sql FROM sqlite_schema ORDER BY name').all()).toEqual(schema);
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      db.close();
    });

    it(`leaves the previous terminal's writes as they were: its entries have none of its columns, and nothing refuses them`, () => {
      const db = new Database(':memory:');
      migrate(db);
      const id = Number(db.prepare(PREVIOUS_INSERT).run('S2').lastInsertRowid);
      expect(
        db.prepare(PREVIOUS_OUTCOME).run('approved', 'G2', 'AUTHORIZED', 201, 600, null, 2, 1, id).changes,
      ).toBe(1);
      expect(
        db.prepare(`SELECT state, ${columns.join(', ')} FROM journal_entries WHERE id = ?`).get(id),
      ).toEqual({ state: 'approved', ...nulls(columns) });
      db.close();
    });
  });
}
