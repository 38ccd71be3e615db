import type { Config } from '../config/index.js';
import {
  compensationOf,
  flowSettingsFromConfig,
  type ServiceRequest as FlowRequest,
  type SubmitOutcome,
} from '../flows/index.js';
import {
  JournalError,
  NOT_SENT,
  type FollowUpStore,
  type HoldStore,
  type JournalEntry,
  type OfflineQueue,
  type OutgoingRequest,
  type RecoveryItem,
  type SqliteJournal,
  type TicketPayment,
  type TimeoutRecovery,
  type TransmitOutcome,
} from '../journal/index.js';
import type { Logger } from '../log/index.js';
import {
  CAPTURE_UNRESOLVED,
  INCREMENT_UNRESOLVED,
  refusalPasses,
  refusedForNow,
  REVIEW_STATUS,
} from '../vocabulary/services.js';
import type { FeeShortfall } from './audit-trail.js';
import type { CardStore } from './card-store.js';
import { failpoint } from './failpoints.js';
import { captureWindowEndMs } from './open-authorizations.js';
import { isHeldDecline, type PaymentService, type SubmitRecord } from './payments.js';

/** How long a follow-up created at run time is left to the machine that created it before the host does it. */
const FOLLOW_UP_GRACE_MS = 10_000;

/**
 * How long the release of a meter session's other hold (`alsoReleases`) is left to the session's own reversal at
 * least, while the terminal runs: longer than the rest of a settlement takes (each reversal before it waits at most
 * for the gateway's timeouts and its timeout reversal), so that the host's follow-up does not race the session's
 * reversal of the same hold when the capture window ends as the session settles (its expiry).
 */
const SESSION_RELEASE_GRACE_MS = 60 * 60_000;

/**
 * Resolutions after which nothing of the unanswered request stands at the gateway (src/journal/recovery.ts): the
 * customer is not charged, the hold is released.
 */
const UNDONE: ReadonlySet<string> = new Set([
  'timeout-reversal',
  'timeout-void',
  'already-reversed',
  'not-at-gateway',
  NOT_SENT,
]);

/**
 * The one door of the machines' requests (FlowEffects.submit), with the policies around a send:
 * - a timeout reversal or void a machine asks for is carried out by the journal's recovery — the one recovery plan —
 *   and its result handed back, so that a machine and recovery can never both resolve an entry;
 * - every unknown outcome is handed to recovery at once (the machine may give up or be stopped; recovery does not);
 * - a capture, reversal or increment of an authorization waits for the resolution of an increment of it still
 *   unresolved, a reversal for that of a capture of it too, or is held back unsent, refused for now
 *   ({@link followOnHeldBack});
 * - an approval journaled approved after its machine stopped waiting (the abort came after the outcome's write) is
 *   undone at once through this same door, by the undo the machine itself sends for an approval it does not want;
 * - a payment that provably never reached an unreachable gateway is stored for forwarding when the offline policy
 *   allows it (src/journal/offline-queue.ts decides within its limits);
 * - a capture voided by the operator leaves its authorization hold in place (gateway.md §7): a durable follow-up
 *   obligation to reverse it is written in the same transaction as the void's outcome, and closed by the reversal's;
 * - a step of a meter session's settlement writes, before it can reach the gateway, the reversals of the session's
 *   other holds that its machine sends after it (`alsoReleases`): a crash while the step is out or between the steps
 *   leaves them to the next start, not to the end of their capture window; and the captures of those holds a fee
 *   spread over them takes next (`alsoCaptures`), closed by the machine's own approved capture: a crash while the step
 *   is out or between the steps leaves that part of the fee to the next start, not lost;
 * - a capture or reversal that settles a tap-and-go hold's authorization closes the hold in the same transaction as
 *   its outcome (a crash in between left a captured authorization open: a second exit captured it again, and the
 *   expiry watch reversed it);
 * - a reversal refused after its machine stopped waiting is handed to the host (`reversalRefusedUnwaited`): the
 *   authorization stands and nobody else learns of it;
 * - a pay-station sale that names its ticket (`ServiceRequest.ticket`, never sent) records the ticket's payment
 *   durably before the sale can reach the gateway (`ticketPaid`), so the ticket inserted again is not charged again
 *   for a sale that stands — approved, stored offline, or left unanswered and found standing by recovery, after a
 *   restart too; what of it stands is the journal's to say, and while the sale is unresolved the ticket is being
 *   checked, neither charged nor counted paid (the host's ticket lookup, after {@link resolveNow}).
 */
