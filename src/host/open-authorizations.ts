import type { Config } from '../config/index.js';
import {
  amountStanding,
  operatorService,
  type ServiceRequest as FlowRequest,
  type OriginalTransaction,
  type SubmitOutcome,
} from '../flows/index.js';
import type { Logger } from '../log/index.js';
import {
  NOT_SENT,
  type FollowUp,
  type FollowUpStore,
  type HoldStore,
  type JournalEntry,
  refundedTotalOf,
  type SqliteJournal,
  undecidedEntriesOf,
} from '../journal/index.js';
import { commentsFor, refusalPasses, reversalRefusalReleased } from '../vocabulary/services.js';
import type { FeeShortfall } from './audit-trail.js';
import { retryWaitMs } from './retry-wait.js';
import { MAX_TIMER_DELAY_MS } from '../vocabulary/timer.js';

/**
 * Authorizations the terminal still holds on a customer's card with no session left to settle them, and the durable
 * obligations recovery must finish before the next card (DESIGN.md rule 3):
 * - follow-ups written with an outcome, e.g. "reverse the authorization whose capture the operator voided" — done at
 *   start and whenever one is due;
 * - meter pre-authorizations approved before a restart, neither captured nor reversed, whose session died with the
 *   process: the capture-window rule (spec 001 meter model: an authorization not captured in time is reversed) is
 *   applied from the journal with the authorized total, increments included. Tap-and-go holds have their own watch;
 *   a tap-and-go pre-authorization whose hold was never stored (a restart right after its approval) is reversed at
 *   once.
 */
export class OpenAuthorizations {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** The run of follow-ups in progress: one at a time (see {@link runFollowUps}). */
  private followUpRun: Promise<void> | undefined;

  constructor(
    private readonly deps: {
      config: Config;
      journal: SqliteJournal;
      holds: HoldStore;
      followUps: FollowUpStore;
      /** Sends a request through the host's one door (journaled, routed). */
      submit: (request: FlowRequest) => Promise<SubmitOutcome>;
      /** The authorized total (increments included) in the local currency the machines count in. */
      authorizedTotal: (transactionId: string) => { minor: number; currency: string } | undefined;
      /**
       * An amount of an authorization's follow-on as the journal records it (a converted hold's, family A: in the card's
       * billing currency) in the local currency the machines count in (PaymentService.toLocal). Absent: as recorded.
       */
      toLocal?: (
        authorizationTx: string,
        minor: number,
        currency: string,
      ) => { minor: number; currency: string };
      /**
       * A part of a fee no capture will take (a meter session's later capture that did not stand): recorded for the
       * operator, as the payment router records a capture that took less than owed (the host's audit log). Absent:
       * only logged.
       */
      feeShortfall?: (shortfall: FeeShortfall) => void;
      /**
       * A card sale as the operator desk reads it (`findTransaction`), null when the journal shows no money taken.
       * Absent: `give-back-sale` follow-ups stay open.
       */
      findSale?: (transactionId: string) => OriginalTransaction | null;
      now: () => Date;
      logger: Logger;
    },
  ) {}

  /** Authorizations whose reversal is scheduled (tests and the crash suite read it). */
  watched(): string[] {
    return [...this.timers.keys()];
  }

  /**
   * Part of recovery: closes the tap-and-go holds whose authorization is settled, finishes every open follow-up (due or
   * not: whoever was to carry it out died with the previous process) and reverses orphaned authorizations that are
   * due; schedules the rest.
   */
  async settle(): Promise<void> {
    // Before the first await: the hold watch armed at start then finds such a hold closed when its expiry comes.
    this.dropSettledHolds();
    while (this.followUpRun) await this.followUpRun.catch(() => undefined);
    await this.startFollowUpRun(() => this.deps.followUps.open());
    await this.settleOrphans();
  }

  stop(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }

