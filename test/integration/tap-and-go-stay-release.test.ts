import { afterEach, describe, expect, it } from 'vitest';
import type { OperatorAction, OperatorResponse, Result, TerminalSnapshot } from '../../src/host/api.js';
import type { TerminalHost } from '../../src/host/terminal-host.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import type { GatewayClient } from '../../src/gateway/index.js';
import {
  modelConfig,
  refusedUnprocessed,
  sendEvent,
  startSandboxLane,
  waitForScreen,
  type ParkingClock,
} from './models-harness.js';

/**
 * Passback reset, on a real host against the sandbox with the simulated reader: a car let out by hand leaves its card's
 * stay open, and with one stay per card (tariff.tapAndGoOneStayPerCard) the card is refused at the entry. The operator
 * lists the open stays (masked card only) and releases that one behind the PIN: its hold is reversed in full by the
 * expiry watch's own run — one REVERSAL at the gateway, nothing captured —, the release is in the audit log, and the
 * card enters again. A second release sends nothing; without the right PIN nothing is released.
 */

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const CARD = 'n2-contact';

function lane(): Promise<{ host: TerminalHost; sandbox: Sandbox; clock: ParkingClock }> {
  return startSandboxLane(modelConfig('tap-and-go', { tariff: { tapAndGoHoldMinor: 598 } }), cleanups);
}

async function tapAtEntry(host: TerminalHost, what: string): Promise<TerminalSnapshot> {
  host.simulator!.setCard(CARD);
  await sendEvent(host, { type: 'TAP_ENTRY' });
  const shown = await waitForScreen(
    host,
    (s) => ['session', 'declined', 'error'].includes(s.customer.screen),
    what,
  );
  await sendEvent(host, { type: 'DONE' });
  await waitForScreen(host, (s) => s.customer.screen === 'idle', 'idle');
  return shown;
}

function operator(
  host: TerminalHost,
  action: OperatorAction,
  pin?: string,
): Promise<Result<OperatorResponse>> {
  return host.operator({ pin: pin ?? host.generatedOperatorPin ?? '', action });
}

/** The REVERSALs the sandbox received for an authorization. */
function reversalsAtGateway(sandbox: Sandbox, authorizationTx: string): number {
  const ledger = sandbox.ledger().transactions;
  const auth = ledger.find((t) => t.transactionId === authorizationTx);
  return ledger.filter((t) => t.kind === 'reversal' && t.parentId === auth?.id).length;
}