export class PaymentRouter {
  constructor(
    private readonly deps: {
      config: Config;
      journal: SqliteJournal;
      payments: PaymentService;
      recovery: TimeoutRecovery;
      offline: OfflineQueue;
      followUps: FollowUpStore;
      holds: HoldStore;
      cards: CardStore;
      logger: Logger;
      now: () => Date;
      /** An authorization was reversed (its hold, if any, is over). */
      authorizationReversed: (transactionId: string) => void;
      /**
       * A reversal of an authorization was declined or refused after its machine had stopped waiting for the answer:
       * the authorization stands, and the machine, which reported the outcome unknown, left what holds it (a
       * tap-and-go hold) to the resolution of that reversal — this answer is that resolution, and recovery never sees
       * it (the entry is no longer in flight). `reason`: the refusal's (one that says the authorization is released
       * already ends it instead).
       */
      reversalRefusedUnwaited: (authorizationTransactionId: string, reason: string | undefined) => void;
      /** Something the operator status shows changed. */
      changed: () => void;
      /**
       * A pay station's sale of a ticket about to be sent: records the ticket's payment by it, before it can reach the
       * gateway (the host's `recordTicketPaid`, on the pay station's clock; a value the store refuses is logged there).
       * Absent: nothing is recorded.
       */
      ticketPaid?: (payment: Omit<TicketPayment, 'paidAtMs'>) => void;
      /**
       * A capture approved for less than its customer owes (`ServiceRequest.owedMinor`): records the shortfall for the
       * operator, in the transaction of the capture's outcome (the host's audit log; no card data). Absent: nothing is
       * recorded.
       */
      feeShortfall?: (shortfall: FeeShortfall) => void;
    },
  ) {}

  /**
   * `signal`: the machine's wait (FlowEffects.submit). An approval that arrives after it aborted comes back unknown and
   * is handed to recovery with every other unknown outcome: nobody is left to use or undo it. One journaled approved
   * because the abort came after the outcome's write is undone here ({@link undoAbandoned}).
   */
  async submit(request: FlowRequest, signal?: AbortSignal): Promise<SubmitOutcome> {
    if (request.service === 'timeout-reversal' || request.service === 'timeout-void')
      return this.resolveUnanswered(request);
    const heldBack = await this.followOnHeldBack(request);
    if (heldBack !== undefined) return heldBack;
    const record = await this.deps.payments.submit(request, {
      onOutcome: (entry, outcome) => this.followUpsOf(request, entry, outcome),
      beforeSend: (prepared) => this.beforeSend(request, prepared.transactionId),
      ...(signal !== undefined ? { signal } : {}),
    });
    const { outcome, entryId } = record;
    const reversed = request.service === 'reversal' ? request.original?.transactionId : undefined;
    if (outcome.kind === 'approved' && reversed !== undefined) this.deps.authorizationReversed(reversed);
    // A reversal goes and is journaled as it came whoever waits (PaymentService.submit); a refusal its machine no
    // longer waits for is handed to the host, as recovery's resolutions are (a machine still waiting handles it).
    if (
      (outcome.kind === 'declined' || outcome.kind === 'rejected') &&
      reversed !== undefined &&
      signal?.aborted === true
    )
      this.deps.reversalRefusedUnwaited(reversed, outcome.reason);
    if (outcome.kind === 'unknown' && entryId !== undefined) this.recoverInBackground(entryId);
    if (record.abandonedApproval) this.undoAbandoned(request, outcome);
    // Stored offline, a payment is forwarded (and charged) later: only for a machine still waiting to tell the
    // customer so. One whose machine gave up stays not sent.
    if (record.unreachable && signal?.aborted !== true) return this.storeOffline(request, record) ?? outcome;
    return outcome;
  }

  /**
   * A follow-on of an authorization while another of it is unresolved (its outcome unknown; a machine goes on without
   * it once its own resolution attempts are over), which the gateway may hold or not — only its resolution tells:
   * - a capture, reversal or increment while an increment is unresolved: the gateway holds the authorized total with
   *   or without it. A reversal for the total the journal counts (without it) would be refused and the hold left on
   *   the card; a capture's comments would name the wrong relation to the authorization; a later increment's answer
   *   would count the unknown one into its new total, which that one's timeout reversal then takes back;
   * - a reversal while a capture is unresolved: if the capture went through the reversal is refused, and the
   *   capture's timeout void then leaves the authorization held with nobody to release it.
   * So recovery is asked for an attempt now; resolved, the request goes as usual (built from what the journal counts
   * then). Still unresolved, it is held back, unsent, as refused for now (INCREMENT_UNRESOLVED, CAPTURE_UNRESOLVED:
   * refusals that pass): a reversal that gives the authorization up (`releases`, or one of a tap-and-go hold: an
   * exit's release after its capture's outcome was lost) is sent again by a follow-up written now, which the host runs
   * as soon as that follow-on is resolved. Undefined: nothing held it back.
   */
  private async followOnHeldBack(request: FlowRequest): Promise<SubmitOutcome | undefined> {
    const authorization = request.original?.transactionId;
    if (authorization === undefined) return undefined;
    const waitsFor: Array<['incremental' | 'capture', string]> = [];
    if (request.service === 'capture' || request.service === 'reversal' || request.service === 'incremental')
      waitsFor.push(['incremental', INCREMENT_UNRESOLVED]);
    if (request.service === 'reversal') waitsFor.push(['capture', CAPTURE_UNRESOLVED]);
    const { journal, logger } = this.deps;
    for (const [service, reason] of waitsFor) {
      await this.resolveNow(journal.followOnsInFlight(authorization, service));
      const unresolved = journal.followOnsInFlight(authorization, service);
      if (unresolved.length === 0) continue;
      logger.warn(
        { transactionId: authorization, service: request.service, unresolved: unresolved.map((e) => e.id) },
        `held back: a ${service} of the authorization is unresolved`,
      );
      // The release is decided, and nothing journals a request held back: written as a follow-up, it is sent once
      // the follow-on is resolved (the host runs it then: TerminalHost.holdAfterResolution), after a restart too. A
      // tap-and-go hold's reversal as well: its expiry watch sends again only the refusals the journal holds, and
      // would leave this one until the hold's expiry. A meter session's capture of its fee likewise: sent once that
      // is resolved, the hold kept for it.
      if (request.service === 'capture' && request.capturesFee === true)
        this.captureLater(request, `held back while a ${service} of it was unresolved`);
      if (request.service === 'reversal' && (request.releases === true || this.deps.holds.has(authorization)))
        reverseLater(
          this.obligations(),
          authorization,
          request.original?.gatewayId,
          request,
          `released while a ${service} of it was unresolved: sent once that is resolved`,
          this.deps.now().getTime() + this.deps.config.journal.resolutionRetryMs,
        );
      return { kind: 'rejected', transactionId: authorization, reason };
    }
    return undefined;
  }

