import { setTimeout as delay } from 'node:timers/promises';
import { silentLogger, type Logger } from '../log/index.js';
import { JournalError } from './errors.js';
import { NOT_SENT, type JournalEntry, type SqliteJournal } from './journal.js';
import { releaseUnsentForward } from './offline-queue.js';
import { recoveryPlanFor, type RecoveryPlan } from './services.js';

/** What a timeout reversal or timeout void is built for (gateway.md §7). */
export interface ResolutionTarget {
  /** The in-flight entry being resolved. */
  readonly entry: JournalEntry;
  /** clientReferenceInformation.transactionId the timeout request is keyed by: the original's. */
  readonly transactionId: string;
  /** Timeout reversal only: the amount requested, in minor units of `currency` (gateway.md §2). */
  readonly amountMinor?: number;
  readonly currency?: string;
}

/** A resolution request ready to send; the gateway client's prepared request has this shape. */
export interface ResolutionRequest {
  readonly service: string;
  readonly method: string;
  readonly path: string;
  /** The exact bytes that will be sent. */
  readonly body: Buffer;
  readonly comments: string;
  readonly referencedTransactionId?: string;
  readonly amountMinor?: number;
  readonly currency?: string;
  readonly moneyMoving: boolean;
}

/** The classified answer to one send; the gateway client's outcome has this shape. */
export interface SendOutcome {
  readonly kind: 'approved' | 'declined' | 'rejected' | 'unknown';
  readonly gatewayId?: string;
  readonly status?: string;
  readonly httpStatus?: number;
  readonly authorizedMinor?: number;
  /** Decline or rejection reason (e.g. AUTH_ALREADY_REVERSED, NOT_VOIDABLE). */
  readonly reason?: string;
  /** What made the outcome unknown (timeout, reset, 5xx). */
  readonly error?: { readonly code?: string; readonly message?: string };
}

/**
 * The gateway side of recovery, implemented by the host with the gateway client. Recovery journals every request it
 * builds here before calling `send` (DESIGN.md, money safety rule 1).
 */
export interface Resolver {
  /** Builds (no I/O) a timeout reversal `POST /pts/v2/reversals` for `target`: transactionId, amount, currency. */
  timeoutReversal(target: ResolutionTarget): ResolutionRequest;
  /** Builds (no I/O) a timeout void `POST /pts/v2/voids` keyed by `target.transactionId`. */
  timeoutVoid(target: ResolutionTarget): ResolutionRequest;
  /** Sends once. Gateway answers are outcomes, never exceptions; a throw counts as `unknown`. */
  send(request: ResolutionRequest): Promise<SendOutcome>;
}

/** One entry recovery resolved, for the operator (TerminalApi RecoveryItem). */
export interface RecoveryItem {
  readonly entryId: number;
  /** The entry's transactionId, or the one it refers to. */
  readonly transactionId?: string;
  readonly service: string;
  readonly amountMinor?: number;
  readonly currency?: string;
  /** How it was resolved, e.g. `timeout-reversal`, `timeout-void`, `already-reversed`, `not-voidable`. */
  readonly resolution: string;
  /** The resolution request that did it, when one was sent. */
  readonly resolvedByEntryId?: number;
  /** Resolution requests sent for it (including failed ones). */
  readonly attempts: number;
  /** The operator must look at it (e.g. a void refused because the day was settled). */
  readonly needsOperator: boolean;
  /** ISO 8601. */
  readonly at: string;
}

export interface RecoveryReport {
  readonly resolved: RecoveryItem[];
  readonly startedAt: string;
  readonly finishedAt: string;
}

export interface TimeoutRecoveryOptions {
  /** Minimum milliseconds between the original's send and its timeout reversal (gateway.md §2: 60 000). */
  timeoutReversalDelayMs: number;
  /** Milliseconds between attempts of a resolution request that did not succeed. */
  retryMs: number;
  now?: () => Date;
  logger?: Logger;
  /** Waits `ms` (tests substitute a simulated clock); rejects when `signal` aborts. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Called as each entry is resolved (operator status bar). */
  onResolved?: (item: RecoveryItem) => void;
}

