import { afterEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import type { TerminalHost } from '../../src/host/terminal-host.js';
import { modelConfig, sendEvent, startSandboxLane, waitForScreen } from './models-harness.js';

/**
 * EMV chip fallback on a real host against a sandbox of its own, with the simulated reader: a chip card swiped before
 * its chip was tried is never sent and the payment waits for the card again; a chip that cannot be read lets the same
 * payment take the card's stripe, sent as a fallback.
 */

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of cleanups.reverse()) await close();
  cleanups.length = 0;
});

async function attendedLane(card: string): Promise<{ host: TerminalHost; sandbox: Sandbox }> {
  const config = modelConfig('attended', { reader: { sim: { card, presentDelayMs: 20 } } });
  return startSandboxLane(config, cleanups);
}

async function startSale(host: TerminalHost, minor: number): Promise<void> {
  await sendEvent(host, { type: 'START' });
  await sendEvent(host, { type: 'ENTER_AMOUNT', minor });
  await waitForScreen(host, (s) => s.customer.screen === 'confirm', 'confirm');
  await sendEvent(host, { type: 'CONFIRM' });
}

function payments(sandbox: Sandbox) {
  return sandbox
    .ledger()
    .transactions.flatMap((t) => t.requests)
    .filter((r) => r.method === 'POST' && r.path === '/pts/v2/payments');
}

describe('EMV chip fallback on the attended terminal', () => {
  it('refuses a chip card swiped before its chip was tried, then takes it inserted within the same sale', async () => {
    const { host, sandbox } = await attendedLane('chip-swiped-fallback');
    await startSale(host, 960_100);
    await waitForScreen(
      host,
      (s) =>
        s.customer.screen === 'present-card' &&
        s.customer.message === 'This card has a chip: insert it in the reader, or tap it',
      'the chip asked for',
    );
    expect(payments(sandbox)).toEqual([]);
    expect(host.journal.list({ limit: 10 })).toEqual([]);

    host.simulator?.setCard('n2-contact');
    await waitForScreen(host, (s) => s.customer.screen === 'approved', 'approved');
    const sent = payments(sandbox);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.body).toMatchObject({ pointOfSaleInformation: { entryMode: 'contact' } });
    expect(sent[0]?.body).not.toHaveProperty('pointOfSaleInformation.emv.fallback');
    expect(host.journal.list({ limit: 10 }).map((e) => e.service)).toEqual(['sale']);
  });

  it('sends the stripe of a chip card whose chip could not be read, in the same sale', async () => {
    const { host, sandbox } = await attendedLane('chip-fails-then-swiped');
    await startSale(host, 960_100);
    await waitForScreen(host, (s) => s.customer.screen === 'approved', 'approved');
    const sent = payments(sandbox);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.body).toMatchObject({
      orderInformation: { amountDetails: { totalAmount: '9601.00' } },
      pointOfSaleInformation: { entryMode: 'swiped', emv: { fallback: true, fallbackCondition: 1 } },
    });
    expect(sent[0]?.emvTags).toBeUndefined();
    expect(sandbox.consistency({ requireResolved: false }).problems).toEqual([]);
  });

  it('takes no stripe after a failed tap: it asks for the card tapped again or inserted, refuses the swipe, and sends the chip read', async () => {
    const { host, sandbox } = await attendedLane('tap-fails-then-swiped');
    await startSale(host, 960_100);
    await waitForScreen(
      host,
      (s) =>
        s.customer.screen === 'error' &&
        s.customer.message === 'The card could not be read: tap it again, or insert it',
      'the card asked for tapped again or inserted',
    );
    expect(payments(sandbox)).toEqual([]);
    await sendEvent(host, { type: 'CONFIRM' });
    await waitForScreen(
      host,
      (s) =>
        s.customer.screen === 'present-card' &&
        s.customer.message === 'This card has a chip: insert it in the reader, or tap it',
      'the swipe refused: the chip asked for',
    );
    expect(payments(sandbox)).toEqual([]);
    await waitForScreen(host, (s) => s.customer.screen === 'approved', 'approved');
    const sent = payments(sandbox);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.body).toMatchObject({ pointOfSaleInformation: { entryMode: 'contact' } });
    expect(sent[0]?.body).not.toHaveProperty('pointOfSaleInformation.emv.fallback');
    expect(sandbox.consistency({ requireResolved: false }).problems).toEqual([]);
  });
});