  /**
   * Whether a tap-and-go hold's authorization is being settled outside any exit or expiry: a reversal of it in flight
   * or its outcome unknown (recovery resolves it by reversing the authorization), a capture or an increment of it in
   * flight or unknown (an exit's, handed back while recovery resolves it by a timeout void or reversal), or the journal
   * shows it settled already (the hold is about to be dropped, in a write of its own). Neither an exit nor the expiry
   * watch may take such a hold: a capture could take what the reversal released, or be a second capture of a stay
   * whose first may have gone through; another reversal would be a resend without a resolution (DESIGN.md rule 2), and
   * a reversal is held back anyway while a capture or an increment is unresolved (src/host/payment-router.ts). Once
   * that follow-on is resolved the host drops the hold or watches it again (TerminalHost.holdAfterResolution). An open
   * follow-up of the authorization settles it too: its reversal was decided (an exit's, held back while its capture
   * was unresolved) and the follow-up sends it, closing the hold with its approval. The journal's rules and its
   * follow-ups, read for one authorization.
   */
  holdSettling(transactionId: string): boolean {
    const { journal } = this.deps;
    return (
      journal.reversalInFlight(transactionId) ||
      this.followOnUnresolved(transactionId) ||
      journal.authorizationSettled(transactionId) ||
      this.followUpsOf(transactionId).length > 0
    );
  }

  /** Whether a capture or an increment of the authorization is in flight or its outcome unknown (the journal's). */
  private followOnUnresolved(transactionId: string): boolean {
    const { journal } = this.deps;
    return (
      journal.followOnsInFlight(transactionId, 'capture').length > 0 ||
      journal.followOnsInFlight(transactionId, 'incremental').length > 0
    );
  }

  /** The open follow-ups of an authorization. */
  private followUpsOf(transactionId: string): FollowUp[] {
    return this.deps.followUps.open().filter((f) => f.authorizationTransactionId === transactionId);
  }

  /**
   * Carries out the open follow-ups of one authorization now, due or not: what held them back (an increment or a capture
   * of it whose outcome was unknown) was just resolved, and the customer's funds are released without waiting for
   * their next due time. After the run in progress, if any (one run at a time).
   */
  async runFollowUpsOf(transactionId: string): Promise<void> {
    if (this.followUpsOf(transactionId).length === 0) return;
    while (this.followUpRun) await this.followUpRun.catch(() => undefined);
    await this.startFollowUpRun(() => this.followUpsOf(transactionId));
  }

  /**
   * Whether a tap-and-go exit must leave a hold alone: it is being settled ({@link holdSettling}), or its release was
   * decided already — a reversal of its authorization was sent and refused (the journal's `refusedReversals`): at an
   * exit paid by phone, with nothing owed, with its fee left to a payment link or not collected, or at its expiry.
   * The stay that hold was for is over (paid, or let go): the expiry watch reverses it again (src/host/hold-watch.ts),
   * and a capture of it at a later exit of the card would charge a stay paid already, or the time since an entry that
   * is not the car's.
   */
  holdClosedToExit(transactionId: string): boolean {
    return this.holdSettling(transactionId) || this.deps.journal.refusedReversals(transactionId).length > 0;
  }

  /** The authorization was reversed by someone (its scheduled reversal is moot). */
  forget(transactionId: string): void {
    const t = this.timers.get(transactionId);
    if (t) clearTimeout(t);
    this.timers.delete(transactionId);
  }

  /**
   * Carries out every due follow-up once; one that does not succeed stays open and is tried again later. One run at a
   * time: a call while a run is in progress gets that run (the sweep calls this every `resolutionRetryMs`, and a
   * reversal may wait for its answer up to the gateway's timeout; a second run would find it still due and send it
   * again).
   */
  runFollowUps(): Promise<void> {
    return (
      this.followUpRun ?? this.startFollowUpRun(() => this.deps.followUps.due(this.deps.now().getTime()))
    );
  }

  /** Whether a run of follow-ups is in progress (a request of one may be about to be journaled). */
  get busy(): boolean {
    return this.followUpRun !== undefined;
  }

  private startFollowUpRun(list: () => FollowUp[]): Promise<void> {
    const run = (async () => {
      for (const f of list()) await this.runFollowUp(f);
    })().finally(() => {
      if (this.followUpRun === run) this.followUpRun = undefined;
    });
    this.followUpRun = run;
    return run;
  }

