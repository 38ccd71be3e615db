import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig, type ConfigInput } from '../../src/config/index.js';
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
