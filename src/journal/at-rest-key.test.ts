import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkAtRestKey, KEY_CHECK_META, sealedCounts } from './at-rest-key.js';
import { AuthorizationDataStore } from './authorization-data.js';
import { fileKeyProvider, keyCheckValue, staticKeyProvider } from './encryption.js';
import { openJournal, type SqliteJournal } from './journal.js';
import { OfflineQueue, type OfflineLimits } from './offline-queue.js';

const TAGS = '9F02060000000020009F26081122334455667788';
const LIMITS: OfflineLimits = {
  maxTransactionMinor: 5_000,
  maxTotalMinorPerCurrency: 10_000,
  maxCount: 5,
  maxAgeHours: 24,
};
const BODY = '{"pointOfSaleInformation":{"trackData":";5555555555554444=29121010000012300000?"}}';

const journals: SqliteJournal[] = [];
afterEach(() => {
  for (const j of journals.splice(0)) j.close();
});

/** A journal file and a key file in a new directory; the key file created as the terminal creates it. */
function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'pt-at-rest-'));
  const keyFile = join(dir, 'var', 'offline.key');
  const journalPath = join(dir, 'journal.db');
  const reopen = (): SqliteJournal => {
    const journal = openJournal(journalPath);
    journals.push(journal);
    return journal;
  };
  const journal = reopen();
  const key = fileKeyProvider(keyFile).loadKey();
  return { dir, keyFile, journal, key, reopen };
}

function queueOf(journal: SqliteJournal, keyFile: string): OfflineQueue {
  return new OfflineQueue(journal, {
    policy: 'prefer-online',
    limits: LIMITS,
    keyProvider: fileKeyProvider(keyFile),
  });
}

/** One stored offline payment and one kept tag set, sealed under the key of `keyFile`. */
function sealSome(journal: SqliteJournal, keyFile: string): void {
  queueOf(journal, keyFile).store({
    transactionId: 'off-1',
    service: 'sale',
    comments: 'Parking Sale',
    method: 'POST',
    path: '/pts/v2/payments',
    body: Buffer.from(BODY),
    amountMinor: 1_000,
    currency: 'GBP',
    entryMode: 'contact',
  });
  new AuthorizationDataStore(journal, fileKeyProvider(keyFile).loadKey()).putTags('auth-1', TAGS);
}

function otherKey(fill = 9): Buffer {
  return Buffer.alloc(32, fill);
}

describe('checkAtRestKey', () => {
  it('refuses another key when only the tags of an open authorization are sealed, naming what is sealed', () => {
    const { journal, key } = setup();
    checkAtRestKey(journal, key, 'key file K');
    new AuthorizationDataStore(journal, key).putTags('auth-1', TAGS);
    expect(sealedCounts(journal)).toEqual({ storedPayments: 0, tagSets: 1 });
    expect(() => checkAtRestKey(journal, otherKey(), 'key file other')).toThrowError(
      expect.objectContaining({
        code: 'JOURNAL_KEY',
        message: expect.stringMatching(
          /key file other .*0 stored offline payment\(s\), 1 tag set\(s\)/,
        ) as string,
      }) as Error,
    );
    // The offline queue makes the same check: it refuses to open, as the start does.
    expect(
      () =>
        new OfflineQueue(journal, {
          policy: 'prefer-online',
          limits: LIMITS,
          keyProvider: staticKeyProvider(otherKey()),
        }),
    ).toThrowError(expect.objectContaining({ code: 'JOURNAL_KEY' }) as Error);
  });

  it('counts stored payments and tags alike: a key file replaced under both is refused, naming both', () => {
    const { journal, keyFile } = setup();
    sealSome(journal, keyFile);
    expect(() => checkAtRestKey(journal, otherKey(), 'key file other')).toThrowError(
      expect.objectContaining({
        code: 'JOURNAL_KEY',
        message: expect.stringMatching(/1 stored offline payment\(s\), 1 tag set\(s\)/) as string,
      }) as Error,
    );
  });

  it('accepts and records any key once nothing sealed is kept', () => {
    const { journal, key } = setup();
    const tags = new AuthorizationDataStore(journal, key);
    tags.putTags('auth-1', TAGS);
    checkAtRestKey(journal, key, 'k');
    tags.forget('auth-1');
    checkAtRestKey(journal, otherKey(), 'k2');
    expect(journal.db.prepare('SELECT value FROM meta WHERE key = ?').get(KEY_CHECK_META)).toEqual({
      value: keyCheckValue(otherKey()),
    });
  });

  it('tries the first sealed value when the journal recorded no key check value', () => {
    const { journal, key } = setup();
    new AuthorizationDataStore(journal, key).putTags('auth-1', TAGS);
    expect(() => checkAtRestKey(journal, otherKey(), 'other')).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_KEY' }) as Error,
    );
    checkAtRestKey(journal, key, 'right');
    expect(journal.db.prepare('SELECT value FROM meta WHERE key = ?').get(KEY_CHECK_META)).toEqual({
      value: keyCheckValue(key),
    });
  });
});
