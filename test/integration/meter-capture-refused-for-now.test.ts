import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TerminalHost } from '../../src/host/terminal-host.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { ParkingClock } from './models-harness.js';
import { eventually, startMeterHost } from './meter-host.js';
import { startRewritingProxy, type RewritingProxy } from './rewriting-proxy.js';
import { sendEvent, waitForSnapshot } from './host-harness.js';

/*
 * An on-street meter session ends owing a fee while the gateway's processor is down for a while: the capture is
 * answered 400 PROCESSOR_UNAVAILABLE (reference/gateway.md §4: nothing processed, the same request later can
 * succeed). The hold still allows the capture for its capture window: the fee must be captured once the processor is
 * back — while the terminal runs, or at its next start — never the hold released and the fee lost.
 */

let sandbox: Sandbox;
let proxy: RewritingProxy;
let dir: string;
/** While set, every capture is answered 400 PROCESSOR_UNAVAILABLE by the proxy (nothing reaches the sandbox). */
let refuseCaptures = false;
const hosts: TerminalHost[] = [];

beforeEach(async () => {
  refuseCaptures = false;
  sandbox = await startSandbox({ port: 0 });
  proxy = await startRewritingProxy(
    sandbox.url,
    () => undefined,
    (req) =>
      refuseCaptures && req.method === 'POST' && /^\/pts\/v2\/payments\/[^/]+\/captures$/.test(req.url)
        ? {
            status: 400,
            body: {
              submitTimeUtc: '2030-01-01T08:00:00Z',
              status: 'INVALID_REQUEST',
              reason: 'PROCESSOR_UNAVAILABLE',
              message: 'The processor is unavailable',
            },
          }
        : undefined,
  );
  dir = mkdtempSync(join(tmpdir(), 'pt-meter-capture-'));
});

afterEach(async () => {
  while (hosts.length > 0) await hosts.pop()?.close();
  await proxy.close();
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
});

const meterHost = (clock: ParkingClock): Promise<TerminalHost> =>
  startMeterHost(hosts, dir, proxy.url, clock);

/** What the sandbox's ledger shows captured and not voided, minor units. */
function captured(): number {
  return sandbox
    .ledger()
    .transactions.filter((tx) => tx.kind === 'capture' && !tx.voided)
    .reduce((sum, tx) => sum + tx.amounts.captured, 0);
}

/** A meter session of 60 minutes ended after 90 (a fee of 4.50 owed) while captures are refused for now. */
async function endedWithCaptureRefused(clock: ParkingClock): Promise<{ host: TerminalHost; authTx: string }> {
  const host = await meterHost(clock);
  await sendEvent(host, { type: 'START' });
  await sendEvent(host, { type: 'CHOOSE_DURATION', minutes: 60 });
  await sendEvent(host, { type: 'CONFIRM' });
  await waitForSnapshot(host, (s) => s.customer.screen === 'session');
  const authTx = host.journal.list({ limit: 10 }).find((e) => e.service === 'preauth')?.transactionId ?? '';
  refuseCaptures = true;
  clock.offsetMs += 90 * 60_000;
  await sendEvent(host, { type: 'END_SESSION' });
  const end = await waitForSnapshot(host, (s) => s.customer.actions.includes('DONE'));
  // The session is closed and the fee is charged later: the customer is told so, not sent to the operator.
  expect(end.customer.screen).toBe('approved');
  expect(end.customer.message).toMatch(/will be charged to your card shortly/);
  // Nothing released the hold the fee is still to be captured from.
  expect(host.journal.referencing(authTx).map((e) => e.service)).not.toContain('reversal');
  expect(captured()).toBe(0);
  return { host, authTx };
}

describe('meter: the capture that ends a session is refused for now', () => {
  it('captures the fee once the processor is back, and never releases the hold instead', async () => {
    const clock = new ParkingClock();
    const { host, authTx } = await endedWithCaptureRefused(clock);
    refuseCaptures = false;
    expect(await eventually(() => captured() > 0, 15_000)).toBe(true);
    expect(captured()).toBe(450);
    expect(await eventually(() => host.journal.authorizationSettled(authTx), 5_000)).toBe(true);
    expect(host.journal.referencing(authTx).map((e) => e.service)).not.toContain('reversal');
  });

  it('captures the fee at the next start when the terminal stopped before the processor was back', async () => {
    const clock = new ParkingClock();
    const { host, authTx } = await endedWithCaptureRefused(clock);
    await host.close();
    hosts.pop();
    refuseCaptures = false;
    const again = await meterHost(clock);
    expect(await eventually(() => captured() > 0, 15_000)).toBe(true);
    expect(captured()).toBe(450);
    expect(await eventually(() => again.journal.authorizationSettled(authTx), 5_000)).toBe(true);
    expect(again.journal.referencing(authTx).map((e) => e.service)).not.toContain('reversal');
  });
});