  /**
   * Recovery before what an unresolved request holds back (DESIGN.md rule 3, while the terminal runs): one resolution
   * attempt of each entry is asked for now (not after the wait that grows while nobody waits: `recoverWithin`) and
   * waited for; failures are logged. Whoever asks reads the journal again afterwards: what is still in flight holds
   * back what waits for it (a follow-on of an authorization, {@link followOnHeldBack}; a pay station's ticket whose
   * sale is unresolved, the host's ticket lookup). The run of each goes on until it resolves it.
   */
  async resolveNow(entries: readonly JournalEntry[]): Promise<void> {
    for (const entry of entries) {
      try {
        await this.deps.recovery.recoverWithin(entry.id, 1);
      } catch (err) {
        this.deps.logger.error(
          { err, entryId: entry.id },
          `recovery of an unresolved ${entry.service} failed`,
        );
      }
    }
  }

  /** Starts recovery of an entry (shared with any other caller of the same entry); failures are logged. */
  recoverInBackground(entryId: number): void {
    this.deps.recovery
      .recover(entryId)
      .catch((err: unknown) => this.deps.logger.error({ err, entryId }, 'background recovery failed'));
  }

  /**
   * An approval journaled approved whose machine stopped waiting after its outcome's write (the machine's backstop or
   * a graceful stop while the commit's disk sync was under way, or before the host resumed): the machine told its
   * customer the outcome is unknown and resolves nothing, and the journal's entry is final (an approved entry never
   * returns in flight), so recovery will not undo it. The host sends the undo the machine sends for an approval it does
   * not want (`compensationOf`: a void of a sale or credit, a reversal of an authorization) through this same door, at
   * once: journaled before it goes, its approval closing what the undo closes (holds, follow-ups), an unknown outcome
   * of it completed by recovery's plan of that undo — after a crash too, from its journal entry. It is started before
   * this submit returns, so that a stop's drain of the sender waits for it. A service without such an undo (a capture,
   * a refund, an increment) stays approved: logged for the operator.
   */
  private undoAbandoned(request: FlowRequest, approval: SubmitOutcome): void {
    const { logger, payments, config } = this.deps;
    const transactionId = approval.transactionId;
    const undo = compensationOf(request, approval, {
      // The reversal of an EMV authorization carries its tags, kept with its approval (PaymentService).
      emvData: payments.authorizationTags(transactionId) !== undefined,
      settings: flowSettingsFromConfig(config),
    });
    if (undo === null) {
      logger.error(
        { transactionId, service: request.service },
        'approved after its machine stopped waiting, and nothing undoes it: the operator should check it',
      );
      return;
    }
    // Nobody keeps the authorization: a reversal of it refused for now is sent again later (followUpsOf).
    const releases = undo.service === 'reversal';
    this.submit(releases ? { ...undo, releases } : undo).then(
      (o) => {
        const later = releases && o.kind !== 'approved' && o.kind !== 'unknown' && refusalPasses(o.reason);
        (o.kind === 'approved' ? logger.info : later ? logger.warn : logger.error).call(
          logger,
          { transactionId, service: request.service, undo: undo.service, outcome: o.kind, reason: o.reason },
          o.kind === 'approved'
            ? 'approval nobody waited for undone'
            : o.kind === 'unknown'
              ? "undo of an approval nobody waited for: outcome unknown, recovery's to complete"
              : later
                ? 'undo of an approval nobody waited for refused for now: sent again later'
                : 'undo of an approval nobody waited for refused: the operator should check it',
        );
      },
      (err: unknown) =>
        logger.error(
          { err, transactionId, service: request.service, undo: undo.service },
          'undo of an approval nobody waited for failed (a journal failure): the operator should check it',
        ),
    );
  }

