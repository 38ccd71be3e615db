/**
 * Pay station: a ticket paid by phone during a restart (its link's payment left in doubt) and then by card, before the
 * phone payment's notification reached the terminal, is paid twice. The notification, once it comes, gives back the
 * card sale (the terminal cannot refund a payment by link): voided, recorded for the operator. Real host, standalone
 * sandbox (it outlives the terminal), a relay that holds the gateway's notifications until it is let go, parking clock.
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

/** A relay: the gateway POSTs to `/in`; `/out` hands over what it holds once `open` is set. */
async function startRelay(): Promise<{ url: string; held: number; open: boolean }> {
  const held: Array<{ headers: Record<string, string>; body: string }> = [];
  const state = { open: false };
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
      res.end(JSON.stringify({ notifications: state.open ? held : [] }));
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
    get open() {
      return state.open;
    },
    set open(v: boolean) {
      state.open = v;
    },
  };
}

/**
 * A pay station on its own sandbox, whose link notifications pass through a relay that holds them until opened;
 * `start` starts a terminal on its one working directory and clock, idle.
 */
async function payStation() {
  const relay = await startRelay();
  const sandbox = await startSandbox({ port: 0, logger: silentLogger(), webhookUrl: `${relay.url}/in` });
  closing.push(() => sandbox.close());
  const config = modelConfig('kiosk', {
    tariff: { dailyCapMinor: 2_021, graceMinutes: 10 },
    links: { notifications: { relay: { url: `${relay.url}/out`, pollSeconds: 1 } } },
  });
  const cwd = mkdtempSync(join(tmpdir(), 'pt-paid-twice-'));
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
  return { relay, sandbox, config, clock, start };
}

/** The fee on screen paid by card: approved, then Done, back to idle. */
async function payByCard(host: TerminalHost): Promise<void> {
  await sendEvent(host, { type: 'CONFIRM' });
  const done = await waitForScreen(
    host,
    (s) => ['approved', 'declined', 'error'].includes(s.customer.screen),
    'result',
  );
  expect(done.customer.screen).toBe('approved');
  await sendEvent(host, { type: 'DONE' });
  await waitForScreen(host, (s) => s.customer.screen === 'idle', 'idle');
}

describe('pay station: a ticket paid by phone during a restart, then by card', () => {
  it('gives back the card sale once the phone payment is known', async () => {
    const { relay, sandbox, config, clock, start } = await payStation();

    const first = await start();
    const ticket = ticketPrinted(clock, 95, config.terminal.timezone);
    await insertTicket(first, ticket);
    await sendEvent(first, { type: 'PAY_BY_LINK' });
    const phone = await waitForScreen(first, (s) => s.customer.screen === 'pay-by-phone', 'pay by phone');
    await first.close();
    expect(await hostedPageAnswer(phone.customer.payByPhone?.url ?? '')).toContain('Payment approved');
    await expect.poll(() => relay.held, { timeout: 5_000 }).toBe(1);

    // After the restart the notification is still held: the ticket is owed, and the customer pays it by card.
    const second = await start();
    const fee = await insertTicket(second, ticket);
    expect(fee.customer.screen).not.toBe('approved');
    await payByCard(second);
    const sales = () => sandbox.ledger().transactions.filter((t) => t.kind === 'sale');
    expect(sales()).toHaveLength(1);

    relay.open = true;
    await expect
      .poll(() => second.audit.list().some((r) => r.action === 'link-paid'), { timeout: 10_000 })
      .toBe(true);
    // The card sale is given back: the customer paid the ticket once.
    await expect.poll(() => sales().every((t) => t.voided === true), { timeout: 10_000 }).toBe(true);
    await expect.poll(() => second.followUps.open(), { timeout: 5_000 }).toEqual([]);
    // Recorded for the operator: the payment by phone counted, the card sale given back for the ticket's fee.
    const [sale] = sales();
    expect(
      second.audit
        .list()
        .filter((r) => r.action === 'link-paid')
        .map((r) => [r.result, r.code, r.details?.givenBack]),
    ).toEqual([
      [
        'ok',
        'PAID_CARD_GIVEN_BACK',
        { transactionId: sale?.transactionId, amountMinor: feeForStay(config.tariff, 95) },
      ],
    ]);
    // The ticket stands paid by phone: inserted again, nothing is charged.
    const again = await insertTicket(second, ticket);
    expect(again.customer.screen).toBe('approved');
    expect(sales()).toHaveLength(1);
  }, 60_000);
  it('gives back the card sale when the phone payment, made before the link was closed, is notified after it', async () => {
    const { relay, sandbox, config, clock, start } = await payStation();
    const host = await start();

    const ticket = ticketPrinted(clock, 95, config.terminal.timezone);
    await insertTicket(host, ticket);
    await sendEvent(host, { type: 'PAY_BY_LINK' });
    const phone = await waitForScreen(host, (s) => s.customer.screen === 'pay-by-phone', 'pay by phone');
    // Paid on the phone; its notification is held while the customer gives up waiting and the link is deactivated.
    expect(await hostedPageAnswer(phone.customer.payByPhone?.url ?? '')).toContain('Payment approved');
    await expect.poll(() => relay.held, { timeout: 5_000 }).toBe(1);
    await sendEvent(host, { type: 'CANCEL' });
    // Back on the fee (or, as the kiosk may, at the start: the ticket inserted again), paid by card.
    const after = await waitForScreen(
      host,
      (s) => ['confirm', 'idle'].includes(s.customer.screen),
      'back from pay by phone',
    );
    if (after.customer.screen === 'idle') await insertTicket(host, ticket);
    await payByCard(host);
    const sales = () => sandbox.ledger().transactions.filter((t) => t.kind === 'sale');
    expect(sales()).toHaveLength(1);

    relay.open = true;
    await expect
      .poll(() => host.audit.list().some((r) => r.action === 'link-paid'), { timeout: 10_000 })
      .toBe(true);
    await expect.poll(() => sales().every((t) => t.voided === true), { timeout: 10_000 }).toBe(true);
    // The gateway has the void as soon as it answers; the terminal journals that answer, and closes the follow-up in
    // the same transaction, a moment later.
    await expect.poll(() => host.followUps.open(), { timeout: 5_000 }).toEqual([]);
    expect(
      host.audit
        .list()
        .filter((r) => r.action === 'link-paid')
        .map((r) => [r.result, r.code]),
    ).toEqual([['ok', 'PAID_CARD_GIVEN_BACK']]);
  }, 60_000);
});
