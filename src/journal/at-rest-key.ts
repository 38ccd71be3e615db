import { randomBytes } from 'node:crypto';
import { existsSync, lstatSync } from 'node:fs';
import { disclosureContext, tagsContext } from './authorization-data.js';
import {
  discardPendingKey,
  fileKeyProvider,
  installPendingKey,
  isFileKeyProvider,
  KEY_BYTES,
  keyCheckValue,
  open as openSealed,
  readPendingKey,
  seal,
  writePendingKey,
  type KeyProvider,
} from './encryption.js';
import { JournalError } from './errors.js';
import type { SqliteJournal } from './journal.js';

/**
 * The key of card data at rest and what the journal database holds sealed under it (DESIGN.md rule 4). One rule of
 * what is sealed ({@link SEALED_COLUMNS}), read by the check every opening of the journal with a key makes
 * ({@link checkAtRestKey}) and by the rotation that re-seals it under a new key ({@link rotateKeyFile}).
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
 * completes, the tag set of an authorization and the currency-conversion disclosure of a converted one until its
 * follow-ons are done (both tables key their rows by a unique transaction_id). A new sealed column is added here, and the key check and the rotation cover it.
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
  {
    what: 'currency-conversion disclosure(s) kept for receipts of converted payments',
    table: 'authorization_data',
    column: 'dcc_disclosure_enc',
    context: disclosureContext,
  },
];

/** How many values of each kind are sealed, in the order of {@link SEALED_COLUMNS}. */
export interface SealedCounts {
  /** Stored offline payments whose request is still sealed. */
  readonly storedPayments: number;
  /** Tag sets kept for follow-ons. */
  readonly tagSets: number;
  /** Currency-conversion disclosures kept for the receipts of converted payments. */
  readonly disclosures: number;
}