  /**
   * A machine's timeout reversal/void of its unanswered request: one attempt of recovery's run for that entry is
   * awaited (the machine retries on its own schedule and then leaves it to recovery, which never gives up).
   */
  private async resolveUnanswered(request: FlowRequest): Promise<SubmitOutcome> {
    const original = request.original?.transactionId;
    const entry = original ? this.deps.journal.findByTransactionId(original) : undefined;
    if (!original || !entry)
      return { kind: 'rejected', transactionId: original ?? 'unknown', reason: 'ORIGINAL_NOT_JOURNALED' };
    let item: RecoveryItem | undefined;
    try {
      item = await this.deps.recovery.recoverWithin(entry.id, 1);
    } catch (err) {
      this.deps.logger.error({ err, entryId: entry.id }, 'recovery of an unanswered request failed');
      return { kind: 'unknown', transactionId: original, reason: 'RECOVERY_FAILED' };
    }
    if (item === undefined) return { kind: 'unknown', transactionId: original, reason: 'NOT_RESOLVED_YET' };
    if (UNDONE.has(item.resolution)) {
      if (request.service === 'timeout-reversal') this.deps.authorizationReversed(original);
      return { kind: 'approved', transactionId: original, partial: false, reason: item.resolution };
    }
    return { kind: 'declined', transactionId: original, reason: item.resolution.toUpperCase() };
  }

  /**
   * Durable obligations a request creates whatever its outcome, written in one transaction before it can reach the
   * gateway: a process that dies while it is out (its outcome never written) leaves them to the next start. A meter
   * settlement step's releases and captures of the session's other holds ({@link sessionReleases},
   * {@link sessionCaptures}), a pay station's ticket paid by a sale ({@link ticketPaid}).
   */
  private beforeSend(request: FlowRequest, transactionId: string | undefined): void {
    // Most requests create none: no transaction for them.
    const { alsoReleases = [], alsoCaptures = [], ticket } = request;
    if (alsoReleases.length === 0 && alsoCaptures.length === 0 && ticket === undefined) return;
    this.deps.journal.atomically(true, () => {
      this.sessionReleases(request);
      this.sessionCaptures(request);
      this.ticketPaid(request, transactionId);
    });
  }

  /**
   * Durable obligations that an outcome creates or closes, written in the outcome's own transaction (DESIGN.md
   * rule 6): a voided capture leaves the authorization held until it is reversed; an approved capture or reversal
   * settles its authorization, so the tap-and-go hold on it (if any) is over — closed here, not by the machine's
   * later `closeHold`, which a crash can separate from the outcome.
   */
  private followUpsOf(request: FlowRequest, entry: JournalEntry, outcome: TransmitOutcome): void {
    if ((request.service === 'preauth' || request.service === 'sale') && isHeldDecline(outcome)) {
      heldDecline(this.obligations(), entry.transactionId, request, outcome);
      return;
    }
    if (request.service === 'reversal' && request.releases === true && refusedForNow(outcome)) {
      this.releaseLater(request, outcome);
      return;
    }
    if (request.service === 'capture' && request.capturesFee === true && outcome.kind !== 'approved') {
      if (refusedForNow(outcome))
        this.captureLater(request, `refused for now (${outcome.reason ?? outcome.kind})`);
      // Its outcome unknown: recovery resolves it first (a timeout void, which leaves the hold in place, or the capture
      // found standing, which settles the authorization); the follow-up waits for that and captures only what no
      // capture took.
      else if (outcome.kind === 'unknown') this.captureLater(request, 'its outcome unknown');
      else if (outcome.kind === 'declined' || outcome.kind === 'rejected')
        this.feeNotCaptured(request, entry, outcome);
      return;
    }
    if (outcome.kind !== 'approved') return;
    if (request.service === 'capture') this.shortfallOf(request, entry, outcome);
    const { followUps, holds } = this.deps;
    const original = request.original?.transactionId;
    if (!original) return;
    if (request.service === 'void-capture') this.captureVoided(original);
    // A capture that later is voided leaves the authorization to a follow-up reversal (captureVoided), never to the
    // hold: the exit was paid, and a hold captured once is not captured again.
    if (request.service === 'capture') {
      holds.settle(original, 'captured');
      // The capture a meter session's earlier step wrote as a follow-up (`alsoCaptures`) is done.
      for (const f of followUps.open())
        if (f.authorizationTransactionId === original && f.kind === 'capture-authorization')
          followUps.complete(f.id, 'captured');
    }
    // A card sale given back (a ticket paid by phone too, or by the operator): nothing is left to give back.
    if (request.service === 'void-payment' || request.service === 'refund-payment')
      for (const f of followUps.open())
        if (f.authorizationTransactionId === original && f.kind === 'give-back-sale')
          followUps.complete(f.id, request.service === 'void-payment' ? 'voided' : 'refunded');
    if (request.service === 'reversal') {
      holds.settle(original, 'reversed');
      for (const f of followUps.open())
        if (f.authorizationTransactionId === original) followUps.complete(f.id, 'reversed');
    }
  }

