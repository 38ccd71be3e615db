import { EventEmitter } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import { silentLogger, type Logger } from '../log/index.js';
import { recoveryPlanFor, reversalRefusalReleased, type RecoveryPlan } from '../vocabulary/services.js';
import { JournalError } from './errors.js';
import { NOT_SENT, type JournalEntry, type SqliteJournal } from './journal.js';
import { releaseUnsentForward } from './offline-queue.js';
import type { JournaledSender, OutgoingRequest, TransmitOutcome } from './sender.js';

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

/** A resolution request ready to send: a timeout reversal or timeout void, built without I/O. */
export type ResolutionRequest = OutgoingRequest;

/**
 * Builds the timeout requests of recovery (gateway.md §7); implemented by the host with the gateway client's request
 * builders. Sending is the journaled sender's: recovery journals every request before it goes (money safety rule 1).
 */
export interface ResolutionBuilder {
  /** A timeout reversal `POST /pts/v2/reversals` for `target`: transactionId, amount, currency. */
  timeoutReversal(target: ResolutionTarget): ResolutionRequest;
  /** A timeout void `POST /pts/v2/voids` keyed by `target.transactionId`. */
  timeoutVoid(target: ResolutionTarget): ResolutionRequest;
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
  /**
   * Milliseconds to wait after `failed` attempts in a row did not resolve an entry (1 after the first); replaces the
   * fixed `retryMs` (the host passes a growing, bounded wait: a gateway that is down stays down for a while, and each
   * attempt is a journal entry and a request).
   */
  retryWaitMs?: (failed: number) => number;
  now?: () => Date;
  logger?: Logger;
  /** Waits `ms` (tests substitute a simulated clock); rejects when `signal` aborts. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Called as each entry is resolved (operator status bar). */
  onResolved?: (item: RecoveryItem) => void;
}

/**
 * Rejections of a timeout reversal that end the matter besides those meaning "nothing is held any more"
 * (`reversalRefusalReleased`, the vocabulary's rule: resolved `already-reversed`).
 */
