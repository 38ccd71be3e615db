import { fileKeyProvider } from '../journal/encryption.js';
import { JournalError } from '../journal/errors.js';
import type { SqliteJournal } from '../journal/journal.js';

/** The journal's rows that keep a card fingerprint made under the fingerprint key. */
interface Fingerprinted {
  /** Tap-and-go stays (holds, open or closed), each matched at the card's exit or next entry by its fingerprint. */
  readonly stays: number;
  /** Stored offline payments, counted against their card's offline limit by its fingerprint. */
  readonly offlinePayments: number;
}

function fingerprinted(journal: SqliteJournal): Fingerprinted {
  const count = (sql: string): number => journal.db.prepare<[], { n: number }>(sql).get()?.n ?? 0;
  return {
    stays: count('SELECT COUNT(*) AS n FROM holds'),
    offlinePayments: count('SELECT COUNT(*) AS n FROM offline_payments WHERE card_fingerprint IS NOT NULL'),
  };
}

/**
 * The tap-and-go card fingerprint key (`fingerprint.key` beside the journal, `journal.path`): the HMAC key of every
 * card fingerprint (src/host/card-store.ts), which must stay the same across restarts — a car that entered before a
 * restart exits by its stay, and the offline per-card limit counts the card's stored payments. Kept as the key for
 * data at rest is ({@link fileKeyProvider}, the one rule of key files): created 0600, whole and synced, only when
 * absent, and a file that holds no key is refused, never replaced. A missing file is created only for a journal that
 * holds no fingerprint: a new key would match none of the ones kept. Called under the journal's sender lock, before
 * any card is read.
 *
 * @throws JournalError JOURNAL_KEY naming the file and what to do: a file that holds no key or is accessible to group
 *   or others, a missing one whose key the journal's fingerprints were made under, one that cannot be read or created.
 */
export function loadFingerprintKey(journal: SqliteJournal, path: string): Buffer {
  return fileKeyProvider(path, {
    configKey: 'journal.path',
    beforeCreate: () => {
      const kept = fingerprinted(journal);
      if (kept.stays + kept.offlinePayments > 0)
        throw new JournalError(
          'JOURNAL_KEY',
          `${path}: the card fingerprint key is missing, and the journal keeps ${kept.stays} tap-and-go stay(s) and ` +
            `${kept.offlinePayments} offline payment(s) fingerprinted under it, which a new key would not match; ` +
            'restore the key file from a backup',
        );
    },
  }).loadKey();
}