/** Rejections of a timeout reversal that mean "nothing is held any more" (gateway.md §4, reversal reasons). */
const REVERSAL_DONE: Readonly<Record<string, string>> = {
  AUTH_ALREADY_REVERSED: 'already-reversed',
  TRANSACTION_ALREADY_REVERSED_OR_SETTLED: 'already-reversed',
  // The original never reached the gateway: nothing to reverse (gateway.md §7).
  MISSING_AUTH: 'not-at-gateway',
  INVALID_PAYMENT_ID: 'not-at-gateway',
};

/** Rejections of a timeout void that end the matter; NOT_VOIDABLE needs the operator (a refund may be due). */
const VOID_DONE: Readonly<Record<string, string>> = {
  MISSING_AUTH: 'not-at-gateway',
  INVALID_PAYMENT_ID: 'not-at-gateway',
  NOT_VOIDABLE: 'not-voidable',
};

interface Plan {
  kind: 'reversal' | 'void' | 'none';
  target?: ResolutionTarget;
  /** Epoch ms before which the request must not be sent. */
  dueAt: number;
  /** `how` when no request is needed. */
  how?: string;
  needsOperator?: boolean;
}

function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return delay(ms, undefined, signal ? { signal } : undefined);
}

/**
 * Resolves journal entries whose outcome is unknown (DESIGN.md, money safety rules 2 and 3), by the rules of
 * gateway.md §2:
 * - authorization / pre-authorization → timeout reversal keyed by its transactionId, for the amount requested, no
 *   earlier than `timeoutReversalDelayMs` after it was sent;
 * - sale, capture, refund, credit → timeout void keyed by its transactionId, at once;
 * - incremental authorization → timeout reversal of the whole authorization it extends (see `planIncremental`);
 * - reversal → timeout reversal of the authorization it reversed; void → timeout void of what it voided;
 * - a timeout reversal/void left in flight → sent again (idempotent);
 * - zero-amount verification, and requests that move no money → resolved without a request.
 *
 * A `pending` forward of a stored offline payment goes back to the queue (the queue marks a forward sent durably
 * before its first byte, so it provably never left). Other entries still `pending` are treated like `unknown` ones: the contract says
 * nothing left, but a host that crashed between the send and `markSent` would make that a guess, and a timeout
 * reversal/void of a request the gateway never saw is a harmless, idempotent success (gateway.md §7). The clock of
 * the 60-second rule then starts at the entry's creation.
 *
 * Every resolution request is journaled (linked by `resolvesEntryId`) before it is sent and retried every `retryMs`
 * until it succeeds; there is no give-up, because an unresolved authorization is a customer's money.
 */
export class TimeoutRecovery {
  private readonly running = new Map<number, Promise<RecoveryItem>>();
  private readonly now: () => Date;
  private readonly logger: Logger;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;

  constructor(
    private readonly journal: SqliteJournal,
    private readonly resolver: Resolver,
    private readonly options: TimeoutRecoveryOptions,
  ) {
    if (!Number.isFinite(options.timeoutReversalDelayMs) || options.timeoutReversalDelayMs < 0)
      throw new JournalError('JOURNAL_INVALID', 'timeoutReversalDelayMs must be ≥ 0');
    if (!Number.isFinite(options.retryMs) || options.retryMs < 1)
      throw new JournalError('JOURNAL_INVALID', 'retryMs must be ≥ 1');
    this.now = options.now ?? (() => new Date());
    this.logger = options.logger ?? silentLogger();
    this.sleep = options.sleep ?? defaultSleep;
  }

