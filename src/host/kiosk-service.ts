import type { Logger } from '../log/index.js';
import { DailyRestart, maintenanceWindowOf } from './daily-restart.js';
import { HostFleetTerminal } from './fleet-terminal.js';
import { readerLinkCheck, ServiceWatchdog, uiCheck, type HealthCheck } from './service-watchdog.js';
import { SystemdNotifier, watchdogIntervalMs, type ServiceNotifier } from './systemd-notify.js';
import type { TerminalHost } from './terminal-host.js';

export interface KioskServiceOptions {
  /** When the UI last gave a sign of life (the kiosk window's renderer; the bridge listening when headless). */
  uiAliveMs: () => number | undefined;
  /** Stops the terminal with the restart exit code (75). */
  restart: (reason: string) => void;
  /** The fleet's view of the terminal when the fleet link runs (its idle check; one is made over the host otherwise). */
  terminal?: HostFleetTerminal;
  /** The configuration file and directory the terminal runs with (for an idle check made here). */
  configFile: string | undefined;
  cwd: string;
  logger: Logger;
  env?: NodeJS.ProcessEnv;
  notifier?: ServiceNotifier;
  now?: () => number;
}

export interface KioskService {
  /** The fleet's view of the terminal: the idle check of the daily restart, the health the update gate reads. */
  readonly terminal: HostFleetTerminal;
  readonly watchdog: ServiceWatchdog;
  close(): Promise<void>;
}

/**
 * The terminal as a systemd service (README, Running as a kiosk service), started once the host is ready — recovery of
 * the journal has finished, so `READY=1` means the terminal takes cards: the watchdog's health loop (event loop, reader
 * link, UI) and the daily restart in the maintenance window when nothing is in flight.
 */
export async function startKioskService(
  host: TerminalHost,
  options: KioskServiceOptions,
): Promise<KioskService> {
  const env = options.env ?? process.env;
  const now = options.now ?? Date.now;
  const logger = options.logger.child({ component: 'service' });
  const notifier =
    options.notifier ??
    new SystemdNotifier(env, 'systemd-notify', (err) => logger.warn({ err }, 'sd_notify failed'));
  const own =
    options.terminal === undefined
      ? new HostFleetTerminal(host, {
          configFile: options.configFile,
          cwd: options.cwd,
          logger,
          restart: options.restart,
        })
      : undefined;
  const terminal = options.terminal ?? own!;
  const service = host.config.service;
  const startedMs = now();
  const checks: HealthCheck[] = [
    readerLinkCheck(
      {
        readerHealth: () => host.status().reader.health,
        requestsInFlight: () => host.journal.counts().inFlight,
      },
      service.readerGraceSeconds * 1000,
      startedMs,
    ),
    uiCheck(options.uiAliveMs, service.uiStaleSeconds * 1000, startedMs),
  ];
  const watchdog = new ServiceWatchdog({
    notifier,
    intervalMs: watchdogIntervalMs(env),
    checks,
    moneyInFlight: () => host.journal.counts().inFlight > 0,
    logger,
    now,
  });
  // A daily restart only under a service manager, which starts the terminal again on the restart exit code.
  const daily =
    service.dailyRestart && notifier.active
      ? new DailyRestart({
          window: maintenanceWindowOf(host.config),
          timeZone: host.config.terminal.timezone,
          idle: terminal,
          restart: options.restart,
        }).start()
      : undefined;
  await watchdog.ready(`taking cards (${host.config.terminal.model})`);
  return {
    terminal,
    watchdog,
    async close() {
      daily?.stop();
      own?.close();
      await watchdog.stop();
    },
  };
}
