import { assign, enqueueActions, sendTo, setup } from 'xstate';
import type { AmountParam, MessageRef } from '../i18n/index.js';
import { dccReceiptLines, offerAtAuthorizationRate } from './dcc.js';
import type {
  CardType,
  DccOfferSummary,
  DccSelection,
  HoldCapture,
  HoldRelease,
  ReceiptData,
} from './effects.js';
import {
  anotherCardAfterDecline,
  canPresentCardAgain,
  cardAttemptView,
  earlierAttemptCleared,
  emptyView,
  failureText,
  presentCardAgain,
  type FlowEvent,
  type FlowInput,
  type ViewContext,
} from './models.js';
import { refusedForNow, reversalRefusalReleased } from '../vocabulary/services.js';
import { commentsFor } from './services.js';
import type { FlowSettings } from './settings.js';
import {
  feeForStay,
  meterAuthorizationMinor,
  priceForDuration,
  stayMinutesBetween,
  TariffError,
} from './tariff.js';
import {
  capturedBy,
  transactionMachine,
  type TransactionRequest,
  type TransactionResult,
} from './transaction.js';
import type { FlowClock } from './effects.js';
import { payByLinkMachine, payByLinkState, sessionReference } from './pay-by-link.js';
import { MAX_TIMER_DELAY_MS } from '../vocabulary/timer.js';

/**
 * On-street meter (spec 001, "Card-present parking": pre-authorize the maximum time, capture the actual, reverse the
 * unused, incremental authorization on extension).
 *
 * idle → choose-duration → confirm → pre-authorization (Parking Auth) → session. What is pre-authorized follows
 * tariff.meterAuthorization (src/flows/tariff.ts, `meterAuthorizationMinor`):
 * - `maximum` (the default, spec 001): the price of the maximum stay, whatever duration was chosen. The chosen
 *   duration is the time shown as paid for; an EXTEND within the maximum stay is covered by the hold and sends nothing.
 * - `chosen` (markets that sell fixed time): the price of the chosen duration. EXTEND buys more time with an
 *   incremental authorization (Parking Incremental Auth), or with a second pre-authorization when the configuration or
 *   the card's network allows no incrementals.
 * No EXTEND goes beyond the maximum stay. END_SESSION charges the fee of the actual stay (an overstay at its real
 * price), never more than is held: a capture of each hold (Parking Capture, or Parking Capture Less Than Auth when
 * lower: the gateway reverses the rest itself, spec 001 and gateway.md §7) or a REVERSAL of a hold nothing is owed on.
 * A capture refused for now or never sent (`capturesFee`) keeps its hold: the host captures it again within the hold's
 * capture window; one refused for good releases the hold, the fee recorded for the operator.
 * A session left open for the capture window is reversed automatically (`captureWindow` delay,
 * tariff.captureWindowMinutes). Each settlement step names the holds the settlement reverses after it, whatever its
 * outcome (`alsoReleases`, never sent): the host writes their reversals as durable follow-ups before the step is sent,
 * so that a terminal stopped while a capture (or the local sale below) is out, or before the reversal of another hold,
 * releases that hold at its next start rather than at the end of its capture window. A fee spread over more than one
 * hold names the captures of the later holds the same way (`alsoCaptures`): a terminal stopped between the capture of
 * one hold and that of the next captures the next one's part at its next start, instead of losing it with a hold
 * reversed.
 *
 * The currency choice again at completion (config `dcc.choiceAtCompletion`; reference/kiosk.md §1: some acquirers ask
 * for it at the pre-authorization and again at completion). When a hold was converted (DCC indicator 1) and the fee
 * owed on it at END_SESSION is above zero, the meter shows the choice for that fee: the local amount and the card
 * amount at the authorization's rate (spec 001: a capture uses the authorization's exchange rate), with the same rate,
 * markup and disclaimer (`choosingFeeCurrency`). Then:
 * - the card's currency: the converted capture, as without the choice;
 * - the local currency, CANCEL, or no choice in time (the host's time limit cancels it; a timeout or cancel never
 *   falls back to conversion): the card is asked for again and the fee is taken as a new sale in the local currency
 *   (DCC indicator 3, no new offer), and whatever that sale's outcome, the converted hold is then reversed in full with its conversion terms. A converted
 *   hold cannot be captured in the local currency (spec 001: a DCC capture carries the authorization's field set), so
 *   the sale comes first — the hold still guarantees nothing is lost while it is out — and the reversal always follows
 *   it: no path leaves the hold captured as well as the fee sold, and none captures in the card's currency without
 *   the customer choosing it at completion.
 * - the card not presented again (cancel, read timeout, card error), the sale declined or its outcome unknown: the
 *   hold is reversed all the same and the fee is not collected. The result screen says so and the journal records the
 *   sale's outcome and the reversal. Capturing the converted hold instead would take the card currency after the
 *   customer declined it at completion (or, for an unknown sale, could charge twice): the terminal prefers the
 *   uncollected fee.
 */

/** One authorization held for the session. */
export interface MeterHold {
  transactionId: string;
  gatewayId: string;
  /** Authorized total, minor units (grows with incrementals). */
  authorizedMinor: number;
  cardRef: string;
  cardType: CardType | null;
  maskedPan: string;
  /** EMV contact pre-authorization: capture and reversal carry the tags (spec 001). */
  includeEmvTags: boolean;
  /** EMV data was read (contact or contactless): a reversal carries the tags (gateway.md §7). */
  chip: boolean;
  /**
   * Converted pre-authorization (DCC indicator 1): its capture and reversal use the authorization's rate (spec 001,
   * DCC capture and refund); the host converts the local amounts with it.
   */
  dcc?: DccSelection & { indicator: '1' };
}

/** The converted terms a follow-on of this hold carries, if any. */
function holdTerms(hold: MeterHold): { dcc?: DccSelection } {
  return hold.dcc !== undefined ? { dcc: hold.dcc } : {};
}

