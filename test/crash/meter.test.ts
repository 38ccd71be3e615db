import { ciCore, describeCrashCases } from './flows.js';

// Meter pre-authorization and capture, killed at every journal step of each request. One file per flow: the crash runs
// of the flows spread over the test workers. In `npm test`: the plans of `ciCore` (flows.ts) (CRASH_FULL=1: all 11).
describeCrashCases('crash: meter', ['meter'], ciCore('meter', 2));
