import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AuthorizationDataStore } from './authorization-data.js';
import { seal } from './encryption.js';
import { JournalError } from './errors.js';
import { HoldStore, type StoredHold } from './holds.js';
import { openJournal, type SqliteJournal } from './journal.js';
import { importLegacySideFiles } from './legacy-import.js';

const KEY = Buffer.alloc(32, 9);
const TAGS = '9F26081122334455667788950500000080009F100706010A03A0B000';

const journals: SqliteJournal[] = [];
afterEach(() => {
  for (const j of journals.splice(0)) j.close();
});

function hold(id: string): StoredHold {
  return {
    holdId: id,
    fingerprint: `fp-${id}`,
    maskedPan: '555555******4444',
    gatewayId: '7000000000000000000001',
    transactionId: id,
    authorizedMinor: 2_000,
    currency: 'GBP',
    cardRef: `card_${id}`,
    includeEmvTags: false,
    enteredAtMs: 1_000,
    expiresAtMs: 2_000,
  };
}

/** The side files exactly as src/host/holds.ts and src/host/tag-vault.ts wrote them. */
function legacyFiles(holds: StoredHold[] | string, tags: Record<string, string> | string) {
  const dir = mkdtempSync(join(tmpdir(), 'legacy-'));
  const holdsPath = join(dir, 'holds.json');
  const tagVaultPath = join(dir, 'authorization-tags.json');
  writeFileSync(holdsPath, typeof holds === 'string' ? holds : JSON.stringify(holds));
  const sealed =
    typeof tags === 'string'
      ? tags
      : JSON.stringify(
          Object.fromEntries(
            Object.entries(tags).map(([tx, hex]) => [
              tx,
              seal(KEY, Buffer.from(hex, 'utf8'), `tags:${tx}`).toString('base64'),
            ]),
          ),
        );
  writeFileSync(tagVaultPath, sealed);
  return { dir, holdsPath, tagVaultPath, key: KEY, journalPath: join(dir, 'journal.db') };
}

function journalAt(path: string): SqliteJournal {
  const journal = openJournal(path, { now: () => new Date(5_000) });
  journals.push(journal);
  return journal;
}

function importError(fn: () => unknown): JournalError {
  try {
    fn();
  } catch (e) {
    if (e instanceof JournalError) return e;
    throw e;
  }
  throw new Error('expected a JournalError');
}

describe('importLegacySideFiles', () => {
  it('moves holds and tag sets into the journal database, then deletes the files', () => {
    const files = legacyFiles([hold('H1'), hold('H2')], { H1: TAGS, T9: '9F2701' });
    writeFileSync(`${files.holdsPath}.tmp`, '[');
    const journal = journalAt(files.journalPath);
    const report = importLegacySideFiles(journal, files);
    expect(report).toEqual({
      holds: 2,
      tagSets: 2,
      removed: [files.holdsPath, `${files.holdsPath}.tmp`, files.tagVaultPath],
    });
    expect(existsSync(files.holdsPath)).toBe(false);
    expect(existsSync(files.tagVaultPath)).toBe(false);

    const holds = new HoldStore(journal);
    expect(holds.unclaimed()).toEqual([hold('H1'), hold('H2')]);
    const data = new AuthorizationDataStore(journal, KEY);
    expect(data.tags('H1')).toBe(TAGS);
    expect(data.tags('T9')).toBe('9F2701');
  });

  it('is idempotent: a second run after a crash before the deletion skips what is there', () => {
    const files = legacyFiles([hold('H1')], { H1: TAGS });
    const keep = {
      holds: readFileSync(files.holdsPath, 'utf8'),
      tags: readFileSync(files.tagVaultPath, 'utf8'),
    };
    const journal = journalAt(files.journalPath);
    importLegacySideFiles(journal, files);
    // The hold was settled and its tags wiped since; the stale files come back (deletion lost in a crash).
    const holds = new HoldStore(journal);
    const data = new AuthorizationDataStore(journal, KEY);
    holds.close(hold('H1'), 'captured');
    data.putTags('H1', '9F2602AABB');
    writeFileSync(files.holdsPath, keep.holds);
    writeFileSync(files.tagVaultPath, keep.tags);

    expect(importLegacySideFiles(journal, files)).toEqual({
      holds: 0,
      tagSets: 0,
      removed: [files.holdsPath, files.tagVaultPath],
    });
    expect(holds.has('H1')).toBe(false);
    expect(data.tags('H1')).toBe('9F2602AABB');
  });

  it('does nothing when there are no side files', () => {
    const files = legacyFiles([], {});
    const journal = journalAt(files.journalPath);
    const missing = {
      ...files,
      holdsPath: join(files.dir, 'none.json'),
      tagVaultPath: join(files.dir, 'no.json'),
    };
    expect(importLegacySideFiles(journal, missing)).toEqual({ holds: 0, tagSets: 0, removed: [] });
  });

  it.each([
    ['a holds file that is not JSON', () => legacyFiles('[{"holdId":', { H1: TAGS }), 'holdsPath'],
    ['a holds file that is not an array', () => legacyFiles('{}', { H1: TAGS }), 'holdsPath'],
    [
      'a hold showing a full PAN',
      () => legacyFiles([hold('H1'), { ...hold('H2'), maskedPan: '5555555555554444' }], { H1: TAGS }),
      'holdsPath',
    ],
    ['a tag vault that is not JSON', () => legacyFiles([hold('H1')], 'not json'), 'tagVaultPath'],
    ['a tag vault that is an array', () => legacyFiles([hold('H1')], '[]'), 'tagVaultPath'],
    ['tags sealed for another transaction', () => tamperedVault(), 'tagVaultPath'],
  ] as const)('refuses %s with JOURNAL_IMPORT naming it and loses nothing', (_name, make, which) => {
    const files = make();
    const before = [readFileSync(files.holdsPath, 'utf8'), readFileSync(files.tagVaultPath, 'utf8')];
    const journal = journalAt(files.journalPath);
    const err = importError(() => importLegacySideFiles(journal, files));
    expect(err.code).toBe('JOURNAL_IMPORT');
    expect(err.message).toContain(files[which]);
    expect([readFileSync(files.holdsPath, 'utf8'), readFileSync(files.tagVaultPath, 'utf8')]).toEqual(before);
    expect(new HoldStore(journal).size).toBe(0);
    expect(new AuthorizationDataStore(journal, KEY).tags('H1')).toBeUndefined();
  });

  it('refuses tags sealed under another key and keeps the file', () => {
    const files = legacyFiles([hold('H1')], { H1: TAGS });
    const journal = journalAt(files.journalPath);
    const err = importError(() => importLegacySideFiles(journal, { ...files, key: Buffer.alloc(32, 1) }));
    expect(err.code).toBe('JOURNAL_IMPORT');
    expect((err.cause as JournalError).code).toBe('JOURNAL_DECRYPT');
    expect(existsSync(files.tagVaultPath)).toBe(true);
    expect(existsSync(files.holdsPath)).toBe(true);
    expect(new HoldStore(journal).size).toBe(0);
  });
});

/** A vault whose entry for H1 holds the ciphertext sealed for T2 (moved between rows). */
function tamperedVault() {
  const files = legacyFiles([hold('H1')], { T2: TAGS });
  const rows = JSON.parse(readFileSync(files.tagVaultPath, 'utf8')) as Record<string, string>;
  writeFileSync(files.tagVaultPath, JSON.stringify({ H1: rows.T2 }));
  return files;
}
