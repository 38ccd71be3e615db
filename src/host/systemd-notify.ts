import { execFile } from 'node:child_process';
import { MAX_TIMER_DELAY_MS } from '../vocabulary/timer.js';

/**
 * Messages to the service manager (sd_notify(3)): `READY=1` once the terminal takes cards, `WATCHDOG=1` from the
 * health loop, `STOPPING=1` on the way out, `STATUS=…` for `systemctl status`.
 */
export interface ServiceNotifier {
  /** Whether a service manager listens (`$NOTIFY_SOCKET` set); when not, `notify` does nothing. */
  readonly active: boolean;
  /** Sends the `KEY=VALUE` lines as one datagram; resolves when the service manager has it (never rejects). */
  notify(...assignments: string[]): Promise<void>;
}

/**
 * sd_notify through the `systemd-notify` program. Node cannot send the datagram itself: `node:net` speaks only
 * stream unix sockets (connecting one to the SOCK_DGRAM `$NOTIFY_SOCKET` fails with EPROTOTYPE) and `node:dgram` only
 * UDP; the npm packages that do it (`sd-notify`, `systemd-daemon`, `unix-dgram`) are native addons, one more build for
 * every kiosk's architecture. `systemd-notify` is on every machine systemd runs, and since systemd 246 it waits until
 * the manager has processed the message (`BARRIER=1`), so the short-lived sender's exit cannot lose it. A message from
 * a child process is accepted with `NotifyAccess=all` in the unit (deploy/systemd/parking-terminal.service), which the
 * Electron main process needs anyway: it is a child of `parking-terminal start`.
 */
export class SystemdNotifier implements ServiceNotifier {
  readonly active: boolean;

  constructor(
    private readonly env: NodeJS.ProcessEnv = process.env,
    private readonly program = 'systemd-notify',
    private readonly onError: (error: Error) => void = () => undefined,
  ) {
    this.active = Boolean(env.NOTIFY_SOCKET);
  }

  notify(...assignments: string[]): Promise<void> {
    if (!this.active || assignments.length === 0) return Promise.resolve();
    return new Promise((resolve) => {
      execFile(
        this.program,
        assignments.map(oneLine),
        { env: this.env, timeout: 5_000, windowsHide: true },
        (error) => {
          if (error) this.onError(error);
          resolve();
        },
      );
    });
  }
}

/**
 * An assignment as one line of the datagram: sd_notify(3) reads one `KEY=VALUE` per line, so a line break in a value
 * (a `STATUS=` text naming a key of a refused configuration file, say) would start an assignment of its own — `READY=1`
 * before the terminal takes cards, `MAINPID=` — which the service manager would obey. Control characters become spaces.
 */
function oneLine(assignment: string): string {
  return assignment.replace(/\p{Cc}/gu, ' ');
}

/**
 * How often the health loop should send `WATCHDOG=1`: half of `$WATCHDOG_USEC` (sd_watchdog_enabled(3) recommends
 * it), or undefined when the service manager set no watchdog for this process (`$WATCHDOG_PID` names another one).
 */
export function watchdogIntervalMs(env: NodeJS.ProcessEnv, pid = process.pid): number | undefined {
  const usec = Number(env.WATCHDOG_USEC);
  if (!env.WATCHDOG_USEC || !Number.isFinite(usec) || usec <= 0) return undefined;
  // The Electron main process is a child of `parking-terminal start`: with NotifyAccess=all it keeps the watchdog
  // of the service's main process (the one the variable names), whose environment it inherits.
  const target = Number(env.WATCHDOG_PID);
  if (env.WATCHDOG_PID && target !== pid && target !== process.ppid) return undefined;
  // A watchdog of weeks (WatchdogSec=60d): Node would run a longer timer after 1 ms, a ping without pause.
  return Math.min(MAX_TIMER_DELAY_MS, Math.max(1, Math.floor(usec / 2_000)));
}
