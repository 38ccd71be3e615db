/**
 * Pay station: a ticket paid by a card sale stored offline (the gateway could not be reached; the customer was told it
 * was approved and left) is recorded paid with the stored payment, in its transaction, and is not charged again while
 * the payment waits to be forwarded. What the forward collects decides what stands paid afterwards: approved, the
 * sale; declined, nothing (the ticket owes its whole stay again); approved for less than its amount, the part
 * approved. Real host, a standalone sandbox stopped and started again on the same address, parking clock.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ConfigInput } from '../../src/config/index.js';
import { createTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { feeForStay } from '../../src/flows/tariff.js';
import { silentLogger } from '../../src/log/index.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import {
  insertTicket,
  modelConfig,
  ParkingClock,
  sendEvent,
  ticketPrinted,
  waitForScreen,
} from './models-harness.js';

const PAID_ALREADY = 'This ticket is paid already: nothing to pay, have a good journey';

const open: Array<{ close(): Promise<void> }> = [];
const dirs: string[] = [];

afterEach(async () => {
  while (open.length > 0) await open.pop()?.close();
  while (dirs.length > 0) rmSync(dirs.pop()!, { recursive: true, force: true });
});

/**
 * One price for any stay of up to a day: `priceMinor` (its last two digits are the sandbox's amount trigger: 02
 * declines, 21 approves half of it), within the offline limit.
 */
function dayPrice(priceMinor: number): ConfigInput['tariff'] {
  return {
    periods: [{ minutes: 1440, priceMinor, unitMinutes: 1440 }],
    dailyCapMinor: 0,
    graceMinutes: 10,
  };
}

/**
 * A pay station whose gateway (a standalone sandbox, stopped at once) cannot be reached, with chip cards and the
 * offline policy `prefer-online`. `back()` starts the gateway again on the same address.
 */
async function stationWhileDown(
  tariff: ConfigInput['tariff'],
): Promise<{ host: TerminalHost; clock: ParkingClock; back: () => Promise<Sandbox> }> {
  const first = await startSandbox({ port: 0, logger: silentLogger() });
  const port = Number(new URL(first.url).port);
  const cwd = mkdtempSync(join(tmpdir(), 'pt-paid-ticket-offline-'));
  dirs.push(cwd);
  const clock = new ParkingClock();
  const host = await createTerminalHost(
    modelConfig('kiosk', { tariff, offline: { policy: 'prefer-online' } }),
    { logger: silentLogger(), cwd, gatewayUrlOverride: first.url, parkingClock: clock },
  );
  open.push(host);
  await first.close();
  await waitForScreen(host, (s) => s.customer.screen === 'idle', 'idle');
  return {
    host,
    clock,
    back: async () => {
      const second = await startSandbox({ port, logger: silentLogger() });
      open.unshift(second);
      return second;
    },
  };
}

/** A ticket printed `minutes` ago on the parking clock. */
function ticketOf(host: TerminalHost, clock: ParkingClock, minutes: number): string {
  return ticketPrinted(clock, minutes, host.config.terminal.timezone);
}

/** Leaves the screen on show for the next customer. */
async function leave(host: TerminalHost): Promise<void> {
  await sendEvent(host, { type: 'DONE' });
  await waitForScreen(host, (s) => s.customer.screen === 'idle', 'idle');
}

/** The fee on screen paid by card while the gateway is down: stored, told approved; the stored payment. */
async function payStored(host: TerminalHost): Promise<{ transactionId: string; amountMinor: number }> {
  await sendEvent(host, { type: 'CONFIRM' });
  const done = await waitForScreen(
    host,
    (s) => ['approved', 'declined', 'error'].includes(s.customer.screen),
    'result',
  );
  expect(done.customer.screen).toBe('approved');
  await leave(host);
  const [stored, ...more] = host.offline.list();
  expect(more).toEqual([]);
  expect(stored?.state).toBe('stored');
  return { transactionId: stored?.transactionId ?? '', amountMinor: stored?.amountMinor ?? 0 };
}

