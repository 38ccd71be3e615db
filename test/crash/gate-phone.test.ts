import { ciSubset, describeCrashCases } from './flows.js';

// Tap-and-go, the exit paid by phone: the link paid on the sandbox's hosted page, then the hold reversed; the card
// tapped out again after each restart must open as paid, charged nothing more. Killed at every journal step of each
// request, when the link's payment notification arrives (`link.notified`) and once it is journaled (`link.paid`). In
// `npm test`: the plans between the payment and the release of the hold, and one more drawn with a printed seed
// (CRASH_FULL=1: all 18).
describeCrashCases(
  'crash: gate paid by phone',
  ['gate-phone'],
  ciSubset(
    'gate-phone',
    [
      'gate-phone uninterrupted',
      'gate-phone link.paid',
      'gate-phone link.paid → gateway.answered#1',
      'gate-phone link.notified',
      'gate-phone gateway.answered#3',
    ],
    1,
  ),
);