  /**
   * The pay station's sale of a ticket, about to be sent: the ticket's payment by it is recorded, for the local price
   * of the sale, durably before the sale can reach the gateway. Whatever becomes of the sale — approved, stored
   * offline under the same transactionId, declined, or unanswered and then voided or found standing by recovery (its
   * timeout void refused NOT_VOIDABLE: the customer paid), after a crash between the send and its answer too — what
   * of it stands is read from the journal when the ticket comes back (src/host/ticket-payments.ts): a sale that took
   * no money stands for nothing. Recorded only with its outcome, a sale whose answer was lost and that stands left
   * the ticket unpaid, charged again when inserted again. A failure to record it is logged, never a reason to lose the
   * payment: the ticket, unrecorded, is charged again as before.
   */
  private ticketPaid(request: FlowRequest, transactionId: string | undefined): void {
    const ticket = request.ticket;
    if (request.service !== 'sale' || ticket === undefined || transactionId === undefined) return;
    this.deps.ticketPaid?.({
      ticket,
      method: 'card',
      paymentRef: transactionId,
      // The local price the customer paid (a converted sale's answer may be in the card's currency); what of it
      // stands is read from the journal's entry when the ticket comes back.
      amountMinor: request.amountMinor,
      currency: request.currency,
    });
  }

  /**
   * An approved capture that took less than its customer owes (`owedMinor`: a tap-and-go exit whose increment was not
   * approved captures what the hold covers, or the gateway took less than was asked): the fee less what the capture
   * took is lost to the operator unless someone collects it, so it is recorded in the capture outcome's transaction (a
   * crash cannot separate the two). A record that cannot be written is logged there, never a reason to lose the
   * capture's outcome.
   */
  private shortfallOf(request: FlowRequest, entry: JournalEntry, outcome: TransmitOutcome): void {
    const owed = request.owedMinor;
    // A converted capture's answer is in the card's currency: the fee is the local price (no model converts a fee it
    // may capture short).
    if (owed === undefined || request.dcc !== undefined || outcome.kind !== 'approved') return;
    const captured = outcome.amountMinor ?? request.amountMinor;
    if (owed <= captured || entry.transactionId === undefined) return;
    this.deps.feeShortfall?.({
      captureTransactionId: entry.transactionId,
      ...(request.original?.transactionId !== undefined
        ? { authorizationTransactionId: request.original.transactionId }
        : {}),
      owedMinor: owed,
      capturedMinor: captured,
      currency: request.currency,
      reason: request.amountMinor < owed ? 'INCREMENTAL_NOT_APPROVED' : 'CAPTURED_LESS_THAN_ASKED',
    });
  }

  /**
   * A step of a meter session's settlement (`alsoReleases`: the capture of one hold, the sale of a converted hold's
   * fee, the reversal of a hold), whatever its outcome: the session's other authorizations that its machine reverses
   * next are written as follow-ups here, before the step can reach the gateway ({@link beforeSend}). A crash before the
   * machine's own reversal of one (while the step is out too: its outcome is never written) leaves it to the next
   * start, which runs every open follow-up after recovery — instead of leaving the hold on the card until its capture
   * window ends. Due at that end while the terminal runs (and no sooner than {@link SESSION_RELEASE_GRACE_MS} from
   * now): the machine's approved reversal closes it (below), and one refused for now or never sent brings it forward
   * ({@link releaseLater}); the host's follow-ups never send a reversal while one of the authorization is in flight or
   * unknown (recovery's), nor one of an authorization the journal shows settled.
   */
  private sessionReleases(request: FlowRequest): void {
    const { journal, config, now } = this.deps;
    for (const release of request.alsoReleases ?? []) {
      const { transactionId, gatewayId } = release.original;
      const nowMs = now().getTime();
      const windowEndsAtMs =
        captureWindowEndMs(journal, config, transactionId) ??
        nowMs + config.tariff.captureWindowMinutes * 60_000;
      reverseLater(
        this.obligations(),
        transactionId,
        gatewayId,
        { service: 'reversal', amountMinor: release.amountMinor, currency: request.currency },
        `released by its meter session after its ${request.service}: sent at the next start if the session stopped first`,
        Math.max(windowEndsAtMs, nowMs + SESSION_RELEASE_GRACE_MS),
      );
    }
  }