describe('tap-and-go: the operator releases a stay whose car left without its exit', () => {
  it('reverses its hold once, nothing charged, and lets the card in again', async () => {
    const { host, sandbox } = await lane();
    expect((await tapAtEntry(host, 'the entry')).customer.screen).toBe('session');
    const [hold] = host.holds.unclaimed();
    expect(hold).toBeDefined();
    const holdId = hold!.holdId;
    // The car was let out by hand: at the entry again, the card is refused.
    expect((await tapAtEntry(host, 'the entry with the stay open')).customer.screen).toBe('declined');

    // Without the PIN nothing is listed or released.
    for (const action of [{ type: 'stays' }, { type: 'hold-release', holdId }] as const)
      expect(await operator(host, action, '0000000')).toMatchObject({
        ok: false,
        error: { code: 'OPERATOR_PIN' },
      });
    expect(host.holds.has(holdId)).toBe(true);

    // The open stays: hold, masked card, entry, amount held — never the card number.
    const listed = await operator(host, { type: 'stays' });
    expect(listed).toMatchObject({
      ok: true,
      value: {
        type: 'stays',
        stays: [
          {
            holdId,
            maskedPan: hold!.maskedPan,
            enteredAt: new Date(hold!.enteredAtMs).toISOString(),
            held: { minor: 598, currency: hold!.currency },
            state: 'open',
            allowed: ['release'],
          },
        ],
      },
    });
    expect(JSON.stringify(listed)).not.toMatch(/\d{13,19}/);

    // Released twice at once: one reversal; the other is refused as the hold is being settled.
    const [first, second] = await Promise.all([
      operator(host, { type: 'hold-release', holdId }),
      operator(host, { type: 'hold-release', holdId }),
    ]);
    expect(first).toMatchObject({
      ok: true,
      value: { type: 'hold-release', holdId, outcome: 'released', code: 'APPROVED' },
    });
    expect(second).toMatchObject({ ok: false, error: { code: 'HOLD_BUSY' } });
    // And again once it is closed: nothing to release.
    expect(await operator(host, { type: 'hold-release', holdId })).toMatchObject({
      ok: false,
      error: { code: 'HOLD_NOT_FOUND' },
    });
    await host.settle(10_000);
    expect(host.holds.has(holdId)).toBe(false);
    expect(reversalsAtGateway(sandbox, holdId)).toBe(1);
    const auth = sandbox.ledger().transactions.find((t) => t.transactionId === holdId);
    expect({ captured: auth?.amounts.captured, reversed: auth?.amounts.reversed }).toEqual({
      captured: 0,
      reversed: 598,
    });
    expect(sandbox.ledger().transactions.filter((t) => t.kind === 'capture')).toEqual([]);
    expect(
      host.journal
        .list({ limit: 100 })
        .filter((e) => e.referencedTransactionId === holdId)
        .map((e) => `${e.service}:${e.state}`),
    ).toEqual(['reversal:approved']);

    // In the audit log: the operator's release, and the refusals; no card data.
    const records = host.audit.list({}).filter((r) => r.action === 'hold-release');
    expect(records.map((r) => [r.actor, r.subject, r.result, r.code])).toEqual([
      ['operator', holdId, 'refused', 'HOLD_BUSY'],
      ['operator', holdId, 'ok', 'APPROVED'],
      ['operator', holdId, 'refused', 'HOLD_NOT_FOUND'],
    ]);
    expect(JSON.stringify(records)).not.toContain(hold!.maskedPan);
    expect(await operator(host, { type: 'stays' })).toMatchObject({ ok: true, value: { stays: [] } });

    // The card enters again: a new hold.
    expect((await tapAtEntry(host, 'the entry after the release')).customer.screen).toBe('session');
    expect(host.holds.unclaimed().map((h) => h.holdId)).not.toContain(holdId);
    expect(host.holds.size).toBe(1);
    expect(reversalsAtGateway(sandbox, holdId)).toBe(1);
  }, 60_000);

  it('refused for now: the card enters at once, the reversal goes again after its wait, and a release meanwhile sends nothing', async () => {
    const { host, sandbox } = await lane();
    await tapAtEntry(host, 'the entry');
    const holdId = host.holds.unclaimed()[0]!.holdId;
    // The first reversal of the hold is refused for now before it reaches the gateway (the processor is down).
    const send = host.gateway.send.bind(host.gateway);
    let refusals = 1;
    host.gateway.send = async (...args: Parameters<GatewayClient['send']>) => {
      if (args[0].service !== 'reversal' || refusals === 0) return send(...args);
      refusals -= 1;
      return refusedUnprocessed('PROCESSOR_UNAVAILABLE');
    };

    expect(await operator(host, { type: 'hold-release', holdId })).toMatchObject({
      ok: true,
      value: { type: 'hold-release', holdId, outcome: 'later', code: 'PROCESSOR_UNAVAILABLE' },
    });
    // Its release is decided: another is refused, and the list says why it is still open.
    expect(await operator(host, { type: 'hold-release', holdId })).toMatchObject({
      ok: false,
      error: { code: 'HOLD_RELEASING' },
    });
    // The card enters again at once, whatever the processor.
    expect((await tapAtEntry(host, 'the entry after the release')).customer.screen).toBe('session');

    // The watch sends the reversal again after its wait (journal.resolutionRetryMs), once.
    const deadline = Date.now() + 20_000;
    while (host.holds.has(holdId) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await host.settle(10_000);
    expect(host.holds.has(holdId)).toBe(false);
    expect(
      host.journal
        .list({ limit: 100 })
        .reverse()
        .filter((e) => e.referencedTransactionId === holdId)
        .map((e) => `${e.service}:${e.state}:${e.reason ?? ''}`),
    ).toEqual(['reversal:rejected:PROCESSOR_UNAVAILABLE', 'reversal:approved:']);
    expect(reversalsAtGateway(sandbox, holdId)).toBe(1);
    expect(host.holds.size).toBe(1);
    expect(
      host.audit
        .list({})
        .filter((r) => r.action === 'hold-release')
        .map((r) => `${r.result}:${r.code ?? ''}`),
    ).toEqual(['failed:PROCESSOR_UNAVAILABLE', 'refused:HOLD_RELEASING']);
  }, 60_000);
});
