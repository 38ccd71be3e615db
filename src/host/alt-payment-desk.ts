import {
  checkCustomer,
  checkCustomerField,
  resolveAltProfile,
  type AlternativeMethodsConfig,
  type CustomerField,
  type CustomerFieldProblem,
  type ResolvedAltProfile,
} from '../config/alt-methods.js';
import {
  AltPaymentAnswerError,
  buildAltRefund,
  buildAltSale,
  GatewayError,
  type GatewayClient,
} from '../gateway/index.js';
import {
  AltSaleStore,
  altRefundFlowId,
  type AltSaleReading,
  type AltSaleRecord,
  type AltSaleState,
} from '../journal/alt-sales.js';
import type { JournalEntry, JournaledSender, SqliteJournal } from '../journal/index.js';
import { silentLogger, type Logger } from '../log/index.js';
import type { AuditTrail } from './audit-trail.js';

/**
 * Redirect-based alternative methods at the terminal (spec 001; issue 14 item 5): the host-level API the kiosk's
 * method screens and the operator panel use.
 *
 * - `start(profile, input)` checks what the profile asks of the customer, journals the sale ('sending') durably,
 *   sends `AP_SALE` once and records its answer: a PENDING sale carries the `paymentUrl` the kiosk shows as a QR code.
 * - Status checks (`AP_STATUS`) run from the journal: {@link AltPaymentDesk.runDue} checks every pending sale and
 *   every accepted refund whose interval (spec 001: 60 minutes; `alternativeMethods.statusCheckMinutes`) has passed,
 *   and a timer calls it at the next due time — after a restart too, since the times are read from the journal. Each
 *   check is recorded durably before it is sent, by a conditional update (`AltSaleStore.claimCheck`): no two checks
 *   of one sale are ever closer than the interval, whatever crashes between them.
 * - `refund(id, amount?)` refunds within the settled amount (several partial refunds; their sum never above it) by
 *   `AP_REFUND` through the journaled sender — journal before send, never resent; an unknown outcome is handed to
 *   recovery, which voids it by its transactionId like every refund.
 *
 * Personal data: the customer's e-mail and name go into the sale request and nowhere else — not logged, not stored.
 */

/** What the customer entered, by field (the profile's `customerFields`). */
export type AltCustomerInput = Partial<Record<CustomerField, string>>;

/** A refund as the operator sees it. */
export interface AltRefundView {
  /** The refund's journal entry. */
  readonly entryId: number;
  readonly amountMinor: number;
  readonly currency: string;
  /**
   * in-flight: sent, no answer yet (or being resolved); accepted: REFUNDED by the refund's answer, settlement not yet
   * confirmed by a status check; refunded: confirmed; failed: the gateway refused or the method failed it; voided:
   * its unknown outcome was resolved by a timeout void (nothing refunded); needs-operator: it may stand, check by hand.
   */
  readonly state: 'in-flight' | 'accepted' | 'refunded' | 'failed' | 'voided' | 'needs-operator';
  readonly gatewayId?: string;
  readonly reason?: string;
  /** ISO 8601. */
  readonly createdAt: string;
}

/** A sale as the kiosk and the operator see it. Never carries personal data. */
/** Every state an alternative-method sale is journaled in: what the operator and `altpay list --state` filter on. */
export const ALT_SALE_STATES: readonly AltSaleState[] = [
  'sending',
  'unknown',
  'PENDING',
  'SETTLED',
  'FUNDED',
  'FAILED',
  'ABANDONED',
];

export interface AltSaleView {
  readonly id: number;
  readonly profile: number;
  readonly label: string;
  readonly methodName: string;
  /** The ticket or session reference (`clientReferenceInformation.code`). */
  readonly code: string;
  readonly amountMinor: number;
  readonly currency: string;
  readonly state: AltSaleState;
  /** Where the customer pays (PENDING): the kiosk shows it as a QR code and as text. */
  readonly paymentUrl?: string;
  readonly gatewayId?: string;
  readonly reason?: string;
  /** ISO 8601. */
  readonly createdAt: string;
  readonly lastCheckAt?: string;
  /** When the next status check is allowed (pending sales). */
  readonly nextCheckAt?: string;
  readonly checks: number;
  /** Settled amount (SETTLED, FUNDED), 0 otherwise. */
  readonly settledMinor: number;
  /** Refunds that stand or may stand (in flight, accepted, refunded, needs operator). */
  readonly refundedMinor: number;
  /** What may still be refunded. */
  readonly refundableMinor: number;
  readonly refunds: readonly AltRefundView[];
}

