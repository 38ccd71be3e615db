/**
 * Fault injection for the crash tests: when the environment variable PARKING_TERMINAL_CRASH_AT names a point
 * (optionally with `#N` for the N-th time it is reached, counting from 1), the process kills itself with SIGKILL
 * there — no cleanup, no flushing, exactly like a power cut. Unset in production; reaching a point costs one
 * string comparison.
 *
 * Points: `journal.begin` (request journaled, nothing sent), `journal.sent` (marked sent, before the bytes go out),
 * `gateway.answered` (answer received, outcome not yet journaled), `journal.outcome` (outcome journaled, UI not yet
 * updated), `recovery.sent` (a timeout reversal/void sent, its outcome not journaled), `offline.stored`,
 * `offline.forwarded`, `link.notified` (a payment link's payment notification received, before the terminal reads it:
 * the payment made at the gateway, nothing journaled), `link.paid` (a payment link's payment journaled — the link
 * `paid`, the tap-and-go stay it pays marked paid in the same transaction — before the terminal acts on it: the
 * screen, the release of the stay's hold).
 */
const spec = process.env.PARKING_TERMINAL_CRASH_AT;
const [target, nth] = spec ? spec.split('#') : [];
const wanted = nth ? Number(nth) : 1;
let seen = 0;

export function failpoint(name: string): void {
  if (target === undefined || name !== target) return;
  seen += 1;
  if (seen === wanted) process.kill(process.pid, 'SIGKILL');
}
