/**
 * The terminal as a child process for the crash tests: builds the same TerminalHost `parking-terminal start` builds
 * (configuration, journal, recovery, offline queue, simulated reader, a JSON-lines log file through the redacting
 * logger) against a standalone sandbox, then either plays one flow (`run`; PARKING_TERMINAL_CRASH_AT makes it SIGKILL
 * itself at a journal step) or only starts — which runs recovery to completion before the terminal is ready, and
 * forwards what the offline queue holds — and stops once nothing is in flight (`recover`; a failpoint may kill it
 * there too).
 *
 * Flows (FLOW):
 * - `sale`: kiosk ticket, CONFIRM, sale.
 * - `meter`: START, CHOOSE_DURATION 60, CONFIRM (pre-authorization), the parking clock moves 25 minutes,
 *   END_SESSION (capture less than the authorization).
 * - `meter-extend`: as `meter` with EXTEND 60 during the session (incremental authorization), 70 minutes of stay.
 * - `refund`: a kiosk sale, then the operator refunds it in full.
 * - `offline`: two kiosk sales while the gateway is unreachable (URL given is a closed port), stored for forwarding.
 * - `queued`: three chip payments put straight into the offline queue (as `offline` would store them), so that the
 *   host's own forwarding at the next start can be killed (`offline.forwarded#N`) whatever the store path does.
 *
 * Usage: node --import tsx test/crash/driver.ts run|recover FLOW DIR GATEWAY_URL
 * Prints `{"phase":"flow"}` when the flow starts, then one JSON line: {"screens": [...]} after `run`,
 * {"inFlight", "orphanWatch", "offlineDepth"} after `recover`.
 */
import { join } from 'node:path';
import { parseConfig } from '../../src/config/index.js';
import type { UserEvent } from '../../src/host/api.js';
import { createTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { createLogger } from '../../src/log/index.js';
import { samplePayment } from '../../src/sandbox/sample-requests.js';

export const FLOWS = ['sale', 'meter', 'meter-extend', 'refund', 'offline', 'queued'] as const;
export type Flow = (typeof FLOWS)[number];

const [mode, flow, dir, url] = process.argv.slice(2) as [string, Flow, string, string];
if ((mode !== 'run' && mode !== 'recover') || !FLOWS.includes(flow) || !dir || !url) {
  process.stderr.write(`usage: driver.ts run|recover ${FLOWS.join('|')} DIR GATEWAY_URL\n`);
  process.exit(2);
}

const MODEL = {
  sale: 'kiosk',
  meter: 'meter',
  'meter-extend': 'meter',
  refund: 'kiosk',
  offline: 'kiosk',
  queued: 'kiosk',
} as const;

const config = parseConfig({
  terminal: { model: MODEL[flow] },
  reader: { sim: { presentDelayMs: 20 } },
  // Short enough for a test, and still "after the original": the sandbox records the delay it saw.
  journal: { path: 'journal.db', timeoutReversalDelayMs: 200, resolutionRetryMs: 50 },
  // One forward at a time: a kill at the N-th answer leaves exactly one forward in doubt (a deterministic picture).
  offline: { keyFile: 'offline.key', policy: 'prefer-online', forwardConcurrency: 1 },
  // Every start writes its own log (a SIGKILL leaves the file as it was); the card-data scan reads them all.
  log: { level: 'debug', file: `terminal-${mode}-${process.pid}.log` },
});
const logger = createLogger({
  level: config.log.level,
  destination: join(dir, config.log.file ?? 'terminal.log'),
});

/** The parking clock of the meter: real time plus what the flow advances it by. */
let parkedMs = 0;
const parkingClock = { now: (): number => Date.now() + parkedMs };

async function waitFor(host: TerminalHost, screens: string[], timeoutMs = 20_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await host.snapshot();
    const screen = r.ok ? r.value.customer.screen : '?';
    if (screens.includes(screen)) return screen;
    if (Date.now() > deadline) throw new Error(`screen is ${screen}, wanted ${screens.join('|')}`);
    await new Promise((res) => setTimeout(res, 10));
  }
}

async function send(host: TerminalHost, event: UserEvent): Promise<void> {
  const r = await host.send(event);
  if (!r.ok) throw new Error(`${event.type}: ${r.error.code} ${r.error.message}`);
}

/** A ticket entered `minutesAgo` in the terminal's time zone: a fee in whole 0.50 steps, which the sandbox approves. */
function ticket(minutesAgo: number): string {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone: config.terminal.timezone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(new Date(Date.now() - minutesAgo * 60_000));
  const g = (t: string): string => parts.find((x) => x.type === t)?.value ?? '00';
  return `${g('year')}${g('month')}${g('day')}${g('hour')}${g('minute')}01`;
}

const END = ['approved', 'declined', 'error'];

