/**
 * Pay station: a ticket paid once is not charged again. The approval of its sale records the ticket paid in the
 * journal database, in the outcome's transaction; the same ticket inserted again within the grace period after the
 * payment owes nothing (the exit opens as for a free stay), later it owes the whole stay less what stands paid, and a
 * payment the operator gave back (voided) pays for nothing. Real host, embedded sandbox, parking clock.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { feeForStay } from '../../src/flows/tariff.js';
import { silentLogger } from '../../src/log/index.js';
import { hostedPageAnswer } from './link-harness.js';
import {
  insertTicket,
  modelConfig,
  ParkingClock,
  sendEvent,
  ticketPrinted,
  waitForScreen,
} from './models-harness.js';

const config = modelConfig('kiosk', {
  tariff: { dailyCapMinor: 2_021, lostTicketFeeMinor: 3_002, graceMinutes: 10 },
});

const dirs: string[] = [];
const hosts: TerminalHost[] = [];

afterEach(async () => {
  while (hosts.length > 0) await hosts.pop()?.close();
  while (dirs.length > 0) rmSync(dirs.pop()!, { recursive: true, force: true });
});

/** A kiosk host in `cwd` (a new directory by default) on `clock`. */
async function start(clock: ParkingClock, cwd?: string): Promise<{ host: TerminalHost; cwd: string }> {
  const dir = cwd ?? mkdtempSync(join(tmpdir(), 'pt-paid-ticket-'));
  if (cwd === undefined) dirs.push(dir);
  const host = await createTerminalHost(config, { logger: silentLogger(), cwd: dir, parkingClock: clock });
  hosts.push(host);
  await waitForScreen(host, (s) => s.customer.screen === 'idle', 'idle');
  return { host, cwd: dir };
}

async function stop(host: TerminalHost): Promise<void> {
  hosts.splice(hosts.indexOf(host), 1);
  await host.close();
}

/** A ticket printed `minutes` ago on the parking clock. */
function ticketOf(clock: ParkingClock, minutes: number): string {
  return ticketPrinted(clock, minutes, config.terminal.timezone);
}

/** The fee on screen paid by card; the sale's transactionId. */
async function payByCard(host: TerminalHost): Promise<string> {
  await sendEvent(host, { type: 'CONFIRM' });
  const done = await waitForScreen(
    host,
    (s) => ['approved', 'declined', 'error'].includes(s.customer.screen),
    'result',
  );
  expect(done.customer.screen).toBe('approved');
  await sendEvent(host, { type: 'DONE' });
  await waitForScreen(host, (s) => s.customer.screen === 'idle', 'idle');
  const sale = host.journal.list({ limit: 10 }).find((e) => e.service === 'sale' && e.state === 'approved');
  if (sale?.transactionId === undefined) throw new Error('no approved sale in the journal');
  return sale.transactionId;
}

const charged = (host: TerminalHost): number =>
  (host.sandbox?.ledger().transactions ?? []).filter((t) => t.kind === 'sale').length;

