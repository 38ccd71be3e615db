import { createActor } from 'xstate';
import type { Config } from '../config/index.js';
import {
  operatorService,
  provideFlowEffects,
  type FlowEffects,
  type FlowSettings,
  type OperatorCommand,
  type HoldExpiryResult,
  type HoldRecord,
  type OperatorResult,
  type OriginalTransaction,
} from '../flows/index.js';
import {
  answeredAmountOf,
  AUDIT_LIST_MAX,
  AuditStore,
  authorizationTransactionOf,
  refundedTotalOf,
  resolvedStanding,
  type AuditQuery,
  type AuditRecord,
  type AuditResult,
  type JournalEntry,
  type RecoveryItem,
  type SqliteJournal,
} from '../journal/index.js';
import { formatAmount, intlLocale, resolveLocale, translator } from '../i18n/index.js';
import type { Logger } from '../log/index.js';
import type {
  ApiError,
  OperatorAction,
  OperatorRequest,
  OperatorResponse,
  OperatorStatus,
  OpenStaySummary,
  Result,
  ServiceResult,
  ServiceTask,
  TransactionSummary,
  FeeShortfallSummary,
  OfflineDeclineSummary,
} from './api.js';
import { auditCsv } from './audit-csv.js';
import type { HoldRelease, HoldStanding } from './hold-watch.js';
import { AuditTrail, type RecordedShortfall } from './audit-trail.js';
import type { AltPaymentDesk } from './alt-payment-desk.js';
import type { LinkDesk } from './link-desk.js';
import { sameLocalDay } from './local-time.js';
import { acknowledgeFeeShortfalls, feeShortfalls } from './fee-shortfalls.js';
import { acknowledgeOfflineDeclines, offlineDeclines } from './offline-declines.js';
import { OperatorPayments } from './operator-payments.js';
import type { OperatorPin } from './operator-pin.js';

const REFUNDABLE_OR_VOIDABLE = new Set(['capture', 'sale', 'refund-capture', 'refund-payment', 'credit']);

/**
 * Every operator request carries the PIN (the panel signs in with its first one): a successful PIN check is recorded
 * as a sign-in when it opens an operator session — the first one, or the first after a failed check or after this
 * long without an operator request — so that a panel reloading its list is not one sign-in per reload.
 */
export const OPERATOR_SESSION_IDLE_MS = 5 * 60_000;

/**
 * How far back the PIN checks recorded in the audit log count again at a start (see `OperatorPin.restore`): the
 * lockouts in a row escalate to a day each (`lockoutMs`), so fourteen days of records hold at least the ten lockouts
 * in a row that reach a day again for anyone who keeps guessing.
 */
const PIN_CHECKS_KEPT_MS = 14 * 24 * 60 * 60_000;

/** How many refunds' requestIds operator mode keeps to answer a repeat of one (see `OperatorDesk.refundOnce`). */
export const REFUND_REQUESTS_KEPT = 1000;

/** How an operator machine's outcome reads in the audit log. */
function auditResultOf(outcome: OperatorResult['outcome']): AuditResult {
  switch (outcome) {
    case 'approved':
      return 'ok';
    case 'declined':
    case 'rejected':
    case 'not-found':
    case 'not-allowed':
      return 'refused';
    // Sent, answer unknown: timeout recovery resolves it (recorded as a recovery then); or cancelled by its timeout
    // request once its answer was lost: nothing moved; or not sent, the journal could not be read.
    case 'unknown':
    case 'cancelled':
    case 'failed':
      return 'failed';
  }
}

function ok<T>(value: T): Result<T> {
  return { ok: true, value };
}
function fail<T>(code: string, message: string): Result<T> {
  return { ok: false, error: { code, message } };
}
/** A refusal that says until when operator mode is locked (`lockedUntil`, ISO 8601 UTC). */
function lockedOut(code: 'OPERATOR_LOCKED' | 'OPERATOR_PIN', message: string, lockedUntil: string): ApiError {
  return { code, message, lockedUntil };
}

/**
 * What a void of the transaction `e` refers to (a void, or recovery's timeout void) did: `given-back` when it went
 * through — approved, or finished by recovery: a void whose answer was lost is resolved by a timeout void of what it
 * voids (reference/gateway.md §7), `resolution` `timeout-void` (src/journal/recovery.ts); `pending` while its outcome
 * is not known (pending, sent, unknown: it may have gone through, or may yet be refused); `nothing` for any other
 * entry, and for a void refused or resolved otherwise (`not-voidable`, `not-at-gateway`), which moved nothing.
 */
function voidOutcome(e: JournalEntry): 'given-back' | 'pending' | 'nothing' {
  if (!e.service.startsWith('void-') && e.service !== 'timeout-void') return 'nothing';
  switch (e.state) {
    case 'approved':
      return 'given-back';
    case 'pending':
    case 'sent':
    case 'unknown':
      return 'pending';
    case 'resolved':
      return e.resolution === 'timeout-void' ? 'given-back' : 'nothing';
    case 'declined':
    case 'rejected':
      return 'nothing';
  }
}

