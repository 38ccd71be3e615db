import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AnyMachineSnapshot } from 'xstate';
import { parseConfig } from '../../src/config/index.js';
import type { MeterContext } from '../../src/flows/meter.js';
import type { TerminalSnapshot, UserEvent } from '../../src/host/api.js';
import { createTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { silentLogger } from '../../src/log/index.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { ParkingClock } from './models-harness.js';
import { startRewritingProxy, type RewritingProxy } from './rewriting-proxy.js';

/*
 * An on-street meter session (tariff.meterAuthorization `chosen`) whose incremental authorization's answer is lost
 * (the sandbox approves it, then answers 502 SERVER_TIMEOUT) while the gateway cannot be reached for timeout
 * reversals: the meter's own attempts to resolve the increment fail, it tells the customer the extension was not
 * approved and the session goes on with the time paid before. The customer ends the session once the gateway is back:
 * the capture of the fee (below the authorization) makes the gateway release the rest of it, the increment included.
 * Recovery's timeout reversal of the increment then finds the authorization captured: nothing of the increment is held
 * any more, and the journal entry must be resolved — not retried for ever (an entry left in flight keeps the next start
 * from ever accepting a card, DESIGN.md rule 3).
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
let reversalsUnreachable = false;
const hosts: TerminalHost[] = [];

beforeEach(async () => {
  reversalsUnreachable = false;
  sandbox = await startSandbox({ port: 0 });
  // Timeout reversals answered 502 SERVER_ERROR without reaching the sandbox while `reversalsUnreachable`.
  proxy = await startRewritingProxy(
    sandbox.url,
    () => undefined,
    (req) =>
      reversalsUnreachable && req.method === 'POST' && req.url === '/pts/v2/reversals'
        ? {
            status: 502,
            body: { submitTimeUtc: new Date().toISOString(), status: 'SERVER_ERROR', reason: 'SYSTEM_ERROR' },
          }
        : undefined,
  );
  dir = mkdtempSync(join(tmpdir(), 'pt-meter-increment-'));
});

afterEach(async () => {
  while (hosts.length > 0) await hosts.pop()?.close();
  await proxy.close();
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
});

async function send(h: TerminalHost, event: UserEvent): Promise<void> {
  const r = await h.send(event);
  if (!r.ok) throw new Error(`${event.type}: ${r.error.code} ${r.error.message}`);
}

async function shown(h: TerminalHost, accept: (s: TerminalSnapshot) => boolean): Promise<TerminalSnapshot> {
  for (;;) {
    const r = await h.snapshot();
    if (r.ok && accept(r.value)) return r.value;
    await new Promise((res) => setTimeout(res, 10));
  }
}

describe('meter: an increment whose outcome stayed unknown, then a capture at the end of the session', () => {
  it('resolves the increment once the capture released it, and charges the fee of the time paid', async () => {
    const clock = new ParkingClock();
    const host = await createTerminalHost(
      parseConfig({
        terminal: { model: 'meter' },
        reader: { sim: { presentDelayMs: 5 } },
        tariff: TARIFF,
        journal: { path: 'journal.db', timeoutReversalDelayMs: 50, resolutionRetryMs: 100 },
      }),
      { logger: silentLogger(), cwd: dir, gatewayUrlOverride: proxy.url, parkingClock: clock },
    );
    hosts.push(host);
    await shown(host, (s) => s.customer.screen === 'idle');
    await send(host, { type: 'START' });
    await send(host, { type: 'CHOOSE_DURATION', minutes: 60 });
    await send(host, { type: 'CONFIRM' });
    await shown(host, (s) => s.customer.screen === 'session');

    // The increment (1.50) is approved by the sandbox, its answer lost; no timeout reversal gets through.
    sandbox.scheduleFaults([{ kind: 'timeout-502', method: 'PATCH' }]);
    reversalsUnreachable = true;
    await send(host, { type: 'EXTEND', minutes: 30 });
    await shown(host, () => {
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

    // The gateway is back for everything; the customer leaves after 25 minutes (1.50, below what is held).
    clock.offsetMs += 25 * 60_000;
    await send(host, { type: 'END_SESSION' });
    reversalsUnreachable = false;
    const end = await shown(host, (s) => ['approved', 'error'].includes(s.customer.screen));
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
});
