import type { Logger } from '../log/index.js';
import type { ServiceNotifier } from './systemd-notify.js';

/** One thing the health loop checks before it tells the service manager the terminal is alive. */
export interface HealthCheck {
  readonly name: string;
  /** Healthy now; a check that throws counts as unhealthy. */
  healthy(nowMs: number): boolean;
}

/** What the watchdog reads of the terminal. */
export interface WatchedTerminal {
  /** The reader link's health (devices/reader.ts `ReaderHealth`). */
  readerHealth(): string;
  /**
   * Out of service by the operator's choice (service mode): the operator is at the terminal, perhaps changing its
   * reader; a restart would end service mode (it lives in memory) and put the terminal back in service by itself.
   */
  inServiceMode?(): boolean;
}

export interface ServiceWatchdogOptions {
  notifier: ServiceNotifier;
  /** How often `WATCHDOG=1` is due (half of `$WATCHDOG_USEC`); undefined: no watchdog, READY=1 only. */
  intervalMs: number | undefined;
  checks: readonly HealthCheck[];
  /**
   * Whether money is in flight (a request sent and not answered). While it is, a failing reader or UI check does not
   * withhold `WATCHDOG=1`: the request finishes and is journaled first; a hung event loop sends nothing anyway, and
   * recovery at the next start resolves what it left (money safety rule 3).
   */
  moneyInFlight: () => boolean;
  logger?: Logger;
  now?: () => number;
}

/**
 * The kiosk service's health loop (issue 15, README "Running as a kiosk service"): `READY=1` once the terminal takes
 * cards (journal recovery finished), then `WATCHDOG=1` every interval only while every check passes — the event loop
 * runs (this loop runs at all), the reader link is up, the UI answers, the journal takes writes. When a check fails
 * the pings stop and systemd restarts the service after `WatchdogSec=` (`Restart=on-watchdog`).
 */
export class ServiceWatchdog {
  private timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;
  private failing: string[] = [];
  /** `WATCHDOG=1` messages sent (tests). */
  pings = 0;

  constructor(private readonly options: ServiceWatchdogOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Tells the service manager the terminal is ready and starts the loop. */
  async ready(status = 'taking cards'): Promise<void> {
    await this.options.notifier.notify('READY=1', `STATUS=${status}`);
    const interval = this.options.intervalMs;
    if (interval === undefined || !this.options.notifier.active) return;
    this.timer = setInterval(() => void this.tick(), interval);
    this.timer.unref();
    await this.tick();
  }

  /** One round of the loop: the checks, then `WATCHDOG=1` when they pass. Returns the names of the failing checks. */
  async tick(): Promise<string[]> {
    const now = this.now();
    const failing = this.options.checks
      .filter((check) => {
        try {
          return !check.healthy(now);
        } catch {
          return true;
        }
      })
      .map((check) => check.name);
    const changed = failing.join(',') !== this.failing.join(',');
    this.failing = failing;
    if (failing.length > 0 && !this.moneyInFlight()) {
      if (changed)
        this.options.logger?.error(
          { failing },
          'health check failing: the service watchdog is no longer fed',
        );
      await this.options.notifier.notify(`STATUS=unhealthy: ${failing.join(', ')}`);
      return failing;
    }
    if (changed && failing.length === 0) this.options.logger?.info('health checks pass again');
    this.pings += 1;
    await this.options.notifier.notify('WATCHDOG=1');
    return failing;
  }

  /**
   * Whether a request is out; a journal that cannot be read (a failing disk) says no: the failing check then withholds
   * the ping, and recovery at the next start resolves whatever was out (money safety rule 3).
   */
  private moneyInFlight(): boolean {
    try {
      return this.options.moneyInFlight();
    } catch (err) {
      this.options.logger?.error({ err }, 'whether a request is in flight cannot be read');
      return false;
    }
  }

  /** Stops the loop and tells the service manager the terminal is stopping. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.options.notifier.notify('STOPPING=1');
  }
}

/** The reader healths in which the link is up (a read in progress included). */
const READER_UP = new Set(['ready', 'busy']);

/**
 * The reader link: unhealthy once it has not been up for `graceMs` (a reader that reconnects within the grace, or is
 * still connecting at start, is not a reason to restart; one gone for longer may be a hung USB link a restart resets).
 * Service mode counts as up: the grace of a reader still gone starts when service mode ends.
 */
export function readerLinkCheck(terminal: WatchedTerminal, graceMs: number, startMs: number): HealthCheck {
  let lastUp = startMs;
  return {
    name: 'reader',
    healthy(nowMs) {
      if (READER_UP.has(terminal.readerHealth()) || terminal.inServiceMode?.() === true) lastUp = nowMs;
      return nowMs - lastUp < graceMs;
    },
  };
}

/**
 * The journal: unhealthy once it refuses writes (the disk failed the sync of a commit, a full disk among the causes).
 * The terminal is out of service then, and only a restart — its recovery starting from what is on disk — brings it
 * back; the daily restart and the fleet's wait for an idle terminal, which one whose failed commit left an entry in
 * flight never is again.
 */
export function journalCheck(journal: { writeRefusal(): unknown }): HealthCheck {
  return {
    name: 'journal',
    healthy() {
      return journal.writeRefusal() === undefined;
    },
  };
}

/**
 * The UI: unhealthy when its last sign of life (`lastAliveMs`: the renderer's last answer to the main process, the
 * bridge listening) is older than `staleMs`; undefined counts from `startMs` (the window may still be loading).
 */
export function uiCheck(
  lastAliveMs: () => number | undefined,
  staleMs: number,
  startMs: number,
): HealthCheck {
  return {
    name: 'ui',
    healthy(nowMs) {
      return nowMs - (lastAliveMs() ?? startMs) < staleMs;
    },
  };
}
