import { describeCrashCases } from './flows.js';

// Kiosk sale, and the operator's refund of a kiosk sale, killed at every journal step of each request.
describeCrashCases('crash: kiosk sale and refund', ['sale', 'refund']);
