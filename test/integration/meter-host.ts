import { parseConfig, type ConfigInput } from '../../src/config/index.js';
import { createTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { silentLogger } from '../../src/log/index.js';
import type { ParkingClock } from './models-harness.js';
import { waitForSnapshot } from './host-harness.js';

/**
 * An on-street meter terminal on `gatewayUrl` (the sandbox, or a proxy before it), its journal in `dir`, with short
 * recovery waits (a timeout request 50 ms after a lost answer, follow-ups tried again after 100 ms), started and idle.
 * Pushed on `hosts`, which the test closes after it. `more`: the terminal's identity and the simulated card, when not
 * the defaults.
 */
export async function startMeterHost(
  hosts: TerminalHost[],
  dir: string,
  gatewayUrl: string,
  clock: ParkingClock,
  more: { terminal?: ConfigInput['terminal']; card?: string } = {},
): Promise<TerminalHost> {
  const host = await createTerminalHost(
    parseConfig({
      terminal: { ...more.terminal, model: 'meter' },
      reader: { sim: { presentDelayMs: 5, ...(more.card !== undefined ? { card: more.card } : {}) } },
      journal: { path: 'journal.db', timeoutReversalDelayMs: 50, resolutionRetryMs: 100 },
    }),
    { logger: silentLogger(), cwd: dir, gatewayUrlOverride: gatewayUrl, parkingClock: clock },
  );
  hosts.push(host);
  await waitForSnapshot(host, (s) => s.customer.screen === 'idle');
  return host;
}

/** Polls `ok` until it holds or `timeoutMs` passed; returns its last answer. */
export async function eventually(ok: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!ok() && Date.now() < deadline) await new Promise((res) => setTimeout(res, 20));
  return ok();
}
