import type { Database, Statement } from 'better-sqlite3';
import { interpretServiceCode } from '../emv/index.js';
import { currencyByAlpha, MAX_MINOR, toDecimalString } from '../money/index.js';
import type { Logger } from '../log/index.js';
import { MAX_OFFLINE_AGE_HOURS } from '../config/schema.js';
import { checkAtRestKey, offlineBodyContext as bodyContext } from './at-rest-key.js';
import type { BootClock } from './boot-clock.js';
import { open as openSealed, seal, type KeyProvider } from './encryption.js';
import { JournalError, OfflineRefusedError, type OfflineRefusalCode } from './errors.js';
import { checkCardKey, checkText, readOn, type JournalConnection } from './field-checks.js';
import { isoTime } from './iso-time.js';
import {
  BACKGROUND_WRITE,
  NOT_SENT,
  validateBegin,
  type BeginEntry,
  type JournalEntry,
  type SqliteJournal,
} from './journal.js';
import { entryOf, type JournaledSender, type OutgoingRequest, type TransmitOutcome } from './sender.js';
import {
  PARTIAL_APPROVAL,
  UNACKNOWLEDGED_DECLINE,
  UNACKNOWLEDGED_SHORTFALL,
} from './migrations/lookup-indexes.js';
import { migration0002 } from './migrations/0002-offline-queue.js';
import { openJournalReadOnly } from './read-only.js';

/** Acceptance policy per terminal: never offline, or offline only when the gateway cannot be reached. */
export type OfflinePolicy = 'online-only' | 'prefer-online';

/** The configured limits (config `offline`). */
export interface OfflineLimits {
  /** Largest amount of one offline payment, minor units (any currency). */
  readonly maxTransactionMinor: number;
  /** Largest stored total per currency, minor units. */
  readonly maxTotalMinorPerCurrency: number;
  /** Largest number of stored payments. */
  readonly maxCount: number;
  /** Once the oldest stored payment is older than this, nothing more is stored. */
  readonly maxAgeHours: number;
  /** Largest number of payments of one card (by its keyed fingerprint) in the queue. */
  readonly maxCountPerCard: number;
}

/**
 * The reason recorded for a stored payment never forwarded because it is known to have been stored more than
 * {@link MAX_OFFLINE_AGE_HOURS} ago (state `rejected`, by the terminal itself): the operator is told, as of a decline.
 * Known by the terminal's clock (the queue's `expiredThrough`): a payment whose recorded time of storage cannot be a
 * real time has no known age, and is forwarded.
 */
export const OFFLINE_EXPIRED = 'OFFLINE_EXPIRED';

/**
 * The reason recorded for a stored payment never forwarded because its sealed request cannot be read under the
 * journal's key (its bytes gone, damaged, or sealed under a key no longer present): state `rejected`, by the terminal
 * itself, so that it leaves the queue and its limits and the operator is told, as of a decline.
 */
export const OFFLINE_UNREADABLE = 'OFFLINE_UNREADABLE';

/** Why the terminal closed a stored payment without sending it. */
type ClosedUnsent = typeof OFFLINE_EXPIRED | typeof OFFLINE_UNREADABLE;

/** How long a stored payment may wait for its forward: the validity of a card authorization. */
const MAX_FORWARD_AGE_MS = MAX_OFFLINE_AGE_HOURS * 3_600_000;

/**
 * The earliest time this terminal's clock can truly read: no release of it ran before its first was built
 * (2026-11-22). A clock reading earlier was never set — a kiosk whose clock battery is flat starts at 1970, 2000 or
 * the date its system was built, and takes payments offline at that time until NTP steps its clock on, by years.
 */
const EARLIEST_REAL_TIME_MS = Date.UTC(2026, 10, 22);

/**
 * Whether `storedAt` can be the real time a payment was stored at, read at `now` (epoch ms): no earlier than
 * {@link EARLIEST_REAL_TIME_MS} and not after `now`. One that cannot was read from a clock not yet set, or set back
 * since: how long the payment has waited is not known from it.
 */
function isRealStoredAt(storedAt: number, now: number): boolean {
  const { from, to } = realStoredAtBounds(now);
  return storedAt >= from && storedAt <= to;
}

/**
 * The bounds, inclusive, of {@link isRealStoredAt} at `now` (epoch ms), for a statement's `stored_at BETWEEN @from AND
 * @to`: the same rule read by SQLite.
 */
function realStoredAtBounds(now: number): { from: number; to: number } {
  return { from: EARLIEST_REAL_TIME_MS, to: now };
}

/**
 * The meta row recording, for the payments stored in the machine's current boot, the wall clock minus the time since
 * boot that their `stored_at` was read with ({@link OfflineQueue.followClock}).
 */
const OFFLINE_CLOCK_META = 'offline_clock';

/** What {@link OFFLINE_CLOCK_META} holds. */
interface ClockFooting {
  /** The boot it is of. */
  bootId: string;
  /** Wall clock minus time since boot, ms, that the `stored_at` of this boot's payments are read on. */
  offsetMs: number;
  /** The first id a payment stored in this boot can have. */
  firstId: number;
}

/** The footing a meta value records, or undefined for one that is none (damaged: a footing is recorded anew). */
function clockFootingOf(raw: string | undefined): ClockFooting | undefined {
  if (raw === undefined) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const { bootId, offsetMs, firstId } = v as Record<string, unknown>;
  if (typeof bootId !== 'string' || !Number.isSafeInteger(offsetMs) || !Number.isSafeInteger(firstId))
    return undefined;
  return { bootId, offsetMs: offsetMs as number, firstId: firstId as number };
}

/**
 * A change of the wall clock against the time since boot larger than this is a step (NTP after a boot without a
 * battery-backed clock, `date -s`): both clocks are slewed alike, and only a step moves one against the other.
 */
const CLOCK_STEP_MS = 60_000;

/**
 * stored → forwarding → approved | declined | rejected | unknown (handed to timeout recovery); not sent, or refused for now (PROCESSOR_UNAVAILABLE) → stored;
 * known to be stored more than seven days → rejected ({@link OFFLINE_EXPIRED}), never sent; its request unreadable →
 * rejected ({@link OFFLINE_UNREADABLE}), never sent.
 */
export type OfflineState = 'stored' | 'forwarding' | 'approved' | 'declined' | 'rejected' | 'unknown';

/** What the offline rules look at. */
export interface OfflineCandidate {
  /** Gateway service name: only `sale` is stored. */
  readonly service: string;
  /** Card entry mode: only `contact` and `contactless` (EMV chip) are stored. */
  readonly entryMode: string;
  /**
   * The card's service code (tag 57 or track 2), when the read carried one: only a card whose second digit is 0
   * (normal authorization) is stored; 2 and 4 ask for the issuer online, and an unassigned digit promises nothing.
   * Never stored.
   */
  readonly serviceCode?: string;
  /** Minor units. */
  readonly amountMinor: number;
  /** ISO 4217 alpha. */
  readonly currency: string;
  /**
   * The card's keyed fingerprint (`CardSummary.fingerprint`: an HMAC under the terminal's secret, never the PAN nor a
   * plain hash of it): the per-card limit counts the payments of this card in the queue. Stored with the payment.
   */
  readonly fingerprint: string;
}

/** A payment to store: the exact request prepared for the gateway (with a transactionId never journaled before). */
export interface OfflinePaymentInput extends OfflineCandidate {
  readonly transactionId: string;
  readonly comments: string;
  readonly method: string;
  readonly path: string;
  /** The exact request bytes (hold track data and EMV tags): stored only encrypted, wiped once forwarded. */
  readonly body: Buffer;
  /** First 6 + last 4 digits at most. */
  readonly maskedPan?: string;
  readonly flowId?: string;
}

/** A stored payment as the operator sees it (no card data). */
export interface StoredPayment {
  readonly id: number;
  readonly transactionId: string;
  readonly service: string;
  readonly comments: string;
  readonly amountMinor: number;
  readonly currency: string;
  readonly entryMode: string;
  readonly maskedPan?: string;
  readonly flowId?: string;
  readonly state: OfflineState;
  /** The journal entry recording the forward. */
  readonly journalEntryId?: number;
  readonly gatewayId?: string;
  readonly status?: string;
  /**
   * Why it was not collected in full: the decline or rejection reason, what made the outcome unknown, or
   * `PARTIAL_APPROVAL` for a payment approved for less than its amount.
   */
  readonly reason?: string;
  /**
   * For a forward whose outcome was unknown (state `unknown`): how timeout recovery resolved its journal entry, once
   * it has — `timeout-void` (voided: not collected), `not-voidable` (it stands: collected), `not-at-gateway` (the
   * gateway never had it: not collected, and not forwarded again, its card data wiped with the unknown outcome) … (the
   * journal's resolution, src/journal/recovery.ts). Absent while recovery has not resolved it.
   */
  readonly resolution?: string;
  /** Whether the encrypted request is still stored. */
  readonly hasBody: boolean;
  /** ISO 8601. */
  readonly storedAt: string;
  readonly forwardedAt?: string;
  readonly completedAt?: string;
}

