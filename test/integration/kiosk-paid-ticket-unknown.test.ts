/**
 * Pay station: a sale whose answer was lost and that recovery found standing at the gateway (its timeout void refused
 * NOT_VOIDABLE: the settlement cut-off passed before the void got through) took the customer's money: its ticket is
 * paid, and inserted again it is not charged again. Real host, a standalone sandbox behind a proxy that can make the
 * voids unreachable, parking clock.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
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
import { startUnreachablePathsProxy, type RewritingProxy } from './rewriting-proxy.js';

const config = modelConfig('kiosk', { tariff: { dailyCapMinor: 2_021, graceMinutes: 10 } });

let sandbox: Sandbox;
let proxy: RewritingProxy;
let dir: string;
/** Paths of the gateway that cannot be reached (POST answered 502 by the proxy, nothing reaches the sandbox). */
const unreachable = new Set<string>();
const hosts: TerminalHost[] = [];

beforeEach(async () => {
  unreachable.clear();
  // The settlement cut-off a minute or two from now (the sandbox's local time): a sale made now is voidable until then.
  const cutoff = new Date(Date.now() + 2 * 60_000);
  const hhmm = (n: number) => String(n).padStart(2, '0');
  sandbox = await startSandbox({
    port: 0,
    settlementCutoff: `${hhmm(cutoff.getHours())}:${hhmm(cutoff.getMinutes())}`,
  });
  proxy = await startUnreachablePathsProxy(sandbox.url, unreachable);
  dir = mkdtempSync(join(tmpdir(), 'pt-paid-ticket-unknown-'));
});

