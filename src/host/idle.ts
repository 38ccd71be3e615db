import type { TerminalHealth } from '../fleet/index.js';

/** Whether the terminal is idle, and why not. */
export type IdleVerdict = { idle: true } | { idle: false; why: string };

/**
 * Idle, from a health reading: no customer session, no open authorization, no journal entry unknown or in flight,
 * recovery not running. The one definition behind every "may the terminal stop serving now?": the fleet's restart and
 * configuration, the daily restart and the update gate (src/host/update-gate.ts): a restart ends what runs in memory.
 * Service mode asks less (`TerminalHost.serviceModeOn`: no customer session under way).
 */
export function idleOf(
  h: Pick<TerminalHealth, 'customerSession' | 'openAuthorizations' | 'journal'>,
  recoveryRunning: boolean,
): IdleVerdict {
  if (h.customerSession) return { idle: false, why: 'a customer session is in progress' };
  if (h.openAuthorizations > 0) return { idle: false, why: `${h.openAuthorizations} authorization(s) open` };
  if (h.journal.unknown > 0 || h.journal.inFlight > 0)
    return { idle: false, why: 'journal entries are in flight or of unknown outcome' };
  if (recoveryRunning) return { idle: false, why: 'recovery is running' };
  return { idle: true };
}