/** The answer to one forward: the journal's one classification (`not-sent`: the payment goes back to the queue). */
export type ForwardOutcome = TransmitOutcome;

export interface ForwardReport {
  /** Payments sent in this run. */
  readonly forwarded: number;
  readonly approved: number;
  /**
   * Declined or rejected after forwarding, or approved for less than the amount (reason `PARTIAL_APPROVAL`): the
   * operator must be told (money not collected, in full or in part, from a customer told it was paid).
   */
  readonly declined: StoredPayment[];
  /** Journal entry ids whose outcome is unknown: hand them to TimeoutRecovery.recover. */
  readonly unknown: number[];
  /** Whether the run stopped because the gateway could not be reached. */
  readonly gatewayUnreachable: boolean;
  /**
   * Why, when it could not: the reason of the forward that came back not sent (`GW_CONNECTION`, `GW_TIMEOUT`, `GW_AUTH`
   * for refused credentials, `PROCESSOR_UNAVAILABLE` for a refusal that passes …), or `GW_CONNECTION` when no
   * connection opened before the first claim.
   */
  readonly unreachableReason?: string;
  /**
   * Which host did not open before the first claim, as the operator reads it: `gateway api.example.com:443`, or
   * `OAuth token host auth.example.com:443` when the gateway answered but the access token had to be fetched from a
   * token host that did not. Absent when the run stopped on a forward's outcome (its reason says why).
   */
  readonly unreachableHost?: string;
  /** Payments still waiting. */
  readonly remaining: number;
}

/** Offline state for `queue status` and the operator status bar (TerminalApi OperatorStatus.offline). */
export interface OfflineStatus {
  readonly policy: OfflinePolicy;
  /** Payments stored or being forwarded. */
  readonly depth: number;
  /** Per currency, sorted by code: minor units and the decimal string. */
  readonly totalsPerCurrency: { currency: string; minor: number; amount: string }[];
  /**
   * Age in whole seconds of the oldest stored payment whose age is known (its time of storage a real time: see
   * {@link OFFLINE_EXPIRED}); null when the queue holds none.
   */
  readonly oldestAgeSeconds: number | null;
  /**
   * Payments stored or being forwarded whose age is not known: stored while the terminal's clock was not yet set (a
   * flat clock battery: 1970, 2000) or was ahead, set back since. Not in `oldestAgeSeconds`, nor in the age limit.
   */
  readonly ageUnknown: number;
  readonly limits: OfflineLimits;
  /**
   * Payments declined, rejected, of unknown outcome or approved for less than their amount after forwarding, not yet
   * acknowledged by the operator.
   */
  readonly declinedAfterForward: number;
}

interface Row {
  id: number;
  transaction_id: string;
  service: string;
  comments: string;
  method: string;
  path: string;
  body_enc: Buffer | null;
  amount_minor: number;
  currency: string;
  entry_mode: string;
  masked_pan: string | null;
  flow_id: string | null;
  state: OfflineState;
  journal_entry_id: number | null;
  gateway_id: string | null;
  status: string | null;
  reason: string | null;
  stored_at: number;
  forwarded_at: number | null;
  completed_at: number | null;
}

/**
 * Services a payment may be stored as. A sale is complete in itself; a pre-authorization never is: its session
 * captures, reverses or increments it by the gateway's id, which a stored payment has none of until it is forwarded —
 * stored, it would be approved later with nothing left to capture or release it (the funds held on the card, the stay
 * not paid).
 */
const OFFLINE_SERVICES = new Set(['sale']);
const CHIP_ENTRY_MODES = new Set(['contact', 'contactless']);

/**
 * The columns a claim reads of each stored payment: what its forward is built from, and its age. Read by name, each
 * column costs the claim's query a property of the row object: the others are left unread.
 */
type ClaimRow = Pick<
  Row,
  | 'id'
  | 'transaction_id'
  | 'service'
  | 'comments'
  | 'method'
  | 'path'
  | 'body_enc'
  | 'amount_minor'
  | 'currency'
  | 'masked_pan'
  | 'flow_id'
  | 'stored_at'
>;

interface Claimed {
  row: ClaimRow;
  /** Its `stored_at` is no real time ({@link isRealStoredAt}): how long it waited is not known. */
  ageUnknown: boolean;
  /** The stored request, decrypted: its body is wiped once sent. */
  request: OutgoingRequest;
  /** Its journal entry as begun in the claim's transaction (already marked sent). */
  entry: JournalEntry;
  /** Releases the sender's ownership of the entry, taken in the claim's write: handed to the send. */
  owned: () => void;
}

/** A stored payment the claim closed without sending it, and why (`err`: what the opening of its request threw). */
interface Unsent {
  id: number;
  reason: ClosedUnsent;
  err?: unknown;
}

interface Tally {
  stop: boolean;
  forwarded: number;
  approved: number;
  gatewayUnreachable: boolean;
  unreachableReason?: string;
  unreachableHost?: string;
  declined: StoredPayment[];
  unknown: number[];
}

/** What a stored payment's forward is made of: the payment as it was stored, without its card data. */
type ForwardFacts = Pick<
  OfflinePaymentInput,
  | 'transactionId'
  | 'service'
  | 'comments'
  | 'method'
  | 'path'
  | 'amountMinor'
  | 'currency'
  | 'flowId'
  | 'maskedPan'
>;

/**
 * A stored payment's forward: the request sent (`body`, its exact bytes) and its journal entry, begun already marked
 * sent at `sentAt`. The one construction of both, read when the payment is stored (the journal must take that entry)
 * and when it is claimed.
 */
function forwardOf(
  p: ForwardFacts,
  body: Buffer,
  sentAt: Date,
): { request: OutgoingRequest; entry: BeginEntry } {
  const request: OutgoingRequest = {
    transactionId: p.transactionId,
    service: p.service,
    comments: p.comments,
    method: p.method,
    path: p.path,
    body,
    amountMinor: p.amountMinor,
    currency: p.currency,
    moneyMoving: true,
  };
  return { request, entry: entryOf(request, { flowId: p.flowId, maskedPan: p.maskedPan, sentAt }) };
}

function toPayment(r: Row, resolution?: string): StoredPayment {
  return {
    id: r.id,
    transactionId: r.transaction_id,
    service: r.service,
    comments: r.comments,
    amountMinor: r.amount_minor,
    currency: r.currency,
    entryMode: r.entry_mode,
    ...(r.masked_pan !== null ? { maskedPan: r.masked_pan } : {}),
    ...(r.flow_id !== null ? { flowId: r.flow_id } : {}),
    state: r.state,
    ...(r.journal_entry_id !== null ? { journalEntryId: r.journal_entry_id } : {}),
    ...(r.gateway_id !== null ? { gatewayId: r.gateway_id } : {}),
    ...(r.status !== null ? { status: r.status } : {}),
    ...(r.reason !== null ? { reason: r.reason } : {}),
    ...(resolution !== undefined ? { resolution } : {}),
    hasBody: r.body_enc !== null,
    storedAt: isoTime(r.stored_at),
    ...(r.forwarded_at !== null ? { forwardedAt: isoTime(r.forwarded_at) } : {}),
    ...(r.completed_at !== null ? { completedAt: isoTime(r.completed_at) } : {}),
  };
}

/** Validates limits read from configuration. */
export function checkLimits(limits: OfflineLimits): OfflineLimits {
  for (const k of ['maxTransactionMinor', 'maxTotalMinorPerCurrency', 'maxCount', 'maxCountPerCard'] as const)
    if (!Number.isSafeInteger(limits[k]) || limits[k] < 0)
      throw new JournalError('JOURNAL_INVALID', `offline limit ${k} must be a non-negative integer`);
  if (!Number.isFinite(limits.maxAgeHours) || limits.maxAgeHours < 0)
    throw new JournalError('JOURNAL_INVALID', 'offline limit maxAgeHours must be a non-negative number');
  return {
    maxTransactionMinor: limits.maxTransactionMinor,
    maxTotalMinorPerCurrency: limits.maxTotalMinorPerCurrency,
    maxCount: limits.maxCount,
    maxAgeHours: limits.maxAgeHours,
    maxCountPerCard: limits.maxCountPerCard,
  };
}

