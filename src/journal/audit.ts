import type Database from 'better-sqlite3';
import { redactString, redactValue } from '../log/index.js';
import { JournalError } from './errors.js';
import { isoTime } from './iso-time.js';
import { checkEpochMs, checkObject, checkText, readOn, type JournalConnection } from './field-checks.js';
import { migration0007 } from './migrations/0007-audit-log.js';
import { openJournalReadOnly, readOnlyStore } from './read-only.js';
import { FEE_SHORTFALL, SHORTFALL_ACKNOWLEDGED } from './migrations/lookup-indexes.js';

/** Who did it: the operator behind the PIN, the terminal itself (recovery, start), the operator's fleet (MQTT). */
export const AUDIT_ACTORS = ['operator', 'system', 'fleet'] as const;
export type AuditActor = (typeof AUDIT_ACTORS)[number];

/**
 * What was done. `sign-in` is a PIN check that opened an operator session, `sign-in-failed` a PIN check that failed
 * (wrong PIN; or operator mode locked after too many: the first refusal of a lockout, and one record summing up the
 * others, src/host/operator-desk.ts); `refund`, `void` an operator's refund or void with its outcome, and — actor
 * `system` — what became of one whose answer was lost once recovery resolved it; `export` a copy of this log taken out
 * of the terminal;
 * `link-paid`, `link-deactivate`, `link-reactivate` a payment link of the terminal paid, made INACTIVE (after payment,
 * cancel, timeout, recovery or by the operator) or made ACTIVE again; `fleet-command` a command of the fleet (MQTT)
 * carried out or refused (its id the subject, the command and its code in the record); `key-rotate` the at-rest key
 * replaced (`offline rotate-key`), with how many sealed values were sealed again; `fee-shortfall` a capture that took
 * less than its customer owed (a tap-and-go exit whose increment was not approved), written by the terminal with the
 * capture's outcome: the fee, what was captured and the shortfall, for the operator to collect or write off;
 * `fee-shortfall-acknowledge` the operator's acknowledgement of one (its subject the shortfall's;
 * {@link AuditStore.acknowledgeFeeShortfall}), which takes it off the count of those awaiting the operator;
 * `entry-refused` a tap-and-go entry the terminal refused after its verification and before any pre-authorization
 * (`CARD_ALREADY_INSIDE`: the card's stay is open), the verification's transactionId the subject; `hold-release` the
 * operator's release of an open tap-and-go stay whose car left without its exit (passback reset: its hold reversed,
 * nothing charged), the hold's id the subject; `credit` a standalone credit on the attended terminal admitted with the
 * operator PIN (`CREDIT_STARTED`: its amount and card follow; its outcome is the journal's); `stay-outstayed` the exit of
 * a tap-and-go stay whose hold was released at the end of its maximum stay while its car was inside, its fee charged by
 * a sale on the card presented (`ok`, the sale's transactionId the subject) or not (`refused`, the sale's reason), the
 * hold's id and the fee in the details — and, before any exit, the stay reaching its maximum with its car inside
 * (`refused`, code `MAXIMUM_STAY_REACHED`, the hold's authorization the subject, the fee up to the maximum);
 * `fingerprint-key-replace` a new card fingerprint key written in place of a lost one (`offline
 * replace-fingerprint-key`), with what no longer matches: counts, and the first hold ids and offline transactionIds.
 */
