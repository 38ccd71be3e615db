import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/index.js';
import { createAuthenticator, createGatewayClient } from '../../gateway/index.js';
import { AltPaymentDesk } from '../../host/alt-payment-desk.js';
import { gatewayTransmitter, SANDBOX_SHARED_SECRET } from '../../host/gateway-adapters.js';
import { AuditStore, JournaledSender, openJournal } from '../../journal/index.js';
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

describe('parking-terminal altpay', () => {
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
