import { afterEach, describe, expect, it } from 'vitest';
import {
  confirmMeterStay,
  modelConfig,
  sandboxOpenAuthorizations,
  sendEvent,
  startSandboxLane,
  waitForScreen,
} from './models-harness.js';
import type { Sandbox } from '../../src/sandbox/index.js';

/**
 * The on-street meter on a real host against a sandbox of its own, with the simulated reader, asking for a card again:
 *
 * - a card taken away before its read completed sends nothing, the error screen offers the card again, and the card
 *   presented again is pre-authorized once — the maximum stay, one hold — then settled at the end of the session;
 * - a pre-authorization the gateway declines holds nothing, the declined screen offers another card, and the next card
 *   is pre-authorized once, as a new transaction with a transactionId of its own. The maximum stay costs the daily cap,
 *   11.08: the sandbox declines every authorization of an amount ending in 08 (GENERAL_DECLINE), the next card's too.
 */

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of cleanups.reverse()) await close();
  cleanups.length = 0;
});

function payments(sandbox: Sandbox) {
  return sandbox
    .ledger()
    .transactions.flatMap((t) => t.requests)
    .filter((r) => r.method === 'POST' && r.path === '/pts/v2/payments');
}

describe('meter: the card presented again after a read the customer can put right', () => {
  it('sends nothing for the card taken away too soon, then pre-authorizes the card presented again once', async () => {
    const config = modelConfig('meter', { reader: { sim: { card: 'removed', presentDelayMs: 20 } } });
    const { host, sandbox, clock } = await startSandboxLane(config, cleanups);
    await confirmMeterStay(host, 60);
    const refused = await waitForScreen(
      host,
      (s) =>
        s.customer.screen === 'error' &&
        s.customer.message ===
          'The card was removed too soon: present it again and hold it until the reader beeps',
      'the card asked for again',
    );
    expect(refused.customer.actions).toContain('CONFIRM');
    expect(payments(sandbox)).toEqual([]);
    expect(host.journal.list({ limit: 10 })).toEqual([]);

    host.simulator?.setCard('n2-contact');
    await sendEvent(host, { type: 'CONFIRM' });
    await waitForScreen(host, (s) => s.customer.screen === 'session', 'the session');
    expect(payments(sandbox)).toHaveLength(1);
    expect(host.journal.list({ limit: 10 }).map((e) => e.service)).toEqual(['preauth']);

    // Ended within the grace period: nothing owed, the one hold reversed.
    clock.offsetMs += 5 * 60_000;
    await sendEvent(host, { type: 'END_SESSION' });
    await waitForScreen(host, (s) => s.customer.screen === 'approved', 'the session ended');
    expect(
      host.journal
        .list({ limit: 10 })
        .map((e) => e.service)
        .sort(),
    ).toEqual(['preauth', 'reversal']);
    expect(sandboxOpenAuthorizations(sandbox)).toEqual([]);
    expect(sandbox.consistency({ requireResolved: false }).problems).toEqual([]);
  });
});

describe('meter: another card after a declined pre-authorization', () => {
  it('offers another card on the declined screen and sends its pre-authorization once, nothing held', async () => {
    const config = modelConfig('meter', { tariff: { dailyCapMinor: 1_108 } });
    const { host, sandbox } = await startSandboxLane(config, cleanups);
    await confirmMeterStay(host, 60);
    const declined = await waitForScreen(host, (s) => s.customer.screen === 'declined', 'declined');
    expect(declined.customer.actions).toContain('CONFIRM');
    expect(sandboxOpenAuthorizations(sandbox)).toEqual([]);

    // Another card, the button pressed twice: one pre-authorization of the next card.
    host.simulator?.setCard('n1-contact');
    await sendEvent(host, { type: 'CONFIRM' });
    await host.send({ type: 'CONFIRM' });
    await waitForScreen(
      host,
      (s) => s.customer.screen === 'declined' && s.customer.maskedPan?.startsWith('541333') === true,
      'the next card declined',
    );
    const preauths = sandbox.ledger().transactions.filter((t) => t.kind === 'authorization');
    expect(preauths.map((t) => [t.status, t.amounts.requested, t.card?.masked?.slice(0, 6)])).toEqual([
      ['DECLINED', 1_108, '476173'],
      ['DECLINED', 1_108, '541333'],
    ]);
    const ids = preauths.map((t) => t.transactionId);
    expect(new Set(ids).size).toBe(2);
    const journal = host.journal.list({ limit: 10 });
    expect(journal.map((e) => e.service)).toEqual(['preauth', 'preauth']);
    expect(new Set(journal.map((e) => e.transactionId))).toEqual(new Set(ids));
    expect(sandboxOpenAuthorizations(sandbox)).toEqual([]);
    expect(sandbox.consistency({ requireResolved: true }).problems).toEqual([]);
  });
});
