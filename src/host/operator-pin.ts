import { randomInt, timingSafeEqual, createHash } from 'node:crypto';
import { readSecretText } from '../config/secret-file.js';

/** Operator PIN failures lock operator mode for a while: a kiosk in the street gets guessed at. */
const MAX_FAILURES = 5;
const LOCK_MS = 5 * 60_000;

/**
 * Thrown when the PIN file holds no valid PIN; names the configuration key. A PIN file that is missing, unreadable or
 * accessible to group or others throws `SecretFileError` (src/config/secret-file.ts) instead.
 */
export class OperatorPinError extends Error {
  override readonly name = 'OperatorPinError';
  readonly code = 'OPERATOR_PIN_FILE';
}

/**
 * The operator PIN: read from `terminal.operatorPinFile`, or generated at each start (printed once by `start`).
 * Comparison is constant-time over hashes; after five wrong PINs operator mode is locked for five minutes, also across
 * a restart ({@link restore}).
 */
export class OperatorPin {
  private failures = 0;
  private lockedUntil = 0;
  private readonly digest: Buffer;
  /** The PIN generated for this start, when no file was configured (shown once to whoever started the terminal). */
  readonly generated: string | undefined;

  constructor(
    pinFile: string | undefined,
    private readonly now: () => number = Date.now,
  ) {
    let pin: string;
    if (pinFile) {
      // The PIN opens refunds and voids: a file others can read is refused like any secret file.
      pin = readSecretText(pinFile, 'terminal.operatorPinFile');
      if (!/^\d{4,8}$/.test(pin))
        throw new OperatorPinError('terminal.operatorPinFile: the PIN must be 4 to 8 digits');
      this.generated = undefined;
    } else {
      pin = String(randomInt(0, 1_000_000)).padStart(6, '0');
      this.generated = pin;
    }
    this.digest = createHash('sha256').update(pin).digest();
  }

  /** 'ok', 'wrong' or 'locked'. */
  check(candidate: string): 'ok' | 'wrong' | 'locked' {
    const at = this.now();
    if (at < this.lockedUntil) return 'locked';
    const ok = timingSafeEqual(createHash('sha256').update(candidate).digest(), this.digest);
    this.count(ok, at);
    return ok ? 'ok' : 'wrong';
  }

  /**
   * Replays the checks made before this start, oldest first (as the audit log recorded them: `ok` for a good PIN),
   * so that a restart neither lifts a lockout nor forgets the wrong PINs counted towards one. A check recorded while
   * the replayed lockout held counts for nothing, as it did then.
   */
  restore(past: Iterable<{ atMs: number; ok: boolean }>): void {
    for (const { atMs, ok } of past) if (atMs >= this.lockedUntil) this.count(ok, atMs);
  }

  private count(ok: boolean, at: number): void {
    if (ok) {
      this.failures = 0;
      return;
    }
    this.failures += 1;
    if (this.failures >= MAX_FAILURES) {
      this.failures = 0;
      this.lockedUntil = at + LOCK_MS;
    }
  }
}
