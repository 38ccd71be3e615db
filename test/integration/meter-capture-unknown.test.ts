import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TerminalHost } from '../../src/host/terminal-host.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { ParkingClock } from './models-harness.js';
import { eventually, startMeterHost } from './meter-host.js';
import { sendEvent, waitForSnapshot } from './host-harness.js';

/*
 * An on-street meter session ends owing a fee, and the capture reaches the gateway but its answer is lost. Recovery
 * voids it with a timeout void (reference/gateway.md §3: a capture without answer gets one). Voiding a capture leaves
 * the authorization hold in place (§7), so the fee is still collectable from that hold: it must be captured once —
 * never lost with the hold released, never captured twice.
 */

let sandbox: Sandbox;
let dir: string;
const hosts: TerminalHost[] = [];

beforeEach(async () => {
  sandbox = await startSandbox({ port: 0 });
  dir = mkdtempSync(join(tmpdir(), 'pt-meter-capture-unknown-'));
});

afterEach(async () => {
  while (hosts.length > 0) await hosts.pop()?.close();
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
});

const meterHost = (clock: ParkingClock): Promise<TerminalHost> =>
  startMeterHost(hosts, dir, sandbox.url, clock);

/** The sandbox's captures of the session's authorization: what each took and whether it was voided. */
function capturesOf(authGatewayId: string | undefined): { captured: number; voided: boolean }[] {
  return sandbox
    .ledger()
    .transactions.filter((tx) => tx.kind === 'capture' && tx.parentId === authGatewayId)
    .map((tx) => ({ captured: tx.amounts.captured, voided: tx.voided === true }));
}

describe('meter: the capture that ends a session loses its answer', () => {
  it('captures the fee once after recovery voided the capture in doubt, and never releases the hold instead', async () => {
    const clock = new ParkingClock();
    const host = await meterHost(clock);
    await sendEvent(host, { type: 'START' });
    await sendEvent(host, { type: 'CHOOSE_DURATION', minutes: 60 });
    await sendEvent(host, { type: 'CONFIRM' });
    await waitForSnapshot(host, (s) => s.customer.screen === 'session');
    const auth = host.journal.list({ limit: 10 }).find((e) => e.service === 'preauth');
    const authTx = auth?.transactionId ?? '';
    sandbox.scheduleFaults([{ kind: 'reset-after-commit', path: '/captures' }]);
    clock.offsetMs += 90 * 60_000;
    await sendEvent(host, { type: 'END_SESSION' });
    await waitForSnapshot(host, (s) => s.customer.actions.includes('DONE'));
    // Recovery resolves the capture in doubt (its timeout void approved), and the fee of 4.50 is captured again.
    expect(await eventually(() => capturesOf(auth?.gatewayId).some((c) => !c.voided), 15_000)).toBe(true);
    expect(capturesOf(auth?.gatewayId)).toEqual([
      { captured: 450, voided: true },
      { captured: 450, voided: false },
    ]);
    expect(await eventually(() => host.journal.authorizationSettled(authTx), 5_000)).toBe(true);
    expect(host.journal.referencing(authTx).map((e) => e.service)).not.toContain('reversal');
  });
});

describe('meter: the capture of a converted hold loses its answer', () => {
  it("captures the fee once in the card's currency after recovery voided the capture in doubt", async () => {
    // The simulator's N2 card is billed in JPY by the sandbox's default conversion table, which converts EUR to JPY.
    const clock = new ParkingClock();
    const host = await startMeterHost(hosts, dir, sandbox.url, clock, {
      terminal: { currency: 'EUR', country: 'DE', countryNumeric: '276', timezone: 'Europe/Berlin' },
      card: 'n2-contact',
    });
    await sendEvent(host, { type: 'START' });
    await sendEvent(host, { type: 'CHOOSE_DURATION', minutes: 60 });
    await sendEvent(host, { type: 'CONFIRM' });
    await waitForSnapshot(host, (s) => s.customer.screen === 'choose-currency');
    await sendEvent(host, { type: 'CHOOSE_CURRENCY', currency: 'JPY' });
    await waitForSnapshot(host, (s) => s.customer.screen === 'session');
    const auth = host.journal.list({ limit: 10 }).find((e) => e.service === 'preauth');
    const authTx = auth?.transactionId ?? '';
    expect(auth?.currency).toBe('JPY');
    sandbox.scheduleFaults([{ kind: 'reset-after-commit', path: '/captures' }]);
    clock.offsetMs += 90 * 60_000;
    await sendEvent(host, { type: 'END_SESSION' });
    await waitForSnapshot(host, (s) => s.customer.actions.includes('DONE'));
    const capturedAgain = await eventually(() => capturesOf(auth?.gatewayId).some((c) => !c.voided), 15_000);
    expect(capturedAgain).toBe(true);
    const [lost, again] = capturesOf(auth?.gatewayId);
    expect(lost?.voided).toBe(true);
    expect(again).toEqual({ captured: lost?.captured, voided: false });
    expect(await eventually(() => host.journal.authorizationSettled(authTx), 5_000)).toBe(true);
    expect(host.journal.referencing(authTx).map((e) => e.service)).not.toContain('reversal');
  });
});
