import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AnyMachineSnapshot } from 'xstate';
import { parseConfig } from '../../src/config/index.js';
import type { MeterContext } from '../../src/flows/meter.js';
import { createTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { silentLogger } from '../../src/log/index.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { ParkingClock } from './models-harness.js';
import { startUnreachablePathsProxy, type RewritingProxy } from './rewriting-proxy.js';
import { sendEvent, waitForSnapshot } from './host-harness.js';
import { sandboxOpenAuthorizations } from './models-harness.js';

/*
 * An on-street meter session (tariff.meterAuthorization `chosen`) whose incremental authorization's answer is lost
 * (the sandbox approves it, then answers 502 SERVER_TIMEOUT) while the gateway cannot be reached for timeout
 * reversals: the meter's own attempts to resolve the increment fail, it tells the customer the extension was not
 * approved and the session goes on with the time paid before. The gateway may hold the increment or not: only its
 * resolution tells. Whatever settles the session waits for it — a reversal for the total before the increment would be
 * refused and leave the hold on the card — and nothing is left in flight for ever. Likewise a capture at the end of a
 * session whose answer is lost while timeout voids cannot get through: the session's reversal waits for the capture's
 * resolution.
 */

const TARIFF = {
  periods: [
    { minutes: 90, priceMinor: 150, unitMinutes: 30 },
    { minutes: 1_350, priceMinor: 71, unitMinutes: 30 },
  ],
  graceMinutes: 10,
  maxStayMinutes: 240,
  dailyCapMinor: 702,
  meterAuthorization: 'chosen' as const,
};

let sandbox: Sandbox;
let proxy: RewritingProxy;
let dir: string;
/** Paths of the gateway that cannot be reached (POST answered 502 by the proxy, nothing reaches the sandbox). */
const unreachable = new Set<string>();
const hosts: TerminalHost[] = [];

beforeEach(async () => {
  unreachable.clear();
  sandbox = await startSandbox({ port: 0 });
  proxy = await startUnreachablePathsProxy(sandbox.url, unreachable);
  dir = mkdtempSync(join(tmpdir(), 'pt-meter-increment-'));
});

afterEach(async () => {
  while (hosts.length > 0) await hosts.pop()?.close();
  await proxy.close();
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A meter host on the proxy (with `tariff`, if given) whose session of 60 minutes has started. */
async function sessionStarted(tariff?: typeof TARIFF): Promise<{ host: TerminalHost; clock: ParkingClock }> {
  const clock = new ParkingClock();
  const host = await createTerminalHost(
    parseConfig({
      terminal: { model: 'meter' },
      reader: { sim: { presentDelayMs: 5 } },
      ...(tariff !== undefined ? { tariff } : {}),
      journal: { path: 'journal.db', timeoutReversalDelayMs: 50, resolutionRetryMs: 100 },
    }),
    { logger: silentLogger(), cwd: dir, gatewayUrlOverride: proxy.url, parkingClock: clock },
  );
  hosts.push(host);
  await waitForSnapshot(host, (s) => s.customer.screen === 'idle');
  await sendEvent(host, { type: 'START' });
  await sendEvent(host, { type: 'CHOOSE_DURATION', minutes: 60 });
  await sendEvent(host, { type: 'CONFIRM' });
  await waitForSnapshot(host, (s) => s.customer.screen === 'session');
  return { host, clock };
}

/** A meter host on the proxy, its session of 60 minutes (3.00) extended by 30 with an increment left unresolved. */
async function sessionWithUnresolvedIncrement(): Promise<{ host: TerminalHost; clock: ParkingClock }> {
  const { host, clock } = await sessionStarted(TARIFF);

  // The increment (1.50) is approved by the sandbox, its answer lost; no timeout reversal gets through.
  sandbox.scheduleFaults([{ kind: 'timeout-502', method: 'PATCH' }]);
  unreachable.add('/pts/v2/reversals');
  await sendEvent(host, { type: 'EXTEND', minutes: 30 });
  await waitForSnapshot(host, () => {
    const machine = host.actor?.getSnapshot() as AnyMachineSnapshot | undefined;
    return (
      machine?.matches('session') === true &&
      (machine.context as MeterContext).reason === 'TIMEOUT_UNRESOLVED'
    );
  });
  const meter = (host.actor?.getSnapshot() as AnyMachineSnapshot).context as MeterContext;
  expect(meter.message).toEqual({ key: 'meter.extensionNotApproved' });
  expect(meter.holds.map((h) => h.authorizedMinor)).toEqual([300]);
  const increment = sandbox.ledger().transactions.find((t) => t.kind === 'incremental');
  expect(increment).toMatchObject({ status: 'AUTHORIZED', outcomeUnknown: true });
  return { host, clock };
}

describe('meter: an increment whose outcome stayed unknown, then a capture at the end of the session', () => {
  it('captures the fee of the time paid once the increment is resolved, and leaves nothing in flight', async () => {
    const { host, clock } = await sessionWithUnresolvedIncrement();

    // The gateway is back for everything; the customer leaves after 25 minutes (1.50, below what is held).
    unreachable.delete('/pts/v2/reversals');
    clock.offsetMs += 25 * 60_000;
    await sendEvent(host, { type: 'END_SESSION' });
    const end = await waitForSnapshot(host, (s) => ['approved', 'error'].includes(s.customer.screen));
    expect(end.customer.screen).toBe('approved');

    await host.settle(10_000);
    expect(host.journal.counts().inFlight).toBe(0);
    const captured = sandbox
      .ledger()
      .transactions.filter((t) => t.kind === 'capture')
      .map((t) => t.amounts.captured);
    expect(captured).toEqual([150]);
    expect(sandbox.consistency({ requireResolved: true }).problems).toEqual([]);
  });

  it('captures the fee once the increment is resolved when the session ended before: the capture held back, not the hold released', async () => {
    const { host, clock } = await sessionWithUnresolvedIncrement();

    // The customer leaves after 25 minutes (1.50, below what is held) while the increment still cannot be resolved:
    // the capture is held back unsent (INCREMENT_UNRESOLVED), the fee still owed and the hold still there for it.
    clock.offsetMs += 25 * 60_000;
    await sendEvent(host, { type: 'END_SESSION' });
    const end = await waitForSnapshot(host, (s) => s.customer.actions.includes('DONE'));
    expect(end.customer.screen).toBe('approved');
    expect(end.customer.message).toMatch(/will be charged to your card shortly/);

    // The gateway is back: the increment is resolved, then the fee captured — never the hold released instead.
    unreachable.delete('/pts/v2/reversals');
    const captured = (): number[] =>
      sandbox
        .ledger()
        .transactions.filter((t) => t.kind === 'capture')
        .map((t) => t.amounts.captured);
    for (let i = 0; i < 500 && captured().length === 0; i += 1)
      await new Promise((res) => setTimeout(res, 20));
    expect(captured()).toEqual([150]);
    await host.settle(10_000);
    expect(host.journal.counts().inFlight).toBe(0);
    expect(sandbox.consistency({ requireResolved: true }).problems).toEqual([]);
  });

  it('releases the hold for its authorized total once the increment is resolved, never for the total before it', async () => {
    const { host, clock } = await sessionWithUnresolvedIncrement();
    // Ended within the grace period: nothing is owed and the hold is to be reversed — while the gateway may hold the
    // increment too (it does: approved), which only the increment's resolution tells.
    clock.offsetMs += 5 * 60_000;
    await sendEvent(host, { type: 'END_SESSION' });
    const end = await waitForSnapshot(host, (s) => s.customer.actions.includes('DONE'));
    expect(end.customer.message).toBe(
      'Nothing to pay. The amount held on your card will be released shortly',
    );
    unreachable.delete('/pts/v2/reversals');
    for (let i = 0; i < 500 && sandboxOpenAuthorizations(sandbox).length > 0; i += 1)
      await new Promise((res) => setTimeout(res, 20));
    expect(sandboxOpenAuthorizations(sandbox)).toEqual([]);
    await host.settle(10_000);
    expect(host.journal.counts().inFlight).toBe(0);
    expect(sandbox.ledger().transactions.filter((t) => t.kind === 'capture')).toEqual([]);
    expect(sandbox.consistency({ requireResolved: true }).problems).toEqual([]);
  });

  it('sends no further increment while one is unresolved: its new total would count the unknown one', async () => {
    const { host, clock } = await sessionWithUnresolvedIncrement();
    await sendEvent(host, { type: 'EXTEND', minutes: 30 });
    // The extension's outcome: back in the session with another reason than the unresolved increment's.
    await waitForSnapshot(host, () => {
      const machine = host.actor?.getSnapshot() as AnyMachineSnapshot | undefined;
      return (
        machine?.matches('session') === true &&
        (machine.context as MeterContext).reason !== 'TIMEOUT_UNRESOLVED'
      );
    });
    const meter = (host.actor?.getSnapshot() as AnyMachineSnapshot).context as MeterContext;
    expect(meter.holds.map((h) => h.authorizedMinor)).toEqual([300]);
    expect(meter.paidMinutes).toBe(60);
    expect(meter.message).toEqual({ key: 'meter.extensionNotApproved' });
    expect(meter.reason).toBe('INCREMENT_UNRESOLVED');
    expect(sandbox.ledger().transactions.filter((t) => t.kind === 'incremental')).toHaveLength(1);

    unreachable.delete('/pts/v2/reversals');
    clock.offsetMs += 5 * 60_000;
    await sendEvent(host, { type: 'END_SESSION' });
    const end = await waitForSnapshot(host, (s) => s.customer.actions.includes('DONE'));
    expect(end.customer.screen).toBe('approved');
    for (let i = 0; i < 500 && sandboxOpenAuthorizations(sandbox).length > 0; i += 1)
      await new Promise((res) => setTimeout(res, 20));
    expect(sandboxOpenAuthorizations(sandbox)).toEqual([]);
    await host.settle(10_000);
    expect(host.journal.counts().inFlight).toBe(0);
    expect(sandbox.consistency({ requireResolved: true }).problems).toEqual([]);
  });
});

describe('meter: a capture whose outcome stayed unknown at the end of the session', () => {
  it('reverses the hold only once the capture is resolved, so that its void does not leave the hold on the card', async () => {
    const { host, clock } = await sessionStarted();

    // The capture of the fee (1.50 of the 12.00 held) is made, its answer lost; no timeout void gets through.
    sandbox.scheduleFaults([{ kind: 'timeout-502', path: '/captures', method: 'POST' }]);
    unreachable.add('/pts/v2/voids');
    clock.offsetMs += 25 * 60_000;
    await sendEvent(host, { type: 'END_SESSION' });
    await waitForSnapshot(host, (s) => s.customer.actions.includes('DONE'));
    const capture = sandbox.ledger().transactions.find((t) => t.kind === 'capture');
    expect(capture).toMatchObject({ status: 'PENDING', outcomeUnknown: true });

    // The gateway is back: recovery voids the capture (its outcome unknown: never charged twice), which leaves the
    // authorization's hold in place — the session's reversal must release it.
    unreachable.delete('/pts/v2/voids');
    const voided = (): boolean =>
      sandbox.ledger().transactions.some((t) => t.kind === 'capture' && t.voided === true);
    for (let i = 0; i < 500 && !voided(); i += 1) await new Promise((res) => setTimeout(res, 20));
    expect(voided()).toBe(true);
    for (let i = 0; i < 500 && sandboxOpenAuthorizations(sandbox).length > 0; i += 1)
      await new Promise((res) => setTimeout(res, 20));
    expect(sandboxOpenAuthorizations(sandbox)).toEqual([]);
    await host.settle(10_000);
    expect(host.journal.counts().inFlight).toBe(0);
    expect(sandbox.consistency({ requireResolved: true }).problems).toEqual([]);
  });
});
