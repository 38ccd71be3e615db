import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname } from 'node:path';
import { openJournal } from '../../src/journal/index.js';
import { saleEntry } from '../../src/journal/testing/entries.js';

/**
 * A loopback port nothing listens on, just released: a gateway there is down (connection refused, provably nothing
 * sent), and a server started on it later brings it up.
 */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const address = server.address();
  await new Promise<void>((ok) => server.close(() => ok()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/**
 * What a crash leaves for the next start to recover: in the journal at `journalPath` (created if need be), a sale
 * sent and never answered.
 */
export async function leaveSaleInFlight(journalPath: string, transactionId: string): Promise<void> {
  mkdirSync(dirname(journalPath), { recursive: true });
  const journal = openJournal(journalPath);
  try {
    journal.markSent((await journal.beginDurably(saleEntry(transactionId))).id);
  } finally {
    journal.close();
  }
}
