import { and, assign, fromPromise, setup } from 'xstate';
import {
  FlowEffectError,
  type CardPurpose,
  type CardSummary,
  type DccOfferInput,
  type DccOfferSummary,
  type DccSelection,
  type FlowClock,
  type HoldCapture,
  type HoldRelease,
  type OriginalRef,
  type ParkingComments,
  type ReadCardInput,
  type ServiceName,
  type ServiceRequest,
  type SubmitOutcome,
} from './effects.js';
import { offerChoosableForMs } from './dcc.js';
import { commentsFor, compensationFor, resolutionFor } from './services.js';
import type { FlowSettings } from './settings.js';
import { MAX_TIMER_DELAY_MS } from '../vocabulary/timer.js';

/**
 * The transaction actor every model runs for one gateway request: (read card →) send → classify, with
 * - cancel at every waiting state: while the card is awaited the read is aborted; while the request is out the cancel
 *   is remembered and an approved original is undone (reversal or void) when its answer arrives;
 * - currency conversion (spec 001, DCC flow): after the card read of a sale or pre-authorization that asks for it, an
 *   offer; with an offer the customer chooses the currency (`choose-currency`, no default, no time limit of the
 *   machine's: the host times it like any input screen and cancels it unanswered) before the request goes; without
 *   one the payment continues in the local currency. An offer is chosen only while it can still reach the gateway
 *   before its expiry (`offerChoosableForMs`): past that, a fresh offer for the same card and amount replaces it on
 *   the screen, or, when none can be had, the payment continues in the local currency as without an offer;
 * - the reader and gateway timeouts as delayed transitions (`readTimeout`, `submitTimeout`);
 * - an unknown outcome resolved by a timeout reversal (authorizations, after `resolutionDelay`) or a timeout void
 *   (captures, sales, refunds, credits), retried `maxResolutionAttempts` times (gateway.md §2, "Timeouts").
 * Journaling is the host's: `submit` journals before it sends.
 */

/** What the model asks for. */
export interface TransactionRequest {
  service: ServiceName;
  comments: ParkingComments;
  /** Minor units; meaning per service as in {@link ServiceRequest.amountMinor}. */
  amountMinor: number;
  /**
   * Read a card first (originals: avr, preauth, sale, credit). Absent: use `cardRef` or no card at all. `sameCardAs`:
   * the keyed fingerprint the card read must have (the card an earlier read of the same customer verified): another
   * card ends the transaction as `card-error` CARD_CHANGED before anything is sent.
   */
  read?: {
    purpose: CardPurpose;
    transactionType: ReadCardInput['transactionType'];
    sameCardAs?: string;
    /**
     * The model's reader takes swipes: after a contact chip read that failed technically (the reader's CARD_ERROR
     * saying `chipUnreadable`) the customer is asked to swipe the card within the same transaction, and a chip card
     * swiped then is sent as an EMV fallback ({@link ServiceRequest.emvFallback}). A failed tap never opens the stripe
     * (TAP_FAILED). Absent: a failed chip read ends the transaction as before.
     */
    swipeFallback?: boolean;
  };
  cardRef?: string;
  original?: OriginalRef;
  includeEmvTags: boolean;
  /** Accept a partial approval; otherwise it is undone and reported as declined with reason PARTIAL_APPROVAL. */
  acceptPartial: boolean;
  /** Whether the customer's CANCEL applies (originals only; follow-ons are never cancelled by the customer). */
  cancellable: boolean;
  /**
   * Sale or pre-authorization with a card read of a model that can show the currency choice: ask for a DCC offer
   * after the read when `settings.dcc.enabled` (spec 001, DCC flow). Absent: no offer.
   */
  offerDcc?: boolean;
  /** Follow-on of a converted authorization: its terms, passed on to the request (spec 001, DCC capture). */
  dcc?: DccSelection;
  /** A reversal that gives the authorization up for good: passed on to the request ({@link ServiceRequest.releases}). */
  releases?: boolean;
  /** A capture that takes its fee for good: passed on to the request ({@link ServiceRequest.capturesFee}). */
  capturesFee?: boolean;
  /** A pay station's sale: the ticket it pays, passed on to the request ({@link ServiceRequest.ticket}). */
  ticket?: string;
  /** A capture: the fee it settles, passed on to the request ({@link ServiceRequest.owedMinor}). */
  owedMinor?: number;
  /**
   * A meter settlement step: the session's authorizations released after it, passed on to the request
   * ({@link ServiceRequest.alsoReleases}).
   */
  alsoReleases?: readonly HoldRelease[];
  /**
   * A meter settlement step: the session's authorizations captured after it, passed on to the request
   * ({@link ServiceRequest.alsoCaptures}).
   */
  alsoCaptures?: readonly HoldCapture[];
}