export const AUDIT_ACTIONS = [
  'sign-in',
  'sign-in-failed',
  'refund',
  'void',
  'queue-flush',
  'queue-acknowledge',
  'service-mode-on',
  'service-mode-off',
  'configuration-change',
  'recovery',
  'reader-self-test',
  'test-print',
  'reprint',
  'export',
  'link-paid',
  'link-deactivate',
  'link-reactivate',
  'fleet-command',
  'key-rotate',
  'fee-shortfall',
  'fee-shortfall-acknowledge',
  'entry-refused',
  'hold-release',
  'credit',
  'stay-outstayed',
  'fingerprint-key-replace',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** `ok` done; `refused` not done, by a rule (wrong PIN, a decline, not voidable …); `failed` could not be done. */
export const AUDIT_RESULTS = ['ok', 'refused', 'failed'] as const;
export type AuditResult = (typeof AUDIT_RESULTS)[number];

/** Longest `details` accepted, as JSON text: the log records facts, not payloads. */
export const AUDIT_DETAILS_MAX_CHARS = 2_048;
/** Most records one {@link AuditStore.list} returns. */
export const AUDIT_LIST_MAX = 100_000;

/** A record to append. */
export interface NewAuditRecord {
  actor: AuditActor;
  action: AuditAction;
  /** What it acted on, e.g. a transactionId or a configuration key (at most 128 characters). */
  subject?: string;
  result: AuditResult;
  /** The stable code of the result, e.g. `APPROVED`, `OPERATOR_PIN`, `NOT_VOIDABLE` (at most 64 characters). */
  code?: string;
  /**
   * A small JSON object of facts (amounts in minor units, counts, the old and new value of a setting). Card data is
   * redacted before it is written, whatever the caller passed (DESIGN.md, money safety rule 4); never pass a PIN.
   */
  details?: Record<string, unknown>;
}

/** A stored record. */
export interface AuditRecord {
  /** Increases with every record: the order of the log. */
  readonly id: number;
  /** ISO 8601 (UTC). */
  readonly time: string;
  readonly actor: AuditActor;
  readonly action: AuditAction;
  readonly subject?: string;
  readonly result: AuditResult;
  readonly code?: string;
  readonly details: Record<string, unknown>;
}

/** Which records {@link AuditStore.list} returns. */
export interface AuditQuery {
  /** Only records at or after this time (epoch milliseconds). */
  sinceMs?: number;
  /** At most this many: the newest ones (1…{@link AUDIT_LIST_MAX}, default 100). */
  limit?: number;
}

interface Row {
  id: number;
  at: number;
  actor: string;
  action: string;
  subject: string | null;
  result: string;
  code: string | null;
  details: string;
}

function toRecord(r: Row): AuditRecord {
  return {
    id: r.id,
    time: isoTime(r.at),
    actor: r.actor as AuditActor,
    action: r.action as AuditAction,
    ...(r.subject !== null ? { subject: r.subject } : {}),
    result: r.result as AuditResult,
    ...(r.code !== null ? { code: r.code } : {}),
    details: JSON.parse(r.details) as Record<string, unknown>,
  };
}

function checkOneOf<T extends string>(
  value: unknown,
  allowed: readonly T[],
  what: string,
): asserts value is T {
  if (!(allowed as readonly unknown[]).includes(value))
    throw new JournalError(
      'JOURNAL_INVALID',
      `${what} "${String(value)}" is not one of ${allowed.join(', ')}`,
    );
}

/** JSON text of `details` with card data redacted; `JOURNAL_INVALID` when it is not a small JSON object. */
function detailsJson(details: unknown): string {
  if (details === undefined) return '{}';
  checkObject(details, 'details');
  let text: string | undefined;
  try {
    // Redacted first (PANs, track data, card-named keys), then through JSON: undefined and functions drop out.
    text = JSON.stringify(redactValue(details));
  } catch (cause) {
    throw new JournalError('JOURNAL_INVALID', 'details must be plain JSON data', { cause });
  }
  if (text === undefined || text.length > AUDIT_DETAILS_MAX_CHARS)
    throw new JournalError(
      'JOURNAL_INVALID',
      `details must be a JSON object of at most ${AUDIT_DETAILS_MAX_CHARS} characters`,
    );
  return text;
}

function checkQuery(query: AuditQuery): { since: number; limit: number } {
  // Not checkObject: its assertion would narrow the fields below to unknown.
  if (typeof query !== 'object' || query === null)
    throw new JournalError('JOURNAL_INVALID', 'audit query must be an object');
  const { sinceMs, limit = 100 } = query;
  if (sinceMs !== undefined) checkEpochMs(sinceMs, 'sinceMs');
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > AUDIT_LIST_MAX)
    throw new JournalError('JOURNAL_INVALID', `limit must be a whole number from 1 to ${AUDIT_LIST_MAX}`);
  return { since: sinceMs ?? 0, limit };
}

/**
 * The fee shortfalls no operator has acknowledged: the first `fee-shortfall` record of each subject without an
 * acknowledgement of that subject that took (`audit_log_fee_shortfalls`, `audit_log_shortfalls_acknowledged`).
 */
