import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../log/index.js';
import { startSandbox } from '../sandbox/index.js';
import type { CardRead } from '../../devices/reader.js';
import { standalonePayments } from './standalone-payments.js';

const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The payment service against the embedded sandbox, its journal in a file. */
async function service() {
  const dir = mkdtempSync(join(tmpdir(), 'pt-payments-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const sandbox = await startSandbox({ port: 0, logger: silentLogger() });
  cleanups.push(() => sandbox.close());
  const standalone = await standalonePayments({ gatewayUrl: sandbox.url, dir });
  cleanups.push(() => standalone.close());
  return { ...standalone, sandbox };
}

/** The N2 chip card (service code 201) read by its stripe, as the simulated reader reads `chip-fails-then-swiped`. */
function chipCardSwiped(): CardRead {
  return {
    entryMode: 'swiped',
    tlvs: [],
    track2: '4761739001010119=30122011758928889',
    maskedPan: '476173******0119',
    fallback: true,
    readerStatus: 'ok',
  };
}

describe('the payment service', () => {
  it('answers authorized totals from the journal, in the currency of the authorization and in the local one', async () => {
    const { payments, cards, readCard, release } = await service();
    const approved: string[] = [];
    for (let i = 0; i < 3; i++) {
      const held = cards.hold(await readCard(600));
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
      release(held.ref);
    }
    expect(payments.authorizedTotal(approved[0]!)).toBe(600);
    expect(payments.gatewayAuthorizedTotal(approved[0]!)).toEqual({ amountMinor: 600, currency: 'GBP' });
    expect(payments.authorizedTotal(approved.at(-1)!)).toBe(600);
    expect(payments.authorizedTotal('NOT-THERE')).toBeUndefined();
  });

  it('sends a chip card swiped only as the fallback the machine allowed, saying so', async () => {
    const { payments, cards, sandbox } = await service();
    const sale = {
      service: 'sale' as const,
      comments: 'Parking Sale' as const,
      amountMinor: 960_100,
      currency: 'GBP',
      catLevel: 2 as const,
      includeEmvTags: false,
    };
    const refused = await payments.submit({ ...sale, cardRef: cards.hold(chipCardSwiped()).ref });
    expect(refused.outcome).toMatchObject({ kind: 'rejected', reason: 'CHIP_NOT_TRIED' });
    expect(sandbox.ledger().transactions).toEqual([]);

    const fallback = await payments.submit({
      ...sale,
      cardRef: cards.hold(chipCardSwiped()).ref,
      emvFallback: true,
    });
    expect(fallback.outcome.kind).toBe('approved');
    const [request] = sandbox.ledger().transactions.flatMap((t) => t.requests);
    expect(request?.body).toMatchObject({
      pointOfSaleInformation: { entryMode: 'swiped', emv: { fallback: true, fallbackCondition: 1 } },
    });
    expect(request?.emvTags).toBeUndefined();
  });
  it('sends a sale with authIndicator 0, as spec 001 lists it for the sale', async () => {
    const { payments, cards, readCard, sandbox } = await service();
    const record = await payments.submit({
      service: 'sale',
      comments: 'Parking Sale',
      amountMinor: 700,
      currency: 'GBP',
      catLevel: 6,
      cardRef: cards.hold(await readCard(700)).ref,
      includeEmvTags: false,
    });
    expect(record.outcome.kind).toBe('approved');
    const [request] = sandbox.ledger().transactions.flatMap((t) => t.requests);
    expect(request?.body).toMatchObject({
      processingInformation: { capture: true, authorizationOptions: { authIndicator: '0' } },
    });
  });
});