/** What the offline status of a queue is made of, read in one transaction. */
interface QueueCounts {
  /**
   * The payments stored or being forwarded, per currency, sorted by code: their number, the oldest real time of storage
   * ({@link isRealStoredAt}; null when none is), and how many have none.
   */
  readonly totals: { currency: string; minor: number; n: number; oldest: number | null; unknown: number }[];
  /** Those not collected in full after forwarding, not yet acknowledged. */
  readonly declined: number;
}

/**
 * THE function computing the offline numbers: `parking-terminal queue status` and the operator status bar both call
 * it, so they cannot disagree. Needs no key (it reads no card data), and reads no column of a schema rewrite: it reads
 * a journal opened read-only that the terminal has not yet rewritten ({@link openOfflineQueueReadOnly}).
 */
export function offlineQueueStatus(
  journal: Pick<JournalConnection, 'db' | 'now'>,
  settings: { policy: OfflinePolicy; limits: OfflineLimits },
  now: Date = journal.now(),
): OfflineStatus {
  const db = journal.db;
  const read = db.transaction((): QueueCounts => {
    const totals = db
      .prepare<[{ from: number; to: number }], QueueCounts['totals'][number]>(
        `SELECT currency, SUM(amount_minor) AS minor, COUNT(*) AS n,
           MIN(CASE WHEN stored_at BETWEEN @from AND @to THEN stored_at END) AS oldest,
           SUM(stored_at NOT BETWEEN @from AND @to) AS unknown
         FROM offline_payments WHERE state IN ('stored', 'forwarding') GROUP BY currency ORDER BY currency`,
      )
      .all(realStoredAtBounds(now.getTime()));
    // Each count from its own partial index.
    const declined = db
      .prepare<[], { n: number }>(
        `SELECT (SELECT COUNT(*) FROM offline_payments WHERE ${UNACKNOWLEDGED_DECLINE})
          + (SELECT COUNT(*) FROM offline_payments WHERE ${UNACKNOWLEDGED_SHORTFALL}) AS n`,
      )
      .get();
    return { totals, declined: declined?.n ?? 0 };
  });
  return statusOf(read(), settings, now);
}

/** The offline status of a journal that has no offline queue (none yet, or one older than it): nothing stored. */
export function emptyOfflineStatus(settings: {
  policy: OfflinePolicy;
  limits: OfflineLimits;
}): OfflineStatus {
  return statusOf({ totals: [], declined: 0 }, settings, new Date(0));
}

function statusOf(
  { totals, declined }: QueueCounts,
  settings: { policy: OfflinePolicy; limits: OfflineLimits },
  now: Date,
): OfflineStatus {
  const known = totals.flatMap((t) => (t.oldest === null ? [] : [t.oldest]));
  const oldest = known.length === 0 ? null : Math.min(...known);
  return {
    policy: settings.policy,
    depth: totals.reduce((n, t) => n + t.n, 0),
    totalsPerCurrency: totals.map((t) => ({
      currency: t.currency,
      minor: t.minor,
      amount: toDecimalString(t.minor, t.currency),
    })),
    oldestAgeSeconds: oldest === null ? null : Math.floor((now.getTime() - oldest) / 1000),
    ageUnknown: totals.reduce((n, t) => n + t.unknown, 0),
    limits: checkLimits(settings.limits),
    declinedAfterForward: declined,
  };
}

/** The stored payments not collected in full after forwarding that the operator has not acknowledged, oldest first. */
const UNACKNOWLEDGED_SQL = `SELECT * FROM offline_payments WHERE ${UNACKNOWLEDGED_DECLINE}
  UNION ALL SELECT * FROM offline_payments WHERE ${UNACKNOWLEDGED_SHORTFALL} ORDER BY id`;

/**
 * The operator's acknowledgement of one of them, completed by the condition that names it. Not of a forward whose
 * outcome recovery has yet to resolve (its journal entry still in flight): whether it was collected is not known, and
 * acknowledged now it would not come back to the count once recovery found it voided, not collected.
 */
const ACKNOWLEDGE_SQL = `UPDATE offline_payments SET decline_acknowledged = 1
  WHERE ((${UNACKNOWLEDGED_DECLINE}) OR (${UNACKNOWLEDGED_SHORTFALL}))
    AND NOT (state = 'unknown' AND EXISTS (SELECT 1 FROM journal_entries j
      WHERE j.id = offline_payments.journal_entry_id AND j.state IN ('pending', 'sent', 'unknown')))
    AND`;

/**
 * The stored payments not collected in full after forwarding (declined, rejected, unknown, or approved for less than
 * their amount) that the operator has not acknowledged, oldest first: what the status bar counts. Reads no card data
 * and needs no key (the `queue declined` command); reads no column of a schema rewrite (see
 * {@link offlineQueueStatus}).
 */
export function offlineDeclinesToAcknowledge(journal: Pick<JournalConnection, 'db'>): StoredPayment[] {
  return declinesWithResolutions(journal.db, journal.db.prepare<[], Row>(UNACKNOWLEDGED_SQL).all());
}

/**
 * The transactionIds of the stored payments still open (stored, or being forwarded) that carry their card's fingerprint,
 * oldest first: those counted against their card's limit (`maxCountPerCard`) by that fingerprint — what a new card
 * fingerprint key would no longer count (src/host/keys.ts). A payment forwarded is counted no more. Reads no card data.
 */
export function openFingerprintedPayments(journal: Pick<JournalConnection, 'db'>): string[] {
  return journal.db
    .prepare<[], { transaction_id: string }>(
      `SELECT transaction_id FROM offline_payments
      WHERE card_fingerprint IS NOT NULL AND state IN ('stored', 'forwarding') ORDER BY id`,
    )
    .all()
    .map((r) => r.transaction_id);
}

/**
 * The stored payments not collected in full, each forward of unknown outcome with its journal entry's resolution
 * ({@link StoredPayment.resolution}): the outcome recovery found, which the operator reads to tell a payment voided
 * from one that stands.
 */
function declinesWithResolutions(db: JournalConnection['db'], rows: Row[]): StoredPayment[] {
  const resolution = db.prepare<[number], { resolution: string | null }>(
    `SELECT resolution FROM journal_entries WHERE id = ? AND state = 'resolved'`,
  );
  return rows.map((r) =>
    toPayment(
      r,
      r.state === 'unknown' && r.journal_entry_id !== null
        ? (resolution.get(r.journal_entry_id)?.resolution ?? undefined)
        : undefined,
    ),
  );
}

/**
 * The operator has seen the stored payment forwarded under `transactionId` and not collected in full (the
 * `queue acknowledge` command): it leaves the status bar's count. Returns whether it was pending acknowledgement.
 * `JOURNAL_INVALID` for what cannot be a transactionId (the journal's rule: 1 to 64 characters). Joins the caller's
 * transaction, if any: the acknowledgement and its audit record commit together, or neither does.
 */
export function acknowledgeOfflineDecline(journal: SqliteJournal, transactionId: string): boolean {
  checkText(transactionId, 'transactionId', 64);
  return journal.atomically(
    true,
    () => journal.db.prepare(`${ACKNOWLEDGE_SQL} transaction_id = ?`).run(transactionId).changes === 1,
  );
}

/**
 * For recovery: when `entryId` is the journaled forward of a stored payment that was claimed but never marked sent,
 * returns the payment to the queue and resolves the entry as not sent, and returns whether it did. A forward is
 * claimed already marked sent, so only a journal written by an earlier release, which claimed a payment and marked
 * it sent in a later commit just before its first byte, holds such a pending forward: it provably never left.
 */
export function releaseUnsentForward(journal: SqliteJournal, entryId: number): boolean {
  return journal.atomically(true, () => {
    const entry = journal.get(entryId);
    if (entry?.state !== 'pending') return false;
    const released = journal.db
      .prepare(
        // The open index's own condition repeated, as in the queue's statements: otherwise every payment is read.
        `UPDATE offline_payments SET state = 'stored', journal_entry_id = NULL, forwarded_at = NULL
         WHERE journal_entry_id = ? AND state = 'forwarding' AND state IN ('stored', 'forwarding')`,
      )
      .run(entryId).changes;
    if (released !== 1) return false;
    journal.resolve(entryId, NOT_SENT);
    return true;
  });
}