/**
 * The journal's record of a transaction the operator may refund or void (FlowEffects.findTransaction): its amount,
 * what was refunded already, whether the settlement day still allows a void, and for a capture the authorization it
 * captured (voiding a capture leaves that hold in place, gateway.md §7). An approved one, or one whose answer was lost
 * and that recovery found standing at the gateway ({@link resolvedStanding}: never voidable; without the gateway's id,
 * which its lost answer carried, the terminal cannot refund it either). Amounts in the local currency (`toLocal`, with
 * the authorization the transaction follows: a refund of a converted payment is journaled in the card's currency).
 */
export function findTransaction(
  journal: SqliteJournal,
  transactionId: string,
  options: {
    now: Date;
    timeZone: string;
    currency: string;
    authorizedTotal: (tx: string) => number | undefined;
    /**
     * An amount as the journal holds it (the gateway's: a converted payment of processor family A is in the card's
     * currency) in the local currency the machines and the operator count in.
     */
    toLocal?: (
      authorizationTx: string,
      minor: number,
      currency: string,
    ) => { minor: number; currency: string };
  },
): OriginalTransaction | null {
  const entry = journal.findByTransactionId(transactionId);
  if (!entry) return null;
  // Approved, or left in flight and found standing by recovery (its timeout void refused NOT_VOIDABLE): money moved.
  const standing = resolvedStanding(entry);
  if (!(entry.state === 'approved' && entry.gatewayId) && !standing) return null;
  const service = entry.service;
  if (!REFUNDABLE_OR_VOIDABLE.has(service)) return null;
  const related = journal.referencing(transactionId);
  const refundedMinor = refundedTotalOf(journal, transactionId);
  const voided = related.some((e) => voidOutcome(e) === 'given-back');
  const voidPending = !voided && related.some((e) => voidOutcome(e) === 'pending');
  // A void of it the gateway refused as NOT_VOIDABLE (settled already, whatever the local day says): another would be
  // refused too; a refund gives the money back.
  const voidRefused = related.some(
    (e) => e.service.startsWith('void-') && e.state === 'rejected' && e.reason === 'NOT_VOIDABLE',
  );
  let authorization: OriginalTransaction['authorization'];
  if (service === 'capture' && entry.referencedTransactionId) {
    const auth = journal.findByTransactionId(entry.referencedTransactionId);
    if (auth?.gatewayId)
      authorization = {
        gatewayId: auth.gatewayId,
        transactionId: entry.referencedTransactionId,
        authorizedMinor: options.authorizedTotal(entry.referencedTransactionId) ?? auth.amountMinor ?? 0,
      };
  }
  const currency = entry.currency ?? options.currency;
  // The conversion terms of a capture, sale or refund are those of the authorization it follows (a credit has none).
  const authTx = service === 'credit' ? undefined : authorizationTransactionOf(journal, transactionId);
  const local = (minor: number): { minor: number; currency: string } =>
    authTx !== undefined && options.toLocal ? options.toLocal(authTx, minor, currency) : { minor, currency };
  // What it took or gave back as the gateway answered (a capture answered for less than asked: what it captured).
  const amount = local(answeredAmountOf(entry) ?? 0);
  return {
    transactionId,
    ...(entry.gatewayId ? { gatewayId: entry.gatewayId } : {}),
    service: service as OriginalTransaction['service'],
    amountMinor: amount.minor,
    currency: amount.currency,
    refundedMinor: local(refundedMinor).minor,
    voided,
    voidPending,
    // Found standing by recovery: its timeout void was refused NOT_VOIDABLE, so a void of it would be too.
    voidable:
      !voided &&
      !voidPending &&
      !voidRefused &&
      !standing &&
      sameLocalDay(entry.createdAt, options.now, options.timeZone),
    ...(authorization ? { authorization } : {}),
  };
}

/**
 * Operator mode behind the PIN (DESIGN.md: operator actions need the PIN): the recent transactions with what each
 * allows, refunds and voids — run by the flows' operator machine, the one the unit tests drive — and a flush of the
 * offline queue; the terminal's payment links and alternative-method sales (src/host/operator-payments.ts). Every wrong
 * PIN, every sign-in (see {@link OPERATOR_SESSION_IDLE_MS}), refund, void and queue flush is recorded in the audit log
 * (a link's change and an alternative-method refund by the desk that makes it), and the checks refused during a
 * lockout in two records at most (see `recordRefusal`); never the PIN.
 */
/** How each service task is named in the audit log (service mode on and off: the host's `AuditTrail.serviceMode`). */
const SERVICE_AUDIT_ACTION = {
  'reader-self-test': 'reader-self-test',
  'test-print': 'test-print',
  reprint: 'reprint',
  'rerun-recovery': 'recovery',
} as const satisfies Record<Exclude<ServiceTask, 'on' | 'off'>, string>;

export class OperatorDesk {
  /** The audit log the desk records in (given, or over the desk's journal). */
  readonly audit: AuditTrail;
  /** Epoch milliseconds of the last operator request with a good PIN; undefined when no session is open. */
  private sessionSeenMs: number | undefined;
  /**
   * The lockout whose refusals are being counted (its end, epoch milliseconds) and how many of them were not recorded:
   * only the first refusal of a lockout is recorded, the others are summed up in one record when the lockout is over
   * (at the next PIN check after it, or when the terminal closes; see {@link recordRefusal}).
   */
  private refusals: { untilMs: number; unrecorded: number } | undefined;
  /** The code of the PIN file's problem last logged, while the file cannot be used (see {@link checkPin}). */
  private pinFileProblem: string | undefined;
  /** Payment links and alternative-method sales in operator mode. */
  private readonly payments: OperatorPayments;
  /** The refund or void under way, if any: the next waits for it (see {@link run}). */
  private followOns: Promise<unknown> = Promise.resolve();
  /** The refunds asked for under a requestId, newest last, with their answers (see {@link refundOnce}). */
  private readonly refundsAsked = new Map<
    string,
    { action: string; answer: Promise<Result<OperatorResponse>> }
  >();

