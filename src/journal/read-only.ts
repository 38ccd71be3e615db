import Database from 'better-sqlite3';
import { JournalError } from './errors.js';
import type { JournalConnection } from './field-checks.js';
import { LATEST_VERSION, schemaVersion } from './migrations/index.js';

/** The journal opened read-only ({@link openJournalReadOnly}): stores read through it; any write is refused. */
export interface ReadOnlyJournal extends JournalConnection {
  close(): void;
}

/**
 * Opens the journal at `path` read-only, for a command that only reads while the terminal may run: no write, no
 * migration, no sender lock (SQLite's WAL mode lets a reader in beside the writer). `undefined`, nothing left open,
 * when its schema is older than `since` (the migration that made what the caller reads): there is nothing of it yet.
 * `JOURNAL_IO` when the file cannot be opened, `JOURNAL_MIGRATION` when a newer terminal wrote it; a store's write
 * through it throws `JOURNAL_IO`.
 */
export function openJournalReadOnly(
  path: string,
  since: number,
  options: { busyTimeoutMs?: number; now?: () => Date } = {},
): ReadOnlyJournal | undefined {
  let db: Database.Database;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
  } catch (cause) {
    throw new JournalError('JOURNAL_IO', `cannot open the journal ${path} to read`, { cause });
  }
  try {
    db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
    const version = schemaVersion(db);
    if (version > LATEST_VERSION)
      throw new JournalError(
        'JOURNAL_MIGRATION',
        `the journal has schema version ${version}, newer than this terminal (${LATEST_VERSION})`,
      );
  } catch (cause) {
    db.close();
    if (cause instanceof JournalError) throw cause;
    throw new JournalError('JOURNAL_IO', `cannot read the journal ${path}`, { cause });
  }
  if (schemaVersion(db) < since) {
    db.close();
    return undefined;
  }
  return {
    db,
    now: options.now ?? (() => new Date()),
    atomically: () => {
      throw new JournalError('JOURNAL_IO', `the journal ${path} was opened read-only`);
    },
    close: () => db.close(),
  };
}

/**
 * Builds a store on a journal opened read-only ({@link openJournalReadOnly}), closing the journal when that fails
 * (`JOURNAL_IO` unless the failure is already a {@link JournalError}).
 */
export function readOnlyStore<T>(
  journal: ReadOnlyJournal,
  path: string,
  build: (j: ReadOnlyJournal) => T,
): T {
  try {
    return build(journal);
  } catch (cause) {
    journal.close();
    if (cause instanceof JournalError) throw cause;
    throw new JournalError('JOURNAL_IO', `cannot read the journal ${path}`, { cause });
  }
}
