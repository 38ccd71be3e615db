import { assign, enqueueActions, fromPromise, sendTo, setup } from 'xstate';
import { FlowEffectError, type ReceiptData, type TicketLookup } from './effects.js';
import type { FlowClock } from './effects.js';
import {
  emptyView,
  failureText,
  unsuccessfulTransaction,
  type FlowEvent,
  type FlowInput,
  type ViewContext,
} from './models.js';
import { dccReceiptLines } from './dcc.js';
import { commentsFor } from './services.js';
import type { FlowSettings } from './settings.js';
import { feeBetween, lostTicketFee } from './tariff.js';
import { transactionMachine, type TransactionResult } from './transaction.js';
import { payByLinkMachine, payByLinkState } from './pay-by-link.js';

/**
 * Pay station (kiosk or booth), unattended: ticket or plate → fee from the tariff (entry and exit times, grace period,
 * daily maximum; the lost-ticket fee) → Parking Sale with catLevel 2 (spec 001) → receipt. Refunds and voids are the
 * operator's: see `operatorMachine` (src/flows/operator.ts).
 */

export interface KioskContext extends ViewContext {
  settings: FlowSettings;
  clock: FlowClock;
  ticket: string | undefined;
  /** Minutes of the stay (undefined for a lost ticket). */
  stayMinutes: number | undefined;
  cardRefs: string[];
}

/** What a receipt of the kiosk says of the stay: the ticket, and its length when the ticket was not lost. */
function ticketLines(context: KioskContext): ReceiptData['lines'] {
  const lines = [{ label: 'Ticket', value: context.ticket ?? '' }];
  if (context.stayMinutes !== undefined) lines.push({ label: 'Stay', value: `${context.stayMinutes} min` });
  return lines;
}

