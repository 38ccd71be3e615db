import { ciSubset, describeCrashCases } from './flows.js';

// Tap-and-go: verification and hold at the entry, incremental authorization and capture at the exit, the card tapped
// out again after each restart, killed at every journal step of each request. In `npm test`: the plans of the exit's
// capture and the card tapped again, and one more drawn with a printed seed (CRASH_FULL=1: all 21).
describeCrashCases(
  'crash: gate',
  ['gate'],
  ciSubset(
    'gate',
    [
      'gate uninterrupted',
      'gate journal.outcome#4',
      'gate gateway.answered#4',
      'gate gateway.answered#4 → gateway.answered#1',
    ],
    1,
  ),
);