  /**
   * A step of a meter session's settlement whose fee is spread over more than one hold (`alsoCaptures`), whatever its
   * outcome: the captures of the session's other holds that its machine sends next are written as follow-ups here,
   * before the step can reach the gateway ({@link beforeSend}) — the part of the fee each covers, in the request's
   * currency (the local one the machines count in, which the authorization's is: a converted hold's capture is
   * converted at its rate when it is built). A crash before the machine's own capture of one leaves it to the next
   * start, which runs every open follow-up after recovery, instead of losing that part of the fee with the hold
   * reversed at the end of its capture window. Due {@link SESSION_RELEASE_GRACE_MS} from now while the terminal runs:
   * the machine's own capture is approved long before and closes it (followUpsOf). The host's follow-ups capture only
   * once nothing of the authorization is in flight or unknown, never one the journal shows captured or reversed or
   * whose release was decided, and never again after a capture of it that did not stand for good
   * (src/host/open-authorizations.ts).
   */
  private sessionCaptures(request: FlowRequest): void {
    const { followUps, logger, now } = this.deps;
    for (const capture of request.alsoCaptures ?? []) {
      const { transactionId, gatewayId } = capture.original;
      try {
        followUps.add({
          kind: 'capture-authorization',
          authorizationTransactionId: transactionId,
          gatewayId,
          amountMinor: capture.amountMinor,
          currency: request.currency,
          includeEmvTags: capture.includeEmvTags,
          reason: `captured by its meter session after its ${request.service}: sent at the next start if the session stopped first`,
          dueAtMs: now().getTime() + SESSION_RELEASE_GRACE_MS,
        });
      } catch (e) {
        // One per authorization: a step before this one wrote it with other terms (a bug to surface). Never a reason
        // to lose the outcome this is written with.
        if (!(e instanceof JournalError && e.code === 'JOURNAL_DUPLICATE')) throw e;
        logger.error(
          { transactionId, err: e },
          'a follow-up capture of this authorization exists with other terms',
        );
      }
    }
  }

  /** The stores and clock the obligations of an outcome are written with. */
  private obligations(): OutcomeObligations {
    const { followUps, payments, logger, now } = this.deps;
    return {
      followUps,
      tags: {
        put: (transactionId, tagsHex) => payments.keepOriginalTags(transactionId, tagsHex),
        get: (transactionId) => payments.authorizationTags(transactionId),
      },
      logger,
      now,
    };
  }

  /**
   * A reversal that releases an authorization for good (`releases`: its session gave it up) refused for now
   * (`refusalPasses`: the processor is unavailable), or that provably never left (`not-sent`: the gateway could not be
   * reached, or refused the terminal's credentials unprocessed): the machine reports the settlement failed, and the
   * funds stay held on the card. The reversal is sent again later as a durable follow-up written with the refusal (the
   * host's follow-ups, tried again with a doubling wait, at most hourly), instead of waiting for the next start's sweep
   * of orphaned authorizations. A refusal for good stays the operator's.
   */
  private releaseLater(request: FlowRequest, outcome: TransmitOutcome): void {
    reverseLater(
      this.obligations(),
      request.original?.transactionId,
      request.original?.gatewayId,
      request,
      `released by its session, refused for now (${outcome.reason ?? outcome.kind}): sent again later`,
      this.deps.now().getTime() + this.deps.config.journal.resolutionRetryMs,
    );
  }

  /**
   * A meter session's capture of its fee (`capturesFee`) refused for now (`refusalPasses`: the processor is
   * unavailable), provably never sent, or held back unsent while a follow-on of its authorization is unresolved: nothing
   * was captured, the hold stands, and the machine keeps it for this capture. The capture is sent again later as a
   * durable follow-up written with the refusal (the host's follow-ups, tried again with a growing wait, only once
   * nothing of the authorization is unresolved, and never after its capture window: then the hold is released and the
   * fee recorded for the operator — src/host/open-authorizations.ts).
   */
  private captureLater(request: FlowRequest, why: string): void {
    const { followUps, logger, now, config } = this.deps;
    const original = request.original;
    if (original?.gatewayId === undefined || original.gatewayId === '') {
      logger.error(
        { transactionId: original?.transactionId, why },
        'fee to capture later without the ids to capture it: the operator should check it',
      );
      return;
    }
    const dueAtMs = now().getTime() + config.journal.resolutionRetryMs;
    try {
      const followUp = followUps.add({
        kind: 'capture-authorization',
        authorizationTransactionId: original.transactionId,
        gatewayId: original.gatewayId,
        amountMinor: request.amountMinor,
        currency: request.currency,
        includeEmvTags: request.includeEmvTags,
        reason: `captured by its meter session, ${why}: sent again later`,
        dueAtMs,
      });
      // One written earlier by a step before this one (`alsoCaptures`), due after its grace: the capture is due now.
      followUps.dueBy(followUp.id, dueAtMs);
    } catch (e) {
      // One per authorization: one with other terms exists already (a bug to surface). Never a reason to lose the
      // outcome this is written with.
      if (!(e instanceof JournalError && e.code === 'JOURNAL_DUPLICATE')) throw e;
      logger.error(
        { transactionId: original.transactionId, err: e },
        'a follow-up capture of this authorization exists with other terms',
      );
    }
  }

