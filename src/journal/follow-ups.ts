import { JournalError } from './errors.js';
import {
  checkBoolean,
  checkCurrency,
  checkEpochMs,
  checkIdentifier,
  checkMinor,
  checkObject,
  checkText,
  readOn,
  type JournalConnection,
} from './field-checks.js';

/**
 * Kinds of obligation. `reverse-authorization`: reverse authorization T at its gateway id for its authorized amount,
 * with its EMV tags when the original had them (gateway.md §7: voiding a capture leaves the authorization hold in
 * place, and a reversal of an original with EMV data carries its tags). `capture-authorization`: capture `amountMinor`
 * of authorization T (a meter session's fee spread over two holds: the part of the fee this hold covers, decided with
 * the outcome of the step before it), with its EMV tags when the original had them (spec 001: the capture of an EMV
 * contact pre-authorization carries the tags) — done once, and never together with a reversal of T: whichever of a
 * capture and a reversal of T the journal shows first ends the obligation. `give-back-sale`: give back `amountMinor` of
 * card sale T (a pay station's ticket paid by card and by phone: the terminal cannot refund a payment by link) — a void
 * of T while it may be voided and gives back no more than that, a refund otherwise, never more than T still holds;
 * ended by an approved void or refund of T.
 */
export const FOLLOW_UP_KINDS = ['reverse-authorization', 'capture-authorization', 'give-back-sale'] as const;
export type FollowUpKind = (typeof FOLLOW_UP_KINDS)[number];

/** An obligation to create. */
export interface NewFollowUp {
  kind: FollowUpKind;
  /** clientReferenceInformation.transactionId of the authorization (for `give-back-sale`: the sale) acted on. */
  authorizationTransactionId: string;
  /** Gateway id of that authorization (the follow-on's path). */
  gatewayId: string;
  /**
   * Minor units of `currency` (for a reversal: the authorized amount, spec 001; for a capture: the amount to capture).
   * `currency` is the authorization's, in the local terms the machines count in (a converted authorization's
   * follow-ons are converted at its rate when they are built).
   */
  amountMinor: number;
  /** ISO 4217 alpha. */
  currency: string;
  /** Whether the follow-on must carry the original's EMV tags (kept in {@link AuthorizationDataStore}). */
  includeEmvTags: boolean;
  /** Why the obligation exists, for the operator and the log (no card data), e.g. "capture voided by the operator". */
  reason: string;
  /** Epoch milliseconds from which it may be done; default: now. */
  dueAtMs?: number;
}

/** A stored obligation. */
export interface FollowUp extends Required<NewFollowUp> {
  readonly id: number;
  /** Epoch milliseconds. */
  readonly createdAtMs: number;
  /** Tries that did not finish it (see {@link FollowUpStore.postpone}). */
  readonly attempts: number;
  readonly lastError?: string;
  /** Epoch milliseconds when it was finished; absent while open. */
  readonly doneAtMs?: number;
  /** How it was finished, e.g. `reversed`, `already-reversed`. */
  readonly outcome?: string;
}

interface Row {
  id: number;
  kind: string;
  authorization_transaction_id: string;
  gateway_id: string;
  amount_minor: number;
  currency: string;
  include_emv_tags: number;
  reason: string;
  created_at: number;
  due_at: number;
  attempts: number;
  last_error: string | null;
  done_at: number | null;
  outcome: string | null;
}

function toFollowUp(r: Row): FollowUp {
  return {
    id: r.id,
    kind: r.kind as FollowUpKind,
    authorizationTransactionId: r.authorization_transaction_id,
    gatewayId: r.gateway_id,
    amountMinor: r.amount_minor,
    currency: r.currency,
    includeEmvTags: r.include_emv_tags === 1,
    reason: r.reason,
    createdAtMs: r.created_at,
    dueAtMs: r.due_at,
    attempts: r.attempts,
    ...(r.last_error !== null ? { lastError: r.last_error } : {}),
    ...(r.done_at !== null ? { doneAtMs: r.done_at } : {}),
    ...(r.outcome !== null ? { outcome: r.outcome } : {}),
  };
}

function checkId(id: unknown): asserts id is number {
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1)
    throw new JournalError('JOURNAL_INVALID', 'a follow-up id is a positive integer');
}