export interface OfflineQueueOptions {
  policy: OfflinePolicy;
  limits: OfflineLimits;
  /** The AES-256 key for stored card data (key file 0600, or the OS keystore through the Electron shell). */
  keyProvider: KeyProvider;
  now?: () => Date;
  /**
   * The machine's time since boot (the terminal's: `linuxBootClock`, boot-clock.ts), by which a step of the wall clock
   * between a payment's storage and its forward is seen and its time of storage moved with it. None: the wall clock
   * alone (a `now` of tests, which nothing else moves).
   */
  bootClock?: BootClock;
  logger?: Logger;
}

/** The claim's read of the oldest stored payments, in the order they were stored (its limit is added). */
const NEXT_SQL = `SELECT id, transaction_id, service, comments, method, path, body_enc, amount_minor, currency,
    masked_pan, flow_id, stored_at FROM offline_payments
  WHERE state = 'stored' AND state IN ('stored', 'forwarding') ORDER BY id`;

/**
 * The claim's read of the oldest `count` stored payments, one prepared statement per count with the limit written in
 * it. SQLite plans a query by the value bound to its `LIMIT ?` and marks the statement to be planned again whenever
 * that parameter is bound: a bound limit cost a parse and a plan at every claim (a tenth to a half of the read).
 */
function nextStatements(db: Database): (count: number) => Statement<[], ClaimRow> {
  const byCount = new Map<number, Statement<[], ClaimRow>>();
  return (count) => {
    if (!Number.isSafeInteger(count) || count < 1)
      throw new JournalError('JOURNAL_INVALID', `cannot claim ${count} stored payments`);
    let statement = byCount.get(count);
    if (statement === undefined) {
      statement = db.prepare<[], ClaimRow>(`${NEXT_SQL} LIMIT ${count}`);
      byCount.set(count, statement);
    }
    return statement;
  };
}

/**
 * The offline store-and-forward queue (issue 7, item 3), in the journal's database. Payments are accepted offline
 * only within the limits and only for chip reads of sales; the request bytes are kept
 * encrypted (AES-256-GCM) and wiped as soon as the authorization completes. Forwarding goes in order of storage with
 * bounded concurrency and exactly once per transactionId: claiming a payment and journaling its forward are one
 * transaction, and the journal refuses a second live entry with the same transactionId.
 */
export class OfflineQueue {
  private readonly key: Buffer;
  private readonly limits: OfflineLimits;
  private readonly now: () => Date;
  private readonly logger: Logger;
  private readonly stmts: {
    insert: Statement;
    get: Statement<[number], Row>;
    byTx: Statement<[string], Row>;
    awaitingOutcome: Statement<[string], Row>;
    next: (count: number) => Statement<[], ClaimRow>;
    anyStored: Statement<[], { one: 1 }>;
    open: Statement<[], { n: number }>;
    oldestKnown: Statement<[{ from: number; to: number }], { oldest: number | null }>;
    openTotal: Statement<[string], { total: number | null }>;
    openOfCard: Statement<[string], { n: number }>;
    claim: Statement;
    complete: Statement;
    closeUnsent: Statement<[ClosedUnsent, number, number]>;
    expiredThrough: Statement<[number, number], { id: number | null }>;
    storedThrough: Statement<[number], { id: number }>;
    shiftStoredAt: Statement<[number, number]>;
    lastId: Statement<[], { id: number | null }>;
    readMeta: Statement<[string], { value: string }>;
    writeMeta: Statement<[string, string]>;
    unclaim: Statement;
    forwarding: Statement<[], Row>;
    list: Statement<[number], Row>;
    declined: Statement<[], Row>;
    acknowledge: Statement;
  };