export interface TransactionInput {
  settings: FlowSettings;
  request: TransactionRequest;
  /**
   * The terminal's own clock (FlowInput.wallClock), on which the currency choice reads its offer's expiry. A request
   * with `offerDcc` needs it: without it no offer is asked for (an offer whose expiry cannot be watched is never shown).
   */
  wallClock?: FlowClock;
}

/** How the transaction ended. `card` is set whenever a card was read (the model releases it). */
export type TransactionResult =
  | {
      kind: 'approved';
      transactionId: string;
      gatewayId?: string;
      /** Authorized (or processed) amount, minor units; for an incremental the new total. */
      authorizedMinor: number;
      partial: boolean;
      card?: CardSummary;
      /** The currency choice the original was sent with (absent: no offer); follow-ons carry it on. */
      dcc?: DccSelection;
    }
  | { kind: 'declined'; transactionId?: string; reason: string; card?: CardSummary }
  /** `notSent`: the request provably never reached the gateway ({@link SubmitOutcome.notSent}). */
  | { kind: 'rejected'; transactionId: string; reason: string; notSent?: true; card?: CardSummary }
  /**
   * `resolved`: a timeout reversal/void succeeded, nothing is charged. Otherwise the journal's recovery owns it — or,
   * `notUndone`, a partial approval whose reversal or void the gateway refused stands: the operator settles it.
   */
  | { kind: 'unknown'; transactionId: string; resolved: boolean; notUndone?: boolean; card?: CardSummary }
  /** The customer cancelled; anything approved in between was undone (`undone`) or left to recovery (`!undone`). */
  | { kind: 'cancelled'; undone: boolean; card?: CardSummary }
  /** The card read failed or timed out, or the card is not of a parking network; nothing was sent. */
  | { kind: 'card-error'; code: string; card?: CardSummary };

/**
 * What an approved capture took: the amount its answer states (the host reports it in the local currency; spec 001,
 * capture answer `orderInformation.amountDetails.totalAmount`), which a gateway may make less than was asked. The
 * rest of the authorization the gateway reverses itself (spec 001: a capture below the authorization triggers an
 * automatic partial reversal), so nothing more is sent for it. Receipts and result screens show this amount.
 */
export function capturedBy(output: TransactionResult & { kind: 'approved' }): number {
  return output.authorizedMinor;
}

interface TransactionContext {
  settings: FlowSettings;
  request: TransactionRequest;
  card: CardSummary | undefined;
  outcome: SubmitOutcome | undefined;
  /** transactionId of the original that went out (for timeout resolution). */
  sentTransactionId: string | undefined;
  cancelRequested: boolean;
  resolutionAttempts: number;
  result: TransactionResult | undefined;
  wallClock: FlowClock | undefined;
  /** The DCC offer shown on `choose-currency`. */
  offer: DccOfferSummary | undefined;
  /** The offer shown replaces one that expired on the screen (the screen says the rate changed). */
  offerRenewed: boolean;
  /** The customer's choice after an offer, or the follow-on's terms. */
  dcc: DccSelection | undefined;
  /**
   * A contact chip read of this transaction failed technically (the reader's `chipUnreadable`): a chip card may now be
   * swiped. Never set by a failed tap.
   */
  chipFailed: boolean;
  /**
   * Why the card is asked for again within this transaction (a code of `cardErrorKey`, src/flows/models.ts): a chip
   * card swiped before its chip was tried (CHIP_CARD_SWIPED), or a chip that could not be read (CHIP_FAILED). The
   * `present-card` screen says it. Nothing was sent for the read refused.
   */
  presentAgain: string | undefined;
  /**
   * How many reads this transaction refused and asked the card again for: each refusal is an event of its own, which
   * the screen says again even in the same words (a chip card swiped twice). Not changed by a fresh activation of the
   * same wait (READ_AGAIN).
   */
  refusedReads: number;
}

