import type { TerminalHost } from './terminal-host.js';

/**
 * The terminal is being stopped or restarted: out of service from the moment that is decided, so that no customer
 * starts while it closes (telling the service manager, closing the fleet link and the screen take a while; a
 * tap-and-go reader needs no screen to start a sale). What is in flight finishes and is journaled as usual. One out
 * of service already (an unexpected error, service mode) keeps its reason. Used by `parking-terminal start` and the
 * Electron shell (main/main.ts) alike.
 */
export function stopTakingCustomers(
  host: Pick<TerminalHost, 'status' | 'outOfService'>,
  reason: string,
): void {
  try {
    if (host.status().outOfService !== undefined) return;
  } catch {
    // Its status unreadable (the journal on a failing disk): out of service all the same.
  }
  host.outOfService(reason, { stopping: true });
}

/**
 * The longest a stop waits for the terminal to close — what is in flight finished and journaled, the service manager
 * told, the fleet link closed — from the moment it begins. The kiosk unit kills what is left at its TimeoutStopSec
 * (deploy/systemd/parking-terminal.service): unlogged, in whatever step it was. So the stop ends first, by this limit
 * and {@link STOP_EXIT_MS}, whatever gateway timeouts the configuration sets (at their maxima a request and the
 * timeout void its unknown outcome hands over may take 20 minutes; test/lint/service-unit.test.ts keeps the three in
 * order). What is still out then stays as the journal has it — begun or sent, no outcome — for the next start's
 * recovery, which resolves it before the first card (DESIGN.md, money safety rule 3), as after a power cut. At the
 * default timeouts a request and its void fit in it: an ordinary stop is never cut.
 */
export const STOP_LIMIT_MS = 150_000;

/** What a stop cut at {@link STOP_LIMIT_MS} still does at most: closing the screen, logging, exiting. */
export const STOP_EXIT_MS = 20_000;

/**
 * Waits for `closing` at most `limitMs`: true once it has settled (a failure is its own to log), false when the limit
 * came first — `closing` then runs on until the process exits.
 */
export async function closedWithin(closing: Promise<unknown>, limitMs = STOP_LIMIT_MS): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<boolean>((cut) => (timer = setTimeout(() => cut(false), limitMs)));
  try {
    return await Promise.race([
      closing.then(
        () => true,
        () => true,
      ),
      limit,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