function followUpStatements(connection: JournalConnection) {
  const db = connection.db;
  return {
    byId: db.prepare<[number], Row>('SELECT * FROM follow_ups WHERE id = ?'),
    byKey: db.prepare<[string, string], Row>(
      'SELECT * FROM follow_ups WHERE kind = ? AND authorization_transaction_id = ?',
    ),
    insert: db.prepare<{
      kind: string;
      tx: string;
      gid: string;
      amount: number;
      currency: string;
      tags: number;
      reason: string;
      at: number;
      due: number;
    }>(`INSERT INTO follow_ups (kind, authorization_transaction_id, gateway_id, amount_minor, currency,
        include_emv_tags, reason, created_at, due_at)
      VALUES (@kind, @tx, @gid, @amount, @currency, @tags, @reason, @at, @due)`),
    due: db.prepare<[number], Row>(
      'SELECT * FROM follow_ups WHERE done_at IS NULL AND due_at <= ? ORDER BY due_at, id',
    ),
    open: db.prepare<[], Row>('SELECT * FROM follow_ups WHERE done_at IS NULL ORDER BY due_at, id'),
    complete: db.prepare<{ id: number; at: number; outcome: string }>(
      'UPDATE follow_ups SET done_at = @at, outcome = @outcome WHERE id = @id AND done_at IS NULL',
    ),
    dueBy: db.prepare<{ id: number; due: number }>(
      'UPDATE follow_ups SET due_at = @due WHERE id = @id AND done_at IS NULL AND due_at > @due',
    ),
    postpone: db.prepare<{ id: number; due: number; error: string }>(`UPDATE follow_ups
      SET due_at = @due, attempts = attempts + 1, last_error = @error WHERE id = @id AND done_at IS NULL`),
  };
}

/**
 * Durable obligations that recovery finishes before the terminal accepts the next card (DESIGN.md, money safety rule
 * 3), in the journal database. {@link add} is meant to run inside `journal.atomically(true, () => …)` together with
 * the outcome that creates the obligation — e.g. the approved void of a capture and "reverse its authorization" —
 * so that a crash between the two requests cannot leave a hold on the customer's card.
 *
 * Every method is synchronous; writes go through {@link JournalConnection.atomically} (durable commits).
 */
export class FollowUpStore {
  private readonly stmts: ReturnType<typeof followUpStatements>;

  constructor(private readonly connection: JournalConnection) {
    this.stmts = followUpStatements(connection);
  }

  /**
   * Records an obligation, durably, and returns it. Idempotent on (kind, authorization): when one exists — open or
   * already done — it is returned unchanged and nothing is added, so a replayed outcome cannot ask for a second
   * reversal. `JOURNAL_DUPLICATE` when the existing one names another gateway id, amount, currency or tag flag (two
   * callers disagree on what the follow-on is: a bug to surface, not to paper over); `JOURNAL_INVALID` for bad input.
   */
  add(input: NewFollowUp): FollowUp {
    checkObject(input, 'follow-up');
    if (!(FOLLOW_UP_KINDS as readonly string[]).includes(input.kind))
      throw new JournalError(
        'JOURNAL_INVALID',
        `follow-up kind "${String(input.kind)}" is not one of ${FOLLOW_UP_KINDS.join(', ')}`,
      );
    checkIdentifier(input.authorizationTransactionId, 'authorizationTransactionId');
    checkIdentifier(input.gatewayId, 'gatewayId');
    checkMinor(input.amountMinor, 'amountMinor');
    checkCurrency(input.currency);
    checkBoolean(input.includeEmvTags, 'includeEmvTags');
    checkText(input.reason, 'reason', 512);
    if (input.dueAtMs !== undefined) checkEpochMs(input.dueAtMs, 'dueAtMs');
    return this.connection.atomically(true, () => {
      const existing = this.stmts.byKey.get(input.kind, input.authorizationTransactionId);
      if (existing !== undefined) {
        if (
          existing.gateway_id !== input.gatewayId ||
          existing.amount_minor !== input.amountMinor ||
          existing.currency !== input.currency ||
          existing.include_emv_tags !== (input.includeEmvTags ? 1 : 0)
        )
          throw new JournalError(
            'JOURNAL_DUPLICATE',
            `follow-up ${existing.id} (${existing.kind} of ${existing.authorization_transaction_id}) exists with other terms`,
          );
        return toFollowUp(existing);
      }
      const at = this.connection.now().getTime();
      const id = Number(
        this.stmts.insert.run({
          kind: input.kind,
          tx: input.authorizationTransactionId,
          gid: input.gatewayId,
          amount: input.amountMinor,
          currency: input.currency,
          tags: input.includeEmvTags ? 1 : 0,
          reason: input.reason,
          at,
          due: input.dueAtMs ?? at,
        }).lastInsertRowid,
      );
      return toFollowUp(this.row(id));
    });
  }