/** Waits until the queue has forwarded everything and the stored payment's outcome is in. */
async function forwarded(host: TerminalHost, transactionId: string): Promise<string> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const state = host.offline.findByTransactionId(transactionId)?.state;
    if (state !== undefined && state !== 'stored' && state !== 'forwarding') return state;
    if (Date.now() > deadline) throw new Error(`stored payment still ${String(state)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('pay station: a ticket paid by a card sale stored offline', () => {
  it('is recorded paid with the stored payment and not charged again while the gateway is down', async () => {
    const tariff = dayPrice(600);
    const { host, clock, back } = await stationWhileDown(tariff);
    const ticket = ticketOf(host, clock, 95);
    const fee = await insertTicket(host, ticket);
    expect(fee.customer.amount?.minor).toBe(600);
    const stored = await payStored(host);
    expect(host.tickets.forTicket(ticket)).toEqual([
      {
        ticket,
        method: 'card',
        paymentRef: stored.transactionId,
        amountMinor: 600,
        currency: host.config.terminal.currency,
        paidAtMs: clock.now(),
      },
    ]);

    clock.offsetMs += 3 * 60_000;
    const again = await insertTicket(host, ticket);
    expect(again.customer.screen).toBe('approved');
    expect(again.customer.message).toBe(PAID_ALREADY);
    expect(again.customer.amount?.minor ?? 0).toBe(0);
    await leave(host);
    expect(host.status().offline.depth).toBe(1);

    // Forwarded and approved: it stands as any card sale does, and is charged once.
    const gateway = await back();
    expect(await forwarded(host, stored.transactionId)).toBe('approved');
    const later = await insertTicket(host, ticket);
    expect(later.customer.screen).toBe('approved');
    expect(later.customer.message).toBe(PAID_ALREADY);
    expect(gateway.ledger().transactions.filter((t) => t.kind === 'sale')).toHaveLength(1);
  });

  it('owes its whole stay again once the stored sale is declined when forwarded', async () => {
    const tariff = dayPrice(1_002);
    const { host, clock, back } = await stationWhileDown(tariff);
    const ticket = ticketOf(host, clock, 95);
    await insertTicket(host, ticket);
    const stored = await payStored(host);
    clock.offsetMs += 2 * 60_000;
    expect((await insertTicket(host, ticket)).customer.message).toBe(PAID_ALREADY);
    await leave(host);

    await back();
    expect(await forwarded(host, stored.transactionId)).toBe('declined');
    expect(host.status().offline.declinedAfterForward).toBe(1);
    // Within the grace period of the payment, which collected nothing: the whole stay is owed.
    const again = await insertTicket(host, ticket);
    expect(again.customer.screen).toBe('confirm');
    expect(again.customer.amount?.minor).toBe(feeForStay(host.config.tariff, 97));
  });

  it('counts only the part approved of a stored sale approved for less when forwarded', async () => {
    const tariff = dayPrice(1_021);
    const { host, clock, back } = await stationWhileDown(tariff);
    const ticket = ticketOf(host, clock, 95);
    await insertTicket(host, ticket);
    const stored = await payStored(host);

    await back();
    expect(await forwarded(host, stored.transactionId)).toBe('approved');
    expect(host.offline.findByTransactionId(stored.transactionId)?.reason).toBe('PARTIAL_APPROVAL');
    clock.offsetMs += 30 * 60_000;
    // After the grace period: the whole stay less the 5.10 the gateway approved of 10.21.
    const again = await insertTicket(host, ticket);
    expect(again.customer.screen).toBe('confirm');
    expect(again.customer.amount?.minor).toBe(feeForStay(host.config.tariff, 125) - 510);
  });

  it('asks for the rest within the grace period when the stored sale was approved for less', async () => {
    const tariff = dayPrice(1_021);
    const { host, clock, back } = await stationWhileDown(tariff);
    const ticket = ticketOf(host, clock, 95);
    await insertTicket(host, ticket);
    const stored = await payStored(host);

    const gateway = await back();
    expect(await forwarded(host, stored.transactionId)).toBe('approved');
    expect(host.offline.findByTransactionId(stored.transactionId)?.reason).toBe('PARTIAL_APPROVAL');
    clock.offsetMs += 3 * 60_000;
    // Within the grace period of the payment: 5.10 stands of the 10.21 due when it was made, so 5.11 is owed.
    const again = await insertTicket(host, ticket);
    expect(again.customer.screen).toBe('confirm');
    expect(again.customer.message).not.toBe(PAID_ALREADY);
    expect(again.customer.amount?.minor).toBe(1_021 - 510);
    expect(gateway.ledger().transactions.filter((t) => t.kind === 'sale')).toHaveLength(1);
  });
});
