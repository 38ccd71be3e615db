import {
  existsSync,
  linkSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  checkAtRestKey,
  KEY_CHECK_META,
  rotateKeyFile,
  sealedCounts,
  settlePendingRotation,
  type RotationStep,
} from './at-rest-key.js';
import { AuthorizationDataStore } from './authorization-data.js';
import {
  fileKeyProvider,
  keyCheckValue,
  pendingKeyPath,
  staticKeyProvider,
  writePendingKey,
} from './encryption.js';
import { openJournal, type SqliteJournal } from './journal.js';
import { OfflineQueue, type OfflineLimits } from './offline-queue.js';

const TAGS = '9F02060000000020009F26081122334455667788';
const LIMITS: OfflineLimits = {
  maxTransactionMinor: 5_000,
  maxTotalMinorPerCurrency: 10_000,
  maxCount: 5,
  maxAgeHours: 24,
  maxCountPerCard: 2,
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
    fingerprint: 'card-off-1',
  });
  new AuthorizationDataStore(journal, fileKeyProvider(keyFile).loadKey()).putTags('auth-1', TAGS);
}

/** What the stores read back under the key of `keyFile` now. */
function readBack(
  journal: SqliteJournal,
  keyFile: string,
): { tags: string | undefined; forwardable: boolean } {
  const key = fileKeyProvider(keyFile).loadKey();
  const tags = new AuthorizationDataStore(journal, key).tags('auth-1');
  const stored = queueOf(journal, keyFile).findByTransactionId('off-1');
  return { tags, forwardable: stored?.hasBody === true };
}

function otherKey(fill = 9): Buffer {
  return Buffer.alloc(32, fill);
}

