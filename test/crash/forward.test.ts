import { describeCrashCases } from './flows.js';

// The host's own forwarding (TerminalHost, the path `start` runs) killed with a forward's answer in hand, and the
// restart that resolves that forward killed at its recovery request: each stored payment forwarded at most once,
// the forward in doubt voided (never resent), the rest forwarded once.
describeCrashCases('crash: host forwarding killed mid-forward and mid-recovery', ['queued'], (plan) =>
  (plan.recover ?? []).includes('recovery.sent#1'),
);
