import { describeCrashCases } from './flows.js';

// Sales stored while the gateway is unreachable and the host's own forwarding at the next start (forward.test.ts
// kills the recovery of a forward in doubt as well).
describeCrashCases(
  'crash: offline store and the host forwarding',
  ['offline', 'queued'],
  (plan) => !(plan.recover ?? []).includes('recovery.sent#1'),
);
