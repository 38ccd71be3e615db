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
  /** The id is new: it is now recorded as executing, and the caller carries the command out once. */
  | { fresh: true }
  /**
   * The id was seen before: the command is not executed again. `reply` is the reply it was given when it finished;
   * absent when it was still executing (or the process stopped in the middle of it).
   */
  | { fresh: false; reply?: Record<string, unknown> }
  /**
   * The command expires before `keptFromMs`, and the ids of such commands are not all kept any more: it may have been
   * carried out and its id pruned. Only a clock set back since (the signature check judges expiry by the terminal's
   * clock) lets such a command through to here; it is not executed.
   */
  | { fresh: false; forgotten: true; keptFromMs: number };

interface Row {
  state: 'executing' | 'done';
  reply: string | null;
}

/**
 * The fleet's command ids (migration 0011): at-most-once execution of commands that MQTT delivers at least once.
 * {@link claim} writes the id durably before anything is done; {@link finish} records the reply.
 */
export class FleetCommandLog {
  private readonly stmts;

  constructor(private readonly connection: JournalConnection) {
    const db = connection.db;
    this.stmts = {
      get: db.prepare<[string], Row>('SELECT state, reply FROM fleet_commands WHERE id = ?'),
      insert: db.prepare<{ id: string; command: string; at: number; expiresAt: number }>(
        `INSERT INTO fleet_commands (id, command, received_at, expires_at, state)
         VALUES (@id, @command, @at, @expiresAt, 'executing')`,
      ),
      finish: db.prepare<{ id: string; reply: string; at: number }>(
        `UPDATE fleet_commands SET state = 'done', reply = @reply, finished_at = @at
         WHERE id = @id AND state = 'executing'`,
      ),
      prune: db.prepare<[number, string]>('DELETE FROM fleet_commands WHERE expires_at < ? AND id != ?'),
      newest: db.prepare<[], { at: number | null }>('SELECT max(received_at) AS at FROM fleet_commands'),
    };
  }

  /**
   * Records `id` as executing, durably, unless it is there already (one transaction: two deliveries cannot both
   * claim it). Ids whose command expired more than a day ago are removed on the way, after the new one is recorded.
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
      if (row !== undefined)
        return row.reply === null
          ? { fresh: false }
          : { fresh: false, reply: JSON.parse(row.reply) as Record<string, unknown> };
      const newest = this.stmts.newest.get()?.at ?? null;
      if (newest !== null && input.expiresAtMs < newest - KEPT_AFTER_EXPIRY_MS)
        return { fresh: false, forgotten: true, keptFromMs: newest - KEPT_AFTER_EXPIRY_MS };
      this.stmts.insert.run({ id: input.id, command: input.command, at: now, expiresAt: input.expiresAtMs });
      this.stmts.prune.run(now - KEPT_AFTER_EXPIRY_MS, input.id);
      return { fresh: true };
    });
  }

  /** Records the reply of a claimed command. `JOURNAL_INVALID` when the id is not executing. */
  finish(id: string, reply: Record<string, unknown>): void {
    checkObject(reply, 'reply');
    this.connection.atomically(true, () => {
      const changed = this.stmts.finish.run({
        id,
        reply: JSON.stringify(reply),
        at: this.connection.now().getTime(),
      }).changes;
      if (changed !== 1) throw new JournalError('JOURNAL_INVALID', `fleet command ${id} is not executing`);
    });
  }

  /** Whether `id` was claimed (tests). */
  has(id: string): boolean {
    return readOn(this.connection, () => this.stmts.get.get(id) !== undefined);
  }
}