  /**
   * Resolves every entry in flight and returns what was done. Must complete before the terminal accepts a card
   * (DESIGN.md, rule 3): it keeps retrying while the gateway is unreachable, until `signal` aborts (then it rejects
   * with `RECOVERY_ABORTED` and the entries stay in flight for the next start).
   */
  async recoverAll(options: { signal?: AbortSignal } = {}): Promise<RecoveryReport> {
    const startedAt = this.now().toISOString();
    const roots: number[] = [];
    const resolved: RecoveryItem[] = [];
    for (const e of this.journal.inFlight()) {
      if (e.resolvesEntryId === undefined) {
        roots.push(e.id);
        continue;
      }
      const target = this.journal.get(e.resolvesEntryId);
      // An attempt whose target is settled (or not in flight) has nothing left to do.
      if (!target || !isInFlight(target)) this.journal.resolve(e.id, 'superseded', target?.resolvedByEntryId);
    }
    resolved.push(...(await Promise.all(roots.map((id) => this.recover(id, options)))));
    return { resolved, startedAt, finishedAt: this.now().toISOString() };
  }

  /**
   * Resolves one entry (e.g. the host hands over an `unknown` outcome while running). Concurrent calls for the same
   * entry share one run. Resolves at once for an entry that is not in flight.
   */
  recover(entryId: number, options: { signal?: AbortSignal } = {}): Promise<RecoveryItem> {
    const existing = this.running.get(entryId);
    if (existing) return existing;
    const run = this.run(entryId, options.signal).finally(() => this.running.delete(entryId));
    this.running.set(entryId, run);
    return run;
  }

  private async run(entryId: number, signal: AbortSignal | undefined): Promise<RecoveryItem> {
    let attempts = 0;
    for (;;) {
      const entry = this.journal.get(entryId);
      if (!entry) throw new JournalError('JOURNAL_NOT_FOUND', `no journal entry ${entryId}`);
      if (!isInFlight(entry)) return this.item(entry, attempts, entry.resolution ?? entry.state, false);
      if (releaseUnsentForward(this.journal, entry.id)) return this.done(entry.id, attempts, NOT_SENT, false);
      const plan = this.plan(entry);
      if (plan.kind === 'none') {
        const how = plan.how ?? 'nothing-to-undo';
        this.journal.resolve(entry.id, how);
        return this.done(entry.id, attempts, how, plan.needsOperator === true);
      }
      const wait = plan.dueAt - this.now().getTime();
      if (wait > 0) await this.pause(wait, signal);
      if (signal?.aborted) throw aborted();
      attempts += 1;
      const result = await this.attempt(entry, plan);
      if (result) return this.done(entry.id, attempts, result.how, result.needsOperator);
      await this.pause(this.options.retryMs, signal);
    }
  }

