import type { MessageKey, MessageRef } from '../i18n/index.js';
import type { CardSummary, FlowClock, ReceiptData } from './effects.js';
import type { FlowSettings } from './settings.js';
import type { TransactionResult } from './transaction.js';

/** Input of every model machine. */
export interface FlowInput {
  settings: FlowSettings;
  /** Epoch-millisecond clock; pass the same SimulatedClock to `createActor(..., { clock })` in tests. */
  clock: FlowClock;
  /**
   * The terminal's own clock, on which the times the gateway states are read (a DCC offer's expiry). Absent: `clock`.
   * The two are one clock but where `simulate` or a test moves the parking clock over a stay.
   */
  wallClock?: FlowClock;
}

/**
 * Events the model machines accept: the `UserEvent` names of src/host/api.ts, plus `CREDIT` (attended: start a
 * standalone credit, which TerminalApi does not carry yet).
 */
export type FlowEvent =
  | { type: 'START' }
  | { type: 'ENTER_TICKET'; ticket: string }
  | { type: 'LOST_TICKET' }
  | { type: 'CHOOSE_DURATION'; minutes: number }
  | { type: 'ENTER_AMOUNT'; minor: number }
  | { type: 'CONFIRM' }
  /** Pay by phone with a payment link instead of the card (issue 14). */
  | { type: 'PAY_BY_LINK' }
  /** Kiosk: pay with the alternative method of this spec 001 profile (issue 14 item 5). */
  | { type: 'ALT_METHOD'; profile: number }
  /** Kiosk: the value of the field the alternative method asks for now (personal data: never logged or kept). */
  | { type: 'ALT_FIELD'; value: string }
  | { type: 'CHOOSE_CURRENCY'; currency: string }
  | { type: 'EXTEND'; minutes: number }
  | { type: 'END_SESSION' }
  | { type: 'TAP_ENTRY' }
  | { type: 'TAP_EXIT' }
  | { type: 'CANCEL' }
  | { type: 'DONE' }
  | { type: 'CREDIT' }
  /**
   * The host's, never the customer's (the bridge takes only the customer's events): a fresh card read on the
   * `present-card` screen once the customer asked for more time (src/host/inactivity.ts).
   */
  | { type: 'READ_AGAIN' };

export type FlowEventType = FlowEvent['type'];

/** An open parking session as the UI shows it (meter, tap-and-go). Times are epoch milliseconds. */
export interface FlowSession {
  id: string;
  startedAtMs: number;
  paidUntilMs?: number;
  /** When the customer ended the session at the terminal: shown instead of the time paid for, which no longer holds. */
  endedAtMs?: number;
  /** Amount held on the card, minor units. */
  heldMinor?: number;
}

/** The part of every model's context that the view needs. Never card data: masked PAN only. */
export interface ViewContext {
  /** Amount on screen, minor units of settings.currency. */
  amountMinor: number | undefined;
  maskedPan: string | undefined;
  /** Short customer text for the current screen: a catalogue key and its parameters (src/i18n); the host words it in
   * the customer's language. */
  message: MessageRef;
  /** Stable code of the last failure or result, e.g. "DECLINED", "READ_TIMEOUT", "PARTIAL_APPROVAL". */
  reason: string | undefined;
  /**
   * The title of the current screen when it is not the screen's own: an exit that owes nothing is shown on the
   * approved screen, but titled as what it is ("Nothing to pay"), never "Approved" — no payment was approved.
   */
  titleKey: MessageKey | undefined;
  session: FlowSession | undefined;
  /** The last receipt issued, shown on the approved screen. */
  receipt: ReceiptData | undefined;
}

export function emptyView(message: MessageRef = { key: 'flow.none' }): ViewContext {
  return {
    amountMinor: undefined,
    maskedPan: undefined,
    message,
    reason: undefined,
    titleKey: undefined,
    session: undefined,
    receipt: undefined,
  };
}

/**
 * What a model's card reader takes, as far as its customer texts must say it. `tapOnly`: contactless only, with no slot
 * to insert a card in and no stripe to swipe (the tap-and-go gate, whose customer is only ever asked to tap): a text
 * chosen by {@link cardErrorKey} then never asks for the card inserted where it has its own words for it. Absent: the
 * reader takes taps and inserted cards (pay station, meter, attended terminal).
 */
export interface ReaderInterfaces {
  tapOnly?: boolean;
}

