import { createActor, type Actor } from 'xstate';
import {
  provideFlowEffects,
  type FlowEffects,
  type FlowSettings,
  type HoldExpiryResult,
  type HoldRecord,
} from '../flows/index.js';
import type { HoldStore } from '../journal/index.js';
import type { Logger } from '../log/index.js';
import { refusalPasses } from '../vocabulary/services.js';
import { retryWaitMs } from './retry-wait.js';

/** Longest a Node timer can wait (about 24.8 days); a later expiry is re-armed when it fires. */
const MAX_TIMER_MS = 2_147_000_000;

/**
 * The expiry watch of open tap-and-go holds (spec 001 tap-and-go: a card that never exits has its hold reversed after
 * the maximum stay; a hold of an earlier entry is due as soon as the card enters again, see HoldStore.open). The holds
 * live in the journal database ({@link HoldStore}); at a hold's expiry the watch claims it (so that an exit cannot
 * settle it at the same time) and runs the flows' `holdExpiryMachine` for it — the very machine the unit tests drive —
 * whose reversal goes through the host's effects like any other request.
 *
 * Reversals of a hold the gateway refused count against the machine's `maxResolutionAttempts` wherever they were
 * refused: in this run, in an earlier run whose machine stopped waiting before the refusal came (the host watches such a
 * hold again), before a restart. The count is the journal's (`refusedReversals`); once it reaches the cap the hold
 * is left to the operator, with no further reversal.
 *
 * A refusal that passes (the vocabulary's `refusalPasses`: PROCESSOR_UNAVAILABLE, the processor is down for a while)
 * is not one of them: the customer's funds stay held until a reversal succeeds, and the operator can do nothing the
 * terminal cannot do by trying again. After such a refusal the hold's next reversal waits — from the moment the watch
 * learns of the refusal, at start too — `resolutionRetryMs` doubled with each such refusal of the hold (the journal's
 * count), at most an hour: an outage of minutes costs a few requests, and a hold is released within the hour after
 * the processor is back. It goes then even before the hold's expiry: a reversal of the hold was sent, so its release
 * was decided already (at an exit: nothing owed, paid by phone, the fee left to a payment link or not collected), and
 * only the processor delays it. It is logged as a warning, not as the operator's. One reversal at a time as always:
 * the next goes only once the last one is answered (a 400 is a definite answer; an unknown outcome is recovery's, see
 * `settling`).
 */
export class HoldWatch {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** When each timer fires (Date.now() ms): one due now makes the watch {@link busy}. */
  private readonly firesAt = new Map<string, number>();
  private readonly actors = new Map<string, Actor<ReturnType<typeof provideFlowEffects.holdExpiry>>>();
  /** Holds whose reversal was refused: left for the operator (a refused reversal does not succeed by repeating it). */
  private readonly refused = new Set<string>();

  constructor(
    private readonly deps: {
      store: HoldStore;
      effects: FlowEffects;
      settings: FlowSettings;
      clock: { now(): number };
      logger: Logger;
      /**
       * Whether the hold is being settled outside this watch (a reversal of its authorization in flight or unknown,
       * recovery's): its expiry waits, and the host watches it again once that reversal is resolved without settling
       * the authorization — by recovery, or by its own late answer, refused (src/host/payment-router.ts).
       */
      settling: (hold: HoldRecord) => boolean;
      /**
       * The reasons of the reversals of a hold's authorization the gateway refused, oldest first (the journal's
       * `refusedReversals`).
       */
      refusedReversals: (hold: HoldRecord) => string[];
      /** A hold's reversal was refused: the operator must release it by hand. */
      onRefused: (hold: HoldRecord, reason: string) => void;
      /**
       * The reversal was approved, or refused because the authorization is released already (the hold is closed
       * either way).
       */
      onReversed: (hold: HoldRecord) => void;
    },
  ) {}

  /** Watches every unclaimed hold of the store (at start). */
  watchAll(): void {
    for (const hold of this.deps.store.unclaimed()) this.watch(hold);
  }

  /**
   * Watches one hold until its expiry (again after an exit returned it) — or, when its last reversal was refused for
   * now, until the wait after that refusal is over, expired or not (see the class comment).
   */
  watch(hold: HoldRecord): void {
    this.unwatch(hold.holdId);
    if (this.refused.has(hold.holdId)) return;
    const later = this.laterWaitMs(hold);
    // The store's expiry when it is sooner than the one passed: brought forward while an exit or an expiry had the
    // hold (the card entered again: HoldStore.open), which gives it back with the expiry it read.
    const expiresAtMs = Math.min(hold.expiresAtMs, this.deps.store.get(hold.holdId)?.expiresAtMs ?? Infinity);
    const delay = later > 0 ? later : Math.max(0, expiresAtMs - this.deps.clock.now());
    const wait = Math.min(delay, MAX_TIMER_MS);
    const timer = setTimeout(() => this.expire(hold.holdId), wait);
    timer.unref();
    this.timers.set(hold.holdId, timer);
    this.firesAt.set(hold.holdId, Date.now() + wait);
  }

  /** Stops watching a hold (an exit claimed it, or it was settled elsewhere). */
  unwatch(holdId: string): void {
    const t = this.timers.get(holdId);
    if (t) clearTimeout(t);
    this.timers.delete(holdId);
    this.firesAt.delete(holdId);
  }

  /** Holds being watched or reversed. */
  get size(): number {
    return this.timers.size + this.actors.size;
  }

