import { assign, enqueueActions, fromPromise, sendTo, setup } from 'xstate';
import {
  FlowEffectError,
  type CardSummary,
  type EntryStay,
  type FlowClock,
  type HoldClaim,
  type HoldRecord,
  type HoldResolution,
  type ReadCardInput,
  type ReceiptData,
} from './effects.js';
import {
  emptyView,
  failureText,
  unsuccessfulTransaction,
  type FlowEvent,
  type FlowInput,
  type ReaderInterfaces,
  type ViewContext,
} from './models.js';
import { commentsFor } from './services.js';
import { followOnSettings, type FlowSettings } from './settings.js';
import { feeBetween, stayMinutesBetween } from './tariff.js';
import { capturedBy, readFailure, transactionMachine, type TransactionResult } from './transaction.js';
import { payByLinkMachine, payByLinkState, sessionReference } from './pay-by-link.js';

/**
 * Tap-and-go gate (spec 001: account verification before entry, pre-authorize on entry, capture on exit, incremental
 * authorization). Entry: Parking AVR (zero amount) → Parking Auth for tariff.tapAndGoHoldMinor → `openHold` (the host
 * persists the hold and watches its expiry with `holdExpiryMachine`). One stay per card (anti-passback,
 * tariff.tapAndGoOneStayPerCard, default on): after the AVR, which moves no money, the card is looked up
 * (`stayAtEntry`, by the rule `claimHold` follows) and a card whose stay is open — a car that entered with it is inside —
 * is refused (`CARD_ALREADY_INSIDE`) before any pre-authorization: no second hold that neither exit could tell from its
 * own; a hold someone else is settling does not keep the card out. Exit: the card is read, matched to its hold by
 * the keyed fingerprint (`claimHold`), and charged the fee: an incremental authorization first when the fee exceeds
 * the hold, then Parking Capture (or Parking Capture Less Than Auth); a REVERSAL when nothing is owed, after which the
 * exit opens whatever its outcome (one that does not stand leaves the hold to its expiry watch). A hold someone
 * else is settling (the expiry's reversal, or a reversal whose outcome recovery has yet to resolve) is not the exit's:
 * it charges nothing and sends the customer to the operator. A card without an open hold whose exit was captured within
 * the grace period (tariff.graceMinutes, `paidExitWindowMs`) is shown its exit as paid again, with nothing charged: a
 * restart between the capture and the gate's opening must not leave a paying customer behind a shut gate. Like any
 * paid exit it shows the amount captured and issues that capture's receipt (from the journal, through `claimHold`).
 * A stay that outlasted its hold (reversed by the expiry watch at the maximum stay while the car was inside:
 * `outstayed`) is not "no entry": its fee, from the entry, is charged by a Parking Sale on the card presented at the exit
 * (`exitSellingStay`), which names the stay so that it is never sold twice, and the operator is told (`stayOutstayed`).
 *
 * Pay by phone at the exit (config `links.payByPhone.models` with `tap-and-go`; issue 14): with a fee owed, the exit
 * asks first — the card tapped (CONFIRM: the capture as above) or the phone (PAY_BY_LINK: a payment link for the fee;
 * once paid, the entry's hold is reversed in full through the same transaction actor and the exit opens). The link
 * names the hold, and its payment is journaled on the hold (`paid-by-link`): a restart between the payment and the
 * reversal leaves a stay that is never charged again — the card's next exit releases the hold and opens as paid, or
 * only opens when the expiry watch (the hold is due from the payment on) released it or is releasing it. Pay later
 * (config `links.payLater`): a capture that did not stand (declined or refused) leaves the fee as a printed and shown
 * payment link, after the hold is reversed in full (a reversal that does not stand leaves it to its expiry watch).
 *
 * Closing a hold: the host closes it in the same transaction as the outcome of the capture or reversal that settles
 * its authorization (so a crash right after that outcome cannot leave it open to a second exit or to its expiry);
 * the machine's `closeHold` with `captured` or `reversed` then finds it closed and changes nothing. `returned` is the
 * machine's alone: the exit did not settle the hold and gives it back to the expiry watch.
 */

export interface TapAndGoContext extends ViewContext {
  settings: FlowSettings;
  clock: FlowClock;
  /** Card read at the entry (AVR and pre-authorization use the same read). */
  card: CardSummary | undefined;
  /** transactionId of the entry's verification (AVR), once approved: what a refused entry is recorded against. */
  verificationId: string | undefined;
  hold: HoldRecord | undefined;
  /** Fee of the stay at the exit, minor units. */
  feeMinor: number;
  /** Epoch milliseconds the exit's fee runs to (its claim of the hold): the end of the stay its receipt states. */
  exitAtMs: number | undefined;
  /** Card reads to release at idle (never the one an open hold keeps: the host wipes that on closeHold). */
  cardRefs: string[];
}

/**
 * The gate's reader: contactless only (its customer is asked to tap in and out, `tapAndGo.tapCard`), no slot to insert
 * a card in. Its failed reads are told in those words (failureText): a failed tap asks for the card tapped again, not
 * inserted, and a card that must be inserted (CARD_USE_CONTACT) for another card or the operator.
 */
const GATE_READER: ReaderInterfaces = { tapOnly: true };

const notProvided = (name: string) => () =>
  Promise.reject(new FlowEffectError('EFFECT_NOT_PROVIDED', `effect ${name} was not provided by the host`));

function requireHold(context: TapAndGoContext): HoldRecord {
  if (context.hold === undefined) throw new RangeError('no hold in context');
  return context.hold;
}

function captureAmount(context: TapAndGoContext): number {
  return Math.min(context.feeMinor, requireHold(context).authorizedMinor);
}