/**
 * The customer text and reason code for a transaction that did not end approved, on a model whose reader takes
 * `reader` ({@link ReaderInterfaces}).
 */
export function failureText(
  result: TransactionResult,
  reader: ReaderInterfaces = {},
): { message: MessageRef; reason: string } {
  switch (result.kind) {
    case 'approved':
      return { message: { key: 'result.approved' }, reason: 'APPROVED' };
    case 'declined':
      return {
        message: { key: result.reason === 'PARTIAL_APPROVAL' ? 'result.partialApproval' : 'result.declined' },
        reason: result.reason,
      };
    case 'rejected':
      return { message: { key: 'result.notProcessed' }, reason: result.reason };
    case 'unknown':
      if (result.notUndone === true)
        return { message: { key: 'result.partialNotUndone' }, reason: 'NOT_UNDONE' };
      return {
        message: { key: result.resolved ? 'result.timeoutResolved' : 'result.timeoutUnresolved' },
        reason: result.resolved ? 'TIMEOUT_RESOLVED' : 'TIMEOUT_UNRESOLVED',
      };
    case 'cancelled':
      return { message: { key: 'result.cancelled' }, reason: 'CANCELLED' };
    case 'card-error':
      return { message: { key: cardErrorKey(result.code, reader) }, reason: result.code };
  }
}

/**
 * Codes of a read that failed for the way the card was presented, or not presented, which the customer can put right
 * at once: tapped where the card must be inserted (EMV "try another interface") or a tap that failed (TAP_FAILED),
 * two cards in the field, the card taken away before the read completed, no card within the reader's wait
 * (CARD_NOT_PRESENTED, the reader's own answer) or the machine's read timeout (READ_TIMEOUT): not "could not be read",
 * no card was read; a chip card swiped before its chip was tried and a chip that failed, which the transaction asks
 * for again itself. Nothing was sent; the
 * models that ask for a card again after a decline ask for it again after these too, saying what happened.
 */
const PRESENT_AGAIN: Readonly<Record<string, MessageRef['key']>> = {
  CARD_USE_CONTACT: 'result.insertCard',
  // A tap that failed technically (the reader's errors 20 and 24 during the contactless exchange), most often a card
  // moved away too soon: tap it again, or insert it (a tap-only reader: tap it again, TAP_ONLY below). Not "cannot be
  // used contactless": the card can. No fallback follows a contactless failure: a chip card swiped next is refused as
  // its chip not tried.
  TAP_FAILED: 'result.tapFailed',
  // EMV: a chip card swiped before its chip was tried; the chip that then could not be read (the stripe may be used).
  CHIP_CARD_SWIPED: 'result.useChip',
  CHIP_FAILED: 'result.swipeCard',
  CARD_COLLISION: 'result.oneCard',
  CARD_REMOVED: 'result.cardRemoved',
  CARD_NOT_PRESENTED: 'result.noCard',
  READ_TIMEOUT: 'result.noCard',
};

/** The texts of {@link PRESENT_AGAIN} that ask for the card inserted, in the words of a tap-only reader. */
const TAP_ONLY: Readonly<Record<string, MessageRef['key']>> = {
  TAP_FAILED: 'result.tapFailedTapOnly',
  // The card asks for the contact interface, or the amount is over the reader's contactless limit: tapped again, it is
  // refused again, and a tap-only reader has no slot to insert it in. Another card, or the operator.
  CARD_USE_CONTACT: 'result.useAnotherCardTapOnly',
};

/**
 * Codes of a read that failed for a reason the customer cannot put right by presenting the card again, said as what it
 * is rather than "could not be read": a card the terminal does not accept (its network, CARD_NOT_SUPPORTED, or the
 * reader's refusal of the card, CARD_UNSUPPORTED), and a reader that is not there (it went away during the read, was
 * reconnecting, or cannot be opened: the host's out-of-service text, which the attract screen shows after it). A
 * reader that did not answer (READER_TIMEOUT) and any other card error stay "could not be read".
 */
const NOT_PRESENT_AGAIN: Readonly<Record<string, MessageRef['key']>> = {
  CARD_NOT_SUPPORTED: 'result.cardNotSupported',
  CARD_UNSUPPORTED: 'result.cardNotSupported',
  READER_DISCONNECTED: 'host.readerUnavailable',
  READER_NOT_CONNECTED: 'host.readerUnavailable',
  READER_UNAVAILABLE: 'host.readerUnavailable',
};