afterEach(async () => {
  while (hosts.length > 0) await hosts.pop()?.close();
  await proxy.close();
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A pay station on the sandbox behind the proxy, idle, and a ticket printed 95 minutes ago on its clock. */
async function payStation(): Promise<{ host: TerminalHost; clock: ParkingClock; ticket: string }> {
  const clock = new ParkingClock();
  const host = await createTerminalHost(config, {
    logger: silentLogger(),
    cwd: dir,
    gatewayUrlOverride: proxy.url,
    parkingClock: clock,
  });
  hosts.push(host);
  await waitForScreen(host, (s) => s.customer.screen === 'idle', 'idle');
  return { host, clock, ticket: ticketPrinted(clock, 95, config.terminal.timezone) };
}

/**
 * The ticket's fee confirmed on a pay station while the sale is made at the gateway and its answer lost; no timeout
 * void gets through for now.
 */
async function saleAnswerLost(host: TerminalHost, ticket: string): Promise<void> {
  const fee = await insertTicket(host, ticket);
  expect(fee.customer.screen).toBe('confirm');
  sandbox.scheduleFaults([{ kind: 'timeout-502', path: '/pts/v2/payments', method: 'POST' }]);
  unreachable.add('/pts/v2/voids');
  await sendEvent(host, { type: 'CONFIRM' });
}

describe('pay station: a sale whose answer was lost and that stands', () => {
  it('counts the ticket paid once recovery finds its sale standing, and does not charge it again', async () => {
    const { host, clock, ticket } = await payStation();
    await saleAnswerLost(host, ticket);
    const told = await waitForScreen(host, (s) => s.customer.actions.includes('DONE'), 'result');
    expect(told.customer.screen).toBe('error');
    await sendEvent(host, { type: 'DONE' });
    await waitForScreen(host, (s) => s.customer.screen === 'idle', 'idle');

    // The settlement cut-off passes before the gateway is back: the timeout void is refused NOT_VOIDABLE, the sale
    // stands — the customer paid.
    sandbox.advanceClock(3 * 60_000);
    unreachable.delete('/pts/v2/voids');
    const saleEntry = () => host.journal.list({ limit: 20 }).find((e) => e.service === 'sale');
    for (let i = 0; i < 500 && saleEntry()?.state !== 'resolved'; i += 1)
      await new Promise((res) => setTimeout(res, 20));
    const sale = saleEntry();
    expect(sale).toMatchObject({ state: 'resolved', resolution: 'not-voidable' });
    expect(sandbox.ledger().transactions.filter((t) => t.kind === 'sale')).toHaveLength(1);

    // The same ticket again, moments later: paid, nothing more to pay, no second sale.
    clock.offsetMs += 3 * 60_000;
    const again = await insertTicket(host, ticket);
    expect(again.customer.screen).toBe('approved');
    expect(again.customer.message).toBe('This ticket is paid already: nothing to pay, have a good journey');
    expect(sandbox.ledger().transactions.filter((t) => t.kind === 'sale')).toHaveLength(1);
  });

  it('does not charge again a ticket whose sale is unresolved: it is being checked until recovery decides', async () => {
    const { host, ticket } = await payStation();
    await saleAnswerLost(host, ticket);
    await waitForScreen(host, (s) => s.customer.actions.includes('DONE'), 'result');
    await sendEvent(host, { type: 'DONE' });
    await waitForScreen(host, (s) => s.customer.screen === 'idle', 'idle');
    const saleEntry = () => host.journal.list({ limit: 20 }).find((e) => e.service === 'sale');
    expect(saleEntry()?.state).toBe('unknown');

    // The same ticket while recovery has not decided: the customer is told it is being checked, no card is asked for.
    await sendEvent(host, { type: 'START' });
    await sendEvent(host, { type: 'ENTER_TICKET', ticket });
    const checking = await waitForScreen(
      host,
      (s) => !['enter-ticket', 'processing'].includes(s.customer.screen),
      'the ticket read',
    );
    expect(checking.customer.screen).not.toBe('confirm');
    expect(checking.customer.actions).not.toContain('CONFIRM');
    expect(checking.customer.message).toBe(
      'A payment of this ticket is being checked: please try again in a few minutes',
    );
    expect(saleEntry()?.state).toBe('unknown');
    expect(sandbox.ledger().transactions.filter((t) => t.kind === 'sale')).toHaveLength(1);
    await sendEvent(host, { type: 'DONE' });
    await waitForScreen(host, (s) => s.customer.screen === 'idle', 'idle');

    // Recovery voids the sale (before the cut-off): nothing stands, and the ticket can be paid.
    unreachable.delete('/pts/v2/voids');
    for (let i = 0; i < 500 && saleEntry()?.state !== 'resolved'; i += 1)
      await new Promise((res) => setTimeout(res, 20));
    expect(saleEntry()).toMatchObject({ state: 'resolved', resolution: 'timeout-void' });
    const payable = await insertTicket(host, ticket);
    expect(payable.customer.screen).toBe('confirm');
  });

  it('does not charge again a paid ticket whose refund is unresolved: it is being checked until recovery decides', async () => {
    const { host, clock, ticket } = await payStation();
    await insertTicket(host, ticket);
    await sendEvent(host, { type: 'CONFIRM' });
    const paid = await waitForScreen(host, (s) => s.customer.actions.includes('DONE'), 'result');
    expect(paid.customer.screen).toBe('approved');
    await sendEvent(host, { type: 'DONE' });
    await waitForScreen(host, (s) => s.customer.screen === 'idle', 'idle');
    const sale = host.journal.list({ limit: 20 }).find((e) => e.service === 'sale');
    expect(sale?.state).toBe('approved');

    // The operator refunds the sale; the refund is made at the gateway, its answer lost, and its timeout void does not
    // get through for now: whether the money went back is not known.
    sandbox.scheduleFaults([{ kind: 'timeout-502', path: '/refunds', method: 'POST' }]);
    unreachable.add('/pts/v2/voids');
    const refund = await host.operator({
      pin: host.generatedOperatorPin ?? '',
      action: { type: 'refund', transactionId: sale?.transactionId ?? '' },
    });
    expect(refund).toMatchObject({ ok: true, value: { outcome: 'unknown' } });
    const refundEntry = () => host.journal.list({ limit: 20 }).find((e) => e.service === 'refund-payment');
    expect(refundEntry()?.state).toBe('unknown');

    // The same ticket moments later: whether it is paid is being checked; no card is asked for.
    clock.offsetMs += 60_000;
    await sendEvent(host, { type: 'START' });
    await sendEvent(host, { type: 'ENTER_TICKET', ticket });
    const checking = await waitForScreen(
      host,
      (s) => !['enter-ticket', 'processing'].includes(s.customer.screen),
      'the ticket read',
    );
    expect(checking.customer.screen).not.toBe('confirm');
    expect(checking.customer.message).toBe(
      'A payment of this ticket is being checked: please try again in a few minutes',
    );
    expect(sandbox.ledger().transactions.filter((t) => t.kind === 'sale')).toHaveLength(1);
    await sendEvent(host, { type: 'DONE' });
    await waitForScreen(host, (s) => s.customer.screen === 'idle', 'idle');

    // Recovery voids the refund: the sale stands in full, and the ticket reads paid.
    unreachable.delete('/pts/v2/voids');
    for (let i = 0; i < 500 && refundEntry()?.state !== 'resolved'; i += 1)
      await new Promise((res) => setTimeout(res, 20));
    expect(refundEntry()).toMatchObject({ state: 'resolved', resolution: 'timeout-void' });
    const again = await insertTicket(host, ticket);
    expect(again.customer.screen).toBe('approved');
    expect(again.customer.message).toBe('This ticket is paid already: nothing to pay, have a good journey');
  });
});