function countsOf(values: readonly number[]): SealedCounts {
  return { storedPayments: values[0] ?? 0, tagSets: values[1] ?? 0, disclosures: values[2] ?? 0 };
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
  const values = [counts.storedPayments, counts.tagSets, counts.disclosures];
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
      counts.storedPayments + counts.tagSets + counts.disclosures > 0 &&
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

/**
 * Opens every sealed value under `from` and seals it again under `to`, and records `to`'s key check value: all in the
 * caller's transaction. A value that does not open throws `JOURNAL_DECRYPT` naming its row, and the transaction
 * rolls back whole.
 */
function resealAll(journal: SqliteJournal, from: Buffer, to: Buffer): SealedCounts {
  const counts = SEALED_COLUMNS.map((c) => {
    const rows = journal.db
      .prepare<[], { tx: string; sealed: Buffer }>(
        `SELECT transaction_id AS tx, ${c.column} AS sealed FROM ${c.table} WHERE ${c.column} IS NOT NULL`,
      )
      .all();
    const update = journal.db.prepare(`UPDATE ${c.table} SET ${c.column} = ? WHERE transaction_id = ?`);
    for (const row of rows) {
      let clear: Buffer;
      try {
        clear = openSealed(from, row.sealed, c.context(row.tx));
      } catch (cause) {
        throw new JournalError(
          'JOURNAL_DECRYPT',
          `the sealed value of ${row.tx} in ${c.table} does not open under the current key; nothing was re-sealed`,
          { cause },
        );
      }
      try {
        update.run(seal(to, clear, c.context(row.tx)), row.tx);
      } finally {
        clear.fill(0);
      }
    }
    return rows.length;
  });
  writeCheck(journal, to);
  return countsOf(counts);
}

/**
 * Values sealed under the at-rest key outside the journal database (the OAuth token store, a file of its own): sealed
 * again under `to` once the journal is, before the new key takes the key file's place. Must be idempotent (it runs
 * again when a rotation is finished after a crash) and leave what it cannot open as it is.
 */
export type ResealOutside = (from: Buffer | undefined, to: Buffer) => void;

/** What {@link settlePendingRotation} found. */
export type PendingRotation = 'none' | 'finished' | 'undone';

/**
 * Finishes or undoes a rotation of the key file `keyFile` interrupted by a crash, by the key check value the journal
 * recorded: when the journal is sealed under the pending key (the side file `KEYFILE.rotating`), it is moved into place
 * (never would the journal be left under a key that exists nowhere on disk); otherwise it is removed (the journal's
 * transaction never committed). Runs before the key file is read, by the start and by `offline rotate-key`, under the
 * journal's sender lock.
 */
export function settlePendingRotation(
  journal: SqliteJournal,
  keyFile: string,
  resealOutside?: ResealOutside,
): PendingRotation {
  const pending = readPendingKey(keyFile);
  if (pending === undefined) return 'none';
  if (pending !== null && storedCheck(journal) === keyCheckValue(pending)) {
    const previous = existsSync(keyFile) ? fileKeyProvider(keyFile).loadKey() : undefined;
    resealOutside?.(previous, pending);
    installPendingKey(keyFile);
    journal.logger.warn({ keyFile }, 'an interrupted rotation of the at-rest key was finished');
    return 'finished';
  }
  discardPendingKey(keyFile);
  journal.logger.warn({ keyFile }, 'an interrupted rotation of the at-rest key was undone');
  return 'undone';
}

/** A point of {@link rotateKeyFile} after which tests stop it, as a crash would. */
export type RotationStep = 'pending-key-written' | 'journal-resealed';

export interface RotateKeyOptions {
  /** Where the key comes from: a key file only ({@link fileKeyProvider}). */
  keyProvider: KeyProvider;
  /** Values sealed outside the journal (see {@link ResealOutside}). */
  resealOutside?: ResealOutside;
  /** Written in the journal's transaction that re-seals (e.g. the audit record), with what was re-sealed. */
  record?: (counts: SealedCounts) => void;
  /** Tests: called after each step; throwing stops the rotation there, as a crash would. */
  afterStep?: (step: RotationStep) => void;
}

export interface RotationReport extends SealedCounts {
  /** What an interrupted rotation found at the start had become. */
  readonly pendingRotation: PendingRotation;
}

/**
 * Replaces the at-rest key of the key file with a new random one (PCI DSS: keys are changed at the end of their
 * cryptoperiod), crash-safe at every point: the new key is written whole and synced to a side file first; then every
 * sealed value of the journal is sealed again under it, with its key check value, in one transaction; then the side
 * file is renamed over the key file and the directory synced. A crash before the commit leaves the journal under the
 * old key (the side file is removed at the next start or rotation); after it, the next start or rotation moves the
 * side file into place ({@link settlePendingRotation}). The caller holds the journal's sender lock (the terminal is
 * not running). Refuses a key that is not in a file (`JOURNAL_KEY`) and a key file the journal is not sealed under.
 */
export function rotateKeyFile(journal: SqliteJournal, options: RotateKeyOptions): RotationReport {
  const { keyProvider } = options;
  if (!isFileKeyProvider(keyProvider))
    throw new JournalError(
      'JOURNAL_KEY',
      `${keyProvider.description}: only a key file (offline.keyFile) can be rotated by the terminal; a key kept in ` +
        'the OS keystore is not supported',
    );
  const { keyFile } = keyProvider;
  const pendingRotation = settlePendingRotation(journal, keyFile, options.resealOutside);
  if (!existsSync(keyFile))
    throw new JournalError(
      'JOURNAL_KEY',
      `${keyFile}: no key file to rotate (it is created at the first start)`,
    );
  // The new key takes the key file's place by its name: under another name (a symbolic link's target, a second hard
  // link) the retired key would stay on disk, and behind a symbolic link the new one would land beside the link, not
  // where the key is kept.
  const name = lstatSync(keyFile);
  if (name.isSymbolicLink() || name.nlink > 1)
    throw new JournalError(
      'JOURNAL_KEY',
      `${keyFile}: the key file is ${name.isSymbolicLink() ? 'a symbolic link' : 'linked under another name too'}; ` +
        'a rotation would leave the retired key on disk under the other name: set offline.keyFile to the file ' +
        'itself, as its only name',
    );
  // Read again: a rotation finished just now has replaced the file.
  const current = fileKeyProvider(keyFile);
  const from = current.loadKey();
  checkAtRestKey(journal, from, current.description);
  const to = randomBytes(KEY_BYTES);
  writePendingKey(keyFile, to);
  options.afterStep?.('pending-key-written');
  let counts: SealedCounts;
  try {
    counts = journal.atomically(true, () => {
      const resealed = resealAll(journal, from, to);
      options.record?.(resealed);
      return resealed;
    });
  } catch (e) {
    // Undone unless the commit reached the disk after all: the journal's key check value says which.
    settlePendingRotation(journal, keyFile, options.resealOutside);
    throw e;
  } finally {
    to.fill(0);
  }
  options.afterStep?.('journal-resealed');
  settlePendingRotation(journal, keyFile, options.resealOutside);
  return { ...counts, pendingRotation };
}
