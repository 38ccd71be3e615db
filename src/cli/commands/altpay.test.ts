import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/index.js';
import { createAuthenticator, createGatewayClient } from '../../gateway/index.js';
import { AltPaymentDesk } from '../../host/alt-payment-desk.js';
import { gatewayTransmitter, SANDBOX_SHARED_SECRET } from '../../host/gateway-adapters.js';
import { AuditStore, JournaledSender, openJournal } from '../../journal/index.js';
import { LATEST_VERSION } from '../../journal/migrations/index.js';
import { RECEIPT_FACT_COLUMNS } from '../../journal/migrations/receipt-facts.js';
import { schemaAround } from '../../journal/testing/held-journal.js';
import { startSandbox, type Sandbox } from '../../sandbox/index.js';
import { createAltPayCommand } from './altpay.js';
import { capturedIo } from '../testing/io.js';

const HOUR = 3_600_000;
const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  while (open.length > 0) await open.pop()?.close();
});

/** The command's streams, its JSON output parsed. */
function io(cwd: string) {
  const { io: streams, out } = capturedIo(cwd);
  return { io: streams, out: () => JSON.parse(out()) as Record<string, unknown> };
}

/** A terminal directory with one settled sale of 12.50 EUR made against `sandbox`, on a clock one hour ahead. */
async function settledSale(sandbox: Sandbox) {
  const dir = mkdtempSync(join(tmpdir(), 'altpay-cli-'));
  writeFileSync(
    join(dir, 'terminal.json'),
    JSON.stringify({
      journal: { path: 'var/j.db' },
      offline: { keyFile: 'var/offline.key' },
      alternativeMethods: { profiles: [{ profile: 1, methodName: 'METHOD_1' }] },
    }),
  );
  const config = loadConfig(join(dir, 'terminal.json'));
  const clock = { offset: 0 };
  const now = (): Date => new Date(Date.now() + clock.offset);
  const gateway = createGatewayClient({
    baseUrl: sandbox.url,
    merchantId: config.gateway.merchantId,
    auth: createAuthenticator(config.gateway.auth, config.gateway.merchantId, {
      defaultSharedSecret: SANDBOX_SHARED_SECRET,
    }),
    timeouts: config.gateway.timeouts,
    now,
  });
  const journal = openJournal(join(dir, config.journal.path), { now });
  const desk = new AltPaymentDesk({
    journal,
    sender: new JournaledSender(journal, gatewayTransmitter(gateway)),
    gateway,
    config: config.alternativeMethods,
    now,
  });
  const sale = await desk.start(1, {
    code: 'T-9',
    amountMinor: 1250,
    customer: { email: 'a@example.com', firstName: 'Ana', lastName: 'Ruiz' },
  });
  await fetch(sale.paymentUrl ?? '', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'action=pay',
  });
  // An hour and the desk's guard minute: the first status check is due.
  clock.offset += HOUR + 60_000;
  sandbox.advanceClock(HOUR + 60_000);
  await desk.runDue();
  await desk.close();
  journal.close();
  await gateway.close();
  return { dir, now };
}

/** A terminal directory whose configuration names one alternative method (profile 1). */
function terminalDir() {
  const dir = mkdtempSync(join(tmpdir(), 'altpay-cli-'));
  writeFileSync(
    join(dir, 'terminal.json'),
    JSON.stringify({
      journal: { path: 'var/j.db' },
      alternativeMethods: { profiles: [{ profile: 1, methodName: 'METHOD_1' }] },
    }),
  );
  return dir;
}

/**
 * A settled sale of 12.50 EUR and an accepted refund of 5.00 of it, written as a terminal of an older version writes
 * them (by named columns).
 */
function previousSale(db: Database.Database) {
  db.prepare(
    `INSERT INTO alt_sales (transaction_id, code, profile, method_name, payment_type_name, amount_minor, currency,
      state, gateway_id, payment_url, created_at, updated_at, last_check_at, checks)
      VALUES ('A1', 'T-9', 1, 'METHOD_1', 'APM', 1250, 'EUR', 'SETTLED', 'G-A1', 'https://pay.example/A1', 1, 2, 2, 1)`,
  ).run();
  db.prepare(
    `INSERT INTO journal_entries (transaction_id, service, comments, method, path, body_length, amount_minor, currency,
      flow_id, money_moving, state, gateway_id, status, created_at, outcome_at)
      VALUES ('R1', 'refund-payment', 'Alternative method refund', 'POST', '/pts/v2/refunds', 64, 500, 'EUR',
        'alt-sale:1', 1, 'approved', 'G-R1', 'PENDING', 3, 4)`,
  ).run();
}