export interface MeterContext extends ViewContext {
  settings: FlowSettings;
  clock: FlowClock;
  /** The terminal's own clock ({@link FlowInput.wallClock}): the currency choice reads its offer's expiry on it. */
  wallClock: FlowClock;
  /** Minutes chosen on the duration screen (or pending extension). */
  minutes: number;
  /** Minutes paid for in the session. */
  paidMinutes: number;
  holds: MeterHold[];
  /** Epoch ms of the first authorization: start of the stay and of the capture window. */
  startedAtMs: number | undefined;
  /** Fee of the actual stay, capped at the authorized total, minor units. */
  feeMinor: number;
  capturedMinor: number;
  settleIndex: number;
  settleMode: 'end' | 'expired';
  settleFailures: number;
  /**
   * A reversal of the session's holds was refused for now (the vocabulary's `refusalPasses`), provably never reached the
   * gateway (`notSent`), or its outcome is unknown: no failure of the customer's — the host sends it again
   * (`releases`), or recovery reverses the authorization — and the end says the hold will be released (with what was
   * charged, when something was).
   */
  releaseLater: boolean;
  /**
   * Fee whose capture was refused for now (the vocabulary's `refusalPasses`) or provably never reached the gateway
   * (`notSent`), minor units: the hold is kept, and the host captures it again (`capturesFee`) within the hold's capture
   * window; the end says the fee will be charged shortly.
   */
  capturedLaterMinor: number;
  /** Card reads to release when the session is over. */
  cardRefs: string[];
  /** The hold (settleIndex) whose fee currency was chosen at completion; -1 for none yet. */
  feeChoiceIndex: number;
  /** The choice at completion on `choosingFeeCurrency`: the fee at the authorization's rate. */
  dccChoice: DccOfferSummary | undefined;
  /** Fee the customer was asked to pay in the local currency at completion and did not pay, minor units. */
  uncollectedMinor: number;
  /**
   * Fee a capture or the local sale did not take while no money moved (declined, refused, the card not presented
   * again), or the part a capture answered for less than asked did not take: with `links.payLater` it becomes a payment
   * link at the end (pay later), minor units.
   */
  owedMinor: number;
  /**
   * When the customer ended the session while its extension was being answered (incrementing, reauthorizing): the
   * session ends as soon as that answer is in, its stay counted to this instant. Undefined otherwise.
   */
  endRequestedAtMs: number | undefined;
}

type Ctx = MeterContext;

function totalAuthorized(context: Ctx): number {
  return context.holds.reduce((sum, h) => sum + h.authorizedMinor, 0);
}

/**
 * The holds after an approved incremental authorization of the last one: gateway.md §7, the answer's authorizedAmount
 * is the new total of the authorization.
 */
function withIncrement(context: Ctx, newTotalMinor: number): MeterHold[] {
  const holds = context.holds.slice();
  const hold = holds.pop() as MeterHold;
  holds.push({ ...hold, authorizedMinor: newTotalMinor });
  return holds;
}

/** What the hold at `index` (default: settleIndex) gets: the part of the fee it covers (0 → reversal). */
function captureShare(context: Ctx, index: number = context.settleIndex): number {
  const before = context.holds.slice(0, index).reduce((s, h) => s + h.authorizedMinor, 0);
  const hold = context.holds[index];
  if (hold === undefined) return 0;
  return Math.max(0, Math.min(hold.authorizedMinor, context.feeMinor - before));
}

/** The release of a hold as a settlement step names it (`ServiceRequest.alsoReleases`, effects.ts). */
function releaseOf(hold: MeterHold): HoldRelease {
  return {
    original: { gatewayId: hold.gatewayId, transactionId: hold.transactionId, service: 'preauth' },
    amountMinor: hold.authorizedMinor,
  };
}

/**
 * The holds after settleIndex that the settlement reverses, whatever the outcome of the step at settleIndex: those the
 * fee leaves nothing of (the fee is taken from the holds in order, so what a later hold covers does not depend on what
 * an earlier one's capture took). A step passes them on (`alsoReleases`), and the host writes their reversals as
 * durable follow-ups before the step is sent: a crash before the machine's own reversal of them leaves them to the
 * next start, not held on the card until their capture window ends.
 */
function releasedAfter(context: Ctx): HoldRelease[] {
  return context.holds
    .map((hold, index) => ({ hold, index }))
    .filter(({ index }) => index > context.settleIndex && captureShare(context, index) === 0)
    .map(({ hold }) => releaseOf(hold));
}

/** `alsoReleases` of a settlement step that releases `released` after it (nothing when there are none). */
function alsoReleases(released: HoldRelease[]): { alsoReleases?: HoldRelease[] } {
  return released.length > 0 ? { alsoReleases: released } : {};
}

/**
 * The holds after settleIndex that the settlement captures, whatever the outcome of the step at settleIndex: a fee
 * spread over more than one hold, the part each covers (the fee is taken from the holds in order, and a step that does
 * not stand does not move the next hold's part onto it). A step passes them on (`alsoCaptures`), and the host writes
 * their captures as durable follow-ups before the step is sent: a crash before the machine's own capture of them
 * leaves that part of the fee to the next start, not lost with a hold reversed at the end of its capture window. A
 * converted hold that asks for the currency again at completion is not among them: only the customer chooses how its
 * fee is paid, and with nobody to choose it is released.
 */
function capturedAfter(context: Ctx): HoldCapture[] {
  return context.holds
    .map((hold, index) => ({ hold, index, share: captureShare(context, index) }))
    .filter(
      ({ index, share }) => index > context.settleIndex && share > 0 && !asksCurrencyAgainAt(context, index),
    )
    .map(({ hold, share }) => ({
      original: { gatewayId: hold.gatewayId, transactionId: hold.transactionId, service: 'preauth' as const },
      amountMinor: share,
      includeEmvTags: hold.includeEmvTags,
    }));
}

/**
 * What a settlement step passes on of the holds after it: the releases (`alsoReleases`) and the captures
 * (`alsoCaptures`) its machine sends next, nothing of what there is none.
 */
function nextSteps(
  context: Ctx,
  released: HoldRelease[] = releasedAfter(context),
): { alsoReleases?: HoldRelease[]; alsoCaptures?: HoldCapture[] } {
  const captured = capturedAfter(context);
  return { ...alsoReleases(released), ...(captured.length > 0 ? { alsoCaptures: captured } : {}) };
}

