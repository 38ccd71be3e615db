/** The faults queued by `Sandbox.scheduleFaults` or `/__sandbox/faults` (triggers.ts), bounded (limits.ts). */
import { tooManyFaults } from './admin.js';
import { SandboxError } from './errors.js';
import { FAULT_KINDS, type Fault } from './triggers.js';

/** Queued faults, oldest first; each is consumed by the next API request it matches. */
export class FaultQueue {
  private queued: Fault[] = [];

  /** The queued faults, oldest first. */
  list(): readonly Fault[] {
    return this.queued;
  }

  /** Queues `faults`; throws SANDBOX_OPTIONS for an unknown kind or past the queue's bound (nothing queued then). */
  schedule(faults: readonly Fault[]): void {
    for (const f of faults)
      if (!FAULT_KINDS.includes(f.kind))
        throw new SandboxError('SANDBOX_OPTIONS', `unknown fault kind ${String(f.kind)}`);
    const tooMany = tooManyFaults(this.queued.length, faults.length);
    if (tooMany !== undefined) throw new SandboxError('SANDBOX_OPTIONS', tooMany);
    this.queued.push(...faults);
  }

  /** The first queued fault matching the request's method and path, removed from the queue. */
  take(method: string, path: string): Fault | undefined {
    const i = this.queued.findIndex(
      (f) =>
        (f.method === undefined || f.method === method) && (f.path === undefined || path.includes(f.path)),
    );
    if (i < 0) return undefined;
    const [f] = this.queued.splice(i, 1);
    return f;
  }

  clear(): void {
    this.queued = [];
  }
}
