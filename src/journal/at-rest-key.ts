import { tagsContext } from './authorization-data.js';
import { keyCheckValue, open as openSealed } from './encryption.js';
import { JournalError } from './errors.js';
import type { SqliteJournal } from './journal.js';

/**
 * The key of card data at rest and what the journal database holds sealed under it (DESIGN.md rule 4). One rule of
 * what is sealed ({@link SEALED_COLUMNS}), read by the check every opening of the journal with a key makes
 * ({@link checkAtRestKey}).
 */

/** The meta row holding {@link keyCheckValue} of the key the sealed data is sealed with (name kept from 0002). */
export const KEY_CHECK_META = 'offline_key_check';

/** Associated data of a stored offline payment's sealed request: its row's transactionId. */
export function offlineBodyContext(transactionId: string): string {
  return `offline-payment:${transactionId}`;
}

/** One column holding values sealed under the at-rest key, NULL once wiped. */
interface SealedColumn {
  /** What the operator is told is sealed, per value, e.g. "stored offline payment(s)". */
  readonly what: string;
  readonly table: string;
  readonly column: string;
  /** The associated data each value was sealed with, from its row's transaction_id. */
  readonly context: (transactionId: string) => string;
}

/**
 * Everything the journal keeps sealed under the at-rest key: a stored offline payment's request until its forward
 * completes, the tag set of an authorization until its follow-ons are done (both tables key their rows by a unique
 * transaction_id). A new sealed column is added here, and the key check covers it.
 */
const SEALED_COLUMNS: readonly SealedColumn[] = [
  {
    what: 'stored offline payment(s)',
    table: 'offline_payments',
    column: 'body_enc',
    context: offlineBodyContext,
  },
  {
    what: 'tag set(s) kept for follow-ons of open authorizations',
    table: 'authorization_data',
    column: 'tags_enc',
    context: tagsContext,
  },
];

/** How many values of each kind are sealed, in the order of {@link SEALED_COLUMNS}. */
export interface SealedCounts {
  /** Stored offline payments whose request is still sealed. */
  readonly storedPayments: number;
  /** Tag sets kept for follow-ons. */
  readonly tagSets: number;
}

function countsOf(values: readonly number[]): SealedCounts {
  return { storedPayments: values[0] ?? 0, tagSets: values[1] ?? 0 };
}

/** What is sealed under the at-rest key in the journal now. Reads no card data and needs no key. */
export function sealedCounts(journal: SqliteJournal): SealedCounts {
  return countsOf(
    SEALED_COLUMNS.map(
      (c) =>
        journal.db
          .prepare<[], { n: number }>(`SELECT COUNT(*) AS n FROM ${c.table} WHERE ${c.column} IS NOT NULL`)
          .get()?.n ?? 0,
    ),
  );
}

function describeSealed(counts: SealedCounts): string {
  const values = [counts.storedPayments, counts.tagSets];
  return SEALED_COLUMNS.map((c, i) => `${values[i] ?? 0} ${c.what}`).join(', ');
}

function storedCheck(journal: SqliteJournal): string | undefined {
  return journal.db
    .prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?')
    .get(KEY_CHECK_META)?.value;
}

function writeCheck(journal: SqliteJournal, key: Buffer): void {
  journal.db
    .prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)')
    .run(KEY_CHECK_META, keyCheckValue(key));
}

/** Whether the first sealed value opens under `key` (for a journal that recorded no key check value). */
function firstSealedOpens(journal: SqliteJournal, key: Buffer): boolean {
  for (const c of SEALED_COLUMNS) {
    const row = journal.db
      .prepare<[], { tx: string; sealed: Buffer }>(
        `SELECT transaction_id AS tx, ${c.column} AS sealed FROM ${c.table} WHERE ${c.column} IS NOT NULL LIMIT 1`,
      )
      .get();
    if (!row) continue;
    try {
      openSealed(key, row.sealed, c.context(row.tx)).fill(0);
      return true;
    } catch {
      return false;
    }
  }
  return true;
}

/**
 * Refuses `key` (`JOURNAL_KEY`, naming how many values of each kind are sealed) when the journal holds data sealed
 * under another key: a start with it would take cards and fail later, on the forward of a stored payment or on the
 * capture or reversal of an open authorization (its tags unreadable: the hold left on the card). With nothing sealed,
 * any key is accepted and recorded. Which key the data is sealed with is told by the key check value in the meta
 * table; a journal that recorded none is tried on its first sealed value. Called before any card is taken.
 */
export function checkAtRestKey(journal: SqliteJournal, key: Buffer, description: string): void {
  const check = keyCheckValue(key);
  journal.atomically(true, () => {
    const stored = storedCheck(journal);
    if (stored === check) return;
    const counts = sealedCounts(journal);
    if (
      counts.storedPayments + counts.tagSets > 0 &&
      (stored !== undefined || !firstSealedOpens(journal, key))
    )
      throw new JournalError(
        'JOURNAL_KEY',
        `${description} is not the key the journal's card data is sealed with (${describeSealed(counts)}); ` +
          'start with the key file they were sealed under',
      );
    writeCheck(journal, key);
  });
}
