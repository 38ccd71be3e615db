import { describeCrashCases } from './flows.js';

// Kiosk sale, killed at every journal step of each request. One file per flow: the crash runs of the flows spread over
// the test workers.
describeCrashCases('crash: sale', ['sale']);