  constructor(
    private readonly deps: {
      config: Config;
      journal: SqliteJournal;
      pin: OperatorPin;
      effects: FlowEffects;
      settings: FlowSettings;
      clock: { now(): number };
      now: () => Date;
      logger: Logger;
      authorizedTotal: (transactionId: string) => number | undefined;
      toLocal: (
        authorizationTx: string,
        minor: number,
        currency: string,
      ) => { minor: number; currency: string };
      flushQueue: () => Promise<{ forwarded: number; declined: number; remaining: number }>;
      changed: () => void;
      /** The operator status bar's figures (never on a customer screen: only through here, with the PIN). */
      status: () => OperatorStatus;
      /** Carries out a service-mode task (src/host/terminal-host.ts); never throws. */
      service: (task: ServiceTask, reason?: string) => Promise<ServiceResult>;
      /** Where operator actions are recorded; default: the audit log of `journal`. */
      audit?: AuditTrail;
      /** The terminal's payment links (they record the operator's changes in the audit log themselves). */
      links: Pick<LinkDesk, 'operatorPage' | 'setStatusByOperator'>;
      /** Alternative-method sales (the desk records the operator's refunds in the audit log itself). */
      altPayments: Pick<AltPaymentDesk, 'list' | 'get' | 'refund'>;
      /**
       * The open tap-and-go stays: their holds, the last entry first, each with where it stands (the hold watch's
       * `standing`); and the release of one by the hold watch (`HoldWatch.release`: the expiry's own reversal).
       * Default: none (no stay listed, none to release).
       */
      stays?: {
        list: (limit: number) => { hold: HoldRecord; standing: HoldStanding; doubtLinkId?: string }[];
        release: (holdId: string) => HoldRelease;
      };
    },
  ) {
    this.audit = deps.audit ?? new AuditTrail(new AuditStore(deps.journal), deps.logger);
    // A restart must not lift a lockout nor forget the wrong PINs counted towards one: guessing would cost a restart.
    deps.pin.restore(this.audit.pinChecksSince(deps.now().getTime() - PIN_CHECKS_KEPT_MS));
    this.payments = new OperatorPayments({
      links: deps.links,
      altPayments: deps.altPayments,
      locale: deps.config.terminal.locale,
    });
  }

  find(transactionId: string): OriginalTransaction | null {
    const { config } = this.deps;
    return findTransaction(this.deps.journal, transactionId, {
      now: this.deps.now(),
      timeZone: config.terminal.timezone,
      currency: config.terminal.currency,
      authorizedTotal: this.deps.authorizedTotal,
      toLocal: this.deps.toLocal,
    });
  }

  async handle(request: OperatorRequest): Promise<Result<OperatorResponse>> {
    const a = request.action;
    const refused = this.checkPin(request.pin, a.type);
    if (refused) return { ok: false, error: refused };
    switch (a.type) {
      case 'status':
        return ok({ type: 'status', status: this.deps.status() });
      case 'transactions': {
        // Without the resolution requests that never left: a gateway down for an hour leaves hundreds of them,
        // which would push every payment off the list (the status bar and the audit log report recovery).
        const entries = this.deps.journal.list({ limit: a.limit ?? 50, unsentAttempts: false });
        // The fees the listed captures did not collect in full, recorded with their outcomes (after their begin).
        const oldest = Math.min(...entries.map((e) => Date.parse(e.createdAt)).filter(Number.isFinite));
        const shortfalls =
          entries.length > 0 && Number.isFinite(oldest) ? this.audit.feeShortfallsSince(oldest) : new Map();
        return ok({
          type: 'transactions',
          transactions: entries.map((e) => this.summarise(e, shortfalls)),
        });
      }
      case 'refund':
        return this.refundOnce(a, async () =>
          ok(
            await this.run({
              type: 'refund',
              transactionId: a.transactionId,
              ...(a.amountMinor !== undefined ? { amountMinor: a.amountMinor } : {}),
            }),
          ),
        );
      case 'void':
        return ok(await this.run({ type: 'void', transactionId: a.transactionId }));
      case 'flush-queue':
        return ok({ type: 'flush-queue', ...(await this.flushQueue()) });
      case 'offline-declines':
        return ok({ type: 'offline-declines', declines: this.declines() });
      case 'offline-acknowledge': {
        const [done] = acknowledgeOfflineDeclines(this.deps.journal, [a.transactionId], (r) =>
          this.audit.record(r),
        );
        return ok({
          type: 'offline-acknowledge',
          transactionId: a.transactionId,
          acknowledged: done?.acknowledged ?? false,
          declines: this.declines(),
        });
      }
      case 'fee-shortfalls':
        return ok({ type: 'fee-shortfalls', shortfalls: this.shortfalls() });
      case 'fee-shortfall-acknowledge': {
        const [done] = acknowledgeFeeShortfalls(this.audit, [a.transactionId]);
        return ok({
          type: 'fee-shortfall-acknowledge',
          transactionId: a.transactionId,
          acknowledged: done?.acknowledged ?? false,
          shortfalls: this.shortfalls(),
        });
      }
      case 'audit':
        return this.auditView(a);
      case 'service': {
        const done = await this.deps.service(a.task, a.reason);
        // Service mode on and off are recorded by the host, once, whoever asks (operator mode or the fleet).
        if (a.task !== 'on' && a.task !== 'off')
          this.audit.record({
            actor: 'operator',
            action: SERVICE_AUDIT_ACTION[a.task],
            result: done.outcome,
            details: { message: done.message },
          });
        return ok({ type: 'service', task: a.task, ...done });
      }
      case 'links':
        return this.payments.links(a);
      case 'link-deactivate':
        return this.payments.setLinkStatus(a.linkId, 'INACTIVE');
      case 'link-reactivate':
        return this.payments.setLinkStatus(a.linkId, 'ACTIVE');
      case 'alt-sales':
        return this.payments.altSales(a);
      case 'alt-refund':
        return this.refundOnce(a, () => this.payments.altRefund(a));
      case 'stays':
        return ok({ type: 'stays', stays: this.openStays(a.limit ?? 100) });
      case 'hold-release':
        return this.releaseStay(a.holdId, { actor: 'operator' });
    }
  }