describe('pay station: a paid ticket is not charged again', () => {
  it('tells the customer a ticket paid moments ago is paid, opens the exit and sends nothing', async () => {
    const clock = new ParkingClock();
    const { host } = await start(clock);
    const ticket = ticketOf(clock, 95);
    const fee = await insertTicket(host, ticket);
    expect(fee.customer.screen).toBe('confirm');
    expect(fee.customer.amount?.minor).toBe(feeForStay(config.tariff, 95));
    const saleTx = await payByCard(host);
    // Recorded in the journal database with the approval: the ticket, the sale's transactionId, no card data.
    expect(host.tickets.forTicket(ticket)).toEqual([
      {
        ticket,
        method: 'card',
        paymentRef: saleTx,
        amountMinor: feeForStay(config.tariff, 95),
        currency: config.terminal.currency,
        paidAtMs: clock.now(),
      },
    ]);
    clock.offsetMs += 3 * 60_000;
    const again = await insertTicket(host, ticket);
    expect(again.customer.screen).toBe('approved');
    expect(again.customer.message).toBe('This ticket is paid already: nothing to pay, have a good journey');
    expect(again.customer.amount?.minor ?? 0).toBe(0);
    expect(charged(host)).toBe(1);
  });

  it('asks, after the grace period, for the whole stay less what stands paid, never below zero', async () => {
    const clock = new ParkingClock();
    const { host } = await start(clock);
    const ticket = ticketOf(clock, 95);
    await insertTicket(host, ticket);
    await payByCard(host);
    clock.offsetMs += 60 * 60_000;
    const later = await insertTicket(host, ticket);
    expect(later.customer.screen).toBe('confirm');
    expect(later.customer.amount?.minor).toBe(feeForStay(config.tariff, 155) - feeForStay(config.tariff, 95));
  });

  it('keeps the paid record across a restart', async () => {
    const clock = new ParkingClock();
    const first = await start(clock);
    const ticket = ticketOf(clock, 95);
    await insertTicket(first.host, ticket);
    await payByCard(first.host);
    await stop(first.host);
    clock.offsetMs += 2 * 60_000;
    const { host } = await start(clock, first.cwd);
    const again = await insertTicket(host, ticket);
    expect(again.customer.screen).toBe('approved');
    expect(again.customer.message).toBe('This ticket is paid already: nothing to pay, have a good journey');
  });

  it('charges the whole stay again once the operator voided the payment', async () => {
    const clock = new ParkingClock();
    const { host } = await start(clock);
    const ticket = ticketOf(clock, 95);
    await insertTicket(host, ticket);
    const saleTx = await payByCard(host);
    const pin = host.generatedOperatorPin ?? '';
    const voided = await host.operator({ pin, action: { type: 'void', transactionId: saleTx } });
    expect(voided.ok && voided.value).toMatchObject({ outcome: 'approved' });
    clock.offsetMs += 2 * 60_000;
    const again = await insertTicket(host, ticket);
    expect(again.customer.screen).toBe('confirm');
    expect(again.customer.amount?.minor).toBe(feeForStay(config.tariff, 97));
  });

  it('tells the customer a ticket paid by phone moments ago is paid, recorded with the link payment', async () => {
    const clock = new ParkingClock();
    const { host } = await start(clock);
    const ticket = ticketOf(clock, 95);
    await insertTicket(host, ticket);
    await sendEvent(host, { type: 'PAY_BY_LINK' });
    const phone = await waitForScreen(host, (s) => s.customer.screen === 'pay-by-phone', 'pay by phone');
    expect(await hostedPageAnswer(phone.customer.payByPhone?.url ?? '')).toContain('Payment approved');
    await waitForScreen(host, (s) => s.customer.screen === 'approved', 'paid by phone');
    expect(host.tickets.forTicket(ticket)).toMatchObject([
      { ticket, method: 'link', amountMinor: feeForStay(config.tariff, 95), paidAtMs: clock.now() },
    ]);
    await sendEvent(host, { type: 'DONE' });
    await waitForScreen(host, (s) => s.customer.screen === 'idle', 'idle');
    clock.offsetMs += 3 * 60_000;
    const again = await insertTicket(host, ticket);
    expect(again.customer.screen).toBe('approved');
    expect(again.customer.message).toBe('This ticket is paid already: nothing to pay, have a good journey');
    expect(charged(host)).toBe(0);
  });

  it('leaves the lost-ticket fee as it was', async () => {
    const clock = new ParkingClock();
    const { host } = await start(clock);
    await sendEvent(host, { type: 'START' });
    await sendEvent(host, { type: 'LOST_TICKET' });
    const lost = await waitForScreen(host, (s) => s.customer.screen === 'confirm', 'lost-ticket fee');
    expect(lost.customer.amount?.minor).toBe(3_002);
  });
});
