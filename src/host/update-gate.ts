import type { TerminalHealth } from '../fleet/index.js';
import { inMaintenanceWindow } from '../fleet/index.js';
import type { MaintenanceWindow } from './daily-restart.js';
import { idleOf } from './idle.js';

/** What the gate reads: the fleet heartbeat's health (one reading of the terminal, nothing computed twice). */
export interface UpdateGateInput {
  now: Date;
  window: MaintenanceWindow;
  timeZone: string;
  health: Pick<TerminalHealth, 'customerSession' | 'openAuthorizations' | 'journal' | 'offline'>;
  recoveryRunning: boolean;
}

/**
 * Whether a downloaded update may be installed now (issue 15; README, Updates): only inside the maintenance window,
 * and only when the terminal is idle by the fleet's definition (`idleOf`: no customer session, no open authorization,
 * no journal entry unknown or in flight, recovery not running) and the offline queue is empty — a stored payment is
 * forwarded by the version that stored it, never left to a version that might be rolled back.
 */
export function updateInstallGate(
  input: UpdateGateInput,
): { install: true } | { install: false; why: string } {
  if (!inMaintenanceWindow(input.now, input.window, input.timeZone))
    return {
      install: false,
      why: `outside the maintenance window ${input.window.start}–${input.window.end}`,
    };
  const idle = idleOf(input.health, input.recoveryRunning);
  if (!idle.idle) return { install: false, why: idle.why };
  if (input.health.offline.depth > 0)
    return { install: false, why: `${input.health.offline.depth} stored payment(s) not yet forwarded` };
  return { install: true };
}