type TransactionEvent =
  | { type: 'CANCEL' }
  | { type: 'CHOOSE_CURRENCY'; currency: string }
  /** The host's, never the customer's: {@link READ_AGAIN}. */
  | { type: 'READ_AGAIN' };

const notProvided = (name: string) => () =>
  Promise.reject(new FlowEffectError('EFFECT_NOT_PROVIDED', `effect ${name} was not provided by the host`));

/**
 * The customer asked for more time while the card is awaited (src/host/inactivity.ts): the read is started again, a
 * fresh activation of the reader with its whole wait and the machine's backstop with it. The read in progress is
 * aborted first (its invoke stops); nothing was sent, so nothing can be charged twice. Handled by every state that
 * awaits a card (the `present-card` tag).
 */
export const READ_AGAIN = { target: 'reading', reenter: true } as const;

/**
 * Whether a failed card read was a technical failure of the chip, the one failure after which EMV allows the
 * magnetic stripe (a fallback): the reader's error says so (`detail.chipUnreadable`: the card in the contact slot
 * answered an error status, or could not be talked to; a tap that failed so is `tapFailed`, below). A chip that was
 * read and failed a processing step (its data authentication, processing restrictions, risk management or cardholder
 * verification), a decline by the card, a blocked, expired or unsupported card, a card taken away and no card at all
 * are not: the stripe is never a way round the chip.
 */
function chipUnreadable(error: unknown): boolean {
  return detailSays(error, 'chipUnreadable');
}

/**
 * Whether a failed card read was a tap that failed technically (the reader's `detail.tapFailed`: errors 20 and 24
 * during the contactless exchange). The card networks define the fallback for the contact chip only: after a failed tap
 * the card is tapped again or inserted (TAP_FAILED, "tap it again, or insert it"), and a chip card swiped then is its
 * chip not tried, never a fallback.
 */
function tapFailed(error: unknown): boolean {
  return detailSays(error, 'tapFailed');
}

function detailSays(error: unknown, flag: 'chipUnreadable' | 'tapFailed'): boolean {
  if (typeof error !== 'object' || error === null || !('detail' in error)) return false;
  const detail = error.detail;
  return (
    typeof detail === 'object' &&
    detail !== null &&
    flag in detail &&
    (detail as Record<string, unknown>)[flag] === true
  );
}

function errorCode(error: unknown): string {
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const code = error.code;
    if (typeof code === 'string' && code.length > 0) return code;
  }
  return 'READ_FAILED';
}

/**
 * The result of a card read that failed with `error` (a ReaderError: its code; anything else READ_FAILED). What the
 * customer is told of it is `failureText`'s (src/flows/models.ts), for this actor's reads and a model's own alike.
 */
export function readFailure(error: unknown): TransactionResult & { kind: 'card-error' } {
  return { kind: 'card-error', code: tapFailed(error) ? 'TAP_FAILED' : errorCode(error) };
}

function originalRequest(context: TransactionContext): ServiceRequest {
  const { request, settings, card } = context;
  const cardRef = card?.cardRef ?? request.cardRef;
  return {
    service: request.service,
    comments: request.comments,
    amountMinor: request.amountMinor,
    currency: settings.currency,
    catLevel: settings.catLevel,
    includeEmvTags: request.includeEmvTags,
    ...(cardRef !== undefined ? { cardRef } : {}),
    // A chip card swiped after its chip failed in this transaction (checkingCard refuses any other swipe of one).
    ...(card?.fallback === true && context.chipFailed ? { emvFallback: true as const } : {}),
    ...(request.original !== undefined ? { original: request.original } : {}),
    ...(context.dcc !== undefined ? { dcc: context.dcc } : {}),
    ...(request.releases === true ? { releases: true } : {}),
    ...(request.capturesFee === true ? { capturesFee: true } : {}),
    ...(request.ticket !== undefined ? { ticket: request.ticket } : {}),
    ...(request.owedMinor !== undefined ? { owedMinor: request.owedMinor } : {}),
    ...(request.alsoReleases !== undefined && request.alsoReleases.length > 0
      ? { alsoReleases: request.alsoReleases }
      : {}),
    ...(request.alsoCaptures !== undefined && request.alsoCaptures.length > 0
      ? { alsoCaptures: request.alsoCaptures }
      : {}),
  };
}