  constructor(
    private readonly journal: SqliteJournal,
    private readonly options: OfflineQueueOptions,
  ) {
    if (options.policy !== 'online-only' && options.policy !== 'prefer-online')
      throw new JournalError('JOURNAL_INVALID', `unknown offline policy "${String(options.policy)}"`);
    this.limits = checkLimits(options.limits);
    this.now = options.now ?? journal.now;
    this.logger = options.logger ?? journal.logger;
    const db = journal.db;
    this.stmts = {
      insert:
        db.prepare(`INSERT INTO offline_payments (transaction_id, service, comments, method, path, body_enc,
          amount_minor, currency, entry_mode, masked_pan, flow_id, state, stored_at, card_fingerprint)
        VALUES (@transaction_id, @service, @comments, @method, @path, @body_enc, @amount_minor, @currency, @entry_mode,
          @masked_pan, @flow_id, 'stored', @stored_at, @card_fingerprint)`),
      get: db.prepare('SELECT * FROM offline_payments WHERE id = ?'),
      byTx: db.prepare('SELECT * FROM offline_payments WHERE transaction_id = ?'),
      awaitingOutcome: db.prepare(`SELECT o.* FROM offline_payments o
          LEFT JOIN journal_entries j ON j.id = o.journal_entry_id
        WHERE o.transaction_id = ? AND (o.state = 'stored' OR j.state IN ('pending', 'sent', 'unknown'))`),
      // The partial index's own condition repeated, so that SQLite proves the index applies and reads the oldest
      // stored payments from it instead of scanning every payment ever forwarded (each claim would cost O(n)).
      next: nextStatements(db),
      anyStored: db.prepare(`SELECT 1 AS one FROM offline_payments
        WHERE state = 'stored' AND state IN ('stored', 'forwarding') LIMIT 1`),
      open: db.prepare(`SELECT COUNT(*) AS n FROM offline_payments WHERE state IN ('stored', 'forwarding')`),
      // The oldest real time of storage in the queue ({@link isRealStoredAt}), by its index of times of storage.
      oldestKnown: db.prepare(`SELECT MIN(stored_at) AS oldest FROM offline_payments
        INDEXED BY offline_payments_open_by_time
        WHERE state IN ('stored', 'forwarding') AND stored_at BETWEEN @from AND @to`),
      openTotal: db.prepare(`SELECT SUM(amount_minor) AS total FROM offline_payments
        WHERE state IN ('stored', 'forwarding') AND currency = ?`),
      // The condition of the index `offline_payments_open_by_card`, repeated so that SQLite reads it.
      openOfCard: db.prepare(`SELECT COUNT(*) AS n FROM offline_payments
        WHERE card_fingerprint = ? AND state IN ('stored', 'forwarding')`),
      claim:
        db.prepare(`UPDATE offline_payments SET state = 'forwarding', journal_entry_id = ?, forwarded_at = ?
        WHERE id = ? AND state = 'stored'`),
      complete:
        db.prepare(`UPDATE offline_payments SET state = @state, gateway_id = @gateway_id, status = @status,
          reason = @reason, completed_at = @at, body_enc = NULL
        WHERE id = @id AND state = 'forwarding'`),
      closeUnsent: db.prepare(`UPDATE offline_payments SET state = 'rejected', reason = ?,
          completed_at = ?, body_enc = NULL
        WHERE id = ? AND state = 'stored'`),
      // The open index's condition, as in `next`: only the payments in the queue are read (see expiredThrough).
      // By the queue's index of times of storage (lookup-indexes.ts), its condition repeated: the few payments stored
      // before the limit, not every one queued (without statistics, SQLite would take the index by state instead).
      expiredThrough:
        db.prepare(`SELECT MAX(id) AS id FROM offline_payments INDEXED BY offline_payments_open_by_time
        WHERE state IN ('stored', 'forwarding') AND stored_at >= ? AND stored_at < ?`),
      storedThrough: db.prepare(`SELECT id FROM offline_payments
        WHERE state = 'stored' AND state IN ('stored', 'forwarding') AND id <= ? ORDER BY id`),
      shiftStoredAt: db.prepare(`UPDATE offline_payments SET stored_at = stored_at + ?
        WHERE state IN ('stored', 'forwarding') AND id >= ?`),
      lastId: db.prepare('SELECT MAX(id) AS id FROM offline_payments'),
      readMeta: db.prepare('SELECT value FROM meta WHERE key = ?'),
      writeMeta: db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)'),
      unclaim:
        db.prepare(`UPDATE offline_payments SET state = 'stored', journal_entry_id = NULL, forwarded_at = NULL
        WHERE id = ? AND state = 'forwarding'`),
      forwarding: db.prepare(`SELECT * FROM offline_payments
        WHERE state = 'forwarding' AND state IN ('stored', 'forwarding') ORDER BY id`),
      list: db.prepare('SELECT * FROM offline_payments ORDER BY id DESC LIMIT ?'),
      declined: db.prepare(UNACKNOWLEDGED_SQL),
      acknowledge: db.prepare(`${ACKNOWLEDGE_SQL} id = ?`),
    };
    this.key = options.keyProvider.loadKey();
    this.checkKey();
    this.reconcile();
  }

  /**
   * Refuses a key other than the one the journal's card data is sealed with (stored payments could never be
   * forwarded, kept tags never read): the one check of {@link checkAtRestKey}.
   */
  private checkKey(): void {
    checkAtRestKey(this.journal, this.key, this.options.keyProvider.description);
  }

  /**
   * Brings payments left `forwarding` by a crash in line with their journal entry: an outcome journaled before the
   * crash is copied; a forward resolved as not sent goes back to the queue; anything else stays until timeout
   * recovery resolves the entry (then it is `unknown`: never forwarded twice).
   */
  reconcile(): void {
    this.journal.atomically(true, () => {
      for (const r of this.stmts.forwarding.all()) {
        const entry = r.journal_entry_id === null ? undefined : this.journal.get(r.journal_entry_id);
        if (!entry) {
          this.stmts.unclaim.run(r.id);
          continue;
        }
        switch (entry.state) {
          case 'pending':
            // Claimed but never marked sent (an earlier release's claim): provably not sent; back to the queue.
            this.journal.resolve(entry.id, NOT_SENT);
            this.stmts.unclaim.run(r.id);
            break;
          case 'sent':
          case 'unknown':
            break;
          case 'approved':
          case 'declined':
          case 'rejected':
            this.complete(r, entry.state, entry);
            break;
          case 'resolved':
            if (entry.resolution === NOT_SENT) this.stmts.unclaim.run(r.id);
            else this.complete(r, 'unknown', entry);
            break;
        }
      }
    });
  }

  /**
   * Records a forward's outcome on its stored payment and wipes its card data; returns the reason recorded. An approval
   * for less than the payment's amount (the answer's status, or the amount it states) is recorded with the reason
   * `PARTIAL_APPROVAL`: its customer was told it was paid in full, so the operator is told, as for a decline.
   */
  private complete(
    row: Pick<Row, 'id' | 'amount_minor'>,
    state: OfflineState,
    facts: Pick<JournalEntry, 'gatewayId' | 'status' | 'reason' | 'authorizedMinor'> | undefined,
  ): string | undefined {
    const short =
      state === 'approved' &&
      (facts?.status === 'PARTIAL_AUTHORIZED' ||
        (facts?.authorizedMinor !== undefined && facts.authorizedMinor < row.amount_minor));
    const reason = facts?.reason ?? (short ? PARTIAL_APPROVAL : undefined);
    this.stmts.complete.run({
      id: row.id,
      state,
      gateway_id: facts?.gatewayId ?? null,
      status: facts?.status ?? null,
      reason: reason ?? null,
      at: this.now().getTime(),
    });
    return reason;
  }

  /**
   * Keeps the `stored_at` of the payments stored in the machine's current boot on the footing of the wall clock as it
   * is now: when the wall clock has been stepped against the time since boot ({@link CLOCK_STEP_MS}) since they were
   * stored — NTP setting the clock of a kiosk that started at the time it last saved, or at 2000, once the network is
   * back — their `stored_at` moves by the step, durably, and their age is what they waited (the time since boot counts
   * suspended time too, so it is never less). Payments stored in an earlier boot cannot be followed: the step may have
   * come with the reboot, unseen ({@link expiredThrough} judges them by their `stored_at`). `storing`: a payment is
   * about to be stored, and the footing of this boot is recorded if it is not yet. Run outside any transaction: its
   * write, when there is one, is a durable commit of its own, and the operator is told of a step after it.
   */
  private followClock(storing: boolean): void {
    const boot = this.options.bootClock?.();
    if (boot === undefined) return;
    const offsetMs = this.now().getTime() - boot.sinceBootMs;
    // What is to be written, from the footing as read now; undefined when nothing is.
    const change = (): { next: ClockFooting; stepMs: number } | undefined => {
      const footing = clockFootingOf(this.stmts.readMeta.get(OFFLINE_CLOCK_META)?.value);
      if (footing?.bootId !== boot.bootId) {
        if (!storing) return undefined;
        const firstId = (this.stmts.lastId.get()?.id ?? 0) + 1;
        return { next: { bootId: boot.bootId, offsetMs, firstId }, stepMs: 0 };
      }
      const stepMs = offsetMs - footing.offsetMs;
      return Math.abs(stepMs) <= CLOCK_STEP_MS ? undefined : { next: { ...footing, offsetMs }, stepMs };
    };
    if (change() === undefined) return;
    // Read again in the write: another process on this journal (`queue flush`) may have moved them already.
    const done = this.journal.atomically(true, () => {
      const c = change();
      if (c === undefined) return undefined;
      const moved = c.stepMs === 0 ? 0 : this.stmts.shiftStoredAt.run(c.stepMs, c.next.firstId).changes;
      this.stmts.writeMeta.run(OFFLINE_CLOCK_META, JSON.stringify(c.next));
      return { stepMs: c.stepMs, moved };
    });
    if (done === undefined || done.stepMs === 0) return;
    this.logger.warn(
      {
        stepSeconds: Math.round(done.stepMs / 1000),
        moved: done.moved,
        now: isoTime(offsetMs + boot.sinceBootMs),
      },
      'terminal clock stepped since payments were stored in this boot: their times of storage moved with it, ' +
        'their age is what they waited',
    );
  }

  /**
   * Why `candidate` may not be taken offline now, or undefined when it may: the answer {@link store} gives. Reads the
   * queue and stores nothing, but for the move of a clock step that {@link store} would make first
   * ({@link followClock}): a payment stored in this boot under a clock not yet set is judged by what it waited.
   */
  refusal(candidate: OfflineCandidate): OfflineRefusedError | undefined {
    this.followClock(false);
    return this.refusalNow(candidate);
  }

  /**
   * {@link refusal} in the caller's transaction, the footing of this boot's times of storage as it is. The age limit
   * counts the oldest payment whose age is known ({@link isRealStoredAt}; every one stored before it has waited at
   * least as long): one stored under a clock not yet set (1970, 2000) would refuse every further payment once the
   * clock is set, for as long as the terminal stays offline, and one stored while the clock was ahead would switch the
   * limit off until the clock caught up. Those whose age is not known are bounded by the limits of count and total,
   * and counted apart in the status ({@link OfflineStatus.ageUnknown}).
   */
  private refusalNow(candidate: OfflineCandidate): OfflineRefusedError | undefined {
    const refuse = (code: OfflineRefusalCode, message: string): OfflineRefusedError =>
      new OfflineRefusedError(code, message);
    const { limits } = this;
    if (this.options.policy === 'online-only')
      return refuse('OFFLINE_POLICY', 'this terminal accepts payments online only');
    if (!OFFLINE_SERVICES.has(candidate.service))
      return refuse('OFFLINE_SERVICE', `a ${candidate.service} is never taken offline (sales only)`);
    if (!CHIP_ENTRY_MODES.has(candidate.entryMode))
      return refuse(
        'OFFLINE_ENTRY_MODE',
        `entry mode ${candidate.entryMode} is never taken offline (chip reads only)`,
      );
    if (candidate.serviceCode !== undefined) {
      if (typeof candidate.serviceCode !== 'string' || !/^\d{3}$/.test(candidate.serviceCode))
        throw new JournalError('JOURNAL_INVALID', 'serviceCode must be three digits');
      const { authorization } = interpretServiceCode(candidate.serviceCode);
      if (authorization !== 'normal')
        return refuse(
          'OFFLINE_CARD_ONLINE_ONLY',
          `the card's service code asks for online authorization (${authorization}): never taken offline`,
        );
    }
    if (
      !Number.isSafeInteger(candidate.amountMinor) ||
      candidate.amountMinor < 0 ||
      candidate.amountMinor > MAX_MINOR
    )
      throw new JournalError('JOURNAL_INVALID', 'amountMinor must be an integer number of minor units');
    if (currencyByAlpha(candidate.currency) === undefined)
      throw new JournalError(
        'JOURNAL_INVALID',
        `currency "${String(candidate.currency)}" is not an ISO 4217 code`,
      );
    checkCardKey(candidate.fingerprint, 'fingerprint');
    if (candidate.amountMinor > limits.maxTransactionMinor)
      return refuse(
        'OFFLINE_AMOUNT_LIMIT',
        `the amount is above the offline limit of ${limits.maxTransactionMinor}`,
      );
    const open = this.stmts.open.get();
    const count = open?.n ?? 0;
    if (count + 1 > limits.maxCount)
      return refuse(
        'OFFLINE_COUNT_LIMIT',
        `the queue holds ${count} payment(s), the limit is ${limits.maxCount}`,
      );
    const total = this.stmts.openTotal.get(candidate.currency)?.total ?? 0;
    if (total + candidate.amountMinor > limits.maxTotalMinorPerCurrency)
      return refuse(
        'OFFLINE_TOTAL_LIMIT',
        `the stored ${candidate.currency} total would exceed the limit of ${limits.maxTotalMinorPerCurrency}`,
      );
    const ofCard = this.stmts.openOfCard.get(candidate.fingerprint)?.n ?? 0;
    if (ofCard + 1 > limits.maxCountPerCard)
      return refuse(
        'OFFLINE_CARD_LIMIT',
        `the queue holds ${ofCard} payment(s) of this card, the limit is ${limits.maxCountPerCard}`,
      );
    const now = this.now().getTime();
    const oldest = this.stmts.oldestKnown.get(realStoredAtBounds(now))?.oldest ?? null;
    if (oldest !== null && now - oldest > limits.maxAgeHours * 3_600_000)
      return refuse('OFFLINE_AGE_LIMIT', `the oldest stored payment is older than ${limits.maxAgeHours} h`);
    return undefined;
  }

  /**
   * Stores a payment taken offline, durably, or throws {@link OfflineRefusedError} saying which rule refuses it.
   * The limits are checked in the same transaction as the insert, so concurrent stores cannot overrun them.
   * `onStored` is called with the payment's transactionId in that same transaction, after the insert: what the stored
   * payment pays for (a pay station's ticket) is written with it, so that a crash cannot keep one without the other.
   */
  store(
    payment: OfflinePaymentInput,
    options: { onStored?: (transactionId: string) => void } = {},
  ): StoredPayment {
    if (typeof payment !== 'object' || payment === null)
      throw new JournalError('JOURNAL_INVALID', 'payment must be an object');
    this.followClock(true);
    const id = this.journal.atomically(true, () => {
      const refused = this.refusalNow(payment);
      if (refused) throw refused;
      // Its forward is begun in the journal from what is stored: a payment whose entry the journal would refuse
      // could never be forwarded, and each claim, taking the oldest first, would fail on it and forward nothing
      // stored after it. The journal's own rule, checked now.
      validateBegin(forwardOf(payment, payment.body, this.now()).entry);
      const sealed = seal(this.key, payment.body, bodyContext(payment.transactionId));
      // An online attempt that provably never left (resolved NOT_SENT) frees its transactionId: the same request
      // may then wait here. Any other journaled use of it is a duplicate.
      const journaled = this.journal.findByTransactionId(payment.transactionId);
      const freed = journaled?.state === 'resolved' && journaled.resolution === NOT_SENT;
      if (this.stmts.byTx.get(payment.transactionId) || (journaled && !freed))
        throw new JournalError('JOURNAL_DUPLICATE', 'that transactionId is already journaled or stored');
      const inserted = Number(
        this.stmts.insert.run({
          transaction_id: payment.transactionId,
          service: payment.service,
          comments: payment.comments,
          method: payment.method,
          path: payment.path,
          body_enc: sealed,
          amount_minor: payment.amountMinor,
          currency: payment.currency,
          entry_mode: payment.entryMode,
          masked_pan: payment.maskedPan ?? null,
          flow_id: payment.flowId ?? null,
          stored_at: this.now().getTime(),
          card_fingerprint: payment.fingerprint,
        }).lastInsertRowid,
      );
      options.onStored?.(payment.transactionId);
      return inserted;
    });
    const stored = this.get(id);
    if (!stored) throw new JournalError('JOURNAL_IO', 'stored payment vanished');
    this.logger.info(
      {
        offlineId: id,
        transactionId: payment.transactionId,
        amountMinor: payment.amountMinor,
        currency: payment.currency,
      },
      'payment stored for forwarding',
    );
    return stored;
  }

  get(id: number): StoredPayment | undefined {
    const r = this.stmts.get.get(id);
    return r ? toPayment(r) : undefined;
  }

  findByTransactionId(transactionId: string): StoredPayment | undefined {
    const r = this.stmts.byTx.get(transactionId);
    return r ? toPayment(r) : undefined;
  }

  /**
   * The payment stored under `transactionId` while what it collects is not known: still stored, or forwarded and its
   * forward's journal entry still in flight (an answer lost is in flight until timeout recovery resolves it). Its
   * customer was told it was approved. Undefined once the forward's entry is final (approved, declined, rejected or
   * resolved: the journal then says what it took), or when nothing was stored under `transactionId`.
   */
  awaitingOutcome(transactionId: string): StoredPayment | undefined {
    const r = this.stmts.awaitingOutcome.get(transactionId);
    return r ? toPayment(r) : undefined;
  }

  /** Newest first. */
  list(limit = 100): StoredPayment[] {
    return this.stmts.list.all(limit).map((r) => toPayment(r));
  }

  /** Payments declined, rejected or of unknown outcome after forwarding that the operator has not acknowledged. */
  declinedAfterForward(): StoredPayment[] {
    return declinesWithResolutions(this.journal.db, this.stmts.declined.all());
  }

  /** The operator has seen it; returns whether it was pending acknowledgement. */
  acknowledgeDecline(id: number): boolean {
    return this.journal.atomically(false, () => this.stmts.acknowledge.run(id).changes === 1);
  }

  status(): OfflineStatus {
    return offlineQueueStatus(this.journal, { policy: this.options.policy, limits: this.limits }, this.now());
  }

  /**
   * Claims up to `max` of the oldest stored payments and journals their forwards, begun already marked sent, in one
   * durable transaction made right before they go out: a payment is claimed exactly when its journal entry exists, so
   * it can never be sent twice, and that one commit is each forward's begin and mark (one durable write before the
   * send, one after). Through the group commit: the claim shares its disk sync with the outcomes of the forwards in
   * flight.
   *
   * The sender owns each forward's entry from inside this write, as it owns a live payment's (DESIGN.md rule 3: one
   * owner at a time): the commit makes the entries visible, in flight and marked sent, while its log may still be
   * syncing on the thread pool and the event loop turns; a sweep for unowned entries would otherwise hand one to
   * recovery, whose timeout void would race the forward itself. Ownership of a claim that is not sent (the write threw,
   * the commit failed) is released here.
   */
  private async claimBatch(
    sender: JournaledSender,
    max: number,
  ): Promise<{ claimed: Claimed[]; closed: StoredPayment[] }> {
    const taken: (() => void)[] = [];
    // The requests opened by this claim, in clear: wiped here when the claim fails (none of them will be sent), by
    // each forward after its send otherwise.
    const opened: Buffer[] = [];
    const releaseTaken = (): void => {
      for (const release of taken.splice(0)) release();
      for (const body of opened.splice(0)) body.fill(0);
    };
    try {
      const { claimed, closed } = await this.journal.commitDurably(() => {
        try {
          const unsent: Unsent[] = [];
          return { claimed: this.claimRows(sender, max, taken, unsent, opened), closed: unsent };
        } catch (e) {
          // Undone with this write's savepoint: released at once, before another write of the batch can begin an
          // entry under an id this one's rollback gave back.
          releaseTaken();
          throw e;
        }
      }, BACKGROUND_WRITE);
      this.tellAgeUnknown(claimed);
      return { claimed, closed: this.tellClosed(closed) };
    } catch (e) {
      releaseTaken();
      throw e;
    }
  }

  /**
   * Tells the operator of each payment of a committed claim whose age is not known ({@link expiredThrough}): it is
   * forwarded although its recorded time of storage, read from a clock not yet set or set back since, may make it look
   * decades old (or not yet stored).
   */
  private tellAgeUnknown(claimed: readonly Claimed[]): void {
    for (const { row, ageUnknown } of claimed)
      if (ageUnknown)
        this.logger.warn(
          {
            offlineId: row.id,
            transactionId: row.transaction_id,
            storedAt: isoTime(row.stored_at),
            now: isoTime(this.now().getTime()),
          },
          'stored payment forwarded with its age not known: the terminal clock was not set when it was stored, or ' +
            'has been set back since; the gateway decides',
        );
  }

  /**
   * The stored payments closed unsent by a committed write, read back as closed, each logged for the operator: never
   * sent.
   */
  private tellClosed(closed: readonly Unsent[]): StoredPayment[] {
    const told: StoredPayment[] = [];
    for (const { id, reason, err } of closed) {
      const p = this.get(id);
      if (!p) continue;
      told.push(p);
      const facts = { offlineId: p.id, transactionId: p.transactionId, storedAt: p.storedAt, reason };
      if (reason === OFFLINE_EXPIRED)
        this.logger.warn(
          facts,
          `stored payment known to be older than ${MAX_OFFLINE_AGE_HOURS} h not forwarded (its authorization would ` +
            'come after the validity of its card read): closed for the operator, its card data wiped',
        );
      else
        this.logger.error(
          { ...facts, err },
          'stored payment cannot be read, never forwarded: closed for the operator, its sealed bytes wiped',
        );
    }
    return told;
  }

  /**
   * The one rule of {@link OFFLINE_EXPIRED}: the id of the last payment in the queue (stored or being forwarded)
   * known, at `now` (epoch ms), to have been stored more than {@link MAX_OFFLINE_AGE_HOURS} ago — its `stored_at` a
   * real time ({@link isRealStoredAt}) more than that before `now` — or 0 when there is none. Every stored payment up
   * to it is expired: ids follow the order payments were stored in, so each has waited at least as long, whatever its
   * own `stored_at` says (one stored while the clock was ahead, set back since, is not sent a month late). A payment
   * whose `stored_at` is no real time and that nothing stored after it shows to be past the limit has an age that is
   * not known: it is forwarded, not closed unsent — its customer was told it was paid, and the gateway decides (a
   * decline is told the operator as any other). Dropped, it would be money lost for a card read perhaps an hour ago,
   * whenever a kiosk whose clock battery is flat takes payments before NTP steps its clock on by years. A step seen
   * within the boot the payment was stored in has moved its `stored_at` with it already ({@link followClock}).
   */
  private expiredThrough(now: number): number {
    return this.stmts.expiredThrough.get(EARLIEST_REAL_TIME_MS, now - MAX_FORWARD_AGE_MS)?.id ?? 0;
  }

  /**
   * Closes every stored payment known to have been stored more than {@link MAX_OFFLINE_AGE_HOURS} ago
   * ({@link expiredThrough}; {@link OFFLINE_EXPIRED}, its card data wiped), in one durable write, and returns them as
   * closed; nothing is written when there is none. Run by each forwarding run before it looks for the gateway: such a
   * payment is never sent, so its card data is not kept on the terminal until the gateway answers again — a week's
   * outage would keep it for as long as the outage lasts, and its age would hold up the age limit of every payment
   * stored meanwhile. The claim applies the same rule to a payment that expires between the two. With none, the empty
   * list at once, without a turn of the event loop (the run's claim is queued in the caller's turn, as before).
   */
  private closeExpired(): StoredPayment[] | Promise<StoredPayment[]> {
    const now = this.now().getTime();
    if (this.stmts.storedThrough.all(this.expiredThrough(now)).length === 0) return [];
    return this.journal
      .commitDurably(() =>
        this.stmts.storedThrough.all(this.expiredThrough(now)).map(({ id }): Unsent => {
          this.stmts.closeUnsent.run(OFFLINE_EXPIRED, now, id);
          return { id, reason: OFFLINE_EXPIRED };
        }),
      )
      .then((closed) => this.tellClosed(closed));
  }

  /**
   * The claim's write (see {@link claimBatch}); each ownership taken is pushed on `taken`, each request opened on
   * `opened`. A stored payment that may not or cannot be sent is closed in this write, never sent, and the next one
   * claimed in its place: one known to have been stored more than {@link MAX_OFFLINE_AGE_HOURS} ago
   * ({@link expiredThrough}; {@link OFFLINE_EXPIRED}, its card data wiped), one whose sealed request cannot be read
   * ({@link OFFLINE_UNREADABLE}, see {@link sealedRequest}); each is pushed on `closed`.
   */
  private claimRows(
    sender: JournaledSender,
    max: number,
    taken: (() => void)[],
    closed: Unsent[],
    opened: Buffer[],
  ): Claimed[] {
    const claimed: Claimed[] = [];
    const now = this.now().getTime();
    const expiredThrough = this.expiredThrough(now);
    for (;;) {
      const want = max - claimed.length;
      const rows = this.stmts.next(want).all();
      let passedOver = false;
      const close = (row: ClaimRow, reason: ClosedUnsent, err?: unknown): void => {
        this.stmts.closeUnsent.run(reason, now, row.id);
        closed.push({ id: row.id, reason, err });
        passedOver = true;
      };
      for (const row of rows) {
        if (row.id <= expiredThrough) {
          close(row, OFFLINE_EXPIRED);
          continue;
        }
        const read = this.sealedRequest(row);
        if (!read.ok) close(row, OFFLINE_UNREADABLE, read.err);
        else {
          const { body } = read;
          opened.push(body);
          claimed.push({
            ...this.claimRow(sender, row, body, taken),
            ageUnknown: !isRealStoredAt(row.stored_at, now),
          });
        }
      }
      if (!passedOver || claimed.length >= max) return claimed;
    }
  }

  /**
   * The request of a stored payment, or why it cannot be read: its bytes gone, or sealed under another key or damaged
   * (the key itself is the journal's: {@link checkKey}). Such a payment can never be sent; the claim closes it
   * ({@link OFFLINE_UNREADABLE}).
   */
  private sealedRequest(
    row: Pick<Row, 'id' | 'transaction_id' | 'body_enc'>,
  ): { ok: true; body: Buffer } | { ok: false; err: unknown } {
    try {
      if (row.body_enc === null)
        throw new JournalError('JOURNAL_IO', `stored payment ${row.id} has no request bytes left`);
      return { ok: true, body: openSealed(this.key, row.body_enc, bodyContext(row.transaction_id)) };
    } catch (err) {
      return { ok: false, err };
    }
  }

  private claimRow(
    sender: JournaledSender,
    row: ClaimRow,
    body: Buffer,
    taken: (() => void)[],
  ): Omit<Claimed, 'ageUnknown'> {
    const now = this.now();
    const forward = forwardOf(
      {
        transactionId: row.transaction_id,
        service: row.service,
        comments: row.comments,
        method: row.method,
        path: row.path,
        amountMinor: row.amount_minor,
        currency: row.currency,
        flowId: row.flow_id ?? undefined,
        maskedPan: row.masked_pan ?? undefined,
      },
      body,
      now,
    );
    const { request } = forward;
    const entry = this.journal.begin(forward.entry);
    const owned = sender.ownBegun(entry.id);
    taken.push(owned);
    if (this.stmts.claim.run(entry.id, now.getTime(), row.id).changes !== 1)
      throw new JournalError('JOURNAL_BAD_TRANSITION', `stored payment ${row.id} was claimed twice`);
    return { row, request, entry, owned };
  }

  /**
   * Forwards stored payments, oldest first, with at most `concurrency` in flight, through the journal's one sender.
   * Each is claimed (journaled and marked sent in one durable commit) right before it goes out, sent once, and its
   * outcome and the wipe of its card data are committed together. Stops early (leaving the rest stored) when the
   * gateway cannot be reached or `signal` aborts. A claim that fails (the journal's write) stops the claims, and the run
   * rejects with its error only once every forward already sent has its outcome journaled.
   */
  async forwardPending(
    sender: JournaledSender,
    options: {
      concurrency?: number;
      signal?: AbortSignal;
      /**
       * Called with each answered forward's journal entry, its request (decrypted, before the wipe) and outcome, in
       * the outcome's transaction: obligations the answer creates are written with it.
       */
      onOutcome?: (entry: JournalEntry, request: OutgoingRequest, outcome: ForwardOutcome) => void;
    } = {},
  ): Promise<ForwardReport> {
    const concurrency = options.concurrency ?? 4;
    if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64)
      throw new JournalError('JOURNAL_INVALID', 'concurrency must be an integer from 1 to 64');
    this.reconcile();
    // Their age as they waited, whatever the wall clock did meanwhile in this boot.
    this.followClock(false);
    // Those past their seven days first, whether or not the gateway can be reached.
    const closing = this.closeExpired();
    const expired = Array.isArray(closing) ? closing : await closing;
    const tally: Tally = {
      stop: false,
      forwarded: 0,
      approved: 0,
      gatewayUnreachable: false,
      declined: expired,
      unknown: [],
    };
    // Forwards not yet finished, and of them those still on the wire (claimed, not yet answered): a slot frees when
    // its answer is in, so the next claim is queued while that answer's outcome is, and shares its group commit.
    const inFlight = new Set<Promise<void>>();
    let onWire = 0;
    let changed = false;
    let wake: (() => void) | undefined;
    const signal = (): void => {
      changed = true;
      const w = wake;
      wake = undefined;
      w?.();
    };
    // Once a claim finds fewer stored than it asked for, the next is tried only when a forward finishes (as the
    // payments left, and any stored meanwhile, are few), not at every answer.
    let exhausted = false;
    let finished = false;
    // A claim that failed: no further claims, and the run fails with it once the forwards already on the wire have
    // their outcomes journaled (a caller that closes the journal or the connection then loses none of them).
    let failed: { error: unknown } | undefined;
    // A claim makes its forwards `sent` before their connections open: from then on they may have left. Were the
    // gateway unreachable, each would stay in doubt until its connection failed (up to the connect timeout, at every
    // try of an outage), and a power cut then would leave the next start unable to tell that it never left: it would
    // void it, and a payment its customer was told was paid would not be collected. So nothing is claimed unless a
    // connection can be opened first (it sends nothing) — to the gateway, and to the token host too while an OAuth
    // access token must be fetched before the first byte.
    const probe = this.stmts.anyStored.get() === undefined || sender.reachable();
    const reachability = probe === true ? probe : await probe;
    if (reachability !== true && !reachability.reachable) {
      tally.stop = true;
      tally.gatewayUnreachable = true;
      tally.unreachableReason = 'GW_CONNECTION';
      tally.unreachableHost = reachability.host;
    }
    for (;;) {
      const free = concurrency - onWire;
      if (free > 0 && !tally.stop && !failed && !options.signal?.aborted && (!exhausted || finished)) {
        finished = false;
        let claim: { claimed: Claimed[]; closed: StoredPayment[] };
        try {
          claim = await this.claimBatch(sender, free);
        } catch (error) {
          failed = { error };
          claim = { claimed: [], closed: [] };
        }
        const { claimed: batch, closed } = claim;
        tally.declined.push(...closed);
        exhausted = batch.length < free;
        for (const claimed of batch) {
          onWire += 1;
          let onTheWire = true;
          const answered = (): void => {
            if (!onTheWire) return;
            onTheWire = false;
            onWire -= 1;
            signal();
          };
          const run: Promise<void> = this.forwardOne(
            claimed,
            sender,
            tally,
            answered,
            options.onOutcome,
          ).finally(() => {
            answered();
            inFlight.delete(run);
            finished = true;
            signal();
          });
          inFlight.add(run);
        }
      }
      if (inFlight.size === 0) break;
      if (!changed) await new Promise<void>((resolve) => (wake = resolve));
      changed = false;
    }
    if (failed) throw failed.error;
    return {
      forwarded: tally.forwarded,
      approved: tally.approved,
      declined: tally.declined,
      unknown: tally.unknown,
      gatewayUnreachable: tally.gatewayUnreachable,
      ...(tally.unreachableReason !== undefined ? { unreachableReason: tally.unreachableReason } : {}),
      ...(tally.unreachableHost !== undefined ? { unreachableHost: tally.unreachableHost } : {}),
      remaining: this.stmts.open.get()?.n ?? 0,
    };
  }

  private async forwardOne(
    { row, request, entry, owned }: Claimed,
    sender: JournaledSender,
    tally: Tally,
    answered: () => void,
    onOutcome: ((entry: JournalEntry, request: OutgoingRequest, outcome: ForwardOutcome) => void) | undefined,
  ): Promise<void> {
    const entryId = entry.id;
    let outcome: ForwardOutcome;
    let short = false;
    try {
      outcome = await sender.sendBegun(entry, request, {
        // Durably 'sent' by its claim, whose commit precedes the first byte (DESIGN.md rule 1); owned since that write.
        markedSent: true,
        owned,
        // Refused for now (the processor down a while): back to the queue, like a forward that could not be sent.
        refusalForNowNotSent: true,
        // Nobody waits for it at the terminal: its outcome's commit may wait briefly for others to share it.
        background: true,
        failpoints: { answered: 'offline.forwarded' },
        onAnswered: (o) => {
          // Unreachable: no further claims (the loop reads the tally when woken).
          if (o.kind === 'not-sent') tally.stop = true;
          answered();
        },
        // The stored payment changes in the same transaction as its journal entry.
        onOutcome: (journaled, o) => {
          if (o.kind === 'not-sent') {
            this.stmts.unclaim.run(row.id);
            return;
          }
          short =
            this.complete(row, o.kind, {
              gatewayId: o.gatewayId,
              status: o.status,
              reason: o.reason ?? o.error?.code,
              // The amount the answer states, as the journal records it.
              authorizedMinor: o.authorizedMinor ?? o.amountMinor,
            }) === PARTIAL_APPROVAL;
          onOutcome?.(journaled, request, o);
        },
      });
    } catch (e) {
      if (this.journal.get(entryId)?.state === 'sent') {
        // Sent, but its outcome could not be journaled: recovery resolves it like any unknown outcome.
        this.logger.error({ err: e, offlineId: row.id }, 'forward outcome not journaled; left to recovery');
        tally.unknown.push(entryId);
      } else
        this.logger.warn(
          { err: e, offlineId: row.id },
          'forward entry no longer in flight; outcome not journaled',
        );
      return;
    } finally {
      request.body.fill(0);
    }
    if (outcome.kind === 'not-sent') {
      tally.stop = true;
      tally.gatewayUnreachable = true;
      tally.unreachableReason ??= outcome.reason;
      return;
    }
    const reason = outcome.reason ?? outcome.error?.code;
    tally.forwarded += 1;
    switch (outcome.kind) {
      case 'approved': {
        tally.approved += 1;
        if (!short) break;
        const p = this.get(row.id);
        if (p) tally.declined.push(p);
        this.logger.warn(
          {
            offlineId: row.id,
            transactionId: row.transaction_id,
            amountMinor: row.amount_minor,
            approvedMinor: outcome.authorizedMinor ?? outcome.amountMinor,
          },
          'offline payment approved for less than its amount after forwarding',
        );
        break;
      }
      case 'declined':
      case 'rejected': {
        const p = this.get(row.id);
        if (p) tally.declined.push(p);
        this.logger.warn(
          { offlineId: row.id, transactionId: row.transaction_id, outcome: outcome.kind, reason },
          'offline payment not approved after forwarding',
        );
        break;
      }
      case 'unknown':
        tally.unknown.push(entryId);
        break;
    }
  }
}

