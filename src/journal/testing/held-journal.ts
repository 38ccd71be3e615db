import { openJournal } from '../journal.js';

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