  /**
   * A meter session's capture of its fee (`capturesFee`) refused for good: nothing was captured and sending it again
   * cannot change that; the machine releases the hold. The fee it did not take is recorded for the operator in the
   * refusal's transaction, as a later capture's that did not stand is (src/host/open-authorizations.ts).
   */
  private feeNotCaptured(request: FlowRequest, entry: JournalEntry, outcome: TransmitOutcome): void {
    const { followUps } = this.deps;
    // A capture of it a step before this one wrote (`alsoCaptures`) is over too: its fee is recorded here.
    for (const f of followUps.open())
      if (
        f.authorizationTransactionId === request.original?.transactionId &&
        f.kind === 'capture-authorization'
      )
        followUps.complete(f.id, 'capture-failed');
    if (entry.transactionId === undefined) return;
    this.deps.logger.error(
      { transactionId: entry.transactionId, reason: outcome.reason, amountMinor: request.amountMinor },
      'capture of a meter fee refused: the hold is released, the operator should check the fee',
    );
    this.deps.feeShortfall?.({
      captureTransactionId: entry.transactionId,
      ...(request.original?.transactionId !== undefined
        ? { authorizationTransactionId: request.original.transactionId }
        : {}),
      owedMinor: request.amountMinor,
      capturedMinor: 0,
      currency: request.currency,
      reason: 'CAPTURE_NOT_STANDING',
    });
  }

  /** The outcome of a stored payment forwarded by the host's own forwarding: see {@link forwardedOutcome}. */
  forwardedOutcome(entry: JournalEntry, request: OutgoingRequest, outcome: TransmitOutcome): void {
    forwardedOutcome(this.obligations(), entry, request, outcome);
  }

  /**
   * A capture was voided (by the operator, or by recovery finishing a void whose answer was lost): the authorization
   * hold stays in place until it is reversed (gateway.md §7), so a durable obligation to reverse it is recorded —
   * carried out by the operator machine at once, or by the host's follow-ups (at start, and while it runs).
   */
  captureVoided(captureTransactionId: string): void {
    const { journal, followUps, payments } = this.deps;
    const capture = journal.findByTransactionId(captureTransactionId);
    const authTx = capture?.referencedTransactionId;
    const auth = authTx ? journal.findByTransactionId(authTx) : undefined;
    if (!authTx || !auth?.gatewayId || !auth.currency) return;
    // In the local currency the machines count in, as any machine's request (the reversal carries the journal's figure
    // as the gateway holds it).
    const total = payments.localAuthorizedTotal(authTx);
    followUps.add({
      kind: 'reverse-authorization',
      authorizationTransactionId: authTx,
      gatewayId: auth.gatewayId,
      amountMinor: total?.minor ?? auth.amountMinor ?? 0,
      currency: total?.currency ?? auth.currency,
      includeEmvTags: payments.authorizationTags(authTx) !== undefined,
      reason: 'capture voided: the authorization hold stays until it is reversed',
      // The operator machine reverses the hold at once; the host's background work takes over only if it has not
      // after this grace (two reversals of one hold would have the second refused as already reversed).
      dueAtMs: this.deps.now().getTime() + FOLLOW_UP_GRACE_MS,
    });
  }

  /**
   * The offline fallback (policy `prefer-online`): a chip payment that provably never left because the gateway could
   * not be reached waits in the queue under the same transactionId (its journal entry was resolved as not sent).
   * Returns the machine's outcome when stored, undefined when the queue refuses it.
   */
  private storeOffline(request: FlowRequest, record: SubmitRecord): SubmitOutcome | undefined {
    const { prepared } = record;
    const { config, offline, cards, logger } = this.deps;
    const card = request.cardRef ? cards.get(request.cardRef) : undefined;
    if (config.offline.policy !== 'prefer-online' || !card || !prepared?.transactionId) return undefined;
    // A converted sale rests on an offer that expires within minutes: it cannot wait in a queue.
    if (request.dcc?.indicator === '1') return undefined;
    const candidate = {
      service: prepared.service,
      entryMode: card.summary.entryMode,
      // The issuer's word on authorization (a card that asks for it online is never stored); not card data.
      ...(card.data !== undefined ? { serviceCode: card.data.serviceCode } : {}),
      amountMinor: prepared.amountMinor ?? 0,
      currency: prepared.currency ?? request.currency,
      // The card's keyed fingerprint (an HMAC, never the PAN): the per-card limit counts its payments in the queue.
      fingerprint: card.summary.fingerprint,
    };
    const refusal = offline.refusal(candidate);
    if (refusal) {
      logger.info({ code: refusal.code, reason: refusal.message }, 'payment not taken offline');
      return undefined;
    }
    // A pay station's sale of a ticket was recorded before it was sent, under the transactionId it is stored with.
    const stored = offline.store({
      ...candidate,
      transactionId: prepared.transactionId,
      comments: prepared.comments,
      method: prepared.method,
      path: prepared.path,
      body: prepared.body,
      maskedPan: card.summary.maskedPan,
    });
    failpoint('offline.stored');
    logger.info({ transactionId: stored.transactionId }, 'payment stored offline');
    this.deps.changed();
    return {
      kind: 'approved',
      transactionId: stored.transactionId,
      authorizedMinor: stored.amountMinor,
      partial: false,
      reason: 'OFFLINE_STORED',
    };
  }
}

/**
 * What an outcome's obligations are written with: the journal's follow-ups, the EMV tags kept for an authorization's
 * follow-ons (encrypted at rest), in the outcome's transaction — the host's stores, or those `queue flush` opens on the
 * same journal.
 */