/**
 * What an alternative-method sale stands for as a payment: PENDING, its amount (its customer was told the payment is
 * confirmed later and may go); SETTLED or FUNDED, what settled less the refunds that stand or may stand; anything
 * else (failed, abandoned, never answered), nothing.
 */
export function altSaleStanding(
  sale: Pick<AltSaleView, 'state' | 'amountMinor' | 'refundableMinor'>,
): number {
  return sale.state === 'PENDING' ? sale.amountMinor : sale.refundableMinor;
}

/** Stable codes of {@link AltPaymentError}. */
export type AltPaymentErrorCode =
  | 'ALT_UNKNOWN_PROFILE'
  | 'ALT_CUSTOMER_FIELDS'
  | 'ALT_BAD_AMOUNT'
  | 'ALT_NOT_FOUND'
  | 'ALT_NOT_REFUNDABLE'
  | 'ALT_REFUND_ABOVE_SETTLED'
  | 'ALT_CLOSED';

/** A request of the desk refused before anything was sent. */
export class AltPaymentError extends Error {
  override readonly name = 'AltPaymentError';
  constructor(
    readonly code: AltPaymentErrorCode,
    message: string,
    /** ALT_CUSTOMER_FIELDS: the problem of each field. */
    readonly fields?: Partial<Record<CustomerField, CustomerFieldProblem>>,
  ) {
    super(message);
  }
}

/** A change the kiosk or the operator panel may show. */
export interface AltPaymentEvent {
  readonly type: 'sale';
  readonly sale: AltSaleView;
}

/** Timers the scheduler uses (tests substitute a fake clock's). */
export interface DeskTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface AltPaymentDeskOptions {
  journal: SqliteJournal;
  /** The host's one journaled sender (the owner of every in-flight entry). */
  sender: JournaledSender;
  gateway: Pick<GatewayClient, 'alternativeMethods'>;
  config: AlternativeMethodsConfig;
  now?: () => Date;
  /** Hands a refund whose outcome is unknown to recovery (timeout void by its transactionId). */
  resolveUnknown?: (entryId: number) => void;
  logger?: Logger;
  timers?: DeskTimers;
  /** Where refunds are recorded (the operator's audit log): amounts and ids only, never the customer. */
  audit?: Pick<AuditTrail, 'record'>;
  /**
   * A sale answered PENDING (its customer is told the payment is confirmed later and may go), called in the
   * transaction that records the answer: a pay station's ticket is recorded paid with it.
   */
  salePending?: (sale: AltSaleRecord) => void;
}

/**
 * Added to the configured interval: the gateway measures the interval between the ARRIVALS of two checks, so a
 * first check slowed by the network and a second one that is not would look closer than the interval at the
 * gateway. A minute covers any latency the client's timeouts allow.
 */
export const STATUS_CHECK_GUARD_MS = 60_000;

const REFUND_STANDS: ReadonlySet<AltRefundView['state']> = new Set([
  'in-flight',
  'accepted',
  'refunded',
  'needs-operator',
]);
/** Resolutions of a refund entry after which nothing was refunded (recovery.ts, VOID_DONE; sender: not sent). */
const NOTHING_REFUNDED = new Set(['timeout-void', 'not-at-gateway', 'not-sent']);

/** The alternative-method desk of one terminal. */
export class AltPaymentDesk {
  readonly store: AltSaleStore;
  private readonly views: AltSaleViews;
  private readonly now: () => Date;
  private readonly logger: Logger;
  private readonly timers: DeskTimers;
  private readonly intervalMs: number;
  private readonly listeners = new Set<(e: AltPaymentEvent) => void>();
  private timer: unknown;
  private running: Promise<unknown> = Promise.resolve();
  private refundQueue: Promise<unknown> = Promise.resolve();
  private scheduling = false;
  private closed = false;