function holdOriginal(hold: HoldRecord) {
  return { gatewayId: hold.gatewayId, transactionId: hold.transactionId, service: 'preauth' as const };
}

/**
 * The settings a follow-on of the hold (increment, capture, reversal) is sent with: in the currency of its
 * authorization (the hold's, as the journal records it), never the one configured since.
 */
function holdSettings(context: TapAndGoContext): FlowSettings {
  return followOnSettings(context.settings, requireHold(context).currency);
}

/**
 * Whether the tariff can price the stay of `hold`: the tariff is in the configured currency, and a hold authorized in
 * another (the configuration changed while the car was in) would be charged a fee converted by nobody — in the wrong
 * currency, or a wrong amount. Such a fee is not computable: the hold is released and the stay left to the operator.
 */
function tariffPrices(settings: FlowSettings, hold: HoldRecord): boolean {
  return hold.currency === settings.currency;
}

/**
 * How long after its capture a card's paid exit opens again, charging nothing (claimHold's `recentCaptureMs`): the
 * tariff's grace period, the time a paid stay has to leave — as at the pay station, where a ticket paid within it owes
 * nothing more (feeAfterPayments). Time enough for a restart between the capture and the gate's opening, and no more:
 * the exit cannot tell one car from another, so for as long as it opens for the card that paid, any car does — one
 * that entered with another card would leave unpaid, its hold reversed at its expiry. Also what a new card fingerprint
 * key would lose of a recent capture (src/host/keys.ts).
 */
export function paidExitWindowMs(settings: Pick<FlowSettings, 'tariff'>): number {
  return settings.tariff.graceMinutes * 60_000;
}

/**
 * The link for the exit's fee, its reference the time of the entry; it names the hold, so that its payment pays that
 * stay durably (`paid-by-link` at the next exit of the card, after a restart too).
 */
function gateLink(context: TapAndGoContext) {
  const hold = requireHold(context);
  return {
    reference: sessionReference('GATE', hold.enteredAtMs),
    amountMinor: context.feeMinor,
    holdId: hold.holdId,
  };
}

/**
 * What a receipt of an exit says of the stay (kiosk.md §3: the paid duration): the model, and the stay from the
 * entry to `exitAtMs`, in whole minutes begun, as the tariff counts it (`feeBetween`).
 */
function exitLines(hold: HoldRecord | undefined, exitAtMs: number): ReceiptData['lines'] {
  const lines = [{ label: 'Parking', value: 'Tap-and-go' }];
  if (hold !== undefined)
    lines.push({
      label: 'Stay',
      value: `${stayMinutesBetween(Math.min(hold.enteredAtMs, exitAtMs), exitAtMs)} min`,
    });
  return lines;
}

/** The lines of the receipt of this exit's payment (by card or by phone). */
function exitReceiptLines(context: TapAndGoContext): ReceiptData['lines'] {
  return exitLines(context.hold, context.exitAtMs ?? context.clock.now());
}

/**
 * The receipt of a paid exit: the capture that paid the stay, the card as the hold knows it (masked). One text for the
 * exit's own capture and for an exit shown as paid again (`ALREADY_PAID`).
 */
function exitReceipt(
  settings: FlowSettings,
  hold: HoldRecord,
  capture: {
    transactionId: string;
    gatewayId?: string;
    /** What the capture took (the gateway may take less than was asked). */
    amountMinor: number;
    /** What the capture asked for, when it differs: the capture's comments were sent for it. */
    askedMinor?: number;
    currency: string;
    /** The authorization's total when it was captured (increments included): the capture's comments follow it. */
    authorizedMinor: number;
    atMs: number;
    /** What the capture's fee ran to (the exit that made it). */
    exitAtMs: number;
  },
): ReceiptData {
  return {
    service: 'capture',
    comments: commentsFor('capture', settings, {
      amountMinor: capture.askedMinor ?? capture.amountMinor,
      authorizedMinor: capture.authorizedMinor,
    }),
    amountMinor: capture.amountMinor,
    currency: capture.currency,
    maskedPan: hold.maskedPan,
    transactionId: capture.transactionId,
    ...(capture.gatewayId !== undefined ? { gatewayId: capture.gatewayId } : {}),
    atMs: capture.atMs,
    lines: exitLines(hold, capture.exitAtMs),
  };
}

/**
 * The reversal of the whole hold (spec 001, Reversal: the authorized amount, with increments the new total). Every one
 * the gate sends gives the authorization up for good (`releases`): the entry's hold the host could not store, and the
 * exit's release of a hold whose stay is over — nothing owed, paid by phone, the fee left to a payment link, not
 * collected or not computable. So one that never reached the gateway (unreachable, credentials refused unprocessed) or
 * was refused for now is the host's to send again, as a durable follow-up written with its outcome
 * (`ServiceRequest.releases`), by which the hold is being settled meanwhile: no exit charges it and the card may enter
 * again. The expiry watch sends again only the refusals the journal holds, and would leave a reversal that never left
 * until the hold's expiry, with the card kept out as if its car were still inside.
 */
function holdReversal(context: TapAndGoContext) {
  const hold = requireHold(context);
  return {
    settings: holdSettings(context),
    request: {
      service: 'reversal' as const,
      comments: commentsFor('reversal', context.settings),
      amountMinor: hold.authorizedMinor,
      original: holdOriginal(hold),
      cardRef: hold.cardRef,
      includeEmvTags: hold.includeEmvTags,
      acceptPartial: false,
      cancellable: false,
      releases: true,
    },
  };
}

