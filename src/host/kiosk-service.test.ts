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

/**
 * The kiosk service over a terminal whose journal holds `counts` and whose UI stopped answering at the start: what
 * the health loop tells the service manager once the UI is stale.
 */
async function staleUi(counts: { unknown: number; inFlight: number }): Promise<{
  failing: string[];
  notifier: RecordingNotifier;
}> {
  let now = 1_000_000;
  const host = {
    config: parseConfig({ service: { uiStaleSeconds: 5 } }),
    status: () => ({ reader: { health: 'ready' } }),
    inServiceMode: () => false,
    journal: { counts: () => ({ entries: 10, ...counts }) },
  } as unknown as TerminalHost;
  const notifier = new RecordingNotifier();
  const service = await startKioskService(host, {
    uiAliveMs: () => undefined,
    restart: () => undefined,
    terminal: { idle: () => ({ idle: false, why: 'test' }) } as unknown as HostFleetTerminal,
    configFile: undefined,
    cwd: '.',
    logger: silentLogger(),
    env: {},
    notifier,
    now: () => now,
  });
  services.push(service);
  now += 6_000;
  return { failing: await service.watchdog.tick(), notifier };
}

describe('kiosk service', () => {
  it('does not restart a terminal in service mode for its reader: the operator is at it, and a restart ends it', async () => {
    // Service mode lives in memory: a watchdog restart while a technician swaps the reader would put the terminal
    // back in service by itself, without a reader, and restart it again every grace period until the reader is back.
    let now = 1_000_000;
    let serviceMode = true;
    const host = {
      config: parseConfig({ service: { readerGraceSeconds: 10 } }),
      status: () => ({ reader: { health: 'disconnected' } }),
      inServiceMode: () => serviceMode,
      journal: { counts: () => ({ entries: 10, unknown: 0, inFlight: 0 }) },
    } as unknown as TerminalHost;
    const notifier = new RecordingNotifier();
    const service = await startKioskService(host, {
      uiAliveMs: () => now,
      restart: () => undefined,
      terminal: { idle: () => ({ idle: false, why: 'test' }) } as unknown as HostFleetTerminal,
      configFile: undefined,
      cwd: '.',
      logger: silentLogger(),
      env: {},
      notifier,
      now: () => now,
    });
    services.push(service);
    now += 600_000;
    expect(await service.watchdog.tick()).toEqual([]);
    // Back in service with the reader still gone: the grace counts from the end of service mode.
    serviceMode = false;
    now += 5_000;
    expect(await service.watchdog.tick()).toEqual([]);
    now += 6_000;
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
