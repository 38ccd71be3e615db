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
import { MAX_TIMER_DELAY_MS } from '../vocabulary/timer.js';

/**
 * Where an open hold stands for the operator ({@link HoldWatch.standing}): `open` nobody is settling it — the operator
 * may release it; `settling` an exit or this watch has claimed it, or its authorization is being settled (a reversal,
 * capture or increment of it in flight or unknown, recovery's; its follow-up due); `releasing` its release is decided
 * — a reversal of it was refused: this watch sends the next after its wait, or left it to the operator at the
 * processor (refused for good).
 */
export type HoldStanding = 'open' | 'settling' | 'releasing';

/**
 * What an operator's release of a hold found ({@link HoldWatch.release}): `started` its reversal, run by the expiry
 * machine, with the run's result (undefined when the host stopped first); otherwise nothing was sent — `not-found` no
 * open hold has that id (closed already: released, captured), `settling` or `releasing` as {@link HoldStanding}.
 */
export type HoldRelease =
  /** `hold`: the hold as it stood when its release started (what the reversal frees). */
  | { kind: 'started'; hold: HoldRecord; result: Promise<HoldExpiryResult | undefined> }
  | { kind: 'not-found' }
  | { kind: Exclude<HoldStanding, 'open'> };

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
 * was decided already, and only the processor delays it. (An exit's release of a hold — nothing owed, paid by phone,
 * the fee left to a payment link or not collected — gives the authorization up for good: refused for now or never
 * sent, it is the host's follow-up that sends it again, and this watch leaves the hold alone meanwhile: `settling`.) It is logged as a warning, not as the operator's. One reversal at a time as always:
 * the next goes only once the last one is answered (a 400 is a definite answer; an unknown outcome is recovery's, see
 * `settling`).
 *
 * The operator releases a hold by hand (a car let out without its exit: passback reset, {@link release}): the same run
 * as an expiry's, now — claimed, reversed in full by the expiry machine, closed with the reversal's outcome, a refusal
 * for now tried again after its wait, an unknown outcome left to recovery.
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
      /**
       * A hold taken at the end of its maximum stay, its car inside (HoldStore.outstayed), at `atMs` on the holds'
       * clock: recorded for the operator, since its exit may never come. Called inside the commit of the mark
       * ({@link inOneCommit}), whose transaction the record joins; again when the watch takes the hold again.
       */
      onOutstayed?: (hold: HoldRecord, atMs: number) => void;
      /** Runs `fn` in one synced journal transaction (what it writes commits together); `fn` as it is by default. */
      inOneCommit?: <T>(fn: () => T) => T;
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
    const wait = Math.min(delay, MAX_TIMER_DELAY_MS);
    const timer = setTimeout(() => void this.expire(hold.holdId), wait);
    timer.unref();
    this.timers.set(hold.holdId, timer);
    this.firesAt.set(hold.holdId, Date.now() + wait);
  }

  /** Whether the watch has a timer for the hold (unclaimed, waiting for its expiry). */
  watching(holdId: string): boolean {
    return this.timers.has(holdId);
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

  /**
   * Where an open hold stands (see {@link HoldStanding}); `claimed` the store's claim of it (an exit's or this
   * watch's). The one rule of which hold the operator may release.
   */
  standing(hold: HoldRecord, claimed: boolean): HoldStanding {
    if (claimed || this.actors.has(hold.holdId) || this.deps.settling(hold)) return 'settling';
    if (this.deps.refusedReversals(hold).length > 0) return 'releasing';
    return 'open';
  }

  /**
   * The operator's release of an open hold (its car let out by hand: the card may enter again, nothing is charged):
   * its reversal now, through the expiry's own run ({@link expire}) — journaled before it is sent, the hold closed in
   * the transaction of its outcome, a refusal for now tried again after its wait, an unknown outcome recovery's. Only
   * a hold nobody settles ({@link standing} `open`); otherwise nothing is sent.
   */
  release(holdId: string): HoldRelease {
    const stored = this.deps.store.get(holdId);
    if (stored === undefined) return { kind: 'not-found' };
    const standing = this.standing(stored, false);
    if (standing !== 'open') return { kind: standing };
    this.unwatch(holdId);
    const result = this.expire(holdId, true);
    // An exit claimed it in between (it gives it back under watch when it is done with it).
    return result === undefined ? { kind: 'settling' } : { kind: 'started', hold: stored, result };
  }

  /** Stops every timer and expiry machine (shutdown; the holds stay in the journal). */
  stop(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    this.firesAt.clear();
    for (const a of this.actors.values()) a.stop();
    this.actors.clear();
  }

  /**
   * A hold's expiry (its timer fired) or its release by the operator (`released`: reversed now, expired or not): claims
   * it and runs the expiry machine; the run's result, or undefined when none was started (not due yet, settled or
   * being settled, left to the operator).
   */
  private expire(holdId: string, released = false): Promise<HoldExpiryResult | undefined> | undefined {
    this.timers.delete(holdId);
    this.firesAt.delete(holdId);
    const { store, logger } = this.deps;
    const stored = store.get(holdId);
    if (!stored) return undefined;
    // Its last reversal refused for now: due after the wait that `watch` armed, expired or not.
    const reverseNow = released || this.laterWaitMs(stored) > 0;
    if (stored.expiresAtMs > this.deps.clock.now() && !reverseNow) {
      this.watch(stored);
      return undefined;
    }
    // A reversal of it not resolved yet: another would be a resend (DESIGN.md rule 2). Recovery's resolution decides.
    if (this.deps.settling(stored)) return undefined;
    // As many refused as the machine tries: another reversal would be refused as well (a hold watched again after each
    // late refusal would otherwise be reversed without end). Refusals that pass are not counted: see the class comment.
    const refused = this.deps.refusedReversals(stored).filter((reason) => !refusalPasses(reason));
    if (refused.length >= this.deps.settings.timing.maxResolutionAttempts) {
      this.leaveToOperator(stored, 'rejected', refused.at(-1));
      return undefined;
    }
    const hold = store.claimById(holdId);
    if (!hold) return undefined; // an exit has it
    // At the end of its maximum stay (not the operator's release: that car was let out) the car has not come out
    // through the exit: once its hold is released, its exit still finds the stay, owed (HoldStore.outstayed).
    const now = this.deps.clock.now();
    if (!released && hold.expiresAtMs <= now) {
      const atMs = Math.floor(now);
      const inOneCommit = this.deps.inOneCommit ?? (<T>(fn: () => T): T => fn());
      inOneCommit(() => {
        if (store.outstayed(holdId, atMs)) this.deps.onOutstayed?.(hold, atMs);
      });
    }
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
    return new Promise((resolve) => {
      actor.subscribe({
        complete: () => {
          // Stopped (the host's shutdown) rather than finished: the hold stays claimed until the next start frees it.
          if (actor.getSnapshot().status !== 'done') return resolve(undefined);
          this.actors.delete(holdId);
          const result = actor.getSnapshot().output as HoldExpiryResult;
          this.finish(hold, result, released);
          resolve(result);
        },
        error: (err: unknown) => {
          this.actors.delete(holdId);
          logger.error({ err, holdId }, 'hold expiry failed; the hold stays open');
          store.close(hold, 'returned');
          resolve({ holdId, outcome: 'failed' });
        },
      });
      actor.start();
    });
  }

  private finish(hold: HoldRecord, result: HoldExpiryResult, released: boolean): void {
    const { store, logger } = this.deps;
    if (result.outcome === 'reversed') {
      // Closed already by an approved reversal, in its outcome's transaction (src/host/payment-router.ts); this
      // covers a reversal settled otherwise (a resolution by recovery), and changes nothing when it is closed.
      store.close(hold, 'reversed');
      logger.info(
        { holdId: hold.holdId },
        released
          ? 'hold reversed: released by the operator'
          : 'hold reversed at its expiry (the maximum stay, or the card entered again)',
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
