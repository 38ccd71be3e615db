import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { openJournal } from '../journal.js';
import { migrate, schemaVersion } from '../migrations/index.js';

/**
 * Marks the journal at `path` as held by a running terminal: its sender lock names a live process (the parent of the
 * test process), so a command that needs the lock is refused `JOURNAL_LOCKED`.
 */
export function holdAsRunningTerminal(path: string): void {
  const held = openJournal(path);
  try {
    held.db
      .prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('sender_lock', ?)")
      .run(JSON.stringify({ pid: process.ppid, holder: 'the terminal', since: '2030-01-01T00:00:00.000Z' }));
  } finally {
    held.close();
  }
}

/**
 * The journal at `path` as a running terminal of an older version has it open: WAL, at schema `version`, and `undo`
 * takes away what a schema rewrite of that version (no version of its own) added that the older terminal never had.
 * Returns that terminal's connection, left open beside the command under test; the test writes through it and closes
 * it.
 */
export function olderTerminalJournal(
  path: string,
  version: number,
  undo: (db: Database.Database) => void = () => undefined,
): Database.Database {
  mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  migrate(db, version);
  undo(db);
  return db;
}

/** The schema of a journal: its version and every table, index and column, as a command beside it must leave them. */
export function journalSchema(db: Database.Database): { version: number; schema: unknown[] } {
  return {
    version: schemaVersion(db),
    schema: db.prepare('SELECT type, name, sql FROM sqlite_schema ORDER BY type, name').all(),
  };
}