/**
 * The hold closed after its full reversal: reversed if the reversal stood (the host closed it already with the
 * reversal's outcome); otherwise returned, left to its expiry watch, which reverses it again.
 */
const closeReleasedHold = {
  type: 'closeHold' as const,
  params: ({ context, event }: { context: TapAndGoContext; event: { output: TransactionResult } }) => ({
    hold: requireHold(context),
    resolution: event.output.kind === 'approved' ? ('reversed' as const) : ('returned' as const),
  }),
};

/** A state that releases the whole hold (`holdReversal`) and goes on to `target` whatever the reversal's outcome. */
function releasingHold(target: string) {
  return {
    tags: ['processing'],
    invoke: {
      id: 'transaction' as const,
      src: 'transaction' as const,
      input: ({ context }: { context: TapAndGoContext }) => holdReversal(context),
      onDone: { target, actions: closeReleasedHold },
    },
  };
}

/** The card the entry's verification (AVR) read, and its approval: kept for the lookup and the pre-authorization. */
function verifiedCard(context: TapAndGoContext, result: TransactionResult): Partial<TapAndGoContext> {
  const card = result.card;
  return {
    card,
    maskedPan: card?.maskedPan,
    ...(result.kind === 'approved' ? { verificationId: result.transactionId } : {}),
    // Released at idle unless an open hold takes it over (openingHold).
    cardRefs: card !== undefined ? [...context.cardRefs, card.cardRef] : context.cardRefs,
  };
}

