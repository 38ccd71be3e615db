import type { FleetEvent, FleetCommandName, TerminalHealth } from './messages.js';
import type { CommandOutcome, FleetTerminal } from './terminal.js';

/**
 * A simulated terminal for the fleet benchmark (`parking-terminal bench --only fleet`) and tests, as devices/sim is a
 * simulated reader: the real {@link FleetLink} runs over it, so hundreds of terminals can report to one broker from
 * one process. Command ids are kept in memory (the real terminal keeps them in the
 * journal database, src/host/fleet-terminal.ts); `executed` counts what ran.
 */
export class SimulatedFleetTerminal implements FleetTerminal {
  /** Each id claimed: `waiting` until its command begins, then its reply once it has one. */
  private readonly claimed = new Map<string, 'waiting' | Record<string, unknown> | undefined>();
  private readonly listeners = new Set<(event: FleetEvent) => void>();
  /** Commands carried out, in order. */
  readonly executed: Array<{ command: FleetCommandName; args: Record<string, unknown> }> = [];
  /** Audit records, in order. */
  readonly audited: Array<{ id: string | null; command?: string; result: string; code: string }> = [];
  inService = true;

  constructor(
    readonly terminalId: string,
    private readonly overrides: Partial<TerminalHealth> = {},
  ) {}

  health(): TerminalHealth {
    return {
      appVersion: '0.0.0-sim',
      model: 'meter',
      inService: this.inService,
      ...(this.inService ? {} : { outOfService: 'service mode' }),
      customerSession: false,
      reader: { kind: 'sim', health: 'ready', firmware: 'SIM-1.0' },
      gateway: { online: true, clockSkewSeconds: 0 },
      offline: { depth: 0, totals: [], oldestAgeSeconds: null, declinedAfterForward: 0 },
      openAuthorizations: 0,
      journal: { unknown: 0, inFlight: 0 },
      diskFreeMegabytes: 10 * 1024,
      ...this.overrides,
    };
  }

  onEvent(listener: (event: FleetEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Emits an event as the real terminal would. */
  emit(event: FleetEvent): void {
    for (const l of this.listeners) l(event);
  }

  claimCommand(input: {
    id: string;
  }): { fresh: true } | { fresh: false; waiting: true } | { fresh: false; reply?: Record<string, unknown> } {
    if (this.claimed.has(input.id)) {
      const kept = this.claimed.get(input.id);
      if (kept === 'waiting') return { fresh: false, waiting: true };
      return kept ? { fresh: false, reply: kept } : { fresh: false };
    }
    this.claimed.set(input.id, 'waiting');
    return { fresh: true };
  }

  beginCommand(id: string): { begun: true } | { begun: false; reply?: Record<string, unknown> } {
    const kept = this.claimed.get(id);
    if (kept === 'waiting') {
      this.claimed.set(id, undefined);
      return { begun: true };
    }
    return kept ? { begun: false, reply: kept } : { begun: false };
  }

  finishCommand(id: string, reply: Record<string, unknown>): void {
    this.claimed.set(id, reply);
  }

  audit(entry: { id: string | null; command?: string; result: string; code: string }): void {
    this.audited.push(entry);
  }

  execute(command: FleetCommandName, args: Record<string, unknown>): Promise<CommandOutcome> {
    this.executed.push({ command, args });
    if (command === 'out-of-service') {
      if (!this.inService)
        return Promise.resolve({ ok: false, code: 'NOT_ALLOWED', message: 'already out of service' });
      this.inService = false;
      this.emit({ type: 'out-of-service', reason: 'service mode' });
    }
    if (command === 'in-service') {
      this.inService = true;
      this.emit({ type: 'in-service' });
    }
    // A simulated terminal holds no tap-and-go stay: none listed, none to release.
    if (command === 'open-stays')
      return Promise.resolve({ ok: true, message: '0 open stay(s)', result: { stays: [] } });
    if (command === 'release-stay')
      return Promise.resolve({
        ok: false,
        code: 'HOLD_NOT_FOUND',
        message: 'no open stay has this hold: it was released or settled already',
      });
    return Promise.resolve({ ok: true, message: `${command} done` });
  }
}
