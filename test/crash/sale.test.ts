import { describeCrashCases } from './flows.js';

// Kiosk sale, and the operator's refund and void of a kiosk sale, killed at every journal step of each request.
describeCrashCases('crash: kiosk sale, refund and void', ['sale', 'refund', 'void']);
