import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createReader } from '../../devices/index.js';
import { parseConfig } from '../config/index.js';
import { createAuthenticator, createGatewayClient } from '../gateway/index.js';
import { AuthorizationDataStore, JournaledSender, openJournal } from '../journal/index.js';
import { silentLogger } from '../log/index.js';
import { startSandbox } from '../sandbox/index.js';
import { CardStore } from './card-store.js';
import { journalFollowOnStore } from './follow-on-store.js';
import { gatewayTransmitter } from './gateway-adapters.js';
import { AUTHORIZED_KEPT, PaymentService } from './payments.js';
import { SANDBOX_SHARED_SECRET } from './terminal-host.js';

const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A payment service against the embedded sandbox, with a journal in a file and the simulated reader. */
async function service() {
  const dir = mkdtempSync(join(tmpdir(), 'pt-payments-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const logger = silentLogger();
  const config = parseConfig({ journal: { path: join(dir, 'journal.db') } });
  const sandbox = await startSandbox({ port: 0, logger });
  cleanups.push(() => sandbox.close());
  const gateway = createGatewayClient({
    baseUrl: sandbox.url,
    merchantId: config.gateway.merchantId,
    auth: createAuthenticator(config.gateway.auth, config.gateway.merchantId, {
      defaultSharedSecret: SANDBOX_SHARED_SECRET,
    }),
    timeouts: config.gateway.timeouts,
    logger,
  });
  cleanups.push(() => gateway.close());
  const key = Buffer.alloc(32, 5);
  const journal = openJournal(join(dir, 'journal.db'), { logger, key });
  cleanups.push(() => journal.close());
  const cards = new CardStore(Buffer.alloc(32, 7));
  const payments = new PaymentService({
    config,
    gateway,
    sender: new JournaledSender(journal, gatewayTransmitter(gateway)),
    journal,
    cards,
    logger,
    now: () => new Date(),
    followOns: journalFollowOnStore(new AuthorizationDataStore(journal, key), 'A'),
    health: { gatewayAnswered: () => undefined, gatewayUnreachable: () => undefined },
  });
  const reader = createReader(
    { ...config.reader, sim: { ...config.reader.sim, presentDelayMs: 0 } },
    { logger },
  );
  await reader.connect();
  cleanups.push(() => reader.close());
  const read = await reader.activate({
    amountMinor: 600,
    otherAmountMinor: 0,
    currencyNumeric: '826',
    countryNumeric: '826',
    transactionType: '00',
    timeoutSeconds: 30,
  });
  return { payments, cards, read };
}

describe('the payment service', () => {
  it('keeps the latest authorized totals in memory and reads older ones from the journal', async () => {
    const { payments, cards, read } = await service();
    const approved: string[] = [];
    for (let i = 0; i < AUTHORIZED_KEPT + 8; i++) {
      const held = cards.hold({
        ...read,
        tlvs: read.tlvs.map((t) => ({ tag: t.tag, value: Uint8Array.from(t.value) })),
      });
      const record = await payments.submit({
        service: 'sale',
        comments: 'Parking Sale',
        amountMinor: 600,
        currency: 'GBP',
        catLevel: 2,
        cardRef: held.ref,
        includeEmvTags: false,
      });
      if (record.outcome.kind !== 'approved') throw new Error(`sale ${i}: ${record.outcome.kind}`);
      approved.push(record.outcome.transactionId);
      cards.release(held.ref);
      payments.forgetCard(held.ref);
    }
    const kept = (payments as unknown as { authorized: Map<string, number> }).authorized;
    expect(kept.size).toBe(AUTHORIZED_KEPT);
    expect(kept.has(approved[0]!)).toBe(false);
    // The first sale's total is no longer in memory; the journal still answers it, and the latest from memory.
    expect(payments.authorizedTotal(approved[0]!)).toBe(600);
    expect(kept.get(approved.at(-1)!)).toBe(600);
    expect(payments.authorizedTotal(approved.at(-1)!)).toBe(600);
  });
});
