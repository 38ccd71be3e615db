import { randomInt, timingSafeEqual, createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { readSecretText } from '../config/secret-file.js';

/** Operator PIN failures lock operator mode for a while: a kiosk in the street gets guessed at. */
const MAX_FAILURES = 5;
/** The first lockout's length; each further one in a row, without a good PIN between them, lasts twice as long … */
const FIRST_LOCK_MS = 5 * 60_000;
/** … up to a day: then five guesses a day, where a flat five minutes would allow some 1,440. */
const LONGEST_LOCK_MS = 24 * 60 * 60_000;

/**
 * How long the `n`th lockout in a row lasts (n ≥ 1): 5, 10, 20, 40, 80, 160, 320, 640, 1,280 minutes, then a day each.
 * An operator who mistypes five times waits five minutes; fifty wrong PINs in a row cost a day.
 */
export function lockoutMs(n: number): number {
  return Math.min(FIRST_LOCK_MS * 2 ** Math.max(0, Math.min(n - 1, 30)), LONGEST_LOCK_MS);
}

/**
 * Thrown when the PIN file holds no valid PIN; names the configuration key. A PIN file that is missing, unreadable or
 * accessible to group or others throws `SecretFileError` (src/config/secret-file.ts) instead.
 */
export class OperatorPinError extends Error {
  override readonly name = 'OperatorPinError';
  readonly code = 'OPERATOR_PIN_FILE';
}

/** Thrown when the PIN generated for this start cannot be written to `terminal.generatedPinFile`; names the file. */
export class GeneratedPinFileError extends Error {
  override readonly name = 'GeneratedPinFileError';
  readonly code = 'GENERATED_PIN_FILE';
}

/**
 * The digest of the PIN in `file`, after the rule of every secret file (a file others can read is refused: the PIN
 * opens refunds and voids). Throws `SecretFileError` or {@link OperatorPinError}.
 */
function readPin(file: string): Buffer {
  const pin = readSecretText(file, 'terminal.operatorPinFile');
  if (!/^\d{4,8}$/.test(pin))
    throw new OperatorPinError('terminal.operatorPinFile: the PIN must be 4 to 8 digits');
  return createHash('sha256').update(pin).digest();
}

/**
 * What tells one content of `file` from the next without reading it: its inode (a file renamed over it), size, and
 * change and modification times (a write in place, a chmod); undefined when it cannot be seen.
 */
function fileVersion(file: string): string | undefined {
  try {
    const s = statSync(file, { bigint: true });
    return `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}:${s.mode}`;
  } catch {
    return undefined;
  }
}

/**
 * The operator PIN: read from `terminal.operatorPinFile`, or generated at each start (handed to the operator once by `start`: src/host/terminal-host.ts, openedLines). The
 * file is read again when it changes ({@link check}): a PIN replaced while the terminal runs — say, because the old
 * one got out — is the PIN from then on, not after the next restart. Comparison is constant-time over hashes; five wrong PINs in a row lock operator mode, for five minutes the first time
 * and twice as long each further time in a row ({@link lockoutMs}) until a good PIN, also across a restart
 * ({@link restore}).
 */
export class OperatorPin {
  private failures = 0;
  /** The lockouts since the last good PIN. */
  private lockouts = 0;
  private lockedUntilMs = 0;
  private digest: Buffer;
  /** What the PIN file was when {@link digest} was read from it (see {@link fileVersion}). */
  private readVersion: string | undefined;
  /** The PIN generated for this start, when no file was configured (shown once to whoever started the terminal). */
  readonly generated: string | undefined;

  constructor(
    private readonly pinFile: string | undefined,
    private readonly now: () => number = Date.now,
  ) {
    if (pinFile) {
      this.readVersion = fileVersion(pinFile);
      this.digest = readPin(pinFile);
      this.generated = undefined;
    } else {
      const pin = String(randomInt(0, 1_000_000)).padStart(6, '0');
      this.digest = createHash('sha256').update(pin).digest();
      this.generated = pin;
    }
  }

  /**
   * 'ok', 'wrong' or 'locked'. A PIN file changed since it was read is read again first; one that cannot be used any
   * more throws the start's typed error (`SecretFileError`, {@link OperatorPinError}) and counts nothing: no PIN is
   * taken for good or wrong against a file that may have leaked or been cut short.
   */
  check(candidate: string): 'ok' | 'wrong' | 'locked' {
    const at = this.now();
    if (this.locked(at)) return 'locked';
    const digest = this.current();
    const ok = timingSafeEqual(createHash('sha256').update(candidate).digest(), digest);
    this.count(ok, at);
    return ok ? 'ok' : 'wrong';
  }

  /** The digest of the PIN in force: the PIN file's as it is now (read again when it changed), or the generated one. */
  private current(): Buffer {
    if (this.pinFile === undefined) return this.digest;
    const version = fileVersion(this.pinFile);
    if (version === undefined || version !== this.readVersion) {
      // Unusable (or gone): nothing is kept of it, so that the next check reads it again.
      this.readVersion = undefined;
      this.digest = readPin(this.pinFile);
      this.readVersion = version;
    }
    return this.digest;
  }

  /** When the lockout in force ends (epoch milliseconds); undefined when operator mode is not locked. */
  lockedUntil(): number | undefined {
    return this.locked(this.now()) ? this.lockedUntilMs : undefined;
  }

  /**
   * Whether the lockout holds at `at`. The wall clock may be stepped back (by hand, by a time service): a lockout then
   * ends no later than its own length after `at` — it is not made to last the hour the clock went back — and a good
   * PIN that ended one leaves none for the clock to bring back.
   */
  private locked(at: number): boolean {
    if (this.lockedUntilMs > 0)
      this.lockedUntilMs = Math.min(this.lockedUntilMs, at + lockoutMs(this.lockouts));
    return at < this.lockedUntilMs;
  }

  /**
   * When the latest lockout ends or ended (epoch milliseconds), undefined before the first and after a good PIN: the
   * end of the lockout that made {@link check} answer `locked`, even when it has run out since.
   */
  lockEnd(): number | undefined {
    return this.lockedUntilMs > 0 ? this.lockedUntilMs : undefined;
  }

  /**
   * Replays the checks made before this start, oldest first (as the audit log recorded them: `ok` for a good PIN),
   * so that a restart neither lifts a lockout, nor forgets the wrong PINs counted towards one, nor the lockouts in a row
   * that make the next one longer. A check recorded while the replayed lockout held counts for nothing, as it did then
   * (the desk does not pass those refusals: src/host/audit-trail.ts `pinChecksSince`).
   */
  restore(past: Iterable<{ atMs: number; ok: boolean }>): void {
    for (const { atMs, ok } of past) if (atMs >= this.lockedUntilMs) this.count(ok, atMs);
  }

  private count(ok: boolean, at: number): void {
    if (ok) {
      this.failures = 0;
      this.lockouts = 0;
      this.lockedUntilMs = 0;
      return;
    }
    this.failures += 1;
    if (this.failures >= MAX_FAILURES) {
      this.failures = 0;
      this.lockouts += 1;
      this.lockedUntilMs = at + lockoutMs(this.lockouts);
    }
  }
}