  /**
   * The open tap-and-go stays as operator mode lists them, the last entry first, at most `limit`: no card data but the
   * masked number. The one list: the fleet's `open-stays` reads it too (src/host/fleet-terminal.ts).
   */
  openStays(limit: number): OpenStaySummary[] {
    const locale = resolveLocale(this.deps.config.terminal.locale);
    return (this.deps.stays?.list(limit) ?? []).map(({ hold, standing, doubtLinkId }) => ({
      holdId: hold.holdId,
      maskedPan: hold.maskedPan,
      enteredAt: new Date(hold.enteredAtMs).toISOString(),
      held: {
        minor: hold.authorizedMinor,
        currency: hold.currency,
        text: formatAmount(hold.authorizedMinor, hold.currency, locale),
      },
      state: standing,
      ...(doubtLinkId !== undefined ? { phonePaymentInDoubt: doubtLinkId } : {}),
      allowed: standing === 'open' ? ['release'] : [],
    }));
  }

  /**
   * Passback reset: the operator let the car of a stay out by hand, so its hold is released — reversed in full now by
   * the hold watch's own run (journaled before it is sent, the hold closed with its outcome), nothing charged — and
   * the card may enter again. A hold not open, being settled, or whose release is decided already is refused and
   * nothing is sent. Recorded in the audit log (`hold-release`, the hold's id the subject; no card data) with who
   * asked: the operator, or the fleet (actor `fleet`, the command's id in its details). The one release: operator
   * mode's and the fleet's `release-stay` (src/host/fleet-terminal.ts) both come here.
   */
  async releaseStay(
    holdId: string,
    by: StayReleaser,
  ): Promise<Result<Extract<OperatorResponse, { type: 'hold-release' }>>> {
    const asked = by.actor === 'fleet' ? { commandId: by.commandId } : {};
    const start: HoldRelease = this.deps.stays?.release(holdId) ?? { kind: 'not-found' };
    if (start.kind !== 'started') {
      const [code, message] = HOLD_RELEASE_REFUSALS[start.kind];
      this.audit.record({
        actor: by.actor,
        action: 'hold-release',
        subject: holdId,
        result: 'refused',
        code,
        ...(by.actor === 'fleet' ? { details: asked } : {}),
      });
      return fail(code, message);
    }
    const result = await start.result;
    const answer = holdReleaseAnswer(holdId, result, start.hold, this.deps.config.terminal.locale);
    this.audit.record({
      actor: by.actor,
      action: 'hold-release',
      subject: holdId,
      result: answer.outcome === 'released' ? 'ok' : answer.outcome === 'refused' ? 'refused' : 'failed',
      code: answer.code,
      details: {
        outcome: answer.outcome,
        ...(answer.transactionId !== undefined ? { sentTransactionId: answer.transactionId } : {}),
        ...asked,
      },
    });
    this.deps.logger.info(
      { holdId, outcome: answer.outcome, code: answer.code, by: by.actor, ...asked },
      `${by.actor} released a hold`,
    );
    this.deps.changed();
    return ok(answer);
  }

  /**
   * The one rule of a refund submitted twice: a refund asked for under a `requestId` already seen (the operator's
   * second press, a request the bridge or a client repeated) is not carried out again — it gets the first one's
   * answer, waiting for it while it is under way, and moves no money. The same requestId with another refund (another
   * payment or amount) is refused (`REQUEST_ID_REUSED`) and sends nothing. A refund under a new requestId, or without
   * one, is another refund: two partial refunds are carried out while what is left to refund allows (the operator
   * machine's check). The last {@link REFUND_REQUESTS_KEPT} requestIds of this process are kept.
   */
  private refundOnce(
    action: Extract<OperatorAction, { type: 'refund' | 'alt-refund' }>,
    refund: () => Promise<Result<OperatorResponse>>,
  ): Promise<Result<OperatorResponse>> {
    const { requestId, ...asked } = action;
    if (requestId === undefined) return refund();
    const key = JSON.stringify(asked, Object.keys(asked).sort());
    const earlier = this.refundsAsked.get(requestId);
    if (earlier !== undefined) {
      this.deps.logger.info(
        { action: action.type, requestId },
        'refund submitted again: not carried out again',
      );
      return earlier.action === key
        ? earlier.answer
        : Promise.resolve(fail('REQUEST_ID_REUSED', `requestId ${requestId} was used for another refund`));
    }
    const answer = refund();
    this.refundsAsked.set(requestId, { action: key, answer });
    for (const oldest of this.refundsAsked.keys()) {
      if (this.refundsAsked.size <= REFUND_REQUESTS_KEPT) break;
      this.refundsAsked.delete(oldest);
    }
    return answer;
  }

