import type { AnyActorRef, AnyMachineSnapshot } from 'xstate';
import { BASE_LOCALE, formatMessage, type MessageKey, type MessageParams } from '../i18n/index.js';
import type { DccOfferSummary, LinkPurpose, LinkShown, ReceiptData } from './effects.js';
import {
  cardErrorKey,
  type FlowEvent,
  type FlowEventType,
  type FlowSession,
  type ViewContext,
} from './models.js';
import { FLOW_SCREENS, type FlowScreen } from './screen.js';
import type { FlowSettings } from './settings.js';
import type { CustomerField, CustomerFieldProblem } from '../config/index.js';
import type { AltEntry, AltPending } from './kiosk.js';
import { durationOptions, priceForDuration } from './tariff.js';

/**
 * What the customer screen shows for a model machine's snapshot: the host turns it into `CustomerView`
 * (src/host/api.ts) by formatting amounts and times. Carries no card data (masked PAN only).
 */
export interface FlowView {
  screen: FlowScreen;
  /** The customer's events the machine accepts now (each checked with `snapshot.can` on a representative event). */
  actions: Exclude<FlowEventType, 'READ_AGAIN'>[];
  /** Minor units of `currency`. */
  amountMinor?: number;
  currency: string;
  maskedPan?: string;
  /** The screen's message in en_GB (logs, tests); the host words `messageKey` in the customer's language. */
  message: string;
  /** The catalogue key of the screen's message (src/i18n) and its parameters. */
  messageKey: MessageKey;
  messageParams?: MessageParams;
  /**
   * The event that put the message on the screen, when events can put the same message there again (a read the
   * transaction refused, `present-card`): a number that grows with each such event, so that the same words from a
   * new event (a chip card swiped twice) are said and announced again, and the same event shown again is not.
   */
  messageEvent?: number;
  /** The catalogue key of the screen's title when it is not the screen's own ({@link ViewContext.titleKey}). */
  titleKey?: MessageKey;
  reason?: string;
  session?: FlowSession;
  receipt?: ReceiptData;
  /**
   * choose-duration: the durations on offer with their prices; session: the extensions on offer (minutes added) with
   * what they add to the price. Minor units.
   */
  durations?: { minutes: number; amountMinor: number }[];
  /** choose-currency: the conversion offer the customer chooses against (both currencies are options). */
  dcc?: DccOfferSummary;
  /** pay-by-phone: the payment link shown (its URL is the QR code's content), when the wait ends, what it is for. */
  link?: LinkShown & { purpose: LinkPurpose };
  /** confirm, declined: the alternative methods on offer beside the card (kiosk), by profile and label. */
  altMethods?: { profile: number; label: string }[];
  /**
   * alt-details: the method chosen, the field asked for now (its place among the method's fields) and why the last
   * value was refused. Never a value the customer typed.
   */
  altField?: {
    label: string;
    field: CustomerField;
    step: number;
    steps: number;
    problem?: CustomerFieldProblem;
    /** The refusal that put `problem` there (the entry's `refusedValues`): the same words again are a new event. */
    problemEvent?: number;
  };
  /** alt-pending: the sale's payment page (the QR code's content), the method and the ticket's reference. */
  altSale?: { saleId: number; label: string; paymentUrl: string; reference: string };
}

type ModelContext = ViewContext & {
  settings: FlowSettings;
  paidMinutes?: number;
  /** A choice the model shows itself (the meter's currency choice at completion), outside any transaction. */
  dccChoice?: DccOfferSummary;
  /** Kiosk: the alternative method's details being typed, and the sale left pending. */
  altEntry?: AltEntry;
  altSale?: AltPending;
};

function screenFromTags(snapshot: { hasTag(tag: string): boolean }): FlowScreen | undefined {
  return FLOW_SCREENS.find((screen) => snapshot.hasTag(screen));
}

/** What the running transaction child shows of its currency choice, if a transaction runs. */
interface TransactionChoice {
  offer?: DccOfferSummary;
  /** The offer replaces one that expired on the screen. */
  offerRenewed?: boolean;
  /** Why the card is asked for again within the transaction (a code of `cardErrorKey`). */
  presentAgain?: string;
  /** How many reads the transaction refused so far: each a new event on the screen. */
  refusedReads?: number;
}

/** The running transaction child's context, if any. */
function transactionContext(snapshot: AnyMachineSnapshot): TransactionChoice | undefined {
  const child = (snapshot.children as Record<string, { getSnapshot(): unknown } | undefined>)['transaction'];
  const childSnapshot = child?.getSnapshot() as { context?: TransactionChoice } | undefined;
  return childSnapshot?.context;
}