  constructor(private readonly options: AltPaymentDeskOptions) {
    this.store = new AltSaleStore(options.journal);
    this.views = new AltSaleViews(this.store, options.config);
    this.now = options.now ?? (() => new Date());
    this.logger = options.logger ?? silentLogger();
    this.timers = options.timers ?? {
      setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
      clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
    };
    this.intervalMs = statusCheckIntervalMs(options.config);
  }

  /** The configured methods, in button order, with what each asks of the customer. */
  profiles(): ResolvedAltProfile[] {
    return this.options.config.profiles.map(resolveAltProfile);
  }

  /** Checks one value the customer typed (the on-screen keyboard calls this per field). */
  checkField(field: CustomerField, value: string): CustomerFieldProblem | undefined {
    return checkCustomerField(field, value);
  }

  /**
   * Starts a sale of `profile` for `amountMinor` (the configured currency of the profile). Resolves once its answer
   * is recorded: PENDING with `paymentUrl`, FAILED, or `unknown` (no answer: nothing to show; the operator sees it).
   * @throws AltPaymentError before anything is journaled (unknown profile, customer fields, amount).
   */
  async start(
    profile: number,
    input: { code: string; amountMinor: number; customer: AltCustomerInput; flowId?: string },
  ): Promise<AltSaleView> {
    if (this.closed) throw new AltPaymentError('ALT_CLOSED', 'the terminal is closing');
    const p = this.profiles().find((x) => x.profile === profile);
    if (!p) throw new AltPaymentError('ALT_UNKNOWN_PROFILE', `profile ${profile} is not configured`);
    const problems = checkCustomer(p, input.customer);
    if (Object.keys(problems).length > 0)
      throw new AltPaymentError('ALT_CUSTOMER_FIELDS', 'some customer fields are not valid', problems);
    if (!Number.isSafeInteger(input.amountMinor) || input.amountMinor <= 0)
      throw new AltPaymentError('ALT_BAD_AMOUNT', 'the amount must be a positive number of minor units');
    const c = input.customer;
    const prepared = buildAltSale({
      code: input.code,
      amountMinor: input.amountMinor,
      currency: p.currency,
      method: { methodName: p.methodName, paymentTypeName: p.paymentTypeName },
      customer: {
        email: (c.email ?? '').trim(),
        firstName: (c.firstName ?? '').trim(),
        lastName: (c.lastName ?? '').trim(),
        country: p.country,
        ...(c.address1 !== undefined ? { address1: c.address1.trim() } : {}),
        ...(c.phoneNumber !== undefined ? { phoneNumber: c.phoneNumber.trim() } : {}),
      },
      urls: this.options.config.returnUrls,
    });
    const record = this.store.begin({
      transactionId: prepared.transactionId ?? '',
      code: input.code,
      profile: p.profile,
      methodName: p.methodName,
      paymentTypeName: p.paymentTypeName,
      amountMinor: input.amountMinor,
      currency: p.currency,
      ...(input.flowId !== undefined ? { flowId: input.flowId } : {}),
    });
    let answered: AltSaleRecord;
    try {
      const result = await this.options.gateway.alternativeMethods.sale(prepared);
      answered =
        result.status === 'PENDING'
          ? this.store.recordAnswer(
              record.id,
              { state: 'PENDING', gatewayId: result.id, paymentUrl: result.paymentUrl },
              this.options.salePending,
            )
          : this.store.recordAnswer(record.id, {
              state: 'FAILED',
              ...(result.id !== undefined ? { gatewayId: result.id } : {}),
              reason: result.reason,
            });
    } catch (e) {
      const code = e instanceof GatewayError ? e.code : 'SEND_FAILED';
      // A sale that may exist at the gateway has no URL the customer saw: nobody can pay it, it ends ABANDONED there.
      // It is not sent again (a second sale would be a second redirect); an answer that named it (e.g. a paymentUrl
      // that cannot be shown, src/gateway/services/alt-payments.ts) leaves its gateway id for the operator.
      const mayExist = !(e instanceof GatewayError) || e.outcomeUnknown;
      const gatewayId = e instanceof AltPaymentAnswerError ? e.gatewayId : undefined;
      answered = this.store.recordAnswer(
        record.id,
        mayExist
          ? { state: 'unknown', reason: code, ...(gatewayId !== undefined ? { gatewayId } : {}) }
          : { state: 'FAILED', reason: code },
      );
      this.logger.warn(
        { altSale: record.id, code, ...(gatewayId !== undefined ? { gatewayId } : {}) },
        'alternative-method sale without a usable answer',
      );
    }
    this.logger.info(
      { altSale: answered.id, state: answered.state, profile: p.profile },
      'alternative-method sale',
    );
    this.emit(answered.id);
    this.schedule();
    return this.views.view(answered);
  }