const SHORTFALLS_AWAITING = `${FEE_SHORTFALL}
  AND id IN (SELECT MIN(id) FROM audit_log WHERE ${FEE_SHORTFALL} GROUP BY subject)
  AND subject NOT IN (SELECT subject FROM audit_log WHERE ${SHORTFALL_ACKNOWLEDGED} AND subject IS NOT NULL)`;

function listStatement(db: Database.Database) {
  // The newest `limit` records at or after `since`, returned oldest first (the order they happened in).
  return db.prepare<{ since: number; limit: number }, Row>(`SELECT * FROM (
      SELECT * FROM audit_log WHERE at >= @since ORDER BY id DESC LIMIT @limit
    ) ORDER BY id`);
}

/**
 * The append-only audit log of operator and terminal actions (issue 13, item 7) in the journal database (DESIGN.md,
 * money safety rule 6): who did what, to what, when, with which result. There is no way to change or remove a
 * record: this class has no UPDATE or DELETE, and the table's triggers refuse both (migration 0007).
 *
 * Every method is synchronous; {@link append} commits durably through {@link JournalConnection.atomically}, so a
 * record written inside the caller's transaction commits or rolls back with it.
 */
export class AuditStore {
  private readonly stmts;

  constructor(private readonly connection: JournalConnection) {
    const db = connection.db;
    this.stmts = {
      insert: db.prepare<{
        at: number;
        actor: string;
        action: string;
        subject: string | null;
        result: string;
        code: string | null;
        details: string;
      }>(`INSERT INTO audit_log (at, actor, action, subject, result, code, details)
        VALUES (@at, @actor, @action, @subject, @result, @code, @details)`),
      byId: db.prepare<[number], Row>('SELECT * FROM audit_log WHERE id = ?'),
      list: listStatement(db),
      shortfallsAwaiting: db.prepare<[], Row>(
        `SELECT * FROM audit_log WHERE ${SHORTFALLS_AWAITING} ORDER BY id`,
      ),
      shortfallsAwaitingCount: db.prepare<[], { n: number }>(
        `SELECT COUNT(*) AS n FROM audit_log WHERE ${SHORTFALLS_AWAITING}`,
      ),
      shortfallAwaiting: db.prepare<[string], { id: number }>(
        `SELECT id FROM audit_log WHERE ${SHORTFALLS_AWAITING} AND subject = ?`,
      ),
      detailsOf: db.prepare<[string, string | null], { details: string }>(
        'SELECT details FROM audit_log WHERE action = ? AND subject IS ?',
      ),
    };
  }

  /**
   * Appends one record, durably, stamped with the journal's clock, and returns it as stored. `subject`, `code` and
   * `details` are redacted of card data first (a PAN passed by mistake is stored as `[REDACTED]`, never in clear).
   * `JOURNAL_INVALID` for an unknown actor, action or result, or an over-long field.
   */
  append(input: NewAuditRecord): AuditRecord {
    checkObject(input, 'audit record');
    checkOneOf(input.actor, AUDIT_ACTORS, 'actor');
    checkOneOf(input.action, AUDIT_ACTIONS, 'action');
    checkOneOf(input.result, AUDIT_RESULTS, 'result');
    if (input.subject !== undefined) checkText(input.subject, 'subject', 128);
    if (input.code !== undefined) checkText(input.code, 'code', 64);
    const details = detailsJson(input.details);
    return this.connection.atomically(true, () => {
      const id = Number(
        this.stmts.insert.run({
          at: this.connection.now().getTime(),
          actor: input.actor,
          action: input.action,
          subject: input.subject === undefined ? null : redactString(input.subject),
          result: input.result,
          code: input.code === undefined ? null : redactString(input.code),
          details,
        }).lastInsertRowid,
      );
      const row = this.stmts.byId.get(id);
      if (row === undefined) throw new JournalError('JOURNAL_IO', `audit record ${id} was not written`);
      return toRecord(row);
    });
  }