  private async runFollowUp(f: FollowUp): Promise<void> {
    const { followUps, logger } = this.deps;
    switch (f.kind) {
      case 'capture-authorization':
        await this.captureFollowUp(f);
        return;
      case 'give-back-sale':
        await this.giveBackFollowUp(f);
        return;
      case 'reverse-authorization': {
        // A capture of it stands (an exit's, whose lost answer recovery found standing): the gateway released the rest
        // with that capture (gateway.md §7: no reversal of the remainder), so nothing is left to reverse.
        if (this.deps.journal.authorizationSettled(f.authorizationTransactionId)) {
          followUps.complete(f.id, 'settled');
          logger.info({ followUp: f.id }, 'follow-up done: the journal shows its authorization settled');
          return;
        }
        // Recovery's resolution of it decides: a reversal closes the follow-up (the host's authorizationReversed); any
        // other resolution leaves it open, to be tried again.
        if (this.deps.journal.reversalInFlight(f.authorizationTransactionId)) {
          logger.debug({ followUp: f.id }, 'follow-up waits: a reversal of its authorization is in flight');
          return;
        }
        // A capture or an increment of it unresolved: what the gateway holds is unknown until recovery resolves it
        // (the payment router would hold the reversal back), and that resolution runs this follow-up at once
        // (TerminalHost.holdAfterResolution) — found standing, a capture leaves nothing to reverse (above).
        if (this.followOnUnresolved(f.authorizationTransactionId)) {
          logger.debug({ followUp: f.id }, 'follow-up waits: a follow-on of its authorization is unresolved');
          return;
        }
        const outcome = await this.deps.submit({
          service: 'reversal',
          comments: 'REVERSAL',
          amountMinor: f.amountMinor,
          currency: f.currency,
          catLevel: 2,
          original: {
            gatewayId: f.gatewayId,
            transactionId: f.authorizationTransactionId,
            service: 'preauth',
          },
          includeEmvTags: f.includeEmvTags,
        });
        // An approved reversal closes the follow-up in its own transaction (src/host/payment-router.ts).
        if (outcome.kind === 'approved') return;
        if (reversalRefusalReleased(outcome.reason)) {
          followUps.complete(f.id, 'already-reversed');
          return;
        }
        // Tried again with a growing wait (a refusal does not turn into an approval by being repeated at once), never
        // more than hourly, and logged for the operator. An unknown outcome is recovery's: its timeout reversal goes
        // no earlier than `timeoutReversalDelayMs` after this one, so nothing resolves it sooner, and until it is
        // resolved the journal holds this reversal in flight and the follow-up waits (the journal's reversalInFlight).
        // A refusal that passes (the vocabulary's `refusalPasses`: the processor is down for a while) is no matter for
        // the operator: the same wait, and a warning.
        const waitMs = this.retryWaitOf(f, outcome);
        const passes = outcome.kind !== 'unknown' && refusalPasses(outcome.reason);
        (passes ? logger.warn.bind(logger) : logger.error.bind(logger))(
          { followUp: f.id, attempts: f.attempts + 1, outcome: outcome.kind, reason: outcome.reason, waitMs },
          outcome.kind === 'unknown'
            ? 'follow-up reversal outcome unknown; left to recovery, tried again only once recovery has resolved it'
            : passes
              ? 'follow-up reversal refused for now; tried again later'
              : 'follow-up not finished; the operator should check it, tried again later',
        );
        followUps.postpone(f.id, this.deps.now().getTime() + waitMs, outcome.reason ?? outcome.kind);
        return;
      }
    }
  }