  get(id: number): AltSaleView | undefined {
    return this.views.get(id);
  }

  /** Newest first; `states` filters (e.g. the operator's pending, settled, failed, abandoned lists). */
  list(options: { states?: readonly AltSaleState[]; limit?: number } = {}): AltSaleView[] {
    return this.views.list(options);
  }

  /**
   * Refunds `amountMinor` (default: all that remains) of a settled sale by `AP_REFUND`. Refunds run one at a time, so
   * two cannot both pass the settled-amount check. Resolves with the refund as journaled after its answer.
   * @throws AltPaymentError ALT_NOT_FOUND, ALT_NOT_REFUNDABLE, ALT_BAD_AMOUNT, ALT_REFUND_ABOVE_SETTLED.
   */
  refund(id: number, amountMinor?: number): Promise<AltRefundView> {
    const run = this.refundQueue
      .then(() => this.refundNow(id, amountMinor))
      .then(
        (refund) => {
          const ok = refund.state === 'accepted' || refund.state === 'refunded';
          this.recordRefund(id, ok ? 'ok' : refund.state === 'failed' ? 'refused' : 'failed', refund.state, {
            amountMinor: refund.amountMinor,
            currency: refund.currency,
            entryId: refund.entryId,
          });
          return refund;
        },
        (e: unknown) => {
          this.recordRefund(id, 'refused', e instanceof AltPaymentError ? e.code : 'ERROR', {
            ...(amountMinor !== undefined ? { amountMinor } : {}),
          });
          throw e;
        },
      );
    this.refundQueue = run.catch(() => undefined);
    return run;
  }

  private async refundNow(id: number, amountMinor: number | undefined): Promise<AltRefundView> {
    if (this.closed) throw new AltPaymentError('ALT_CLOSED', 'the terminal is closing');
    const sale = this.store.get(id);
    if (!sale) throw new AltPaymentError('ALT_NOT_FOUND', `no alternative-method sale ${id}`);
    const view = this.views.view(sale);
    if ((sale.state !== 'SETTLED' && sale.state !== 'FUNDED') || sale.gatewayId === undefined)
      throw new AltPaymentError('ALT_NOT_REFUNDABLE', `a ${sale.state} sale cannot be refunded`);
    const amount = amountMinor ?? view.refundableMinor;
    if (!Number.isSafeInteger(amount) || amount <= 0)
      throw new AltPaymentError('ALT_BAD_AMOUNT', 'the refund must be a positive number of minor units');
    // Spec 001: "several partial refunds allowed while their sum stays below the captured (settled) amount".
    if (amount > view.refundableMinor)
      throw new AltPaymentError(
        'ALT_REFUND_ABOVE_SETTLED',
        `at most ${view.refundableMinor} minor units may still be refunded`,
      );
    const prepared = buildAltRefund({
      saleId: sale.gatewayId,
      code: sale.code,
      amountMinor: amount,
      currency: sale.currency,
      method: { methodName: sale.methodName, paymentTypeName: sale.paymentTypeName },
    });
    const { entry, outcome } = await this.options.sender.send(prepared, {
      flowId: altRefundFlowId(sale.id),
      parentGatewayId: sale.gatewayId,
      // In the outcome's transaction: an accepted refund is followed by status checks from the journal.
      onOutcome: (e, o) => {
        if (o.kind === 'approved') this.store.followRefund(e.id, sale.id);
      },
    });
    if (outcome.kind === 'unknown') this.options.resolveUnknown?.(entry.id);
    this.logger.info(
      { altSale: sale.id, refundEntry: entry.id, outcome: outcome.kind },
      'alternative-method refund',
    );
    this.emit(sale.id);
    this.schedule();
    return this.views.refundView(entry);
  }

  private recordRefund(
    id: number,
    result: 'ok' | 'refused' | 'failed',
    code: string,
    details: Record<string, unknown>,
  ): void {
    this.options.audit?.record({
      actor: 'operator',
      action: 'refund',
      subject: altRefundFlowId(id),
      result,
      code,
      details,
    });
  }