/** A converted original's reversal and timeout reversal carry its terms: the host sends them in its currency. */
function convertedTerms(context: TransactionContext): { dcc?: DccSelection } {
  return context.dcc?.indicator === '1' ? { dcc: context.dcc } : {};
}

/** A timeout reversal/void keyed by the unanswered original's transactionId (gateway.md §7). */
function resolutionRequest(context: TransactionContext): ServiceRequest {
  const service = resolutionFor(context.request.service) ?? 'timeout-void';
  return {
    service,
    comments: commentsFor(service, context.settings),
    // A timeout reversal carries the amount requested: the authorized amount is unknown (gateway.md §2).
    amountMinor: context.request.amountMinor,
    currency: context.settings.currency,
    catLevel: context.settings.catLevel,
    includeEmvTags: false,
    original: { transactionId: context.sentTransactionId ?? '', service: context.request.service },
    ...convertedTerms(context),
  };
}

/** The result of an approved original, as the machine counts it. */
function approvedResult(context: TransactionContext): TransactionResult {
  const o = context.outcome as SubmitOutcome;
  return withCard(
    {
      kind: 'approved' as const,
      transactionId: o.transactionId,
      authorizedMinor: o.authorizedMinor ?? context.request.amountMinor,
      partial: o.partial === true,
      ...(o.gatewayId !== undefined ? { gatewayId: o.gatewayId } : {}),
      ...(context.dcc !== undefined ? { dcc: context.dcc } : {}),
    },
    context.card,
  );
}

/** The reversal or void that undoes the machine's approved original (the guard `mustUndo` asked for one). */
function compensationRequest(context: TransactionContext): ServiceRequest {
  const undo = compensationOf(originalRequest(context), context.outcome as SubmitOutcome, {
    emvData: context.card?.chip === true,
    settings: context.settings,
  });
  // Unreachable: `mustUndo` holds only for a service with a compensation.
  if (undo === null) throw new FlowEffectError('EFFECT_CONTRACT', `${context.request.service} has no undo`);
  // A partial approval the machine does not accept is never kept, whatever the answer to its reversal (refused, it is
  // the operator's: `undoing`), so a refusal for now is the host's to send again; a full approval whose undo is
  // refused is a payment the machine keeps.
  return undo.service === 'reversal' && context.outcome?.partial === true
    ? { ...undo, releases: true }
    : undo;
}

/**
 * The request that undoes an approved original (the vocabulary's compensation: a reversal of an authorization, a void
 * of a sale or credit), built from the request that was sent and its approval; null when the service has none. One
 * rule for the machine that does not want its approval (the customer cancelled while it was out, a partial approval
 * the model does not accept) and for the host, which undoes an approval journaled after its machine stopped waiting.
 * `emvData`: the original was made with EMV data, which its reversal carries too (gateway.md §7).
 */
export function compensationOf(
  sent: ServiceRequest,
  approval: SubmitOutcome,
  options: { emvData: boolean; settings: Pick<FlowSettings, 'preauthComments'> },
): ServiceRequest | null {
  const service = compensationFor(sent.service);
  if (service === null) return null;
  return {
    service,
    comments: commentsFor(service, options.settings),
    // A reversal carries the authorized amount of the answer, never the requested one (spec 001, Reversal).
    amountMinor: approval.authorizedMinor ?? sent.amountMinor,
    currency: sent.currency,
    catLevel: sent.catLevel,
    includeEmvTags: service === 'reversal' && options.emvData,
    ...(sent.cardRef !== undefined ? { cardRef: sent.cardRef } : {}),
    original: {
      transactionId: approval.transactionId,
      service: sent.service,
      ...(approval.gatewayId !== undefined ? { gatewayId: approval.gatewayId } : {}),
    },
    // A converted original's undo carries its terms: the host sends it in its currency.
    ...(sent.dcc?.indicator === '1' ? { dcc: sent.dcc } : {}),
  };
}

function withCard<T extends object>(result: T, card: CardSummary | undefined): T & { card?: CardSummary } {
  return card !== undefined ? { ...result, card } : result;
}

