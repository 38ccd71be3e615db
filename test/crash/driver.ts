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
 * - `void`: a kiosk sale, then the operator voids it (`VOID Payment`).
 * - `meter-void`: as `meter`, then the operator voids the capture (`VOID Capture`); the host must then reverse the
 *   authorization hold, so that the customer ends with nothing charged and nothing held.
 * - `offline`: two kiosk sales while the gateway is unreachable (URL given is a closed port), stored for forwarding,
 *   then one forwarding run of the host, which finds the gateway still down and claims nothing.
 * - `queued`: three chip payments put straight into the offline queue (as `offline` would store them), so that the
 *   host's own forwarding at the next start can be killed (`offline.forwarded#N`) whatever the store path does.
 * - `gate`: tap-and-go (hold 5.98): the card taps in (account verification, pre-authorization of the hold), the
 *   parking clock moves 140 minutes, the same card taps out: the fee of 7.50 exceeds the hold, so an incremental
 *   authorization of 1.52, then the capture of 7.50.
 * - `gate-phone`: tap-and-go with pay by phone at the exit: the card taps in, the parking clock moves 45 minutes, the
 *   card taps out, the customer chooses PAY_BY_LINK and pays the link of 3.00 on the sandbox's hosted page (the
 *   sandbox's signed notification reaches the terminal's listener, on NOTIFICATION_PORT), and the hold is reversed.
 * Every start of `recover` of a gate flow then has the same card tap out again, 5 minutes after the first exit (the
 * customer whose gate did not open), and pays with the card whatever fee it is offered: a stay paid (by card or by
 * phone) must open as paid, charged nothing more; one whose exit never charged it is charged once.
 *
 * What the customer was told (each result screen with its amount) and what the operator was told (each refund or
 * void outcome) is appended to DIR/told.jsonl the moment it is shown (test/crash/told.ts): the judge holds the
 * gateway's ledger against it.
 *
 * Usage: node --import tsx test/crash/driver.ts run|recover FLOW DIR GATEWAY_URL [NOTIFICATION_PORT] (the harness runs
 * the same module bundled: test/crash/harness.ts, driverArgs; the port is where the sandbox sends its payment-link
 * notifications, for `gate-phone`).
 * Prints `{"phase":"start"}` before the terminal starts (recovery and forwarding run from there), `{"phase":"flow"}`
 * when the flow starts, then one JSON line: {"screens": [...]} after `run`, {"inFlight", "orphanWatch",
 * "offlineDepth"} after `recover`.
 */
