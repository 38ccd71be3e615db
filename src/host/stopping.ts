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