export const tapAndGoMachine = setup({
  types: {
    context: {} as TapAndGoContext,
    input: {} as FlowInput,
    events: {} as FlowEvent,
  },
  actors: {
    transaction: transactionMachine,
    payByLink: payByLinkMachine,
    readCard: fromPromise<CardSummary, ReadCardInput>(notProvided('readCard')),
    openHold: fromPromise<void, HoldRecord>(notProvided('openHold')),
    claimHold: fromPromise<HoldClaim, { fingerprint: string; recentCaptureMs: number }>(
      notProvided('claimHold'),
    ),
    stayAtEntry: fromPromise<EntryStay, { fingerprint: string }>(notProvided('stayAtEntry')),
  },
  actions: {
    issueReceipt: (_, _receipt: ReceiptData) => {},
    noteLink: assign((_, update: Partial<TapAndGoContext>) => update),
    releaseCard: (_, _params: { cardRef: string }) => {},
    closeHold: (_, _params: { hold: HoldRecord; resolution: HoldResolution }) => {},
    feeNotComputable: (_, _params: { hold: HoldRecord; feeMinor: number; feeCurrency: string }) => {},
    entryRefused: (
      _,
      _params: { reason: 'CARD_ALREADY_INSIDE'; holdId: string; transactionId: string },
    ) => {},
    stayOutstayed: (
      _,
      _params: { hold: HoldRecord; feeMinor: number; sold: boolean; transactionId?: string; reason?: string },
    ) => {},
    noteResult: assign(({ context }, result: TransactionResult) => ({
      ...failureText(result, GATE_READER),
      cardRefs: result.card !== undefined ? [...context.cardRefs, result.card.cardRef] : context.cardRefs,
      maskedPan: result.card?.maskedPan ?? context.maskedPan,
    })),
  },
  delays: {
    resultScreen: ({ context }) => context.settings.timing.resultScreenMs,
    readTimeout: ({ context }) => context.settings.timing.readTimeoutMs,
  },
  guards: {
    nothingOwed: ({ context }) => context.feeMinor === 0,
    phoneOffered: ({ context }) => context.settings.payByPhone !== undefined && context.feeMinor > 0,
    payLater: ({ context }) => context.settings.payLater !== undefined && context.feeMinor > 0,
    feeAboveHold: ({ context }) => context.feeMinor > requireHold(context).authorizedMinor,
    oneStayPerCard: ({ context }) => context.settings.tapAndGoOneStayPerCard,
  },
}).createMachine({
  id: 'tapAndGo',
  context: ({ input }) => ({
    ...emptyView(),
    settings: input.settings,
    clock: input.clock,
    card: undefined,
    verificationId: undefined,
    hold: undefined,
    feeMinor: 0,
    exitAtMs: undefined,
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
          ...emptyView({ key: 'tapAndGo.tapCard' }),
          card: undefined,
          verificationId: undefined,
          hold: undefined,
          feeMinor: 0,
          exitAtMs: undefined,
          cardRefs: [],
        })),
      ],
      on: { TAP_ENTRY: 'entryVerifying', TAP_EXIT: 'exitReading' },
    },
    entryVerifying: {
      invoke: {
        id: 'transaction',
        src: 'transaction',
        input: ({ context }) => ({
          settings: context.settings,
          request: {
            service: 'avr' as const,
            comments: commentsFor('avr', context.settings),
            amountMinor: 0,
            read: { purpose: 'avr' as const, transactionType: '00' as const },
            includeEmvTags: false,
            acceptPartial: false,
            cancellable: true,
          },
        }),
        onDone: [
          {
            // One stay per card: the verified card is looked up before any pre-authorization is placed.
            guard: ({ context, event }) =>
              event.output.kind === 'approved' &&
              context.settings.tapAndGoOneStayPerCard &&
              event.output.card !== undefined,
            target: 'entryChecking',
            actions: assign(({ context, event }) => verifiedCard(context, event.output)),
          },
          {
            // A verification approved without its card read breaks the effect contract: the card cannot be looked
            // up, so no hold is placed (the verification moved no money).
            guard: ({ context, event }) =>
              event.output.kind === 'approved' && context.settings.tapAndGoOneStayPerCard,
            target: 'failed',
            actions: [
              assign(({ context, event }) => verifiedCard(context, event.output)),
              assign({ message: { key: 'tapAndGo.entryLookupFailed' }, reason: 'HOLD_LOOKUP_FAILED' }),
            ],
          },
          {
            guard: ({ event }) => event.output.kind === 'approved',
            target: 'entryHolding',
            actions: assign(({ context, event }) => verifiedCard(context, event.output)),
          },
          ...unsuccessfulTransaction(),
        ],
      },
      on: { CANCEL: { actions: sendTo('transaction', { type: 'CANCEL' }) } },
    },
    entryChecking: {
      // Anti-passback (tariff.tapAndGoOneStayPerCard): a card whose stay is open — the hold its exit would claim now —
      // is inside already. A second vehicle on it would get a second hold, and neither exit could tell which stay is
      // its own: the entry is refused before any pre-authorization, the gate stays shut, nothing is charged (the
      // verification moved no money). A hold someone else is settling (its expiry's reversal, a follow-on recovery
      // has yet to resolve) is no stay its exit would claim either, and does not keep the card out.
      tags: ['processing'],
      invoke: {
        id: 'stayAtEntry',
        src: 'stayAtEntry',
        input: ({ context }) => ({ fingerprint: context.card?.fingerprint ?? '' }),
        onDone: [
          {
            guard: ({ event }) => event.output.kind === 'open',
            target: 'declined',
            actions: [
              {
                type: 'entryRefused',
                params: ({ context, event }) => ({
                  reason: 'CARD_ALREADY_INSIDE' as const,
                  holdId: (event.output as EntryStay & { kind: 'open' }).holdId,
                  transactionId: context.verificationId ?? '',
                }),
              },
              assign({ message: { key: 'tapAndGo.cardInside' }, reason: 'CARD_ALREADY_INSIDE' }),
            ],
          },
          { target: 'entryHolding' },
        ],
        // The holds could not be read: whether the card is inside is unknown, so no hold is placed.
        onError: {
          target: 'failed',
          actions: assign({ message: { key: 'tapAndGo.entryLookupFailed' }, reason: 'HOLD_LOOKUP_FAILED' }),
        },
      },
    },
    entryHolding: {
      tags: ['processing'],
      invoke: {
        id: 'transaction',
        src: 'transaction',
        input: ({ context }) => ({
          settings: context.settings,
          request: {
            service: 'preauth' as const,
            comments: commentsFor('preauth', context.settings),
            amountMinor: context.settings.tapAndGoHoldMinor,
            // The verification's cryptogram covers a zero amount: the hold needs its own read of the card (EMV: one
            // cryptogram per amount), so the customer presents the card a second time. One stay per card: the card
            // looked up at the verification, no other — a card inside must not slip in at this read.
            read: {
              purpose: 'preauth' as const,
              transactionType: '00' as const,
              ...(context.settings.tapAndGoOneStayPerCard && context.card !== undefined
                ? { sameCardAs: context.card.fingerprint }
                : {}),
            },
            includeEmvTags: false,
            acceptPartial: false,
            cancellable: true,
          },
        }),
        onDone: [
          {
            guard: ({ event }) => event.output.kind === 'approved',
            target: 'openingHold',
            actions: assign(({ context, event }) => {
              const output = event.output as TransactionResult & { kind: 'approved' };
              const card = output.card ?? context.card;
              // The hold's transaction read the card itself: an approval without a card breaks the effect contract.
              if (card === undefined)
                throw new FlowEffectError(
                  'EFFECT_CONTRACT',
                  'a pre-authorization approved without a card read',
                );
              const now = context.clock.now();
              const hold: HoldRecord = {
                holdId: output.transactionId,
                fingerprint: card.fingerprint,
                maskedPan: card.maskedPan,
                gatewayId: output.gatewayId ?? '',
                transactionId: output.transactionId,
                authorizedMinor: output.authorizedMinor,
                currency: context.settings.currency,
                cardRef: card.cardRef,
                // spec 001: after an EMV contact pre-authorization the capture carries the EMV tags.
                includeEmvTags: card.entryMode === 'contact' && card.chip,
                enteredAtMs: now,
                expiresAtMs: now + context.settings.tapAndGoMaxStayMs,
              };
              return {
                hold,
                card,
                cardRefs:
                  output.card !== undefined ? [...context.cardRefs, output.card.cardRef] : context.cardRefs,
              };
            }),
          },
          {
            // Another card than the one verified and looked up was presented for the hold: nothing was sent for it.
            guard: ({ event }) => event.output.kind === 'card-error' && event.output.code === 'CARD_CHANGED',
            target: 'declined',
            actions: [
              { type: 'noteResult', params: ({ event }) => event.output },
              assign({ message: { key: 'tapAndGo.sameCard' }, reason: 'CARD_CHANGED' }),
            ],
          },
          ...unsuccessfulTransaction(),
        ],
      },
      on: { CANCEL: { actions: sendTo('transaction', { type: 'CANCEL' }) } },
    },
    openingHold: {
      tags: ['processing'],
      invoke: {
        id: 'openHold',
        src: 'openHold',
        input: ({ context }) => requireHold(context),
        onDone: {
          target: 'entered',
          actions: assign(({ context }) => {
            const hold = requireHold(context);
            return {
              // The open hold owns the card read now: the host wipes it on closeHold.
              cardRefs: context.cardRefs.filter((ref) => ref !== hold.cardRef),
              message: { key: 'tapAndGo.entryOpens' },
              reason: 'APPROVED',
              amountMinor: hold.authorizedMinor,
              session: { id: hold.holdId, startedAtMs: hold.enteredAtMs, heldMinor: hold.authorizedMinor },
            };
          }),
        },
        // The hold could not be stored: nobody would ever settle it, so it is released at once.
        onError: 'entryReleasing',
      },
    },
    entryReleasing: {
      tags: ['processing'],
      invoke: {
        id: 'transaction',
        src: 'transaction',
        // The host repeats the authorization's EMV tags on every reversal of an EMV original (gateway.md §7). No watch
        // knows of a hold that was not stored: its reversal releases it for good, so a refusal for now (held back while
        // a follow-on is unresolved, or the processor unavailable) becomes the host's durable follow-up.
        input: ({ context }) => holdReversal(context),
        onDone: {
          target: 'failed',
          actions: assign({
            message: { key: 'tapAndGo.entryRefused' },
            reason: 'HOLD_NOT_STORED',
          }),
        },
      },
    },
    entered: {
      tags: ['session'],
      on: { DONE: 'idle' },
      after: { resultScreen: 'idle' },
    },
    exitReading: {
      tags: ['present-card'],
      invoke: {
        id: 'readCard',
        src: 'readCard',
        input: ({ context }) => ({
          amountMinor: 0,
          currency: context.settings.currency,
          transactionType: '00' as const,
          purpose: 'exit' as const,
        }),
        onDone: {
          target: 'claiming',
          actions: assign(({ context, event }) => ({
            maskedPan: event.output.maskedPan,
            cardRefs: [...context.cardRefs, event.output.cardRef],
            card: event.output,
          })),
        },
        // Told as every model tells a failed read (failureText): nothing was sent, no hold was touched.
        onError: {
          target: 'failed',
          actions: assign(({ event }) => failureText(readFailure(event.error), GATE_READER)),
        },
      },
      after: {
        readTimeout: {
          target: 'failed',
          actions: assign(() => failureText({ kind: 'card-error', code: 'READ_TIMEOUT' }, GATE_READER)),
        },
      },
      // More time asked for: a fresh activation (READ_AGAIN, src/flows/transaction.ts).
      on: { CANCEL: 'idle', READ_AGAIN: { target: 'exitReading', reenter: true } },
    },
    claiming: {
      tags: ['processing'],
      invoke: {
        id: 'claimHold',
        src: 'claimHold',
        input: ({ context }) => ({
          fingerprint: context.card?.fingerprint ?? '',
          recentCaptureMs: paidExitWindowMs(context.settings),
        }),
        onDone: [
          {
            // The hold was authorized in another currency than the tariff's (the configuration changed while the car
            // was in): the fee cannot be priced in it, so nothing is charged — the hold is released in full, in its
            // own currency, and the operator lets the car out and settles the stay.
            guard: ({ context, event }) =>
              event.output.kind === 'claimed' && !tariffPrices(context.settings, event.output.hold),
            target: 'exitReleasingUnpriced',
            actions: [
              assign(({ event }) => {
                const { hold } = event.output as HoldClaim & { kind: 'claimed' };
                return {
                  hold,
                  session: {
                    id: hold.holdId,
                    startedAtMs: hold.enteredAtMs,
                    heldMinor: hold.authorizedMinor,
                  },
                };
              }),
              {
                // The fee the tariff asks, in its own (the configured) currency: uncollected, for the operator.
                type: 'feeNotComputable',
                params: ({ context, event }) => {
                  const { hold } = event.output as HoldClaim & { kind: 'claimed' };
                  const now = context.clock.now();
                  return {
                    hold,
                    feeMinor: feeBetween(context.settings.tariff, Math.min(hold.enteredAtMs, now), now)
                      .feeMinor,
                    feeCurrency: context.settings.currency,
                  };
                },
              },
            ],
          },
          {
            // The stay was paid by phone (its link's payment journaled on the hold) and the hold is still open: it is
            // never charged again — released in full, as after the payment, and the exit opens as paid.
            guard: ({ event }) => event.output.kind === 'paid-by-link' && event.output.claimed,
            target: 'exitReleasingPaid',
            actions: assign(({ context, event }) => {
              const { hold, amountMinor } = event.output as HoldClaim & { kind: 'paid-by-link' };
              return {
                hold,
                feeMinor: amountMinor,
                exitAtMs: context.clock.now(),
                session: { id: hold.holdId, startedAtMs: hold.enteredAtMs, heldMinor: hold.authorizedMinor },
              };
            }),
          },
          {
            // Paid by phone, and someone else releases the hold (its expiry watch, a reversal recovery resolves) or
            // released it: nothing is sent, and the exit opens as paid.
            guard: ({ event }) => event.output.kind === 'paid-by-link',
            target: 'exited',
            actions: assign(({ event }) => {
              const { hold, amountMinor } = event.output as HoldClaim & { kind: 'paid-by-link' };
              return {
                maskedPan: hold.maskedPan,
                amountMinor,
                message: { key: 'tapAndGo.exitPaid' },
                reason: 'PAID_BY_LINK',
              };
            }),
          },
          {
            guard: ({ event }) => event.output.kind === 'claimed',
            target: 'exitOffering',
            actions: assign(({ context, event }) => {
              const { hold } = event.output as HoldClaim & { kind: 'claimed' };
              const now = context.clock.now();
              const fee = feeBetween(context.settings.tariff, Math.min(hold.enteredAtMs, now), now);
              return {
                hold,
                feeMinor: fee.feeMinor,
                exitAtMs: now,
                session: { id: hold.holdId, startedAtMs: hold.enteredAtMs, heldMinor: hold.authorizedMinor },
              };
            }),
          },
          {
            // Someone else is settling the card's hold (its expiry reversal, or a reversal whose outcome recovery has
            // yet to resolve): this exit can neither charge it nor release it, and the operator lets the car out.
            // A stay whose payment by phone a restart left in doubt (the customer may have paid its link) is told so.
            guard: ({ event }) => event.output.kind === 'settling',
            target: 'failed',
            actions: assign(({ event }) => ({
              message: {
                key:
                  event.output.kind === 'settling' && event.output.phonePaymentInDoubt !== undefined
                    ? 'tapAndGo.phonePaymentBeingChecked'
                    : 'tapAndGo.holdBeingSettled',
              },
              reason: 'HOLD_BEING_SETTLED' as const,
            })),
          },
          {
            // The card's exit was captured (recently: see claimHold), e.g. just before a restart that kept the gate
            // shut: it is shown as paid again, as any paid exit — the amount captured for the stay and that capture's
            // receipt — and nothing is charged.
            guard: ({ event }) => event.output.kind === 'captured',
            target: 'exited',
            actions: [
              assign(({ event }) => {
                const { hold, capture } = event.output as HoldClaim & { kind: 'captured' };
                return {
                  maskedPan: hold.maskedPan,
                  message: { key: 'tapAndGo.exitPaid' },
                  reason: 'ALREADY_PAID',
                  ...(capture !== undefined ? { amountMinor: capture.amountMinor } : {}),
                };
              }),
              enqueueActions(({ context, event, enqueue }) => {
                const { hold, capture, capturedAtMs } = event.output as HoldClaim & { kind: 'captured' };
                if (capture === undefined) return;
                enqueue({
                  type: 'issueReceipt',
                  params: exitReceipt(context.settings, hold, {
                    transactionId: capture.transactionId,
                    ...(capture.gatewayId !== undefined ? { gatewayId: capture.gatewayId } : {}),
                    amountMinor: capture.amountMinor,
                    currency: capture.currency,
                    authorizedMinor: capture.authorization?.authorizedMinor ?? hold.authorizedMinor,
                    atMs: capturedAtMs,
                    exitAtMs: capturedAtMs,
                  }),
                });
              }),
            ],
          },
          {
            // The hold of the card's last stay was released at the end of the maximum stay while its car was inside:
            // the car is at the exit, its stay owed from its entry, and no hold is left to capture. The fee is priced
            // as at any exit and charged by a sale on the card presented (exitOutstayed).
            guard: ({ event }) => event.output.kind === 'outstayed',
            target: 'exitOutstayed',
            actions: assign(({ context, event }) => {
              const { hold } = event.output as HoldClaim & { kind: 'outstayed' };
              const now = context.clock.now();
              const fee = feeBetween(context.settings.tariff, Math.min(hold.enteredAtMs, now), now);
              return {
                hold,
                feeMinor: fee.feeMinor,
                exitAtMs: now,
                // Nothing is held on the card any more.
                session: { id: hold.holdId, startedAtMs: hold.enteredAtMs, heldMinor: 0 },
              };
            }),
          },
          {
            target: 'declined',
            actions: assign({
              message: { key: 'tapAndGo.noEntry' },
              reason: 'NO_ENTRY',
            }),
          },
        ],
        onError: {
          target: 'failed',
          actions: assign({ message: { key: 'tapAndGo.entryLookupFailed' }, reason: 'HOLD_LOOKUP_FAILED' }),
        },
      },
    },
    exitOutstayed: {
      // A stay that outlasted its hold. Its hold authorized in another currency than the tariff's cannot be priced (as
      // at an exit that claims one): nothing is charged, the fee is recorded for the operator, who lets the car out.
      tags: ['processing'],
      always: [
        {
          guard: ({ context }) => !tariffPrices(context.settings, requireHold(context)),
          target: 'failed',
          actions: [
            {
              type: 'feeNotComputable',
              params: ({ context }) => ({
                hold: requireHold(context),
                feeMinor: context.feeMinor,
                feeCurrency: context.settings.currency,
              }),
            },
            assign({ message: { key: 'tapAndGo.holdBeingSettled' }, reason: 'FEE_NOT_COMPUTABLE' }),
          ],
        },
        {
          guard: 'nothingOwed',
          target: 'exited',
          actions: assign({
            amountMinor: 0,
            message: { key: 'tapAndGo.nothingDue' },
            titleKey: 'screen.nothingDue.title',
          }),
        },
        { target: 'exitSellingStay' },
      ],
    },
    exitSellingStay: {
      // The fee of a stay that outlasted its hold, as a sale on the card presented at the exit, read again for the
      // amount (EMV: one cryptogram per amount) and only that card. The sale names the stay (its hold's id, as a
      // ticket): the host records the stay paid by it before it is sent, and what of it stands follows the sale's
      // journal entry, so that the card tapped again is not charged again (claimHold: `captured` or `none`).
      tags: ['processing'],
      invoke: {
        id: 'transaction',
        src: 'transaction',
        input: ({ context }) => {
          const hold = requireHold(context);
          return {
            settings: holdSettings(context),
            request: {
              service: 'sale' as const,
              comments: commentsFor('sale', context.settings),
              amountMinor: context.feeMinor,
              read: {
                purpose: 'sale' as const,
                transactionType: '00' as const,
                ...(context.card !== undefined ? { sameCardAs: context.card.fingerprint } : {}),
              },
              includeEmvTags: false,
              acceptPartial: false,
              cancellable: true,
              ticket: hold.holdId,
            },
          };
        },
        onDone: [
          {
            guard: ({ event }) => event.output.kind === 'approved',
            target: 'exited',
            actions: [
              enqueueActions(({ context, event, enqueue }) => {
                const hold = requireHold(context);
                const output = event.output as TransactionResult & { kind: 'approved' };
                enqueue({
                  type: 'stayOutstayed',
                  params: {
                    hold,
                    feeMinor: context.feeMinor,
                    sold: true,
                    transactionId: output.transactionId,
                  },
                });
                enqueue({
                  type: 'issueReceipt',
                  params: {
                    service: 'sale',
                    comments: commentsFor('sale', context.settings),
                    amountMinor: context.feeMinor,
                    currency: hold.currency,
                    maskedPan: output.card?.maskedPan ?? hold.maskedPan,
                    transactionId: output.transactionId,
                    ...(output.gatewayId !== undefined ? { gatewayId: output.gatewayId } : {}),
                    atMs: context.clock.now(),
                    lines: exitReceiptLines(context),
                  },
                });
              }),
              assign(({ context, event }) => {
                const card = (event.output as TransactionResult & { kind: 'approved' }).card;
                return {
                  amountMinor: context.feeMinor,
                  message: { key: 'tapAndGo.exitPaid' },
                  reason: 'OVERSTAY_SALE',
                  // The sale's own card read, wiped at idle (no hold keeps it).
                  cardRefs: card !== undefined ? [...context.cardRefs, card.cardRef] : context.cardRefs,
                };
              }),
            ],
          },
          // Not sold: the gate stays shut, and the operator is told (the stay stays owed: the card may try again).
          ...unsuccessfulTransaction().map((t) => ({
            ...t,
            actions: [
              {
                type: 'stayOutstayed' as const,
                params: ({
                  context,
                  event,
                }: {
                  context: TapAndGoContext;
                  event: { output: TransactionResult };
                }) => ({
                  hold: requireHold(context),
                  feeMinor: context.feeMinor,
                  sold: false,
                  reason:
                    'reason' in event.output
                      ? event.output.reason
                      : 'code' in event.output
                        ? event.output.code
                        : event.output.kind.toUpperCase(),
                  ...('transactionId' in event.output && event.output.transactionId !== undefined
                    ? { transactionId: event.output.transactionId }
                    : {}),
                }),
              },
              t.actions,
            ],
          })),
        ],
      },
      on: { CANCEL: { actions: sendTo('transaction', { type: 'CANCEL' }) } },
    },
    exitOffering: {
      tags: ['processing'],
      always: [{ guard: 'phoneOffered', target: 'exitChoosing' }, { target: 'pricing' }],
    },
    exitChoosing: {
      // The fee, and two ways to pay it: the card tapped, or the phone.
      tags: ['confirm'],
      entry: assign(({ context }) => ({
        amountMinor: context.feeMinor,
        message: { key: 'tapAndGo.exitChoose' },
      })),
      on: {
        CONFIRM: 'pricing',
        PAY_BY_LINK: 'exitPayingByLink',
        // Nobody chose (or the customer left the lane): the hold goes back under expiry watch, the gate stays shut.
        CANCEL: {
          target: 'idle',
          actions: {
            type: 'closeHold',
            params: ({ context }) => ({ hold: requireHold(context), resolution: 'returned' as const }),
          },
        },
      },
    },
    exitPayingByLink: {
      // Paid by phone: the entry's hold is released in full, then the exit opens; otherwise back to the choice.
      ...payByLinkState({
        purpose: 'fee',
        link: gateLink,
        receiptLines: exitReceiptLines,
        paid: { target: 'exitReleasingPaid' },
        notPaid: 'exitChoosing',
      }),
      on: { CANCEL: { actions: sendTo('payByLink', { type: 'CANCEL' }) } },
    },
    exitReleasingPaid: {
      tags: ['processing'],
      invoke: {
        id: 'transaction',
        src: 'transaction',
        input: ({ context }) => holdReversal(context),
        onDone: {
          target: 'exited',
          actions: [
            closeReleasedHold,
            assign(({ context }) => ({
              amountMinor: context.feeMinor,
              message: { key: 'tapAndGo.exitPaid' },
              reason: 'PAID_BY_LINK',
            })),
          ],
        },
      },
    },
    exitReleasingForLater: releasingHold('payingLater'),
    payingLater: {
      // Pay later: the fee the capture could not take, as a payment link printed and shown.
      ...payByLinkState({
        purpose: 'pay-later',
        link: gateLink,
        receiptLines: exitReceiptLines,
        paid: {
          target: 'exited',
          note: (context) => ({
            amountMinor: context.feeMinor,
            message: { key: 'tapAndGo.exitPaid' },
            reason: 'PAID_BY_LINK',
          }),
        },
        notPaid: 'idle',
      }),
      on: {
        CANCEL: { actions: sendTo('payByLink', { type: 'CANCEL' }) },
        DONE: { actions: sendTo('payByLink', { type: 'DONE' }) },
      },
    },
    pricing: {
      tags: ['processing'],
      always: [
        { guard: 'nothingOwed', target: 'exitReversing' },
        { guard: 'feeAboveHold', target: 'exitIncrementing' },
        { target: 'exitCapturing' },
      ],
    },
    exitIncrementing: {
      tags: ['processing'],
      invoke: {
        id: 'transaction',
        src: 'transaction',
        input: ({ context }) => {
          const hold = requireHold(context);
          return {
            settings: holdSettings(context),
            request: {
              service: 'incremental' as const,
              comments: commentsFor('incremental', context.settings),
              amountMinor: context.feeMinor - hold.authorizedMinor,
              original: holdOriginal(hold),
              cardRef: hold.cardRef,
              includeEmvTags: false,
              acceptPartial: false,
              cancellable: false,
            },
          };
        },
        onDone: [
          {
            guard: ({ event }) => event.output.kind === 'approved',
            target: 'exitCapturing',
            actions: assign(({ context, event }) => {
              const output = event.output as TransactionResult & { kind: 'approved' };
              // gateway.md §7: the incremental answer's authorizedAmount is the new total.
              return { hold: { ...requireHold(context), authorizedMinor: output.authorizedMinor } };
            }),
          },
          {
            // The increment was refused: the capture takes what the hold covers, and the host records the shortfall
            // for the operator with the capture's outcome (the capture carries the fee: `owedMinor`).
            target: 'exitCapturing',
            actions: assign({ reason: 'INCREMENTAL_NOT_APPROVED' }),
          },
        ],
      },
    },
    exitCapturing: {
      tags: ['processing'],
      invoke: {
        id: 'transaction',
        src: 'transaction',
        input: ({ context }) => {
          const hold = requireHold(context);
          const amountMinor = captureAmount(context);
          return {
            settings: holdSettings(context),
            request: {
              service: 'capture' as const,
              comments: commentsFor('capture', context.settings, {
                amountMinor,
                authorizedMinor: hold.authorizedMinor,
              }),
              amountMinor,
              original: holdOriginal(hold),
              cardRef: hold.cardRef,
              includeEmvTags: hold.includeEmvTags,
              acceptPartial: false,
              cancellable: false,
              // The fee the capture settles: what it does not take — the fee beyond what the hold covers (its increment
              // not approved), or what the gateway took less than asked — is a shortfall for the operator.
              owedMinor: context.feeMinor,
            },
          };
        },
        onDone: [
          {
            guard: ({ event }) => event.output.kind === 'approved',
            target: 'exited',
            actions: [
              enqueueActions(({ context, event, enqueue }) => {
                const hold = requireHold(context);
                const output = event.output as TransactionResult & { kind: 'approved' };
                const amountMinor = capturedBy(output);
                // The host has closed the hold already, in the transaction of the capture's outcome (a crash between
                // that outcome and this action must not leave a captured hold open); closing it again changes nothing.
                enqueue({ type: 'closeHold', params: { hold, resolution: 'captured' } });
                enqueue({
                  type: 'issueReceipt',
                  params: exitReceipt(context.settings, hold, {
                    transactionId: output.transactionId,
                    ...(output.gatewayId !== undefined ? { gatewayId: output.gatewayId } : {}),
                    amountMinor,
                    // The comments the capture was sent with follow what was asked, the receipt the amount it took.
                    askedMinor: captureAmount(context),
                    currency: hold.currency,
                    authorizedMinor: hold.authorizedMinor,
                    atMs: context.clock.now(),
                    exitAtMs: context.exitAtMs ?? context.clock.now(),
                  }),
                });
              }),
              assign(({ event }) => ({
                amountMinor: capturedBy(event.output as TransactionResult & { kind: 'approved' }),
                message: { key: 'tapAndGo.exitPaid' },
              })),
            ],
          },
          {
            // The capture's outcome was unknown (and voided, or left to recovery): a capture below the hold may have
            // made the gateway reverse the rest already, so the hold can be neither captured again nor returned as
            // it was — it is released, and the fee is not collected (as the meter does).
            guard: ({ event }) => event.output.kind === 'unknown',
            target: 'exitReleasing',
            actions: { type: 'noteResult', params: ({ event }) => event.output },
          },
          {
            // Pay later: the capture was declined or refused (money did not move). The hold is released (it would
            // only block the customer's money until its expiry) and the fee becomes a payment link.
            guard: 'payLater',
            target: 'exitReleasingForLater',
            actions: { type: 'noteResult', params: ({ event }) => event.output },
          },
          {
            target: 'failed',
            actions: [
              {
                type: 'closeHold',
                params: ({ context }) => ({ hold: requireHold(context), resolution: 'returned' as const }),
              },
              { type: 'noteResult', params: ({ event }) => event.output },
            ],
          },
        ],
      },
    },
    exitReleasing: releasingHold('failed'),
    exitReleasingUnpriced: {
      ...releasingHold('failed'),
      exit: assign({ message: { key: 'tapAndGo.holdBeingSettled' }, reason: 'FEE_NOT_COMPUTABLE' }),
    },
    exitReversing: {
      // Nothing owed: the hold is released in full and the exit opens, whatever the reversal's outcome — the driver
      // owes nothing either way. A reversal that did not stand leaves the hold to its expiry watch (closeReleasedHold),
      // which reverses it again (after recovery's resolution, when its outcome is unknown); a shut gate would only keep
      // the car in, since no later exit of the card takes a hold whose release was decided (it is being settled).
      tags: ['processing'],
      invoke: {
        id: 'transaction',
        src: 'transaction',
        input: ({ context }) => holdReversal(context),
        onDone: {
          target: 'exited',
          actions: [
            closeReleasedHold,
            // Shown on the approved screen (the exit opens), titled as what it is: no payment was approved.
            assign({
              amountMinor: 0,
              message: { key: 'tapAndGo.nothingDue' },
              titleKey: 'screen.nothingDue.title',
            }),
          ],
        },
      },
    },
    exited: {
      tags: ['approved'],
      on: { DONE: 'idle' },
      after: { resultScreen: 'idle' },
    },
    declined: {
      tags: ['declined'],
      on: { DONE: 'idle' },
      after: { resultScreen: 'idle' },
    },
    failed: {
      tags: ['error'],
      on: { DONE: 'idle' },
      after: { resultScreen: 'idle' },
    },
  },
});

export type TapAndGoMachine = typeof tapAndGoMachine;
