import { afterEach, describe, expect, it, vi } from 'vitest';
import type * as Encryption from './encryption.js';
import { saleEntry } from './testing/entries.js';

/** Every request opened from its sealed bytes, as the queue received it (the clear card data it must wipe). */
const opened: Buffer[] = [];
vi.mock('./encryption.js', async (importOriginal) => {
  const actual = await importOriginal<typeof Encryption>();
  return {
    ...actual,
    open: (...args: Parameters<typeof actual.open>): Buffer => {
      const clear = actual.open(...args);
      opened.push(clear);
      return clear;
    },
  };
});

const { staticKeyProvider } = await import('./encryption.js');
const { openJournal } = await import('./journal.js');
const { OfflineQueue } = await import('./offline-queue.js');
const { JournaledSender } = await import('./sender.js');

const journals: { close(): void }[] = [];
afterEach(() => {
  for (const j of journals.splice(0)) j.close();
  opened.length = 0;
});

describe('the card data of a claim that fails', () => {
  it('is wiped from memory: each request opened for it, the one claimed before the failure too', async () => {
    const journal = openJournal(':memory:');
    journals.push(journal);
    const queue = new OfflineQueue(journal, {
      policy: 'prefer-online',
      limits: {
        maxTransactionMinor: 5_000,
        maxTotalMinorPerCurrency: 10_000,
        maxCount: 5,
        maxAgeHours: 24,
        maxCountPerCard: 2,
      },
      keyProvider: staticKeyProvider(Buffer.alloc(32, 3)),
    });
    const track = ';5555555555554444=29121010000012300000?';
    const stored = ['w-1', 'w-2'].map((transactionId) =>
      queue.store({
        transactionId,
        service: 'sale',
        comments: 'Parking Sale',
        method: 'POST',
        path: '/pts/v2/payments',
        body: Buffer.from(JSON.stringify({ pointOfSaleInformation: { trackData: track } })),
        amountMinor: 1_000,
        currency: 'GBP',
        entryMode: 'contact',
        fingerprint: `card-${transactionId}`,
      }),
    );
    // The second's transactionId is journaled already (a damaged file, say): the claim of both fails on it.
    journal.begin(saleEntry(stored[1]!.transactionId));
    const sender = new JournaledSender(journal, {
      transmit: () => Promise.resolve({ kind: 'approved', status: 'AUTHORIZED', gatewayId: 'g' }),
    });
    await expect(queue.forwardPending(sender, { concurrency: 2 })).rejects.toMatchObject({
      code: 'JOURNAL_DUPLICATE',
    });
    expect(opened).toHaveLength(2);
    for (const clear of opened) expect(clear.includes(track)).toBe(false);
  });
});