/** The offline queue of a journal, read-only (see {@link openOfflineQueueReadOnly}). */
export interface OfflineQueueReader {
  /** As {@link offlineQueueStatus}. */
  status(settings: { policy: OfflinePolicy; limits: OfflineLimits }): OfflineStatus;
  /** As {@link offlineDeclinesToAcknowledge}. */
  declinesToAcknowledge(): StoredPayment[];
  close(): void;
}

/**
 * Opens the offline queue of the journal at `path` read-only ({@link openJournalReadOnly}), for `queue status` and
 * `queue declined` while the terminal runs: no write, no migration, no schema rewrite (neither reads the card's
 * fingerprint, which a journal the terminal has not yet rewritten lacks). A journal older than the offline queue
 * (schema before migration 0002) has nothing stored. `JOURNAL_IO` when the file cannot be opened, `JOURNAL_MIGRATION`
 * when a newer terminal wrote it.
 */
export function openOfflineQueueReadOnly(
  path: string,
  options: { busyTimeoutMs?: number; now?: () => Date } = {},
): OfflineQueueReader {
  const journal = openJournalReadOnly(path, migration0002.version, options);
  if (journal === undefined)
    return { status: emptyOfflineStatus, declinesToAcknowledge: () => [], close: () => undefined };
  return {
    status: (settings) => readOn(journal, () => offlineQueueStatus(journal, settings)),
    declinesToAcknowledge: () => readOn(journal, () => offlineDeclinesToAcknowledge(journal)),
    close: () => journal.close(),
  };
}
