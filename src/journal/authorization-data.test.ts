import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  AuthorizationDataStore,
  storableDccDisclosure,
  type StoredDccDisclosure,
  type StoredDccTerms,
} from './authorization-data.js';
import { JournalError } from './errors.js';
import { openJournal, type SqliteJournal } from './journal.js';

const KEY = Buffer.alloc(32, 7);
const TAGS =
  '9F02060000000020009F260811223344556677889F10120110A00003220000000000000000000000FF950500000080005F2A020826';
const TERMS: StoredDccTerms = {
  indicator: '1',
  family: 'A',
  localAmountMinor: 2_000,
  localCurrency: 'EUR',
  billingAmountMinor: 2_345,
  billingCurrency: 'USD',
  exchangeRate: '1.1725',
  exchangeRateInverted: false,
  exchangeRateTimeStamp: '20300101080000',
  offerId: 'offer-1',
  reconciliationId: 'rec-1',
};

const SHOWN: StoredDccDisclosure = {
  marginRate: '3.5',
  disclaimer: 'I have been offered a choice of currencies and have chosen to pay in the card currency.',
};

const journals: SqliteJournal[] = [];
afterEach(() => {
  for (const j of journals.splice(0)) j.close();
});

function setup(path = ':memory:', key = KEY) {
  const journal = openJournal(path, { now: () => new Date('2030-01-01T08:00:00Z') });
  journals.push(journal);
  return { journal, data: new AuthorizationDataStore(journal, key) };
}

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof JournalError) return e.code;
    throw e;
  }
  return 'no error';
}