export interface OutcomeObligations {
  followUps: FollowUpStore;
  tags: {
    put(transactionId: string, tagsHex: string): void;
    get(transactionId: string): string | undefined;
  };
  logger: Logger;
  now: () => Date;
}

/**
 * A pre-authorization or sale declined with a status that leaves it on the gateway (isHeldDecline): the machine tells
 * the customer it was declined — and a customer may well try again, with another card — but it stands until the
 * authorization is reversed. AUTHORIZED_RISK_DECLINED: the issuer approved and holds the funds (a sale's too: the risk
 * decline stopped its capture). PENDING_REVIEW: the merchant's review may yet accept it, and then the card is charged
 * or held for a payment its customer was told had failed; reversed, there is nothing left to accept. The reversal is a
 * durable follow-up written with the decline, carried out by the host's follow-ups at once (at the latest at the next
 * start) — never the payment sent again.
 */
function heldDecline(
  deps: OutcomeObligations,
  transactionId: string | undefined,
  request: { service: string; amountMinor: number; currency: string },
  outcome: TransmitOutcome,
): void {
  const gatewayId = outcome.kind === 'declined' ? outcome.gatewayId : undefined;
  const status = outcome.kind === 'declined' ? outcome.status : undefined;
  reverseLater(
    deps,
    transactionId,
    gatewayId,
    request,
    status === REVIEW_STATUS
      ? 'in review: a review may yet accept and charge it until the authorization is reversed'
      : 'risk-declined: the issuer holds the funds until the authorization is reversed',
    deps.now().getTime(),
  );
}

/** The durable follow-up that reverses an authorization (at `dueAtMs`), written in the caller's transaction. */
function reverseLater(
  deps: OutcomeObligations,
  transactionId: string | undefined,
  gatewayId: string | undefined,
  request: { service: string; amountMinor: number; currency: string },
  reason: string,
  dueAtMs: number,
): void {
  if (!transactionId || !gatewayId) {
    deps.logger.error(
      { transactionId, service: request.service, reason },
      'authorization to reverse without the ids to reverse it: the operator should check it',
    );
    return;
  }
  try {
    const followUp = deps.followUps.add({
      kind: 'reverse-authorization',
      authorizationTransactionId: transactionId,
      gatewayId,
      amountMinor: request.amountMinor,
      currency: request.currency,
      includeEmvTags: deps.tags.get(transactionId) !== undefined,
      reason,
      dueAtMs,
    });
    // One written earlier with a later due time (a meter session's release, due when the capture window ends, whose
    // reversal by the machine was refused for now): the release is due now.
    deps.followUps.dueBy(followUp.id, dueAtMs);
  } catch (e) {
    // One follow-up per authorization: one with other terms exists already (it reverses the authorization). Never
    // a reason to lose the outcome this is written with.
    if (!(e instanceof JournalError && e.code === 'JOURNAL_DUPLICATE')) throw e;
    deps.logger.warn(
      { transactionId, reason },
      'a follow-up reversal of this authorization exists already: it is left to do the work',
    );
  }
}

/**
 * The outcome of a stored payment forwarded (src/journal/offline-queue.ts), in its transaction, whoever forwards it —
 * the host's forwarding or `parking-terminal queue flush` (OfflineQueue.forwardPending's `onOutcome`): a
 * risk-declined one, or one held for review, stands as a live payment's does, and gets the same reversal, a durable
 * follow-up the terminal carries out (at its next start when `queue flush` wrote it). Its EMV tags, which the reversal
 * repeats, are the ones of the stored request, kept before the request is wiped.
 */
export function forwardedOutcome(
  deps: OutcomeObligations,
  entry: JournalEntry,
  request: OutgoingRequest,
  outcome: TransmitOutcome,
): void {
  if ((entry.service !== 'preauth' && entry.service !== 'sale') || !isHeldDecline(outcome)) return;
  const { transactionId, amountMinor, currency } = entry;
  if (amountMinor === undefined || currency === undefined) {
    deps.logger.error(
      { transactionId, service: entry.service },
      'forward declined but still standing, without its amount: the operator should check it',
    );
    return;
  }
  const tags = emvTagsOf(request.body);
  if (transactionId && tags !== undefined) deps.tags.put(transactionId, tags);
  heldDecline(deps, transactionId, { service: entry.service, amountMinor, currency }, outcome);
}

const EMV_TAGS_FIELD = Buffer.from('"emv":{"tags":"');

/**
 * `pointOfSaleInformation.emv.tags` of a request body as the gateway client writes it (`"emv":{"tags":"…"`), read
 * from the bytes in place: the body also holds track data, which is never copied into a string that cannot be wiped.
 */
function emvTagsOf(body: Buffer): string | undefined {
  const at = body.indexOf(EMV_TAGS_FIELD);
  if (at < 0) return undefined;
  const start = at + EMV_TAGS_FIELD.length;
  let end = start;
  while (end < body.length && isHexDigit(body[end]!)) end++;
  return end > start && body[end] === 0x22 ? body.toString('latin1', start, end) : undefined;
}

function isHexDigit(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}