  /**
   * Whether a record of `action` about `subject` already holds every one of `facts` in its details, each as it is
   * stored (card data redacted the way {@link append} redacts it): what a caller asks before it records a fact it may
   * be handed again (a notification delivered more than once). `subject` undefined: a record about no subject.
   * `JOURNAL_INVALID` for a bad field.
   */
  holds(action: AuditAction, subject: string | undefined, facts: Record<string, string | number>): boolean {
    checkOneOf(action, AUDIT_ACTIONS, 'action');
    if (subject !== undefined) checkText(subject, 'subject', 128);
    const wanted = Object.entries(JSON.parse(detailsJson(facts)) as Record<string, unknown>);
    const stored = subject === undefined ? null : redactString(subject);
    return readOn(this.connection, () =>
      this.stmts.detailsOf.all(action, stored).some((row) => {
        const details = JSON.parse(row.details) as Record<string, unknown>;
        return wanted.every(([key, value]) => details[key] === value);
      }),
    );
  }

  /**
   * The newest `limit` records (default 100) at or after `sinceMs`, oldest first. `JOURNAL_INVALID` for a bad query.
   */
  list(query: AuditQuery = {}): AuditRecord[] {
    const q = checkQuery(query);
    return readOn(this.connection, () => this.stmts.list.all(q).map(toRecord));
  }

  /**
   * The fees not collected in full (`fee-shortfall`) that no operator has acknowledged, one per subject (its first
   * record), oldest first: what the operator status counts ({@link feeShortfallsAwaitingCount}).
   */
  feeShortfallsAwaiting(): AuditRecord[] {
    return readOn(this.connection, () => this.stmts.shortfallsAwaiting.all().map(toRecord));
  }

  /** How many {@link feeShortfallsAwaiting} lists. */
  feeShortfallsAwaitingCount(): number {
    return readOn(this.connection, () => this.stmts.shortfallsAwaitingCount.get()?.n ?? 0);
  }

  /**
   * The operator (`actor`) has seen the fee shortfall of `subject` (the capture's transactionId, or the authorization's
   * for a fee not computable): appends `fee-shortfall-acknowledge`, `ok` (`ACKNOWLEDGED`) when it was awaiting one —
   * it leaves the count — or `refused` (`NOT_AWAITING_ACKNOWLEDGEMENT`: seen already, or no such shortfall), in one
   * transaction with that check. Returns whether it took. The record is the acknowledgement: it is written, or
   * nothing is acknowledged (`JOURNAL_IO`).
   */
  acknowledgeFeeShortfall(subject: string, actor: AuditActor): boolean {
    checkText(subject, 'subject', 128);
    return this.connection.atomically(true, () => {
      const awaiting = this.stmts.shortfallAwaiting.get(subject) !== undefined;
      this.append({
        actor,
        action: 'fee-shortfall-acknowledge',
        subject,
        result: awaiting ? 'ok' : 'refused',
        code: awaiting ? 'ACKNOWLEDGED' : 'NOT_AWAITING_ACKNOWLEDGEMENT',
      });
      return awaiting;
    });
  }
}

/** A read-only view of the audit log of a journal file (see {@link openAuditLogReadOnly}). */
export interface AuditLogReader {
  /** As {@link AuditStore.list}. */
  list(query?: AuditQuery): AuditRecord[];
  /** As {@link AuditStore.feeShortfallsAwaiting}. */
  feeShortfallsAwaiting(): AuditRecord[];
  close(): void;
}

/**
 * Opens the audit log of the journal at `path` read-only, for `parking-terminal audit` and `shortfalls list` while the
 * terminal runs: no write, no migration, no schema rewrite, no sender lock (SQLite's WAL mode lets a reader in beside
 * the writer). Its reads name no column of a rewrite; the fee shortfalls' indexes a journal not yet rewritten lacks
 * only make them slower. A journal older than the audit log (schema before migration 0007) has no records yet: an
 * empty log. `JOURNAL_IO` when the file cannot be opened, `JOURNAL_MIGRATION` when a newer terminal wrote it.
 */
export function openAuditLogReadOnly(path: string, options: { busyTimeoutMs?: number } = {}): AuditLogReader {
  const journal = openJournalReadOnly(path, migration0007.version, options);
  if (journal === undefined)
    return {
      list: (query = {}) => (checkQuery(query), []),
      feeShortfallsAwaiting: () => [],
      close: () => undefined,
    };
  const store = readOnlyStore(journal, path, (j) => new AuditStore(j));
  return {
    list: (query) => store.list(query),
    feeShortfallsAwaiting: () => store.feeShortfallsAwaiting(),
    close: () => journal.close(),
  };
}