/** The running pay-by-phone child's link, if it shows one. */
function linkShown(snapshot: AnyMachineSnapshot): (LinkShown & { purpose: LinkPurpose }) | undefined {
  const child = (snapshot.children as Record<string, { getSnapshot(): unknown } | undefined>)['payByLink'];
  const childSnapshot = child?.getSnapshot() as
    { context?: { link?: LinkShown; request?: { purpose: LinkPurpose } } } | undefined;
  const link = childSnapshot?.context?.link;
  return link === undefined
    ? undefined
    : { ...link, purpose: childSnapshot?.context?.request?.purpose ?? 'fee' };
}

/** Whether the running pay-by-phone child is checking whether its link was paid (its deactivation unconfirmed). */
function linkChecking(snapshot: AnyMachineSnapshot): boolean {
  const child = (snapshot.children as Record<string, { getSnapshot(): unknown } | undefined>)['payByLink'];
  const childSnapshot = child?.getSnapshot() as { hasTag?: (tag: string) => boolean } | undefined;
  return childSnapshot?.hasTag?.('link-checking') === true;
}

/**
 * The screen of a snapshot: its own tag, or, while a transaction runs, the transaction's (present-card, processing),
 * or while pay by phone runs, its own (pay-by-phone, processing).
 */
export function screenOf(snapshot: AnyMachineSnapshot): FlowScreen {
  const own = screenFromTags(snapshot);
  if (own !== undefined) return own;
  for (const id of ['transaction', 'payByLink']) {
    const child = (snapshot.children as Record<string, { getSnapshot(): unknown } | undefined>)[id];
    const childSnapshot = child?.getSnapshot() as { hasTag?: (tag: string) => boolean } | undefined;
    if (childSnapshot?.hasTag !== undefined) {
      const fromChild = screenFromTags(childSnapshot as { hasTag(tag: string): boolean });
      if (fromChild !== undefined) return fromChild;
    }
  }
  return 'processing';
}

/**
 * The actor awaiting a card now (the `present-card` tag), to which READ_AGAIN goes: the model itself (the tap-and-go
 * exit) or its transaction; undefined on any other screen.
 */
export function cardReadingActor(actor: AnyActorRef): AnyActorRef | undefined {
  const snapshot = actor.getSnapshot() as AnyMachineSnapshot;
  if (snapshot.hasTag('present-card')) return actor;
  const child = (snapshot.children as Record<string, AnyActorRef | undefined>)['transaction'];
  const childSnapshot = child?.getSnapshot() as { hasTag?: (tag: string) => boolean } | undefined;
  return childSnapshot?.hasTag?.('present-card') === true ? child : undefined;
}

function sampleEvents(
  settings: FlowSettings,
  paidMinutes: number,
): Exclude<FlowEvent, { type: 'READ_AGAIN' }>[] {
  const first = durationOptions(settings.tariff)[0] ?? 1;
  const unit = settings.tariff.periods[0]?.unitMinutes ?? 1;
  return [
    { type: 'START' },
    { type: 'ENTER_TICKET', ticket: 'T1' },
    { type: 'LOST_TICKET' },
    { type: 'CHOOSE_DURATION', minutes: first },
    { type: 'ENTER_AMOUNT', minor: 1 },
    { type: 'CONFIRM' },
    { type: 'PAY_BY_LINK' },
    { type: 'ALT_METHOD', profile: settings.altMethods?.[0]?.profile ?? 0 },
    { type: 'ALT_FIELD', value: '' },
    { type: 'CHOOSE_CURRENCY', currency: settings.currency },
    { type: 'EXTEND', minutes: Math.min(unit, Math.max(1, settings.tariff.maxStayMinutes - paidMinutes)) },
    { type: 'END_SESSION' },
    { type: 'TAP_ENTRY' },
    { type: 'TAP_EXIT' },
    { type: 'CANCEL' },
    { type: 'DONE' },
    { type: 'CREDIT' },
  ];
}

