import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../config/index.js';
import { silentLogger } from '../log/index.js';
import type { HostFleetTerminal } from './fleet-terminal.js';
import { startKioskService, type KioskService } from './kiosk-service.js';
import type { ServiceNotifier } from './systemd-notify.js';
import type { TerminalHost } from './terminal-host.js';

class RecordingNotifier implements ServiceNotifier {
  readonly active = true;
  readonly sent: string[] = [];
  notify(...assignments: string[]): Promise<void> {
    this.sent.push(assignments.join('|'));
    return Promise.resolve();
  }
}

const services: KioskService[] = [];
afterEach(async () => {
  while (services.length > 0) await services.pop()?.close();
});

/** A terminal under the kiosk service, on a clock the test moves (`clock.now`), its parts as the test gives them. */
async function watched(parts: {
  config: Parameters<typeof parseConfig>[0];
  reader: string;
  inServiceMode: () => boolean;
  counts: { unknown: number; inFlight: number };
  uiAliveMs: (now: number) => number | undefined;
}): Promise<{ service: KioskService; notifier: RecordingNotifier; clock: { now: number } }> {
  const clock = { now: 1_000_000 };
  const host = {
    config: parseConfig(parts.config),
    status: () => ({ reader: { health: parts.reader } }),
    inServiceMode: parts.inServiceMode,
    journal: { counts: () => ({ entries: 10, ...parts.counts }), writeRefusal: () => undefined },
  } as unknown as TerminalHost;
  const notifier = new RecordingNotifier();
  const service = await startKioskService(host, {
    uiAliveMs: () => parts.uiAliveMs(clock.now),
    restart: () => undefined,
    terminal: { idle: () => ({ idle: false, why: 'test' }) } as unknown as HostFleetTerminal,
    configFile: undefined,
    cwd: '.',
    logger: silentLogger(),
    env: {},
    notifier,
    now: () => clock.now,
  });
  services.push(service);
  return { service, notifier, clock };
}

/**
 * The kiosk service over a terminal whose journal holds `counts` and whose UI stopped answering at the start: what
 * the health loop tells the service manager once the UI is stale.
 */
async function staleUi(counts: { unknown: number; inFlight: number }): Promise<{
  failing: string[];
  notifier: RecordingNotifier;
}> {
  const { service, notifier, clock } = await watched({
    config: { service: { uiStaleSeconds: 5 } },
    reader: 'ready',
    inServiceMode: () => false,
    counts,
    uiAliveMs: () => undefined,
  });
  clock.now += 6_000;
  return { failing: await service.watchdog.tick(), notifier };
}

describe('kiosk service', () => {
  it('does not restart a terminal in service mode for its reader: the operator is at it, and a restart ends it', async () => {
    // Service mode lives in memory: a watchdog restart while a technician swaps the reader would put the terminal
    // back in service by itself, without a reader, and restart it again every grace period until the reader is back.
    let serviceMode = true;
    const { service, clock } = await watched({
      config: { service: { readerGraceSeconds: 10 } },
      reader: 'disconnected',
      inServiceMode: () => serviceMode,
      counts: { unknown: 0, inFlight: 0 },
      uiAliveMs: (now) => now,
    });
    clock.now += 600_000;
    expect(await service.watchdog.tick()).toEqual([]);
    // Back in service with the reader still gone: the grace counts from the end of service mode.
    serviceMode = false;
    clock.now += 5_000;
    expect(await service.watchdog.tick()).toEqual([]);
    clock.now += 6_000;
    expect(await service.watchdog.tick()).toEqual(['reader']);
  });

  it('keeps feeding the watchdog while a request is out, so that the payment finishes and is journaled', async () => {
    const { failing, notifier } = await staleUi({ unknown: 0, inFlight: 1 });
    expect(failing).toEqual(['ui']);
    expect(notifier.sent.at(-1)).toBe('WATCHDOG=1');
  });

  it('lets a hung UI be restarted while an entry of unknown outcome waits: recovery resolves it at the start', async () => {
    // An entry of unknown outcome may wait hours for the gateway; no request of it is out meanwhile, and the next
    // start's recovery resolves it before the first card (money safety rule 3).
    const { failing, notifier } = await staleUi({ unknown: 1, inFlight: 1 });
    expect(failing).toEqual(['ui']);
    expect(notifier.sent).not.toContain('WATCHDOG=1');
    expect(notifier.sent.at(-1)).toBe('STATUS=unhealthy: ui');
  });
});
