/**
 * The terminal as a child process for the crash tests: builds the same TerminalHost `parking-terminal start` builds
 * (configuration, journal, recovery, offline queue, simulated reader) against a standalone sandbox, then either
 * plays one kiosk sale (`run`; PARKING_TERMINAL_CRASH_AT makes it SIGKILL itself at a journal step) or only starts
 * — which runs recovery to completion before the terminal is ready — and stops (`recover`).
 *
 * Usage: node --import tsx test/crash/driver.ts run|recover DIR SANDBOX_URL
 * Prints one JSON line: {"screen": ...} after `run`, {"inFlight": N} after `recover`.
 */
import { parseConfig } from '../../src/config/index.js';
import { createTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { silentLogger } from '../../src/log/index.js';

const [mode, dir, url] = process.argv.slice(2);
if ((mode !== 'run' && mode !== 'recover') || !dir || !url) {
  process.stderr.write('usage: driver.ts run|recover DIR SANDBOX_URL\n');
  process.exit(2);
}

const config = parseConfig({
  reader: { sim: { presentDelayMs: 20 } },
  // Short enough for a test, and still "after the original": the sandbox records the delay it saw.
  journal: { path: 'journal.db', timeoutReversalDelayMs: 200, resolutionRetryMs: 50 },
  offline: { keyFile: 'offline.key' },
});

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

/** A ticket entered 95 minutes ago in the terminal's time zone: a fee in whole 0.50 steps, which the sandbox approves. */
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

const host = await createTerminalHost(config, { logger: silentLogger(), cwd: dir, gatewayUrlOverride: url });
try {
  if (mode === 'recover') {
    // createTerminalHost returns once recovery has resolved every entry left in flight (DESIGN.md rule 3).
    process.stdout.write(`${JSON.stringify({ inFlight: host.journal.counts().inFlight })}\n`);
  } else {
    await waitFor(host, ['idle']);
    for (const event of [{ type: 'START' }, { type: 'ENTER_TICKET', ticket: ticket(95) }] as const) {
      const r = await host.send(event);
      if (!r.ok) throw new Error(`${event.type}: ${r.error.code}`);
    }
    await waitFor(host, ['confirm']);
    await host.send({ type: 'CONFIRM' });
    const screen = await waitFor(host, ['approved', 'declined', 'error']);
    process.stdout.write(`${JSON.stringify({ screen })}\n`);
  }
} finally {
  await host.close();
}
