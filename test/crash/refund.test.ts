import { describeCrashCases } from './flows.js';

// Kiosk sale, then the operator's refund of it, killed at every journal step of each request. One file per flow: the
// crash runs of the flows spread over the test workers.
describeCrashCases('crash: refund', ['refund']);