  /** Open obligations whose due time is at or before `nowMs` (epoch milliseconds), earliest due first. */
  due(nowMs: number = this.connection.now().getTime()): FollowUp[] {
    checkEpochMs(nowMs, 'now');
    return readOn(this.connection, () => this.stmts.due.all(nowMs).map(toFollowUp));
  }

  /**
   * Every open obligation, earliest due first, whether due or not: the terminal accepts no card while this is not
   * empty (DESIGN.md, money safety rule 3).
   */
  open(): FollowUp[] {
    return readOn(this.connection, () => this.stmts.open.all().map(toFollowUp));
  }

  /**
   * The obligation of `kind` for an authorization, open or done (there is at most one: {@link add} returns it rather
   * than adding another), or undefined when none was ever written.
   */
  find(kind: FollowUpKind, authorizationTransactionId: string): FollowUp | undefined {
    return readOn(this.connection, () => {
      const r = this.stmts.byKey.get(kind, authorizationTransactionId);
      return r === undefined ? undefined : toFollowUp(r);
    });
  }

  get(id: number): FollowUp | undefined {
    checkId(id);
    return readOn(this.connection, () => {
      const r = this.stmts.byId.get(id);
      return r === undefined ? undefined : toFollowUp(r);
    });
  }

  /**
   * Marks an obligation done with its outcome, durably (inside the caller's transaction when it records the
   * follow-on's journal outcome). Idempotent when already done with the same outcome; `JOURNAL_BAD_TRANSITION` when
   * done with another, `JOURNAL_NOT_FOUND` for an unknown id.
   */
  complete(id: number, outcome: string): void {
    checkId(id);
    checkText(outcome, 'outcome', 128);
    this.connection.atomically(true, () => {
      const r = this.row(id);
      if (r.done_at !== null) {
        if (r.outcome === outcome) return;
        throw new JournalError(
          'JOURNAL_BAD_TRANSITION',
          `follow-up ${id} is already done (${r.outcome ?? ''}), not "${outcome}"`,
        );
      }
      this.stmts.complete.run({ id, at: this.connection.now().getTime(), outcome });
    });
  }

  /**
   * Records a try that did not finish the obligation (refused, unknown outcome, gateway unreachable) and when to try
   * again, durably: `attempts` grows by one so that the caller can space and bound its retries (issue 11: a refused
   * reversal was retried 29 times in 15 s). `JOURNAL_BAD_TRANSITION` when it is already done.
   */
  postpone(id: number, dueAtMs: number, error: string): FollowUp {
    checkId(id);
    checkEpochMs(dueAtMs, 'dueAtMs');
    checkText(error, 'error', 512);
    return this.connection.atomically(true, () => {
      const r = this.row(id);
      if (r.done_at !== null)
        throw new JournalError(
          'JOURNAL_BAD_TRANSITION',
          `follow-up ${id} is already done (${r.outcome ?? ''})`,
        );
      this.stmts.postpone.run({ id, due: dueAtMs, error });
      return toFollowUp(this.row(id));
    });
  }

  /**
   * Makes an open obligation due no later than `dueAtMs` (epoch milliseconds), durably: a second reason to do it sooner
   * than the first asked (a meter session's release written due at the end of the capture window, whose reversal was
   * then refused for now). Neither its attempts nor its last error change; nothing happens to one done or due earlier.
   * `JOURNAL_NOT_FOUND` for an unknown id.
   */
  dueBy(id: number, dueAtMs: number): void {
    checkId(id);
    checkEpochMs(dueAtMs, 'dueAtMs');
    this.connection.atomically(true, () => {
      this.row(id);
      this.stmts.dueBy.run({ id, due: dueAtMs });
    });
  }

  private row(id: number): Row {
    const r = this.stmts.byId.get(id);
    if (r === undefined) throw new JournalError('JOURNAL_NOT_FOUND', `no follow-up ${id}`);
    return r;
  }
}