/** The view of any model machine's snapshot (meter, kiosk, tap-and-go, attended). */
export function describeView(snapshot: AnyMachineSnapshot): FlowView {
  const context = snapshot.context as ModelContext;
  const screen = screenOf(snapshot);
  const paidMinutes = context.paidMinutes ?? 0;
  const actions = sampleEvents(context.settings, paidMinutes)
    .filter((event) => snapshot.can(event))
    .map((event) => event.type)
    // The models forward CHOOSE_CURRENCY to the transaction whenever one runs; it is a choice only on its screen.
    .filter((type) => type !== 'CHOOSE_CURRENCY' || screen === 'choose-currency');
  const view: FlowView = {
    screen,
    actions,
    currency: context.settings.currency,
    message: formatMessage(context.message, BASE_LOCALE),
    messageKey: context.message.key,
  };
  if (context.message.params !== undefined) view.messageParams = context.message.params;
  if (context.titleKey !== undefined) view.titleKey = context.titleKey;
  if (context.amountMinor !== undefined) view.amountMinor = context.amountMinor;
  if (context.maskedPan !== undefined) view.maskedPan = context.maskedPan;
  if (context.reason !== undefined) view.reason = context.reason;
  if (context.session !== undefined) {
    // A model is approved at the end of a stay, once the fee is captured: nothing is held on the card any more.
    const { heldMinor: _released, ...afterCapture } = context.session;
    view.session = screen === 'approved' ? afterCapture : context.session;
  }
  if (context.receipt !== undefined) view.receipt = context.receipt;
  if (screen === 'choose-currency') {
    const choice = transactionContext(snapshot);
    const offer = choice?.offer ?? context.dccChoice;
    if (offer !== undefined) view.dcc = offer;
    // The rate on screen is not the one shown before (the first offer expired): the customer is told so, in
    // words and in speech, before choosing.
    if (choice?.offer !== undefined && choice.offerRenewed === true) {
      view.messageKey = 'dcc.offerRenewed';
      view.message = formatMessage({ key: 'dcc.offerRenewed' }, BASE_LOCALE);
      delete view.messageParams;
    }
  }
  if (screen === 'present-card') {
    // The transaction refused a read and waits for the card again (a chip card swiped before its chip was tried, a
    // chip that could not be read): the screen says what to do, in words and in speech.
    const transaction = transactionContext(snapshot);
    const presentAgain = transaction?.presentAgain;
    if (presentAgain !== undefined) {
      view.messageKey = cardErrorKey(presentAgain);
      view.message = formatMessage({ key: view.messageKey }, BASE_LOCALE);
      delete view.messageParams;
      if (transaction?.refusedReads !== undefined) view.messageEvent = transaction.refusedReads;
    }
  }
  if (linkChecking(snapshot)) {
    // Pay by phone left while its link may still be paid: the customer is told why nothing else is offered yet.
    view.messageKey = 'payByPhone.checking';
    view.message = formatMessage({ key: 'payByPhone.checking' }, BASE_LOCALE);
    delete view.messageParams;
    // The model hands CANCEL and DONE to the pay-by-phone child, which waits for the link whatever the customer presses
    // (pay-by-link.ts, `checking`): no button that does nothing.
    view.actions = view.actions.filter((type) => type !== 'CANCEL' && type !== 'DONE');
  }
  if (screen === 'pay-by-phone') {
    const link = linkShown(snapshot);
    if (link !== undefined) view.link = link;
  }
  if (actions.includes('ALT_METHOD') && context.settings.altMethods !== undefined)
    view.altMethods = context.settings.altMethods.map(({ profile, label }) => ({ profile, label }));
  const entry = context.altEntry;
  if (screen === 'alt-details' && entry !== undefined) {
    const field = entry.fields[entry.index];
    if (field !== undefined)
      view.altField = {
        label: entry.label,
        field,
        step: entry.index + 1,
        steps: entry.fields.length,
        ...(entry.problem !== undefined ? { problem: entry.problem, problemEvent: entry.refusedValues } : {}),
      };
  }
  if (screen === 'alt-pending' && context.altSale !== undefined) view.altSale = { ...context.altSale };
  if (screen === 'choose-duration') {
    view.durations = durationOptions(context.settings.tariff).map((minutes) => ({
      minutes,
      amountMinor: priceForDuration(context.settings.tariff, minutes),
    }));
  }
  if (screen === 'session' && actions.includes('EXTEND')) {
    // Extensions on offer: the minutes added and what they add to the price, never beyond the longest stay sold
    // (the meter refuses more). The time left up to it is always one of them, so that the last minutes can be bought.
    const tariff = context.settings.tariff;
    const paid = priceForDuration(tariff, paidMinutes);
    const left = tariff.maxStayMinutes - paidMinutes;
    const offered = durationOptions(tariff).filter((minutes) => minutes < left);
    if (left > 0) offered.push(left);
    view.durations = offered.map((minutes) => ({
      minutes,
      amountMinor: priceForDuration(tariff, paidMinutes + minutes) - paid,
    }));
  }
  return view;
}