const REVERSAL_DONE: Readonly<Record<string, string>> = {
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
  /**
   * A sale's timeout reversal after its timeout void was refused NOT_VOIDABLE (see {@link TimeoutRecovery.plan}): approved, the
   * sale captured nothing and its hold is released; refused, the sale stands, for the operator as before.
   */
  afterVoidRefused?: boolean;
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
 * - sale, capture, refund, credit → timeout void keyed by its transactionId, at once; a sale whose timeout void is
 *   refused NOT_VOIDABLE → then a timeout reversal, which releases the hold of a sale that captured nothing;
 * - incremental authorization → timeout reversal keyed by its own transactionId, for the amount it requested: the
 *   increment alone is taken back, the authorization it extends stands (a refusal because that authorization was
 *   captured meanwhile ends the matter: `already-settled`);
 * - reversal → timeout reversal of the authorization it reversed; void → timeout void of what it voided;
 * - a timeout reversal/void left in flight → sent again (idempotent);
 * - zero-amount verification, and requests that move no money → resolved without a request.
 *
 * A `pending` forward of a stored offline payment goes back to the queue: forwards are claimed already marked sent,
 * and an earlier release that marked them in a later commit before the first byte left a pending one only when it
 * provably never left. Other entries still `pending` are treated like `unknown` ones: a
 * live request stays pending while it is sent (its time of sending is written with its outcome), so it may have
 * reached the gateway, and a timeout reversal/void of a request the gateway never saw is a harmless, idempotent
 * success (gateway.md §7). The clock of the 60-second rule then starts at the entry's creation, just before its send.
 *
 * Every resolution request is journaled (linked by `resolvesEntryId`) before it is sent and retried after `retryMs`
 * (or the wait `retryWaitMs` gives) until it succeeds; there is no give-up, because an unresolved authorization is a
 * customer's money.
 */
export class TimeoutRecovery {
  private readonly running = new Map<number, Promise<RecoveryItem>>();
  /** Emits `attempt:<entryId>` after each resolution request recovery sent for an entry. */
  private readonly attempts = new EventEmitter();
  /** Ends the wait before an entry's next attempt, while its run waits (see {@link recoverWithin}). */
  private readonly wakers = new Map<number, () => void>();
  private readonly now: () => Date;
  private readonly logger: Logger;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;

  constructor(
    private readonly journal: SqliteJournal,
    private readonly builder: ResolutionBuilder,
    private readonly sender: JournaledSender,
    private readonly options: TimeoutRecoveryOptions,
  ) {
    this.attempts.setMaxListeners(0);
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
    const roots = this.rootsInFlight();
    const resolved: RecoveryItem[] = [];
    // Every run settles before this does (stopped by `signal`, each at its next pause): nothing of it is left running.
    const runs = await Promise.allSettled(roots.map((id) => this.recover(id, options)));
    for (const run of runs) {
      if (run.status === 'rejected') throw run.reason;
      resolved.push(run.value);
    }
    return { resolved, startedAt, finishedAt: this.now().toISOString() };
  }

  /**
   * The entries in flight that are each the root of a recovery run, oldest first: the one rule of which entries a
   * caller hands to {@link recover} ({@link recoverAll} at start, the host's sweep while it runs). A resolution attempt
   * of recovery left in flight (its outcome unknown) is not a root: it belongs to the run of the entry it resolves,
   * which retries on its own schedule and supersedes every attempt of it once it resolves it — recovered as an entry
   * of its own, each attempt would start a run whose attempts started more. An attempt whose target is no longer in
   * flight has nothing left to do and is resolved here as superseded, unless its request is still out (its sender's).
   */
  rootsInFlight(): number[] {
    const roots: number[] = [];
    for (const e of this.journal.inFlight()) {
      if (e.resolvesEntryId === undefined) {
        roots.push(e.id);
        continue;
      }
      if (this.sender.owns(e.id)) continue;
      const target = this.journal.get(e.resolvesEntryId);
      if (!target || !isInFlight(target)) this.journal.resolve(e.id, 'superseded', target?.resolvedByEntryId);
    }
    return roots;
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

  /**
   * Like {@link recover}, for a caller that waits only so long: resolves with the item once the entry is resolved, or
   * with undefined after `attempts` resolution requests did not resolve it. The run itself goes on until it does (an
   * unresolved authorization is a customer's money); a machine uses this to tell its customer something meanwhile.
   */
  recoverWithin(entryId: number, attempts: number): Promise<RecoveryItem | undefined> {
    const run = this.recover(entryId);
    // Someone waits for the answer: the next attempt goes now, not after the wait that grows while nobody does.
    this.wakers.get(entryId)?.();
    return new Promise<RecoveryItem | undefined>((resolve, reject) => {
      let seen = 0;
      const onAttempt = (): void => {
        seen += 1;
        // Let the run record this attempt's resolution first: it settles in the same tick when it succeeded.
        if (seen >= attempts) setImmediate(() => resolve(undefined));
      };
      this.attempts.on(`attempt:${entryId}`, onAttempt);
      run.then(resolve, reject).finally(() => this.attempts.off(`attempt:${entryId}`, onAttempt));
    });
  }

  /** Whether recovery is resolving this entry right now. */
  isRecovering(entryId: number): boolean {
    return this.running.has(entryId);
  }

  private async run(entryId: number, signal: AbortSignal | undefined): Promise<RecoveryItem> {
    let attempts = 0;
    for (;;) {
      // An entry whose request is still out belongs to its sender: recovery waits for its own timeout and answer
      // rather than undoing a payment that may yet be approved (the sweep race of an answer arriving late).
      if (this.sender.owns(entryId)) {
        await this.sender.released(entryId);
        continue;
      }
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
      this.attempts.emit(`attempt:${entry.id}`);
      if (result) return this.done(entry.id, attempts, result.how, result.needsOperator);
      await this.retryPause(entry.id, this.options.retryWaitMs?.(attempts) ?? this.options.retryMs, signal);
    }
  }

  /** The wait before an entry's next attempt: `ms`, or until {@link recoverWithin} asks for an attempt now. */
  private async retryPause(entryId: number, ms: number, signal: AbortSignal | undefined): Promise<void> {
    const woken = new AbortController();
    this.wakers.set(entryId, () => woken.abort());
    try {
      await this.pause(ms, signal ? AbortSignal.any([signal, woken.signal]) : woken.signal);
    } catch (e) {
      if (!woken.signal.aborted || signal?.aborted) throw e;
    } finally {
      this.wakers.delete(entryId);
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
        plan.kind === 'reversal' ? this.builder.timeoutReversal(target) : this.builder.timeoutVoid(target);
    } catch (e) {
      this.logger.error({ err: e, entryId: entry.id }, 'cannot build the resolution request; retrying');
      return undefined;
    }
    let how: { how: string; needsOperator: boolean } | undefined;
    const { entry: attempt, outcome } = await this.sender.send(request, {
      referencedTransactionId: target.transactionId,
      ...(entry.flowId !== undefined ? { flowId: entry.flowId } : {}),
      resolvesEntryId: entry.id,
      failpoints: { answered: 'recovery.sent' },
      // The entry is resolved in the same transaction as the attempt's outcome: a crash cannot separate them.
      onOutcome: (a, o) => {
        how = this.classify(plan, o);
        if (!how) return;
        this.journal.resolve(entry.id, how.how, a.id);
        for (const other of this.journal.resolutionAttempts(entry.id))
          if (other.id !== a.id && isInFlight(other)) this.journal.resolve(other.id, 'superseded', a.id);
      },
    });
    if (!how && this.voidRefusedForReversal(plan, outcome)) {
      this.logger.info(
        { entryId: entry.id, attemptId: attempt.id },
        'timeout void of a sale refused NOT_VOIDABLE: a timeout reversal of the sale follows',
      );
    } else if (!how) {
      this.logger.warn(
        {
          entryId: entry.id,
          attemptId: attempt.id,
          outcome: outcome.kind,
          reason: outcome.kind === 'not-sent' ? outcome.reason : (outcome.reason ?? outcome.error?.code),
        },
        'resolution request did not succeed; it will be retried',
      );
    }
    return how;
  }

  private classify(plan: Plan, o: TransmitOutcome): { how: string; needsOperator: boolean } | undefined {
    const kind = plan.kind;
    switch (o.kind) {
      // A timeout request that never left is simply not answered yet: retried.
      case 'not-sent':
        return undefined;
      case 'approved':
        return { how: kind === 'reversal' ? 'timeout-reversal' : 'timeout-void', needsOperator: false };
      case 'rejected': {
        // The sale is at the gateway and can be neither voided nor reversed: it stands (captured, past cut-off).
        if (plan.afterVoidRefused) return { how: 'not-voidable', needsOperator: true };
        // A sale that cannot be voided may have captured nothing (risk-declined after the issuer approved): its
        // authorization is then released by a timeout reversal, which the next plan sends.
        if (this.voidRefusedForReversal(plan, o)) return undefined;
        if (kind === 'reversal' && reversalRefusalReleased(o.reason))
          return { how: 'already-reversed', needsOperator: false };
        // The authorization was captured meanwhile, and a timeout reversal never succeeds after a capture: retried, the
        // entry would stay in flight for ever (and keep the next start from taking a card). An increment's: the
        // capture was sized from the authorized total the journal counts, which leaves an increment in flight out, and
        // a capture below the authorization makes the gateway release the rest (gateway.md §7) — the increment is not
        // held any more and nothing was charged for it. Anything else captured while its outcome was unknown is the
        // operator's to check.
        if (kind === 'reversal' && o.reason === 'TRANSACTION_ALREADY_SETTLED')
          return { how: 'already-settled', needsOperator: plan.target?.entry.service !== 'incremental' };
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
        if (entry.service === 'sale' && this.voidRefused(entry.id))
          return {
            kind: 'reversal',
            dueAt: reversalDue,
            target: withAmount({ entry, transactionId: own }, entry),
            afterVoidRefused: true,
          };
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

  /** Whether `o` refuses a sale's timeout void NOT_VOIDABLE, after which a timeout reversal of the sale is planned. */
  private voidRefusedForReversal(plan: Plan, o: TransmitOutcome): boolean {
    return (
      plan.kind === 'void' &&
      plan.target?.entry.service === 'sale' &&
      o.kind === 'rejected' &&
      o.reason === 'NOT_VOIDABLE'
    );
  }

  /**
   * Whether a timeout void of this entry was refused NOT_VOIDABLE. For a sale that means it was captured and is past
   * the cut-off, or that it captured nothing: AUTHORIZED_RISK_DECLINED, the issuer's approval held and the gateway's
   * risk check refusing the rest (reference/gateway.md §4). Only a timeout reversal tells the two apart, and it
   * releases the hold of the second. Read from the journal, so that a restart keeps the plan.
   */
  private voidRefused(entryId: number): boolean {
    return this.journal
      .resolutionAttempts(entryId)
      .some((a) => a.service === 'timeout-void' && a.state === 'rejected' && a.reason === 'NOT_VOIDABLE');
  }

  /**
   * An unknown reversal is resolved by a timeout reversal of the authorization it reversed, keyed by the
   * authorization's transactionId: idempotent, it releases whatever is still held on it, increments included. Its
   * amount is the amount the authorization requested (gateway.md §2: a timeout reversal carries the amount that was
   * requested). An unknown incremental authorization is not resolved here: it is an authorization of its own, whose
   * timeout reversal (the vocabulary's plan `timeout-reversal`) takes back the increment alone, and the authorization
   * stands for its session to capture or reverse.
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

/** Whether an entry's outcome is not known yet: pending, sent, or unknown (recovery's to resolve). */
export function isInFlight(e: JournalEntry): boolean {
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