  /**
   * Gives back a card sale (`give-back-sale`) with the operator's rule of what a sale allows (`operatorService`): a
   * void when it may be voided and the whole sale is what is owed back, a refund of what is owed back otherwise — never
   * more than the sale still holds (`amountStanding`). Waits while a request that decides what it holds is in flight
   * (recovery resolves it; then this is tried again). An approved void or refund closes the follow-up in its own
   * transaction (src/host/payment-router.ts); anything else is tried again later, as a reversal is.
   */
  private async giveBackFollowUp(f: FollowUp): Promise<void> {
    const { followUps, logger } = this.deps;
    const tx = f.authorizationTransactionId;
    if (undecidedEntriesOf(this.deps.journal, tx).length > 0) {
      logger.debug({ followUp: f.id }, 'follow-up waits: a request of its sale is unresolved');
      return;
    }
    // Without a reader of the journal's sales nothing says what the sale holds: the obligation stays.
    if (this.deps.findSale === undefined) return;
    const original = this.deps.findSale(tx);
    const standing = original === null ? 0 : amountStanding(original);
    if (original === null || standing <= 0) {
      followUps.complete(f.id, 'nothing-standing');
      logger.warn({ followUp: f.id }, 'follow-up done: the journal shows nothing of its sale standing');
      return;
    }
    // The refunds of the sale journaled since this was written, that stand or may: this follow-up's own whose answer
    // was lost and that recovery found standing (its void refused NOT_VOIDABLE), or the operator's. They gave back part
    // or all of what is owed; only the rest is given back. Refunds in another currency (a converted sale's, in the
    // card's billing currency) cannot be counted against it: the follow-up is done, and the operator checks the rest.
    const since = { sinceMs: f.createdAtMs };
    const refundedSince = refundedTotalOf(this.deps.journal, tx, since);
    const refundedSinceHere = refundedTotalOf(this.deps.journal, tx, { ...since, currency: f.currency });
    const owed = f.amountMinor - refundedSinceHere;
    if (refundedSince > 0 && (refundedSince !== refundedSinceHere || owed <= 0)) {
      followUps.complete(f.id, 'refunded');
      logger.warn(
        { followUp: f.id, otherCurrency: refundedSince !== refundedSinceHere },
        'follow-up done: refunds of its sale made since it was written gave back what it owed, or are in another currency',
      );
      return;
    }
    const amountMinor = Math.min(owed, standing);
    const voided =
      standing === amountMinor ? operatorService({ type: 'void', transactionId: tx }, original) : undefined;
    const chosen =
      voided !== undefined && 'service' in voided
        ? voided
        : operatorService({ type: 'refund', transactionId: tx, amountMinor }, original);
    if (!('service' in chosen)) {
      const waitMs = retryWaitMs(this.deps.config.journal.resolutionRetryMs, f.attempts);
      logger.error(
        { followUp: f.id, code: chosen.code, waitMs },
        'follow-up cannot give back its sale now; the operator should check it, tried again later',
      );
      followUps.postpone(f.id, this.deps.now().getTime() + waitMs, chosen.code);
      return;
    }
    const outcome = await this.deps.submit({
      service: chosen.service,
      comments: commentsFor(chosen.service, {}),
      amountMinor: chosen.amountMinor,
      currency: original.currency,
      catLevel: 2,
      original: { gatewayId: f.gatewayId, transactionId: tx, service: original.service },
      includeEmvTags: false,
    });
    if (outcome.kind === 'approved') return;
    const waitMs = this.retryWaitOf(f, outcome);
    logger.error(
      { followUp: f.id, service: chosen.service, outcome: outcome.kind, reason: outcome.reason, waitMs },
      outcome.kind === 'unknown'
        ? 'follow-up give-back outcome unknown; left to recovery, tried again once recovery has resolved it'
        : 'follow-up give-back not approved; the operator should check it, tried again later',
    );
    followUps.postpone(f.id, this.deps.now().getTime() + waitMs, outcome.reason ?? outcome.kind);
  }

  /**
   * When to try a follow-up again after `outcome`: with a growing wait (a refusal does not turn into an approval by
   * being repeated at once), never more than hourly; an unknown outcome is recovery's, whose timeout request goes no
   * earlier than `timeoutReversalDelayMs` after it, so nothing resolves it sooner.
   */
  private retryWaitOf(f: FollowUp, outcome: SubmitOutcome): number {
    const { config } = this.deps;
    const backoffMs = retryWaitMs(config.journal.resolutionRetryMs, f.attempts);
    return outcome.kind === 'unknown'
      ? Math.max(backoffMs, config.journal.timeoutReversalDelayMs)
      : backoffMs;
  }

