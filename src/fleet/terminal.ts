import type { ReplyCode, ReportedHealth, FleetEvent, FleetCommandName } from './messages.js';

/** What a command did: its result, or why it was refused or failed. */
export type CommandOutcome =
  | { ok: true; message?: string; result?: unknown }
  | { ok: false; code: Exclude<ReplyCode, 'OK'>; message: string; failed?: boolean };

/**
 * The terminal as the fleet link sees it (DESIGN.md: src/fleet talks to the host only through an interface the host
 * implements; src/host/fleet-terminal.ts is the implementation, the fleet tests' simulated terminals another).
 */
export interface FleetTerminal {
  readonly terminalId: string;
  /** The health for the next heartbeat, read from the operator status at each call. */
  health(): ReportedHealth;
  /**
   * Why the terminal carries out no command at all, when it cannot (its configuration refused: no journal is open to
   * claim a command's id in, so at most once cannot hold). A command whose signature verifies is then answered with
   * this refusal — never claimed, never executed; a retained one is only logged. Absent or undefined: commands run.
   */
  commandsRefused?(): { code: 'CONFIG_REFUSED'; message: string } | undefined;
  /** Calls `listener` for each event from now on; returns the function that stops it. */
  onEvent(listener: (event: FleetEvent) => void): () => void;
  /**
   * Records the command id, durably, as the command arrives (at most once): `fresh` when it is new; `waiting` when it
   * was recorded before and its command never begun (carried out now, once {@link beginCommand} takes it). Otherwise
   * the reply the id got, when it finished (none: begun, its end never recorded); or `forgotten` when the command
   * expires before `keptFromMs`, the oldest expiry whose ids are all kept (it may have run and its id been pruned: a
   * clock set back since). Throws when the id cannot be recorded: the command is then answered `FAILED` and not
   * acknowledged to the broker, which delivers it again at the next connection.
   */
  claimCommand(input: {
    id: string;
    command: string;
    expiresAtMs: number;
  }):
    | { fresh: true }
    | { fresh: false; waiting: true }
    | { fresh: false; reply?: Record<string, unknown> }
    | { fresh: false; forgotten: true; keptFromMs: number };
  /**
   * Records, durably, that the claimed command begins, right before it is carried out: `begun` once per id. Otherwise
   * it was begun by another delivery of it, with the reply it got (none: its end never recorded). Throws when the
   * mark cannot be written: the command is then not carried out.
   */
  beginCommand(id: string): { begun: true } | { begun: false; reply?: Record<string, unknown> };
  /** Records the reply of a claimed command. */
  finishCommand(id: string, reply: Record<string, unknown>): void;
  /**
   * Carries out a verified, claimed command. Never throws: a failure is an outcome. `context.id`: the command's id, what
   * a command that acts on the terminal's money records as who asked (the audit log of `release-stay`).
   */
  execute(
    command: FleetCommandName,
    args: Record<string, unknown>,
    context: { id: string },
  ): Promise<CommandOutcome>;
  /**
   * Records a command carried out, refused or failed in the audit log (actor `fleet`). With `dropped` (code
   * `RATE_LIMITED`, id null): one record for the refusals of unsigned messages left unanswered, counted by code, and
   * (`unaudited`) those of signed commands answered but not audited one by one.
   */
  audit(entry: {
    id: string | null;
    command?: string;
    result: 'ok' | 'refused' | 'failed';
    code: ReplyCode;
    dropped?: { count: number; codes: Record<string, number> };
    unaudited?: { count: number; codes: Record<string, number> };
  }): void;
}
