import { describeCrashCases } from './flows.js';

// Sales stored while the gateway is unreachable and the host's own forwarding at the next start.
describeCrashCases('crash: offline store and the host forwarding', ['offline', 'queued']);