describe('parking-terminal altpay', () => {
  it.each([
    ['of schema 9 (the alternative methods)', 9, () => undefined],
    [
      'of schema 12 without the receipt facts of its entries (a rewrite that keeps the version)',
      LATEST_VERSION,
      (db: Database.Database) => {
        for (const column of RECEIPT_FACT_COLUMNS)
          db.exec(`ALTER TABLE journal_entries DROP COLUMN ${column}`);
      },
    ],
  ])(
    'lists and shows read-only beside a running terminal whose journal is %s: its schema unchanged',
    async (_name, version, undo) => {
      const dir = terminalDir();
      const command = createAltPayCommand();
      const { before, after } = await schemaAround(
        join(dir, 'var/j.db'),
        version,
        async () => {
          const sale = {
            id: 1,
            code: 'T-9',
            amountMinor: 1250,
            currency: 'EUR',
            state: 'SETTLED',
            settledMinor: 1250,
            refundedMinor: 500,
            refundableMinor: 750,
            refunds: [{ amountMinor: 500, currency: 'EUR', state: 'accepted', gatewayId: 'G-R1' }],
          };
          const list = io(dir);
          expect(await command.run(['list', '--config', 'terminal.json'], list.io)).toBe(0);
          expect(list.out()).toMatchObject({ sales: [sale] });
          const show = io(dir);
          expect(await command.run(['show', '1', '--config', 'terminal.json'], show.io)).toBe(0);
          expect(show.out()).toMatchObject({ sale });
          await expect(
            command.run(['show', '2', '--config', 'terminal.json'], io(dir).io),
          ).rejects.toMatchObject({ code: 'ALT_NOT_FOUND' });
        },
        { undo, setup: previousSale },
      );
      expect(after).toEqual(before);
    },
  );

  it('lists no sale, and shows none, from a journal older than the alternative methods, its schema unchanged', async () => {
    const dir = terminalDir();
    const command = createAltPayCommand();
    const { before, after } = await schemaAround(join(dir, 'var/j.db'), 8, async () => {
      const list = io(dir);
      expect(await command.run(['list', '--config', 'terminal.json'], list.io)).toBe(0);
      expect(list.out()).toEqual({ sales: [] });
      await expect(command.run(['show', '1', '--config', 'terminal.json'], io(dir).io)).rejects.toMatchObject(
        { code: 'ALT_NOT_FOUND' },
      );
    });
    expect(after).toEqual(before);
  });

  it('refuses, with the journal unchanged, to list from a journal a newer terminal wrote (JOURNAL_MIGRATION)', async () => {
    const dir = terminalDir();
    const { before, after } = await schemaAround(join(dir, 'var/j.db'), 'newer', async () => {
      await expect(
        createAltPayCommand().run(['list', '--config', 'terminal.json'], io(dir).io),
      ).rejects.toMatchObject({ code: 'JOURNAL_MIGRATION' });
    });
    expect(after).toEqual(before);
  });

  it('lists no sale, shows none, and creates no journal, where the terminal never ran', async () => {
    const dir = terminalDir();
    const command = createAltPayCommand();
    const list = io(dir);
    expect(await command.run(['list', '--config', 'terminal.json'], list.io)).toBe(0);
    expect(list.out()).toEqual({ sales: [] });
    await expect(command.run(['show', '1', '--config', 'terminal.json'], io(dir).io)).rejects.toMatchObject({
      code: 'ALT_NOT_FOUND',
    });
    expect(existsSync(join(dir, 'var/j.db'))).toBe(false);
  });

  it('lists and shows sales, and refunds part of a settled one within what remains', async () => {
    const sandbox = await startSandbox({ port: 0 });
    open.push(sandbox);
    const { dir, now } = await settledSale(sandbox);
    const command = createAltPayCommand({ now });

    const list = io(dir);
    expect(await command.run(['list', '--config', 'terminal.json', '--state', 'SETTLED'], list.io)).toBe(0);
    const sales = list.out().sales as Array<{ id: number; state: string; refundableMinor: number }>;
    expect(sales).toMatchObject([{ id: 1, state: 'SETTLED', refundableMinor: 1250 }]);
    expect(JSON.stringify(sales)).not.toContain('a@example.com');

    const refund = io(dir);
    const args = ['refund', '1', '--amount', '5.00', '--gateway', sandbox.url, '--config', 'terminal.json'];
    expect(await command.run(args, refund.io)).toBe(0);
    expect(refund.out()).toMatchObject({
      refund: { state: 'accepted', amountMinor: 500 },
      sale: { refundedMinor: 500, refundableMinor: 750 },
    });

    const above = ['refund', '1', '--amount', '8.00', '--gateway', sandbox.url, '--config', 'terminal.json'];
    await expect(command.run(above, io(dir).io)).rejects.toMatchObject({ code: 'ALT_REFUND_ABOVE_SETTLED' });

    const show = io(dir);
    expect(await command.run(['show', '1', '--config', 'terminal.json'], show.io)).toBe(0);
    expect(show.out()).toMatchObject({ sale: { refunds: [{ amountMinor: 500, state: 'accepted' }] } });
    expect(sandbox.consistency().ok).toBe(true);

    // Both refunds, done and refused, are in the operator's audit log.
    const journal = openJournal(join(dir, 'var/j.db'));
    const records = new AuditStore(journal).list({});
    journal.close();
    expect(records.map((r) => [r.action, r.subject, r.result, r.code])).toEqual([
      ['refund', 'alt-sale:1', 'ok', 'accepted'],
      ['refund', 'alt-sale:1', 'refused', 'ALT_REFUND_ABOVE_SETTLED'],
    ]);
  });

  it('refuses bad usage', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'altpay-cli-'));
    const command = createAltPayCommand();
    await expect(command.run(['pay'], io(dir).io)).rejects.toMatchObject({ code: 'BAD_ARGUMENTS' });
    await expect(command.run(['refund', '1'], io(dir).io)).rejects.toMatchObject({ code: 'ALT_NO_GATEWAY' });
    const empty = io(dir);
    expect(await command.run(['list'], empty.io)).toBe(0);
    expect(empty.out()).toEqual({ sales: [] });
  });
});
