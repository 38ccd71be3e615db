import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig, type Config } from '../../src/config/index.js';
import { send, waitFor } from '../../src/host/drive.js';
import { HostFleetTerminal } from '../../src/host/fleet-terminal.js';
import { startupProgress } from '../../src/host/kiosk-service.js';
import { openTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { openJournal } from '../../src/journal/index.js';
import { silentLogger } from '../../src/log/index.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { closedPort, leaveSaleInFlight } from './down-gateway.js';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  while (open.length > 0) await open.pop()?.close();
});

/**
 * A terminal whose last run left a sale sent and unanswered in its journal, opened against a gateway that is down:
 * its start stays in recovery (rule 3) until the gateway answers.
 */
async function terminalLeftInFlight(): Promise<{
  host: TerminalHost;
  port: number;
  cwd: string;
  config: Config;
}> {
  const cwd = mkdtempSync(join(tmpdir(), 'pt-start-recovery-'));
  const config = parseConfig({
    reader: { sim: { presentDelayMs: 50 } },
    journal: { resolutionRetryMs: 50 },
  });
  await leaveSaleInFlight(join(cwd, config.journal.path), 'LEFT-IN-FLIGHT-1');
  const port = await closedPort();
  const host = await openTerminalHost(config, {
    logger: silentLogger(),
    cwd,
    gatewayUrlOverride: `http://127.0.0.1:${port}`,
  });
  open.push(host);
  return { host, port, cwd, config };
}

