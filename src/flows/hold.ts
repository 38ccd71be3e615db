import { assign, setup } from 'xstate';
import { refusalPasses, reversalRefusalReleased } from '../vocabulary/services.js';
import type { FlowClock, HoldRecord } from './effects.js';
import { commentsFor } from './services.js';
import type { FlowSettings } from './settings.js';
import { transactionMachine, type TransactionResult } from './transaction.js';

/**
 * The scheduler of one open authorization hold (tap-and-go entry): at `hold.expiresAtMs` (entry +
 * tariff.tapAndGoMaxStayMinutes) the hold is reversed automatically (REVERSAL with the authorized amount), retried
 * when it did not stand until `maxResolutionAttempts` reversals of the hold were refused, this run's and the
 * `refusedBefore` of earlier ones — but never after an unknown outcome, which is recovery's, nor after a refusal that
 * says the authorization is released already (`released`: nothing is held, nothing to retry). A refusal that passes
 * (the vocabulary's `refusalPasses`, e.g. PROCESSOR_UNAVAILABLE) ends the run `later` without counting against the
 * attempts: the processor is down for a while, and the host's watch tries again after a wait that grows with each such
 * refusal (src/host/hold-watch.ts), rather than spending the attempts within seconds. The host starts one
 * actor per open hold (again after a restart, from its store) and stops it when `claimHold` hands the hold to an exit;
 * on output `reversed` or `released` it closes the hold and wipes its card read.
 */

export interface HoldExpiryInput {
  settings: FlowSettings;
  clock: FlowClock;
  hold: HoldRecord;
  /**
   * Reversals of this hold the gateway refused before this run (the host reads them from the journal), refusals that
   * pass left out: they count against `maxResolutionAttempts`, so that a hold watched again after each late refusal is
   * not reversed without end.
   */
  refusedBefore?: number;
  /**
   * Reverse at once rather than at the expiry: a reversal of the hold was sent already (its release is decided) and
   * refused for a reason that passes; the host's watch waited after that refusal.
   */
  reverseNow?: boolean;
}

export interface HoldExpiryResult {
  holdId: string;
  /**
   * `released`: the reversal was refused because nothing is held any more (reversed already, or settled: the
   * vocabulary's `reversalRefusalReleased`) — the hold is over as surely as after an approval. `later`: refused for a
   * reason that passes (the vocabulary's `refusalPasses`): the hold stands, and a reversal later may succeed.
   */
  outcome: 'reversed' | 'released' | 'later' | 'failed';
  /** transactionId of the last reversal sent. */
  transactionId?: string;
  /** How the last attempt ended when it failed (`unknown`: recovery resolves it; otherwise the operator must). */
  lastKind?: Exclude<TransactionResult['kind'], 'approved'>;
  /** Its reason, e.g. MISSING_FIELD. */
  reason?: string;
}

interface HoldExpiryContext extends HoldExpiryInput {
  attempts: number;
  lastTransactionId: string | undefined;
  outcome: HoldExpiryResult['outcome'];
  lastKind: HoldExpiryResult['lastKind'];
  reason: string | undefined;
}

/** What the context keeps of a reversal that did not succeed. */
function failure(
  output: TransactionResult,
): Pick<HoldExpiryContext, 'lastTransactionId' | 'lastKind' | 'reason'> {
  return {
    lastTransactionId: 'transactionId' in output ? output.transactionId : undefined,
    lastKind: output.kind === 'approved' ? undefined : output.kind,
    reason: 'reason' in output ? output.reason : undefined,
  };
}

export const holdExpiryMachine = setup({
  types: {
    context: {} as HoldExpiryContext,
    input: {} as HoldExpiryInput,
    output: {} as HoldExpiryResult,
  },
  actors: { transaction: transactionMachine },
  delays: {
    holdExpiry: ({ context }) =>
      context.reverseNow === true ? 0 : Math.max(0, context.hold.expiresAtMs - context.clock.now()),
    resolutionRetry: ({ context }) => context.settings.timing.resolutionRetryMs,
  },
}).createMachine({
  id: 'holdExpiry',
  context: ({ input }) => ({
    ...input,
    attempts: input.refusedBefore ?? 0,
    lastTransactionId: undefined,
    outcome: 'failed',
    lastKind: undefined,
    reason: undefined,
  }),
  initial: 'waiting',
  output: ({ context }) => ({
    holdId: context.hold.holdId,
    outcome: context.outcome,
    ...(context.lastTransactionId !== undefined ? { transactionId: context.lastTransactionId } : {}),
    ...(context.lastKind !== undefined ? { lastKind: context.lastKind } : {}),
    ...(context.reason !== undefined ? { reason: context.reason } : {}),
  }),
  states: {
    waiting: { after: { holdExpiry: 'reversing' } },
    reversing: {
      entry: assign({ attempts: ({ context }) => context.attempts + 1 }),
      invoke: {
        src: 'transaction',
        input: ({ context }) => ({
          // In the currency of the hold's authorization, whatever the terminal's is now (configured since).
          settings: { ...context.settings, currency: context.hold.currency },
          request: {
            service: 'reversal' as const,
            comments: commentsFor('reversal', context.settings),
            // spec 001, Reversal: the authorized amount (with increments: the total).
            amountMinor: context.hold.authorizedMinor,
            original: {
              gatewayId: context.hold.gatewayId,
              transactionId: context.hold.transactionId,
              service: 'preauth' as const,
            },
            cardRef: context.hold.cardRef,
            includeEmvTags: context.hold.includeEmvTags,
            acceptPartial: false,
            cancellable: false,
          },
        }),
        onDone: [
          {
            guard: ({ event }) => event.output.kind === 'approved',
            target: 'done',
            actions: assign(({ event }) => ({
              outcome: 'reversed' as const,
              lastTransactionId: 'transactionId' in event.output ? event.output.transactionId : undefined,
            })),
          },
          {
            // Refused because the authorization is released already (reversed by an earlier reversal, or settled):
            // done, not failed — another reversal is refused the same way, and the operator has nothing to release.
            guard: ({ event }) =>
              (event.output.kind === 'declined' || event.output.kind === 'rejected') &&
              reversalRefusalReleased(event.output.reason),
            target: 'done',
            actions: assign(({ event }) => ({ ...failure(event.output), outcome: 'released' as const })),
          },
          {
            // Refused for now (the processor is down for a while): not one of the attempts — those are for refusals
            // that repeat — and not retried within seconds either; the host's watch tries again after a growing wait.
            guard: ({ event }) =>
              (event.output.kind === 'declined' || event.output.kind === 'rejected') &&
              refusalPasses(event.output.reason),
            target: 'done',
            actions: assign(({ event }) => ({ ...failure(event.output), outcome: 'later' as const })),
          },
          {
            // An unknown outcome is not retried: the reversal may have gone through, and another before recovery's
            // resolution would be a resend without one (DESIGN.md rule 2); the host hands the hold back meanwhile and
            // no exit or expiry takes it until that resolution.
            guard: ({ context, event }) =>
              event.output.kind !== 'unknown' &&
              context.attempts < context.settings.timing.maxResolutionAttempts,
            target: 'retrying',
            actions: assign(({ event }) => failure(event.output)),
          },
          { target: 'done', actions: assign(({ event }) => failure(event.output)) },
        ],
      },
    },
    retrying: { after: { resolutionRetry: 'reversing' } },
    done: { type: 'final' },
  },
});

export type HoldExpiryMachine = typeof holdExpiryMachine;
