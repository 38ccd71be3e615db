import { JournalError } from './errors.js';
import {
  checkEpochMs,
  checkIdentifier,
  checkObject,
  readOn,
  type JournalConnection,
} from './field-checks.js';

/** How long after its signed expiry a command id is kept (then the signature check alone refuses it). */
const KEPT_AFTER_EXPIRY_MS = 24 * 60 * 60 * 1000;

/** What {@link FleetCommandLog.claim} found. */
export type FleetCommandClaim =
  /** The id is new: it is now recorded as waiting, and the caller carries the command out once it {@link begin}s it. */
  | { fresh: true }
  /**
   * The id was claimed before and its command never begun (its claim reported a failure, or the process stopped while
   * it waited its turn): it never took effect, and it is carried out now, once {@link begin} takes it.
   */
  | { fresh: false; waiting: true }
  /**
   * The id was begun before: the command is not executed again. `reply` is the reply it was given when it finished;
   * absent when it was still executing (or the process stopped in the middle of it).
   */
  | { fresh: false; reply?: Record<string, unknown> }
  /**
   * The command expires before `keptFromMs`, and the ids of such commands are not all kept any more: it may have been
   * carried out and its id pruned. Only a clock set back since (the signature check judges expiry by the terminal's
   * clock) lets such a command through to here; it is not executed.
   */
  | { fresh: false; forgotten: true; keptFromMs: number };

/** What {@link FleetCommandLog.begin} found. */
export type FleetCommandStart =
  /** The command is now recorded as executing: the caller carries it out, once. */
  | { begun: true }
  /** Begun (or answered) before, by another delivery of it: not executed again; its reply as in a claim. */
  | { begun: false; reply?: Record<string, unknown> };

interface Row {
  state: 'waiting' | 'executing' | 'done';
  reply: string | null;
}

/**
 * The fleet's command ids (migration 0011, the rewrite `fleet-command-starts`): at-most-once execution of commands that
 * MQTT delivers at least once. {@link claim} writes the id durably as it arrives (`waiting`), {@link begin} durably
 * before the command is carried out (`executing`), {@link finish} records the reply (`done`). A row the previous
 * terminal wrote is `executing` from its claim on: begun, as far as this store can tell.
 */
export class FleetCommandLog {
  private readonly stmts;

  constructor(private readonly connection: JournalConnection) {
    const db = connection.db;
    this.stmts = {
      get: db.prepare<[string], Row>('SELECT state, reply FROM fleet_commands WHERE id = ?'),
      insert: db.prepare<{ id: string; command: string; at: number; expiresAt: number }>(
        `INSERT INTO fleet_commands (id, command, received_at, expires_at, state)
         VALUES (@id, @command, @at, @expiresAt, 'waiting')`,
      ),
      begin: db.prepare<[string]>(
        "UPDATE fleet_commands SET state = 'executing' WHERE id = ? AND state = 'waiting'",
      ),
      finish: db.prepare<{ id: string; reply: string; at: number }>(
        `UPDATE fleet_commands SET state = 'done', reply = @reply, finished_at = @at
         WHERE id = @id AND state IN ('waiting', 'executing')`,
      ),
      prune: db.prepare<[number, string]>('DELETE FROM fleet_commands WHERE expires_at < ? AND id != ?'),
      newest: db.prepare<[], { at: number | null }>('SELECT max(received_at) AS at FROM fleet_commands'),
    };
  }

  /**
   * Records `id` as waiting, durably, unless it is there already (one transaction: two deliveries cannot both
   * claim it); an id there already and never begun is answered `waiting`. Ids whose command expired more than a day ago are removed on the way, after the new one is recorded.
   *
   * What is kept does not hang on the clock staying right: every id whose command expires at or after the newest
   * claim's time less a day (`keptFromMs`) is here — a prune at time t removes only expiries before t less a day, and
   * the claim that prunes is recorded at t. A command expiring before that is answered `forgotten`, never fresh,
   * whatever the clock reads now: a clock set back (a reset real-time clock, a spoofed time server) cannot make a
   * pruned command new again. A clock set far forward and back costs the other way: commands expiring before the
   * newest claim's time less a day are refused until the clock passes it.
   */
  claim(input: { id: string; command: string; expiresAtMs: number }): FleetCommandClaim {
    checkIdentifier(input.id, 'command id', 128);
    checkIdentifier(input.command, 'command', 64);
    checkEpochMs(input.expiresAtMs, 'expiresAtMs');
    return this.connection.atomically(true, () => {
      const now = this.connection.now().getTime();
      const row = this.stmts.get.get(input.id);
      if (row !== undefined) return row.state === 'waiting' ? { fresh: false, waiting: true } : started(row);
      const newest = this.stmts.newest.get()?.at ?? null;
      if (newest !== null && input.expiresAtMs < newest - KEPT_AFTER_EXPIRY_MS)
        return { fresh: false, forgotten: true, keptFromMs: newest - KEPT_AFTER_EXPIRY_MS };
      this.stmts.insert.run({ id: input.id, command: input.command, at: now, expiresAt: input.expiresAtMs });
      this.stmts.prune.run(now - KEPT_AFTER_EXPIRY_MS, input.id);
      return { fresh: true };
    });
  }

  /**
   * Records, durably, that the command of the claimed `id` begins: `begun` when it was waiting (one transaction: of two
   * deliveries of it, one begins it). Once this mark is durable the command is never begun again: a later claim or
   * begin answers with its reply, or without one (its end never recorded: whether it took effect is not known).
   * `JOURNAL_INVALID` when the id is not claimed.
   */
  begin(id: string): FleetCommandStart {
    return this.connection.atomically(true, () => {
      if (this.stmts.begin.run(id).changes === 1) return { begun: true };
      const row = this.stmts.get.get(id);
      if (row === undefined) throw new JournalError('JOURNAL_INVALID', `fleet command ${id} is not claimed`);
      const { reply } = started(row);
      return reply === undefined ? { begun: false } : { begun: false, reply };
    });
  }

  /** Records the reply of a claimed command. `JOURNAL_INVALID` when the id is not waiting or executing. */
  finish(id: string, reply: Record<string, unknown>): void {
    checkObject(reply, 'reply');
    this.connection.atomically(true, () => {
      const changed = this.stmts.finish.run({
        id,
        reply: JSON.stringify(reply),
        at: this.connection.now().getTime(),
      }).changes;
      if (changed !== 1)
        throw new JournalError('JOURNAL_INVALID', `fleet command ${id} is not waiting or executing`);
    });
  }

  /** Whether `id` was begun (tests). */
  begun(id: string): boolean {
    return readOn(this.connection, () => {
      const state = this.stmts.get.get(id)?.state;
      return state !== undefined && state !== 'waiting';
    });
  }

  /** Whether `id` was claimed (tests). */
  has(id: string): boolean {
    return readOn(this.connection, () => this.stmts.get.get(id) !== undefined);
  }
}

/** What a row begun before says: its reply when it finished, none when its end was never recorded. */
function started(row: Row): { fresh: false; reply?: Record<string, unknown> } {
  return row.reply === null
    ? { fresh: false }
    : { fresh: false, reply: JSON.parse(row.reply) as Record<string, unknown> };
}
