import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Config } from '../config/index.js';
import {
  JournalError,
  openJournal,
  pendingKeyPath,
  settlePendingRotation,
  type OpenJournalOptions,
  type PendingRotation,
  type SqliteJournal,
} from '../journal/index.js';
import { oauthTokensResealer } from './gateway-adapters.js';

/**
 * THE rule for an at-rest key rotation a crash interrupted (`offline rotate-key`): finished or undone
 * ({@link settlePendingRotation}) for the key file of the configuration (`offline.keyFile`), the OAuth token store
 * included, before anything sealed under that key is read. `journal` is held by the caller as its sender (the
 * terminal's start, `queue flush`, `altpay refund`).
 */
export function settleConfiguredRotation(
  journal: SqliteJournal,
  config: Config,
  cwd: string,
): PendingRotation {
  return settlePendingRotation(
    journal,
    resolve(cwd, config.offline.keyFile),
    oauthTokensResealer(config, cwd),
  );
}

/**
 * {@link settleConfiguredRotation} for a command that reads sealed data (the OAuth token store, the journal's sealed
 * columns) without holding the journal as its sender (`oauth`, `links`): when a rotation was cut off (its side file is
 * there), the journal is opened and its sender lock taken for that moment only. While another live process holds the
 * lock (`JOURNAL_LOCKED`: the terminal, which settled at its start, or a rotation under way) nothing is done:
 * `'held'`. Nothing is opened or written when no rotation is pending or there is no journal.
 */
export function settleRotationBeforeReading(
  config: Config,
  cwd: string,
  holder: string,
  options: OpenJournalOptions = {},
): PendingRotation | 'held' {
  const journalPath = resolve(cwd, config.journal.path);
  if (!existsSync(pendingKeyPath(resolve(cwd, config.offline.keyFile))) || !existsSync(journalPath))
    return 'none';
  const held = (e: unknown): boolean => e instanceof JournalError && e.code === 'JOURNAL_LOCKED';
  let journal: SqliteJournal;
  try {
    // Refused when the holder runs an older schema: its journal is not migrated under it.
    journal = openJournal(journalPath, options);
  } catch (e) {
    if (held(e)) return 'held';
    throw e;
  }
  try {
    try {
      journal.acquireSenderLock(holder);
    } catch (e) {
      if (held(e)) return 'held';
      throw e;
    }
    return settleConfiguredRotation(journal, config, cwd);
  } finally {
    journal.close();
  }
}