  /** Subscribes to sale changes; returns the unsubscribe. */
  subscribe(listener: (e: AltPaymentEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Takes over what the journal holds at start: sales left 'sending' become 'unknown' (their answer is lost), and
   * the status checks of pending sales and accepted refunds are scheduled from their recorded times.
   */
  resume(): void {
    const lost = this.store.abandonUnanswered();
    if (lost > 0) this.logger.warn({ lost }, 'alternative-method sales without an answer after a restart');
    this.schedule();
  }

  /** The earliest time a status check is due (epoch ms), or undefined when nothing waits for one. */
  nextCheckAt(): number | undefined {
    const due = [
      ...this.store.pending(this.intervalMs).map((x) => x.dueAt),
      ...this.store.unconfirmedRefunds(this.intervalMs).map((x) => x.dueAt),
    ];
    return due.length > 0 ? Math.min(...due) : undefined;
  }

  /** Sends every status check that is due now; resolves with how many were sent. */
  runDue(): Promise<number> {
    const run = this.running.then(() => this.checkDue());
    this.running = run.catch(() => undefined);
    return run;
  }

  private async checkDue(): Promise<number> {
    let sent = 0;
    const now = this.now().getTime();
    for (const { sale, dueAt } of this.store.pending(this.intervalMs)) {
      if (this.closed || dueAt > now || sale.gatewayId === undefined) continue;
      if (!this.store.claimCheck(sale.id, now, this.intervalMs)) continue;
      sent += 1;
      try {
        const result = await this.options.gateway.alternativeMethods.status('sale', {
          id: sale.gatewayId,
          code: sale.code,
          method: { methodName: sale.methodName, paymentTypeName: sale.paymentTypeName },
        });
        const after = this.store.recordStatus(sale.id, result.status, result.reason);
        if (after.state !== sale.state) {
          this.logger.info({ altSale: sale.id, state: after.state }, 'alternative-method sale status');
          this.emit(sale.id);
        }
      } catch (e) {
        this.statusCheckFailed(e, { altSale: sale.id });
      }
    }
    for (const { refund, dueAt } of this.store.unconfirmedRefunds(this.intervalMs)) {
      if (this.closed || dueAt > now) continue;
      const entry = this.options.journal.get(refund.journalEntryId);
      const sale = this.store.get(refund.saleId);
      if (entry?.gatewayId === undefined || !sale) continue;
      if (!this.store.claimRefundCheck(refund.journalEntryId, now, this.intervalMs)) continue;
      sent += 1;
      try {
        const result = await this.options.gateway.alternativeMethods.status('refund', {
          id: entry.gatewayId,
          code: sale.code,
          method: { methodName: sale.methodName, paymentTypeName: sale.paymentTypeName },
        });
        this.store.recordRefundStatus(refund.journalEntryId, result.status);
        this.emit(sale.id);
      } catch (e) {
        this.statusCheckFailed(e, { refundEntry: refund.journalEntryId });
      }
    }
    this.schedule();
    return sent;
  }

  private statusCheckFailed(e: unknown, what: Record<string, number>): void {
    // The check was recorded before it was sent: the next one comes an interval later, whatever happened.
    const tooEarly = e instanceof AltPaymentAnswerError && e.problem === 'too-early';
    this.logger[tooEarly ? 'error' : 'warn'](
      { ...what, code: e instanceof GatewayError ? e.code : 'SEND_FAILED', tooEarly },
      tooEarly ? 'the gateway refused a status check as too early' : 'status check without a usable answer',
    );
  }

  /** Sets the timer to the next due check. */
  private schedule(): void {
    if (this.closed || this.scheduling) return;
    this.scheduling = true;
    try {
      if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
      this.timer = undefined;
      const next = this.nextCheckAt();
      if (next === undefined) return;
      // setTimeout takes at most 2^31-1 ms; a longer wait is re-armed on the way.
      const wait = Math.min(Math.max(0, next - this.now().getTime()), 2_147_000_000);
      this.timer = this.timers.setTimeout(() => {
        this.timer = undefined;
        void this.runDue();
      }, wait);
    } finally {
      this.scheduling = false;
    }
  }

  /** Stops the timer and waits for a check or refund in progress. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    await Promise.all([this.running, this.refundQueue]);
  }

  private emit(id: number): void {
    const sale = this.get(id);
    if (!sale) return;
    for (const l of this.listeners) {
      try {
        l({ type: 'sale', sale });
      } catch (e) {
        this.logger.warn({ err: e }, 'alternative-method listener failed');
      }
    }
  }
}

/** The time between two status checks of a sale or of a refund: the configured interval and the guard. */
function statusCheckIntervalMs(config: AlternativeMethodsConfig): number {
  return config.statusCheckMinutes * 60_000 + STATUS_CHECK_GUARD_MS;
}

/**
 * How the sales are shown (their refunds, what settled, what may still be refunded): the desk's views, and those of
 * `altpay list` and `altpay show`, which read the journal read-only beside the running terminal (openAltSalesReadOnly).
 */
export class AltSaleViews {
  private readonly intervalMs: number;

  constructor(
    private readonly store: AltSaleReading,
    private readonly config: AlternativeMethodsConfig,
  ) {
    this.intervalMs = statusCheckIntervalMs(config);
  }

  get(id: number): AltSaleView | undefined {
    const r = this.store.get(id);
    return r ? this.view(r) : undefined;
  }

  /** Newest first; `states` filters (e.g. the operator's pending, settled, failed, abandoned lists). */
  list(options: { states?: readonly AltSaleState[]; limit?: number } = {}): AltSaleView[] {
    return this.store.list(options).map((r) => this.view(r));
  }

  /** A refund of a sale, by its journal entry, and what became of it. */
  refundView(entry: JournalEntry): AltRefundView {
    const check = this.store.refundCheck(entry.id);
    let state: AltRefundView['state'];
    switch (entry.state) {
      case 'pending':
      case 'sent':
      case 'unknown':
        state = 'in-flight';
        break;
      case 'approved':
        state =
          check?.status === 'REFUNDED' ? 'refunded' : check?.status === 'FAILED' ? 'failed' : 'accepted';
        break;
      case 'declined':
      case 'rejected':
        state = 'failed';
        break;
      case 'resolved':
        state = NOTHING_REFUNDED.has(entry.resolution ?? '') ? 'voided' : 'needs-operator';
        break;
    }
    return {
      entryId: entry.id,
      amountMinor: entry.amountMinor ?? 0,
      currency: entry.currency ?? '',
      state,
      ...(entry.gatewayId !== undefined ? { gatewayId: entry.gatewayId } : {}),
      ...(entry.reason !== undefined ? { reason: entry.reason } : {}),
      createdAt: entry.createdAt,
    };
  }

  /** The sale as the kiosk and the operator see it, with its refunds. */
  view(r: AltSaleRecord): AltSaleView {
    const profile = this.config.profiles.find((p) => p.profile === r.profile);
    const refunds = this.store.refundEntries(r.id).map((e) => this.refundView(e));
    const settledMinor = r.state === 'SETTLED' || r.state === 'FUNDED' ? r.amountMinor : 0;
    const refundedMinor = refunds
      .filter((x) => REFUND_STANDS.has(x.state))
      .reduce((s, x) => s + x.amountMinor, 0);
    const iso = (ms: number): string => new Date(ms).toISOString();
    return {
      id: r.id,
      profile: r.profile,
      label: profile?.label ?? r.methodName,
      methodName: r.methodName,
      code: r.code,
      amountMinor: r.amountMinor,
      currency: r.currency,
      state: r.state,
      ...(r.paymentUrl !== undefined ? { paymentUrl: r.paymentUrl } : {}),
      ...(r.gatewayId !== undefined ? { gatewayId: r.gatewayId } : {}),
      ...(r.reason !== undefined ? { reason: r.reason } : {}),
      createdAt: iso(r.createdAt),
      ...(r.lastCheckAt !== undefined ? { lastCheckAt: iso(r.lastCheckAt) } : {}),
      ...(r.state === 'PENDING'
        ? { nextCheckAt: iso((r.lastCheckAt ?? r.updatedAt) + this.intervalMs) }
        : {}),
      checks: r.checks,
      settledMinor,
      refundedMinor,
      refundableMinor: Math.max(0, settledMinor - refundedMinor),
      refunds,
    };
  }
}