  /**
   * The audit log for operator mode: the newest `limit` records (default 100) at or after `sinceMs`, oldest first.
   * Call only behind a good PIN (from {@link handle}).
   */
  auditLog(query: AuditQuery = {}): AuditRecord[] {
    return this.audit.list(query);
  }

  /**
   * Operator mode's view of the audit log, for an operator action `{type: 'audit', since?, limit?, format?}`: the
   * records (newest `limit`, default 100, at or after the ISO 8601 `since`, oldest first), and with `format: 'csv'`
   * the CSV export too (recorded as an `export`). Call only behind a good PIN (from {@link handle}).
   */
  auditView(query: {
    since?: string;
    limit?: number;
    format?: 'json' | 'csv';
  }): Result<{ type: 'audit'; records: AuditRecord[]; csv?: string }> {
    const sinceMs = query.since === undefined ? undefined : Date.parse(query.since);
    if (sinceMs !== undefined && !(Number.isSafeInteger(sinceMs) && sinceMs >= 0))
      return fail('BAD_REQUEST', 'since must be an ISO 8601 date-time');
    const limit = query.limit ?? 100;
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > AUDIT_LIST_MAX)
      return fail('BAD_REQUEST', `limit must be a whole number from 1 to ${AUDIT_LIST_MAX}`);
    const q: AuditQuery = { limit, ...(sinceMs !== undefined ? { sinceMs } : {}) };
    const records = this.audit.list(q);
    return ok(
      query.format === 'csv'
        ? { type: 'audit', records, csv: this.exported(records, q) }
        : { type: 'audit', records },
    );
  }

  /** `records` as CSV, the export recorded in the log. */
  private exported(records: AuditRecord[], query: AuditQuery): string {
    this.audit.record({
      actor: 'operator',
      action: 'export',
      subject: 'audit-log',
      result: 'ok',
      details: {
        format: 'csv',
        records: records.length,
        ...(query.sinceMs !== undefined ? { since: new Date(query.sinceMs).toISOString() } : {}),
      },
    });
    return auditCsv(records);
  }

  /**
   * A standalone credit on the attended terminal (money out to any card, for any amount, linked to no sale): admitted
   * only with the operator PIN, through the same check and lockout as every operator action ({@link checkPin}: a wrong
   * PIN here counts towards the lockout of operator mode, and a lockout refuses both). Each admitted credit is recorded
   * in the audit log (`credit`, `CREDIT_STARTED`); its outcome is the journal's, like every payment's.
   */
  admitCredit(pin: string): Result<undefined> {
    const refused = this.checkPin(pin, 'credit');
    if (refused) return { ok: false, error: refused };
    this.audit.record({
      actor: 'operator',
      action: 'credit',
      result: 'ok',
      code: 'CREDIT_STARTED',
      details: {},
    });
    return ok(undefined);
  }

  /**
   * The one operator PIN check: counts a wrong PIN towards the lockout, records a wrong PIN, a sign-in (see
   * {@link signedIn}) and the refusals during a lockout (see {@link recordRefusal}) for `requested`, the action asked
   * for. Undefined when the PIN is good; else the refusal (`OPERATOR_PIN`, `OPERATOR_LOCKED`, with `lockedUntil` when
   * operator mode is locked; the PIN file's code when it cannot be used any more, see `OperatorPin.check`).
   */
  private checkPin(pin: string, requested: string): ApiError | undefined {
    let check: ReturnType<OperatorPin['check']>;
    try {
      check = this.deps.pin.check(pin);
    } catch (e) {
      // The PIN file was replaced by one that cannot be used (others can read it, it is gone, it holds no PIN): no PIN
      // is checked, none counted, until it is put right. The file and the reason go to the log, not to the panel.
      // Logged once per problem, not at every refusal: an open panel asks for the status every two seconds.
      this.sessionSeenMs = undefined;
      const code = errorCode(e);
      if (this.pinFileProblem !== code)
        this.deps.logger.error(
          { err: e, code },
          'the operator PIN file cannot be used: operator mode is closed',
        );
      this.pinFileProblem = code;
      return {
        code,
        message:
          'the operator PIN file cannot be used: operator mode is closed until it is put right (see the log)',
      };
    }
    if (this.pinFileProblem !== undefined) {
      this.deps.logger.info('the operator PIN file can be used again');
      this.pinFileProblem = undefined;
    }
    if (check === 'locked') {
      this.sessionSeenMs = undefined;
      // The lockout that refused it, even if it has run out since the check.
      const lockEnd = this.deps.pin.lockEnd() ?? this.deps.now().getTime();
      this.recordRefusal(lockEnd, requested);
      const until = new Date(lockEnd).toISOString();
      return lockedOut(
        'OPERATOR_LOCKED',
        `too many wrong PINs: operator mode is locked until ${until}`,
        until,
      );
    }
    this.sumUpRefusals();
    if (check !== 'ok') {
      // A wrong PIN that began a lockout says so: the lockout lasts minutes, not the time between two lines.
      const lockedUntilMs = this.deps.pin.lockedUntil();
      this.sessionSeenMs = undefined;
      this.audit.record({
        actor: 'operator',
        action: 'sign-in-failed',
        result: 'refused',
        code: 'OPERATOR_PIN',
        details: { requested },
      });
      if (lockedUntilMs === undefined) return { code: 'OPERATOR_PIN', message: 'wrong operator PIN' };
      const until = new Date(lockedUntilMs).toISOString();
      return lockedOut('OPERATOR_PIN', `wrong operator PIN: operator mode is locked until ${until}`, until);
    }
    this.signedIn(requested);
    return undefined;
  }

  /**
   * A PIN check refused during the lockout that ends at `untilMs`: the first of each lockout is recorded
   * (`sign-in-failed`, `OPERATOR_LOCKED`, with `lockedUntil`), the others only counted, so that guessing at a locked
   * terminal cannot grow the journal database without bound.
   */
  private recordRefusal(untilMs: number, requested: string): void {
    if (this.refusals?.untilMs === untilMs) {
      this.refusals.unrecorded += 1;
      return;
    }
    this.sumUpRefusals();
    this.refusals = { untilMs, unrecorded: 0 };
    this.audit.record({
      actor: 'operator',
      action: 'sign-in-failed',
      result: 'refused',
      code: 'OPERATOR_LOCKED',
      details: { requested, lockedUntil: new Date(untilMs).toISOString() },
    });
  }

  /**
   * The terminal closes: the refusals of the lockout in force not recorded yet are summed up now (see
   * {@link sumUpRefusals}); a power cut loses that count, not the lockout (`OperatorPin.restore`).
   */
  close(): void {
    this.sumUpRefusals();
  }

  /**
   * After a lockout, at the next PIN check (or when the terminal closes): one record of the refusals during it that
   * were not recorded (`sign-in-failed`, `OPERATOR_LOCKED`, `details.refusedUnrecorded`), none when the first was the
   * only one.
   */
  private sumUpRefusals(): void {
    const done = this.refusals;
    if (!done) return;
    this.refusals = undefined;
    if (done.unrecorded === 0) return;
    this.audit.record({
      actor: 'operator',
      action: 'sign-in-failed',
      result: 'refused',
      code: 'OPERATOR_LOCKED',
      details: { lockedUntil: new Date(done.untilMs).toISOString(), refusedUnrecorded: done.unrecorded },
    });
  }

  /** A good PIN: records a sign-in when it opens a session (see {@link OPERATOR_SESSION_IDLE_MS}). */
  private signedIn(requested: string): void {
    const at = this.deps.now().getTime();
    const open = this.sessionSeenMs !== undefined && at - this.sessionSeenMs < OPERATOR_SESSION_IDLE_MS;
    this.sessionSeenMs = at;
    if (!open)
      this.audit.record({ actor: 'operator', action: 'sign-in', result: 'ok', details: { requested } });
  }

  /** The stored payments not collected in full after forwarding that await the operator's acknowledgement. */
  private declines(): OfflineDeclineSummary[] {
    return offlineDeclines(this.deps.journal, this.deps.config.terminal.locale);
  }

  /** The fees not collected in full that await the operator's acknowledgement. */
  private shortfalls(): FeeShortfallSummary[] {
    return feeShortfalls(this.audit, this.deps.config.terminal.locale);
  }

  private async flushQueue(): Promise<{ forwarded: number; declined: number; remaining: number }> {
    try {
      const report = await this.deps.flushQueue();
      this.audit.record({ actor: 'operator', action: 'queue-flush', result: 'ok', details: { ...report } });
      return report;
    } catch (e) {
      this.audit.record({ actor: 'operator', action: 'queue-flush', result: 'failed', code: errorCode(e) });
      throw e;
    }
  }

  /**
   * One refund or void, run by the operator machine with the host's effects — one at a time: each reads what the
   * journal says of its payment (findTransaction) once the one before has journaled its request and its outcome, so
   * that two asked at once cannot both pass the check of what is left to refund, or of a refund standing against a
   * void (the gateway's own rule would be the only guard left). Its PIN was checked once, when it was asked for
   * ({@link checkPin}): a refund admitted then is carried out in its turn, even if operator mode locked meanwhile, and
   * no second check counts towards the lockout (or resets it) unrecorded.
   */
  private run(command: OperatorCommand): Promise<OperatorResponse> {
    const run = this.followOns.then(() => this.runNow(command));
    this.followOns = run.catch(() => undefined);
    return run;
  }

  private async runNow(command: OperatorCommand): Promise<OperatorResponse> {
    const actor = createActor(provideFlowEffects.operator(this.deps.effects), {
      input: { settings: this.deps.settings, clock: this.deps.clock, command },
    });
    let result: OperatorResult;
    try {
      result = await new Promise<OperatorResult>((resolve, reject) => {
        actor.subscribe({
          complete: () => resolve(actor.getSnapshot().output as OperatorResult),
          error: reject,
        });
        actor.start();
      });
    } catch (e) {
      this.audit.record({
        actor: 'operator',
        action: command.type,
        subject: command.transactionId,
        result: 'failed',
        code: errorCode(e),
        details:
          command.type === 'refund' && command.amountMinor !== undefined
            ? { amountMinor: command.amountMinor }
            : {},
      });
      throw e;
    }
    this.audit.record({
      actor: 'operator',
      action: command.type,
      subject: command.transactionId,
      result: auditResultOf(result.outcome),
      code: result.code,
      details: {
        outcome: result.outcome,
        // What was sent (a full refund's amount is the machine's); else what was asked for, refused before sending.
        ...(result.amountMinor !== undefined
          ? { amountMinor: result.amountMinor, currency: result.currency }
          : command.type === 'refund' && command.amountMinor !== undefined
            ? { amountMinor: command.amountMinor }
            : {}),
        ...(result.service !== undefined ? { service: result.service } : {}),
        ...(result.transactionId !== undefined ? { sentTransactionId: result.transactionId } : {}),
      },
    });
    this.deps.logger.info(
      { action: command.type, outcome: result.outcome, code: result.code, service: result.service },
      'operator follow-on finished',
    );
    this.deps.changed();
    return {
      type: command.type,
      outcome: result.outcome,
      code: result.code,
      message: result.message,
      transactionId: result.transactionId ?? command.transactionId,
    };
  }

  /**
   * Recovery resolved an in-flight journal entry (after the host's `recovery` record of it): when it is a refund or
   * void operator mode sent and recorded with its outcome unknown (its answer was lost), one more record of that action
   * — actor `system`, the payment its subject as before, the resolution its code — says what finally became of it:
   * `ok` when it went through (a void given back by recovery's timeout void of what it voids, by {@link voidOutcome}'s
   * rule; a refund found standing, `not-voidable`), `refused` for a void the gateway refused (`not-voidable`: nothing
   * given back), `failed` when it moved nothing (a refund cancelled by its timeout void, either never at the gateway).
   * Once per entry; any other entry (a flow's own compensation void, a payment) is left to the `recovery` record.
   */
  followOnResolved(item: RecoveryItem): void {
    const entry = this.deps.journal.get(item.entryId);
    const subject = entry?.referencedTransactionId;
    if (entry === undefined || subject === undefined) return;
    const action = entry.service.startsWith('void-')
      ? 'void'
      : entry.service === 'refund-capture' || entry.service === 'refund-payment'
        ? 'refund'
        : undefined;
    if (action === undefined) return;
    const sent: Record<string, string> =
      entry.transactionId !== undefined ? { sentTransactionId: entry.transactionId } : {};
    if (
      !this.audit.holds(action, subject, { outcome: 'unknown', service: entry.service, ...sent }) ||
      this.audit.holds(action, subject, { entryId: entry.id })
    )
      return;
    const [result, outcome]: [AuditResult, OperatorResult['outcome']] =
      action === 'void'
        ? voidOutcome(entry) === 'given-back'
          ? ['ok', 'approved']
          : item.resolution === 'not-voidable'
            ? ['refused', 'rejected']
            : ['failed', 'cancelled']
        : resolvedStanding(entry)
          ? ['ok', 'approved']
          : ['failed', 'cancelled'];
    this.audit.record({
      actor: 'system',
      action,
      subject,
      result,
      code: item.resolution,
      details: {
        outcome,
        entryId: entry.id,
        service: entry.service,
        ...sent,
      },
    });
  }

  /**
   * One journal entry as operator mode lists it: its journal state (with how recovery resolved it), or `voided` for a
   * payment or refund voided, `void pending` for one whose void awaits its outcome (see {@link findTransaction}). The amount of a payment the operator can act on is the one
   * a refund or void of it sends, in the unit the operator machine counts in and the panel reads a typed refund amount
   * in (see {@link operatorAmount}); any other entry shows the amount it requested, as journaled.
   */
  private summarise(
    e: JournalEntry,
    shortfalls: ReadonlyMap<string, RecordedShortfall> = new Map(),
  ): TransactionSummary {
    const allowed: ('refund' | 'void')[] = [];
    const o =
      (e.state === 'approved' || resolvedStanding(e)) && e.transactionId ? this.find(e.transactionId) : null;
    // The actions the operator machine would carry out, by its own rule (a full refund: of what is left).
    if (o)
      for (const type of ['refund', 'void'] as const)
        if ('service' in operatorService({ type, transactionId: o.transactionId }, o)) allowed.push(type);
    // terminal.locale as the configuration takes it (`de_DE` or `de-DE`): Intl takes the second only.
    const locale = resolveLocale(this.deps.config.terminal.locale);
    const shown = o ? operatorAmount(o) : { minor: e.amountMinor, currency: e.currency };
    const amount =
      shown.minor !== undefined && shown.currency
        ? {
            minor: shown.minor,
            currency: shown.currency,
            text: formatAmount(shown.minor, shown.currency, locale),
          }
        : undefined;
    // A capture that took less than owed; or a tap-and-go hold whose fee the tariff could not price in the hold's
    // currency (recorded on the authorization: no capture was sent), said in words on top of the amount.
    const recorded = e.transactionId ? shortfalls.get(e.transactionId) : undefined;
    const unpriced =
      e.service === 'preauth' && recorded?.code === 'FEE_NOT_COMPUTABLE' ? recorded.holdCurrency : undefined;
    const short = e.service === 'capture' || unpriced !== undefined ? recorded : undefined;
    return {
      transactionId: e.transactionId ?? e.referencedTransactionId ?? `entry-${e.id}`,
      service: e.service,
      comments: e.comments,
      ...(e.gatewayId ? { gatewayId: e.gatewayId } : {}),
      // A payment or refund voided, or whose void awaits its outcome (findTransaction's rule), reads as such, not as
      // the approval its own entry records.
      state: o?.voided
        ? 'voided'
        : o?.voidPending
          ? 'void pending'
          : e.resolution
            ? `${e.state} (${e.resolution})`
            : e.state,
      ...(amount ? { amount } : {}),
      ...(short
        ? {
            shortfall: {
              minor: short.minor,
              currency: short.currency,
              text: formatAmount(short.minor, short.currency, locale),
            },
          }
        : {}),
      ...(short && unpriced !== undefined ? { note: feeNotComputableNote(short, unpriced, locale) } : {}),
      ...(e.maskedPan ? { maskedPan: e.maskedPan } : {}),
      at: e.createdAt,
      allowed,
    };
  }
}