import { join } from 'node:path';
import { parseConfig } from '../../src/config/index.js';
import type { TerminalSnapshot, UserEvent } from '../../src/host/api.js';
import { payOnHostedPage } from '../../src/host/link-simulation.js';
import { createTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { createLogger } from '../../src/log/index.js';
import { samplePayment } from '../../src/sandbox/sample-requests.js';
import { FLOW_NAMES, type Flow } from './flow-names.js';
import { tell } from './told.js';

const FLOWS = FLOW_NAMES;

const [mode, flow, dir, url, portArg] = process.argv.slice(2) as [string, Flow, string, string, string?];
const notificationPort = portArg === undefined ? undefined : Number(portArg);
if (
  (mode !== 'run' && mode !== 'recover') ||
  !FLOWS.includes(flow) ||
  !dir ||
  !url ||
  (flow === 'gate-phone' && !Number.isInteger(notificationPort))
) {
  process.stderr.write(
    `usage: driver.ts run|recover ${FLOWS.join('|')} DIR GATEWAY_URL [NOTIFICATION_PORT]\n`,
  );
  process.exit(2);
}

const MODEL = {
  sale: 'kiosk',
  meter: 'meter',
  'meter-extend': 'meter',
  refund: 'kiosk',
  void: 'kiosk',
  'meter-void': 'meter',
  offline: 'kiosk',
  queued: 'kiosk',
  gate: 'tap-and-go',
  'gate-phone': 'tap-and-go',
} as const;

/** The gate's hold, and the stays of its flows (the tariff: 1.50 per 30 minutes begun, after 10 minutes of grace). */
const GATE_HOLD_MINOR = 598;
/**
 * 140 minutes and the moments the flow takes (141 minutes begun) cost 7.50: above the hold, an incremental
 * authorization of 1.52 first (one of 3.02, for 9.00, is one the sandbox declines).
 */
const GATE_STAY_MINUTES = 140;
/** 45 minutes (46 begun) cost 3.00, paid by phone. */
const GATE_PHONE_STAY_MINUTES = 45;
/** After a restart the card taps out again 5 minutes later: the fee is the same (7.50, 3.00). */
const GATE_RETAP_MINUTES = 5;

const config = parseConfig({
  terminal: { model: MODEL[flow] },
  reader: { sim: { presentDelayMs: 20 } },
  // meter-extend plays a fixed-time market (the chosen duration held, extended by an incremental authorization);
  // the other meter flows hold the price of the maximum stay (spec 001).
  ...(flow === 'meter-extend' ? { tariff: { meterAuthorization: 'chosen' as const } } : {}),
  ...(flow === 'gate' || flow === 'gate-phone' ? { tariff: { tapAndGoHoldMinor: GATE_HOLD_MINOR } } : {}),
  // Pay by phone at the gate is offered only while the terminal receives the link-paid notifications: every start
  // listens on the port the sandbox sends them to.
  ...(flow === 'gate-phone'
    ? {
        links: {
          payByPhone: { models: ['tap-and-go' as const] },
          notifications: { listen: { port: notificationPort } },
        },
      }
    : {}),
  // Short enough for a test, and still "after the original": the sandbox records the delay it saw. The host's sweep
  // (every resolutionRetryMs, at least once a second) forwards what the queue holds: in a run against the down
  // gateway it would try a stored payment at a moment of its own, and a kill meant for another step (the second
  // payment stored) could find that forward in doubt, which the next start must void. Kept out of those runs; the
  // offline flow tries its forward at one moment of its own instead.
  journal: {
    path: 'journal.db',
    timeoutReversalDelayMs: 200,
    resolutionRetryMs: mode === 'run' && (flow === 'offline' || flow === 'queued') ? 3_600_000 : 50,
  },
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

async function waitForSnapshot(
  host: TerminalHost,
  screens: string[],
  timeoutMs = 20_000,
): Promise<TerminalSnapshot> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await host.snapshot();
    const screen = r.ok ? r.value.customer.screen : '?';
    if (r.ok && screens.includes(screen)) return r.value;
    if (Date.now() > deadline) throw new Error(`screen is ${screen}, wanted ${screens.join('|')}`);
    await new Promise((res) => setTimeout(res, 10));
  }
}

async function waitFor(host: TerminalHost, screens: string[], timeoutMs = 20_000): Promise<string> {
  return (await waitForSnapshot(host, screens, timeoutMs)).customer.screen;
}

async function send(host: TerminalHost, event: UserEvent): Promise<void> {
  const r = await host.send(event);
  if (!r.ok) throw new Error(`${event.type}: ${r.error.code} ${r.error.message}`);
}

/** Tickets this process has made: each customer brings a ticket of their own. */
let ticketsMade = 0;

/**
 * A ticket entered `minutesAgo` in the terminal's time zone: a fee in whole 0.50 steps, which the sandbox approves.
 * Its serial (the process and a count) is its own, as every car's ticket is: a ticket paid before is "paid already",
 * and a run's processes sell several within one minute.
 */
function ticket(minutesAgo: number): string {
  ticketsMade += 1;
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
  const serial = (process.pid % 1_000_000) * 100 + (ticketsMade % 100);
  return `${g('year')}${g('month')}${g('day')}${g('hour')}${g('minute')}${String(serial).padStart(8, '0')}`;
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

/** The gate's card: an EMV card the simulator presents at each tap (its PAN is among the card-data scan's). */
const GATE_CARD = 'n2-contact';

/**
 * A car through the tap-and-go gate: the card taps in (verification, then the hold: the `session` screen), the parking
 * clock moves the flow's stay, the same card taps out. By card, the exit charges the fee (increment, capture); by phone,
 * the customer chooses PAY_BY_LINK at the exit, pays the link on the sandbox's hosted page, and the hold is released.
 */
async function gateStay(host: TerminalHost, byPhone: boolean): Promise<string[]> {
  const screens: string[] = [];
  host.simulator!.setCard(GATE_CARD);
  await waitFor(host, ['idle']);
  await send(host, { type: 'TAP_ENTRY' });
  screens.push(await waitFor(host, ['session', ...END]));
  if (screens.at(-1) !== 'session') return screens;
  await send(host, { type: 'DONE' });
  await waitFor(host, ['idle']);
  parkedMs = (byPhone ? GATE_PHONE_STAY_MINUTES : GATE_STAY_MINUTES) * 60_000;
  await send(host, { type: 'TAP_EXIT' });
  if (!byPhone) {
    screens.push(await waitFor(host, END));
    return screens;
  }
  screens.push(await waitFor(host, ['confirm', ...END]));
  if (screens.at(-1) !== 'confirm') return screens;
  await send(host, { type: 'PAY_BY_LINK' });
  const shown = await waitForSnapshot(host, ['pay-by-phone', 'confirm', ...END]);
  screens.push(shown.customer.screen);
  const linkUrl = shown.customer.payByPhone?.url;
  if (shown.customer.screen !== 'pay-by-phone' || linkUrl === undefined) return screens;
  // The customer's phone pays on the hosted page; the sandbox's notification tells the terminal.
  const page = await payOnHostedPage(linkUrl);
  if (page.status !== 200) throw new Error(`the hosted page answered ${page.status}`);
  screens.push(await waitFor(host, END));
  return screens;
}

/**
 * The customer of a gate flow whose gate did not open taps the same card out again after a restart, and pays with it
 * whatever fee it is offered. What the exit shows is told as any result (watchCustomer).
 */
async function gateRetap(host: TerminalHost, byPhone: boolean): Promise<string[]> {
  const screens: string[] = [];
  host.simulator!.setCard(GATE_CARD);
  await waitFor(host, ['idle']);
  parkedMs = ((byPhone ? GATE_PHONE_STAY_MINUTES : GATE_STAY_MINUTES) + GATE_RETAP_MINUTES) * 60_000;
  await send(host, { type: 'TAP_EXIT' });
  screens.push(await waitFor(host, ['confirm', ...END]));
  if (screens.at(-1) === 'confirm') {
    await send(host, { type: 'CONFIRM' });
    screens.push(await waitFor(host, END));
  }
  // Back to idle (a result screen also times out there): whatever the result, nothing waits on it.
  await host.send({ type: 'DONE' });
  return screens;
}

/** Services whose approval charges the customer: the charge a result screen is about is among them. */
const CHARGES = new Set(['sale', 'capture']);

/**
 * The operator's refund or void of the customer's last charge, through the operator API (the PIN of this start),
 * recorded as the operator was told it.
 */
async function operatorFollowOn(host: TerminalHost, action: 'refund' | 'void'): Promise<string> {
  const pin = host.generatedOperatorPin;
  if (pin === undefined) throw new Error('no generated operator PIN');
  const list = await host.operator({ pin, action: { type: 'transactions', limit: 100 } });
  if (!list.ok) throw new Error(`transactions: ${list.error.code} ${list.error.message}`);
  if (list.value.type !== 'transactions') throw new Error(`transactions answered ${list.value.type}`);
  const charge = list.value.transactions.find((t) => CHARGES.has(t.service) && t.allowed.includes(action));
  if (!charge) return `${action}:nothing-to-${action}`;
  const r = await host.operator({
    pin,
    action:
      action === 'refund'
        ? { type: 'refund', transactionId: charge.transactionId }
        : { type: 'void', transactionId: charge.transactionId },
  });
  if (!r.ok) throw new Error(`${action}: ${r.error.code} ${r.error.message}`);
  if (r.value.type !== action) throw new Error(`${action} answered ${r.value.type}`);
  tell(dir, {
    who: 'operator',
    action,
    target: charge.transactionId,
    outcome: r.value.outcome,
    transactionId: r.value.transactionId,
    ...(charge.amount ? { amountMinor: charge.amount.minor } : {}),
  });
  return `${action}:${r.value.outcome}`;
}

async function offlineSales(host: TerminalHost): Promise<string[]> {
  const screens: string[] = [];
  for (let i = 0; i < 2; i++) {
    screens.push(await kioskSale(host));
    await send(host, { type: 'DONE' });
  }
  // The host's forwarding tried while the gateway is still down, as its sweep does: no connection opens, so nothing
  // is claimed, and both payments stay stored (none is left in doubt for a kill to find).
  await host.startForwarding();
  return screens;
}

/**
 * Stored the way the host stores a chip sale it could not send: the exact request, encrypted, keyed by its id. Each
 * stands for a customer told "approved" offline, and is recorded so.
 */
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
      fingerprint: `card-${transactionId}`,
      maskedPan: '411111******1111',
    });
    tell(dir, {
      who: 'customer',
      screen: 'approved',
      amountMinor,
      currency: 'GBP',
      transactionIds: [transactionId],
    });
    stored.push('stored');
  }
  return stored;
}

