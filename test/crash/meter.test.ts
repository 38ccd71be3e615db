import { describeCrashCases } from './flows.js';

// Meter pre-authorization + capture, with an incremental authorization (EXTEND) in the session, and the operator's
// void of the capture followed by the reversal of the hold it leaves.
describeCrashCases('crash: meter pre-authorization, incremental authorization, capture and void', [
  'meter',
  'meter-extend',
  'meter-void',
]);