/**
 * The amount operator mode shows for a transaction it may refund or void, from the figures the operator machine plans
 * with (findTransaction): for a capture or sale, what is left to refund — the amount less the refunds that stand or
 * may stand, what a full refund sends — and for a refund or credit its amount, what its void takes back; in the local
 * currency (a converted payment of processor family A is journaled in the card's currency, and its refunds are
 * entered and counted in the local one).
 */
function operatorAmount(o: OriginalTransaction): { minor: number; currency: string } {
  switch (o.service) {
    case 'capture':
    case 'sale':
      return { minor: Math.max(0, o.amountMinor - o.refundedMinor), currency: o.currency };
    case 'refund-capture':
    case 'refund-payment':
    case 'credit':
      return { minor: o.amountMinor, currency: o.currency };
  }
}

/**
 * The line operator mode shows on a hold whose exit fee the tariff could not price in the hold's currency, from the
 * catalogue of `locale` (terminal.locale, which the listed amounts are formatted in too).
 */
function feeNotComputableNote(
  fee: { minor: number; currency: string },
  holdCurrency: string,
  locale: string,
): NonNullable<TransactionSummary['note']> {
  const t = translator(locale);
  return {
    code: 'FEE_NOT_COMPUTABLE',
    text: t.t('operator.feeNotComputable', { fee, holdCurrency }),
    lang: intlLocale(t.locale),
  };
}