async function kioskSale(host: TerminalHost): Promise<string> {
  await waitFor(host, ['idle']);
  await send(host, { type: 'START' });
  await send(host, { type: 'ENTER_TICKET', ticket: ticket(95) });
  await waitFor(host, ['confirm']);
  await send(host, { type: 'CONFIRM' });
  return waitFor(host, END);
}

async function meterSession(host: TerminalHost, extend: boolean): Promise<string[]> {
  const screens: string[] = [];
  await waitFor(host, ['idle']);
  await send(host, { type: 'START' });
  await send(host, { type: 'CHOOSE_DURATION', minutes: 60 });
  await waitFor(host, ['confirm']);
  await send(host, { type: 'CONFIRM' });
  screens.push(await waitFor(host, ['session', ...END]));
  if (screens.at(-1) !== 'session') return screens;
  if (extend) {
    // The tariff (1.50 per 30 minutes) makes the extension an incremental authorization of 3.00.
    await send(host, { type: 'EXTEND', minutes: 60 });
    // The machine is in `extending`/`incrementing` (a processing screen) as soon as send returns.
    screens.push(await waitFor(host, ['session', ...END]));
    if (screens.at(-1) !== 'session') return screens;
  }
  parkedMs = (extend ? 70 : 25) * 60_000;
  await send(host, { type: 'END_SESSION' });
  screens.push(await waitFor(host, END));
  return screens;
}

async function refund(host: TerminalHost): Promise<string[]> {
  const screens = [await kioskSale(host)];
  const sale = host.journal.list({ limit: 100 }).find((e) => e.service === 'sale' && e.state === 'approved');
  if (!sale?.transactionId) return screens;
  const pin = host.generatedOperatorPin;
  if (pin === undefined) throw new Error('no generated operator PIN');
  const r = await host.operator({ pin, action: { type: 'refund', transactionId: sale.transactionId } });
  if (!r.ok) throw new Error(`refund: ${r.error.code} ${r.error.message}`);
  screens.push(`refund:${r.value.type === 'refund' ? r.value.outcome : r.value.type}`);
  return screens;
}

async function offlineSales(host: TerminalHost): Promise<string[]> {
  const screens: string[] = [];
  for (let i = 0; i < 2; i++) {
    screens.push(await kioskSale(host));
    await send(host, { type: 'DONE' });
  }
  return screens;
}

/** Stored the way the host stores a chip sale it could not send: the exact request, encrypted, keyed by its id. */
function queuePayments(host: TerminalHost): string[] {
  const stored: string[] = [];
  for (let i = 0; i < 3; i++) {
    const transactionId = `Q${process.pid}T${Date.now()}N${i}`;
    const amountMinor = 1_000 + 50 * i;
    host.offline.store({
      transactionId,
      service: 'sale',
      comments: 'Parking Sale',
      method: 'POST',
      path: '/pts/v2/payments',
      body: Buffer.from(
        JSON.stringify(samplePayment({ amountMinor, currency: 'GBP', transactionId, sale: true })),
      ),
      amountMinor,
      currency: 'GBP',
      entryMode: 'contactless',
      maskedPan: '411111******1111',
    });
    stored.push('stored');
  }
  return stored;
}

/** Open meter authorizations the host will reverse when their capture window ends (their timers are private). */
function orphanWatch(host: TerminalHost): string[] {
  const timers = (host as unknown as { holdTimers: Map<string, unknown> }).holdTimers;
  return [...timers.keys()].filter((k) => k.startsWith('orphan:')).map((k) => k.slice('orphan:'.length));
}

const host = await createTerminalHost(config, {
  logger,
  cwd: dir,
  gatewayUrlOverride: url,
  parkingClock,
});
try {
  if (mode === 'recover') {
    // createTerminalHost returns once recovery has resolved every entry left in flight (DESIGN.md rule 3); what
    // the offline queue holds is being forwarded, and answers lost there are resolved in the background.
    await host.settle(30_000);
    process.stdout.write(
      `${JSON.stringify({
        inFlight: host.journal.counts().inFlight,
        orphanWatch: orphanWatch(host),
        offlineDepth: host.offline.status().depth,
      })}\n`,
    );
  } else {
    process.stdout.write(`${JSON.stringify({ phase: 'flow' })}\n`);
    let screens: string[];
    switch (flow) {
      case 'sale':
        screens = [await kioskSale(host)];
        break;
      case 'meter':
        screens = await meterSession(host, false);
        break;
      case 'meter-extend':
        screens = await meterSession(host, true);
        break;
      case 'refund':
        screens = await refund(host);
        break;
      case 'offline':
        screens = await offlineSales(host);
        break;
      case 'queued':
        screens = queuePayments(host);
        break;
    }
    await host.settle(30_000);
    process.stdout.write(`${JSON.stringify({ screens })}\n`);
  }
} finally {
  await host.close();
  await new Promise<void>((done) => logger.flush(() => done()));
}
