import type { CrashPlan } from './harness.js';
import { ciSubset, describeCrashCases } from './flows.js';

// Sales stored while the gateway is unreachable and the host's own forwarding at the next start (forward.test.ts
// kills the recovery of a forward in doubt as well). In `npm test`: for each flow the kill with the first forward's
// answer in hand, and one more plan drawn with a printed seed (CRASH_FULL=1: all 10).
const notRecovery = (plan: CrashPlan): boolean => !(plan.recover ?? []).includes('recovery.sent#1');
const offline = ciSubset('offline', ['offline uninterrupted → offline.forwarded#1'], 1, notRecovery);
const queued = ciSubset('queued', ['queued uninterrupted → offline.forwarded#1'], 1, notRecovery);
describeCrashCases(
  'crash: offline store and the host forwarding',
  ['offline', 'queued'],
  (plan) => offline(plan) || queued(plan),
);
