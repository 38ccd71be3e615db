/**
 * Tap-and-go entry: a zero-amount account verification whose answer is lost. It is an authorization (spec 001:
 * service Authorization, comments `Parking AVR`), and an authorization without response is followed by a timeout
 * reversal keyed by its transactionId, for the amount it requested (spec 001 `REVERSAL Timeout`; gateway.md §2, §7).
 * Real host, the sandbox losing the verification's answer after committing it, the simulated reader.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { modelConfig, sendEvent, startSandboxLane, waitForScreen } from './models-harness.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('tap-and-go: an account verification whose answer was lost', () => {
  it('is followed by a timeout reversal of 0.00 keyed by its transactionId, and no pre-authorization', async () => {
    const config = modelConfig('tap-and-go', { tariff: { tapAndGoHoldMinor: 598 } });
    const { host, sandbox } = await startSandboxLane(config, cleanups);
    // The verification is made at the gateway and its answer lost (502 after the commit).
    sandbox.scheduleFaults([{ kind: 'timeout-502', path: '/pts/v2/payments', method: 'POST' }]);
    host.simulator!.setCard('n2-contact');
    await sendEvent(host, { type: 'TAP_ENTRY' });
    const told = await waitForScreen(host, (s) => s.customer.actions.includes('DONE'), 'the entry result');
    expect(told.customer.screen).not.toBe('session');
    await host.settle(10_000);

    const transactions = sandbox.ledger().transactions;
    const verification = transactions.find((t) => t.kind === 'verification');
    expect(verification?.transactionId).toBeDefined();
    const reversals = transactions.filter((t) => t.kind === 'timeout-reversal');
    expect(reversals).toHaveLength(1);
    expect(reversals[0]).toMatchObject({
      transactionId: verification?.transactionId,
      comments: 'REVERSAL Timeout',
      parentId: verification?.id,
      status: 'REVERSED',
    });
    expect(reversals[0]?.requests[0]?.body).toMatchObject({
      reversalInformation: { amountDetails: { totalAmount: '0.00' } },
    });
    expect(transactions.filter((t) => t.kind === 'authorization')).toEqual([]);

    const avr = host.journal.list({ limit: 100 }).find((e) => e.service === 'avr');
    expect(avr).toMatchObject({ state: 'resolved', resolution: 'timeout-reversal' });
    expect(host.journal.inFlight()).toEqual([]);
  }, 60_000);
});
