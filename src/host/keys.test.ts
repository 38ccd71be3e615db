import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { staticKeyProvider } from '../journal/encryption.js';
import { HoldStore, JournalError, OfflineQueue } from '../journal/index.js';
import { openJournal, type SqliteJournal } from '../journal/journal.js';
import { loadFingerprintKey } from './keys.js';

function dir(): string {
  return mkdtempSync(join(tmpdir(), 'pt-keys-'));
}

const journals: SqliteJournal[] = [];
afterEach(() => {
  for (const j of journals.splice(0)) j.close();
});

const START_MS = Date.UTC(2030, 0, 6, 8, 0, 0);

function journal(): SqliteJournal {
  const j = openJournal(':memory:', { now: () => new Date(START_MS) });
  journals.push(j);
  return j;
}

/** A journal holding one tap-and-go stay, closed: its card's fingerprint is kept. */
function journalWithStay(): SqliteJournal {
  const j = journal();
  const holds = new HoldStore(j);
  holds.open({
    holdId: 'H1',
    fingerprint: 'fp-1',
    maskedPan: '411111******1111',
    gatewayId: 'G1',
    transactionId: 'H1',
    authorizedMinor: 2_000,
    currency: 'GBP',
    cardRef: 'card-1',
    includeEmvTags: false,
    enteredAtMs: START_MS - 60_000,
    expiresAtMs: START_MS + 3_600_000,
  });
  return j;
}

/** A journal holding one stored offline payment, counted against its card's fingerprint. */
function journalWithOfflinePayment(): SqliteJournal {
  const j = journal();
  const now = (): Date => new Date(START_MS);
  const queue = new OfflineQueue(j, {
    policy: 'prefer-online',
    limits: {
      maxTransactionMinor: 5_000,
      maxTotalMinorPerCurrency: 10_000,
      maxCount: 5,
      maxAgeHours: 24,
      maxCountPerCard: 2,
    },
    keyProvider: staticKeyProvider(Buffer.alloc(32, 3)),
    now,
  });
  queue.store({
    transactionId: 'off-1',
    service: 'sale',
    comments: 'Parking Sale',
    method: 'POST',
    path: '/pts/v2/payments',
    body: Buffer.from('{}'),
    amountMinor: 1_000,
    currency: 'GBP',
    entryMode: 'contact',
    maskedPan: '555555******4444',
    fingerprint: 'fp-2',
  });
  return j;
}

function refusal(run: () => unknown): JournalError {
  try {
    run();
  } catch (e) {
    if (e instanceof JournalError) return e;
    throw e;
  }
  throw new Error('not refused');
}

describe('loadFingerprintKey', () => {
  it('creates a 32-byte key readable by its owner only for a journal that holds no fingerprint, and reads it back', () => {
    const path = join(dir(), 'var', 'fingerprint.key');
    const first = loadFingerprintKey(journal(), path);
    expect(first).toHaveLength(32);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readFileSync(path, 'utf8')).toBe(`${first.toString('hex')}\n`);
    expect(loadFingerprintKey(journalWithStay(), path).equals(first)).toBe(true);
  });

  it.each([
    ['empty', ''],
    ['cut short', 'abcd\n'],
    ['not a key', `${'zz'.repeat(32)}\n`],
  ])('refuses a key file that is %s (JOURNAL_KEY naming the file), never replacing it', (_, text) => {
    const path = join(dir(), 'fingerprint.key');
    writeFileSync(path, text, { mode: 0o600 });
    const e = refusal(() => loadFingerprintKey(journal(), path));
    expect(e.code).toBe('JOURNAL_KEY');
    expect(e.message).toContain(path);
    expect(e.message).toMatch(/restore/);
    expect(readFileSync(path, 'utf8')).toBe(text);
  });

  it.each([
    ['a tap-and-go stay', journalWithStay, /1 tap-and-go stay/],
    ['a stored offline payment', journalWithOfflinePayment, /1 offline payment/],
  ])(
    'refuses to create a missing key when the journal holds %s fingerprinted under the lost one',
    (_, open, what) => {
      const path = join(dir(), 'fingerprint.key');
      const e = refusal(() => loadFingerprintKey(open(), path));
      expect(e.code).toBe('JOURNAL_KEY');
      expect(e.message).toContain(path);
      expect(e.message).toMatch(what);
      expect(existsSync(path)).toBe(false);
    },
  );

  it('refuses a key file others can read', () => {
    const path = join(dir(), 'fingerprint.key');
    writeFileSync(path, `${'ab'.repeat(32)}\n`, { mode: 0o644 });
    expect(() => loadFingerprintKey(journal(), path)).toThrow(/group or others/);
  });
});