describe('AuthorizationDataStore', () => {
  it('keeps the tag set of an authorization encrypted, never in clear', () => {
    const { data, journal } = setup();
    data.putTags('T1', TAGS);
    expect(data.tags('T1')).toBe(TAGS);
    expect(data.tags('T2')).toBeUndefined();
    const row = journal.db
      .prepare<[], { tags_enc: Buffer; dcc_terms: string | null }>(
        'SELECT tags_enc, dcc_terms FROM authorization_data',
      )
      .get();
    expect(row?.dcc_terms).toBeNull();
    expect(row?.tags_enc.toString('latin1')).not.toContain(TAGS);
    expect(row?.tags_enc.toString('hex').toUpperCase()).not.toContain(TAGS.slice(0, 40));
  });

  it('replaces the tags of a transaction and keeps its DCC terms beside them', () => {
    const { data } = setup();
    data.putDccTerms('T1', TERMS);
    data.putTags('T1', '9F2608AABBCCDDEEFF0011');
    data.putTags('T1', TAGS);
    expect(data.tags('T1')).toBe(TAGS);
    expect(data.dccTerms('T1')).toEqual(TERMS);
  });

  it('keeps DCC terms without ids, and no unknown field', () => {
    const { data } = setup();
    const bare: StoredDccTerms = { ...TERMS, family: 'B' };
    delete bare.offerId;
    delete bare.reconciliationId;
    data.putDccTerms('T1', bare);
    expect(data.dccTerms('T1')).toEqual(bare);
    expect(data.tags('T1')).toBeUndefined();
    expect(code(() => data.putDccTerms('T2', { ...TERMS, pan: '4111111111111111' } as StoredDccTerms))).toBe(
      'JOURNAL_INVALID',
    );
    expect(data.dccTerms('T2')).toBeUndefined();
  });

  it('wipes the row once the authorization is settled', () => {
    const { data, journal } = setup();
    data.putTags('T1', TAGS);
    data.putDccTerms('T1', TERMS);
    expect(data.forget('T1')).toBe(true);
    expect(data.forget('T1')).toBe(false);
    expect(data.tags('T1')).toBeUndefined();
    expect(data.dccTerms('T1')).toBeUndefined();
    expect(journal.db.prepare('SELECT COUNT(*) AS n FROM authorization_data').get()).toEqual({ n: 0 });
  });

  it('survives a restart with the same key and refuses to decrypt under another', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'auth-data-')), 'journal.db');
    const first = setup(path);
    first.data.putTags('T1', TAGS);
    first.journal.close();
    expect(setup(path).data.tags('T1')).toBe(TAGS);
    expect(code(() => setup(path, Buffer.alloc(32, 8)).data.tags('T1'))).toBe('JOURNAL_DECRYPT');
  });

  it('binds the sealed tags to their row: tags moved to another transaction do not decrypt', () => {
    const { data, journal } = setup();
    data.putTags('T1', TAGS);
    data.putTags('T2', '9F2608AABBCCDDEEFF0011');
    journal.db.exec(`UPDATE authorization_data SET tags_enc = (SELECT tags_enc FROM authorization_data
      WHERE transaction_id = 'T1') WHERE transaction_id = 'T2'`);
    expect(code(() => data.tags('T2'))).toBe('JOURNAL_DECRYPT');
  });

  it('commits tags with the journal outcome of the authorization, or not at all', () => {
    const { data, journal } = setup();
    expect(
      code(() =>
        journal.atomically(true, () => {
          data.putTags('T1', TAGS);
          data.putDccTerms('T1', TERMS);
          throw new JournalError('JOURNAL_BAD_TRANSITION', 'outcome refused');
        }),
      ),
    ).toBe('JOURNAL_BAD_TRANSITION');
    expect(data.tags('T1')).toBeUndefined();
    expect(data.dccTerms('T1')).toBeUndefined();
  });

  it.each([
    ['odd-length tags', () => setup().data.putTags('T1', 'ABC')],
    ['non-hex tags', () => setup().data.putTags('T1', '9F0Z')],
    ['empty tags', () => setup().data.putTags('T1', '')],
    ['oversized tags', () => setup().data.putTags('T1', 'AB'.repeat(5000))],
    ['an empty transactionId', () => setup().data.putTags('', TAGS)],
    ['a non-converted indicator', () => setup().data.putDccTerms('T1', { ...TERMS, indicator: '3' as '1' })],
    ['an unknown family', () => setup().data.putDccTerms('T1', { ...TERMS, family: 'C' as 'A' })],
    [
      'a fractional billing amount',
      () => setup().data.putDccTerms('T1', { ...TERMS, billingAmountMinor: 1.5 }),
    ],
    [
      'a billing currency equal to the local one',
      () => setup().data.putDccTerms('T1', { ...TERMS, billingCurrency: 'EUR' }),
    ],
    [
      'a missing local amount',
      () => setup().data.putDccTerms('T1', { ...TERMS, localAmountMinor: undefined as unknown as number }),
    ],
    [
      'a non-boolean rate direction',
      () => setup().data.putDccTerms('T1', { ...TERMS, exchangeRateInverted: 'no' as unknown as boolean }),
    ],
    [
      'an unknown billing currency',
      () => setup().data.putDccTerms('T1', { ...TERMS, billingCurrency: 'ZZZ' }),
    ],
    [
      'a numeric exchange rate',
      () => setup().data.putDccTerms('T1', { ...TERMS, exchangeRate: 1.2 as unknown as string }),
    ],
    ['terms that are not an object', () => setup().data.putDccTerms('T1', null as unknown as StoredDccTerms)],
  ])('refuses %s with JOURNAL_INVALID', (_name, fn) => {
    expect(code(fn)).toBe('JOURNAL_INVALID');
  });

  it('refuses a key that is not 32 bytes', () => {
    const journal = openJournal(':memory:');
    journals.push(journal);
    expect(code(() => new AuthorizationDataStore(journal, Buffer.alloc(16)))).toBe('JOURNAL_KEY');
  });

  it('reports malformed stored DCC terms as a typed error', () => {
    const { data, journal } = setup();
    journal.db
      .prepare(
        `INSERT INTO authorization_data (transaction_id, dcc_terms, created_at, updated_at) VALUES (?, ?, 0, 0)`,
      )
      .run('T1', '{"indicator":"1"}');
    expect(code(() => data.dccTerms('T1'))).toBe('JOURNAL_IO');
  });

  it("keeps a converted payment's disclosure with its terms, in one row, and wipes it with them", () => {
    const { data, journal } = setup();
    data.putDccTerms('T1', TERMS, SHOWN);
    expect(data.dccTerms('T1')).toEqual(TERMS);
    expect(data.dccDisclosure('T1')).toEqual(SHOWN);
    // Terms kept without it (before it was kept, or by the previous terminal): none to read.
    data.putDccTerms('T2', TERMS);
    expect(data.dccDisclosure('T2')).toBeUndefined();
    expect(data.dccDisclosure('T3')).toBeUndefined();
    expect(journal.db.prepare('SELECT COUNT(*) AS n FROM authorization_data').get()).toEqual({ n: 2 });
    data.forget('T1');
    expect(data.dccDisclosure('T1')).toBeUndefined();
  });

  it('refuses a disclosure of the wrong shape or with other fields, and keeps nothing of it', () => {
    const { data } = setup();
    for (const bad of [
      { ...SHOWN, marginRate: '3.5%' },
      { ...SHOWN, disclaimer: '' },
      { ...SHOWN, disclaimer: ' \n\t ' },
      { marginRate: '3.5' } as StoredDccDisclosure,
    ]) {
      expect(code(() => data.putDccTerms('T1', TERMS, bad))).toBe('JOURNAL_INVALID');
      expect(storableDccDisclosure(bad)).toBeUndefined();
    }
    expect(data.dccTerms('T1')).toBeUndefined();
    // Only the known fields are kept.
    expect(storableDccDisclosure({ ...SHOWN, pan: '4111111111111111' } as StoredDccDisclosure)).toEqual(
      SHOWN,
    );
    expect(storableDccDisclosure(SHOWN)).toEqual(SHOWN);
  });

  it('reports a malformed stored disclosure as a typed error', () => {
    const { data, journal } = setup();
    data.putDccTerms('T1', TERMS);
    journal.db.prepare('UPDATE authorization_data SET dcc_disclosure = ?').run('{"marginRate":"x"}');
    expect(code(() => data.dccDisclosure('T1'))).toBe('JOURNAL_IO');
  });

  it("keeps the gateway's disclaimer verbatim whatever digits it holds, sealed: none of it in a clear column", () => {
    const dir = mkdtempSync(join(tmpdir(), 'auth-data-'));
    const path = join(dir, 'journal.sqlite');
    const { data, journal } = setup(path);
    // A date-time that reads as a Luhn-valid run of 14 digits, and a card number proper.
    const dated = { ...SHOWN, disclaimer: 'Rate of 2026-12-01 08:11:00 UTC. I chose to pay in USD.' };
    const withCard = { ...SHOWN, disclaimer: 'Call us about card 4761 7390 0101 0119.' };
    data.putDccTerms('T1', TERMS, dated);
    data.putDccTerms('T2', TERMS, withCard);
    expect(storableDccDisclosure(dated)).toEqual(dated);
    for (const [tx, shown] of [
      ['T1', dated],
      ['T2', withCard],
    ] as const) {
      expect(data.dccDisclosure(tx)).toEqual(shown);
      const row = journal.db
        .prepare<[string], Record<string, unknown>>(
          'SELECT * FROM authorization_data WHERE transaction_id = ?',
        )
        .get(tx);
      expect(row?.['dcc_disclosure']).toBeNull();
      const bytes = Buffer.concat(
        Object.values(row ?? {}).map((v) => (Buffer.isBuffer(v) ? v : Buffer.from(String(v)))),
      );
      expect(bytes.includes(shown.disclaimer)).toBe(false);
      expect(bytes.includes('0119')).toBe(false);
    }
    // Bound to its row: moved to another, it does not open.
    journal.db
      .prepare(
        `UPDATE authorization_data SET dcc_disclosure_enc =
          (SELECT dcc_disclosure_enc FROM authorization_data WHERE transaction_id = 'T2') WHERE transaction_id = 'T1'`,
      )
      .run();
    expect(code(() => data.dccDisclosure('T1'))).toBe('JOURNAL_DECRYPT');
    journal.close();
    journals.splice(journals.indexOf(journal), 1);
    // Another key (the key file replaced): a typed error, not a disclaimer.
    const other = setup(path, Buffer.alloc(32, 9));
    expect(code(() => other.data.dccDisclosure('T2'))).toBe('JOURNAL_DECRYPT');
  });

  it('reads the clear disclosure of a row written before it was sealed, and none holding a card number', () => {
    const { data, journal } = setup();
    data.putDccTerms('T1', TERMS);
    const put = journal.db.prepare(
      'UPDATE authorization_data SET dcc_disclosure = ? WHERE transaction_id = ?',
    );
    put.run(JSON.stringify(SHOWN), 'T1');
    expect(data.dccDisclosure('T1')).toEqual(SHOWN);
    put.run(JSON.stringify({ ...SHOWN, disclaimer: 'Card 4761 7390 0101 0119.' }), 'T1');
    expect(code(() => data.dccDisclosure('T1'))).toBe('JOURNAL_IO');
  });
});
