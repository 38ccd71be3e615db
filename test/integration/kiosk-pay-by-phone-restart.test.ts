/**
 * Pay station: a ticket whose payment link was paid on the phone while the terminal restarted (the notification never
 * reached the process that died) is recorded paid once the payment is known after the restart — as it would have been
 * without the restart — and is not charged again. Real host, standalone sandbox (it outlives the terminal), a relay
 * that holds the gateway's notifications until the terminal fetches them, parking clock.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { feeForStay } from '../../src/flows/tariff.js';
import { createTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { silentLogger } from '../../src/log/index.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { hostedPageAnswer } from './link-harness.js';
import {
  insertTicket,
  modelConfig,
  ParkingClock,
  sendEvent,
  ticketPrinted,
  waitForScreen,
} from './models-harness.js';

const closing: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (closing.length > 0) await closing.pop()?.();
});

/** A relay: the gateway POSTs each notification to `/in`; the terminal GETs every one held from `/out`. */
async function startRelay(): Promise<{ url: string; held: number }> {
  const held: Array<{ headers: Record<string, string>; body: string }> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/in') {
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
        held.push({ headers, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(200).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ notifications: held }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closing.push(() => new Promise<void>((r) => server.close(() => r())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    get held() {
      return held.length;
    },
  };
}

describe('pay station: a ticket paid by phone just before a restart', () => {
  it('is recorded paid once its payment is known after the restart, and not charged again', async () => {
    const relay = await startRelay();
    const sandbox = await startSandbox({ port: 0, logger: silentLogger(), webhookUrl: `${relay.url}/in` });
    closing.push(() => sandbox.close());
    const config = modelConfig('kiosk', {
      tariff: { dailyCapMinor: 2_021, graceMinutes: 10 },
      links: { notifications: { relay: { url: `${relay.url}/out`, pollSeconds: 1 } } },
    });
    const cwd = mkdtempSync(join(tmpdir(), 'pt-phone-restart-'));
    closing.push(() => rmSync(cwd, { recursive: true, force: true }));
    const clock = new ParkingClock();
    const start = async (): Promise<TerminalHost> => {
      const host = await createTerminalHost(config, {
        logger: silentLogger(),
        cwd,
        parkingClock: clock,
        gatewayUrlOverride: sandbox.url,
      });
      closing.push(() => host.close());
      await waitForScreen(host, (s) => s.customer.screen === 'idle', 'idle');
      return host;
    };

    const first = await start();
    const ticket = ticketPrinted(clock, 95, config.terminal.timezone);
    await insertTicket(first, ticket);
    await sendEvent(first, { type: 'PAY_BY_LINK' });
    const phone = await waitForScreen(first, (s) => s.customer.screen === 'pay-by-phone', 'pay by phone');
    // The terminal stops with the QR code on screen; the customer pays on the phone meanwhile.
    await first.close();
    expect(await hostedPageAnswer(phone.customer.payByPhone?.url ?? '')).toContain('Payment approved');
    await expect.poll(() => relay.held, { timeout: 5_000 }).toBe(1);

    const second = await start();
    await expect
      .poll(() => second.audit.list().some((r) => r.action === 'link-paid'), { timeout: 10_000 })
      .toBe(true);
    expect(second.tickets.forTicket(ticket)).toMatchObject([
      { ticket, method: 'link', amountMinor: feeForStay(config.tariff, 95) },
    ]);
    expect(
      second.audit
        .list()
        .filter((r) => r.action === 'link-paid')
        .map((r) => r.code),
    ).toEqual(['PAID']);
    // The customer inserts the ticket again: it is paid, nothing is charged.
    const again = await insertTicket(second, ticket);
    expect(again.customer.screen).toBe('approved');
    expect(sandbox.ledger().transactions.filter((t) => t.kind === 'sale')).toHaveLength(0);
  }, 60_000);
});
