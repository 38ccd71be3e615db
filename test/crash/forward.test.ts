import type { CrashPlan } from './harness.js';
import { ciSubset, describeCrashCases } from './flows.js';

// The host's own forwarding (TerminalHost, the path `start` runs) killed with a forward's answer in hand, and the
// restart that resolves that forward killed at its recovery request: each stored payment forwarded at most once,
// the forward in doubt voided (never resent), the rest forwarded once. In `npm test`: the kill with the first
// forward's answer in hand, and one more of the later forwards drawn with a printed seed (CRASH_FULL=1: all 3).
const recovery = (plan: CrashPlan): boolean => (plan.recover ?? []).includes('recovery.sent#1');
describeCrashCases(
  'crash: host forwarding killed mid-forward and mid-recovery',
  ['queued'],
  ciSubset('queued', ['queued uninterrupted → offline.forwarded#1 → recovery.sent#1'], 1, recovery),
);
