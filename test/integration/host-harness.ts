import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig, type ConfigInput } from '../../src/config/index.js';
import type { TerminalSnapshot, UserEvent } from '../../src/host/api.js';
import { silentLogger } from '../../src/log/index.js';
import { createTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';

const started: TerminalHost[] = [];

/**
 * A terminal as `parking-terminal start` builds it, on the embedded sandbox and the simulated reader (cards presented
 * after 50 ms unless `overrides.reader` says otherwise), in a directory of its own; {@link closeHosts} closes it.
 */
export async function startHost(overrides: ConfigInput = {}): Promise<TerminalHost> {
  const cwd = mkdtempSync(join(tmpdir(), 'pt-host-'));
  const config = parseConfig({ ...overrides, reader: { sim: { presentDelayMs: 50 }, ...overrides.reader } });
  const host = await createTerminalHost(config, { logger: silentLogger(), cwd });
  started.push(host);
  return host;
}

/** Closes every terminal {@link startHost} started (an `afterEach`). */
export async function closeHosts(): Promise<void> {
  while (started.length > 0) await started.pop()?.close();
}

/** The customer screen the host shows now ('?' when the snapshot fails). */
export async function screenOf(host: TerminalHost): Promise<string> {
  const r = await host.snapshot();
  return r.ok ? r.value.customer.screen : '?';
}

/** Waits until the host shows one of `screens` and returns it; throws naming the screen shown at the deadline. */
export async function waitForScreens(
  host: TerminalHost,
  screens: string[],
  timeoutMs = 15_000,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await screenOf(host);
    if (screens.includes(s)) return s;
    if (Date.now() > deadline) throw new Error(`screen is ${s}, wanted ${screens.join('|')}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Sends a customer's event; throws when the host refuses it. */
export async function sendEvent(host: TerminalHost, event: UserEvent): Promise<void> {
  const r = await host.send(event);
  if (!r.ok) throw new Error(`${event.type}: ${r.error.code} ${r.error.message}`);
}

/**
 * Waits until the host's snapshot satisfies `accept` and returns it; throws naming `what` and the screen shown at the
 * deadline.
 */
export async function waitForSnapshot(
  host: TerminalHost,
  accept: (s: TerminalSnapshot) => boolean,
  what = 'the screen wanted',
  timeoutMs = 15_000,
): Promise<TerminalSnapshot> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await host.snapshot();
    if (r.ok && accept(r.value)) return r.value;
    if (Date.now() > deadline)
      throw new Error(`waiting for ${what}: ${r.ok ? r.value.customer.screen : r.error.code}`);
    await new Promise((res) => setTimeout(res, 10));
  }
}