/**
 * The one mapping from the code of a failed read to the customer's message, for every model (`reader`: what the model's
 * reader takes, {@link ReaderInterfaces}), and for the read a transaction refused while it waits for the card again
 * (the `present-card` screen, src/flows/view.ts).
 */
export function cardErrorKey(code: string, reader: ReaderInterfaces = {}): MessageRef['key'] {
  if (reader.tapOnly === true && Object.hasOwn(TAP_ONLY, code)) return TAP_ONLY[code] as MessageRef['key'];
  if (Object.hasOwn(PRESENT_AGAIN, code)) return PRESENT_AGAIN[code] as MessageRef['key'];
  if (Object.hasOwn(NOT_PRESENT_AGAIN, code)) return NOT_PRESENT_AGAIN[code] as MessageRef['key'];
  return 'result.cardUnreadable';
}

/** Whether the last failure (`ViewContext.reason`) was a card read the customer can present again ({@link PRESENT_AGAIN}). */
export function canPresentCardAgain(reason: string | undefined): boolean {
  return reason !== undefined && Object.hasOwn(PRESENT_AGAIN, reason);
}

/**
 * The one way a model offers the card again on its `failed` screen, for the pay station, the meter and the attended
 * terminal: CONFIRM goes back to `target`, the model's state whose transaction reads the card and sends the request,
 * when the failure was a card read the customer can put right ({@link canPresentCardAgain}), and is refused otherwise.
 * A failed read sent nothing (a read ends its transaction before any request, src/flows/transaction.ts), so the request
 * is sent once, by the new transaction, with a transactionId of its own; a model whose `failed` screen also ends other
 * steps (the meter's settlement) gives them reasons of their own, never a card read's.
 */
export function presentCardAgain<Target extends string>(target: Target) {
  return {
    guard: ({ context }: { context: Pick<ViewContext, 'reason'> }) => canPresentCardAgain(context.reason),
    target,
  };
}

/**
 * The one way a model takes another card on its `declined` screen, for the pay station, the meter and the attended
 * terminal: CONFIRM goes back to `target`, the model's state whose transaction reads a card and sends the request, and
 * whose entry clears the declined card and its result from the screen ({@link cardAttemptView}). A declined request
 * holds nothing: a partial approval the model does not accept was undone before its transaction ended declined
 * (`PARTIAL_APPROVAL`), and one whose undo did not stand ends `unknown`, on the `failed` screen, where no card is taken
 * again. So the next card's request is a new transaction, with a transactionId of its own, sent once (the model's card
 * state takes no second CONFIRM). The other ways to pay a model offers beside the card (the phone, the alternative
 * methods) it offers here too, under the same guards as on its confirmation.
 */
export function anotherCardAfterDecline<Target extends string>(target: Target) {
  return { target };
}

/**
 * What an earlier attempt to pay left on screen, cleared when another one starts (another card, the phone, an
 * alternative method after a declined card): its reason code and the masked PAN of its card, which a later approval
 * must not show as if that card had paid.
 */
export function earlierAttemptCleared(): Pick<ViewContext, 'reason' | 'maskedPan'> {
  return { reason: undefined, maskedPan: undefined };
}

/**
 * The screen of a new card attempt (the first, or another card after a decline): the amount and `message`, the model's
 * own text for it, and nothing of an earlier attempt ({@link earlierAttemptCleared}) while the next card is asked for
 * and sent.
 */
export function cardAttemptView(message: MessageRef): Pick<ViewContext, 'message' | 'reason' | 'maskedPan'> {
  return { message, ...earlierAttemptCleared() };
}

/** The card of a result, if one was read. */
export function cardOf(result: TransactionResult): CardSummary | undefined {
  return result.card;
}

type TransactionDone = { event: { output: TransactionResult } };
const noteResult = { type: 'noteResult' as const, params: ({ event }: TransactionDone) => event.output };

/**
 * The `onDone` branches a model takes when its transaction did not succeed: a cancel goes back to `idle`, a decline
 * to `declined`, anything else to `failed`, each noting the result for the screen (the model's `noteResult` action).
 * The model puts its own approved branch first.
 */
export function unsuccessfulTransaction() {
  return [
    {
      guard: ({ event }: TransactionDone) => event.output.kind === 'cancelled',
      target: 'idle',
      actions: noteResult,
    },
    {
      guard: ({ event }: TransactionDone) => event.output.kind === 'declined',
      target: 'declined',
      actions: noteResult,
    },
    { target: 'failed', actions: noteResult },
  ];
}
