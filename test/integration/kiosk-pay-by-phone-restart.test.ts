/**
 * Pay station: a ticket whose payment link was paid on the phone while the terminal restarted (the notification never
 * reached the process that died) is recorded paid once the payment is known after the restart — as it would have been
 * without the restart — and is not charged again. Real host, standalone sandbox (it outlives the terminal), a relay
 * that holds the gateway's notifications until the terminal fetches them, parking clock.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { feeForStay } from '../../src/flows/tariff.js';
import { hostedPageAnswer } from './link-harness.js';
import { payStationBehindRelay } from './pay-station-relay.js';
import { insertTicket, sendEvent, ticketPrinted, waitForScreen } from './models-harness.js';

const closing: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (closing.length > 0) await closing.pop()?.();
});

describe('pay station: a ticket paid by phone just before a restart', () => {
  it('is recorded paid once its payment is known after the restart, and not charged again', async () => {
    const { relay, sandbox, config, clock, start } = await payStationBehindRelay(closing, true);

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