/**
 * The converted hold at settleIndex asks for the currency again before its capture (config dcc.choiceAtCompletion):
 * the session ended at the terminal (not by the capture window), a fee is owed on it, and the customer has not chosen
 * for it yet.
 */
function asksCurrencyAgain(context: Ctx): boolean {
  return asksCurrencyAgainAt(context, context.settleIndex);
}

/** Whether the hold at `index` asks for the currency again before its capture (see {@link asksCurrencyAgain}). */
function asksCurrencyAgainAt(context: Ctx, index: number): boolean {
  const hold = context.holds[index];
  return (
    context.settings.dcc.choiceAtCompletion === true &&
    context.settleMode === 'end' &&
    hold?.dcc !== undefined &&
    context.feeChoiceIndex !== index &&
    captureShare(context, index) > 0
  );
}

/** What is left of the capture window, ms (0 once it is over). */
function captureWindowLeftMs(context: Ctx): number {
  return Math.max(0, (context.startedAtMs ?? 0) + context.settings.captureWindowMs - context.clock.now());
}

function currentHold(context: Ctx): MeterHold {
  const hold = context.holds[context.settleIndex];
  if (hold === undefined) throw new RangeError('no hold at settleIndex');
  return hold;
}

function lastHold(context: Ctx): MeterHold | undefined {
  return context.holds.at(-1);
}

function priceOr(settings: FlowSettings, minutes: number): number | undefined {
  try {
    return priceForDuration(settings.tariff, minutes);
  } catch (e) {
    if (e instanceof TariffError) return undefined;
    throw e;
  }
}

function money(context: Ctx, minor: number): AmountParam {
  return { minor, currency: context.settings.currency };
}

/** The confirm screen: the chosen time, its price and — when it differs — what the card is asked to hold. */
function confirmText(context: Ctx, minutes: number, holdMinor: number): MessageRef {
  const price = money(context, priceOr(context.settings, minutes) ?? 0);
  switch (context.settings.tariff.meterAuthorization) {
    case 'maximum':
      return {
        key: 'meter.confirmHoldMaximum',
        params: {
          minutes,
          price,
          held: money(context, holdMinor),
          maxMinutes: context.settings.tariff.maxStayMinutes,
        },
      };
    case 'chosen':
      return { key: 'meter.confirm', params: { minutes, price } };
  }
}

/**
 * The session screen, opened (`added` undefined) or extended by `added` minutes: what is held and what the time paid
 * for costs (the fee of the actual stay is charged).
 */
function sessionText(context: Ctx, heldMinor: number, paidMinutes: number, added?: number): MessageRef {
  switch (context.settings.tariff.meterAuthorization) {
    case 'maximum': {
      const params = {
        held: money(context, heldMinor),
        minutes: paidMinutes,
        price: money(context, priceOr(context.settings, paidMinutes) ?? 0),
      };
      return added === undefined
        ? { key: 'meter.sessionOpenHeld', params }
        : { key: 'meter.extendedHeld', params: { ...params, added } };
    }
    case 'chosen':
      return added === undefined
        ? { key: 'meter.sessionOpen' }
        : { key: 'meter.extended', params: { added } };
  }
}

/**
 * What a receipt of the session's fee says (kiosk.md §3: the paid duration): the model, and, once the session has
 * ended, the stay the fee was for — from its start to its end, in whole minutes begun, as `endSession` priced it.
 */
function sessionReceiptLines(context: Ctx): ReceiptData['lines'] {
  const lines = [{ label: 'Parking', value: 'On-street meter' }];
  const session = context.session;
  if (session?.endedAtMs !== undefined && session.endedAtMs >= session.startedAtMs)
    lines.push({ label: 'Stay', value: `${stayMinutesBetween(session.startedAtMs, session.endedAtMs)} min` });
  return lines;
}

/** The session as the screens show it: open (the time paid for), or ended by the customer at `endedAtMs`. */
function sessionView(context: Ctx, endedAtMs?: number): ViewContext['session'] {
  if (context.startedAtMs === undefined) return undefined;
  const first = context.holds[0];
  return {
    id: first?.transactionId ?? '',
    startedAtMs: context.startedAtMs,
    ...(endedAtMs === undefined
      ? { paidUntilMs: context.startedAtMs + context.paidMinutes * 60_000 }
      : { endedAtMs }),
    heldMinor: totalAuthorized(context),
  };
}

/** The text of a session closed (see the `settled` state). */
function endedText(context: Ctx): MessageRef {
  if (context.capturedLaterMinor > 0)
    return {
      key: 'meter.feeChargedLater',
      params: { fee: money(context, context.capturedMinor + context.capturedLaterMinor) },
    };
  if (context.capturedMinor > 0)
    return context.releaseLater
      ? { key: 'meter.chargedHoldReleasedLater', params: { charged: money(context, context.capturedMinor) } }
      : { key: 'meter.thankYou' };
  return { key: context.releaseLater ? 'meter.holdReleasedLater' : 'meter.holdReleased' };
}

/**
 * The session's text after an extension that did not happen (its holds untouched; EXTEND asks again): what went wrong
 * with the card read when the customer can put it right ({@link canPresentCardAgain}: the words of every failed read,
 * `failureText`, "present it again and hold it until the reader beeps"), so that the next attempt presents the card
 * properly; otherwise that the extension was not approved. The reason code is the result's either way.
 */
function extensionFailureText(result: TransactionResult): Pick<ViewContext, 'message' | 'reason'> {
  const failed = failureText(result);
  return result.kind === 'card-error' && canPresentCardAgain(result.code)
    ? failed
    : { ...failed, message: { key: 'meter.extensionNotApproved' } };
}

function preauthRequest(context: Ctx, amountMinor: number): TransactionRequest {
  return {
    service: 'preauth',
    comments: commentsFor('preauth', context.settings),
    amountMinor,
    read: { purpose: 'preauth', transactionType: '00', swipeFallback: true },
    includeEmvTags: false,
    acceptPartial: false,
    cancellable: true,
    offerDcc: true,
  };
}