/** Who releases a stay: the operator (behind the PIN), or the fleet by a signed command (its id). */
export type StayReleaser = { actor: 'operator' } | { actor: 'fleet'; commandId: string };

/** The release of a hold refused before anything was sent: its code and message. */
const HOLD_RELEASE_REFUSALS = {
  'not-found': ['HOLD_NOT_FOUND', 'no open stay has this hold: it was released or settled already'],
  settling: [
    'HOLD_BUSY',
    'the hold is being settled (an exit, its expiry or recovery): try again in a moment',
  ],
  releasing: [
    'HOLD_RELEASING',
    'a reversal of the hold was refused: the terminal tries again after its wait, or it must be released at the processor',
  ],
} as const satisfies Record<Exclude<HoldRelease['kind'], 'started'>, readonly [string, string]>;

/**
 * How the release's run ended, as operator mode answers it (undefined: the host stopped first); with the amount the
 * reversal approved gave back (`reversed`: the hold in full, in its own currency).
 */
function holdReleaseAnswer(
  holdId: string,
  result: HoldExpiryResult | undefined,
  hold: HoldRecord,
  locale: string,
): Extract<OperatorResponse, { type: 'hold-release' }> {
  const sent = result?.transactionId !== undefined ? { transactionId: result.transactionId } : {};
  const answer = (
    outcome: Extract<OperatorResponse, { type: 'hold-release' }>['outcome'],
    code: string,
    message: string,
  ) => ({ type: 'hold-release' as const, holdId, outcome, code, message, ...sent });
  switch (result?.outcome) {
    case 'reversed':
      return {
        ...answer('released', 'APPROVED', 'the hold was reversed: nothing charged, the card may enter again'),
        reversed: {
          minor: hold.authorizedMinor,
          currency: hold.currency,
          text: formatAmount(hold.authorizedMinor, hold.currency, resolveLocale(locale)),
        },
      };
    case 'released':
      return answer('released', result.reason ?? 'RELEASED', 'the gateway had released the hold already');
    case 'later':
      return answer(
        'later',
        result.reason ?? 'REFUSED',
        'the reversal was refused for now: the terminal tries again after a wait; the card may enter again',
      );
    case 'failed':
      if (result.lastKind !== 'unknown' && result.lastKind !== undefined)
        return answer(
          'refused',
          result.reason ?? result.lastKind.toUpperCase(),
          'the reversal was refused: release the hold at the processor; the card may enter again',
        );
      return answer('unknown', 'OUTCOME_UNKNOWN', 'the reversal has no answer yet: recovery resolves it');
    case undefined:
      return answer('unknown', 'OUTCOME_UNKNOWN', 'the terminal stopped before the reversal was answered');
  }
}

/** The stable code of an error, for the audit log. */
function errorCode(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.length > 0 ? code.slice(0, 64) : 'ERROR';
}