/**
 * Open authorizations the host watches: those it reverses when their capture window ends (a meter's), and the
 * tap-and-go holds of cars inside, which the hold watch reverses when the maximum stay ends.
 */
function orphanWatch(host: TerminalHost): string[] {
  const holds = host.holds.listOpen(100).map(({ hold }) => hold.transactionId);
  return [...authorizationWatch(host), ...holds];
}

/**
 * The host's public `watchedAuthorizations()` when it has one; otherwise its private timers (named
 * `orphan:<transactionId>`).
 */
function authorizationWatch(host: TerminalHost): string[] {
  const watched = (host as unknown as { watchedAuthorizations?: () => string[] }).watchedAuthorizations;
  if (typeof watched === 'function') return watched.call(host);
  const timers = (host as unknown as { holdTimers?: Map<string, unknown> }).holdTimers;
  if (!timers) return [];
  return [...timers.keys()].filter((k) => k.startsWith('orphan:')).map((k) => k.slice('orphan:'.length));
}

/**
 * Records every result screen the customer is shown, with its amount and the transactionIds the terminal sent since
 * the payment began (journal entries newer than `since`), synchronously with the snapshot that shows it.
 */
function watchCustomer(host: TerminalHost): void {
  let last = '';
  let since = latestEntryId(host);
  host.subscribe((snap) => {
    const screen = snap.customer.screen;
    if (screen === last) return;
    last = screen;
    if (screen === 'idle') since = latestEntryId(host);
    if (screen !== 'approved' && screen !== 'declined' && screen !== 'error') return;
    const amount = snap.customer.amount;
    const reason = reasonOf(host);
    // A tap-and-go exit that found its stay being settled by someone else (its payment by phone in doubt after a
    // restart, a reversal in flight) sent nothing and charged nothing: no payment's result, the customer sent to the
    // operator.
    if (reason === 'HOLD_BEING_SETTLED') return;
    tell(dir, {
      who: 'customer',
      screen,
      ...(amount ? { amountMinor: amount.minor, currency: amount.currency } : {}),
      transactionIds: transactionIdsSince(host, since),
      ...(reason === 'PAID_BY_LINK' || reason === 'ALREADY_PAID' ? { paidBefore: reason } : {}),
    });
  });
}

