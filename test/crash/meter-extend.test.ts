import { ciSubset, describeCrashCases } from './flows.js';

// Meter pre-authorization, incremental authorization (EXTEND in the session) and capture, killed at every journal step
// of each request. One file per flow: the crash runs of the flows spread over the test workers. In `npm test`: the run
// without a kill, the kill with the last request's answer in hand followed by a kill at every recovery request of the
// restart, and three more drawn with a printed seed (CRASH_FULL=1: all 16; `npm run test:crash` draws from every plan
// of every flow).
describeCrashCases(
  'crash: meter-extend',
  ['meter-extend'],
  ciSubset(
    'meter-extend',
    ['meter-extend uninterrupted', 'meter-extend gateway.answered#3 → recovery.sent#1'],
    3,
  ),
);