  /**
   * The capture a meter session's settlement step decided for a later hold (a fee spread over two holds,
   * `alsoCaptures`), left open because the terminal stopped before the machine's own capture of it was journaled.
   * Exactly once, and never together with a release of the same hold:
   * - nothing is sent while a reversal, a capture or an increment of the authorization is in flight or its outcome
   *   unknown (recovery's resolution decides; it runs the authorization's follow-ups at once);
   * - the journal shows the authorization settled (a capture that stands, or a reversal): done, nothing is sent;
   * - its release was decided — a reversal of it journaled (refused, or provably not sent) or a reversal follow-up of
   *   it open: the machine's own capture did not stand, and the machine released the hold and told the customer so
   *   (with the fee left to pay later, if so configured): done, the release does the work;
   * - a capture of it was journaled that did not stand and that sending again cannot change (refused for good): done,
   *   that part of the fee is the operator's, and the hold is released as the machine releases it after a capture
   *   that did not stand;
   * - otherwise (no capture of it journaled, or only ones refused for now, provably not sent, found not at the
   *   gateway or voided by recovery — the hold stands) the capture is sent: approved, the payment router closes the follow-up in its outcome's
   *   transaction; anything else is tried again later by the rules above.
   * A machine still settling the session may release the hold at the same time as this release after a capture that
   * did not stand: the second reversal is refused as released already, which both count as released.
   */
  private async captureFollowUp(f: FollowUp): Promise<void> {
    const { journal, followUps, logger } = this.deps;
    const tx = f.authorizationTransactionId;
    if (journal.reversalInFlight(tx) || this.followOnUnresolved(tx)) {
      logger.debug({ followUp: f.id }, 'follow-up waits: a follow-on of its authorization is unresolved');
      return;
    }
    if (journal.authorizationSettled(tx)) {
      followUps.complete(f.id, 'settled');
      logger.info({ followUp: f.id }, 'follow-up done: the journal shows its authorization settled');
      return;
    }
    if (this.releaseDecided(tx)) {
      followUps.complete(f.id, 'released');
      logger.warn(
        { followUp: f.id, transactionId: tx, amountMinor: f.amountMinor, currency: f.currency },
        'follow-up capture not sent: the release of its authorization was decided by its session',
      );
      return;
    }
    const captures = journal.referencing(tx).filter((e) => e.service === 'capture');
    // The hold's capture window is over (spec 001 meter model: an authorization not captured in time is reversed):
    // no capture is sent any more, the hold is released and that part of the fee is the operator's, in one
    // transaction with the follow-up's end.
    const windowEndsAtMs = captureWindowEndMs(journal, this.deps.config, tx);
    if (windowEndsAtMs !== undefined && this.deps.now().getTime() >= windowEndsAtMs) {
      journal.atomically(true, () => {
        followUps.complete(f.id, 'capture-window-ended');
        this.deps.feeShortfall?.({
          // The last capture of it sent, or the authorization when none was (one held back unsent).
          captureTransactionId: captures.at(-1)?.transactionId ?? tx,
          authorizationTransactionId: tx,
          owedMinor: f.amountMinor,
          capturedMinor: 0,
          currency: f.currency,
          reason: 'CAPTURE_WINDOW_ENDED',
        });
      });
      logger.error(
        { followUp: f.id, transactionId: tx, amountMinor: f.amountMinor, currency: f.currency },
        'follow-up capture not sent: the capture window of its authorization is over; the hold is released, the operator should check the fee',
      );
      await this.release(tx, f.gatewayId);
      return;
    }
    const failed = captures.find((e) => !captureMaySucceedLater(e));
    if (failed !== undefined) {
      // Done, and that part of the fee recorded for the operator, in one transaction: a crash between the two would
      // leave it done and said to nobody.
      journal.atomically(true, () => {
        followUps.complete(f.id, 'capture-failed');
        if (failed.transactionId !== undefined)
          this.deps.feeShortfall?.({
            captureTransactionId: failed.transactionId,
            authorizationTransactionId: tx,
            owedMinor: f.amountMinor,
            capturedMinor: 0,
            currency: f.currency,
            reason: 'CAPTURE_NOT_STANDING',
          });
      });
      logger.error(
        {
          followUp: f.id,
          transactionId: tx,
          state: failed.state,
          reason: failed.reason ?? failed.resolution,
        },
        'follow-up capture not sent again: a capture of its authorization did not stand; the hold is released, the operator should check the fee',
      );
      await this.release(tx, f.gatewayId);
      return;
    }
    const authorized = this.deps.authorizedTotal(tx)?.minor ?? f.amountMinor;
    const outcome = await this.deps.submit({
      service: 'capture',
      comments: commentsFor('capture', {
        capture: { amountMinor: f.amountMinor, authorizedMinor: authorized },
      }),
      amountMinor: f.amountMinor,
      currency: f.currency,
      catLevel: 2,
      original: { gatewayId: f.gatewayId, transactionId: tx, service: 'preauth' },
      includeEmvTags: f.includeEmvTags,
    });
    // An approved capture closes the follow-up in its own transaction (src/host/payment-router.ts).
    if (outcome.kind === 'approved') return;
    const waitMs = this.retryWaitOf(f, outcome);
    logger.warn(
      { followUp: f.id, attempts: f.attempts + 1, outcome: outcome.kind, reason: outcome.reason, waitMs },
      'follow-up capture not approved; its outcome decides at the next try',
    );
    followUps.postpone(f.id, this.deps.now().getTime() + waitMs, outcome.reason ?? outcome.kind);
  }

