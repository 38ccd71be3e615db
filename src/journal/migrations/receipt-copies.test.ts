import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { PREVIOUS_INSERT, PREVIOUS_OUTCOME, previousFile } from '../testing/previous-terminal.js';
import { LATEST_VERSION, migrate, REWRITES, schemaVersion } from './index.js';
import { RECEIPT_COPY_COLUMNS, receiptCopies } from './receipt-copies.js';

function columns(db: Database.Database): string[] {
  return db
    .prepare<[], { name: string }>("SELECT name FROM pragma_table_info('journal_entries') ORDER BY cid")
    .all()
    .map((c) => c.name);
}

/** A file as the previous terminal left it: every migration and every other rewrite, an approved sale in it. */
function previousFileWithout(): Database.Database {
  return previousFile((db) => {
    for (const column of RECEIPT_COPY_COLUMNS) db.exec(`ALTER TABLE journal_entries DROP COLUMN ${column}`);
  });
}

describe('schema rewrite: receipt copies', () => {
  it("adds the receipt's language and lines to a file of the previous terminal, its rows kept without them, its version kept, once", () => {
    expect(REWRITES).toContain(receiptCopies);
    const db = previousFileWithout();
    const before = db.prepare('SELECT * FROM journal_entries ORDER BY id').all();
    expect(receiptCopies.needed(db)).toBe(true);
    expect(migrate(db)).toEqual([]);
    // The version the previous terminal opens.
    expect(schemaVersion(db)).toBe(LATEST_VERSION);
    expect(columns(db)).toEqual(expect.arrayContaining([...RECEIPT_COPY_COLUMNS]));
    expect(receiptCopies.needed(db)).toBe(false);
    const after = db.prepare<[], Record<string, unknown>>('SELECT * FROM journal_entries ORDER BY id').all();
    expect(after).toEqual(
      (before as Record<string, unknown>[]).map((row) => ({
        ...row,
        ...Object.fromEntries(RECEIPT_COPY_COLUMNS.map((c) => [c, null])),
      })),
    );
    const schema = db.prepare('SELECT type, name, sql FROM sqlite_schema ORDER BY name').all();
    expect(migrate(db)).toEqual([]);
    expect(db.prepare('SELECT type, name, sql FROM sqlite_schema ORDER BY name').all()).toEqual(schema);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    db.close();
  });

  it("leaves the previous terminal's writes as they were: its entries have no receipt note, and nothing refuses them", () => {
    const db = new Database(':memory:');
    migrate(db);
    const id = Number(db.prepare(PREVIOUS_INSERT).run('S2').lastInsertRowid);
    expect(
      db.prepare(PREVIOUS_OUTCOME).run('approved', 'G2', 'AUTHORIZED', 201, 600, null, 2, 1, id).changes,
    ).toBe(1);
    expect(
      db
        .prepare(`SELECT state, ${RECEIPT_COPY_COLUMNS.join(', ')} FROM journal_entries WHERE id = ?`)
        .get(id),
    ).toEqual({ state: 'approved', ...Object.fromEntries(RECEIPT_COPY_COLUMNS.map((c) => [c, null])) });
    db.close();
  });
});