describe('the start of a terminal that must recover its journal first', () => {
  it('shows the customer that it checks earlier payments, speaks it, and takes no card until the gateway answers', async () => {
    const { host, port } = await terminalLeftInFlight();
    const started = host.begin();
    const recovering = await waitFor(host, ['recovering'], 10_000);
    expect(recovering.customer.message).toBeTruthy();

    // A blind customer turns speech on (the `*` key): the screen is said, the repeat key says it again.
    const accessible = await send(host, { type: 'SET_ACCESSIBILITY', on: true });
    expect(accessible.customer.screen).toBe('recovering');
    expect(accessible.customer.speech?.text).toContain(recovering.customer.message);
    expect((await send(host, { type: 'SPEECH', command: 'repeat' })).customer.screen).toBe('recovering');
    const arabic = await send(host, { type: 'SET_LANGUAGE', locale: 'ar_AE' });
    expect(arabic.customer.language?.direction).toBe('rtl');

    // No card: every payment event is refused, in the customer's language.
    const start = await host.send({ type: 'START' });
    expect(start.ok ? 'ok' : start.error.code).toBe('NOT_READY');
    expect(start.ok ? undefined : start.error.customerText).toBeTruthy();

    // The operator can sign in and look; nothing that moves money runs before the recovery.
    const pin = host.generatedOperatorPin ?? '';
    const status = await host.operator({ pin, action: { type: 'status' } });
    expect(status.ok && status.value.type === 'status' && status.value.status.recovery).toMatchObject({
      running: true,
      inFlight: 1,
    });
    const refund = await host.operator({
      pin,
      action: { type: 'refund', transactionId: 'LEFT-IN-FLIGHT-1' },
    });
    expect(refund.ok ? 'ok' : refund.error.code).toBe('NOT_READY');
    const flush = await host.operator({ pin, action: { type: 'flush-queue' } });
    expect(flush.ok ? 'ok' : flush.error.code).toBe('NOT_READY');
    // Nor the release of a tap-and-go stay: its reversal waits for recovery like any other request.
    const release = await host.operator({ pin, action: { type: 'hold-release', holdId: 'H-1' } });
    expect(release.ok ? 'ok' : release.error.code).toBe('NOT_READY');
    expect(host.journal.inFlight().map((e) => e.transactionId)).toContain('LEFT-IN-FLIGHT-1');

    // Recovery tries while the gateway is away: a void that never left, journaled as such.
    const entryId = host.journal.findByTransactionId('LEFT-IN-FLIGHT-1')!.id;
    const notSent = (): number =>
      host.journal.resolutionAttempts(entryId).filter((a) => a.resolution === 'not-sent').length;
    await expect.poll(notSent, { timeout: 10_000 }).toBeGreaterThan(0);

    // The gateway comes back: the sale is voided (or found never taken), then the terminal takes cards, and the
    // customer who waited keeps speech and language.
    const sandbox = await startSandbox({ port, logger: silentLogger() });
    open.unshift(sandbox);
    await started;
    const idle = await waitFor(host, ['idle'], 10_000);
    expect(idle.customer.accessibility).toBe(true);
    expect(idle.customer.language?.current).toBe('ar_AE');
    expect(host.journal.inFlight()).toEqual([]);
    expect(host.journal.findByTransactionId('LEFT-IN-FLIGHT-1')?.state).toBe('resolved');
    expect((await host.send({ type: 'START' })).ok).toBe(true);

    // The operator's list: the sale and the void that resolved it, not the attempts that never left meanwhile.
    expect(notSent()).toBeGreaterThan(0);
    const listed = await host.operator({ pin, action: { type: 'transactions' } });
    if (!listed.ok || listed.value.type !== 'transactions') throw new Error('no transactions');
    expect(listed.value.transactions.map((t) => [t.service, t.state])).toEqual([
      ['timeout-void', expect.stringMatching(/^(approved|rejected)/) as string],
      ['sale', expect.stringMatching(/^resolved/) as string],
    ]);
  });

  it('is read by the fleet as not in service while it recovers, and forwards nothing before', async () => {
    const { host, port, cwd } = await terminalLeftInFlight();
    const fleet = new HostFleetTerminal(host, {
      configFile: undefined,
      cwd,
      logger: silentLogger(),
      restart: () => undefined,
    });
    open.push({ close: () => Promise.resolve(fleet.close()) });
    const events: unknown[] = [];
    fleet.onEvent((e) => events.push(e));
    const started = host.begin();
    await waitFor(host, ['recovering'], 10_000);
    expect(fleet.health()).toMatchObject({
      inService: false,
      outOfService: 'starting: resolving 1 journal entry left in flight before the first card',
      journal: { inFlight: expect.any(Number) as number },
    });
    expect(fleet.idle()).toMatchObject({ idle: false });
    expect(await fleet.execute('flush-queue', {}, { id: 'C1' })).toMatchObject({ ok: false, code: 'BUSY' });
    // A stay is released only once the start has resolved what was left in flight: nothing looked up, nothing audited.
    expect(await fleet.execute('release-stay', { holdId: 'H1' }, { id: 'C2' })).toMatchObject({
      ok: false,
      code: 'BUSY',
    });
    expect(host.audit.list({}).filter((r) => r.action === 'hold-release')).toEqual([]);

    const sandbox = await startSandbox({ port, logger: silentLogger() });
    open.unshift(sandbox);
    await started;
    expect(fleet.health()).toMatchObject({ inService: true, journal: { inFlight: 0 } });
    expect(events).toContainEqual({ type: 'in-service' });
    expect(await fleet.execute('flush-queue', {}, { id: 'C1' })).toMatchObject({ ok: true });
  });

  it('tells the service manager why it is not ready, and that it is alive, until the start is over', async () => {
    const { host, port } = await terminalLeftInFlight();
    const told: string[][] = [];
    const notifier = {
      active: true,
      notify: (...lines: string[]) => {
        told.push(lines);
        return Promise.resolve();
      },
    };
    const started = host.begin();
    await waitFor(host, ['recovering'], 10_000);
    const progress = startupProgress(host, { notifier, logger: silentLogger(), everyMs: 20 });
    await expect.poll(() => told.length).toBeGreaterThanOrEqual(3);
    expect(told[0]).toEqual([
      'EXTEND_TIMEOUT_USEC=60000',
      expect.stringMatching(/^STATUS=resolving 1 journal entry left in flight before taking cards/) as string,
    ]);
    expect(told.flat().some((l) => l.startsWith('READY=1'))).toBe(false);

    const sandbox = await startSandbox({ port, logger: silentLogger() });
    open.unshift(sandbox);
    await started;
    await progress.stop(false);
    const count = told.length;
    await new Promise((r) => setTimeout(r, 60));
    expect(told.length).toBe(count);
    expect(told.flat()).not.toContain('STOPPING=1');
  });

  it('closes a terminal opened and never started (stopped before its start), its entry left for the next start', async () => {
    const { host, cwd, config } = await terminalLeftInFlight();
    expect(await host.snapshot()).toMatchObject({ ok: true, value: { customer: { screen: 'starting' } } });
    await host.close();
    await host.begin();
    const journal = openJournal(join(cwd, config.journal.path));
    try {
      expect(journal.inFlight().map((e) => e.transactionId)).toEqual(['LEFT-IN-FLIGHT-1']);
      expect(journal.list({ limit: 10 })).toHaveLength(1);
    } finally {
      journal.close();
    }
  });

  it('waits longer after each attempt the down gateway did not take, up to 12 times journal.resolutionRetryMs', async () => {
    const { host } = await terminalLeftInFlight();
    const started = host.begin();
    const sale = host.journal.findByTransactionId('LEFT-IN-FLIGHT-1')!;
    const deadline = Date.now() + 10_000;
    while (host.journal.resolutionAttempts(sale.id).length < 6 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    const at = host.journal.resolutionAttempts(sale.id).map((a) => Date.parse(a.createdAt));
    expect(at.length).toBeGreaterThanOrEqual(6);
    // After the n-th attempt the wait is between half and all of min(50 × 2^(n−1), 600) ms (jittered): at least
    // 25, 50, 100, 200, 300 ms — a fixed 50 ms would have sent more than twenty attempts by now.
    const gaps = at.slice(1, 6).map((t, i) => t - at[i]!);
    expect(gaps.map((g, i) => g >= Math.min(50 * 2 ** i, 600) / 2 - 2)).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    await host.close();
    await started;
  });

  it('stops a recovery that waits for the gateway when the terminal is closed, and leaves the entry for the next start', async () => {
    const { host, cwd, config } = await terminalLeftInFlight();
    const started = host.begin();
    await waitFor(host, ['recovering'], 10_000);
    await host.close();
    await started;
    const journal = openJournal(join(cwd, config.journal.path));
    try {
      expect(journal.inFlight().map((e) => e.transactionId)).toEqual(['LEFT-IN-FLIGHT-1']);
    } finally {
      journal.close();
    }
  });
});
