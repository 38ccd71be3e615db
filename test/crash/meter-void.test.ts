import { ciCore, describeCrashCases } from './flows.js';

// Meter pre-authorization and capture, then the operator's void of the capture and the reversal of the hold it leaves,
// killed at every journal step of each request. One file per flow: the crash runs of the flows spread over the test
// workers. In `npm test`: the plans of `ciCore` (flows.ts) (CRASH_FULL=1: all 21).
describeCrashCases('crash: meter-void', ['meter-void'], ciCore('meter-void', 4));
