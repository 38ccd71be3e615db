import { afterEach } from 'vitest';
import { openJournal, type BeginEntry, type SqliteJournal } from '../journal.js';

/** A sale's entry as the journaled sender writes one (money-moving, 6.00 GBP, an empty body), with `overrides`. */
export function saleEntry(transactionId: string, overrides: Partial<BeginEntry> = {}): BeginEntry {
  return {
    transactionId,
    service: 'sale',
    comments: 'Parking Sale',
    method: 'POST',
    path: '/pts/v2/payments',
    body: Buffer.from('{}'),
    amountMinor: 600,
    currency: 'GBP',
    moneyMoving: true,
    ...overrides,
  };
}

/** Journals in memory for the tests of one file: each is closed after the test that opened it. */
export function memoryJournals(): () => SqliteJournal {
  const open: SqliteJournal[] = [];
  afterEach(() => {
    for (const j of open.splice(0)) j.close();
  });
  return () => {
    const j = openJournal(':memory:');
    open.push(j);
    return j;
  };
}