  private async pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
    try {
      await this.sleep(ms, signal);
    } catch (cause) {
      if (signal?.aborted) throw aborted(cause);
      throw cause;
    }
  }

  /** One journaled resolution request; returns how the entry was resolved, or undefined to retry. */
  private async attempt(
    entry: JournalEntry,
    plan: Plan,
  ): Promise<{ how: string; needsOperator: boolean } | undefined> {
    const target = plan.target;
    if (!target) return undefined;
    let request: ResolutionRequest;
    try {
      request =
        plan.kind === 'reversal' ? this.resolver.timeoutReversal(target) : this.resolver.timeoutVoid(target);
    } catch (e) {
      this.logger.error({ err: e, entryId: entry.id }, 'cannot build the resolution request; retrying');
      return undefined;
    }
    const attempt = this.journal.begin({
      service: request.service,
      comments: request.comments,
      method: request.method,
      path: request.path,
      body: request.body,
      referencedTransactionId: request.referencedTransactionId ?? target.transactionId,
      ...(request.amountMinor !== undefined && request.currency !== undefined
        ? { amountMinor: request.amountMinor, currency: request.currency }
        : {}),
      ...(entry.flowId !== undefined ? { flowId: entry.flowId } : {}),
      moneyMoving: true,
      resolvesEntryId: entry.id,
    });
    this.journal.markSent(attempt.id);
    let outcome: SendOutcome;
    try {
      outcome = await this.resolver.send(request);
    } catch (e) {
      outcome = {
        kind: 'unknown',
        error: { code: 'SEND_FAILED', message: e instanceof Error ? e.message : String(e) },
      };
    }
    this.journal.recordOutcome(attempt.id, {
      state: outcome.kind,
      ...(outcome.gatewayId !== undefined ? { gatewayId: outcome.gatewayId } : {}),
      ...(outcome.status !== undefined ? { status: outcome.status } : {}),
      ...(outcome.httpStatus !== undefined ? { httpStatus: outcome.httpStatus } : {}),
      ...(outcome.reason !== undefined || outcome.error?.code !== undefined
        ? { reason: outcome.reason ?? outcome.error?.code }
        : {}),
    });
    const how = this.classify(plan.kind, outcome);
    if (!how) {
      this.logger.warn(
        {
          entryId: entry.id,
          attemptId: attempt.id,
          outcome: outcome.kind,
          reason: outcome.reason ?? outcome.error?.code,
        },
        'resolution request did not succeed; it will be retried',
      );
      return undefined;
    }
    this.journal.atomically(true, () => {
      this.journal.resolve(entry.id, how.how, attempt.id);
      for (const a of this.journal.resolutionAttempts(entry.id))
        if (isInFlight(a)) this.journal.resolve(a.id, 'superseded', attempt.id);
    });
    return how;
  }

  private classify(kind: Plan['kind'], o: SendOutcome): { how: string; needsOperator: boolean } | undefined {
    switch (o.kind) {
      case 'approved':
        return { how: kind === 'reversal' ? 'timeout-reversal' : 'timeout-void', needsOperator: false };
      case 'rejected': {
        const table = kind === 'reversal' ? REVERSAL_DONE : VOID_DONE;
        const how = o.reason !== undefined && Object.hasOwn(table, o.reason) ? table[o.reason] : undefined;
        return how ? { how, needsOperator: how === 'not-voidable' } : undefined;
      }
      case 'declined':
      case 'unknown':
        return undefined;
    }
  }

  private plan(entry: JournalEntry): Plan {
    const now = this.now().getTime();
    if (!entry.moneyMoving) return { kind: 'none', dueAt: now, how: 'not-money-moving' };
    const rule: RecoveryPlan | undefined = recoveryPlanFor(entry.service);
    const sentAt = Date.parse(entry.sentAt ?? entry.createdAt);
    const reversalDue = sentAt + this.options.timeoutReversalDelayMs;
    const own = entry.transactionId;
    if (rule === undefined) return { kind: 'none', dueAt: now, how: 'no-recovery-rule', needsOperator: true };
    switch (rule) {
      case 'nothing-held':
        return { kind: 'none', dueAt: now, how: 'nothing-held' };
      case 'timeout-reversal':
        if (own === undefined) return orphan(now);
        return {
          kind: 'reversal',
          dueAt: reversalDue,
          target: withAmount({ entry, transactionId: own }, entry),
        };
      case 'timeout-void':
        if (own === undefined) return orphan(now);
        return { kind: 'void', dueAt: now, target: { entry, transactionId: own } };
      case 'repeat-timeout-request': {
        const ref = entry.referencedTransactionId;
        if (ref === undefined) return orphan(now);
        return entry.service === 'timeout-reversal'
          ? { kind: 'reversal', dueAt: reversalDue, target: withAmount({ entry, transactionId: ref }, entry) }
          : { kind: 'void', dueAt: now, target: { entry, transactionId: ref } };
      }
      case 'reverse-referenced-authorization':
        return this.planReverseAuthorization(entry, reversalDue, now);
      case 'void-referenced': {
        const original = this.referenced(entry);
        if (original?.transactionId === undefined) return orphan(now);
        return { kind: 'void', dueAt: now, target: { entry, transactionId: original.transactionId } };
      }
    }
  }

  /**
   * An unknown incremental authorization (or reversal) is resolved by a timeout reversal of the WHOLE authorization it
   * belongs to. Why: no timeout message exists for an increment (gateway.md §7), so the terminal cannot learn whether
   * the extra hold was granted; leaving it would let the customer carry a hold the terminal does not know about, and
   * capturing it would charge what the customer never saw approved. Reversing the authorization keyed by its
   * transactionId is idempotent and releases every hold on the card, increments included — the customer is whole in
   * every case; the merchant loses the hold (the session must authorize again), which is the side of the error the
   * money-safety rules choose. Its amount is the amount the authorization requested (gateway.md §2: a timeout
   * reversal carries the amount that was requested, since the authorized one is unknown); the gateway releases what
   * is still held.
   */
  private planReverseAuthorization(entry: JournalEntry, dueAt: number, now: number): Plan {
    const auth = this.referenced(entry);
    if (auth?.transactionId === undefined || auth.currency === undefined || auth.amountMinor === undefined)
      return orphan(now);
    return {
      kind: 'reversal',
      dueAt,
      target: {
        entry,
        transactionId: auth.transactionId,
        amountMinor: auth.amountMinor,
        currency: auth.currency,
      },
    };
  }

  /** The original a follow-on refers to: by referenced transactionId, else by the parent's gateway id. */
  private referenced(entry: JournalEntry): JournalEntry | undefined {
    if (entry.referencedTransactionId !== undefined) {
      const byTx = this.journal.findByTransactionId(entry.referencedTransactionId);
      if (byTx) return byTx;
    }
    return entry.parentGatewayId === undefined
      ? undefined
      : this.journal.findByGatewayId(entry.parentGatewayId);
  }

  private done(entryId: number, attempts: number, how: string, needsOperator: boolean): RecoveryItem {
    const entry = this.journal.get(entryId);
    if (!entry) throw new JournalError('JOURNAL_NOT_FOUND', `no journal entry ${entryId}`);
    const item = this.item(entry, attempts, how, needsOperator);
    (needsOperator ? this.logger.error.bind(this.logger) : this.logger.info.bind(this.logger))(
      { entryId, service: entry.service, resolution: how, attempts },
      needsOperator ? 'in-flight entry resolved; the operator must check it' : 'in-flight entry resolved',
    );
    this.options.onResolved?.(item);
    return item;
  }

  private item(entry: JournalEntry, attempts: number, how: string, needsOperator: boolean): RecoveryItem {
    const transactionId = entry.transactionId ?? entry.referencedTransactionId;
    return {
      entryId: entry.id,
      ...(transactionId !== undefined ? { transactionId } : {}),
      service: entry.service,
      ...(entry.amountMinor !== undefined
        ? { amountMinor: entry.amountMinor, currency: entry.currency }
        : {}),
      resolution: how,
      ...(entry.resolvedByEntryId !== undefined ? { resolvedByEntryId: entry.resolvedByEntryId } : {}),
      attempts,
      needsOperator,
      at: entry.resolvedAt ?? this.now().toISOString(),
    };
  }
}

function isInFlight(e: JournalEntry): boolean {
  return e.state === 'pending' || e.state === 'sent' || e.state === 'unknown';
}

function withAmount(target: ResolutionTarget, entry: JournalEntry): ResolutionTarget {
  return entry.amountMinor !== undefined && entry.currency !== undefined
    ? { ...target, amountMinor: entry.amountMinor, currency: entry.currency }
    : target;
}

/**
 * A follow-on whose original is not in the journal (e.g. the file was replaced): no request can be built. It is
 * resolved for the operator to check by hand rather than blocking the terminal forever.
 */
function orphan(now: number): Plan {
  return { kind: 'none', dueAt: now, how: 'original-not-found', needsOperator: true };
}

function aborted(cause?: unknown): JournalError {
  return new JournalError('RECOVERY_ABORTED', 'recovery was stopped before every entry was resolved', {
    cause,
  });
}