describe('checkAtRestKey', () => {
  it('refuses another key when only the tags of an open authorization are sealed, naming what is sealed', () => {
    const { journal, key } = setup();
    checkAtRestKey(journal, key, 'key file K');
    new AuthorizationDataStore(journal, key).putTags('auth-1', TAGS);
    expect(sealedCounts(journal)).toEqual({ storedPayments: 0, tagSets: 1, disclosures: 0 });
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

describe('rotateKeyFile', () => {
  it('re-seals the disclosure of a converted sale (nothing else sealed) and refuses another key for it', () => {
    const { journal, keyFile, key } = setup();
    checkAtRestKey(journal, key, 'key file K');
    const terms = {
      indicator: '1',
      family: 'A',
      localAmountMinor: 1_000,
      localCurrency: 'EUR',
      billingAmountMinor: 1_612,
      billingCurrency: 'JPY',
      exchangeRate: '161.234',
      exchangeRateInverted: false,
      exchangeRateTimeStamp: '20300101080000',
    } as const;
    const shown = { marginRate: '3.5', disclaimer: 'Rate of 2026-12-01 08:11:00 UTC.' };
    new AuthorizationDataStore(journal, key).putDccTerms('sale-1', terms, shown);
    expect(sealedCounts(journal)).toEqual({ storedPayments: 0, tagSets: 0, disclosures: 1 });
    expect(() => checkAtRestKey(journal, otherKey(), 'key file other')).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_KEY' }) as Error,
    );
    const report = rotateKeyFile(journal, { keyProvider: fileKeyProvider(keyFile) });
    expect(report).toEqual({ storedPayments: 0, tagSets: 0, disclosures: 1, pendingRotation: 'none' });
    const rotated = fileKeyProvider(keyFile).loadKey();
    expect(new AuthorizationDataStore(journal, rotated).dccDisclosure('sale-1')).toEqual(shown);
  });

  it('re-seals stored payments and kept tags under a new key file, in one step with its key check value', () => {
    const { dir, journal, keyFile, key } = setup();
    sealSome(journal, keyFile);
    const recorded: unknown[] = [];
    const report = rotateKeyFile(journal, {
      keyProvider: fileKeyProvider(keyFile),
      record: (counts) => recorded.push(counts),
    });
    expect(report).toEqual({ storedPayments: 1, tagSets: 1, disclosures: 0, pendingRotation: 'none' });
    expect(recorded).toEqual([{ storedPayments: 1, tagSets: 1, disclosures: 0 }]);
    const rotated = fileKeyProvider(keyFile).loadKey();
    expect(rotated.equals(key)).toBe(false);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(existsSync(pendingKeyPath(keyFile))).toBe(false);
    expect(readBack(journal, keyFile)).toEqual({ tags: TAGS, forwardable: true });
    // Re-sealed in SQLite, never written there in clear on the way: neither the file nor its write-ahead log holds
    // the card number.
    for (const file of readdirSync(dir).filter((f) => f.startsWith('journal.db')))
      expect(readFileSync(join(dir, file)).includes('5555555555554444'), file).toBe(false);
    // The old key opens nothing any more: the start refuses it.
    expect(() => checkAtRestKey(journal, key, 'old')).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_KEY' }) as Error,
    );
    expect(() => new AuthorizationDataStore(journal, key).tags('auth-1')).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_DECRYPT' }) as Error,
    );
    // No draft left beside the key.
    expect(readdirSync(join(keyFile, '..'))).toEqual(['offline.key']);
  });

  it('refuses a key file the journal is not sealed under, and changes nothing', () => {
    const { journal, keyFile } = setup();
    sealSome(journal, keyFile);
    const before = readFileSync(keyFile, 'utf8');
    writeFileSync(keyFile, `${otherKey().toString('hex')}\n`, { mode: 0o600 });
    expect(() => rotateKeyFile(journal, { keyProvider: fileKeyProvider(keyFile) })).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_KEY' }) as Error,
    );
    expect(existsSync(pendingKeyPath(keyFile))).toBe(false);
    writeFileSync(keyFile, before, { mode: 0o600 });
    expect(readBack(journal, keyFile)).toEqual({ tags: TAGS, forwardable: true });
  });

  it.skipIf(process.platform === 'win32')(
    'refuses a key file that is a link, leaving the key where it lives: the retired key would stay under its other name',
    () => {
      const { dir, journal, keyFile } = setup();
      sealSome(journal, keyFile);
      const before = readFileSync(keyFile, 'utf8');
      // The configured name a symbolic link to the key where it lives (a volume of its own, say).
      const symbolic = join(dir, 'symbolic.key');
      symlinkSync(keyFile, symbolic);
      expect(() => rotateKeyFile(journal, { keyProvider: fileKeyProvider(symbolic) })).toThrowError(
        expect.objectContaining({
          code: 'JOURNAL_KEY',
          message: expect.stringContaining('link') as string,
        }) as Error,
      );
      expect(lstatSync(symbolic).isSymbolicLink()).toBe(true);
      expect(existsSync(pendingKeyPath(symbolic))).toBe(false);
      // The key file with a second name (a copy made with ln).
      linkSync(keyFile, join(dir, 'second-name.key'));
      expect(() => rotateKeyFile(journal, { keyProvider: fileKeyProvider(keyFile) })).toThrowError(
        expect.objectContaining({
          code: 'JOURNAL_KEY',
          message: expect.stringContaining('link') as string,
        }) as Error,
      );
      expect(existsSync(pendingKeyPath(keyFile))).toBe(false);
      expect(readFileSync(keyFile, 'utf8')).toBe(before);
      expect(readBack(journal, keyFile)).toEqual({ tags: TAGS, forwardable: true });
    },
  );

  it('refuses a value that does not open (altered bytes) and leaves every value and the key as they were', () => {
    const { journal, keyFile } = setup();
    sealSome(journal, keyFile);
    const before = readFileSync(keyFile, 'utf8');
    const body = (): unknown => journal.db.prepare('SELECT body_enc FROM offline_payments').get();
    const sealedBody = body();
    journal.db
      .prepare(`UPDATE authorization_data SET tags_enc = ? WHERE transaction_id = 'auth-1'`)
      .run(Buffer.alloc(40, 1));
    expect(() => rotateKeyFile(journal, { keyProvider: fileKeyProvider(keyFile) })).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_DECRYPT' }) as Error,
    );
    expect(readFileSync(keyFile, 'utf8')).toBe(before);
    expect(existsSync(pendingKeyPath(keyFile))).toBe(false);
    expect(body()).toEqual(sealedBody);
    expect(journal.db.prepare('SELECT value FROM meta WHERE key = ?').get(KEY_CHECK_META)).toEqual({
      value: keyCheckValue(fileKeyProvider(keyFile).loadKey()),
    });
  });

  it('refuses a key that is not kept in a file (the OS keystore)', () => {
    const { journal } = setup();
    expect(() =>
      rotateKeyFile(journal, { keyProvider: staticKeyProvider(otherKey(), 'OS keystore') }),
    ).toThrowError(
      expect.objectContaining({
        code: 'JOURNAL_KEY',
        message: expect.stringMatching(/not supported/) as string,
      }) as Error,
    );
  });

  it('re-seals what lies outside the journal with the old and the new key, before the key moves', () => {
    const { journal, keyFile, key } = setup();
    const seen: Array<[boolean, boolean]> = [];
    rotateKeyFile(journal, {
      keyProvider: fileKeyProvider(keyFile),
      resealOutside: (from, to) => {
        // The key file is still the old one at this point.
        seen.push([from?.equals(key) === true, to.equals(fileKeyProvider(keyFile).loadKey())]);
      },
    });
    expect(seen).toEqual([[true, false]]);
  });

  describe('interrupted (a crash after a step) and settled at the next start or rotation', () => {
    function interrupted(step: RotationStep) {
      const { journal, keyFile, key, reopen } = setup();
      sealSome(journal, keyFile);
      expect(() =>
        rotateKeyFile(journal, {
          keyProvider: fileKeyProvider(keyFile),
          afterStep: (s) => {
            if (s === step) throw new Error(`crash after ${s}`);
          },
        }),
      ).toThrow(`crash after ${step}`);
      journal.close();
      return { keyFile, key, journal: reopen() };
    }

    it('after the side file was written, before the journal: the rotation is undone', () => {
      const { journal, keyFile, key } = interrupted('pending-key-written');
      expect(existsSync(pendingKeyPath(keyFile))).toBe(true);
      expect(settlePendingRotation(journal, keyFile)).toBe('undone');
      expect(existsSync(pendingKeyPath(keyFile))).toBe(false);
      expect(fileKeyProvider(keyFile).loadKey().equals(key)).toBe(true);
      expect(readBack(journal, keyFile)).toEqual({ tags: TAGS, forwardable: true });
    });

    it('after the journal was re-sealed, before the key moved: the rotation is finished', () => {
      const { journal, keyFile, key } = interrupted('journal-resealed');
      const pending = readFileSync(pendingKeyPath(keyFile), 'utf8');
      // The key file is still the old one, which opens nothing: a start must not use it.
      expect(() => checkAtRestKey(journal, key, 'old')).toThrowError(
        expect.objectContaining({ code: 'JOURNAL_KEY' }) as Error,
      );
      expect(settlePendingRotation(journal, keyFile)).toBe('finished');
      expect(readFileSync(keyFile, 'utf8')).toBe(pending);
      expect(existsSync(pendingKeyPath(keyFile))).toBe(false);
      expect(readBack(journal, keyFile)).toEqual({ tags: TAGS, forwardable: true });
    });

    it('the next rotation finishes the interrupted one first, then rotates again', () => {
      const { journal, keyFile } = interrupted('journal-resealed');
      const report = rotateKeyFile(journal, { keyProvider: fileKeyProvider(keyFile) });
      expect(report).toEqual({ storedPayments: 1, tagSets: 1, disclosures: 0, pendingRotation: 'finished' });
      expect(readBack(journal, keyFile)).toEqual({ tags: TAGS, forwardable: true });
    });

    it('a side file that is not a whole key is removed (nothing was sealed under it)', () => {
      const { journal, keyFile, key } = setup();
      sealSome(journal, keyFile);
      writeFileSync(pendingKeyPath(keyFile), '0123', { mode: 0o600 });
      expect(settlePendingRotation(journal, keyFile)).toBe('undone');
      expect(fileKeyProvider(keyFile).loadKey().equals(key)).toBe(true);
    });

    it('a side file the journal is not sealed under is removed, whatever key it holds', () => {
      const { journal, keyFile, key } = setup();
      sealSome(journal, keyFile);
      writePendingKey(keyFile, otherKey());
      expect(settlePendingRotation(journal, keyFile)).toBe('undone');
      expect(fileKeyProvider(keyFile).loadKey().equals(key)).toBe(true);
      expect(settlePendingRotation(journal, keyFile)).toBe('none');
    });
  });
});
