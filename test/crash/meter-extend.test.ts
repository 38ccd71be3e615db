import { describeCrashCases } from './flows.js';

// Meter pre-authorization, incremental authorization (EXTEND in the session) and capture, killed at every journal step
// of each request. One file per flow: the crash runs of the flows spread over the test workers.
describeCrashCases('crash: meter-extend', ['meter-extend']);