/** How much longer `offer` may be chosen, on the terminal's own clock (`offerChoosableForMs`); never without it. */
function choosableForMs(context: TransactionContext, offer: DccOfferSummary | null | undefined): number {
  if (offer === null || offer === undefined || context.wallClock === undefined) return 0;
  return offerChoosableForMs(offer, context.wallClock.now(), context.settings.timing.dccOfferMarginMs);
}

/** The offer request of the card read, for the request's amount (the first offer and every fresh one alike). */
function offerInput(context: TransactionContext): DccOfferInput {
  return {
    cardRef: context.card?.cardRef ?? '',
    amountMinor: context.request.amountMinor,
    currency: context.settings.currency,
  };
}

const UNKNOWN_OUTCOME = (transactionId: string, reason: string): SubmitOutcome => ({
  kind: 'unknown',
  transactionId,
  reason,
});

export const transactionMachine = setup({
  types: {
    context: {} as TransactionContext,
    input: {} as TransactionInput,
    output: {} as TransactionResult,
    events: {} as TransactionEvent,
  },
  actors: {
    readCard: fromPromise<CardSummary, ReadCardInput>(notProvided('readCard')),
    submit: fromPromise<SubmitOutcome, ServiceRequest>(notProvided('submit')),
    dccOffer: fromPromise<DccOfferSummary | null, DccOfferInput>(notProvided('dccOffer')),
  },
  delays: {
    readTimeout: ({ context }) => context.settings.timing.readTimeoutMs,
    submitTimeout: ({ context }) => context.settings.timing.submitTimeoutMs,
    resolutionDelay: ({ context }) =>
      resolutionFor(context.request.service) === 'timeout-reversal'
        ? context.settings.timing.timeoutReversalDelayMs
        : 0,
    resolutionRetry: ({ context }) => context.settings.timing.resolutionRetryMs,
    // At most as long as a timer can wait (an offer that holds longer would otherwise be replaced at once: Node runs an
    // overlong timeout after 1 ms); the choice then waits again while the offer can still be chosen.
    offerExpiry: ({ context }) =>
      Math.min(Math.max(0, choosableForMs(context, context.offer)), MAX_TIMER_DELAY_MS),
  },
  actions: {
    /** The offer on screen can no longer be chosen: its terms leave the screen, and the next one shown is fresh. */
    renewOffer: assign({ offer: undefined, offerRenewed: true }),
    /** A card read refused within the transaction: its data is wiped now (the host provides it; DESIGN.md rule 4). */
    releaseCard: (_, _params: { cardRef: string }) => {},
  },
  guards: {
    needsRead: ({ context }) => context.request.read !== undefined,
    cancellable: ({ context }) => context.request.cancellable,
    unsupportedCard: ({ context }) => context.card?.cardType === null,
    // EMV: a chip card is read by its chip; its stripe only after the chip failed technically in this transaction.
    chipNotTried: ({ context }) => context.card?.fallback === true && !context.chipFailed,
    chipFailedFirst: ({ context, event }) =>
      context.request.read?.swipeFallback === true &&
      !context.chipFailed &&
      chipUnreadable((event as { error?: unknown }).error),
    cardChanged: ({ context }) =>
      context.request.read?.sameCardAs !== undefined &&
      context.card?.fingerprint !== context.request.read.sameCardAs,
    offersDcc: ({ context }) =>
      context.settings.dcc.enabled &&
      context.request.offerDcc === true &&
      (context.request.service === 'sale' || context.request.service === 'preauth') &&
      context.card !== undefined &&
      context.wallClock !== undefined &&
      context.dcc === undefined,
    offerChoosable: ({ context }) => choosableForMs(context, context.offer) > 0,
    // Only the two amounts shown can be chosen; anything else is ignored and the screen stays (no default).
    choseCardCurrency: ({ context, event }) =>
      event.type === 'CHOOSE_CURRENCY' &&
      context.offer !== undefined &&
      event.currency === context.offer.billingCurrency,
    choseLocalCurrency: ({ context, event }) =>
      event.type === 'CHOOSE_CURRENCY' &&
      context.offer !== undefined &&
      event.currency === context.settings.currency,
    approved: ({ context }) => context.outcome?.kind === 'approved',
    mustUndo: ({ context }) =>
      context.outcome?.kind === 'approved' &&
      compensationFor(context.request.service) !== null &&
      (context.cancelRequested || (context.outcome.partial === true && !context.request.acceptPartial)),
    declined: ({ context }) => context.outcome?.kind === 'declined',
    rejected: ({ context }) => context.outcome?.kind === 'rejected',
    resolvable: ({ context }) =>
      resolutionFor(context.request.service) !== null && (context.sentTransactionId ?? '') !== '',
    voidResolution: ({ context }) => resolutionFor(context.request.service) === 'timeout-void',
    canRetryResolution: ({ context }) =>
      context.resolutionAttempts < context.settings.timing.maxResolutionAttempts,
  },
}).createMachine({
  id: 'transaction',
  context: ({ input }) => ({
    settings: input.settings,
    request: input.request,
    card: undefined,
    outcome: undefined,
    sentTransactionId: undefined,
    cancelRequested: false,
    resolutionAttempts: 0,
    result: undefined,
    wallClock: input.wallClock,
    offer: undefined,
    offerRenewed: false,
    dcc: input.request.dcc,
    chipFailed: false,
    presentAgain: undefined,
    refusedReads: 0,
  }),
  initial: 'start',
  output: ({ context }) => context.result ?? { kind: 'card-error', code: 'NO_RESULT' },
  states: {
    start: {
      tags: ['processing'],
      always: [{ guard: 'needsRead', target: 'reading' }, { target: 'sending' }],
    },
    reading: {
      tags: ['present-card'],
      invoke: {
        src: 'readCard',
        input: ({ context }) => ({
          amountMinor: context.request.amountMinor,
          currency: context.settings.currency,
          transactionType: context.request.read?.transactionType ?? '00',
          purpose: context.request.read?.purpose ?? 'sale',
        }),
        onDone: { target: 'checkingCard', actions: assign({ card: ({ event }) => event.output }) },
        onError: [
          {
            // The chip could not be read: the customer is asked to swipe the card, within this transaction.
            guard: 'chipFailedFirst',
            target: 'reading',
            reenter: true,
            actions: assign({
              chipFailed: true,
              presentAgain: 'CHIP_FAILED',
              refusedReads: ({ context }) => context.refusedReads + 1,
            }),
          },
          {
            target: 'done',
            actions: assign({
              result: ({ event }) => readFailure(event.error),
            }),
          },
        ],
      },
      after: {
        readTimeout: {
          target: 'done',
          actions: assign({ result: { kind: 'card-error', code: 'READ_TIMEOUT' } }),
        },
      },
      on: {
        CANCEL: {
          guard: 'cancellable',
          target: 'done',
          actions: assign({ result: { kind: 'cancelled', undone: true } }),
        },
        READ_AGAIN,
      },
    },
    checkingCard: {
      tags: ['processing'],
      always: [
        {
          // Not the card the customer's earlier read verified (read.sameCardAs): nothing is sent for it.
          guard: 'cardChanged',
          target: 'done',
          actions: assign({
            result: ({ context }) =>
              withCard({ kind: 'card-error' as const, code: 'CARD_CHANGED' }, context.card),
          }),
        },
        {
          // A chip card swiped before its chip was tried: never sent. The customer is asked to insert or tap it, and
          // the transaction waits for the card again (the refused read is released now).
          guard: 'chipNotTried',
          target: 'reading',
          reenter: true,
          actions: [
            { type: 'releaseCard', params: ({ context }) => ({ cardRef: context.card?.cardRef ?? '' }) },
            assign({
              card: undefined,
              presentAgain: 'CHIP_CARD_SWIPED',
              refusedReads: ({ context }) => context.refusedReads + 1,
            }),
          ],
        },
        {
          // spec 001: the parking section supports card types 001 and 002 only.
          guard: 'unsupportedCard',
          target: 'done',
          actions: assign({
            result: ({ context }) =>
              withCard({ kind: 'card-error' as const, code: 'CARD_NOT_SUPPORTED' }, context.card),
          }),
        },
        { guard: 'offersDcc', target: 'offeringDcc' },
        { target: 'sending' },
      ],
    },
    offeringDcc: {
      // The first offer for the card read, and a fresh one for the same card and amount when the one on screen can no
      // longer be chosen (choosingCurrency: its terms left the screen at once, `offerRenewed` set): without one (none,
      // a failed lookup, one too short-lived), the payment continues in the local currency as when there was no offer
      // at all — nothing converted without a valid choice.
      tags: ['processing'],
      invoke: {
        src: 'dccOffer',
        input: ({ context }) => offerInput(context),
        onDone: [
          {
            guard: ({ context, event }) => choosableForMs(context, event.output) > 0,
            target: 'choosingCurrency',
            actions: assign({ offer: ({ event }) => event.output ?? undefined }),
          },
          // spec 001, DCC flow step 2: not eligible or no offer → continue in the local currency. An offer too close
          // to its expiry to be chosen and sent in time is no offer either.
          { target: 'sending' },
        ],
        onError: { target: 'sending' },
      },
      // An offer lookup is never worth losing the payment over: past the gateway backstop, pay locally.
      after: { submitTimeout: { target: 'sending' } },
      on: {
        CANCEL: {
          guard: 'cancellable',
          target: 'done',
          actions: assign({
            result: ({ context }) => withCard({ kind: 'cancelled' as const, undone: true }, context.card),
          }),
        },
      },
    },
    choosingCurrency: {
      // spec 001, DCC flow step 3: an active choice, never a default; the offer stays until the customer chooses or
      // cancels. No time limit of its own: the choice is the customer's decision, timed by the host as every input
      // screen is (WCAG 2.2.1: asked "Do you need more time?", longer in accessibility mode); nobody answering is a
      // cancel, and nothing is sent. The offer it shows has a time limit, though: the gateway refuses a converted
      // authorization sent against an expired offer, so an offer is chosen only until `offerExpiry` (its expiry less
      // the time the authorization takes to reach the gateway) and then replaced with a fresh one.
      tags: ['choose-currency'],
      after: {
        offerExpiry: [
          { guard: 'offerChoosable', target: 'choosingCurrency', reenter: true },
          { target: 'offeringDcc', actions: 'renewOffer' },
        ],
      },
      on: {
        CHOOSE_CURRENCY: [
          {
            guard: and(['choseCardCurrency', 'offerChoosable']),
            target: 'sending',
            actions: assign({
              dcc: ({ context }) => ({ indicator: '1' as const, offer: context.offer as DccOfferSummary }),
            }),
          },
          // The terms on screen ran out as the customer chose them (before `offerExpiry` was seen): never sent,
          // the customer is shown the fresh terms and chooses again.
          { guard: 'choseCardCurrency', target: 'offeringDcc', actions: 'renewOffer' },
          {
            guard: 'choseLocalCurrency',
            target: 'sending',
            actions: assign({ dcc: { indicator: '3' } }),
          },
        ],
        CANCEL: {
          guard: 'cancellable',
          target: 'done',
          actions: assign({
            result: ({ context }) => withCard({ kind: 'cancelled' as const, undone: true }, context.card),
          }),
        },
      },
    },
    sending: {
      tags: ['processing'],
      invoke: {
        src: 'submit',
        input: ({ context }) => originalRequest(context),
        onDone: {
          target: 'classifying',
          actions: assign({
            outcome: ({ event }) => event.output,
            sentTransactionId: ({ event }) => event.output.transactionId,
          }),
        },
        // A rejected promise may hide a request that went out: treat it as unknown (DESIGN.md, money rule 2).
        onError: {
          target: 'classifying',
          actions: assign({ outcome: UNKNOWN_OUTCOME('', 'EFFECT_FAILED') }),
        },
      },
      after: {
        submitTimeout: {
          target: 'classifying',
          actions: assign({ outcome: UNKNOWN_OUTCOME('', 'SUBMIT_TIMEOUT') }),
        },
      },
      on: {
        CANCEL: { guard: 'cancellable', actions: assign({ cancelRequested: true }) },
      },
    },
    classifying: {
      tags: ['processing'],
      always: [
        { guard: 'mustUndo', target: 'undoing' },
        {
          guard: 'approved',
          target: 'done',
          actions: assign({ result: ({ context }) => approvedResult(context) }),
        },
        {
          guard: 'declined',
          target: 'done',
          actions: assign({
            result: ({ context }) =>
              withCard(
                {
                  kind: 'declined' as const,
                  transactionId: context.outcome?.transactionId ?? '',
                  reason: context.outcome?.reason ?? 'DECLINED',
                },
                context.card,
              ),
          }),
        },
        {
          guard: 'rejected',
          target: 'done',
          actions: assign({
            result: ({ context }) =>
              withCard(
                {
                  kind: 'rejected' as const,
                  transactionId: context.outcome?.transactionId ?? '',
                  reason: context.outcome?.reason ?? 'INVALID_REQUEST',
                  ...(context.outcome?.notSent === true ? { notSent: true as const } : {}),
                },
                context.card,
              ),
          }),
        },
        { guard: 'resolvable', target: 'awaitingResolution' },
        {
          // Nothing to resolve it with (a reversal or void), or no transactionId came back: the journal's recovery
          // owns the entry.
          target: 'done',
          actions: assign({
            result: ({ context }) =>
              withCard(
                {
                  kind: 'unknown' as const,
                  transactionId: context.outcome?.transactionId ?? context.sentTransactionId ?? '',
                  resolved: false,
                },
                context.card,
              ),
          }),
        },
      ],
    },
    undoing: {
      tags: ['processing'],
      invoke: {
        src: 'submit',
        input: ({ context }) => compensationRequest(context),
        onDone: {
          target: 'done',
          actions: assign({
            result: ({ context, event }) => {
              const undo = event.output.kind;
              if (undo === 'approved')
                return context.cancelRequested
                  ? withCard({ kind: 'cancelled' as const, undone: true }, context.card)
                  : withCard(
                      {
                        kind: 'declined' as const,
                        transactionId: context.outcome?.transactionId ?? '',
                        reason: 'PARTIAL_APPROVAL',
                      },
                      context.card,
                    );
              const transactionId = context.outcome?.transactionId ?? '';
              // Not undone, and never told "declined" or "cancelled": a customer who saw that would pay again on
              // top of what stands. Its outcome unknown, the undo is recovery's: being checked.
              if (undo === 'unknown')
                return withCard({ kind: 'unknown' as const, transactionId, resolved: false }, context.card);
              // Refused: the original stands. Approved in full (the customer cancelled while it was out), it is a
              // payment like any other, paid or held; approved for part, the customer must see the operator.
              if (context.outcome?.partial !== true) return approvedResult(context);
              return withCard(
                { kind: 'unknown' as const, transactionId, resolved: false, notUndone: true },
                context.card,
              );
            },
          }),
        },
        onError: {
          target: 'done',
          actions: assign({
            result: ({ context }) =>
              withCard(
                {
                  kind: 'unknown' as const,
                  transactionId: context.outcome?.transactionId ?? '',
                  resolved: false,
                },
                context.card,
              ),
          }),
        },
      },
    },
    awaitingResolution: {
      tags: ['processing'],
      // gateway.md §7: no waiting time is documented for voids, so a timeout void goes at once.
      always: { guard: 'voidResolution', target: 'resolving' },
      after: { resolutionDelay: { target: 'resolving' } },
    },
    resolving: {
      tags: ['processing'],
      entry: assign({ resolutionAttempts: ({ context }) => context.resolutionAttempts + 1 }),
      invoke: {
        src: 'submit',
        input: ({ context }) => resolutionRequest(context),
        onDone: [
          {
            guard: ({ event }) => event.output.kind === 'approved',
            target: 'done',
            actions: assign({
              result: ({ context }) =>
                withCard(
                  {
                    kind: 'unknown' as const,
                    transactionId: context.sentTransactionId ?? '',
                    resolved: true,
                  },
                  context.card,
                ),
            }),
          },
          { guard: 'canRetryResolution', target: 'retryingResolution' },
          { target: 'unresolved' },
        ],
        onError: [{ guard: 'canRetryResolution', target: 'retryingResolution' }, { target: 'unresolved' }],
      },
    },
    retryingResolution: {
      tags: ['processing'],
      after: { resolutionRetry: { target: 'resolving' } },
    },
    unresolved: {
      tags: ['processing'],
      always: {
        target: 'done',
        actions: assign({
          result: ({ context }) =>
            withCard(
              { kind: 'unknown' as const, transactionId: context.sentTransactionId ?? '', resolved: false },
              context.card,
            ),
        }),
      },
    },
    done: { type: 'final', tags: ['processing'] },
  },
});

export type TransactionMachine = typeof transactionMachine;
