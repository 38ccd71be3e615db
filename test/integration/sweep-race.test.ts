import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig, type ConfigInput } from '../../src/config/index.js';
import type { TerminalSnapshot, UserEvent } from '../../src/host/api.js';
import { createTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { silentLogger } from '../../src/log/index.js';
import { samplePayment } from '../../src/sandbox/sample-requests.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';

/*
 * Issue 11, money bug 2: the host's background sweep resolved journal entries older than
 * `timeoutReversalDelayMs + 5 × resolutionRetryMs` without asking whether their request was still waiting for its
 * answer. With a gateway that commits a sale and answers 3 s later and the crash suite's journal timings (200 ms /
 * 50 ms), the sweep sent a timeout void while the sale was in flight: the approved sale was voided, the customer was
 * told "Sorry", and the late answer threw JOURNAL_BAD_TRANSITION as an unhandled rejection that killed the terminal.
 * An entry waiting for its answer is never resolved by anyone else: recovery waits for the request's own timeout.
 */

/** Longer than the sweep's grace (200 + 5 × 50 ms) and its 1 s period several times over; within the 30 s timeout. */
const LATE_ANSWER_MS = 3_000;

let sandbox: Sandbox;
let dir: string;
let host: TerminalHost | undefined;
const rejections: unknown[] = [];
const onRejection = (reason: unknown): void => {
  rejections.push(reason);
};

beforeEach(async () => {
  sandbox = await startSandbox({ port: 0, lateResponseMs: LATE_ANSWER_MS });
  dir = mkdtempSync(join(tmpdir(), 'pt-sweep-race-'));
  rejections.length = 0;
  process.on('unhandledRejection', onRejection);
});

afterEach(async () => {
  await host?.close();
  host = undefined;
  process.off('unhandledRejection', onRejection);
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
});

async function startHost(overrides: ConfigInput = {}): Promise<TerminalHost> {
  const config = parseConfig({
    terminal: { model: 'kiosk' },
    reader: { sim: { presentDelayMs: 20 } },
    // The crash suite's timings: the sweep considers an entry after 200 + 5 × 50 ms.
    journal: { path: 'journal.db', timeoutReversalDelayMs: 200, resolutionRetryMs: 50 },
    offline: { keyFile: 'offline.key', policy: 'prefer-online', forwardConcurrency: 1 },
    ...overrides,
  });
  return createTerminalHost(config, { logger: silentLogger(), cwd: dir, gatewayUrlOverride: sandbox.url });
}

async function send(h: TerminalHost, event: UserEvent): Promise<void> {
  const r = await h.send(event);
  if (!r.ok) throw new Error(`${event.type}: ${r.error.code} ${r.error.message}`);
}

async function waitForScreen(h: TerminalHost, screens: string[]): Promise<TerminalSnapshot> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const r = await h.snapshot();
    if (r.ok && screens.includes(r.value.customer.screen)) return r.value;
    if (Date.now() > deadline)
      throw new Error(`screen is ${r.ok ? r.value.customer.screen : '?'}, wanted ${screens.join('|')}`);
    await new Promise((res) => setTimeout(res, 20));
  }
}

/**
 * A kiosk ticket entered 95 minutes ago in the terminal's default time zone: a fee the sandbox approves. `serial`: one
 * per car (a ticket paid once is not charged again).
 */
function ticket(serial: string): string {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone: 'Europe/London',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(new Date(Date.now() - 95 * 60_000));
  const g = (t: string): string => parts.find((x) => x.type === t)?.value ?? '00';
  return `${g('year')}${g('month')}${g('day')}${g('hour')}${g('minute')}${serial}`;
}

async function kioskSale(h: TerminalHost, serial = '01'): Promise<TerminalSnapshot> {
  await waitForScreen(h, ['idle']);
  await send(h, { type: 'START' });
  await send(h, { type: 'ENTER_TICKET', ticket: ticket(serial) });
  await waitForScreen(h, ['confirm']);
  await send(h, { type: 'CONFIRM' });
  return waitForScreen(h, ['approved', 'declined', 'error']);
}

describe('the background sweep never resolves a request still waiting for its answer', () => {
  it('a sale the gateway commits and answers 3 s later stands, the customer is told approved, nothing is voided', async () => {
    host = await startHost();
    sandbox.scheduleFaults([{ kind: 'late-response', path: '/pts/v2/payments', method: 'POST' }]);
    const shown = await kioskSale(host);
    await host.settle(10_000);

    expect(shown.customer.screen).toBe('approved');
    const sales = sandbox.ledger().transactions.filter((t) => t.kind === 'sale');
    expect(sales).toHaveLength(1);
    expect(sales[0]).toMatchObject({ voided: false, status: 'AUTHORIZED' });
    expect(sales[0]!.amounts.captured).toBe(shown.customer.amount?.minor);
    expect(sandbox.ledger().transactions.filter((t) => t.kind === 'timeout-void')).toEqual([]);
    expect(sandbox.consistency({ requireResolved: true }).problems).toEqual([]);
    expect(host.journal.inFlight()).toEqual([]);

    // The terminal is alive: the next customer (another ticket) is served, and no rejection went unhandled.
    await send(host, { type: 'DONE' });
    expect((await kioskSale(host, '02')).customer.screen).toBe('approved');
    expect(rejections).toEqual([]);
  }, 60_000);

  it('a stored payment whose forward is answered 3 s later is forwarded once and stands, nothing is voided', async () => {
    host = await startHost();
    const transactionId = `SWEEP${Date.now()}`;
    host.offline.store({
      transactionId,
      service: 'sale',
      comments: 'Parking Sale',
      method: 'POST',
      path: '/pts/v2/payments',
      body: Buffer.from(
        JSON.stringify(samplePayment({ amountMinor: 1_000, currency: 'GBP', transactionId, sale: true })),
      ),
      amountMinor: 1_000,
      currency: 'GBP',
      entryMode: 'contactless',
      fingerprint: `card-${transactionId}`,
      maskedPan: '411111******1111',
    });
    sandbox.scheduleFaults([{ kind: 'late-response', path: '/pts/v2/payments', method: 'POST' }]);
    const pin = host.generatedOperatorPin;
    if (pin === undefined) throw new Error('no generated operator PIN');
    const flushed = await host.operator({ pin, action: { type: 'flush-queue' } });
    await host.settle(10_000);

    expect(flushed).toMatchObject({ ok: true, value: { type: 'flush-queue', forwarded: 1, remaining: 0 } });
    const sales = sandbox.ledger().transactions.filter((t) => t.kind === 'sale');
    expect(sales).toHaveLength(1);
    expect(sales[0]).toMatchObject({ transactionId, voided: false, status: 'AUTHORIZED' });
    expect(sandbox.ledger().transactions.filter((t) => t.kind === 'timeout-void')).toEqual([]);
    expect(sandbox.consistency({ requireResolved: true }).problems).toEqual([]);
    expect(host.offline.status().depth).toBe(0);
    expect(host.journal.inFlight()).toEqual([]);
    expect(rejections).toEqual([]);
  }, 60_000);
});
