import { fleetSchema, type Config } from '../config/index.js';
import { inMaintenanceWindow } from '../fleet/index.js';

/** How often the daily restart looks whether its moment has come. */
const CHECK_MS = 30_000;

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
}

/**
 * The daily restart (kiosk.md §5: vendors restart every terminal in a daily window): once per window, at the first
 * check inside it at which the terminal is idle. A terminal that started inside the window (it has just restarted)
 * waits for the next one; a window spent busy passes without a restart.
 */
export class DailyRestart {
  private readonly now: () => Date;
  private armed: boolean;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: DailyRestartOptions) {
    this.now = options.now ?? (() => new Date());
    this.armed = !this.inWindow();
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
    if (!this.armed || !this.options.idle.idle().idle) return false;
    this.armed = false;
    this.options.restart('the daily restart in the maintenance window');
    return true;
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
