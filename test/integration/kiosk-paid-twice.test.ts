/**
 * Pay station: a ticket paid by phone during a restart (its link's payment left in doubt) and then by card, before the
 * phone payment's notification reached the terminal, is paid twice. The notification, once it comes, gives back the
 * card sale (the terminal cannot refund a payment by link): voided, recorded for the operator. Real host, standalone
 * sandbox (it outlives the terminal), a relay that holds the gateway's notifications until it is let go, parking clock.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { feeForStay } from '../../src/flows/tariff.js';
import type { TerminalHost } from '../../src/host/terminal-host.js';
import { hostedPageAnswer } from './link-harness.js';
import { payStationBehindRelay } from './pay-station-relay.js';
import { insertTicket, sendEvent, ticketPrinted, waitForScreen } from './models-harness.js';

const closing: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (closing.length > 0) await closing.pop()?.();
});

const payStation = () => payStationBehindRelay(closing, false);

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
