import { assign, enqueueActions, sendTo, setup } from 'xstate';
import { MAX_MINOR } from '../money/index.js';
import type { FlowClock, ReceiptData } from './effects.js';
import {
  anotherCardAfterDecline,
  cardAttemptView,
  emptyView,
  failureText,
  presentCardAgain,
  unsuccessfulTransaction,
  type FlowEvent,
  type FlowInput,
  type ViewContext,
} from './models.js';
import { dccReceiptLines } from './dcc.js';
import { commentsFor } from './services.js';
import type { FlowSettings } from './settings.js';
import { transactionMachine, type TransactionResult } from './transaction.js';

/**
 * Attended mobile terminal: the attendant enters the amount → Parking Sale with catLevel 6 and the attended fields of
 * spec 001 (the host builds them from catLevel 6). CREDIT starts a standalone credit (Parking Standalone Credit, card
 * present, EMV transaction type 20), unless `settings.standaloneCredit` is false; the host sends it CREDIT only once
 * the operator PIN is checked (src/host/terminal-host.ts, `OperatorDesk.admitCredit`): the machine never sees the PIN.
 * Linked refunds go through `operatorMachine`.
 */

export interface AttendedContext extends ViewContext {
  settings: FlowSettings;
  clock: FlowClock;
  /** The terminal's own clock ({@link FlowInput.wallClock}): the currency choice reads its offer's expiry on it. */
  wallClock: FlowClock;
  mode: 'sale' | 'credit';
  cardRefs: string[];
}

export const attendedMachine = setup({
  types: {
    context: {} as AttendedContext,
    input: {} as FlowInput,
    events: {} as FlowEvent,
  },
  actors: { transaction: transactionMachine },
  actions: {
    issueReceipt: (_, _receipt: ReceiptData) => {},
    releaseCard: (_, _params: { cardRef: string }) => {},
    noteResult: assign(({ context }, result: TransactionResult) => ({
      ...failureText(result),
      cardRefs: result.card !== undefined ? [...context.cardRefs, result.card.cardRef] : context.cardRefs,
      maskedPan: result.card?.maskedPan ?? context.maskedPan,
    })),
  },
  delays: {
    resultScreen: ({ context }) => context.settings.timing.resultScreenMs,
  },
  guards: {
    validAmount: ({ event }) =>
      event.type === 'ENTER_AMOUNT' &&
      Number.isSafeInteger(event.minor) &&
      event.minor > 0 &&
      event.minor <= MAX_MINOR,
  },
}).createMachine({
  id: 'attended',
  context: ({ input }) => ({
    ...emptyView(),
    settings: input.settings,
    clock: input.clock,
    wallClock: input.wallClock ?? input.clock,
    mode: 'sale',
    cardRefs: [],
  }),
  initial: 'idle',
  states: {
    idle: {
      tags: ['idle'],
      entry: [
        enqueueActions(({ context, enqueue }) => {
          for (const cardRef of context.cardRefs) enqueue({ type: 'releaseCard', params: { cardRef } });
        }),
        assign(() => ({ ...emptyView({ key: 'attended.ready' }), mode: 'sale' as const, cardRefs: [] })),
      ],
      on: {
        START: {
          target: 'enteringAmount',
          actions: assign({ mode: 'sale' as const, message: { key: 'attended.enterAmount' } }),
        },
        CREDIT: {
          guard: ({ context }) => context.settings.standaloneCredit !== false,
          target: 'enteringAmount',
          actions: assign({ mode: 'credit' as const, message: { key: 'attended.enterCreditAmount' } }),
        },
      },
    },
    enteringAmount: {
      tags: ['enter-amount'],
      on: {
        ENTER_AMOUNT: {
          guard: 'validAmount',
          target: 'confirming',
          actions: assign({
            amountMinor: ({ event }) => event.minor,
            message: ({ context }) => ({
              key: context.mode === 'sale' ? 'attended.confirmSale' : 'attended.confirmCredit',
            }),
          }),
        },
        CANCEL: 'idle',
      },
    },
    confirming: {
      tags: ['confirm'],
      on: { CONFIRM: 'paying', CANCEL: 'idle' },
    },
    paying: {
      // Entered from the confirmation, or again with another card after a decline.
      entry: assign(({ context }) =>
        cardAttemptView({ key: context.mode === 'sale' ? 'attended.confirmSale' : 'attended.confirmCredit' }),
      ),
      invoke: {
        id: 'transaction',
        src: 'transaction',
        input: ({ context }) => {
          const service = context.mode === 'sale' ? ('sale' as const) : ('credit' as const);
          return {
            settings: context.settings,
            // The currency choice reads its offer's expiry on the terminal's own clock.
            wallClock: context.wallClock,
            request: {
              service,
              comments: commentsFor(service, context.settings),
              amountMinor: context.amountMinor ?? 0,
              read: {
                purpose: service,
                transactionType: service === 'sale' ? ('00' as const) : ('20' as const),
                swipeFallback: true,
              },
              includeEmvTags: false,
              acceptPartial: false,
              cancellable: true,
              offerDcc: service === 'sale',
            },
          };
        },
        onDone: [
          {
            guard: ({ event }) => event.output.kind === 'approved',
            target: 'approved',
            actions: [
              { type: 'noteResult', params: ({ event }) => event.output },
              enqueueActions(({ context, event, enqueue }) => {
                const output = event.output as TransactionResult & { kind: 'approved' };
                const service = context.mode === 'sale' ? ('sale' as const) : ('credit' as const);
                enqueue({
                  type: 'issueReceipt',
                  params: {
                    service,
                    comments: commentsFor(service, context.settings),
                    // What the payment moved as the gateway answered it (a credit's `creditAmount` may be less than
                    // was asked; a sale approved for less is undone), as the journal records it and reprints it.
                    amountMinor: output.authorizedMinor,
                    currency: context.settings.currency,
                    ...(output.card !== undefined ? { maskedPan: output.card.maskedPan } : {}),
                    transactionId: output.transactionId,
                    ...(output.gatewayId !== undefined ? { gatewayId: output.gatewayId } : {}),
                    atMs: context.clock.now(),
                    lines: dccReceiptLines(output.dcc),
                  },
                });
              }),
              assign(({ context, event }) => ({
                amountMinor: (event.output as TransactionResult & { kind: 'approved' }).authorizedMinor,
                message: { key: context.mode === 'sale' ? 'attended.paid' : 'attended.credited' },
              })),
            ],
          },
          ...unsuccessfulTransaction(),
        ],
      },
      on: {
        CANCEL: { actions: sendTo('transaction', { type: 'CANCEL' }) },
        // The currency choice belongs to the transaction (its `choose-currency` state); it ignores it elsewhere.
        CHOOSE_CURRENCY: {
          actions: sendTo('transaction', ({ event }) => ({
            type: 'CHOOSE_CURRENCY' as const,
            currency: event.currency,
          })),
        },
      },
    },
    approved: {
      tags: ['approved'],
      on: { DONE: 'idle', START: 'idle' },
      after: { resultScreen: 'idle' },
    },
    declined: {
      tags: ['declined'],
      on: { DONE: 'idle', START: 'idle', CONFIRM: anotherCardAfterDecline('paying') },
      after: { resultScreen: 'idle' },
    },
    failed: {
      tags: ['error'],
      on: {
        DONE: 'idle',
        START: 'idle',
        // A card presented the wrong way (tapped where it must be inserted, two cards, taken away too soon): again.
        CONFIRM: presentCardAgain('paying'),
      },
      after: { resultScreen: 'idle' },
    },
  },
});

export type AttendedMachine = typeof attendedMachine;
