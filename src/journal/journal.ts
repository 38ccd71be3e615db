import { closeSync, fdatasync, fdatasyncSync, openSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { containsCardNumber } from '../emv/index.js';
import { currencyByAlpha, MAX_MINOR } from '../money/index.js';
import { silentLogger, type Logger } from '../log/index.js';
import { makeDirectory } from '../config/durable-file.js';
import { JournalError } from './errors.js';
import { readOn, type JournalConnection } from './field-checks.js';
import { migrate, migrationNeeded } from './migrations/index.js';
import { APPROVED_PREAUTH } from './migrations/lookup-indexes.js';
import { isoTime } from './iso-time.js';
import {
  AMOUNT_REQUIRED,
  needsOwnTransactionId,
  REVERSAL_REFUSALS_RELEASED,
  declineHolds,
  SERVICE_NAMES,
  SERVICE_ROLE,
} from '../vocabulary/services.js';
import { approvalCodeOf, CARD_NUMBER_LONG } from '../vocabulary/approval-code.js';

/** A text as an SQL string literal. */
function sqlText(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/**
 * The refusal of a reversal `r` that means its authorization is released already: the vocabulary's
 * `reversalRefusalReleased`, in SQL, built from the vocabulary's own set of reasons (one list, not a copy).
 */
const REVERSAL_REFUSED_RELEASED = `(r.state = 'declined' OR r.state = 'rejected')
                AND r.reason IN (${[...REVERSAL_REFUSALS_RELEASED].map(sqlText).join(', ')})`;

/** `how` of an entry that provably never left the terminal; it frees the transactionId for a later send. */
export const NOT_SENT = 'not-sent';

/**
 * The rule of an unsettled authorization (see {@link SqliteJournal.unsettledAuthorizations}), over `journal_entries p`:
 * an approved pre-authorization with neither a capture that stands (approved, or left in flight and found standing by
 * recovery: its timeout void refused NOT_VOIDABLE, see {@link resolvedStanding}) and is not voided, nor a reversal
 * approved, taken over by recovery, or refused because the authorization is released already
 * ({@link REVERSAL_REFUSED_RELEASED}). A reversal that provably never left the terminal (resolved {@link NOT_SENT}: the
 * gateway could not be reached, or refused the terminal's credentials unprocessed) released nothing.
 * One text for the statement of every authorization and that of one.
 */
const UNSETTLED_AUTHORIZATION = `${APPROVED_PREAUTH}
          AND transaction_id IS NOT NULL AND gateway_id IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM journal_entries r
            WHERE r.referenced_transaction_id = p.transaction_id AND r.referenced_transaction_id IS NOT NULL
              AND (r.service = 'reversal' OR r.service = 'timeout-reversal')
              AND (r.state = 'approved' OR r.state = 'unknown'
                OR (r.state = 'resolved' AND r.resolution IS NOT '${NOT_SENT}')
                OR (${REVERSAL_REFUSED_RELEASED})))
          AND NOT EXISTS (SELECT 1 FROM journal_entries c
            WHERE c.referenced_transaction_id = p.transaction_id AND c.referenced_transaction_id IS NOT NULL
              AND c.service = 'capture'
              AND (c.state = 'approved' OR (c.state = 'resolved' AND c.resolution = 'not-voidable'))
              AND NOT EXISTS (SELECT 1 FROM journal_entries v
                WHERE v.referenced_transaction_id = c.transaction_id AND v.referenced_transaction_id IS NOT NULL
                  AND (v.service = 'void-capture' OR v.service = 'timeout-void')
                  AND (v.state = 'approved' OR (v.state = 'resolved' AND v.resolution = 'timeout-void'))))`;

/** pending → sent → approved | declined | rejected | unknown; pending, sent and unknown → resolved (with how). */
export type JournalState = 'pending' | 'sent' | 'approved' | 'declined' | 'rejected' | 'unknown' | 'resolved';

/** A request about to be sent, as {@link Journal.begin} takes it (the gateway client's prepared request fits). */
export interface BeginEntry {
  /** clientReferenceInformation.transactionId of an original request (required for originals, gateway.md §2). */
  transactionId?: string;
  /** transactionId of the original a timeout reversal/void (or a reversal, void, incremental) refers to. */
  referencedTransactionId?: string;
  /** Gateway client service name, e.g. `preauth`, `capture`, `timeout-void` (spec 001 comments table). */
  service: string;
  /** clientReferenceInformation.comments as sent. */
  comments: string;
  method: string;
  path: string;
  /**
   * The exact request bytes. The journal records their length only, never the bytes: recovery works from the clear
   * columns (a timeout reversal or void is keyed by the transactionId, never a resend), and card data that is not
   * needed is not kept (rule 4). A stored offline payment keeps its bytes, sealed, in its own row.
   */
  body: Buffer;
  /** Requested amount in minor units of `currency` (for an incremental authorization: the additional amount). */
  amountMinor?: number;
  /** ISO 4217 alpha code of `amountMinor`. */
  currency?: string;
  /** The parking flow (session) the request belongs to. */
  flowId?: string;
  /** Gateway id of the payment a follow-on acts on (capture, reversal, incremental, refund, void). */
  parentGatewayId?: string;
  /** First 6 and last 4 digits at most; anything showing more is refused. */
  maskedPan?: string;
  /** Whether the request can move money. Money-moving writes are synced to disk (synchronous=FULL) before returning. */
  moneyMoving: boolean;
  /** For a resolution request: the id of the entry it resolves. */
  resolvesEntryId?: number;
  /**
   * Begun already marked sent at this time: the caller commits the begin durably right before the first byte (a
   * claimed offline forward), so that one commit is both its begin and its mark.
   */
  sentAt?: Date;
}

/** One journal row. Never holds card data: the request bytes are not kept (their length is). */
export interface JournalEntry {
  readonly id: number;
  readonly transactionId?: string;
  readonly referencedTransactionId?: string;
  readonly service: string;
  readonly comments: string;
  readonly method: string;
  readonly path: string;
  readonly amountMinor?: number;
  readonly currency?: string;
  readonly flowId?: string;
  readonly parentGatewayId?: string;
  readonly maskedPan?: string;
  readonly moneyMoving: boolean;
  readonly state: JournalState;
  /** Gateway `id` from the answer. */
  readonly gatewayId?: string;
  /** Gateway `status` from the answer, e.g. AUTHORIZED, DECLINED, REVERSED. */
  readonly status?: string;
  readonly httpStatus?: number;
  /**
   * The amount the answer states, minor units: an authorization's authorized amount (incremental: the new total); for
   * any other service the amount it processed when the answer says (a capture's captured amount, a refund's refunded
   * amount, a reversal's reversed amount). See {@link answeredAmountOf}.
   */
  readonly authorizedMinor?: number;
  /** Decline or rejection reason, or what made the outcome unknown. */
  readonly reason?: string;
  /** The issuer's approval code of the answer (`processorInformation.approvalCode`), for the receipt. */
  readonly approvalCode?: string;
  /** What a receipt states of the card the request was made with (see {@link ReceiptCardFacts}). */
  readonly card?: ReceiptCardFacts;
  /** What the transaction's receipt stated beyond its facts, once issued (see {@link IssuedReceiptNote}). */
  readonly receipt?: IssuedReceiptNote;
  /** How the entry was resolved (state 'resolved'), e.g. `timeout-reversal`, `not-sent`. */
  readonly resolution?: string;
  /** The entry (a resolution request) whose success resolved this one. */
  readonly resolvedByEntryId?: number;
  /** For a resolution request: the entry it resolves. */
  readonly resolvesEntryId?: number;
  /** Length in bytes of the request body as sent. */
  readonly bodyLength: number;
  /** ISO 8601 instants. */
  readonly createdAt: string;
  readonly sentAt?: string;
  readonly outcomeAt?: string;
  readonly resolvedAt?: string;
}

/**
 * What a receipt states of the card a request was made with (kiosk.md §3): how it was read, its application and its
 * cardholder verification. Not card data: the AID and the label name the card's product, never the card (rule 4).
 */
export interface ReceiptCardFacts {
  readonly entryMode: 'contact' | 'contactless' | 'swiped' | 'msd';
  /** Application identifier (4F, or 84), upper-case hex, 5 to 16 bytes. */
  readonly aid?: string;
  /** Application label (50) as the receipt prints it, e.g. "VISA CREDIT". */
  readonly applicationLabel?: string;
  /** CVM results (9F34), upper-case hex, 3 bytes. */
  readonly cvmResults?: string;
}

/** A line of the machine's own on a receipt (`Ticket`, `Stay`), as the machine worded it. */
export interface ReceiptLine {
  readonly label: string;
  readonly value: string;
}

/**
 * What a transaction's receipt stated beyond the journal's facts of it, noted when the receipt is issued so that a copy
 * printed after a restart says what it said: the language the customer chose and the machine's own lines (a ticket and
 * its stay). Never card data: a line holding a card number is refused.
 */
export interface IssuedReceiptNote {
  /** The customer's language, a catalogue locale (`de_DE`). */
  readonly locale: string;
  readonly lines: readonly ReceiptLine[];
}

/** What came back for a request; `unknown` = no usable answer (timeout, reset after send, 5xx, undocumented code). */
export interface RecordedOutcome {
  state: 'approved' | 'declined' | 'rejected' | 'unknown';
  gatewayId?: string;
  status?: string;
  httpStatus?: number;
  /** Minor units: the amount the answer states (see {@link JournalEntry.authorizedMinor}). */
  authorizedMinor?: number;
  reason?: string;
  /** The answer's approval code: {@link receiptApprovalCode} says which the journal keeps. */
  approvalCode?: string;
  /** The receipt's view of the card the request was made with: {@link receiptCardFacts} says which it keeps. */
  card?: ReceiptCardFacts;
}

/** The durable write-ahead journal of every gateway request (DESIGN.md, money safety rules 1–3). */
export interface Journal {
  /**
   * Durably records a request BEFORE it is sent (state 'pending') and returns the entry. Throws `JOURNAL_DUPLICATE`
   * when the transactionId is already journaled, `JOURNAL_INVALID` for malformed input. Returns only once the row is
   * on disk (synchronous=FULL) when `moneyMoving`.
   */
  begin(entry: BeginEntry): JournalEntry;
  /**
   * pending → sent, at `at` (default now): just before the first byte goes out, or with the outcome in its commit
   * (`at` the time the send started). Idempotent on a 'sent' entry. Not synced by itself: recovery treats pending and
   * sent alike, and the next synced commit (the outcome) carries it to disk.
   */
  markSent(entryId: number, at?: Date): void;
  /**
   * pending|sent → the outcome's state, durably. `sentAt`:
   * when the request went out, for an entry not marked sent before (a live payment's mark, written with its outcome).
   */
  recordOutcome(entryId: number, outcome: RecordedOutcome, sentAt?: Date): void;
  /**
   * Notes on the live entry of `transactionId` what its receipt stated beyond its facts ({@link IssuedReceiptNote}),
   * once: the first receipt's note stays (a receipt issued again is a copy of it). Returns whether it was written
   * (false: no such entry, or noted already). `JOURNAL_INVALID` for a malformed note or one with a card number.
   */
  recordReceipt(transactionId: string, note: IssuedReceiptNote): boolean;
  /**
   * pending|sent|unknown → 'resolved' with `how` (and the resolution request that did it), durably.
   * Idempotent when already resolved the same way. `how` = {@link NOT_SENT} only from pending or sent.
   */
  resolve(entryId: number, how: string, resolvedByEntryId?: number): void;
  /** Entries in state pending, sent or unknown, oldest first. */
  inFlight(): JournalEntry[];
  get(entryId: number): JournalEntry | undefined;
  /** The live entry of that transactionId (the newest one when earlier sends were resolved as not sent). */
  findByTransactionId(id: string): JournalEntry | undefined;
  /**
   * Newest first; `limit` defaults to 100. `unsentAttempts: false` leaves out the resolution requests that provably
   * never left (resolved not-sent: recovery journals one per attempt while the gateway is down).
   */
  list(options?: { limit?: number; flowId?: string; unsentAttempts?: boolean }): JournalEntry[];
  counts(): { entries: number; unknown: number; inFlight: number };
  close(): void;
}

export interface OpenJournalOptions {
  logger?: Logger;
  now?: () => Date;
  /** Milliseconds to wait for another process (e.g. `queue flush`) holding the write lock. Default 5000. */
  busyTimeoutMs?: number;
  /** Bounds of the group commit of {@link SqliteJournal.commitDurably} (config `journal.groupCommit`). */
  groupCommit?: Partial<GroupCommitOptions>;
  /**
   * Called once when a commit's log could not be synced to disk after the commit was made: from then on the journal
   * refuses every write (`JOURNAL_IO`) until it is opened again (see {@link SqliteJournal.commitDurably}). The
   * terminal goes out of service.
   */
  onSyncFailure?: (error: JournalError) => void;
  /** The log's disk sync on the thread pool and on the event loop: Node's `fdatasync` unless a test gives another. */
  logSync?: LogSync;
}

/** How the journal syncs its write-ahead log's file, in the background (thread pool) and inline. */
export interface LogSync {
  background(fd: number, done: (err: NodeJS.ErrnoException | null) => void): void;
  inline(fd: number): void;
}

const NODE_LOG_SYNC: LogSync = { background: fdatasync, inline: fdatasyncSync };

/**
 * Bounds of the journal's group commit: durable writes that arrive together share one transaction and one disk sync.
 */
export interface GroupCommitOptions {
  /** Most writes one commit carries; the rest wait for the next commit, which starts at once. 1 = a commit per write. */
  readonly maxBatch: number;
  /**
   * Longest a queued write waits for others before its commit starts, in milliseconds. 0: no timer. The commit starts
   * as soon as the writes queued in the current turn of the event loop are in (`setImmediate`) while another write is
   * expected ({@link SqliteJournal.expectWrite}: a request in flight whose answer will be journaled); with none
   * expected, as soon as the writes queued with it in the current run of microtasks are in: nothing else could join
   * it, and waiting for the turn would only delay it.
   */
  readonly maxWaitMs: number;
  /**
   * Longest a background write ({@link DurableWriteOptions.background}: a stored payment's forward, which nobody
   * waits for at the terminal) waits for others before its commit starts, in milliseconds, while no other write is
   * queued; a write someone waits for (a sale's) starts the commit at once as usual, and takes the background writes
   * queued with it. 0: background writes commit like any other. A forwarding run's commits then carry more forwards
   * each, and the fixed cost of a commit (the write lock, the log's frames of pages the forwards share, a disk sync)
   * is paid by fewer of them: with 32 forwards in flight to the sandbox, 1 ms made each commit carry 12 to 14
   * forwards instead of 8 to 9 and a forward cost 10 to 16 % less CPU here.
   */
  readonly backgroundWaitMs: number;
}

/**
 * Defaults of {@link GroupCommitOptions}: a commit per event-loop turn, at most 64 writes, background writes waiting
 * up to 1 ms for others.
 */
export const GROUP_COMMIT_DEFAULTS: GroupCommitOptions = { maxBatch: 64, maxWaitMs: 0, backgroundWaitMs: 1 };

/** Milliseconds without a write after which the journal checkpoints its log. */
const IDLE_CHECKPOINT_MS = 1_000;

/** {@link DurableWriteOptions} of a write that is one statement (or makes its own transaction). */
export const ONE_STATEMENT: DurableWriteOptions = { oneStatement: true };

/** {@link DurableWriteOptions} of a background write (a stored payment's forward). */
export const BACKGROUND_WRITE: DurableWriteOptions = { background: true };

/**
 * Longest a commit's log sync may wait on the thread pool before it is done on the event loop instead (the pool's
 * four threads may all be taken, e.g. by host-name lookups that hang while the network is down).
 */
const SYNC_ON_POOL_MAX_MS = 100;

/** A commit written to the log whose sync runs on the thread pool. */
interface SyncInFlight {
  /** Settles the commit's callers: resolved, or all rejected when the sync failed. */
  readonly settle: (syncError?: unknown) => void;
  /** Syncs inline if the pool has not done it in {@link SYNC_ON_POOL_MAX_MS}. */
  readonly fallback: NodeJS.Timeout;
}

/** Commits one turn of the event loop may start in microtasks before the next waits for the turn. */
const MICROTASK_COMMITS_PER_TURN = 16;

/**
 * Queues a commit's microtask with `then`: `queueMicrotask` wraps each callback in an AsyncResource (an async id and
 * the hooks' checks), which cost 0.02 of `journal.append`'s ratio to a bare insert, measured in alternating chunks.
 */
const SETTLED = Promise.resolve();

/** How a write given to {@link SqliteJournal.commitDurably} is made atomic. */
export interface DurableWriteOptions {
  /**
   * The write is one SQL statement (or a transaction of its own, e.g. {@link SqliteJournal.begin}): SQLite makes it
   * atomic by itself. Alone in a commit it runs without BEGIN … COMMIT around it, as its own durable autocommit; in a
   * batch it needs no savepoint (a statement that fails is undone alone). JavaScript around it must write nothing.
   */
  readonly oneStatement?: boolean;
  /**
   * Nobody waits for this write at the terminal (a stored payment's forward): its commit may wait up to
   * {@link GroupCommitOptions.backgroundWaitMs} for other writes to share it, unless a write someone waits for is
   * queued meanwhile. As durable as any other: its caller resumes only once its commit is on disk.
   */
  readonly background?: boolean;
}

/** A write queued for the next group commit, with its caller's promise. */
interface QueuedWrite {
  readonly write: () => unknown;
  readonly oneStatement: boolean;
  readonly background: boolean;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

interface Row {
  id: number;
  transaction_id: string | null;
  referenced_transaction_id: string | null;
  service: string;
  comments: string;
  method: string;
  path: string;
  body_length: number;
  amount_minor: number | null;
  currency: string | null;
  flow_id: string | null;
  parent_gateway_id: string | null;
  masked_pan: string | null;
  money_moving: number;
  state: JournalState;
  gateway_id: string | null;
  status: string | null;
  http_status: number | null;
  authorized_minor: number | null;
  reason: string | null;
  // The receipt facts (migrations/receipt-facts.ts) and the receipt note (migrations/receipt-copies.ts) are absent
  // from a row read read-only from a journal the terminal has not rewritten yet (see entriesOfFlow).
  approval_code?: string | null;
  card_entry_mode?: ReceiptCardFacts['entryMode'] | null;
  card_aid?: string | null;
  card_label?: string | null;
  card_cvm_results?: string | null;
  receipt_locale?: string | null;
  receipt_lines?: string | null;
  resolution: string | null;
  resolved_by_entry_id: number | null;
  resolves_entry_id: number | null;
  created_at: number;
  sent_at: number | null;
  outcome_at: number | null;
  resolved_at: number | null;
}

const MASKED_PAN = /^\d{0,6}[^\d]{1,19}\d{0,4}$/;

function iso(ms: number | null): string | undefined {
  return ms === null ? undefined : isoTime(ms);
}

function opt<T>(v: T | null | undefined): T | undefined {
  return v === null ? undefined : v;
}

function cardOf(r: Row): ReceiptCardFacts | undefined {
  const entryMode = opt(r.card_entry_mode);
  if (entryMode === undefined) return undefined;
  const aid = opt(r.card_aid);
  const applicationLabel = opt(r.card_label);
  const cvmResults = opt(r.card_cvm_results);
  return {
    entryMode,
    ...(aid !== undefined ? { aid } : {}),
    ...(applicationLabel !== undefined ? { applicationLabel } : {}),
    ...(cvmResults !== undefined ? { cvmResults } : {}),
  };
}

/** The entries of one flow, newest first: {@link SqliteJournal.list} with a flowId, and {@link entriesOfFlow}. */
const FLOW_ENTRIES_SQL = 'SELECT * FROM journal_entries WHERE flow_id = ? ORDER BY id DESC LIMIT ?';

/**
 * The entries of the flow `flowId`, newest first, at most `limit`, as {@link SqliteJournal.list} reads them, on any
 * connection to the journal: one opened read-only ({@link openJournalReadOnly}) too. Names no column of a schema
 * rewrite: from a journal the terminal has not rewritten yet, an entry has no receipt facts.
 */
export function entriesOfFlow(connection: JournalConnection, flowId: string, limit: number): JournalEntry[] {
  return readOn(connection, () =>
    connection.db.prepare<[string, number], Row>(FLOW_ENTRIES_SQL).all(flowId, limit).map(toEntry),
  );
}

/**
 * The receipt note of a row ({@link SqliteJournal.recordReceipt} checked it as it wrote it); undefined without one, or
 * when what is stored is not a list of lines (a copy is then printed without them, never lost for it).
 */
function receiptOf(r: Row): IssuedReceiptNote | undefined {
  const locale = opt(r.receipt_locale);
  const stored = opt(r.receipt_lines);
  if (locale === undefined || stored === undefined) return undefined;
  let lines: unknown;
  try {
    lines = JSON.parse(stored);
  } catch {
    return undefined;
  }
  const isLine = (l: unknown): l is ReceiptLine =>
    typeof l === 'object' &&
    l !== null &&
    typeof (l as ReceiptLine).label === 'string' &&
    typeof (l as ReceiptLine).value === 'string';
  return Array.isArray(lines) && lines.every(isLine) ? { locale, lines } : undefined;
}

function toEntry(r: Row): JournalEntry {
  return {
    id: r.id,
    transactionId: opt(r.transaction_id),
    referencedTransactionId: opt(r.referenced_transaction_id),
    service: r.service,
    comments: r.comments,
    method: r.method,
    path: r.path,
    amountMinor: opt(r.amount_minor),
    currency: opt(r.currency),
    flowId: opt(r.flow_id),
    parentGatewayId: opt(r.parent_gateway_id),
    maskedPan: opt(r.masked_pan),
    moneyMoving: r.money_moving === 1,
    state: r.state,
    gatewayId: opt(r.gateway_id),
    status: opt(r.status),
    httpStatus: opt(r.http_status),
    authorizedMinor: opt(r.authorized_minor),
    reason: opt(r.reason),
    approvalCode: opt(r.approval_code),
    card: cardOf(r),
    receipt: receiptOf(r),
    resolution: opt(r.resolution),
    resolvedByEntryId: opt(r.resolved_by_entry_id),
    resolvesEntryId: opt(r.resolves_entry_id),
    bodyLength: r.body_length,
    createdAt: isoTime(r.created_at),
    sentAt: iso(r.sent_at),
    outcomeAt: iso(r.outcome_at),
    resolvedAt: iso(r.resolved_at),
  };
}

function invalid(message: string): JournalError {
  return new JournalError('JOURNAL_INVALID', message);
}

/** Whether `value` is a string of 1 to `max` characters. */
function isText(value: unknown, max: number): boolean {
  return typeof value === 'string' && value.length > 0 && value.length <= max;
}

function textError(what: string, max: number): JournalError {
  return invalid(`${what} must be a non-empty string of at most ${max} characters`);
}

function checkAmount(amountMinor: number | undefined, what: string): void {
  if (amountMinor === undefined) return;
  if (!Number.isSafeInteger(amountMinor) || amountMinor < 0 || amountMinor > MAX_MINOR)
    throw new JournalError(
      'JOURNAL_INVALID',
      `${what} must be an integer number of minor units (0…${MAX_MINOR})`,
    );
}

function checkText(value: unknown, what: string, max = 256): void {
  if (!isText(value, max)) throw textError(what, max);
}

function checkOptionalText(value: unknown, what: string, max = 256): void {
  if (value !== undefined) checkText(value, what, max);
}

/** What the entry of a money-moving service must carry so that recovery can undo it (gateway.md §2). */
interface RecoveryNeeds {
  /** Recovered by its own transactionId. */
  readonly ownTransactionId: boolean;
  /** A timeout request: names the transactionId it reverses or voids. */
  readonly referencedTransactionId: boolean;
  readonly amount: boolean;
  /** A follow-on: names its original by transactionId or gateway id. */
  readonly original: boolean;
}

/** {@link RecoveryNeeds} of each service, read once from the vocabulary: one lookup per begin. */
const RECOVERY_NEEDS: ReadonlyMap<string, RecoveryNeeds> = new Map(
  SERVICE_NAMES.map((service) => [
    service,
    {
      ownTransactionId: needsOwnTransactionId(service),
      referencedTransactionId: SERVICE_ROLE[service] === 'timeout',
      amount: AMOUNT_REQUIRED[service],
      original: SERVICE_ROLE[service] === 'follow-on',
    },
  ]),
);

/**
 * Refuses anything that could put card data into a clear column, and a money-moving entry recovery could not undo.
 * Every entry passes here before its commit: written as plain tests, in one function, the whole check costs less than
 * a microsecond. Also read by a caller that must know now that an entry it begins later will be taken (the offline
 * queue stores a payment only when its forward's entry is one).
 */
export function validateBegin(e: BeginEntry): void {
  if (typeof e !== 'object' || e === null) throw invalid('entry must be an object');
  if (!isText(e.service, 64)) throw textError('service', 64);
  if (!isText(e.method, 16)) throw textError('method', 16);
  if (!isText(e.path, 512)) throw textError('path', 512);
  if (typeof e.comments !== 'string' || e.comments.length > 256)
    throw invalid('comments must be a string of at most 256 characters');
  if (!Buffer.isBuffer(e.body)) throw invalid('body must be a Buffer');
  if (typeof e.moneyMoving !== 'boolean') throw invalid('moneyMoving must be a boolean');
  if (e.transactionId !== undefined && !isText(e.transactionId, 64)) throw textError('transactionId', 64);
  if (e.referencedTransactionId !== undefined && !isText(e.referencedTransactionId, 64))
    throw textError('referencedTransactionId', 64);
  if (e.flowId !== undefined && !isText(e.flowId, 128)) throw textError('flowId', 128);
  if (e.parentGatewayId !== undefined && !isText(e.parentGatewayId, 64))
    throw textError('parentGatewayId', 64);
  if (e.amountMinor !== undefined || e.currency !== undefined) {
    checkAmount(e.amountMinor, 'amountMinor');
    if (e.currency !== undefined && currencyByAlpha(e.currency) === undefined)
      throw invalid(`currency "${String(e.currency)}" is not an ISO 4217 code`);
    if ((e.amountMinor === undefined) !== (e.currency === undefined))
      throw invalid('amountMinor and currency go together');
  }
  if (e.maskedPan !== undefined && (typeof e.maskedPan !== 'string' || !MASKED_PAN.test(e.maskedPan)))
    throw invalid('maskedPan may show the first 6 and last 4 digits at most');
  if (e.resolvesEntryId !== undefined && !Number.isSafeInteger(e.resolvesEntryId))
    throw invalid('resolvesEntryId must be an entry id');
  if (e.sentAt !== undefined && (!(e.sentAt instanceof Date) || !Number.isFinite(e.sentAt.getTime())))
    throw invalid('sentAt must be a valid Date');
  if (!e.moneyMoving) return;
  // Every money-moving entry must be recoverable: recovery needs to know what undoes it (gateway.md §2).
  const needs = RECOVERY_NEEDS.get(e.service);
  if (needs === undefined) throw invalid(`money-moving service "${e.service}" has no recovery rule`);
  if (needs.ownTransactionId && e.transactionId === undefined)
    throw invalid(`${e.service} is recovered by its own transactionId and needs it`);
  if (needs.referencedTransactionId && e.referencedTransactionId === undefined)
    throw invalid(`${e.service} needs the referenced transactionId`);
  if (needs.amount && e.amountMinor === undefined)
    throw invalid(`${e.service} needs amountMinor and currency`);
  if (needs.original && e.referencedTransactionId === undefined && e.parentGatewayId === undefined)
    throw invalid(`${e.service} needs referencedTransactionId or parentGatewayId`);
}

const ENTRY_MODES: ReadonlySet<string> = new Set(['contact', 'contactless', 'swiped', 'msd']);
/** 5 to 16 bytes (EMV Book 1, 12.2.1). */
const AID = /^(?:[0-9A-F]{2}){5,16}$/;
/** A label as the receipt prints it: printable ASCII (tag 50 holds 1 to 16 characters). */
const APPLICATION_LABEL = /^[\x20-\x7e]{1,32}$/;
const CVM_RESULTS = /^[0-9A-F]{6}$/;

/**
 * The approval code the journal keeps of an answer ({@link approvalCodeOf}, the rule the gateway client reads it by);
 * undefined otherwise (the receipt leaves the line out rather than the outcome being refused).
 */
export function receiptApprovalCode(code: string | undefined): string | undefined {
  return approvalCodeOf(code);
}

/**
 * The receipt's view of a card the journal keeps: a known entry mode, and only the AID, label (no run of digits as long
 * as a card number, spaces and dashes aside) and CVM results of the expected shapes; undefined without an entry mode.
 */
export function receiptCardFacts(card: ReceiptCardFacts | undefined): ReceiptCardFacts | undefined {
  if (card === undefined || !ENTRY_MODES.has(card.entryMode)) return undefined;
  const { aid, applicationLabel: label, cvmResults } = card;
  const aidOk = typeof aid === 'string' && AID.test(aid);
  const labelOk =
    typeof label === 'string' &&
    APPLICATION_LABEL.test(label) &&
    !CARD_NUMBER_LONG.test(label.replace(/[\s-]/g, ''));
  const cvmOk = typeof cvmResults === 'string' && CVM_RESULTS.test(cvmResults);
  if ((aidOk || aid === undefined) && (labelOk || label === undefined) && (cvmOk || cvmResults === undefined))
    return card;
  return {
    entryMode: card.entryMode,
    ...(aidOk ? { aid } : {}),
    ...(labelOk ? { applicationLabel: label } : {}),
    ...(cvmOk ? { cvmResults } : {}),
  };
}

/** A catalogue locale (`de_DE`, `en`) or its BCP 47 form. */
const LOCALE = /^[a-z]{2,3}(?:[_-][A-Za-z0-9]{2,8}){0,2}$/;
/** Most machine lines a receipt note keeps: the machines write two or three. */
const MAX_RECEIPT_LINES = 16;

/**
 * Checks a receipt note ({@link IssuedReceiptNote}) and returns its lines as the journal stores them (JSON). Refuses
 * (`JOURNAL_INVALID`) a locale that is not a language tag, more than {@link MAX_RECEIPT_LINES} lines, a label of
 * more than 64 or a value of more than 256 characters, and a line that holds a card number (rule 4).
 */
function receiptNoteLines(note: IssuedReceiptNote): string {
  if (typeof note !== 'object' || note === null) throw invalid('receipt note must be an object');
  if (typeof note.locale !== 'string' || !LOCALE.test(note.locale))
    throw invalid('receipt locale must be a language tag such as de_DE');
  if (!Array.isArray(note.lines) || note.lines.length > MAX_RECEIPT_LINES)
    throw invalid(`receipt lines must be a list of at most ${MAX_RECEIPT_LINES}`);
  const lines = note.lines.map((line: unknown) => {
    const { label, value } = (typeof line === 'object' && line !== null ? line : {}) as Partial<ReceiptLine>;
    if (typeof label !== 'string' || !isText(label, 64)) throw textError('receipt line label', 64);
    if (typeof value !== 'string' || value.length > 256)
      throw invalid('receipt line value must be a string of at most 256 characters');
    if (containsCardNumber(label) || containsCardNumber(value))
      throw invalid('a receipt line must not hold a card number');
    return { label, value };
  });
  return JSON.stringify(lines);
}

function validateOutcome(o: RecordedOutcome): void {
  if (typeof o !== 'object' || o === null)
    throw new JournalError('JOURNAL_INVALID', 'outcome must be an object');
  switch (o.state) {
    case 'approved':
    case 'declined':
    case 'rejected':
    case 'unknown':
      break;
    default:
      throw new JournalError(
        'JOURNAL_INVALID',
        `outcome state "${String(o.state)}" is not one of approved, declined, rejected, unknown`,
      );
  }
  checkOptionalText(o.gatewayId, 'gatewayId', 64);
  checkOptionalText(o.status, 'status', 64);
  checkOptionalText(o.reason, 'reason', 512);
  checkAmount(o.authorizedMinor, 'authorizedMinor');
  if (o.approvalCode !== undefined && receiptApprovalCode(o.approvalCode) === undefined)
    throw invalid(
      'approvalCode must be printable ASCII without spaces, at most 32 characters, and no card number',
    );
  if (o.card !== undefined && receiptCardFacts(o.card) !== o.card)
    throw invalid(
      'card must be an entry mode with an AID (hex), a label without a card number and CVM results (3 bytes hex)',
    );
  if (
    o.httpStatus !== undefined &&
    (!Number.isInteger(o.httpStatus) || o.httpStatus < 100 || o.httpStatus > 599)
  )
    throw new JournalError('JOURNAL_INVALID', 'httpStatus must be an HTTP status code');
}

function isConstraint(e: unknown): boolean {
  return e instanceof Error && (e as { code?: unknown }).code === 'SQLITE_CONSTRAINT_UNIQUE';
}

/** A failed write as the journal reports it: `JOURNAL_DUPLICATE` for a unique transactionId, else `JOURNAL_IO`. */
function writeError(e: unknown): unknown {
  if (e instanceof JournalError) return e;
  if (isConstraint(e))
    return new JournalError('JOURNAL_DUPLICATE', 'that transactionId is already journaled', { cause: e });
  return new JournalError('JOURNAL_IO', 'journal write failed', { cause: e });
}

function checkGroupCommit(given: Partial<GroupCommitOptions> | undefined): GroupCommitOptions {
  const o = { ...GROUP_COMMIT_DEFAULTS, ...given };
  if (!Number.isSafeInteger(o.maxBatch) || o.maxBatch < 1)
    throw new JournalError('JOURNAL_INVALID', 'groupCommit.maxBatch must be a positive integer');
  if (!Number.isFinite(o.maxWaitMs) || o.maxWaitMs < 0)
    throw new JournalError('JOURNAL_INVALID', 'groupCommit.maxWaitMs must be a non-negative number');
  if (!Number.isFinite(o.backgroundWaitMs) || o.backgroundWaitMs < 0)
    throw new JournalError('JOURNAL_INVALID', 'groupCommit.backgroundWaitMs must be a non-negative number');
  return o;
}

/**
 * The SQLite journal: WAL mode, `synchronous=FULL` for every money-moving write (the commit is on disk when the call
 * returns) and `NORMAL` for the rest. One connection per process; several processes (the terminal and `queue flush`)
 * may share the file — SQLite's write lock serialises them and every state change is a conditional update.
 */
export class SqliteJournal implements Journal {
  /** The connection; the offline queue shares it so that its rows and journal rows change in one transaction. */
  readonly db: Database.Database;
  readonly logger: Logger;
  readonly now: () => Date;
  private sync: 'FULL' | 'NORMAL' = 'FULL';
  private closed = false;
  private lockHeld = false;
  private readonly groupCommit: GroupCommitOptions;
  /** Writes waiting for the next group commit, in the order they were queued. */
  private readonly queued: QueuedWrite[] = [];
  /** How many of {@link queued} are not background writes ({@link DurableWriteOptions.background}). */
  private queuedForeground = 0;
  private flushScheduled:
    | { kind: 'immediate'; handle: NodeJS.Immediate }
    | { kind: 'timer'; handle: NodeJS.Timeout }
    // Background writes alone in the queue, waiting up to backgroundWaitMs for others.
    | { kind: 'linger'; handle: NodeJS.Timeout }
    | { kind: 'microtask' }
    | undefined;
  /** Writes made so far, and that count when the idle check last looked and when the log was last checkpointed. */
  private writes = 0;
  private writesSeenIdle = 0;
  private writesCheckpointed = 0;
  private idleCheckpoints: NodeJS.Timeout | undefined;
  /** A one-statement write of the group commit runs alone, as its own autocommit: every commit in it is synced. */
  private committingAlone = false;
  /** Writes expected from elsewhere: requests sent whose outcome will be journaled when the answer comes. */
  private expectedWrites = 0;
  /** Commits started in a microtask since the event loop last turned (at most {@link MICROTASK_COMMITS_PER_TURN}). */
  private microtaskCommits = 0;
  private durableCommitCount = 0;
  /** A commit written to the log whose sync runs on the thread pool; its callers are settled when it is done. */
  private syncInFlight: SyncInFlight | undefined;
  /** The write-ahead log's file, for {@link syncInFlight} (null: it could not be opened; undefined: not yet). */
  private logFd: number | null | undefined;
  private readonly path: string;
  /** Set by {@link close}: the writes still queued commit with their sync inline. */
  private closing = false;
  /**
   * Set when the sync of a commit already made failed: the kernel may have dropped those pages of the log, and a
   * later commit, synced, would sit behind frames that are not on disk, so that SQLite's recovery after a power cut
   * would stop before it. Every write is refused from then on; opening the journal again recovers what is on disk.
   */
  private syncFailure: JournalError | undefined;
  private readonly onSyncFailure: ((error: JournalError) => void) | undefined;
  private readonly logSync: LogSync;
  /** Every entry with a lower id is final (approved, declined, rejected or resolved): {@link inFlight} starts here. */
  private inFlightFloor = 0;
  /** The entries with an id below `below` number `count` ({@link counts}): no entry is ever deleted, ids only grow. */
  private counted = { below: 0, count: 0 };
  private readonly stmts: ReturnType<SqliteJournal['prepare']>;
  /** One cached transaction wrapper: better-sqlite3 builds BEGIN/COMMIT statements per wrapper. */
  private readonly runInTransaction: Database.Transaction<(fn: () => unknown) => unknown>;

  constructor(path: string, options: OpenJournalOptions = {}) {
    this.logger = options.logger ?? silentLogger();
    this.now = options.now ?? (() => new Date());
    this.groupCommit = checkGroupCommit(options.groupCommit);
    this.onSyncFailure = options.onSyncFailure;
    this.logSync = options.logSync ?? NODE_LOG_SYNC;
    this.path = path;
    try {
      if (path !== ':memory:') makeDirectory(dirname(path));
      this.db = new Database(path);
    } catch (cause) {
      throw new JournalError('JOURNAL_IO', `cannot open the journal ${path}`, { cause });
    }
    try {
      this.db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
      this.db.pragma('journal_mode = WAL');
      this.db.pragma('synchronous = FULL');
      this.db.pragma('foreign_keys = ON');
      // Wiped card data (stored offline payments, kept tags) is overwritten, not left in free pages (money safety rule 4).
      this.db.pragma('secure_delete = ON');
      // Statement journals in memory: every write of a group commit runs in a savepoint, and every statement that may
      // abort (a CHECK, a UNIQUE, a foreign key) keeps a copy of each page it changes until it ends. On disk, a commit
      // of a few dozen writes spilled those copies to a temporary file, a write() per page: a claim of a stored payment
      // cost three times its statement. Never needed after a crash (the write-ahead log holds no uncommitted frame that
      // recovery would keep), and no page image of the journal is left in a temporary file.
      this.db.pragma('temp_store = MEMORY');
      // A journal another live process holds (the terminal; an older one whose update waits for its restart) is never
      // migrated under it: its statements would meet a schema they were not written for, and the file could no longer
      // go back to the release that holds it. Refused, nothing changed: the holder migrates it at its next start.
      if (migrationNeeded(this.db)) {
        const holder = liveLockHolder(this.db);
        if (holder)
          throw lockedBy(
            holder,
            `; its schema is older than this release's and is not migrated while it runs`,
          );
      }
      migrate(this.db);
      this.stmts = this.prepare();
      this.runInTransaction = this.db.transaction((fn: () => unknown) => fn());
      if (path !== ':memory:')
        this.idleCheckpoints = setInterval(() => this.checkpointIfIdle(), IDLE_CHECKPOINT_MS).unref();
    } catch (cause) {
      this.db.close();
      if (cause instanceof JournalError) throw cause;
      throw new JournalError('JOURNAL_IO', `cannot prepare the journal ${path}`, { cause });
    }
  }

  private prepare() {
    const db = this.db;
    return {
      insert: db.prepare<
        [
          string | null,
          string | null,
          string,
          string,
          string,
          string,
          number,
          number | null,
          string | null,
          string | null,
          string | null,
          string | null,
          number,
          number,
          number | null,
          'pending' | 'sent',
          number | null,
        ]
      >(`INSERT INTO journal_entries (
          transaction_id, referenced_transaction_id, service, comments, method, path, body_length, amount_minor,
          currency, flow_id, parent_gateway_id, masked_pan, money_moving, created_at, resolves_entry_id, state, sent_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
      get: db.prepare<[number], Row>('SELECT * FROM journal_entries WHERE id = ?'),
      markSent: db.prepare(
        `UPDATE journal_entries SET state = 'sent', sent_at = ? WHERE id = ? AND state = 'pending'`,
      ),
      // Positional (state, gateway_id, status, http_status, authorized_minor, reason, approval_code, card_entry_mode,
      // card_aid, card_label, card_cvm_results, outcome_at, sent_at, id): binding by name costs a property lookup per
      // column on every payment.
      outcome: db.prepare<
        [
          string,
          string | null,
          string | null,
          number | null,
          number | null,
          string | null,
          string | null,
          string | null,
          string | null,
          string | null,
          string | null,
          number,
          number | null,
          number,
        ]
      >(`UPDATE journal_entries SET state = ?, gateway_id = ?, status = ?, http_status = ?, authorized_minor = ?,
          reason = ?, approval_code = ?, card_entry_mode = ?, card_aid = ?, card_label = ?, card_cvm_results = ?,
          outcome_at = ?, sent_at = COALESCE(sent_at, ?)
        WHERE id = ? AND state IN ('pending', 'sent')`),
      // The first receipt's note stays: a receipt issued again is a copy of it.
      receiptNote: db.prepare<[string, string, number]>(
        'UPDATE journal_entries SET receipt_locale = ?, receipt_lines = ? WHERE id = ? AND receipt_locale IS NULL',
      ),
      resolve: db.prepare(`UPDATE journal_entries SET state = 'resolved', resolution = @how,
          resolved_by_entry_id = @by, resolved_at = @at
        WHERE id = @id AND state IN ('pending', 'sent', 'unknown')`),
      // From the oldest entry that may still be in flight (see inFlight): no index to keep on every write.
      inFlightFrom: db.prepare<[number], Row>(
        `SELECT * FROM journal_entries WHERE id >= ? AND state IN ('pending', 'sent', 'unknown') ORDER BY id`,
      ),
      lastId: db.prepare<[], { id: number | null }>('SELECT max(id) AS id FROM journal_entries'),
      // The newest entry with a transactionId, from two indexes: the unique one, which leaves out entries resolved as
      // never sent (their id may be used again), and the one of those entries. Each condition is the index's own, so
      // that SQLite proves it applies; `transaction_id = ?` alone read every entry ever written.
      byTx: db.prepare<{ tx: string }, Row>(`SELECT * FROM journal_entries WHERE id = (SELECT max(id) FROM (
          SELECT id FROM journal_entries
            WHERE transaction_id = @tx AND (resolution IS NULL OR resolution <> '${NOT_SENT}')
          UNION ALL
          SELECT id FROM journal_entries WHERE transaction_id = @tx AND resolution = '${NOT_SENT}'))`),
      byGatewayId: db.prepare<[string], Row>(
        'SELECT * FROM journal_entries WHERE gateway_id = ? ORDER BY id LIMIT 1',
      ),
      list: db.prepare<[number], Row>('SELECT * FROM journal_entries ORDER BY id DESC LIMIT ?'),
      listWithoutUnsentAttempts: db.prepare<[number], Row>(`SELECT * FROM journal_entries
        WHERE resolves_entry_id IS NULL OR resolution IS NOT '${NOT_SENT}' ORDER BY id DESC LIMIT ?`),
      listFlow: db.prepare<[string, number], Row>(FLOW_ENTRIES_SQL),
      // Two index searches: with `parent_gateway_id = @gid OR referenced_transaction_id = @tx`, SQLite read every
      // entry.
      increments: db.prepare<{ gid: string | null; tx: string | null }, Row>(`SELECT * FROM journal_entries
        WHERE id IN (
          SELECT id FROM journal_entries WHERE parent_gateway_id = @gid AND service = 'incremental'
          UNION ALL
          SELECT id FROM journal_entries
            WHERE referenced_transaction_id = @tx AND referenced_transaction_id IS NOT NULL AND service = 'incremental')
        ORDER BY id`),
      attempts: db.prepare<[number], Row>(
        'SELECT * FROM journal_entries WHERE resolves_entry_id = ? ORDER BY id',
      ),
      // The rule of `unsettledAuthorizations`. The approved pre-authorizations from their own index, each one's
      // follow-ons from journal_entries_referenced (`IS NOT NULL` lets SQLite use that partial index).
      unsettledAuthorizations: db.prepare<[], Row>(`SELECT * FROM journal_entries p
        WHERE ${UNSETTLED_AUTHORIZATION} ORDER BY p.id`),
      // The same rule for one authorization (its transactionId: the unique index).
      unsettledAuthorization: db.prepare<[string], Row>(`SELECT * FROM journal_entries p
        WHERE p.transaction_id = ? AND (p.resolution IS NULL OR p.resolution <> '${NOT_SENT}')
          AND ${UNSETTLED_AUTHORIZATION}`),
      // `IS NOT NULL` lets SQLite use the partial index journal_entries_referenced.
      referencing: db.prepare<[string], Row>(
        `SELECT * FROM journal_entries
          WHERE referenced_transaction_id = ? AND referenced_transaction_id IS NOT NULL ORDER BY id`,
      ),
      // From the entries counted already and the oldest that may be in flight (see counts): reading every entry
      // for every operator snapshot cost 100 ms at 200,000 entries.
      countsFrom: db.prepare<
        { counted: number; floor: number },
        { newer: number; last: number | null; unknown: number; inFlight: number; first: number | null }
      >(`SELECT
          (SELECT COUNT(*) FROM journal_entries WHERE id >= @counted) AS newer,
          (SELECT max(id) FROM journal_entries) AS last,
          COALESCE(SUM(state = 'unknown'), 0) AS unknown,
          COUNT(*) AS inFlight,
          min(id) AS first
        FROM journal_entries WHERE id >= @floor AND state IN ('pending', 'sent', 'unknown')`),
    };
  }

  private ensureOpen(): void {
    if (this.closed) throw new JournalError('JOURNAL_CLOSED', 'the journal is closed');
  }

  /**
   * Runs `fn` in one transaction whose commit is synced to disk (`full`) or not. Nested calls join the outer
   * transaction. SQLite failures become `JOURNAL_IO` (`JOURNAL_DUPLICATE` for a unique transactionId).
   */
  atomically<T>(full: boolean, fn: () => T): T {
    return this.write(full, () => this.runInTransaction.immediate(fn) as T);
  }

  /**
   * Runs `fn` (one statement, or a transaction of its own) with the wanted durability; maps SQLite failures.
   * A single INSERT is atomic on its own, so {@link begin} skips the explicit BEGIN/COMMIT round trip.
   */
  private write<T>(full: boolean, fn: () => T): T {
    this.ensureOpen();
    if (this.syncFailure) throw this.syncFailure;
    this.writes += 1;
    try {
      if (!this.db.inTransaction) {
        // A statement of a durable write that commits by itself (ONE_STATEMENT) is synced whatever it asks for, as a
        // statement inside the group commit's transaction is by that transaction's commit.
        const wanted = full || this.committingAlone ? 'FULL' : 'NORMAL';
        if (this.sync !== wanted) {
          // Not a prepared statement: SQLite applies `PRAGMA synchronous = …` when the statement is compiled, so a
          // kept statement's run() is a no-op the first time (and preparing both switches left the NORMAL one set).
          this.db.pragma(`synchronous = ${wanted}`);
          this.sync = wanted;
        }
      }
      return fn();
    } catch (e) {
      throw writeError(e);
    }
  }

  /**
   * Group commit: queues `write` (synchronous statements, e.g. {@link begin} or {@link recordOutcome}) for the next
   * durable commit and resolves with its result once that commit is on disk (`BEGIN IMMEDIATE` … `COMMIT` with
   * `synchronous=FULL`). Writes queued together — many forwards in flight, a sale and a recovery — share that one
   * transaction and its one disk sync; each caller resumes only after the COMMIT that includes its write returned.
   *
   * The commit starts once the writes queued in the current turn of the event loop are in, or `maxWaitMs` after the
   * first one (config `journal.groupCommit`), or, while only background writes are queued, `backgroundWaitMs` after
   * the first of them, and carries at most `maxBatch` writes in queue order. Each write runs in
   * its own savepoint: a write that throws is undone alone and its caller alone rejected with the error; when the
   * commit itself fails, nothing of the batch is written and every caller is rejected (`JOURNAL_IO`).
   */
  commitDurably<T>(write: () => T, options: DurableWriteOptions = {}): Promise<T> {
    if (this.closed) return Promise.reject(new JournalError('JOURNAL_CLOSED', 'the journal is closed'));
    if (this.syncFailure) return Promise.reject(this.syncFailure);
    const oneStatement = options.oneStatement === true;
    const background = options.background === true;
    return new Promise<T>((resolve, reject) => {
      this.queued.push({
        write,
        oneStatement,
        background,
        resolve: resolve as (value: unknown) => void,
        reject,
      });
      if (!background) this.queuedForeground += 1;
      this.scheduleFlush();
    });
  }

  /**
   * Why the journal refuses every write (a commit whose log could not be synced: {@link syncFailure}), until it is
   * opened again; undefined while it takes writes. Nothing in flight can be journaled any more meanwhile: only a
   * restart, whose recovery starts from what is on disk, brings the terminal back.
   */
  writeRefusal(): JournalError | undefined {
    return this.syncFailure;
  }

  /** Durable commits made so far by {@link commitDurably} (each is one disk sync of the write-ahead log). */
  get durableCommits(): number {
    return this.durableCommitCount;
  }

  /**
   * Says that a durable write will come from elsewhere (a request sent whose outcome is journaled when its answer
   * comes): until the returned call says it came (or will not), commits wait for the event loop's turn, so that the
   * writes of answers arriving together share one. Calling the returned function again does nothing.
   */
  expectWrite(): () => void {
    this.expectedWrites += 1;
    let pending = true;
    return () => {
      if (!pending) return;
      pending = false;
      this.expectedWrites -= 1;
    };
  }

  private scheduleFlush(): void {
    // The sync in flight schedules the next commit when it is done.
    if (this.syncInFlight) return;
    const full = this.queued.length >= this.groupCommit.maxBatch;
    const scheduled = this.flushScheduled;
    // A commit already scheduled stands, unless it waits on a timer and the batch is full, or it waits for more
    // background writes and one someone waits for has come.
    const sooner =
      scheduled?.kind === 'linger' ? full || this.queuedForeground > 0 : scheduled?.kind === 'timer' && full;
    if (scheduled !== undefined && !sooner) return;
    this.cancelFlush();
    if (!full && this.groupCommit.maxWaitMs > 0)
      this.flushScheduled = {
        kind: 'timer',
        handle: setTimeout(() => this.flush(), this.groupCommit.maxWaitMs),
      };
    else if (!full && this.queuedForeground === 0 && this.groupCommit.backgroundWaitMs > 0)
      this.flushScheduled = {
        kind: 'linger',
        handle: setTimeout(() => this.flush(), this.groupCommit.backgroundWaitMs),
      };
    else if (this.expectedWrites === 0 && this.microtaskCommits < MICROTASK_COMMITS_PER_TURN) {
      // Nothing else could join this commit: it starts once the writes queued with it in this run of microtasks are
      // in. Bounded, so that a caller writing in a loop still lets the event loop turn.
      if (this.microtaskCommits++ === 0) setImmediate(() => (this.microtaskCommits = 0));
      const token = { kind: 'microtask' } as const;
      this.flushScheduled = token;
      void SETTLED.then(() => {
        if (this.flushScheduled === token) this.flush();
      });
    } else this.flushScheduled = { kind: 'immediate', handle: setImmediate(() => this.flush()) };
  }

  /** The first `count` queued writes, taken off the queue. */
  private takeQueued(count: number): QueuedWrite[] {
    const taken = this.queued.splice(0, count);
    for (const w of taken) if (!w.background) this.queuedForeground -= 1;
    return taken;
  }

  private cancelFlush(): void {
    const scheduled = this.flushScheduled;
    if (scheduled?.kind === 'immediate') clearImmediate(scheduled.handle);
    else if (scheduled?.kind === 'timer' || scheduled?.kind === 'linger') clearTimeout(scheduled.handle);
    this.flushScheduled = undefined;
  }

  /**
   * Commits the next batch of queued writes in one durable transaction, then settles each caller once it is on disk.
   *
   * With no other write expected, the disk sync runs inline, in the COMMIT (synchronous=FULL): a write alone (a sale's)
   * resumes soonest that way. With requests in flight whose outcomes will be journaled ({@link expectWrite}), the
   * COMMIT writes the log without syncing it (synchronous=NORMAL) and the log file is synced on the thread pool, while
   * the event loop reads the answers that arrive meanwhile; no other commit starts until that sync is done, so those
   * answers' writes pile up for the next one, and every commit is on disk before the next begins (the log is written
   * in order, so a later durable commit never lands without an earlier one). Each caller resumes only after the sync.
   */
  private flush(): void {
    this.flushScheduled = undefined;
    // The sync in flight schedules the next commit when it is done.
    if (this.syncInFlight) return;
    const batch = this.takeQueued(this.groupCommit.maxBatch);
    if (batch.length === 0) return;
    const logFd = this.expectedWrites > 0 && !this.closing ? this.logFileForSync() : undefined;
    const inline = logFd === undefined;
    if (inline && this.queued.length > 0) this.scheduleFlush();
    const results: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    const only = batch.length === 1 ? batch[0] : undefined;
    if (only) {
      // A write alone needs no savepoint: if it throws, its transaction is rolled back and it is the only caller. One
      // statement needs no transaction either: it commits by itself (synced with synchronous=FULL, as a bare insert).
      this.committingAlone = inline && only.oneStatement;
      try {
        const value = this.write(
          inline,
          only.oneStatement ? only.write : () => this.runInTransaction.immediate(only.write),
        );
        if (inline) {
          this.durableCommitCount += 1;
          only.resolve(value);
          return;
        }
        results.push({ ok: true, value });
      } catch (e) {
        only.reject(writeError(e));
        if (!inline && this.queued.length > 0) this.scheduleFlush();
        return;
      } finally {
        this.committingAlone = false;
      }
    } else {
      try {
        this.write(inline, () =>
          this.runInTransaction.immediate(() => {
            for (const w of batch) {
              try {
                // Nested: a savepoint, rolled back alone when this write throws (one statement is undone alone anyway).
                results.push({
                  ok: true,
                  value: w.oneStatement ? w.write() : this.runInTransaction(w.write),
                });
              } catch (error) {
                results.push({ ok: false, error: writeError(error) });
              }
            }
          }),
        );
      } catch (e) {
        for (const w of batch) w.reject(e);
        if (!inline && this.queued.length > 0) this.scheduleFlush();
        return;
      }
    }
    const settle = (syncError?: unknown): void => {
      if (syncError !== undefined) {
        const error = this.syncFailed(syncError);
        for (const w of batch) w.reject(error);
        return;
      }
      this.durableCommitCount += 1;
      batch.forEach((w, i) => {
        const r = results[i];
        if (r?.ok) w.resolve(r.value);
        else w.reject(r?.error);
      });
    };
    if (inline) {
      settle();
      return;
    }
    // The thread pool may be busy for long (e.g. host-name lookups that hang while the network is down): after
    // SYNC_ON_POOL_MAX_MS the log is synced here instead, and the pool's answer, when it comes, is ignored.
    const sync: SyncInFlight = {
      settle,
      fallback: setTimeout(() => this.syncInline(sync), SYNC_ON_POOL_MAX_MS),
    };
    this.syncInFlight = sync;
    this.logSync.background(logFd, (err) => {
      if (this.syncInFlight !== sync) return; // synced and settled already (close, or the fallback)
      this.syncInFlight = undefined;
      clearTimeout(sync.fallback);
      settle(err ?? undefined);
      if (this.queued.length > 0 && !this.closed) this.scheduleFlush();
    });
  }

  /** Syncs the log of the commit whose sync is on the thread pool here, blocking, and settles its callers. */
  private syncInline(sync: SyncInFlight): void {
    if (this.syncInFlight !== sync) return;
    this.syncInFlight = undefined;
    clearTimeout(sync.fallback);
    let syncError: unknown;
    try {
      this.logSync.inline(this.logFd as number);
    } catch (e) {
      syncError = e;
    }
    sync.settle(syncError);
    if (this.queued.length > 0 && !this.closed && !this.closing) this.scheduleFlush();
  }

  /**
   * A commit was made but its log could not be synced: the journal refuses every write from now on (see
   * {@link syncFailure}), the writes queued behind it are rejected, and the terminal is told. Returns the error.
   */
  private syncFailed(cause: unknown): JournalError {
    if (this.syncFailure) return this.syncFailure;
    const error = new JournalError(
      'JOURNAL_IO',
      'the journal could not sync its log to disk; it takes no more writes until it is opened again',
      { cause },
    );
    this.syncFailure = error;
    this.cancelFlush();
    for (const w of this.takeQueued(this.queued.length)) w.reject(error);
    // One typed line: JOURNAL_IO and what the disk answered (its cause), no stack trace (src/log/logger.ts).
    this.logger.error(
      { err: error },
      'journal log sync failed: the journal refuses writes until it is reopened',
    );
    try {
      this.onSyncFailure?.(error);
    } catch (err) {
      this.logger.warn({ err }, 'the journal sync failure handler threw');
    }
    return error;
  }

  /**
   * The write-ahead log's file, opened once to be synced on the thread pool (an fdatasync of any descriptor of the
   * file syncs its data). SQLite keeps that file, emptied or not, while this connection is open. Undefined for a
   * journal in memory, or when it cannot be opened: the sync then runs inline.
   */
  private logFileForSync(): number | undefined {
    if (this.logFd === undefined && this.path !== ':memory:') {
      try {
        this.logFd = openSync(`${this.path}-wal`, 'r');
      } catch {
        this.logFd = null;
      }
    }
    return this.logFd ?? undefined;
  }

  private read<T>(fn: () => T): T {
    this.ensureOpen();
    try {
      return fn();
    } catch (e) {
      if (e instanceof JournalError) throw e;
      throw new JournalError('JOURNAL_IO', 'journal read failed', { cause: e });
    }
  }

  private row(entryId: number): Row {
    const r = this.stmts.get.get(entryId);
    if (!r) throw new JournalError('JOURNAL_NOT_FOUND', `no journal entry ${entryId}`);
    return r;
  }

  begin(entry: BeginEntry): JournalEntry {
    validateBegin(entry);
    const createdAt = this.now().getTime();
    const transactionId = entry.transactionId ?? null;
    const referencedTransactionId = entry.referencedTransactionId ?? null;
    const amountMinor = entry.amountMinor ?? null;
    const currency = entry.currency ?? null;
    const flowId = entry.flowId ?? null;
    const parentGatewayId = entry.parentGatewayId ?? null;
    const maskedPan = entry.maskedPan ?? null;
    const resolvesEntryId = entry.resolvesEntryId ?? null;
    const sentAt = entry.sentAt?.getTime() ?? null;
    // Positional, in the statement's column order: binding by name costs a property lookup per column.
    const insert = (): number =>
      Number(
        this.stmts.insert.run(
          transactionId,
          referencedTransactionId,
          entry.service,
          entry.comments,
          entry.method,
          entry.path,
          entry.body.length,
          amountMinor,
          currency,
          flowId,
          parentGatewayId,
          maskedPan,
          entry.moneyMoving ? 1 : 0,
          createdAt,
          resolvesEntryId,
          sentAt === null ? 'pending' : 'sent',
          sentAt,
        ).lastInsertRowid,
      );
    const id =
      resolvesEntryId === null
        ? this.write(entry.moneyMoving, insert)
        : this.atomically(entry.moneyMoving, () => {
            this.row(resolvesEntryId);
            return insert();
          });
    // The entry as inserted; reading it back would cost a query per append for nothing.
    return {
      id,
      transactionId: entry.transactionId,
      referencedTransactionId: entry.referencedTransactionId,
      service: entry.service,
      comments: entry.comments,
      method: entry.method,
      path: entry.path,
      amountMinor: entry.amountMinor,
      currency: entry.currency,
      flowId: entry.flowId,
      parentGatewayId: entry.parentGatewayId,
      maskedPan: entry.maskedPan,
      moneyMoving: entry.moneyMoving,
      state: sentAt === null ? 'pending' : 'sent',
      gatewayId: undefined,
      status: undefined,
      httpStatus: undefined,
      authorizedMinor: undefined,
      reason: undefined,
      approvalCode: undefined,
      card: undefined,
      resolution: undefined,
      resolvedByEntryId: undefined,
      resolvesEntryId: entry.resolvesEntryId,
      bodyLength: entry.body.length,
      createdAt: isoTime(createdAt),
      sentAt: iso(sentAt),
      outcomeAt: undefined,
      resolvedAt: undefined,
    };
  }

  /** {@link begin} through the group commit: resolves once the entry is on disk (shares the sync with others). */
  beginDurably(entry: BeginEntry): Promise<JournalEntry> {
    return this.commitDurably(() => this.begin(entry), ONE_STATEMENT);
  }

  markSent(entryId: number, at: Date = this.now()): void {
    // Not synced on its own: recovery treats a `pending` entry exactly like a `sent` one (it may have left), so
    // losing this write in a power cut changes nothing; the outcome's synced commit makes it durable with it. One
    // conditional UPDATE is atomic by itself: no transaction, and the row is read only when it did not apply.
    this.write(false, () => {
      if (this.stmts.markSent.run(at.getTime(), entryId).changes === 1) return;
      const r = this.row(entryId);
      if (r.state !== 'sent')
        throw new JournalError('JOURNAL_BAD_TRANSITION', `entry ${entryId} is ${r.state}, not pending`);
    });
  }

  recordOutcome(entryId: number, outcome: RecordedOutcome, sentAt?: Date): void {
    validateOutcome(outcome);
    const card = outcome.card;
    const update = (): void => {
      const changes = this.stmts.outcome.run(
        outcome.state,
        outcome.gatewayId ?? null,
        outcome.status ?? null,
        outcome.httpStatus ?? null,
        outcome.authorizedMinor ?? null,
        outcome.reason ?? null,
        outcome.approvalCode ?? null,
        card?.entryMode ?? null,
        card?.aid ?? null,
        card?.applicationLabel ?? null,
        card?.cvmResults ?? null,
        this.now().getTime(),
        sentAt?.getTime() ?? null,
        entryId,
      ).changes;
      if (changes !== 1)
        throw new JournalError(
          'JOURNAL_BAD_TRANSITION',
          `entry ${entryId} is ${this.row(entryId).state}: an outcome is recorded only for a pending or sent entry`,
        );
    };
    // Inside a transaction (a group commit) the outer commit decides durability, and one UPDATE is atomic by itself:
    // no savepoint, and no read to choose the durability.
    if (this.db.inTransaction) this.write(true, update);
    else this.atomically(this.read(() => this.row(entryId)).money_moving === 1, update);
  }

  recordReceipt(transactionId: string, note: IssuedReceiptNote): boolean {
    checkText(transactionId, 'transactionId', 64);
    const lines = receiptNoteLines(note);
    const entry = this.read(() => this.stmts.byTx.get({ tx: transactionId }));
    if (entry === undefined || entry.receipt_locale !== null) return false;
    // Not synced on its own, as no money depends on it: the next synced commit, or the checkpoint a second after the
    // last write, carries it to disk. One conditional UPDATE is atomic by itself.
    return this.write(false, () => this.stmts.receiptNote.run(note.locale, lines, entry.id).changes === 1);
  }

  resolve(entryId: number, how: string, resolvedByEntryId?: number): void {
    checkText(how, 'how', 128);
    this.atomically(true, () => {
      const r = this.row(entryId);
      if (r.state === 'resolved' && r.resolution === how) return;
      if (how === NOT_SENT && r.state !== 'pending' && r.state !== 'sent')
        throw new JournalError(
          'JOURNAL_BAD_TRANSITION',
          `entry ${entryId} is ${r.state}: it may have been sent`,
        );
      if (resolvedByEntryId !== undefined) this.row(resolvedByEntryId);
      const changes = this.stmts.resolve.run({
        id: entryId,
        how,
        by: resolvedByEntryId ?? null,
        at: this.now().getTime(),
      }).changes;
      if (changes !== 1)
        throw new JournalError(
          'JOURNAL_BAD_TRANSITION',
          `entry ${entryId} is ${r.state}: only in-flight entries resolve`,
        );
    });
  }

  /**
   * Scans from the oldest entry that may still be in flight: every entry below {@link inFlightFloor} is final, and no
   * final entry ever returns in flight; ids only grow (rows are never deleted). So no index of in-flight entries is
   * kept, which every begin and every outcome would write a page of. Both reads see one snapshot, and the floor moves
   * only from committed rows (not inside a transaction, whose rows a rollback may take back and whose ids reuse).
   */
  inFlight(): JournalEntry[] {
    return this.read(() => {
      const settled = !this.db.inTransaction;
      return this.runInTransaction(() => {
        const rows = this.stmts.inFlightFrom.all(this.inFlightFloor);
        if (settled) this.moveInFlightFloor(rows[0]?.id, () => this.stmts.lastId.get()?.id);
        return rows.map(toEntry);
      }) as JournalEntry[];
    });
  }

  /**
   * Moves {@link inFlightFloor} to the oldest entry a read found in flight, or past the newest entry (`last`) when it
   * found none. Only from committed rows: the callers do not call it inside a transaction.
   */
  private moveInFlightFloor(first: number | null | undefined, last: () => number | null | undefined): void {
    this.inFlightFloor = first ?? (last() ?? 0) + 1;
  }

  get(entryId: number): JournalEntry | undefined {
    return this.read(() => {
      const r = this.stmts.get.get(entryId);
      return r ? toEntry(r) : undefined;
    });
  }

  findByTransactionId(id: string): JournalEntry | undefined {
    return this.read(() => {
      const r = this.stmts.byTx.get({ tx: id });
      return r ? toEntry(r) : undefined;
    });
  }

  /** The first entry whose answer carried this gateway id (the original of a follow-on). */
  findByGatewayId(gatewayId: string): JournalEntry | undefined {
    return this.read(() => {
      const r = this.stmts.byGatewayId.get(gatewayId);
      return r ? toEntry(r) : undefined;
    });
  }

  /** The incremental authorizations journaled against an authorization, oldest first. */
  incrementsOf(authorization: JournalEntry): JournalEntry[] {
    return this.read(() =>
      this.stmts.increments
        .all({ gid: authorization.gatewayId ?? null, tx: authorization.transactionId ?? null })
        .map(toEntry),
    );
  }

  /**
   * The entries journaled against a transaction — its captures, increments, refunds, voids and reversals, and their
   * resolution attempts — oldest first, however old (one index search).
   */
  referencing(transactionId: string): JournalEntry[] {
    return this.read(() => this.stmts.referencing.all(transactionId).map(toEntry));
  }

  /**
   * The approved pre-authorizations nothing has settled, oldest first, however old: the holds on customers' cards
   * that only a capture or a reversal releases. Settled means:
   * - a capture that stands: approved, and not voided since (by the operator, or by recovery finishing a void whose
   *   answer was lost): voiding a capture leaves the hold in place (gateway.md §7); or
   * - a reversal approved, or taken over by recovery (resolved, or unknown: recovery resolves it by reversing this
   *   authorization; never one resolved not-sent, which provably never left and released nothing), or refused
   *   because the authorization is released already (the vocabulary's
   *   `reversalRefusalReleased`: declined or rejected AUTH_ALREADY_REVERSED or TRANSACTION_ALREADY_REVERSED_OR_SETTLED),
   *   which another reversal would only repeat.
   * One query over the index of approved pre-authorizations and, for each, the index of follow-ons.
   */
  unsettledAuthorizations(): JournalEntry[] {
    return this.read(() => this.stmts.unsettledAuthorizations.all().map(toEntry));
  }

  /**
   * Whether the journal shows this authorization settled ({@link unsettledAuthorizations}' rule): it is journaled as an
   * approved pre-authorization and that rule no longer counts it. False for an authorization the journal does not
   * hold as an approved pre-authorization (nothing to judge it by). One index search.
   */
  authorizationSettled(transactionId: string): boolean {
    return this.read(() => {
      const authorization = this.stmts.byTx.get({ tx: transactionId });
      if (authorization?.service !== 'preauth' || authorization.state !== 'approved') return false;
      return this.stmts.unsettledAuthorization.get(transactionId) === undefined;
    });
  }

  /**
   * Whether a reversal of this authorization is in flight: its request still out, or its outcome unknown and
   * recovery's to resolve (by a timeout reversal of the authorization). Another reversal meanwhile would be a resend
   * without a resolution (DESIGN.md rule 2), and a capture meanwhile may capture what that reversal released. Read
   * from the journal, so it holds across a restart: recovery at start resolves it first.
   */
  reversalInFlight(authorizationTransactionId: string): boolean {
    return this.referencing(authorizationTransactionId).some(
      (e) =>
        (e.service === 'reversal' || e.service === 'timeout-reversal') &&
        (e.state === 'pending' || e.state === 'sent' || e.state === 'unknown'),
    );
  }

  /**
   * The increments or captures of this authorization that are in flight, oldest first: a request still out, or an
   * outcome unknown and recovery's to resolve (a timeout reversal of an increment, a timeout void of a capture). Until
   * they are resolved, what the gateway holds on the authorization is not known: the journal counts approved
   * increments only, and a capture may have taken its part (and made the gateway release the rest) or not.
   */
  followOnsInFlight(authorizationTransactionId: string, service: 'incremental' | 'capture'): JournalEntry[] {
    return this.referencing(authorizationTransactionId).filter((e) => e.service === service && isInFlight(e));
  }

  /**
   * The reversals of this authorization the gateway refused (declined or rejected), oldest first — its answer in time or
   * late, whoever sent it. The tap-and-go expiry counts them against its attempts (src/host/hold-watch.ts): read from
   * the journal, the count holds across a hold watched again and across a restart.
   */
  refusedReversals(authorizationTransactionId: string): JournalEntry[] {
    return this.referencing(authorizationTransactionId).filter(
      (e) => e.service === 'reversal' && (e.state === 'declined' || e.state === 'rejected'),
    );
  }

  /** The resolution requests journaled for an entry, oldest first. */
  resolutionAttempts(entryId: number): JournalEntry[] {
    return this.read(() => this.stmts.attempts.all(entryId).map(toEntry));
  }

  list(options: { limit?: number; flowId?: string; unsentAttempts?: boolean } = {}): JournalEntry[] {
    const limit = options.limit ?? 100;
    if (!Number.isInteger(limit) || limit < 1 || limit > 1_000_000)
      throw new JournalError('JOURNAL_INVALID', 'limit must be an integer from 1 to 1000000');
    return this.read(() =>
      (options.flowId !== undefined
        ? this.stmts.listFlow.all(options.flowId, limit)
        : options.unsentAttempts === false
          ? this.stmts.listWithoutUnsentAttempts.all(limit)
          : this.stmts.list.all(limit)
      ).map(toEntry),
    );
  }

  /**
   * How many entries there are, and how many are in flight or unknown. Counts only what is newer than the last count
   * and than the oldest entry that may be in flight ({@link inFlight}): one statement, one snapshot. The marks move
   * only from committed rows, as the in-flight floor does (a rollback may take back rows of an open transaction).
   */
  counts(): { entries: number; unknown: number; inFlight: number } {
    return this.read(() => {
      const settled = !this.db.inTransaction;
      const c = this.stmts.countsFrom.get({ counted: this.counted.below, floor: this.inFlightFloor });
      const entries = this.counted.count + (c?.newer ?? 0);
      if (settled && c) {
        this.counted = { below: (c.last ?? 0) + 1, count: entries };
        this.moveInFlightFloor(c.first, () => c.last);
      }
      return { entries, unknown: c?.unknown ?? 0, inFlight: c?.inFlight ?? 0 };
    });
  }

  /**
   * Makes this process the journal's only sender (DESIGN.md rule 3: an entry has one owner at a time — across
   * processes too: a `queue flush` while the terminal runs would otherwise forward what the terminal's recovery may be
   * resolving). Throws `JOURNAL_LOCKED` naming the holder when another live process holds it; a holder that died
   * (a crash, a power cut) is taken over. Released by {@link close}.
   */
  acquireSenderLock(holder: string): void {
    this.atomically(true, () => {
      const held = liveLockHolder(this.db);
      if (held) throw lockedBy(held);
      this.db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)').run(
        SENDER_LOCK,
        JSON.stringify({
          pid: process.pid,
          holder,
          since: this.now().toISOString(),
          ...processIdentity(process.pid),
        }),
      );
    });
    this.lockHeld = true;
  }

  /**
   * Copies the write-ahead log into the database file (PASSIVE: never waits for anyone) once the journal has written
   * nothing for a whole {@link IDLE_CHECKPOINT_MS}: between customers, so that a payment seldom meets a checkpoint.
   * Otherwise the commit that crosses SQLite's 1,000 pages of log (about 185 sales) pays for one: two syncs and the
   * pages, 3–5 ms here. (A larger bound was measured and not kept: until the log file has reached it, each commit's
   * sync also writes the file's new size, and journal.append fell from 0.80 to 0.59–0.65 of the bare insert.)
   */
  private checkpointIfIdle(): void {
    const writes = this.writes;
    if (writes !== this.writesSeenIdle) {
      this.writesSeenIdle = writes;
      return;
    }
    if (
      writes === this.writesCheckpointed ||
      this.closed ||
      this.syncFailure ||
      this.db.inTransaction ||
      this.queued.length > 0
    )
      return;
    this.writesCheckpointed = writes;
    try {
      this.db.pragma('wal_checkpoint(PASSIVE)');
    } catch (err) {
      this.logger.warn({ err }, 'journal checkpoint failed; the next one retries');
    }
  }

  close(): void {
    if (this.closed) return;
    if (this.idleCheckpoints) clearInterval(this.idleCheckpoints);
    // Writes still queued are committed (their callers resume) before the connection goes: the commit whose sync is
    // in flight first, synced here.
    this.cancelFlush();
    this.closing = true;
    if (this.syncInFlight) this.syncInline(this.syncInFlight);
    while (this.queued.length > 0) {
      this.flush();
      this.cancelFlush();
    }
    // A journal whose log failed to sync writes nothing more: the lock names this process, which is gone at the next
    // open.
    if (this.lockHeld && !this.syncFailure) {
      try {
        this.db
          .prepare('DELETE FROM meta WHERE key = ? AND value LIKE ?')
          .run(SENDER_LOCK, `{"pid":${process.pid},%`);
      } catch (e) {
        this.logger.warn({ err: e }, 'could not release the journal lock');
      }
    }
    this.closed = true;
    if (typeof this.logFd === 'number')
      try {
        closeSync(this.logFd);
      } catch (err) {
        this.logger.warn({ err }, 'could not close the journal log file kept for syncing');
      }
    this.db.close();
  }
}

const SENDER_LOCK = 'sender_lock';

/**
 * The sender lock as its holder wrote it: pid, who, since when, and — where the system tells them — the boot it ran in
 * and when it started ({@link processIdentity}).
 */
interface SenderLock {
  pid: number;
  holder: string;
  since: string;
  boot?: string;
  started?: string;
}

function parseLock(value: string): SenderLock | undefined {
  try {
    const v = JSON.parse(value) as {
      pid?: unknown;
      holder?: unknown;
      since?: unknown;
      boot?: unknown;
      started?: unknown;
    };
    if (typeof v.pid !== 'number' || !Number.isSafeInteger(v.pid)) return undefined;
    return {
      pid: v.pid,
      holder: typeof v.holder === 'string' ? v.holder : 'another process',
      since: typeof v.since === 'string' ? v.since : '?',
      // Absent from a lock an earlier release wrote: its pid alone tells.
      ...(typeof v.boot === 'string' ? { boot: v.boot } : {}),
      ...(typeof v.started === 'string' ? { started: v.started } : {}),
    };
  } catch {
    return undefined;
  }
}

/**
 * The sender lock of the journal `db` when another live process holds it (a holder that died is none); undefined also
 * for a file without the `meta` table (older than migration 0002, or new), which no sender has locked.
 */
function liveLockHolder(db: Database.Database): SenderLock | undefined {
  const meta = db
    .prepare<[], { one: 1 }>("SELECT 1 AS one FROM sqlite_schema WHERE type = 'table' AND name = 'meta'")
    .get();
  if (meta === undefined) return undefined;
  const row = db
    .prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?')
    .get(SENDER_LOCK);
  const current = row ? parseLock(row.value) : undefined;
  return current && current.pid !== process.pid && holderRuns(current) ? current : undefined;
}

/**
 * Whether the process that wrote `lock` still runs. Its pid alone cannot tell once it died: after a reboot (a power
 * cut, the terminal's own crash) the pid is any other process's, which would keep the terminal from starting at all;
 * within a boot it may be given to a process started later. So the lock names the boot and the process's start too,
 * where the system tells them (Linux), and a pid alive in another boot or started at another time is not its holder.
 */
function holderRuns(lock: SenderLock): boolean {
  if (!processAlive(lock.pid)) return false;
  const { boot, started } = processIdentity(lock.pid);
  if (lock.boot !== undefined && boot !== undefined && lock.boot !== boot) return false;
  return lock.started === undefined || started === undefined || lock.started === started;
}

/**
 * The boot of this machine (`/proc/sys/kernel/random/boot_id`) and when process `pid` started in it, in clock ticks
 * since the boot (field 22 of `/proc/PID/stat`, read after the command name, which may hold spaces and parentheses);
 * each undefined where the system does not tell.
 */
function processIdentity(pid: number): { boot?: string; started?: string } {
  const read = (file: string): string | undefined => {
    try {
      return readFileSync(file, 'utf8');
    } catch {
      return undefined;
    }
  };
  const boot = read('/proc/sys/kernel/random/boot_id')?.trim();
  const stat = read(`/proc/${pid}/stat`);
  const started = stat?.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  return {
    ...(boot ? { boot } : {}),
    ...(started !== undefined && /^\d+$/.test(started) ? { started } : {}),
  };
}

/** `JOURNAL_LOCKED`, naming the live process that holds the journal, and why that refuses the caller (`why`). */
function lockedBy(lock: SenderLock, why = ''): JournalError {
  return new JournalError(
    'JOURNAL_LOCKED',
    `the journal is in use by ${lock.holder} (process ${lock.pid}) since ${lock.since}${why}`,
  );
}

/** Whether a process with this id runs (signal 0 checks without sending anything). */
function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists but belongs to another user.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The authorized total of an authorization this terminal made, increments included, as the gateway holds it: in the
 * minor units and currency it answered in (a converted authorization of processor family A is held in the card's
 * billing currency); undefined when the journal has no approved authorization with that transactionId. A risk-declined
 * one or one in review (the vocabulary's `declineHolds`: declined for the customer, held until reversed) holds what its
 * answer states it authorized, which its reversal carries (spec 001, Reversal); it has no increments.
 *
 * Each approved increment's answer carries the new total (gateway.md §7). One that omits it was approved in full
 * (an increment has no partial status): the total before it plus its additional amount — never the additional
 * amount alone, which would shrink the hold the terminal captures and reverses.
 */
export function authorizedTotalOf(
  journal: SqliteJournal,
  transactionId: string,
): { minor: number; currency: string | undefined } | undefined {
  const auth = journal.findByTransactionId(transactionId);
  if (auth?.state === 'declined' && declineHolds(auth.status))
    return { minor: auth.authorizedMinor ?? auth.amountMinor ?? 0, currency: auth.currency };
  if (auth?.state !== 'approved') return undefined;
  let total = auth.authorizedMinor ?? auth.amountMinor ?? 0;
  for (const increment of journal.incrementsOf(auth))
    if (increment.state === 'approved')
      total = increment.authorizedMinor ?? total + (increment.amountMinor ?? 0);
  return { minor: total, currency: auth.currency };
}

/**
 * What a payment took, or a refund or credit gave back, in the journal's minor units: the amount the gateway's answer
 * states — a sale's authorized amount, a capture's captured amount (a gateway may capture less than it was asked:
 * spec 001, the capture answer's `orderInformation.amountDetails.totalAmount`), a refund's refunded amount — or, when
 * the answer stated none or has not come, the amount requested. Operator mode's amounts and what is left to refund,
 * and the refunds a payment has had, are counted with it.
 */
export function answeredAmountOf(e: JournalEntry): number | undefined {
  return e.authorizedMinor ?? e.amountMinor;
}

/**
 * Whether an entry is in flight: being sent, or its outcome not known (pending, sent, unknown) — it may have reached
 * the gateway and moved money, or not; recovery resolves it (DESIGN.md rule 3).
 */
export function isInFlight(e: JournalEntry): boolean {
  return e.state === 'pending' || e.state === 'sent' || e.state === 'unknown';
}

/**
 * Whether an entry left in flight was resolved as standing at the gateway: recovery's timeout void of it was refused
 * `NOT_VOIDABLE` (src/journal/recovery.ts), so the gateway holds it and it can no longer be voided — the money it
 * moved stays moved (a sale or capture: paid; a refund: refunded) until the operator undoes it otherwise.
 */
export function resolvedStanding(e: JournalEntry): boolean {
  return e.state === 'resolved' && e.resolution === 'not-voidable';
}

/**
 * The transactionId of the authorization (a sale or pre-authorization) whose conversion terms a payment or refund
 * follows: a capture's pre-authorization, a refund's sale, the authorization of a refunded capture; for anything else
 * its own. Undefined when the journal does not say (a capture or refund without its reference).
 */
export function authorizationTransactionOf(
  journal: SqliteJournal,
  transactionId: string,
): string | undefined {
  const entry = journal.findByTransactionId(transactionId);
  if (entry?.service === 'capture' || entry?.service === 'refund-payment')
    return entry.referencedTransactionId;
  if (entry?.service === 'refund-capture')
    return entry.referencedTransactionId === undefined
      ? undefined
      : journal.findByTransactionId(entry.referencedTransactionId)?.referencedTransactionId;
  return transactionId;
}

/**
 * The entries in flight that decide what stands of a payment (a sale or capture): its own, a refund or void of it, a
 * void of one of its refunds — each may have moved money or not until recovery resolves it, so until then what stands
 * is not known (the refunds' total counts a refund in flight as given back, the operator's reading a void in flight as
 * not). Recovery's own resolution attempts are left out: each belongs to the run of the entry it resolves
 * (`TimeoutRecovery.rootsInFlight`). Oldest first; none once every one of them is decided.
 */
export function undecidedEntriesOf(journal: SqliteJournal, paymentTransactionId: string): JournalEntry[] {
  const payment = journal.findByTransactionId(paymentTransactionId);
  const related = journal.referencing(paymentTransactionId);
  const ofRefunds = related
    .filter((e) => (e.service === 'refund-capture' || e.service === 'refund-payment') && e.transactionId)
    .flatMap((refund) => journal.referencing(refund.transactionId ?? ''));
  const undecided = new Map<number, JournalEntry>();
  for (const e of [...(payment ? [payment] : []), ...related, ...ofRefunds])
    if (isInFlight(e) && e.resolvesEntryId === undefined) undecided.set(e.id, e);
  return [...undecided.values()].sort((a, b) => a.id - b.id);
}

/**
 * What the refunds of a payment this terminal made come to, counting every refund that stands or may stand, so that
 * no money is refunded twice: approved and not voided, or its answer not known yet (pending, sent, unknown), or
 * resolved `not-voidable` (its timeout void was refused because the refund exists at the gateway and can no longer be
 * voided). A refund voided by a void or timeout void that was approved, or finished by recovery (resolved
 * `timeout-void`), gives its money back and does not count; nor does one declined, rejected or resolved otherwise.
 * Minor units of the currency the refunds were journaled in, the gateway's (a refund of a converted payment of
 * processor family A: the card's billing currency); 0 when there is none. The operator's remainder and the billing
 * amount of a converted refund are both this figure. `beforeEntryId`: only the refunds journaled before that entry (what
 * stood refunded when that refund was built, for the card amount its receipt states). `sinceMs`: only the refunds
 * journaled at or after that time (epoch milliseconds, the journal's clock). `currency`: only the refunds journaled in
 * that currency (a converted payment's are in the card's billing currency).
 */
export function refundedTotalOf(
  journal: Pick<SqliteJournal, 'referencing'>,
  paymentTransactionId: string,
  options: { beforeEntryId?: number; sinceMs?: number; currency?: string } = {},
): number {
  const voidedBy = (v: JournalEntry): boolean =>
    (v.service === 'void-refund' || v.service === 'timeout-void') &&
    (v.state === 'approved' || (v.state === 'resolved' && v.resolution === 'timeout-void'));
  const mayStand = (refund: JournalEntry): boolean => {
    switch (refund.state) {
      case 'approved':
        return !(refund.transactionId && journal.referencing(refund.transactionId).some(voidedBy));
      case 'pending':
      case 'sent':
      case 'unknown':
        return true;
      case 'resolved':
        return resolvedStanding(refund);
      case 'declined':
      case 'rejected':
        return false;
    }
  };
  return journal
    .referencing(paymentTransactionId)
    .filter(
      (e) =>
        (e.service === 'refund-capture' || e.service === 'refund-payment') &&
        (options.beforeEntryId === undefined || e.id < options.beforeEntryId) &&
        (options.sinceMs === undefined || Date.parse(e.createdAt) >= options.sinceMs) &&
        (options.currency === undefined || e.currency === options.currency) &&
        mayStand(e),
    )
    .reduce((sum, e) => sum + (answeredAmountOf(e) ?? 0), 0);
}

/**
 * Opens (creating and migrating when needed) the journal at `path` (`:memory:` for tests). Throws
 * {@link JournalError} `JOURNAL_IO` or `JOURNAL_MIGRATION` when the file cannot be used.
 */
export function openJournal(path: string, options: OpenJournalOptions = {}): SqliteJournal {
  return new SqliteJournal(path, options);
}
