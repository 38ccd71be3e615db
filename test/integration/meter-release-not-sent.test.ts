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
import { sandboxOpenAuthorizations } from './models-harness.js';

/*
 * An on-street meter session that ends owing nothing (within the grace period) while the gateway refuses the
 * terminal's credentials for the reversal that gives the hold back (401: nothing processed, the request provably never
 * reached the gateway — `not-sent`). The session's pre-authorization is still held at the gateway: a reversal that
 * never left released nothing, and the hold must be released once the gateway takes the terminal's requests again —
 * never left on the card because the journal counts the reversal that never went as having settled it.
 */

let sandbox: Sandbox;
let proxy: RewritingProxy;
let dir: string;
/** While set, every reversal of a payment is answered 401 by the proxy (nothing reaches the sandbox). */
let refuseReversals = false;
const hosts: TerminalHost[] = [];

beforeEach(async () => {
  refuseReversals = false;
  sandbox = await startSandbox({ port: 0 });
  proxy = await startRewritingProxy(
    sandbox.url,
    () => undefined,
    (req) =>
      refuseReversals && req.method === 'POST' && /^\/pts\/v2\/payments\/[^/]+\/reversals$/.test(req.url)
        ? { status: 401, body: { response: { rmsg: 'Authentication Failed' } } }
        : undefined,
  );
  dir = mkdtempSync(join(tmpdir(), 'pt-meter-release-'));
});

afterEach(async () => {
  while (hosts.length > 0) await hosts.pop()?.close();
  await proxy.close();
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
});

const meterHost = (clock: ParkingClock): Promise<TerminalHost> =>
  startMeterHost(hosts, dir, proxy.url, clock);

async function heldUntilReleased(timeoutMs: number): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  while (sandboxOpenAuthorizations(sandbox).length > 0 && Date.now() < deadline)
    await new Promise((res) => setTimeout(res, 20));
  return sandboxOpenAuthorizations(sandbox);
}

/** A meter session of 60 minutes ended after 5 (nothing owed) while reversals are refused unprocessed. */
async function endedWithReversalNotSent(
  clock: ParkingClock,
): Promise<{ host: TerminalHost; authTx: string }> {
  const host = await meterHost(clock);
  await sendEvent(host, { type: 'START' });
  await sendEvent(host, { type: 'CHOOSE_DURATION', minutes: 60 });
  await sendEvent(host, { type: 'CONFIRM' });
  await waitForSnapshot(host, (s) => s.customer.screen === 'session');
  const authTx = host.journal.list({ limit: 10 }).find((e) => e.service === 'preauth')?.transactionId ?? '';
  refuseReversals = true;
  clock.offsetMs += 5 * 60_000;
  await sendEvent(host, { type: 'END_SESSION' });
  const end = await waitForSnapshot(host, (s) => s.customer.actions.includes('DONE'));
  // The session is closed and the host sends the reversal again: the customer is told so, not sent to the operator.
  expect({ screen: end.customer.screen, message: end.customer.message }).toEqual({
    screen: 'approved',
    message: 'Nothing to pay. The amount held on your card will be released shortly',
  });
  const sent = host.journal.referencing(authTx).map((e) => `${e.service}:${e.state}:${e.resolution ?? ''}`);
  // The reversal never left (sent again meanwhile by its follow-up, it never left either).
  expect(new Set(sent)).toEqual(new Set(['reversal:resolved:not-sent']));
  expect(sandboxOpenAuthorizations(sandbox)).toHaveLength(1);
  return { host, authTx };
}

describe('meter: the reversal that ends a session never reaches the gateway', () => {
  it('releases the hold once the gateway takes the terminal’s requests again', async () => {
    const clock = new ParkingClock();
    const { host, authTx } = await endedWithReversalNotSent(clock);
    refuseReversals = false;
    expect(await heldUntilReleased(15_000)).toEqual([]);
    // The reversal's approval is journaled too (after the gateway's ledger has it).
    expect(await eventually(() => host.journal.authorizationSettled(authTx), 5_000)).toBe(true);
  });

  it('releases the hold at the next start when the terminal stopped before the gateway took it', async () => {
    const clock = new ParkingClock();
    const { host, authTx } = await endedWithReversalNotSent(clock);
    // The journal does not count the reversal that never left as having released the hold.
    expect(host.journal.authorizationSettled(authTx)).toBe(false);
    await host.close();
    hosts.pop();
    refuseReversals = false;
    const again = await meterHost(clock);
    expect(await heldUntilReleased(15_000)).toEqual([]);
    expect(await eventually(() => again.journal.authorizationSettled(authTx), 5_000)).toBe(true);
  });
});
