import { ciCore, describeCrashCases } from './flows.js';

// Kiosk sale, then the operator's refund of it, killed at every journal step of each request. One file per flow: the
// crash runs of the flows spread over the test workers. In `npm test`: the plans of `ciCore` (flows.ts) (CRASH_FULL=1:
// all 11).
describeCrashCases('crash: refund', ['refund'], ciCore('refund', 2));