  /**
   * Whether the release of an authorization was decided, so that no capture of it is sent: a reversal of it journaled
   * (refused, or provably not sent) or a reversal follow-up of it open.
   */
  private releaseDecided(transactionId: string): boolean {
    return (
      this.followUpsOf(transactionId).some((o) => o.kind === 'reverse-authorization') ||
      this.deps.journal.referencing(transactionId).some((e) => e.service === 'reversal')
    );
  }

  /**
   * Reverses an authorization nobody keeps, for its authorized total (the reversal itself carries the journal's figure
   * as the gateway holds it): refused for now, the payment router writes the follow-up that sends it again.
   */
  private release(
    transactionId: string,
    gatewayId: string,
    amount?: { minor: number; currency: string },
  ): Promise<void> {
    const { config } = this.deps;
    const total = amount ?? this.deps.authorizedTotal(transactionId);
    return this.deps
      .submit({
        service: 'reversal',
        comments: 'REVERSAL',
        amountMinor: total?.minor ?? 0,
        currency: total?.currency ?? config.terminal.currency,
        catLevel: 2,
        original: { gatewayId, transactionId, service: 'preauth' },
        includeEmvTags: true,
        // Nobody keeps it: refused for now, it is sent again by a follow-up (the payment router's).
        releases: true,
      })
      .then((outcome) => this.orphanReversed(transactionId, outcome));
  }

  /** Runs `action` at `dueAtMs` (re-armed when the wait is longer than a Node timer can hold). */
  private schedule(transactionId: string, dueAtMs: number, action: () => Promise<void>): void {
    const left = dueAtMs - this.deps.now().getTime();
    const timer = setTimeout(
      () => {
        this.timers.delete(transactionId);
        if (dueAtMs > this.deps.now().getTime()) this.schedule(transactionId, dueAtMs, action);
        else
          action().catch((err: unknown) =>
            this.deps.logger.error({ err, transactionId }, 'reversal of an open authorization failed'),
          );
      },
      Math.max(0, Math.min(left, MAX_TIMER_DELAY_MS)),
    );
    timer.unref();
    this.timers.set(transactionId, timer);
  }

