/** The sandbox clock: a base clock plus the offset that `advanceClock` and `/__sandbox/clock` add. */
import { SandboxError } from './errors.js';

/** The sandbox's notion of now (token, offer and code expiry; cut-offs; ledger times). */
export class SandboxClock {
  private offset = 0;

  constructor(private readonly base: () => Date) {}

  /** The sandbox time. */
  readonly now = (): Date => new Date(this.base().getTime() + this.offset);

  /** Milliseconds the sandbox clock is ahead of its base clock. */
  offsetMs(): number {
    return this.offset;
  }

  /** Moves the clock forward by `ms` milliseconds; throws SANDBOX_OPTIONS for a negative or non-finite value. */
  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0)
      throw new SandboxError('SANDBOX_OPTIONS', 'advanceClock takes a non-negative number of milliseconds');
    this.offset += ms;
  }

  reset(): void {
    this.offset = 0;
  }
}
