import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { staticKeyProvider } from '../journal/encryption.js';
import type { FlowSettings } from '../flows/index.js';
import { HoldStore, JournalError, OfflineQueue, type StoredHold } from '../journal/index.js';
import type { Logger } from '../log/index.js';
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
const HOUR_MS = 3_600_000;
/** The paid exit's window of these tests: a grace of 10 minutes (tariff.graceMinutes). */
const settings = { tariff: { graceMinutes: 10 } } as Pick<FlowSettings, 'tariff'>;

/** The journals' clock: START_MS unless a test moves it. */
let clockMs = START_MS;
afterEach(() => {
  clockMs = START_MS;
});

function journal(): SqliteJournal {
  const j = openJournal(':memory:', { now: () => new Date(clockMs) });
  journals.push(j);
  return j;
}

function load(j: SqliteJournal, path: string, logger?: Logger): Buffer {
  return loadFingerprintKey(j, path, { settings, ...(logger ? { logger } : {}) });
}

/** A logger that keeps the warnings it is given. */
function warnings(): { logger: Logger; lines: unknown[][] } {
  const lines: unknown[][] = [];
  const logger = { warn: (...args: unknown[]) => lines.push(args) } as unknown as Logger;
  return { logger, lines };
}

const STAY: StoredHold = {
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
};

/** A journal holding one tap-and-go stay, open: its card's exit finds it by its fingerprint. */
function journalWithStay(): SqliteJournal {
  const j = journal();
  const holds = new HoldStore(j);
  holds.open(STAY);
  return j;
}

/** A journal whose one stay (open at START_MS) ended by `end` at START_MS, its clock then moved on by `laterMs`. */
function journalWithClosedStay(end: (holds: HoldStore) => void, laterMs: number): SqliteJournal {
  const j = journal();
  const holds = new HoldStore(j);
  holds.open(STAY);
  end(holds);
  clockMs = START_MS + laterMs;
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
    const first = load(journal(), path);
    expect(first).toHaveLength(32);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readFileSync(path, 'utf8')).toBe(`${first.toString('hex')}\n`);
    expect(load(journalWithStay(), path).equals(first)).toBe(true);
  });

  it.each([
    ['empty', ''],
    ['cut short', 'abcd\n'],
    ['not a key', `${'zz'.repeat(32)}\n`],
  ])('refuses a key file that is %s (JOURNAL_KEY naming the file), never replacing it', (_, text) => {
    const path = join(dir(), 'fingerprint.key');
    writeFileSync(path, text, { mode: 0o600 });
    const e = refusal(() => load(journal(), path));
    expect(e.code).toBe('JOURNAL_KEY');
    expect(e.message).toContain(path);
    expect(e.message).toMatch(/restore/);
    expect(e.message).toContain('parking-terminal offline replace-fingerprint-key --confirm');
    expect(readFileSync(path, 'utf8')).toBe(text);
  });

  it.each([
    ['an open tap-and-go stay', journalWithStay, /1 open tap-and-go stay/],
    [
      'a stay captured within the paid exit window (its exit opens again)',
      () => journalWithClosedStay((h) => h.close(STAY, 'captured'), 9 * 60_000),
      /1 closed stay/,
    ],
    [
      'a stay paid by phone within the paid exit window',
      () =>
        journalWithClosedStay((h) => {
          h.paidByLink('H1', 'L1', START_MS);
          h.close(STAY, 'reversed');
        }, 60_000),
      /1 closed stay/,
    ],
    [
      'a stay that outlasted its hold, released and never charged (owed at the exit, however long ago)',
      () =>
        journalWithClosedStay(
          (h) => {
            h.outstayed('H1', START_MS);
            h.close(STAY, 'reversed');
          },
          30 * 24 * HOUR_MS,
        ),
      /1 closed stay/,
    ],
    ['a stored offline payment', journalWithOfflinePayment, /1 open offline payment/],
  ])(
    'refuses to create a missing key when the journal holds %s, matched under the lost one, naming the command',
    (_, open, what) => {
      const path = join(dir(), 'fingerprint.key');
      const e = refusal(() => load(open(), path));
      expect(e.code).toBe('JOURNAL_KEY');
      expect(e.message).toContain(path);
      expect(e.message).toMatch(what);
      expect(e.message).toContain('parking-terminal offline replace-fingerprint-key --confirm');
      expect(existsSync(path)).toBe(false);
    },
  );

  it.each([
    [
      'a stay captured before the paid exit window',
      () => journalWithClosedStay((h) => h.close(STAY, 'captured'), 11 * 60_000),
    ],
    [
      'a stay reversed (a car let out, nothing owed)',
      () => journalWithClosedStay((h) => h.close(STAY, 'reversed'), 0),
    ],
    [
      'a stay paid by phone before the paid exit window',
      () =>
        journalWithClosedStay((h) => {
          h.paidByLink('H1', 'L1', START_MS);
          h.close(STAY, 'reversed');
        }, HOUR_MS),
    ],
    [
      "a stay that was the card's last no more (the card entered again since, and that stay is settled)",
      () => {
        const j = journalWithClosedStay((h) => {
          h.outstayed('H1', START_MS);
          h.close(STAY, 'reversed');
        }, 0);
        const holds = new HoldStore(j);
        const next = { ...STAY, holdId: 'H2', transactionId: 'H2', enteredAtMs: START_MS + 60_000 };
        holds.open(next);
        holds.close(next, 'reversed');
        return j;
      },
    ],
    [
      'an offline payment forwarded and approved',
      () => {
        const j = journalWithOfflinePayment();
        j.db
          .prepare(`UPDATE offline_payments SET state = 'approved', body_enc = NULL, completed_at = ?`)
          .run(START_MS);
        return j;
      },
    ],
  ])(
    'creates a missing key, with a warning, when the journal holds only %s: nothing is matched under the lost key',
    (_, open) => {
      const path = join(dir(), 'fingerprint.key');
      const { logger, lines } = warnings();
      const key = load(open(), path, logger);
      expect(readFileSync(path, 'utf8')).toBe(`${key.toString('hex')}\n`);
      expect(lines).toHaveLength(1);
      expect(JSON.stringify(lines)).toContain(path);
      expect(JSON.stringify(lines)).not.toContain('411111');
      expect(JSON.stringify(lines)).not.toContain('fp-');
    },
  );

  it('creates the key of a journal that never held a fingerprint without a warning', () => {
    const { logger, lines } = warnings();
    load(journal(), join(dir(), 'fingerprint.key'), logger);
    expect(lines).toEqual([]);
  });

  it('refuses a key file others can read', () => {
    const path = join(dir(), 'fingerprint.key');
    writeFileSync(path, `${'ab'.repeat(32)}\n`, { mode: 0o644 });
    expect(() => load(journal(), path)).toThrow(/group or others/);
  });
});