  /**
   * Drops every open hold whose authorization the journal shows settled — a capture that stands, or a reversal
   * approved, taken over by recovery or refused because the authorization is released already
   * (`unsettledAuthorizations`, the journal's one rule) — so that no exit captures it again and no expiry reverses it.
   * An earlier version closed a hold only after the capture's or the reversal's outcome was committed, so a crash in
   * between left it open; recovery's resolutions (a timeout reversal) drop the hold in a write of their own, which a
   * crash can miss too. A hold whose authorization is not journaled as an approved pre-authorization (e.g. one imported
   * from the side file of a version without that entry) is left to its watch.
   */
  private dropSettledHolds(): void {
    const { journal, holds, logger } = this.deps;
    for (const hold of holds.unclaimed()) {
      if (!journal.authorizationSettled(hold.transactionId)) continue;
      if (holds.drop(hold.holdId))
        logger.info(
          { transactionId: hold.transactionId },
          'hold closed: the journal shows its authorization settled',
        );
    }
  }

  /**
   * What the reversal of an orphaned authorization ended in. Approved, or refused because the authorization is
   * released already: settled (the journal's rule). Unknown: recovery's (it reverses the authorization). Refused for
   * now (the vocabulary's `refusalPasses`: the processor is down for a while): the reversal gave the authorization up
   * for good (`releases`), so the payment router wrote, with the refusal, the follow-up that sends it again with a
   * doubling wait. Refused otherwise: the operator's, and tried again at the next start (the journal still shows it
   * unsettled).
   */
  private orphanReversed(transactionId: string, outcome: SubmitOutcome): void {
    const { logger } = this.deps;
    const fields = { transactionId, outcome: outcome.kind, reason: outcome.reason };
    if (outcome.kind === 'approved') {
      logger.info(fields, 'uncaptured authorization reversed');
      return;
    }
    if (outcome.kind === 'unknown') {
      logger.warn(fields, "reversal of an uncaptured authorization: outcome unknown, recovery's to resolve");
      return;
    }
    if (reversalRefusalReleased(outcome.reason)) {
      logger.info(fields, 'uncaptured authorization: its reversal found it released already');
      return;
    }
    if (refusalPasses(outcome.reason)) {
      logger.warn(
        fields,
        'reversal of an uncaptured authorization refused for now; its follow-up sends it again',
      );
      return;
    }
    logger.error(
      fields,
      'reversal of an uncaptured authorization refused; the operator should check it (tried again at the next start)',
    );
  }

