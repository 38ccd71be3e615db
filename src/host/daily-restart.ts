import { fleetSchema, type Config } from '../config/index.js';
import { inMaintenanceWindow } from '../fleet/index.js';
import type { Logger } from '../log/index.js';

/** How often the daily restart looks whether its moment has come. */
const CHECK_MS = 30_000;

/**
 * How long a terminal runs, by the monotonic clock, before a daily restart: the wall clock may be stepped (NTP after a
 * boot without a battery-backed clock, a clock set right after a restart) or pass the same hour twice (the night the
 * clocks go back), and a start that the wall clock puts just before the window is not restarted again in it.
 */
export const DAILY_RESTART_MIN_RUN_MS = 4 * 3_600_000;

/** A terminal that never sees its window close (a window open all day: start equal to end) restarts after a day. */
const DAY_MS = 24 * 3_600_000;

/** A daily window in the terminal's time zone. */
export interface MaintenanceWindow {
  start: string;
  end: string;
}

/**
 * Whether the terminal may stop now: the fleet's idle check (`HostFleetTerminal.idle`: no customer session, no open
 * authorization, no journal entry in flight or unknown, recovery not running) — one definition for the fleet's
 * restart and configuration, the daily restart and the update gate.
 */
export interface IdleCheck {
  idle(): { idle: true } | { idle: false; why: string };
}

/** The maintenance window: `fleet.maintenanceWindow`, or its default (03:00–05:00) when no fleet link is configured. */
export function maintenanceWindowOf(config: Config): MaintenanceWindow {
  return config.fleet?.maintenanceWindow ?? fleetSchema.shape.maintenanceWindow.parse(undefined);
}

export interface DailyRestartOptions {
  window: MaintenanceWindow;
  timeZone: string;
  idle: IdleCheck;
  /** Stops the terminal with the restart exit code (75), which the service manager restarts. */
  restart: (reason: string) => void;
  now?: () => Date;
  /** A monotonic clock in milliseconds (default `performance.now()`): how long the terminal has run. */
  monotonicMs?: () => number;
  logger?: Logger;
}

/**
 * The daily restart (kiosk.md §5: vendors restart every terminal in a daily window): once per window, at the first
 * check inside it at which the terminal is idle. A terminal that started inside the window (it has just restarted)
 * waits for the next one; a window spent busy passes without a restart. The wall clock says when the window is open;
 * the monotonic clock says how long the terminal has run, and a terminal that has run less than
 * {@link DAILY_RESTART_MIN_RUN_MS} is not restarted, whatever the wall clock did meanwhile. A window open all day
 * restarts the terminal once it has run a day.
 */
export class DailyRestart {
  private readonly now: () => Date;
  private readonly monotonicMs: () => number;
  private readonly startedMs: number;
  /** The window has been seen closed since the start. */
  private armed: boolean;
  private restarted = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: DailyRestartOptions) {
    this.now = options.now ?? (() => new Date());
    this.monotonicMs = options.monotonicMs ?? (() => performance.now());
    this.startedMs = this.monotonicMs();
    this.armed = !this.inWindow();
  }

  /** Whether this run is due a restart when the window is open. */
  private due(): boolean {
    const ran = this.monotonicMs() - this.startedMs;
    return ran >= DAY_MS || (this.armed && ran >= DAILY_RESTART_MIN_RUN_MS);
  }

  private inWindow(): boolean {
    return inMaintenanceWindow(this.now(), this.options.window, this.options.timeZone);
  }

  /** One look: restarts (once) when inside the window, armed and idle. Returns whether it restarted. */
  check(): boolean {
    if (!this.inWindow()) {
      this.armed = true;
      return false;
    }
    if (this.restarted || !this.due() || !this.idle()) return false;
    this.restarted = true;
    this.options.restart('the daily restart in the maintenance window');
    return true;
  }

  /** The idle check; one that fails (a journal that cannot be read) is not idle: no restart on a guess. */
  private idle(): boolean {
    try {
      return this.options.idle.idle().idle;
    } catch (err) {
      this.options.logger?.error({ err }, 'the daily restart cannot tell whether the terminal is idle');
      return false;
    }
  }

  start(intervalMs = CHECK_MS): this {
    this.timer = setInterval(() => this.check(), intervalMs);
    this.timer.unref();
    return this;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