function holdFrom(result: TransactionResult & { kind: 'approved' }): MeterHold {
  const card = result.card;
  return {
    transactionId: result.transactionId,
    gatewayId: result.gatewayId ?? '',
    authorizedMinor: result.authorizedMinor,
    cardRef: card?.cardRef ?? '',
    cardType: card?.cardType ?? null,
    maskedPan: card?.maskedPan ?? '',
    // spec 001: for EMV contact pre-authorizations the follow-on capture must include the EMV tags.
    includeEmvTags: card?.entryMode === 'contact' && card.chip,
    chip: card?.chip === true,
    ...(result.dcc?.indicator === '1' ? { dcc: result.dcc } : {}),
  };
}

/**
 * Pay by phone (issue 14): the price of the time chosen (nothing is held on a card), as a payment link; paid → the
 * session starts for that time; cancelled, timed out or no link → back to the choice between card and phone.
 */
const payingByPhone = payByLinkState({
  purpose: 'fee',
  link: (context: MeterContext) => ({
    reference: sessionReference('METER', context.clock.now()),
    amountMinor: priceOr(context.settings, context.minutes) ?? 0,
  }),
  receiptLines: (context) => [
    { label: 'Parking', value: 'On-street meter' },
    { label: 'Stay', value: `${context.minutes} min` },
  ],
  paid: {
    target: 'linkSession',
    note: (context, paid) => {
      const now = context.clock.now();
      return {
        paidMinutes: context.minutes,
        startedAtMs: now,
        amountMinor: paid.amountMinor,
        session: { id: paid.linkId, startedAtMs: now, paidUntilMs: now + context.minutes * 60_000 },
        message: { key: 'payByPhone.sessionPaid', params: { minutes: context.minutes } },
        reason: 'PAID_BY_LINK',
      };
    },
  },
  notPaid: 'confirming',
});

const isApproved = (output: TransactionResult): output is TransactionResult & { kind: 'approved' } =>
  output.kind === 'approved';