/** The reason the machine gives for what it shows (a tap-and-go exit paid by phone, or paid already). */
function reasonOf(host: TerminalHost): unknown {
  return (host.actor?.getSnapshot() as { context?: { reason?: unknown } } | undefined)?.context?.reason;
}

function latestEntryId(host: TerminalHost): number {
  try {
    return host.journal.list({ limit: 1 })[0]?.id ?? 0;
  } catch {
    return 0;
  }
}

function transactionIdsSince(host: TerminalHost, since: number): string[] {
  try {
    return host.journal
      .list({ limit: 100 })
      .filter((e) => e.id > since && e.transactionId !== undefined)
      .map((e) => e.transactionId!);
  } catch {
    // The judge then matches the charge by amount.
    return [];
  }
}

process.stdout.write(`${JSON.stringify({ phase: 'start' })}\n`);
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
    if (flow === 'gate' || flow === 'gate-phone') {
      watchCustomer(host);
      await gateRetap(host, flow === 'gate-phone');
      await host.settle(30_000);
    }
    process.stdout.write(
      `${JSON.stringify({
        inFlight: host.journal.counts().inFlight,
        orphanWatch: orphanWatch(host),
        offlineDepth: host.offline.status().depth,
      })}\n`,
    );
  } else {
    watchCustomer(host);
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
      case 'void':
        screens = [await kioskSale(host)];
        if (screens[0] === 'approved') screens.push(await operatorFollowOn(host, flow));
        break;
      case 'meter-void':
        screens = await meterSession(host, false);
        if (screens.at(-1) === 'approved') screens.push(await operatorFollowOn(host, 'void'));
        break;
      case 'offline':
        screens = await offlineSales(host);
        break;
      case 'queued':
        screens = queuePayments(host);
        break;
      case 'gate':
        screens = await gateStay(host, false);
        break;
      case 'gate-phone':
        screens = await gateStay(host, true);
        break;
    }
    await host.settle(30_000);
    process.stdout.write(`${JSON.stringify({ screens })}\n`);
  }
} finally {
  await host.close();
  await new Promise<void>((done) => logger.flush(() => done()));
}