export const kioskMachine = setup({
  types: {
    context: {} as KioskContext,
    input: {} as FlowInput,
    events: {} as FlowEvent,
  },
  actors: {
    transaction: transactionMachine,
    payByLink: payByLinkMachine,
    lookupTicket: fromPromise<TicketLookup, { ticket: string }>(() =>
      Promise.reject(
        new FlowEffectError('EFFECT_NOT_PROVIDED', 'effect lookupTicket was not provided by the host'),
      ),
    ),
  },
  actions: {
    issueReceipt: (_, _receipt: ReceiptData) => {},
    noteLink: assign((_, update: Partial<KioskContext>) => update),
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
    validTicket: ({ event }) =>
      event.type === 'ENTER_TICKET' &&
      typeof event.ticket === 'string' &&
      /^[A-Za-z0-9-]{1,32}$/.test(event.ticket),
    nothingToPay: ({ context }) => context.amountMinor === 0,
    payByPhoneOffered: ({ context }) =>
      context.settings.payByPhone !== undefined && (context.amountMinor ?? 0) > 0,
  },
}).createMachine({
  id: 'kiosk',
  context: ({ input }) => ({
    ...emptyView(),
    settings: input.settings,
    clock: input.clock,
    ticket: undefined,
    stayMinutes: undefined,
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
        assign(() => ({
          ...emptyView({ key: 'kiosk.insertTicket' }),
          ticket: undefined,
          stayMinutes: undefined,
          cardRefs: [],
        })),
      ],
      on: { START: 'enteringTicket' },
    },
    enteringTicket: {
      tags: ['enter-ticket'],
      on: {
        ENTER_TICKET: {
          guard: 'validTicket',
          target: 'lookingUp',
          actions: assign({ ticket: ({ event }) => event.ticket }),
        },
        LOST_TICKET: {
          target: 'confirming',
          actions: assign(({ context }) => ({
            ticket: 'LOST',
            stayMinutes: undefined,
            amountMinor: lostTicketFee(context.settings.tariff),
            message: { key: 'kiosk.lostTicketFee' },
          })),
        },
        CANCEL: 'idle',
      },
    },
    lookingUp: {
      tags: ['processing'],
      invoke: {
        id: 'lookupTicket',
        src: 'lookupTicket',
        input: ({ context }) => ({ ticket: context.ticket ?? '' }),
        onDone: [
          {
            guard: ({ event }) => event.output.found,
            target: 'quoted',
            actions: assign(({ context, event }) => {
              const found = event.output as TicketLookup & { found: true };
              const now = context.clock.now();
              // An entry in the future (clock skew between the entry gate and this station) counts as a stay of 0.
              const fee = feeBetween(context.settings.tariff, Math.min(found.enteredAtMs, now), now);
              return {
                stayMinutes: fee.stayMinutes,
                amountMinor: fee.feeMinor,
                message: { key: 'kiosk.parkingFee', params: { minutes: fee.stayMinutes } },
              };
            }),
          },
          {
            target: 'enteringTicket',
            actions: assign({
              message: { key: 'kiosk.ticketUnknown' },
              reason: 'TICKET_NOT_FOUND',
            }),
          },
        ],
        onError: {
          target: 'failed',
          actions: assign({ message: { key: 'kiosk.ticketLookupFailed' }, reason: 'TICKET_LOOKUP_FAILED' }),
        },
      },
    },
    quoted: {
      tags: ['processing'],
      always: [
        {
          // Within the grace period nothing is owed: no card, no sale.
          guard: 'nothingToPay',
          target: 'paid',
          actions: assign({ message: { key: 'kiosk.nothingDue' }, reason: 'NOTHING_DUE' }),
        },
        { target: 'confirming' },
      ],
    },
    confirming: {
      tags: ['confirm'],
      on: {
        CONFIRM: 'paying',
        PAY_BY_LINK: { guard: 'payByPhoneOffered', target: 'payingByLink' },
        CANCEL: 'idle',
      },
    },
    payingByLink: {
      // Pay by phone (issue 14): the ticket's fee as a payment link; paid → the ticket is paid, with a receipt of the
      // link payment; cancelled, timed out or no link → back to the choice between card and phone.
      ...payByLinkState({
        purpose: 'fee',
        link: (context: KioskContext) => ({
          reference: context.ticket ?? 'TICKET',
          amountMinor: context.amountMinor ?? 0,
        }),
        receiptLines: (context) => ticketLines(context),
        paid: { target: 'paid', note: () => ({ message: { key: 'kiosk.paid' }, reason: 'PAID_BY_LINK' }) },
        notPaid: 'confirming',
      }),
      on: { CANCEL: { actions: sendTo('payByLink', { type: 'CANCEL' }) } },
    },
    paying: {
      invoke: {
        id: 'transaction',
        src: 'transaction',
        input: ({ context }) => ({
          settings: context.settings,
          request: {
            service: 'sale' as const,
            comments: commentsFor('sale', context.settings),
            amountMinor: context.amountMinor ?? 0,
            read: { purpose: 'sale' as const, transactionType: '00' as const },
            includeEmvTags: false,
            authIndicator: '1' as const,
            acceptPartial: false,
            cancellable: true,
            offerDcc: true,
          },
        }),
        onDone: [
          {
            guard: ({ event }) => event.output.kind === 'approved',
            target: 'paid',
            actions: [
              { type: 'noteResult', params: ({ event }) => event.output },
              enqueueActions(({ context, event, enqueue }) => {
                const output = event.output as TransactionResult & { kind: 'approved' };
                const lines = [...ticketLines(context), ...dccReceiptLines(output.dcc)];
                enqueue({
                  type: 'issueReceipt',
                  params: {
                    service: 'sale',
                    comments: commentsFor('sale', context.settings),
                    amountMinor: context.amountMinor ?? 0,
                    currency: context.settings.currency,
                    ...(output.card !== undefined ? { maskedPan: output.card.maskedPan } : {}),
                    transactionId: output.transactionId,
                    ...(output.gatewayId !== undefined ? { gatewayId: output.gatewayId } : {}),
                    atMs: context.clock.now(),
                    lines,
                  },
                });
              }),
              assign({ message: { key: 'kiosk.paid' } }),
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
    paid: {
      tags: ['approved'],
      on: { DONE: 'idle', START: 'idle' },
      after: { resultScreen: 'idle' },
    },
    declined: {
      tags: ['declined'],
      // Another card, or the phone (a declined card is no dead end).
      on: {
        DONE: 'idle',
        START: 'idle',
        CONFIRM: 'paying',
        PAY_BY_LINK: { guard: 'payByPhoneOffered', target: 'payingByLink' },
      },
      after: { resultScreen: 'idle' },
    },
    failed: {
      tags: ['error'],
      on: { DONE: 'idle', START: 'idle' },
      after: { resultScreen: 'idle' },
    },
  },
});

export type KioskMachine = typeof kioskMachine;
