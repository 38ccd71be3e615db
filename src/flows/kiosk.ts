import { assign, enqueueActions, fromPromise, sendTo, setup } from 'xstate';
import { checkCustomerField, type CustomerField, type CustomerFieldProblem } from '../config/index.js';
import { FlowEffectError, type ReceiptData, type TicketLookup } from './effects.js';
import type { AltSaleRequest, AltSaleStarted } from './effects.js';
import type { FlowClock } from './effects.js';
import {
  anotherCardAfterDecline,
  cardAttemptView,
  earlierAttemptCleared,
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
import { feeAfterPayments, lostTicketFee } from './tariff.js';
import { isTicket } from '../vocabulary/tickets.js';
import { transactionMachine, type TransactionResult } from './transaction.js';
import { payByLinkMachine, payByLinkState, sessionReference } from './pay-by-link.js';

/**
 * Pay station (kiosk or booth), unattended: ticket or plate → fee from the tariff (entry and exit times, grace period,
 * daily maximum; the lost-ticket fee) → Parking Sale with catLevel 2 (spec 001) → receipt. Refunds and voids are the
 * operator's: see `operatorMachine` (src/flows/operator.ts).
 */

export interface KioskContext extends ViewContext {
  settings: FlowSettings;
  clock: FlowClock;
  /** The terminal's own clock ({@link FlowInput.wallClock}): the currency choice reads its offer's expiry on it. */
  wallClock: FlowClock;
  ticket: string | undefined;
  /** Minutes of the stay (undefined for a lost ticket). */
  stayMinutes: number | undefined;
  /** The ticket was paid before and nothing more is owed (what stands covers its fee: `feeAfterPayments`). */
  alreadyPaid: boolean;
  cardRefs: string[];
  /**
   * An alternative method being chosen (issue 14 item 5): its fields in keyboard order, the one asked for now, the
   * values accepted so far (personal data: kept only until the sale is sent or the customer leaves the method) and
   * why the last value was refused.
   */
  altEntry: AltEntry | undefined;
  /** The alternative-method sale left pending: the page where the customer pays and the ticket's reference. */
  altSale: AltPending | undefined;
}

/** The customer's details for an alternative method, field by field. */
export interface AltEntry {
  profile: number;
  label: string;
  fields: readonly CustomerField[];
  /** Index into `fields` of the field asked for now. */
  index: number;
  values: Partial<Record<CustomerField, string>>;
  problem?: CustomerFieldProblem;
  /**
   * How many values the entry refused so far: each refusal is an event of its own, which the screen says again even in
   * the same words (the same wrong value typed twice).
   */
  refusedValues: number;
}

/** An alternative-method sale PENDING: the customer pays on `paymentUrl`; it is confirmed later by status checks. */
export interface AltPending {
  saleId: number;
  label: string;
  paymentUrl: string;
  /** The ticket's reference, shown to the customer. */
  reference: string;
}

/** The screen's text while a field is asked for: what to type (the problem of a refused value is the view's). */
function altFieldMessage(entry: AltEntry): KioskContext['message'] {
  return { key: `alt.field.${entry.fields[entry.index] ?? 'email'}` as const };
}

/** The fee's text on the choice between the card and the other ways to pay. */
function feeMessage(context: KioskContext): KioskContext['message'] {
  return context.stayMinutes !== undefined
    ? { key: 'kiosk.parkingFee', params: { minutes: context.stayMinutes } }
    : { key: 'kiosk.lostTicketFee' };
}

/** The reference of an alternative-method sale: the ticket, or for a lost ticket one made of the time. */
function altReference(context: KioskContext): string {
  const ticket = context.ticket ?? 'LOST';
  return ticket === 'LOST' ? sessionReference('LOST', context.clock.now()) : ticket;
}

/** What a receipt of the kiosk says of the stay: the ticket, and its length when the ticket was not lost. */
function ticketLines(context: KioskContext): ReceiptData['lines'] {
  const lines = [{ label: 'Ticket', value: context.ticket ?? '' }];
  if (context.stayMinutes !== undefined) lines.push({ label: 'Stay', value: `${context.stayMinutes} min` });
  return lines;
}

/**
 * Pay by phone (issue 14): the ticket's fee as a payment link; paid → the ticket is paid, with a receipt of the link
 * payment; cancelled, timed out or no link → back to the choice between card and phone.
 */
const payingByPhone = payByLinkState({
  purpose: 'fee',
  link: (context: KioskContext) => ({
    reference: context.ticket ?? 'TICKET',
    amountMinor: context.amountMinor ?? 0,
  }),
  receiptLines: (context) => ticketLines(context),
  paid: { target: 'paid', note: () => ({ message: { key: 'kiosk.paid' }, reason: 'PAID_BY_LINK' }) },
  notPaid: 'confirming',
});

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
    startAltSale: fromPromise<AltSaleStarted, AltSaleRequest>(() =>
      Promise.reject(
        new FlowEffectError('EFFECT_NOT_PROVIDED', 'effect startAltSale was not provided by the host'),
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
    chooseAltMethod: assign(({ context, event }) => {
      const method = (context.settings.altMethods ?? []).find(
        (m) => event.type === 'ALT_METHOD' && m.profile === event.profile,
      );
      const entry: AltEntry = {
        profile: method?.profile ?? 0,
        label: method?.label ?? '',
        fields: method?.fields ?? [],
        index: 0,
        values: {},
        refusedValues: 0,
      };
      return { altEntry: entry, message: altFieldMessage(entry), ...earlierAttemptCleared() };
    }),
    /** The value of the field asked for: refused with its problem, or kept and the next field asked for. */
    enterAltField: assign(({ context, event }) => {
      const entry = context.altEntry;
      if (entry === undefined || event.type !== 'ALT_FIELD') return {};
      const field = entry.fields[entry.index] ?? 'email';
      const problem = checkCustomerField(field, event.value);
      const next: AltEntry =
        problem !== undefined
          ? { ...entry, problem, refusedValues: entry.refusedValues + 1 }
          : {
              profile: entry.profile,
              label: entry.label,
              fields: entry.fields,
              index: entry.index + 1,
              values: { ...entry.values, [field]: event.value.trim() },
              refusedValues: entry.refusedValues,
            };
      return { altEntry: next, message: altFieldMessage(next) };
    }),
    /** The customer's details are dropped as soon as they are not needed (sent, or the method left). */
    forgetAltEntry: assign(({ context }) => ({ altEntry: undefined, message: feeMessage(context) })),
  },
  delays: {
    resultScreen: ({ context }) => context.settings.timing.resultScreenMs,
    /** The pending sale's QR code stays long enough to be scanned, then the customer may leave (Done ends it). */
    altPendingScreen: ({ context }) => context.settings.timing.resultScreenMs * 12,
  },
  guards: {
    validTicket: ({ event }) => event.type === 'ENTER_TICKET' && isTicket(event.ticket),
    nothingToPay: ({ context }) => context.amountMinor === 0,
    payByPhoneOffered: ({ context }) =>
      context.settings.payByPhone !== undefined && (context.amountMinor ?? 0) > 0,
    altMethodOffered: ({ context, event }) =>
      event.type === 'ALT_METHOD' &&
      (context.amountMinor ?? 0) > 0 &&
      (context.settings.altMethods ?? []).some((m) => m.profile === event.profile),
    /** Every field the method asks for has a value that passed its check. */
    altEntryComplete: ({ context }) =>
      context.altEntry !== undefined && context.altEntry.index >= context.altEntry.fields.length,
  },
}).createMachine({
  id: 'kiosk',
  context: ({ input }) => ({
    ...emptyView(),
    settings: input.settings,
    clock: input.clock,
    wallClock: input.wallClock ?? input.clock,
    ticket: undefined,
    stayMinutes: undefined,
    alreadyPaid: false,
    cardRefs: [],
    altEntry: undefined,
    altSale: undefined,
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
          alreadyPaid: false,
          cardRefs: [],
          altEntry: undefined,
          altSale: undefined,
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
            // A payment of the ticket may have gone through (its sale's outcome is not known yet): no fee and no card
            // until recovery has decided, or the customer may pay twice (`TicketLookup.paymentUnresolved`).
            guard: ({ event }) => event.output.found && event.output.paymentUnresolved === true,
            target: 'failed',
            actions: assign({
              message: { key: 'kiosk.paymentBeingChecked' },
              reason: 'PAYMENT_BEING_CHECKED',
            }),
          },
          {
            guard: ({ event }) => event.output.found,
            target: 'quoted',
            actions: assign(({ context, event }) => {
              const found = event.output as TicketLookup & { found: true };
              const now = context.clock.now();
              // An entry in the future (clock skew between the entry gate and this station) counts as a stay of 0.
              // A ticket paid before owes, within the grace period after its payment, what the payment's fee is not
              // covered by what stands of it, then the whole stay less what stands paid (the host reads what stands as
              // the operator desk does).
              const fee = feeAfterPayments(
                context.settings.tariff,
                Math.min(found.enteredAtMs, now),
                now,
                found.paid,
              );
              return {
                stayMinutes: fee.stayMinutes,
                amountMinor: fee.feeMinor,
                alreadyPaid: fee.alreadyPaid,
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
          // A ticket paid before, nothing more owed: told so, and the exit opens as for a free stay (no sale).
          guard: ({ context }) => context.amountMinor === 0 && context.alreadyPaid,
          target: 'paid',
          actions: assign({
            message: { key: 'kiosk.alreadyPaid' },
            reason: 'ALREADY_PAID',
            titleKey: 'screen.nothingDue.title',
          }),
        },
        {
          // Within the grace period nothing is owed: no card, no sale — and no "Approved" title: nothing was approved.
          guard: 'nothingToPay',
          target: 'paid',
          actions: assign({
            message: { key: 'kiosk.nothingDue' },
            reason: 'NOTHING_DUE',
            titleKey: 'screen.nothingDue.title',
          }),
        },
        { target: 'confirming' },
      ],
    },
    confirming: {
      tags: ['confirm'],
      on: {
        CONFIRM: 'paying',
        PAY_BY_LINK: { guard: 'payByPhoneOffered', target: 'payingByLink' },
        ALT_METHOD: { guard: 'altMethodOffered', target: 'altDetails', actions: 'chooseAltMethod' },
        CANCEL: 'idle',
      },
    },
    altDetails: {
      // Alternative method (spec 001; issue 14 item 5): the fields the profile asks for, one screen each, each value
      // checked as the desk checks it (`checkCustomerField`); Cancel goes back to the choice and forgets them.
      tags: ['alt-details'],
      always: { guard: 'altEntryComplete', target: 'altStarting' },
      on: {
        ALT_FIELD: { actions: 'enterAltField' },
        CANCEL: { target: 'confirming', actions: 'forgetAltEntry' },
      },
    },
    altStarting: {
      // AP_SALE is sent once: no cancel while it is out (the host journals it before it is sent).
      tags: ['processing'],
      invoke: {
        id: 'startAltSale',
        src: 'startAltSale',
        input: ({ context }): AltSaleRequest => ({
          profile: context.altEntry?.profile ?? 0,
          reference: altReference(context),
          amountMinor: context.amountMinor ?? 0,
          currency: context.settings.currency,
          customer: context.altEntry?.values ?? {},
        }),
        onDone: [
          {
            guard: ({ event }) => event.output.kind === 'pending',
            target: 'altPending',
            actions: assign(({ context, event }) => {
              const started = event.output as AltSaleStarted & { kind: 'pending' };
              const label = context.altEntry?.label ?? '';
              return {
                altEntry: undefined,
                altSale: {
                  saleId: started.saleId,
                  label,
                  paymentUrl: started.paymentUrl,
                  reference: altReference(context),
                },
                message: { key: 'alt.pending', params: { method: label } },
                reason: 'PAYMENT_PENDING',
              };
            }),
          },
          {
            target: 'confirming',
            actions: assign(({ event }) => ({
              altEntry: undefined,
              message: { key: 'alt.failed' },
              reason: event.output.kind === 'failed' ? event.output.reason : 'ALT_FAILED',
            })),
          },
        ],
        onError: {
          target: 'confirming',
          actions: assign(({ event }) => {
            const code = (event.error as { code?: unknown } | undefined)?.code;
            return {
              altEntry: undefined,
              message: { key: 'alt.failed' },
              reason: typeof code === 'string' ? code : 'ALT_FAILED',
            };
          }),
        },
      },
    },
    altPending: {
      // The ticket is recorded as payment pending by the method (the journal's `alt_sales` row under the ticket's
      // reference): the customer may leave; the host's status checks confirm it later.
      tags: ['alt-pending'],
      on: { DONE: 'idle', START: 'idle' },
      after: { altPendingScreen: 'idle' },
    },
    payingByLink: {
      ...payingByPhone,
      // After a declined card: neither on the phone's screens nor on their approval is that card shown.
      entry: [{ type: 'noteLink', params: earlierAttemptCleared() }, payingByPhone.entry],
      on: { CANCEL: { actions: sendTo('payByLink', { type: 'CANCEL' }) } },
    },
    paying: {
      // Entered from the fee, or again with another card after a decline.
      entry: assign(({ context }) => cardAttemptView(feeMessage(context))),
      invoke: {
        id: 'transaction',
        src: 'transaction',
        input: ({ context }) => ({
          settings: context.settings,
          // The currency choice reads its offer's expiry on the terminal's own clock.
          wallClock: context.wallClock,
          request: {
            service: 'sale' as const,
            comments: commentsFor('sale', context.settings),
            amountMinor: context.amountMinor ?? 0,
            read: { purpose: 'sale' as const, transactionType: '00' as const, swipeFallback: true },
            includeEmvTags: false,
            acceptPartial: false,
            cancellable: true,
            offerDcc: true,
            // The ticket the sale pays (not a lost one): its approval records it paid (ServiceRequest.ticket).
            ...(context.ticket !== undefined && context.stayMinutes !== undefined
              ? { ticket: context.ticket }
              : {}),
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
        CONFIRM: anotherCardAfterDecline('paying'),
        PAY_BY_LINK: { guard: 'payByPhoneOffered', target: 'payingByLink' },
        ALT_METHOD: { guard: 'altMethodOffered', target: 'altDetails', actions: 'chooseAltMethod' },
      },
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

export type KioskMachine = typeof kioskMachine;
