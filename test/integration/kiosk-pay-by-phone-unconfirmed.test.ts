/**
 * Pay station: a customer who leaves pay by phone for the card while the link's deactivation goes unconfirmed (its
 * answer lost: the link may still be ACTIVE, and paid on the phone) is not asked for the card until the terminal knows
 * whether the link was paid — the screen says the phone payment is being checked; a payment notified meanwhile pays the
 * ticket, and only the gateway's confirmation that the link is INACTIVE brings the card back. Real host, embedded
 * sandbox, parking clock.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { feeForStay } from '../../src/flows/tariff.js';
import { createTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
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

const config = modelConfig('kiosk', { tariff: { dailyCapMinor: 2_021, graceMinutes: 10 } });
const CHECKING = 'Checking your payment by phone. Please wait.';

const dirs: string[] = [];
const hosts: TerminalHost[] = [];

afterEach(async () => {
  while (hosts.length > 0) await hosts.pop()?.close();
  while (dirs.length > 0) rmSync(dirs.pop()!, { recursive: true, force: true });
});

async function start(clock: ParkingClock): Promise<TerminalHost> {
  const dir = mkdtempSync(join(tmpdir(), 'pt-phone-unconfirmed-'));
  dirs.push(dir);
  const host = await createTerminalHost(config, { logger: silentLogger(), cwd: dir, parkingClock: clock });
  hosts.push(host);
  await waitForScreen(host, (s) => s.customer.screen === 'idle', 'idle');
  return host;
}

/**
 * The ticket's fee on the pay-by-phone screen, then CANCEL with the next `times` link updates answered 502 (nothing
 * committed: the link stays ACTIVE). The client tries an update 3 times: 3 lose one deactivation.
 */
async function phoneThenCancelUnconfirmed(host: TerminalHost, ticket: string, times: number) {
  await insertTicket(host, ticket);
  await sendEvent(host, { type: 'PAY_BY_LINK' });
  const phone = await waitForScreen(host, (s) => s.customer.screen === 'pay-by-phone', 'pay by phone');
  host.sandbox?.scheduleFaults(
    Array.from({ length: times }, () => ({
      kind: 'server-error-502' as const,
      method: 'PATCH',
      path: '/ipl/v2/payment-links',
    })),
  );
  await sendEvent(host, { type: 'CANCEL' });
  const after = await waitForScreen(
    host,
    (s) => s.customer.screen === 'confirm' || s.customer.message === CHECKING,
    'the choice, or the check of the phone payment',
  );
  return { url: phone.customer.payByPhone?.url ?? '', after };
}

const sales = (host: TerminalHost): number =>
  (host.sandbox?.ledger().transactions ?? []).filter((t) => t.kind === 'sale').length;

describe('pay station: pay by phone left while the link deactivation is unconfirmed', () => {
  it('does not offer the card while the link may be paid; a phone payment then pays the ticket', async () => {
    const clock = new ParkingClock();
    const host = await start(clock);
    const ticket = ticketPrinted(clock, 95, config.terminal.timezone);
    const { url, after } = await phoneThenCancelUnconfirmed(host, ticket, 9);
    expect(after.customer.screen).not.toBe('confirm');
    expect(after.customer.actions).not.toContain('CONFIRM');
    // The link is still ACTIVE at the gateway: the customer pays it on the phone.
    expect(await hostedPageAnswer(url)).toContain('Payment approved');
    await waitForScreen(host, (s) => s.customer.screen === 'approved', 'paid by phone');
    expect(host.tickets.forTicket(ticket)).toMatchObject([
      { ticket, method: 'link', amountMinor: feeForStay(config.tariff, 95) },
    ]);
    expect(
      host.audit
        .list()
        .filter((r) => r.action === 'link-paid')
        .map((r) => r.code),
    ).toEqual(['PAID']);
    expect(sales(host)).toBe(0);
  }, 30_000);

  it('offers the card again once the gateway confirms the link INACTIVE', async () => {
    const clock = new ParkingClock();
    const host = await start(clock);
    const ticket = ticketPrinted(clock, 95, config.terminal.timezone);
    const { url, after } = await phoneThenCancelUnconfirmed(host, ticket, 3);
    expect(after.customer.message).toBe(CHECKING);
    // The sweep's next try is answered: the link is INACTIVE, and its page takes no payment.
    await host.links.sweep();
    const back = await waitForScreen(host, (s) => s.customer.screen === 'confirm', 'the choice');
    expect(back.customer.actions).toContain('CONFIRM');
    expect((await fetch(url)).status).toBe(404);
    expect(host.tickets.forTicket(ticket)).toEqual([]);
  }, 30_000);
});
