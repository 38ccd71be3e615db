import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { openJournal } from '../journal.js';
import { LATEST_VERSION, migrate, schemaVersion } from '../migrations/index.js';

/**
 * Marks the journal at `path` as held by a running terminal: its sender lock names a live process (the parent of the
 * test process), so a command that needs the lock is refused `JOURNAL_LOCKED`.
 */
export function holdAsRunningTerminal(path: string): void {
  const held = openJournal(path);
  try {
    lockAsRunningTerminal(held.db);
  } finally {
    held.close();
  }
}

/**
 * Writes the sender lock of a running terminal (the parent of the test process, a live process) through `db`: what an
 * older terminal holding its journal ({@link olderTerminalJournal}) has written at its start.
 */
export function lockAsRunningTerminal(db: Database.Database): void {
  db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('sender_lock', ?)").run(
    JSON.stringify({ pid: process.ppid, holder: 'the terminal', since: '2030-01-01T00:00:00.000Z' }),
  );
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

/** A journal's schema as {@link journalSchema} reads it. */
export type JournalSchema = ReturnType<typeof journalSchema>;

/**
 * The schema of the journal at `path` before and after `run`, run beside a terminal that holds it open: an older one at
 * schema `version` ({@link olderTerminalJournal}, `undo` as there), or a newer one (`'newer'`: a schema version this
 * terminal does not know). `setup` writes through that terminal's connection first; the connection is closed after.
 * A command that only reads must leave `after` equal to `before`.
 */
export async function schemaAround(
  path: string,
  version: number | 'newer',
  run: () => Promise<void>,
  options: { undo?: (db: Database.Database) => void; setup?: (db: Database.Database) => void } = {},
): Promise<{ before: JournalSchema; after: JournalSchema }> {
  const db = olderTerminalJournal(path, version === 'newer' ? LATEST_VERSION : version, options.undo);
  try {
    if (version === 'newer') db.pragma(`user_version = ${LATEST_VERSION + 1}`);
    options.setup?.(db);
    const before = journalSchema(db);
    await run();
    return { before, after: journalSchema(db) };
  } finally {
    db.close();
  }
}
