import { readFileSync, rmSync } from 'node:fs';
import { authorizationDataStatements, checkTagsHex, sealTags } from './authorization-data.js';
import { KEY_BYTES, open as openSealed } from './encryption.js';
import { JournalError } from './errors.js';
import { checkIdentifier, checkObject, type JournalConnection } from './field-checks.js';
import { holdStatements, holdValues, type StoredHold } from './holds.js';

/** Where the side files of earlier versions are, and the at-rest key their tags were sealed with. */
export interface LegacySideFiles {
  /** The former `HoldStore` file (`var/holds.json`): a JSON array of holds. */
  readonly holdsPath: string;
  /**
   * The former `TagVault` file (`var/authorization-tags.json`): a JSON object from transactionId to the base64 of
   * the tag set's hex sealed with AES-256-GCM under `key`, associated data `tags:${transactionId}`.
   */
  readonly tagVaultPath: string;
  /** The at-rest key (32 bytes; the host loads it from `offline.keyFile`). */
  readonly key: Buffer;
}

export interface LegacyImportReport {
  /** Holds added to the journal database (those already there are skipped). */
  readonly holds: number;
  /** Tag sets added (a transaction that already has tags in the database keeps them). */
  readonly tagSets: number;
  /** Files deleted after the commit. */
  readonly removed: string[];
}

type Read = { found: false } | { found: true; value: unknown };

function importError(path: string, what: string, cause?: unknown): JournalError {
  return new JournalError(
    'JOURNAL_IMPORT',
    `${path}: ${what}; the file is left in place and nothing was imported`,
    cause === undefined ? undefined : { cause },
  );
}

function readJson(path: string): Read {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { found: false };
    throw importError(path, 'cannot be read', e);
  }
  try {
    return { found: true, value: JSON.parse(text) as unknown };
  } catch (e) {
    throw importError(path, 'is not JSON', e);
  }
}

function parseHolds(path: string, value: unknown): StoredHold[] {
  if (!Array.isArray(value)) throw importError(path, 'is not an array of holds');
  return value.map((h: unknown, i) => {
    try {
      holdValues(h as StoredHold);
      return h as StoredHold;
    } catch (e) {
      throw importError(path, `hold #${i} is malformed`, e);
    }
  });
}

function parseTags(path: string, value: unknown, key: Buffer): Map<string, string> {
  try {
    checkObject(value, 'the tag vault');
  } catch (e) {
    throw importError(path, 'is not an object of sealed tag sets', e);
  }
  const tags = new Map<string, string>();
  for (const [tx, sealed] of Object.entries(value)) {
    try {
      checkIdentifier(tx, 'transactionId');
      if (typeof sealed !== 'string')
        throw new JournalError('JOURNAL_INVALID', 'a sealed tag set is a string');
      // The context of the former TagVault (src/host/tag-vault.ts): the data is resealed for its row below.
      const hex = openSealed(key, Buffer.from(sealed, 'base64'), `tags:${tx}`).toString('utf8');
      checkTagsHex(hex);
      tags.set(tx, hex);
    } catch (e) {
      throw importError(path, `the tag set of ${tx} cannot be used`, e);
    }
  }
  return tags;
}

/**
 * Moves the side files of earlier versions into the journal database (DESIGN.md, money safety rule 6): open holds and
 * the encrypted tag sets kept for follow-ons. Run once at start, before the stores are used and before the first
 * card.
 *
 * Both files are read and checked in full first; a file that cannot be read, parsed or decrypted throws
 * `JOURNAL_IMPORT` naming it, and nothing is imported nor deleted. Everything is then inserted in one durable
 * transaction, and the files (and `.tmp` leftovers of an interrupted rewrite, which the former stores never read)
 * are deleted only after the commit. Idempotent: a crash between the commit and the deletion makes the next run skip
 * what is already in the database — a hold id already there (open or closed) is never reopened, and a transaction
 * that already has tags keeps them. Missing files are nothing to import.
 */
export function importLegacySideFiles(
  journal: JournalConnection,
  files: LegacySideFiles,
): LegacyImportReport {
  if (!Buffer.isBuffer(files.key) || files.key.length !== KEY_BYTES)
    throw new JournalError('JOURNAL_KEY', `the at-rest key must be ${KEY_BYTES} bytes`);
  const holdsFile = readJson(files.holdsPath);
  const tagsFile = readJson(files.tagVaultPath);
  const holds = holdsFile.found ? parseHolds(files.holdsPath, holdsFile.value) : [];
  const tags = tagsFile.found
    ? parseTags(files.tagVaultPath, tagsFile.value, files.key)
    : new Map<string, string>();

  const holdStmts = holdStatements(journal);
  const dataStmts = authorizationDataStatements(journal);
  const counts = journal.atomically(true, () => {
    let addedHolds = 0;
    let addedTags = 0;
    for (const h of holds) {
      const values = holdValues(h);
      if (holdStmts.get.get(values.hold_id) !== undefined) continue;
      holdStmts.insert.run(values);
      addedHolds++;
    }
    const at = journal.now().getTime();
    for (const [tx, hex] of tags) {
      const existing = dataStmts.get.get(tx);
      if (existing !== undefined && existing.tags_enc !== null) continue;
      dataStmts.putTags.run({ tx, tags: sealTags(files.key, tx, hex), at });
      addedTags++;
    }
    return { holds: addedHolds, tagSets: addedTags };
  });

  const removed: string[] = [];
  for (const [path, found] of [
    [files.holdsPath, holdsFile.found],
    [files.tagVaultPath, tagsFile.found],
  ] as const) {
    for (const p of found ? [path, `${path}.tmp`] : [`${path}.tmp`]) {
      try {
        rmSync(p);
        removed.push(p);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw new JournalError(
          'JOURNAL_IMPORT',
          `${p}: imported into the journal but cannot be deleted; delete it (it is no longer read)`,
          { cause: e },
        );
      }
    }
  }
  return { ...counts, removed };
}
