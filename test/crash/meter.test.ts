import { describeCrashCases } from './flows.js';

// Meter pre-authorization + capture, and with an incremental authorization (EXTEND) in the session.
describeCrashCases('crash: meter pre-authorization, incremental authorization and capture', [
  'meter',
  'meter-extend',
]);