export const meterMachine = setup({
  types: {
    context: {} as MeterContext,
    input: {} as FlowInput,
    events: {} as FlowEvent,
  },
  actors: { transaction: transactionMachine, payByLink: payByLinkMachine },
  actions: {
    issueReceipt: (_, _receipt: ReceiptData) => {},
    noteLink: assign((_, update: Partial<MeterContext>) => update),
    releaseCard: (_, _params: { cardRef: string }) => {},
    noteCard: assign(({ context }, result: TransactionResult) => ({
      cardRefs: result.card !== undefined ? [...context.cardRefs, result.card.cardRef] : context.cardRefs,
    })),
    /**
     * END_SESSION: the fee of the actual stay (to now, or to when the customer asked while an extension was being
     * answered), never above the authorized total (spec 001, Limits: the meter sold at most that much time).
     */
    endSession: assign(({ context }) => {
      const endedAtMs = context.endRequestedAtMs ?? context.clock.now();
      const stay = stayMinutesBetween(context.startedAtMs ?? endedAtMs, endedAtMs);
      return {
        feeMinor: Math.min(feeForStay(context.settings.tariff, stay), totalAuthorized(context)),
        settleIndex: 0,
        settleMode: 'end' as const,
        settleFailures: 0,
        releaseLater: false,
        capturedLaterMinor: 0,
        capturedMinor: 0,
        feeChoiceIndex: -1,
        uncollectedMinor: 0,
        endRequestedAtMs: undefined,
        // Ended: the screens show the end, no longer the time the hold covered (the fee is for the stay).
        session: sessionView(context, endedAtMs),
      };
    }),
    /** END_SESSION while an extension is being answered: kept, and carried out once the answer is in. */
    endWhenAnswered: assign(({ context }) => ({ endRequestedAtMs: context.clock.now() })),
    noteFailure: assign(({ context }, result: TransactionResult) => ({
      ...failureText(result),
      cardRefs: result.card !== undefined ? [...context.cardRefs, result.card.cardRef] : context.cardRefs,
      maskedPan: result.card?.maskedPan ?? context.maskedPan,
    })),
  },
  delays: {
    resultScreen: ({ context }) => context.settings.timing.resultScreenMs,
    // At most as long as a timer can wait: a longer window (card networks allow pre-authorizations of up to 30 days)
    // would otherwise fire at once (Node sets an overlong timeout to 1 ms); the session waits again until it is over.
    captureWindow: ({ context }) => Math.min(captureWindowLeftMs(context), MAX_TIMER_DELAY_MS),
    // A session paid by phone ends by itself when its time is up.
    paidTimeUp: ({ context }) =>
      Math.max(0, (context.startedAtMs ?? 0) + context.paidMinutes * 60_000 - context.clock.now()),
  },
  guards: {
    asksCurrencyAgain: ({ context }) => asksCurrencyAgain(context),
    /** The customer has not yet ended the session while its extension is being answered (the first press counts). */
    notEndingYet: ({ context }) => context.endRequestedAtMs === undefined,
    payByPhoneOffered: ({ context }) =>
      context.settings.payByPhone !== undefined && (priceOr(context.settings, context.minutes) ?? 0) > 0,
    // Only the two amounts shown can be chosen; anything else is ignored and the screen stays (no default).
    choseFeeInCardCurrency: ({ context, event }) =>
      event.type === 'CHOOSE_CURRENCY' &&
      context.dccChoice !== undefined &&
      event.currency === context.dccChoice.billingCurrency,
    choseFeeInLocalCurrency: ({ context, event }) =>
      event.type === 'CHOOSE_CURRENCY' &&
      context.dccChoice !== undefined &&
      event.currency === context.dccChoice.localCurrency,
    validDuration: ({ context, event }) => {
      if (event.type !== 'CHOOSE_DURATION') return false;
      if (!Number.isSafeInteger(event.minutes) || event.minutes <= 0) return false;
      const price = priceOr(context.settings, event.minutes);
      return price !== undefined && price > 0;
    },
    // Never beyond the maximum stay: priceForDuration refuses a duration above tariff.maxStayMinutes.
    validExtension: ({ context, event }) =>
      event.type === 'EXTEND' &&
      Number.isSafeInteger(event.minutes) &&
      event.minutes > 0 &&
      priceOr(context.settings, context.paidMinutes + event.minutes) !== undefined,
    // The holds already cover the longer stay. With tariff.meterAuthorization `maximum` this is every valid
    // extension (the hold is the price of the maximum stay, and validExtension keeps the stay within it): no
    // incremental authorization is needed (spec 001: pre-authorize the maximum time).
    extensionCoveredByHolds: ({ context }) =>
      (priceOr(context.settings, context.paidMinutes + context.minutes) ?? 0) <= totalAuthorized(context),
    incrementalAllowed: ({ context }) => {
      const hold = lastHold(context);
      return (
        context.settings.allowIncremental &&
        hold !== undefined &&
        // spec 001 describes no converted incremental: an increment converted separately could make the converted
        // capture exceed the converted total by a rounding unit, so a converted hold is extended with a new
        // pre-authorization (with its own offer) instead.
        hold.dcc === undefined &&
        hold.cardType !== null &&
        context.settings.incrementalCardTypes.includes(hold.cardType)
      );
    },
    allSettled: ({ context }) => context.settleIndex >= context.holds.length,
    somethingToCapture: ({ context }) => captureShare(context) > 0,
    settleFailed: ({ context }) => context.settleFailures > 0,
    expired: ({ context }) => context.settleMode === 'expired',
  },
}).createMachine({
  id: 'meter',
  context: ({ input }) => ({
    ...emptyView(),
    settings: input.settings,
    clock: input.clock,
    wallClock: input.wallClock ?? input.clock,
    minutes: 0,
    paidMinutes: 0,
    holds: [],
    startedAtMs: undefined,
    feeMinor: 0,
    capturedMinor: 0,
    settleIndex: 0,
    settleMode: 'end',
    settleFailures: 0,
    releaseLater: false,
    capturedLaterMinor: 0,
    cardRefs: [],
    feeChoiceIndex: -1,
    dccChoice: undefined,
    uncollectedMinor: 0,
    owedMinor: 0,
    endRequestedAtMs: undefined,
  }),
  initial: 'idle',
  states: {
    idle: {
      tags: ['idle'],
      entry: [
        enqueueActions(({ context, enqueue }) => {
          for (const cardRef of context.cardRefs) enqueue({ type: 'releaseCard', params: { cardRef } });
        }),
        assign(({ context }) => ({
          ...emptyView({ key: 'meter.chooseDuration' }),
          minutes: 0,
          paidMinutes: 0,
          holds: [],
          startedAtMs: undefined,
          feeMinor: 0,
          capturedMinor: 0,
          settleIndex: 0,
          settleMode: 'end' as const,
          settleFailures: 0,
          releaseLater: false,
          capturedLaterMinor: 0,
          cardRefs: [],
          feeChoiceIndex: -1,
          dccChoice: undefined,
          uncollectedMinor: 0,
          owedMinor: 0,
          settings: context.settings,
          clock: context.clock,
        })),
      ],
      on: { START: 'choosingDuration' },
    },
    choosingDuration: {
      tags: ['choose-duration'],
      on: {
        CHOOSE_DURATION: {
          guard: 'validDuration',
          target: 'confirming',
          actions: assign(({ context, event }) => {
            // What the card is asked to hold (tariff.meterAuthorization): the confirm screen shows it as the amount.
            const holdMinor = meterAuthorizationMinor(context.settings.tariff, event.minutes);
            return {
              minutes: event.minutes,
              amountMinor: holdMinor,
              message: confirmText(context, event.minutes, holdMinor),
            };
          }),
        },
        CANCEL: 'idle',
      },
    },
    confirming: {
      tags: ['confirm'],
      on: {
        CONFIRM: 'authorizing',
        PAY_BY_LINK: { guard: 'payByPhoneOffered', target: 'payingByLink' },
        CANCEL: 'idle',
      },
    },
    payingByLink: {
      ...payingByPhone,
      // After a declined card: neither on the phone's screens nor in the session it pays for is that card shown.
      entry: [{ type: 'noteLink', params: earlierAttemptCleared() }, payingByPhone.entry],
      on: { CANCEL: { actions: sendTo('payByLink', { type: 'CANCEL' }) } },
    },
    linkSession: {
      // Paid in advance by phone: nothing is held on a card, so nothing is captured or reversed at the end.
      tags: ['session'],
      on: {
        END_SESSION: {
          target: 'ended',
          actions: assign({ message: { key: 'meter.thankYou' }, reason: 'APPROVED' }),
        },
      },
      after: { paidTimeUp: 'idle' },
    },
    authorizing: {
      // Entered from the confirm screen, again with the card after a read the customer can put right (`failed`), or
      // with another card after a decline (`declined`): what is held and what the time costs, nothing of the earlier
      // attempt.
      entry: assign(({ context }) =>
        cardAttemptView(confirmText(context, context.minutes, context.amountMinor ?? 0)),
      ),
      invoke: {
        id: 'transaction',
        src: 'transaction',
        input: ({ context }) => ({
          settings: context.settings,
          // The currency choice reads its offer's expiry on the terminal's own clock.
          wallClock: context.wallClock,
          request: preauthRequest(context, context.amountMinor ?? 0),
        }),
        onDone: [
          {
            guard: ({ event }) => isApproved(event.output),
            target: 'session',
            actions: assign(({ context, event }) => {
              const hold = holdFrom(event.output as TransactionResult & { kind: 'approved' });
              return {
                holds: [hold],
                cardRefs: [...context.cardRefs, hold.cardRef],
                maskedPan: hold.maskedPan,
                paidMinutes: context.minutes,
                startedAtMs: context.clock.now(),
                message: sessionText(context, hold.authorizedMinor, context.minutes),
                reason: 'APPROVED',
              };
            }),
          },
          {
            guard: ({ event }) => event.output.kind === 'cancelled',
            target: 'idle',
            actions: { type: 'noteCard', params: ({ event }) => event.output },
          },
          {
            guard: ({ event }) => event.output.kind === 'declined',
            target: 'declined',
            actions: { type: 'noteFailure', params: ({ event }) => event.output },
          },
          { target: 'failed', actions: { type: 'noteFailure', params: ({ event }) => event.output } },
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
    session: {
      tags: ['session'],
      entry: assign(({ context }) => ({
        session: sessionView(context),
        amountMinor: totalAuthorized(context),
      })),
      on: {
        EXTEND: {
          guard: 'validExtension',
          target: 'extending',
          actions: assign({ minutes: ({ event }) => event.minutes }),
        },
        END_SESSION: { target: 'settling', actions: 'endSession' },
      },
      // Ended while its extension was being answered: ends now that the answer is in.
      always: {
        guard: ({ context }) => context.endRequestedAtMs !== undefined,
        target: 'settling',
        actions: 'endSession',
      },
      after: {
        captureWindow: [
          // A window longer than one timer's wait: wait again for the rest of it.
          { guard: ({ context }) => captureWindowLeftMs(context) > 0, target: 'session', reenter: true },
          {
            target: 'settling',
            actions: assign({
              feeMinor: 0,
              settleIndex: 0,
              settleMode: 'expired' as const,
              settleFailures: 0,
              releaseLater: false,
              capturedLaterMinor: 0,
              capturedMinor: 0,
            }),
          },
        ],
      },
    },
    extending: {
      tags: ['processing'],
      always: [
        {
          guard: 'extensionCoveredByHolds',
          target: 'session',
          actions: assign(({ context }) => ({
            paidMinutes: context.paidMinutes + context.minutes,
            message: sessionText(
              context,
              totalAuthorized(context),
              context.paidMinutes + context.minutes,
              context.minutes,
            ),
            reason: 'APPROVED',
          })),
        },
        { guard: 'incrementalAllowed', target: 'incrementing' },
        { target: 'reauthorizing' },
      ],
    },
    incrementing: {
      invoke: {
        id: 'transaction',
        src: 'transaction',
        input: ({ context }) => {
          const hold = lastHold(context) as MeterHold;
          const additional =
            (priceOr(context.settings, context.paidMinutes + context.minutes) ?? 0) -
            totalAuthorized(context);
          return {
            settings: context.settings,
            request: {
              service: 'incremental' as const,
              comments: commentsFor('incremental', context.settings),
              amountMinor: additional,
              original: {
                gatewayId: hold.gatewayId,
                transactionId: hold.transactionId,
                service: 'preauth' as const,
              },
              cardRef: hold.cardRef,
              includeEmvTags: false,
              acceptPartial: false,
              cancellable: false,
            },
          };
        },
        onDone: [
          {
            guard: ({ context, event }) =>
              isApproved(event.output) &&
              totalAuthorized({ ...context, holds: withIncrement(context, event.output.authorizedMinor) }) >=
                (priceOr(context.settings, context.paidMinutes + context.minutes) ?? Infinity),
            target: 'session',
            actions: assign(({ context, event }) => ({
              holds: withIncrement(
                context,
                (event.output as TransactionResult & { kind: 'approved' }).authorizedMinor,
              ),
              paidMinutes: context.paidMinutes + context.minutes,
              message: { key: 'meter.extended', params: { added: context.minutes } },
              reason: 'APPROVED',
            })),
          },
          {
            // Approved for less than asked: the new total does not pay for the longer stay. The hold keeps what was
            // approved (the capture at the end takes the fee of the time paid and the gateway releases the rest), and
            // no time is added: time shown as paid for must be covered by what is held.
            guard: ({ event }) => isApproved(event.output),
            target: 'session',
            actions: assign(({ context, event }) => ({
              holds: withIncrement(
                context,
                (event.output as TransactionResult & { kind: 'approved' }).authorizedMinor,
              ),
              message: { key: 'meter.extensionNotApproved' },
              reason: 'PARTIAL_APPROVAL',
            })),
          },
          { target: 'session', actions: assign(({ event }) => extensionFailureText(event.output)) },
        ],
      },
      // The increment asks nothing of the customer and cannot be cancelled once out: the end waits for its answer.
      on: { END_SESSION: { guard: 'notEndingYet', actions: 'endWhenAnswered' } },
    },
    reauthorizing: {
      invoke: {
        id: 'transaction',
        src: 'transaction',
        input: ({ context }) => ({
          settings: context.settings,
          // The currency choice reads its offer's expiry on the terminal's own clock.
          wallClock: context.wallClock,
          request: preauthRequest(
            context,
            (priceOr(context.settings, context.paidMinutes + context.minutes) ?? 0) -
              totalAuthorized(context),
          ),
        }),
        onDone: [
          {
            guard: ({ event }) => isApproved(event.output),
            target: 'session',
            actions: assign(({ context, event }) => {
              const hold = holdFrom(event.output as TransactionResult & { kind: 'approved' });
              return {
                holds: [...context.holds, hold],
                cardRefs: [...context.cardRefs, hold.cardRef],
                paidMinutes: context.paidMinutes + context.minutes,
                message: { key: 'meter.extended', params: { added: context.minutes } },
                reason: 'APPROVED',
              };
            }),
          },
          {
            target: 'session',
            actions: [
              { type: 'noteCard', params: ({ event }) => event.output },
              assign(({ event }) => extensionFailureText(event.output)),
            ],
          },
        ],
      },
      on: {
        CANCEL: { actions: sendTo('transaction', { type: 'CANCEL' }) },
        // Ended instead: the extension is cancelled if it still can be (no card taken yet), and the session ends once
        // its answer is in.
        END_SESSION: {
          guard: 'notEndingYet',
          actions: [sendTo('transaction', { type: 'CANCEL' }), 'endWhenAnswered'],
        },
        // The currency choice belongs to the transaction (its `choose-currency` state); it ignores it elsewhere.
        CHOOSE_CURRENCY: {
          actions: sendTo('transaction', ({ event }) => ({
            type: 'CHOOSE_CURRENCY' as const,
            currency: event.currency,
          })),
        },
      },
    },
    settling: {
      tags: ['processing'],
      always: [
        { guard: 'allSettled', target: 'settled' },
        { guard: 'asksCurrencyAgain', target: 'choosingFeeCurrency' },
        { guard: 'somethingToCapture', target: 'capturing' },
        { target: 'reversing' },
      ],
    },
    choosingFeeCurrency: {
      // reference/kiosk.md §1: an active choice, never a default; the screen is the one of the pre-authorization
      // (the same rules), for the fee at the authorization's rate. No time limit of its own, as the transaction's
      // choice has none: the host times it as every input screen (WCAG 2.2.1: "Do you need more time?" first, longer
      // in accessibility mode), and nobody answering is a CANCEL.
      tags: ['choose-currency'],
      entry: assign(({ context }) => {
        const hold = currentHold(context);
        const fee = captureShare(context);
        return {
          dccChoice: offerAtAuthorizationRate(fee, (hold.dcc as NonNullable<MeterHold['dcc']>).offer),
          amountMinor: fee,
          message: { key: 'meter.chooseFeeCurrency' },
        };
      }),
      exit: assign(({ context }) => ({ dccChoice: undefined, feeChoiceIndex: context.settleIndex })),
      on: {
        CHOOSE_CURRENCY: [
          { guard: 'choseFeeInCardCurrency', target: 'capturing' },
          { guard: 'choseFeeInLocalCurrency', target: 'payingFeeLocally' },
        ],
        CANCEL: 'payingFeeLocally',
      },
    },
    payingFeeLocally: {
      // The fee as a new sale in the local currency: the converted hold cannot be captured in it. The customer
      // declined conversion (indicator 3); no new offer is asked for.
      entry: assign(({ context }) => ({
        message: { key: 'meter.payFeeLocally', params: { fee: money(context, captureShare(context)) } },
      })),
      invoke: {
        id: 'transaction',
        src: 'transaction',
        input: ({ context }) => ({
          settings: context.settings,
          request: {
            service: 'sale' as const,
            comments: commentsFor('sale', context.settings),
            amountMinor: captureShare(context),
            read: { purpose: 'sale' as const, transactionType: '00' as const, swipeFallback: true },
            includeEmvTags: false,
            acceptPartial: false,
            cancellable: true,
            dcc: { indicator: '3' as const },
            // Whatever the sale's outcome, the converted hold is reversed in full next, then the holds the fee
            // leaves nothing of.
            ...nextSteps(context, [releaseOf(currentHold(context)), ...releasedAfter(context)]),
          },
        }),
        onDone: [
          {
            guard: ({ event }) => isApproved(event.output),
            // The fee is paid: the converted hold is released in full (its reversal carries its conversion terms).
            target: 'reversing',
            actions: [
              { type: 'noteCard', params: ({ event }) => event.output },
              enqueueActions(({ context, event, enqueue }) => {
                const output = event.output as TransactionResult & { kind: 'approved' };
                enqueue({
                  type: 'issueReceipt',
                  params: {
                    service: 'sale',
                    comments: commentsFor('sale', context.settings),
                    amountMinor: captureShare(context),
                    currency: context.settings.currency,
                    ...(output.card !== undefined ? { maskedPan: output.card.maskedPan } : {}),
                    transactionId: output.transactionId,
                    ...(output.gatewayId !== undefined ? { gatewayId: output.gatewayId } : {}),
                    atMs: context.clock.now(),
                    lines: sessionReceiptLines(context),
                  },
                });
              }),
              assign(({ context }) => ({ capturedMinor: context.capturedMinor + captureShare(context) })),
            ],
          },
          {
            // Not paid (the card not presented again, declined, or unknown — recovery owns an unknown sale): the
            // converted hold is released all the same and the fee is not collected (see the machine's comment).
            target: 'reversing',
            actions: [
              { type: 'noteCard', params: ({ event }) => event.output },
              assign(({ context, event }) => ({
                uncollectedMinor: context.uncollectedMinor + captureShare(context),
                owedMinor: context.owedMinor + (event.output.kind === 'unknown' ? 0 : captureShare(context)),
              })),
            ],
          },
        ],
      },
      on: {
        CANCEL: { actions: sendTo('transaction', { type: 'CANCEL' }) },
      },
    },
    capturing: {
      tags: ['processing'],
      invoke: {
        id: 'transaction',
        src: 'transaction',
        input: ({ context }) => {
          const hold = currentHold(context);
          const amountMinor = captureShare(context);
          return {
            settings: context.settings,
            request: {
              service: 'capture' as const,
              comments: commentsFor('capture', context.settings, {
                amountMinor,
                authorizedMinor: hold.authorizedMinor,
              }),
              amountMinor,
              original: {
                gatewayId: hold.gatewayId,
                transactionId: hold.transactionId,
                service: 'preauth' as const,
              },
              cardRef: hold.cardRef,
              includeEmvTags: hold.includeEmvTags,
              acceptPartial: false,
              cancellable: false,
              // The session takes its fee from this hold: a refusal for now, or a capture that never left, is sent
              // again by the host within the hold's capture window, and the hold is kept for it (effects.ts).
              capturesFee: true,
              ...holdTerms(hold),
              ...nextSteps(context),
            },
          };
        },
        onDone: [
          {
            guard: ({ event }) => isApproved(event.output),
            target: 'settling',
            actions: [
              enqueueActions(({ context, event, enqueue }) => {
                const hold = currentHold(context);
                const output = event.output as TransactionResult & { kind: 'approved' };
                const capturedMinor = capturedBy(output);
                enqueue({
                  type: 'issueReceipt',
                  params: {
                    service: 'capture',
                    // The comments the capture was sent with (what was asked), the amount it took.
                    comments: commentsFor('capture', context.settings, {
                      amountMinor: captureShare(context),
                      authorizedMinor: hold.authorizedMinor,
                    }),
                    amountMinor: capturedMinor,
                    currency: context.settings.currency,
                    maskedPan: hold.maskedPan,
                    transactionId: output.transactionId,
                    ...(output.gatewayId !== undefined ? { gatewayId: output.gatewayId } : {}),
                    atMs: context.clock.now(),
                    lines: [...sessionReceiptLines(context), ...dccReceiptLines(hold.dcc, capturedMinor)],
                  },
                });
              }),
              assign(({ context, event }) => {
                const captured = capturedBy(event.output as TransactionResult & { kind: 'approved' });
                return {
                  capturedMinor: context.capturedMinor + captured,
                  // Captured for less than asked (the gateway releases the rest itself, spec 001): the shortfall is
                  // still owed, and pay later asks for it at the end of the session.
                  owedMinor: context.owedMinor + Math.max(0, captureShare(context) - captured),
                  settleIndex: context.settleIndex + 1,
                };
              }),
            ],
          },
          {
            // Refused for now, or never sent: nothing moved, and the same capture can go through later, while the hold
            // stands. Its outcome unknown: recovery voids it (a timeout void), which leaves the hold in place
            // (reference/gateway.md §7), or finds it standing. Either way the host wrote, with this outcome, the
            // follow-up that captures it (again, once nothing of it is unresolved: `capturesFee`), and releases the hold
            // when its capture window ends first: released here, the fee would be lost.
            guard: ({ event }) => refusedForNow(event.output) || event.output.kind === 'unknown',
            target: 'settling',
            actions: assign(({ context }) => ({
              capturedLaterMinor: context.capturedLaterMinor + captureShare(context),
              settleIndex: context.settleIndex + 1,
            })),
          },
          {
            // The capture was refused for good: the fee is not collected, and the hold must not stay on the card with
            // nobody owning it — release it.
            target: 'reversing',
            actions: assign(({ context }) => ({
              settleFailures: context.settleFailures + 1,
              // Declined or refused: no money moved, the fee is still owed (pay later).
              owedMinor: context.owedMinor + captureShare(context),
            })),
          },
        ],
      },
    },
    reversing: {
      tags: ['processing'],
      invoke: {
        id: 'transaction',
        src: 'transaction',
        input: ({ context }) => {
          const hold = currentHold(context);
          return {
            settings: context.settings,
            request: {
              service: 'reversal' as const,
              comments: commentsFor('reversal', context.settings),
              // spec 001, Reversal: the amount equals the authorized amount (with increments: the new total).
              amountMinor: hold.authorizedMinor,
              original: {
                gatewayId: hold.gatewayId,
                transactionId: hold.transactionId,
                service: 'preauth' as const,
              },
              cardRef: hold.cardRef,
              includeEmvTags: hold.chip,
              acceptPartial: false,
              cancellable: false,
              // The session gives the authorization up: a refusal for now is sent again by the host (effects.ts).
              releases: true,
              ...holdTerms(hold),
              ...nextSteps(context),
            },
          };
        },
        onDone: {
          target: 'settling',
          actions: assign(({ context, event }) => {
            const out = event.output;
            // Refused for now, or provably never sent (the gateway unreachable, or the terminal's credentials refused
            // unprocessed): the host sends it again (`releases`); its outcome unknown: the journal's recovery reverses
            // the authorization (its plan of a reversal). Either way the customer has nothing to do about it.
            const refused = out.kind === 'declined' || out.kind === 'rejected';
            const later = out.kind === 'unknown' || refusedForNow(out);
            // Refused because the authorization is released already (the vocabulary's rule, the journal's too): the
            // host's follow-up of this release (`alsoReleases`) went first. The hold is released.
            const released = out.kind === 'approved' || (refused && reversalRefusalReleased(out.reason));
            return {
              settleFailures: context.settleFailures + (released || later ? 0 : 1),
              releaseLater: context.releaseLater || later,
              settleIndex: context.settleIndex + 1,
            };
          }),
        },
      },
    },
    settled: {
      tags: ['processing'],
      always: [
        {
          guard: ({ context }) =>
            context.settings.payLater !== undefined && context.settleMode === 'end' && context.owedMinor > 0,
          target: 'payingLater',
        },
        {
          guard: 'settleFailed',
          target: 'failed',
          actions: assign({
            message: { key: 'meter.closeFailed' },
            reason: 'SETTLEMENT_FAILED',
          }),
        },
        {
          guard: ({ context }) => context.uncollectedMinor > 0,
          target: 'failed',
          actions: assign(({ context }) => ({
            amountMinor: context.uncollectedMinor,
            message: { key: 'meter.feeNotCollected' },
            reason: 'FEE_NOT_COLLECTED',
          })),
        },
        { guard: 'expired', target: 'idle' },
        {
          target: 'ended',
          actions: assign(({ context }) => ({
            amountMinor: context.capturedMinor + context.capturedLaterMinor,
            // A hold whose release the host finishes (`releaseLater`) is told as such: the session is closed, what was
            // charged stands, and the rest held on the card is released shortly. A fee the host captures later
            // (`capturedLaterMinor`) is told as the fee charged shortly: the gateway releases the rest with it.
            message: endedText(context),
            reason: 'APPROVED',
          })),
        },
      ],
    },
    payingLater: {
      // Pay later (issue 14 item 2): the fee the card did not pay, as a payment link printed and shown.
      ...payByLinkState({
        purpose: 'pay-later',
        link: (context: MeterContext) => ({
          reference: sessionReference('METER', context.startedAtMs ?? context.clock.now()),
          amountMinor: context.owedMinor,
        }),
        showsAmount: true,
        receiptLines: sessionReceiptLines,
        paid: {
          target: 'ended',
          note: () => ({ message: { key: 'meter.thankYou' }, reason: 'PAID_BY_LINK' }),
        },
        notPaid: 'idle',
      }),
      on: {
        CANCEL: { actions: sendTo('payByLink', { type: 'CANCEL' }) },
        DONE: { actions: sendTo('payByLink', { type: 'DONE' }) },
      },
    },
    ended: {
      tags: ['approved'],
      on: { DONE: 'idle', START: 'idle' },
      after: { resultScreen: 'idle' },
    },
    declined: {
      tags: ['declined'],
      // Another card, or the phone where the meter offers it, as on the confirmation: a declined pre-authorization
      // (a partial approval among them, undone before it ended declined) holds nothing, and is no dead end.
      on: {
        DONE: 'idle',
        START: 'idle',
        CONFIRM: anotherCardAfterDecline('authorizing'),
        PAY_BY_LINK: { guard: 'payByPhoneOffered', target: 'payingByLink' },
      },
      after: { resultScreen: 'idle' },
    },
    failed: {
      tags: ['error'],
      on: {
        DONE: 'idle',
        START: 'idle',
        // The pre-authorization's card presented the wrong way (tapped where it must be inserted, two cards, taken
        // away too soon, not in time): again, as the pay station asks. Nothing was sent for that read and no hold is
        // held; the settlement's failures (SETTLEMENT_FAILED, FEE_NOT_COLLECTED) are never a card read's.
        CONFIRM: presentCardAgain('authorizing'),
      },
      after: { resultScreen: 'idle' },
    },
  },
});

export type MeterMachine = typeof meterMachine;