  private async settleOrphans(): Promise<void> {
    const { journal, holds, config } = this.deps;
    const open = new Set(this.deps.followUps.open().map((f) => f.authorizationTransactionId));
    const windowMs = config.tariff.captureWindowMinutes * 60_000;
    // A tap-and-go terminal's pre-authorizations are its entries' holds (the only model here that pre-authorizes), and
    // the gate opens only once the hold is stored: one with no open hold is an entry whose terminal stopped between
    // the approval and the hold's commit. No car entered on it, and no exit or expiry watch will ever settle it: it is
    // released now, as the machine releases a hold it could not store (src/flows/tap-and-go.ts, entryReleasing), not
    // a capture window later.
    const entryHoldNotStored = config.terminal.model === 'tap-and-go';
    const dueNow: Array<() => Promise<void>> = [];
    // Approved, and neither captured (a capture that stands) nor reversed: the journal's rule, however old the entry.
    for (const e of journal.unsettledAuthorizations()) {
      if (!e.transactionId || !e.gatewayId) continue;
      if (holds.has(e.transactionId) || open.has(e.transactionId)) continue;
      const { transactionId, gatewayId } = e;
      // The machines' local amount and currency (the reversal itself carries the journal's figure as the gateway
      // holds it: PaymentService builds it).
      const local = this.deps.authorizedTotal(transactionId);
      const total = local?.minor ?? e.amountMinor ?? 0;
      const currency = local?.currency ?? e.currency ?? config.terminal.currency;
      const captures = journal.referencing(transactionId).filter((f) => f.service === 'capture');
      // A meter session's capture of its fee that a restart left undecided — killed before it was sent, or with its
      // answer in hand before it was journaled — and that recovery resolved as never sent, not at the gateway or voided:
      // the hold stands (a voided capture leaves it in place, gateway.md §7), and the fee is captured from it, once,
      // by a capture follow-up, within the capture window (captureFollowUp's rules), rather than released with the
      // hold. The same amount in the local currency the machines count in, as the session asked for it: a converted
      // capture is journaled in the card's currency, and read back (toLocal) as a local amount that the one conversion
      // rule of captures turns into that very card amount again, so the follow-up's capture carries what the session's
      // did — not one minor unit more or less, which the hold left by a capture that reached the gateway would refuse.
      // Not once the hold's release was decided (a reversal of it journaled and refused for good), nor when a capture
      // follow-up of it was done already (its capture window ended, say, and the terminal stopped before the release
      // was journaled; one left open is run by settle, above): the sweep reverses it below.
      const last = captures.at(-1);
      const lastLocal =
        last?.amountMinor === undefined || last.currency === undefined
          ? undefined
          : (this.deps.toLocal?.(transactionId, last.amountMinor, last.currency) ?? {
              minor: last.amountMinor,
              currency: last.currency,
            });
      if (
        config.terminal.model === 'meter' &&
        !this.releaseDecided(transactionId) &&
        this.deps.followUps.find('capture-authorization', transactionId) === undefined &&
        last?.state === 'resolved' &&
        captures.every(captureMaySucceedLater) &&
        lastLocal !== undefined &&
        lastLocal.currency === currency
      ) {
        this.deps.followUps.add({
          kind: 'capture-authorization',
          authorizationTransactionId: transactionId,
          gatewayId,
          amountMinor: lastLocal.minor,
          currency,
          includeEmvTags: e.card?.entryMode === 'contact',
          reason: `captured by its meter session, its capture ${last.resolution ?? 'resolved'} at a restart: sent again`,
        });
        dueNow.push(() => this.runFollowUpsOf(transactionId));
        continue;
      }
      // A capture was attempted and did not stand (refused for good, in another currency, or its hold's release decided
      // since): the session ended, so the hold is released now rather than at the end of the capture window.
      const captureFailed = captures.length > 0;
      const due =
        captureFailed || entryHoldNotStored
          ? 0
          : Date.parse(e.createdAt) + windowMs - this.deps.now().getTime();
      const reverse = (): Promise<void> => this.release(transactionId, gatewayId, { minor: total, currency });
      if (due <= 0) {
        dueNow.push(reverse);
        continue;
      }
      this.schedule(transactionId, this.deps.now().getTime() + due, reverse);
    }
    // Part of recovery: done before the terminal takes a card (an unknown outcome is left to recovery).
    for (const reverse of dueNow) await reverse();
  }
}

/**
 * When the capture window of authorization `transactionId` ends, epoch milliseconds (config tariff.captureWindowMinutes
 * from its journal entry; spec 001 meter model: an authorization not captured in time is reversed); undefined when the
 * journal holds no entry of it.
 */
export function captureWindowEndMs(
  journal: SqliteJournal,
  config: Config,
  transactionId: string,
): number | undefined {
  const authorizedAt = Date.parse(journal.findByTransactionId(transactionId)?.createdAt ?? '');
  return Number.isFinite(authorizedAt)
    ? authorizedAt + config.tariff.captureWindowMinutes * 60_000
    : undefined;
}

/**
 * Whether a capture journaled for an authorization leaves room for another: refused for now (the vocabulary's
 * `refusalPasses`), provably never sent, found not at the gateway, or voided by recovery — nothing was captured, or what
 * was is given back and the hold stands, and the same request later can succeed. A capture refused for good ends the
 * capture.
 */
function captureMaySucceedLater(e: JournalEntry): boolean {
  if (e.state === 'declined' || e.state === 'rejected') return refusalPasses(e.reason);
  // Its answer lost, and recovery found it never reached the gateway (its timeout void answered that there is no such
  // payment): the whole hold stands. Or it had, and recovery voided it: voiding a capture leaves the authorization hold
  // in place (reference/gateway.md §7), and a capture of the same fee is within what that capture took.
  return (
    e.state === 'resolved' &&
    (e.resolution === NOT_SENT || e.resolution === 'timeout-void' || e.resolution === 'not-at-gateway')
  );
}
