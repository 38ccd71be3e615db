import { afterEach, describe, expect, it } from 'vitest';
import {
  confirmMeterStay,
  modelConfig,
  sandboxOpenAuthorizations,
  sendEvent,
  startSandboxLane,
  waitForScreen,
} from './models-harness.js';

/**
 * The on-street meter on a real host against a sandbox of its own, with the simulated reader: a pre-authorization the
 * gateway declines holds nothing, the declined screen offers another card, and the next card is pre-authorized once,
 * as a new transaction with a transactionId of its own. The maximum stay costs the daily cap, 11.08: the sandbox
 * declines every authorization of an amount ending in 08 (GENERAL_DECLINE), the next card's too.
 */

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of cleanups.reverse()) await close();
  cleanups.length = 0;
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
