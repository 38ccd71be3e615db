import { redactString, type Logger } from '../log/index.js';
import { DailyRestart, maintenanceWindowOf } from './daily-restart.js';
import { HostFleetTerminal } from './fleet-terminal.js';
import {
  journalCheck,
  readerLinkCheck,
  ServiceWatchdog,
  uiCheck,
  type HealthCheck,
} from './service-watchdog.js';
import { SystemdNotifier, watchdogIntervalMs, type ServiceNotifier } from './systemd-notify.js';
import { leftInFlight } from './status-board.js';
import type { TerminalHost } from './terminal-host.js';

export interface KioskServiceOptions {
  /** When the UI last gave a sign of life (the kiosk window's renderer; the bridge's `lastAliveMs` when headless). */
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

/** The service manager's notify socket through `systemd-notify`; a failed send is logged, never thrown. */
function systemdNotifier(env: NodeJS.ProcessEnv, logger: Logger): ServiceNotifier {
  return new SystemdNotifier(env, 'systemd-notify', (err) => logger.warn({ err }, 'sd_notify failed'));
}

/**
 * The terminal as a systemd service (README, Running as a kiosk service), started once the host is ready — recovery of
 * the journal has finished, so `READY=1` means the terminal takes cards: the watchdog's health loop (event loop, reader
 * link, UI, journal) and the daily restart in the maintenance window when nothing is in flight.
 */
export async function startKioskService(
  host: TerminalHost,
  options: KioskServiceOptions,
): Promise<KioskService> {
  const env = options.env ?? process.env;
  const now = options.now ?? Date.now;
  const logger = options.logger.child({ component: 'service' });
  const notifier = options.notifier ?? systemdNotifier(env, logger);
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
        inServiceMode: () => host.inServiceMode(),
      },
      service.readerGraceSeconds * 1000,
      startedMs,
    ),
    uiCheck(options.uiAliveMs, service.uiStaleSeconds * 1000, startedMs),
    journalCheck(host.journal),
  ];
  const watchdog = new ServiceWatchdog({
    notifier,
    intervalMs: watchdogIntervalMs(env),
    checks,
    // Requests out (journaled pending or sent), not entries of unknown outcome: those may wait hours for the gateway,
    // no request of theirs is out meanwhile, and the next start's recovery resolves them before the first card. Nor
    // anything once the journal refuses writes: no outcome can be journaled any more, so waiting finishes nothing.
    moneyInFlight: () => {
      if (host.journal.writeRefusal() !== undefined) return false;
      const counts = host.journal.counts();
      return counts.inFlight - counts.unknown > 0;
    },
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
          logger,
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

/** How often a start that is still recovering tells the service manager it is alive (see {@link startupProgress}). */
export const STARTUP_PROGRESS_MS = 60_000;

/**
 * While the start recovers the journal — it waits for the gateway as long as it must (money safety rule 3) — tells the
 * service manager why the terminal is not ready (`STATUS=`) and that it is alive (`EXTEND_TIMEOUT_USEC=`, every
 * `everyMs`, for three times that): a start that keeps recovering is not killed at `TimeoutStartSec` and started again
 * for nothing, while one whose event loop hangs stops extending and is. Stop it once the start is over, `stopping`
 * when the terminal is being stopped before it was ready (`STOPPING=1`); once ready, the kiosk service's `READY=1`
 * and watchdog take over.
 */
export function startupProgress(
  host: Pick<TerminalHost, 'status'>,
  options: { env?: NodeJS.ProcessEnv; notifier?: ServiceNotifier; logger: Logger; everyMs?: number },
): { stop(stopping: boolean): Promise<void> } {
  return notReadyProgress(() => {
    const status = host.status();
    return status.recovery.running
      ? `resolving ${leftInFlight(status.recovery.inFlight)} before taking cards` +
          (status.gateway.lastError !== undefined ? ` (gateway: ${status.gateway.lastError})` : '')
      : 'starting';
  }, options);
}

/**
 * While a start is not ready, for whatever reason `why` reads at each call (recovery of the journal, a configuration
 * refused): `STATUS=` and `EXTEND_TIMEOUT_USEC=` every `everyMs`, as {@link startupProgress} describes; `tell` sends
 * them at once (the reason changed).
 */
export function notReadyProgress(
  why: () => string,
  options: { env?: NodeJS.ProcessEnv; notifier?: ServiceNotifier; logger: Logger; everyMs?: number },
): { tell(): void; stop(stopping: boolean): Promise<void> } {
  const logger = options.logger.child({ component: 'service' });
  const notifier = options.notifier ?? systemdNotifier(options.env ?? process.env, logger);
  if (!notifier.active) return { tell: () => undefined, stop: () => Promise.resolve() };
  const everyMs = options.everyMs ?? STARTUP_PROGRESS_MS;
  let sent = Promise.resolve();
  const tell = (): void => {
    const text = redactString(why());
    sent = sent.then(() => notifier.notify(`EXTEND_TIMEOUT_USEC=${everyMs * 3 * 1000}`, `STATUS=${text}`));
  };
  tell();
  const timer = setInterval(tell, everyMs);
  timer.unref();
  return {
    tell,
    async stop(stopping) {
      clearInterval(timer);
      await sent;
      if (stopping) await notifier.notify('STOPPING=1');
    },
  };
}