  /**
   * Whether the watch has work now: a hold's reversal under way, or a hold due (a card's earlier hold its new entry
   * made due, an expiry passed) whose timer is about to run it. Not busy with holds that are only watched.
   */
  get busy(): boolean {
    if (this.actors.size > 0) return true;
    const now = Date.now();
    for (const at of this.firesAt.values()) if (at <= now) return true;
    return false;
  }

  /** Stops every timer and expiry machine (shutdown; the holds stay in the journal). */
  stop(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    this.firesAt.clear();
    for (const a of this.actors.values()) a.stop();
    this.actors.clear();
  }

  private expire(holdId: string): void {
    this.timers.delete(holdId);
    this.firesAt.delete(holdId);
    const { store, logger } = this.deps;
    const stored = store.get(holdId);
    if (!stored) return;
    // Its last reversal refused for now: due after the wait that `watch` armed, expired or not.
    const reverseNow = this.laterWaitMs(stored) > 0;
    if (stored.expiresAtMs > this.deps.clock.now() && !reverseNow) {
      this.watch(stored);
      return;
    }
    // A reversal of it not resolved yet: another would be a resend (DESIGN.md rule 2). Recovery's resolution decides.
    if (this.deps.settling(stored)) return;
    // As many refused as the machine tries: another reversal would be refused as well (a hold watched again after each
    // late refusal would otherwise be reversed without end). Refusals that pass are not counted: see the class comment.
    const refused = this.deps.refusedReversals(stored).filter((reason) => !refusalPasses(reason));
    if (refused.length >= this.deps.settings.timing.maxResolutionAttempts) {
      this.leaveToOperator(stored, 'rejected', refused.at(-1));
      return;
    }
    const hold = store.claimById(holdId);
    if (!hold) return; // an exit has it
    const actor = createActor(provideFlowEffects.holdExpiry(this.deps.effects), {
      input: {
        settings: this.deps.settings,
        clock: this.deps.clock,
        hold,
        refusedBefore: refused.length,
        reverseNow,
      },
    });
    this.actors.set(holdId, actor);
    actor.subscribe({
      complete: () => {
        // Stopped (the host's shutdown) rather than finished: the hold stays claimed until the next start frees it.
        if (actor.getSnapshot().status !== 'done') return;
        this.actors.delete(holdId);
        this.finish(hold, actor.getSnapshot().output as HoldExpiryResult);
      },
      error: (err: unknown) => {
        this.actors.delete(holdId);
        logger.error({ err, holdId }, 'hold expiry failed; the hold stays open');
        store.close(hold, 'returned');
      },
    });
    actor.start();
  }

  private finish(hold: HoldRecord, result: HoldExpiryResult): void {
    const { store, logger } = this.deps;
    if (result.outcome === 'reversed') {
      // Closed already by an approved reversal, in its outcome's transaction (src/host/payment-router.ts); this
      // covers a reversal settled otherwise (a resolution by recovery), and changes nothing when it is closed.
      store.close(hold, 'reversed');
      logger.info(
        { holdId: hold.holdId },
        'hold reversed at its expiry (the maximum stay, or the card entered again)',
      );
      this.deps.onReversed(hold);
      return;
    }
    if (result.outcome === 'released') {
      // Refused because nothing is held any more: the authorization is settled, and the hold with it.
      store.drop(hold.holdId);
      logger.info(
        { holdId: hold.holdId, reason: result.reason },
        'hold closed: its reversal found the authorization released already',
      );
      this.deps.onReversed(hold);
      return;
    }
    if (result.outcome === 'later') {
      // Refused for now: back in the store, and reversed again after the wait (watched again unless it was settled
      // meanwhile).
      store.close(hold, 'returned');
      logger.warn(
        { holdId: hold.holdId, reason: result.reason, waitMs: this.laterWaitMs(hold) },
        'hold reversal refused for now; tried again later',
      );
      if (store.has(hold.holdId) && !this.deps.settling(hold)) this.watch(hold);
      return;
    }
    // Not reversed: back in the store. An unknown outcome belongs to recovery (it reverses the authorization and
    // the hold is dropped then): until it is resolved no exit claims the hold and no expiry reverses it again (the
    // host's `settling`), and the host watches it again if the resolution leaves it held — a reversal this machine
    // stopped waiting for and that is refused afterwards included. A refusal seen here is the operator's — repeating
    // a refused request cannot succeed.
    store.close(hold, 'returned');
    if (result.lastKind === 'unknown') {
      // Resolved meanwhile, and still held: back under watch (the host's watch after the resolution found it claimed).
      if (store.has(hold.holdId) && !this.deps.settling(hold)) this.watch(hold);
      return;
    }
    this.leaveToOperator(hold, result.lastKind, result.reason);
  }

  /**
   * The wait before the next reversal of a hold whose last refused reversal was refused for now: `resolutionRetryMs`
   * doubled with each such refusal of it, at most an hour (`retryWaitMs`); 0 otherwise.
   */
  private laterWaitMs(hold: HoldRecord): number {
    const refused = this.deps.refusedReversals(hold);
    if (!refusalPasses(refused.at(-1))) return 0;
    const passed = refused.filter((reason) => refusalPasses(reason)).length;
    return retryWaitMs(this.deps.settings.timing.resolutionRetryMs, passed - 1);
  }

  /** No more reversals of this hold (the operator's to release): it stays open, unwatched until the next start. */
  private leaveToOperator(hold: HoldRecord, lastKind: string | undefined, reason: string | undefined): void {
    this.refused.add(hold.holdId);
    this.deps.logger.error(
      { holdId: hold.holdId, outcome: lastKind, reason },
      'hold reversal refused; the operator must release it',
    );
    this.deps.onRefused(hold, reason ?? lastKind ?? 'REFUSED');
  }
}
