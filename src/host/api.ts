/**
 * TerminalApi: the one typed contract between the UI and the terminal core (DESIGN.md, Runtime shape). The UI never
 * holds payment state: it renders snapshots and sends user events. Two transports carry it — Electron IPC (preload)
 * and WebSocket (headless bridge) — with the same messages. Nothing here may carry card data: masked PANs only.
 *
 * This file is types and constants only; the renderer imports it.
 */

export type Result<T> = { ok: true; value: T } | { ok: false; error: ApiError };

export interface ApiError {
  /** Stable code, e.g. "OPERATOR_PIN", "NOT_ALLOWED_NOW", "BAD_EVENT". */
  code: string;
  /** For developers and logs (English). */
  message: string;
  /**
   * A customer event's refusal as the customer reads and hears it, in their language (`NOT_ALLOWED_NOW`, `NOT_READY`,
   * `OUT_OF_SERVICE`: catalogue `label.refused.<code>`). The renderer never shows `message` to a customer.
   */
  customerText?: string;
  /**
   * `OPERATOR_LOCKED`, and the `OPERATOR_PIN` of the wrong PIN that began a lockout: until when operator mode is
   * locked (ISO 8601, UTC). Operator mode's panel shows it (in `message`).
   */
  lockedUntil?: string;
}

export type ParkingModel = 'kiosk' | 'meter' | 'tap-and-go' | 'attended';

/** Which customer screen to show. */
export type Screen =
  | 'starting' // terminal is starting / reader connecting
  | 'recovering' // recovery of in-flight journal entries runs: no card is accepted
  | 'idle' // welcome: choose what to do
  | 'enter-ticket' // kiosk: ticket or plate
  | 'choose-duration' // meter: how long
  | 'enter-amount' // attended: amount entry by the attendant
  | 'confirm' // amount shown, waiting for confirmation
  | 'choose-currency' // DCC choice
  | 'present-card'
  | 'processing' // card read, talking to the gateway
  | 'approved'
  | 'declined'
  | 'session' // meter / tap-and-go: an open parking session (extend, end)
  | 'pay-by-phone' // a payment link's QR code and URL, waiting for the payment on the customer's phone
  | 'alt-details' // kiosk, alternative method: the customer's details, one field at a time, on an on-screen keyboard
  | 'alt-pending' // kiosk, alternative method: the sale is pending; its payment page as a QR code; the customer may leave
  | 'error'
  | 'out-of-service'; // reader unavailable and not recovering

/** The screens on which no customer is in the middle of anything: the attract screen and the terminal's own. */
export const NO_CUSTOMER_SCREENS: ReadonlySet<string> = new Set([
  'idle',
  'starting',
  'recovering',
  'out-of-service',
]);

/**
 * The customer screens the terminal times (`InactivityWatch`, src/host/inactivity.ts): those that wait for the
 * customer's input, and nothing else. The renderer tells the terminal of typing on them (ACTIVITY).
 */
export const TIMED_SCREENS: ReadonlySet<string> = new Set([
  'enter-ticket',
  'choose-duration',
  'enter-amount',
  'confirm',
  // An alternative method's details: a customer who walks away must not leave an e-mail address half typed on screen.
  'alt-details',
  // The currency choice: the customer's decision between two amounts, rate, markup and disclaimer (read out in
  // accessibility mode), never a default; unanswered it is cancelled and nothing is sent.
  'choose-currency',
]);

/** An amount ready to show: minor units, currency and the formatted text. */
export interface DisplayAmount {
  minor: number;
  currency: string;
  text: string;
}

/** Card-network presentation rules (gateway.md §5): both amounts equal, no default, rate and markup shown. */
export interface DccChoice {
  title: string;
  local: DisplayAmount;
  card: DisplayAmount;
  /** e.g. "1 GBP = 1.1734 EUR" */
  rate: string;
  /** e.g. "includes 3.50% margin over the wholesale rate" */
  markup: string;
  /** The gateway's disclaimer, shown without modification. */
  disclaimer: string;
  expiresAt: string;
}

export interface ReceiptLine {
  label: string;
  value: string;
}

/**
 * The on-screen receipt: the very document the printer prints (src/host/receipts.ts), field for field, in the
 * language it was issued in — the customer's, or `terminal.locale` when the printer cannot print the customer's script.
 */
export interface Receipt {
  /** The merchant's name, as printed. */
  title: string;
  /** The printed fields in order; empty when no receipt is offered for this small amount (then `notice` says so). */
  lines: ReceiptLine[];
  /** The language of the receipt (`de_DE`) and its writing direction: it may differ from the screen's. */
  locale: string;
  /** `locale` as the BCP 47 tag `lang` attributes and `Intl` take (`de-DE`). */
  lang: string;
  direction: 'ltr' | 'rtl';
  /**
   * The e-receipt QR code, the same payload as the printed one: the e-receipt URL when one is configured (then also
   * `url`, its text alternative), else the receipt's text. `svg` is dark on light with a quiet zone of 4 modules;
   * `alt` describes it in the customer's language.
   */
  qr?: { svg: string; alt: string; url?: string };
  /** In the customer's language: why no paper receipt comes (the printer cannot print; none for this amount). */
  notice?: string;
}

export interface DurationOption {
  minutes: number;
  amount: DisplayAmount;
  label: string;
}

/**
 * The key of a text that events put on the customer's screen, where an event can put the same words there again
 * (`CustomerView.messageEvent`, `AltFieldView.problemEvent`, `PayByPhoneView.noticeEvent`): the text's own key with
 * its event, so that the same words from a new event are a new text — said again (src/host/speech.ts) and read out
 * again by the renderer's live region (renderer/src/accessibility.ts) — while the same event shown again (a
 * refreshed snapshot, a redraw) is the same text, and nothing new.
 */
export function eventKey(part: string, event: number | undefined): string {
  return event === undefined ? part : `${part}:${event}`;
}

export interface CustomerView {
  screen: Screen;
  title: string;
  message: string;
  /**
   * The event that put `message` on the screen, where events can put the same message there again (a card read the
   * terminal refused and asks for again): it changes with each such event, so that the same words from a new event (a
   * chip card swiped twice) are said and announced again, while the same event shown again (a refreshed snapshot, the
   * screen in another language) is not ({@link eventKey}). Absent when the screen alone puts its message there.
   */
  messageEvent?: number;
  amount?: DisplayAmount;
  durations?: DurationOption[];
  dcc?: DccChoice;
  receipt?: Receipt;
  /** Masked PAN (first 6 + last 4 at most) once a card was read. */
  maskedPan?: string;
  /** pay-by-phone: the payment link to pay on the customer's phone (kiosk.md §4). */
  payByPhone?: PayByPhoneView;
  /** confirm, declined (kiosk): the alternative methods on offer beside the card; ALT_METHOD with one's `profile`. */
  altMethods?: { profile: number; label: string }[];
  /** alt-details: the field to type now (ALT_FIELD sends its value). Never a value the customer typed. */
  altField?: AltFieldView;
  /** alt-pending: the sale's payment page, drawn like a payment link's, and the ticket's reference. */
  altPending?: AltPendingView;
  /**
   * Open parking session (meter, tap-and-go). `startedAt`, `paidUntil` and `endedAt` (the customer ended it: shown
   * instead of `paidUntil`) are display times in the terminal's time zone (`14:05`, or `23/11 09:30`).
   */
  session?: { id: string; startedAt: string; paidUntil?: string; endedAt?: string; held?: DisplayAmount };
  /** Events the UI may send on this screen. */
  actions: UserEvent['type'][];
  /** Accessibility mode of this customer (large text, high contrast, speech, longer time limits). */
  accessibility?: boolean;
  /** "Do you need more time?": asked on an input screen left without input; `expiresAt` is when it is left. */
  prompt?: { kind: 'more-time'; expiresAt: string; seconds: number };
  /**
   * The customer's language (`de_DE`), its writing direction and the languages on offer by their own names (the
   * language button; SET_LANGUAGE with one of their `locale`s). Every text of this view is in `current`. Each `lang`
   * is its locale as the BCP 47 tag `lang` attributes and `Intl` take (`de-DE`), written by the terminal's one
   * conversion (`intlLocale`, src/i18n), which the renderer may not import.
   */
  language?: {
    current: string;
    lang: string;
    direction: 'ltr' | 'rtl';
    available: { locale: string; name: string; lang: string }[];
  };
  /**
   * Button and field labels in the customer's language, by key: `action.<event type>` for the plain buttons,
   * `continue`, `extend`, `language`, `keypad.clear`, `keypad.back`, `ticketInput`, `creditPin` (the operator PIN field
   * of a standalone credit), `card`, `session.id`, `session.since`, `session.paidUntil`, `session.ended`,
   * `session.held`, `receiptQr`, `refused` (an event refused for another reason), `connection.connecting`,
   * `connection.lost`, `connection.timeout` (the renderer's own).
   */
  labels?: Record<string, string>;
  /**
   * Speech output in accessibility mode (EN 301 549 5.1.3; ADA §707.5), in the customer's language; absent when the
   * mode is off or `customer.speech.engine` is `none`. Never a PIN, never more of a card than its last four digits.
   */
  speech?: SpeechView;
}

/**
 * A payment link on screen (reference/kiosk.md §4): the QR code drawn by the terminal for this fee and this wait (error
 * correction M, a quiet zone of 4 modules, dark on light), the URL as text under it (also read out in accessibility
 * mode), the domain, and the countdown to the end of the wait.
 */
export interface PayByPhoneView {
  linkId: string;
  /** The hosted payment page: the QR code's content. Left to right in every language. */
  url: string;
  /** The host of `url`, printed as text so that a customer can check where the code leads. */
  domain?: string;
  /**
   * `svg` dark on light with its quiet zone; `modules` its width in modules, quiet zone included; `alt` its name.
   * Absent when the URL cannot be drawn as a QR code: the URL is shown as text alone.
   */
  qr?: { svg: string; modules: number; alt: string };
  /** When the terminal stops waiting and deactivates the link (ISO 8601), and the seconds left at this snapshot. */
  expiresAt: string;
  seconds: number;
  /** `pay-later`: the link is for an amount owed after a card payment that could not be completed (also printed). */
  purpose: 'fee' | 'pay-later';
  /** In the customer's language: the last payment on the phone was declined, another card can be tried. */
  notice?: string;
  /**
   * The decline that put `notice` there: how many payments on the phone were declined, so that a second card declined
   * (the same words) is said and announced again ({@link eventKey}), and the same decline shown again is not.
   */
  noticeEvent?: number;
}

/** A field an alternative method asks for (spec 001 billTo), typed on the on-screen keyboard. */
export interface AltFieldView {
  /** The method's label. */
  method: string;
  field: 'email' | 'firstName' | 'lastName' | 'address1' | 'phoneNumber';
  /** The field's name as the input's label (the screen's message says what to type, or why it was refused). */
  label: string;
  /** `step` of `steps` (1-based), in the customer's language too. */
  step: number;
  steps: number;
  stepText: string;
  /**
   * Why the last value was refused, in the customer's language, under the field (the screen's message still says what
   * to type).
   */
  problem?: string;
  /**
   * The refusal that put `problem` there: how many values the entry refused, so that the same value refused again
   * (the same words) is said and announced again ({@link eventKey}), and the same refusal shown again is not.
   */
  problemEvent?: number;
  /** The input's kind, for the keyboard's layout and the browser's hints. */
  inputMode: 'email' | 'text' | 'tel';
}

/** An alternative-method sale left pending: where the customer pays (a QR code like a payment link's) and the reference. */
export interface AltPendingView {
  saleId: number;
  method: string;
  /** The method's payment page: the QR code's content, also shown as text. Left to right in every language. */
  url: string;
  /** As {@link PayByPhoneView.qr}: absent when the URL cannot be drawn as a QR code. */
  qr?: { svg: string; modules: number; alt: string };
  /** "Reference: …" — the ticket's reference under which the sale is recorded. */
  reference: string;
  /** Where the receipt goes (the e-mail address given; sent by the gateway's method once confirmed). */
  note: string;
}

/** What the terminal says of the customer's screen, and who says it. */
export interface SpeechView {
  /** Increases with every utterance: the renderer speaks each id once, a new one interrupting the previous one. */
  id: number;
  /** What to say now: the whole screen when it is new, else what changed (a new message, the question, an error). */
  text: string;
  /** The whole screen as spoken, for the repeat key. */
  screen: string;
  /** BCP 47 tag of the language (`de-DE`), for the voice. */
  lang: string;
  /**
   * `text` as runs by language, in order, each said with its own language's voice: a receipt issued in the
   * terminal's language on an ar_AE screen is said in that language. Absent: all of `text` is in `lang`.
   */
  runs?: SpeechRunView[];
  /** `screen` as runs by language, as {@link runs}. */
  screenRuns?: SpeechRunView[];
  /** 0–1; back to `customer.speech.volume` after each session (kiosk.md §2: reset after each use). */
  volume: number;
  /** Speaking rate, 1 is normal (0.5–2). */
  rate: number;
  /**
   * Who speaks: `renderer` through the platform's speech synthesis (Web Speech API), `terminal` by itself (espeak-ng);
   * then the renderer only sends the speech keys as SPEECH events.
   */
  by: 'renderer' | 'terminal';
}

/** Part of an utterance in one language. */
export interface SpeechRunView {
  text: string;
  /** BCP 47 tag of its language (`en-GB`), for the voice. */
  lang: string;
}

/** The speech keys of accessibility mode: say the screen again, stop talking, louder, softer. */
export type SpeechCommand = 'repeat' | 'stop' | 'louder' | 'softer';

/**
 * The tactile keypad's Enter (the screen's main action): the first of these events the screen offers. MORE_TIME is
 * "Yes" while "Do you need more time?" is asked. The keypad never chooses a currency or a duration (gateway.md §5).
 */
export const KEYPAD_MAIN_EVENTS = [
  'MORE_TIME',
  'ENTER_TICKET',
  'ENTER_AMOUNT',
  'ALT_FIELD',
  'CONFIRM',
  'START',
  'DONE',
] as const;

export interface RecoveryItem {
  transactionId: string;
  service: string;
  amount?: DisplayAmount;
  resolution: string;
  at: string;
}

/** The operator status bar (never the customer screen). */
/** Why the gateway cannot be used (OperatorStatus `gateway.problem`; src/host/gateway-adapters.ts, gatewayProblemOf). */
export type GatewayProblem = 'unreachable' | 'credentials' | 'processor';

export interface OperatorStatus {
  terminalId: string;
  model: ParkingModel;
  reader: { kind: string; health: string; firmware?: string };
  gateway: {
    kind: 'sandbox' | 'remote';
    baseUrl: string;
    online: boolean | null;
    /**
     * While `online` is false, why: `unreachable` (no answer: connection, timeout, server), `credentials` (the gateway
     * refused the terminal's credentials, or they could not be produced: GW_AUTH) — the keys, not the network — or
     * `processor` (the gateway answers, but its processor is down: PROCESSOR_UNAVAILABLE).
     */
    problem?: GatewayProblem;
    /** The code of the last failed exchange (GW_CONNECTION, GW_AUTH …). */
    lastError?: string;
    /**
     * While `online` is false because a connection did not open before stored payments were claimed, which host:
     * `gateway api.example.com:443`, or `OAuth token host auth.example.com:443` (the gateway answers, but the access
     * token must be fetched from a token host that does not).
     */
    unreachableHost?: string;
    /** This terminal's clock minus the gateway's (`Date` of its last answer), whole seconds; absent before one. */
    clockSkewSeconds?: number;
  };
  offline: {
    policy: string;
    depth: number;
    totals: { currency: string; minor: number; text: string }[];
    /** Age of the oldest stored payment whose age is known, whole seconds; null when none is. */
    oldestAgeSeconds: number | null;
    /**
     * Stored payments whose age is not known: stored while the terminal's clock was not yet set or was ahead. Not in
     * `oldestAgeSeconds`, nor in the age limit; forwarded, the gateway decides.
     */
    ageUnknown: number;
    limits: {
      maxTransactionMinor: number;
      maxTotalMinorPerCurrency: number;
      maxCount: number;
      maxAgeHours: number;
      /** Most payments of one card the queue holds at once. */
      maxCountPerCard: number;
    };
    declinedAfterForward: number;
  };
  recovery: { running: boolean; inFlight: number; resolved: RecoveryItem[] };
  /**
   * Fees not collected in full (the audit log's `fee-shortfall`: a capture that took less than owed, a fee not
   * computable) that the operator has not acknowledged.
   */
  feeShortfalls: number;
  journal: { entries: number; unknown: number };
  /** Why the terminal is out of service, when it is (an unexpected error, a service decision). */
  outOfService?: string;
  /** The receipt printer: its kind, its status (paper out, cover open …) and why the last receipt did not print. */
  printer?: { kind: string; status: string; lastError?: string };
  /** Speech output: its engine and why it cannot speak (espeak-ng not installed …), when it cannot. */
  speech?: { engine: string; lastError?: string };
}

/**
 * What the customer's screen receives (the headless bridge, Electron IPC): a {@link TerminalSnapshot} without the
 * operator status — reader, gateway, queue and journal figures reach the UI only through an operator request with the
 * PIN (`{type: 'status'}`).
 */
export type CustomerSnapshot = Omit<TerminalSnapshot, 'status'>;

export interface TerminalSnapshot {
  /** Increases with every change; a client ignores snapshots older than the one it has. */
  seq: number;
  model: ParkingModel;
  locale: string;
  customer: CustomerView;
  status: OperatorStatus;
}

/** What the customer (or the attendant) does. */
export type UserEvent =
  | { type: 'START' }
  | { type: 'ENTER_TICKET'; ticket: string }
  | { type: 'LOST_TICKET' }
  | { type: 'CHOOSE_DURATION'; minutes: number }
  | { type: 'ENTER_AMOUNT'; minor: number }
  | { type: 'CONFIRM' }
  /** Pay by phone with a payment link instead of the card (issue 14). */
  | { type: 'PAY_BY_LINK' }
  /** Kiosk: pay with the alternative method of this spec 001 profile (one of `CustomerView.altMethods`). */
  | { type: 'ALT_METHOD'; profile: number }
  /** Kiosk: the value of the field `CustomerView.altField` asks for (personal data: never logged, never stored). */
  | { type: 'ALT_FIELD'; value: string }
  | { type: 'CHOOSE_CURRENCY'; currency: string }
  | { type: 'EXTEND'; minutes: number }
  | { type: 'END_SESSION' }
  | { type: 'TAP_ENTRY' }
  | { type: 'TAP_EXIT' }
  /**
   * Attended: start a standalone credit (spec 001 `Parking Standalone Credit`: money out to the card presented, linked
   * to no sale) instead of a sale, with the operator PIN. The PIN is checked as operator mode checks it, and counts
   * towards the same lockout: a wrong one is refused with OPERATOR_PIN, any PIN while operator mode is locked with
   * OPERATOR_LOCKED (both with `lockedUntil` once locked), and nothing starts; a good one starts the credit (amount,
   * then card) and is recorded in the audit log (`credit`). Offered only on the attended terminal's idle screen, and
   * not when `attended.standaloneCredit` is false: elsewhere refused with NOT_ALLOWED_NOW before any PIN check. The
   * PIN is never logged, never stored.
   */
  | { type: 'CREDIT'; pin: string }
  | { type: 'CANCEL' }
  /** Accessibility mode on or off for this customer: large text, high contrast, speech, longer time limits. */
  | { type: 'SET_ACCESSIBILITY'; on: boolean }
  /** The answer "yes" to "Do you need more time?". */
  | { type: 'MORE_TIME' }
  /**
   * The customer's language for this session (a `locale` of `CustomerView.language.available`), accepted on every
   * customer screen; back to `terminal.locale` after the session. An unknown locale: error BAD_LOCALE, nothing changes.
   */
  | { type: 'SET_LANGUAGE'; locale: string }
  /** A speech key in accessibility mode; refused with NOT_ALLOWED_NOW when the mode is off. */
  | { type: 'SPEECH'; command: SpeechCommand }
  /**
   * Input echo (EN 301 549 5.1.3) while the terminal speaks (`SpeechView.by` `terminal`): the name of the key of the
   * screen keypad just pressed, or of the control Tab moved to, as the page would say it. Said at once in the
   * customer's language, or in `lang` (a BCP 47 tag) when the control is in a language of its own — a language's
   * name in the language list, said with that language's voice — (through the card-data guard; a masked entry
   * never), without changing what the repeat key says; it counts as the customer's activity. Refused with
   * NOT_ALLOWED_NOW, and nothing said, when speech is off, the page speaks itself, or the text holds a masked run.
   */
  | { type: 'ECHO'; text: string; lang?: string }
  /**
   * The page's own speech (`SpeechView.by` `renderer`, the Web Speech API): it has started saying utterance `id`
   * (`SpeechView.id`: the screen, its repeat, an echo) — `speaking` true — or has stopped saying it — false: said to
   * the end, stopped, or not said at all. A result screen stays while the page says it, at most ten times its time
   * (src/host/result-screen.ts). Refused with NOT_ALLOWED_NOW, without a word and nothing changed, when speech is off,
   * the terminal speaks itself, `id` is not an utterance given out to this customer, or (`speaking` true) is not the
   * one being said now. Not the customer's activity. A transport whose page goes away (its socket closed) reports
   * the end of what that page last said it was saying.
   *
   * `page`: which page reports, when more than one is open (the kiosk screen, a second page on the bridge) — set by
   * the transport that carries the page's events (src/host/bridge/page-speech.ts), never by the page, whose event
   * carrying it is refused (the bridge's and the IPC's schema). Each page's report is of its own speech only: the
   * screen is held while any page says it. Absent, the report is of the one page an in-process caller is.
   */
  | { type: 'SPEECH_STATE'; id: number; speaking: boolean; page?: number }
  /**
   * The customer is typing on a timed screen ({@link TIMED_SCREENS}) what stays on the page until Continue (a key of
   * the screen keypad, a character in a field, a move between controls): the time limit starts again. While "Do you
   * need more time?" is asked it changes nothing: the question waits for its own answer. Carries nothing typed; the
   * renderer sends it at most every five seconds. Refused without a word (OUT_OF_SERVICE, NOT_READY) when the
   * terminal takes no customer.
   */
  | { type: 'ACTIVITY' }
  | { type: 'DONE' };

/** Operator actions; each carries the operator PIN (DESIGN.md: operator actions need the PIN). */
export type OperatorAction =
  | { type: 'transactions'; limit?: number }
  /**
   * A refund of a capture or sale: `amountMinor` (default: all that is left to refund). `requestId` names this one
   * refund (the panel draws one when the operator arms it): the same refund submitted again under it — a second press,
   * a request repeated by the bridge — gets the first one's answer and moves no money; under another requestId it is
   * another refund (src/host/operator-desk.ts, `refundOnce`).
   */
  | { type: 'refund'; transactionId: string; amountMinor?: number; requestId?: string }
  | { type: 'void'; transactionId: string }
  | { type: 'flush-queue' }
  /** The stored payments forwarded and not collected in full that nobody has acknowledged (the status bar's count). */
  | { type: 'offline-declines' }
  /** The operator has seen this one: it leaves the count (recorded in the audit log). */
  | { type: 'offline-acknowledge'; transactionId: string }
  /** The fees not collected in full that nobody has acknowledged (the status bar's count). */
  | { type: 'fee-shortfalls' }
  /** The operator has seen this one (by its subject's transactionId): it leaves the count (recorded in the audit log). */
  | { type: 'fee-shortfall-acknowledge'; transactionId: string }
  /** The operator status (the figures the customer never sees). */
  | { type: 'status' }
  /**
   * Service mode: out of service with a reason the customers see (`on`), back in service (`off`), a reader self-test,
   * a test receipt, the last receipt again, or recovery of the journal run again now.
   */
  | { type: 'service'; task: ServiceTask; reason?: string }
  /** The audit log: the newest `limit` records (default 100) at or after `since`, oldest first; with its CSV. */
  | { type: 'audit'; since?: string; limit?: number; format?: 'json' | 'csv' }
  /**
   * One page of the merchant's payment links from the gateway's list (spec 000, `offset`/`limit` paging; limit 1–1000,
   * default 20), each with what this terminal's journal knows of it.
   */
  | { type: 'links'; offset?: number; limit?: number }
  /** Sets a link this terminal created INACTIVE / ACTIVE again (every field repeated, spec 000). */
  | { type: 'link-deactivate'; linkId: string }
  | { type: 'link-reactivate'; linkId: string }
  /** Alternative-method sales (spec 001), newest first; `status` filters (default: all). */
  | { type: 'alt-sales'; status?: AltSaleStatus[]; limit?: number }
  /**
   * Refunds `amountMinor` (default: all that remains) of a settled alternative-method sale; above what remains of the
   * settled amount it is refused with ALT_REFUND_ABOVE_SETTLED, a sale not settled with ALT_NOT_REFUNDABLE. `requestId`
   * as for a card refund: submitted again under it, the same refund gets the first one's answer.
   */
  | { type: 'alt-refund'; saleId: number; amountMinor?: number; requestId?: string }
  /** The open tap-and-go stays (their holds), the last entry first, at most `limit` (1–1000, default 100). */
  | { type: 'stays'; limit?: number }
  /**
   * Passback reset: the car of this stay left without its exit (let out by hand). Its hold is reversed in full now,
   * nothing charged, and the card may enter again. Refused, nothing sent, for a hold no longer open (`HOLD_NOT_FOUND`),
   * one being settled (`HOLD_BUSY`: an exit or the expiry watch has it, or a reversal, capture or increment of its
   * authorization is in flight or unknown) or whose release is decided already (`HOLD_RELEASING`: a reversal of it was
   * refused; the terminal sends the next after its wait, or it is left to the operator at the processor).
   */
  | { type: 'hold-release'; holdId: string };

/**
 * An open tap-and-go stay in operator mode: its hold. Never card data but the masked number. `state`: `open` nobody
 * settles it (the card is inside, or an earlier entry's hold its expiry watch is about to reverse); `settling` an exit,
 * the expiry watch or recovery is settling it; `releasing` its release is decided and a reversal of it was refused
 * (tried again after its wait, or left to the operator at the processor). `allowed` `release` only when `open`.
 */
export interface OpenStaySummary {
  holdId: string;
  maskedPan: string;
  /** ISO 8601: the entry. */
  enteredAt: string;
  /** What the hold holds (its authorized total, increments included), in the hold's currency. */
  held: DisplayAmount;
  state: 'open' | 'settling' | 'releasing';
  /**
   * The payment link of the stay's fee whose payment a restart left in doubt (shown to the customer, its notification
   * lost): the exit never charges the stay by card, a late payment of the link pays it, and its expiry watch releases
   * it at its time. The operator may look the link up (`links show`) before releasing the stay.
   */
  phonePaymentInDoubt?: string;
  allowed: 'release'[];
}

/** What this terminal's journal knows of a payment link it created (src/journal/payment-links.ts). */
export interface TerminalLinkRecord {
  /** creating | active | paid | deactivated | failed */
  state: string;
  /** The ticket or session reference the link charges for. */
  reference: string;
  /** fee | pay-later */
  purpose: string;
  /** Why the terminal closed it (paid, cancelled, timeout, recovery, operator, gone). */
  closeReason?: string;
  gatewayInactive: boolean;
  paymentId?: string;
  /** ISO 8601: the terminal waits for the payment until then. */
  watchUntil: string;
  createdAt: string;
  lastError?: string;
}

/**
 * A payment link as the gateway lists it, with the journal's record when this terminal created it (`terminal`). The
 * `links list` command prints the same fields. Link fields carry no personal data (the guard refuses it on create).
 */
export interface PaymentLinkSummary {
  id: string;
  /** The gateway's status: ACTIVE or INACTIVE. */
  status: string;
  linkType?: string;
  purchaseNumber?: string;
  amountMinor?: number;
  currency?: string;
  createdDate?: string;
  /** The hosted payment page (ACTIVE links only). */
  url?: string;
  terminal?: TerminalLinkRecord;
}

/** A payment link in operator mode: its amount ready to show, and what the operator may do with it now. */
export interface OperatorLink extends PaymentLinkSummary {
  amount?: DisplayAmount;
  /** Only for links this terminal created: deactivate an ACTIVE one, reactivate an INACTIVE one never paid. */
  allowed: ('deactivate' | 'reactivate')[];
}

/**
 * The operator's grouping of an alternative-method sale: `pending` (sent or PENDING, the customer may still pay),
 * `settled` (SETTLED or FUNDED), `failed`, `abandoned`, `unknown` (the sale's answer was lost: nobody saw its page).
 */
export type AltSaleStatus = 'pending' | 'settled' | 'failed' | 'abandoned' | 'unknown';

/** A refund of an alternative-method sale (see AltRefundView of src/host/alt-payment-desk.ts for the states). */
export interface AltRefundSummary {
  entryId: number;
  amount: DisplayAmount;
  state: 'in-flight' | 'accepted' | 'refunded' | 'failed' | 'voided' | 'needs-operator';
  gatewayId?: string;
  reason?: string;
  at: string;
}

/** An alternative-method sale in operator mode. Never personal data: no e-mail, no name, no payment page. */
export interface AltSaleSummary {
  id: number;
  /** The method's button label, and its gateway name. */
  label: string;
  methodName: string;
  /** The ticket or session reference. */
  reference: string;
  status: AltSaleStatus;
  /** The gateway's status as recorded (PENDING, SETTLED, FUNDED, FAILED, ABANDONED, sending, unknown). */
  state: string;
  amount: DisplayAmount;
  settled: DisplayAmount;
  refunded: DisplayAmount;
  /** What may still be refunded (0 unless settled). */
  refundable: DisplayAmount;
  gatewayId?: string;
  reason?: string;
  at: string;
  lastCheckAt?: string;
  nextCheckAt?: string;
  refunds: AltRefundSummary[];
  allowed: 'refund'[];
}

/** One record of the audit log (src/journal/audit.ts): who did what, when, with which result. Never card data. */
export interface AuditEntry {
  id: number;
  time: string;
  actor: string;
  action: string;
  subject?: string;
  result: 'ok' | 'refused' | 'failed';
  code?: string;
  details: Record<string, unknown>;
}

export type ServiceTask = 'on' | 'off' | 'reader-self-test' | 'test-print' | 'reprint' | 'rerun-recovery';

/**
 * What a service task did: done (`ok`); `refused` with a stable code when the terminal may not do it now — `BUSY`:
 * service mode goes on only while no customer session is in progress (`TerminalHost.serviceModeOn`), and `message`
 * says so; `failed` otherwise, with `message` saying why.
 */
export type ServiceResult =
  | { outcome: 'ok'; message: string }
  | { outcome: 'refused'; code: 'BUSY'; message: string }
  | { outcome: 'failed'; message: string };

export interface OperatorRequest {
  pin: string;
  action: OperatorAction;
}

export interface TransactionSummary {
  transactionId: string;
  service: string;
  comments: string;
  gatewayId?: string;
  /**
   * The journal state, with how recovery resolved it (`resolved (not-voidable)`), or `voided` for one voided, `void
   * pending` for one whose void awaits its outcome.
   */
  state: string;
  amount?: DisplayAmount;
  /**
   * A capture that took less than its customer owed (a tap-and-go exit whose increment was not approved): the fee it
   * did not collect, as the audit log's `fee-shortfall` record of it states.
   */
  shortfall?: DisplayAmount;
  /**
   * What the operator must be told of how the transaction ended that its state does not say, in `terminal.locale`
   * (the catalogues' `operator.*` messages; `lang` its BCP 47 tag): `FEE_NOT_COMPUTABLE` on a tap-and-go hold whose
   * exit fee the tariff could not price in the hold's currency — the hold released, the fee (`shortfall`) not
   * collected.
   */
  note?: { code: 'FEE_NOT_COMPUTABLE'; text: string; lang: string };
  maskedPan?: string;
  at: string;
  /** Actions the operator can take now: refund before/after settlement, void before the cut-off. */
  allowed: ('refund' | 'void')[];
}

/**
 * A payment stored offline, forwarded later and not collected in full: declined, rejected, of unknown outcome, or
 * approved for less than its amount (`reason` PARTIAL_APPROVAL). No card data but the masked number.
 */
export interface OfflineDeclineSummary {
  transactionId: string;
  amount: DisplayAmount;
  maskedPan?: string;
  /** The stored payment's state after its forward: declined, rejected, unknown or approved. */
  state: string;
  /**
   * The decline or rejection reason, what made the outcome unknown, PARTIAL_APPROVAL, OFFLINE_EXPIRED (known to
   * have been stored more than seven days ago: rejected by the terminal, never sent), or OFFLINE_UNREADABLE (its
   * encrypted request cannot be read: rejected by the terminal, never sent).
   */
  reason?: string;
  /**
   * A forward of unknown outcome, once timeout recovery resolved it: how (`timeout-void`: voided, not collected;
   * `not-voidable`: it stands, collected; …).
   */
  resolution?: string;
  /** ISO 8601. */
  storedAt: string;
  forwardedAt?: string;
}

/**
 * A fee not collected in full, as the audit log's `fee-shortfall` records it: a capture that took less than its customer
 * owed (`INCREMENTAL_NOT_APPROVED`, `CAPTURED_LESS_THAN_ASKED`; `transactionId` the capture's), or a tap-and-go exit
 * whose fee could not be priced in its hold's currency (`FEE_NOT_COMPUTABLE`; `transactionId` the authorization's), or
 * a tap-and-go stay that outlasted its hold and whose card entered again before its exit (`STAY_OUTSTAYED`;
 * `transactionId` the authorization's). No card data.
 */
export interface FeeShortfallSummary {
  transactionId: string;
  /** Why: the record's code. */
  code: string;
  /** What the customer owed, what was captured, and the difference, in the fee's currency. */
  owed: DisplayAmount;
  captured: DisplayAmount;
  shortfall: DisplayAmount;
  /** The authorization the capture settled, when the record names it. */
  authorizationTransactionId?: string;
  /** ISO 8601: when it was recorded. */
  at: string;
}

export type OperatorResponse =
  | { type: 'status'; status: OperatorStatus }
  | ({ type: 'service'; task: ServiceTask } & ServiceResult)
  | { type: 'audit'; records: AuditEntry[]; csv?: string }
  | { type: 'transactions'; transactions: TransactionSummary[] }
  /**
   * `outcome`: approved | declined | rejected | unknown | cancelled (its answer lost, a refund's timeout void cancelled
   * it: nothing moved, code TIMEOUT_RESOLVED) | not-found | not-allowed | failed (the journal could not be read,
   * code JOURNAL_UNREADABLE: nothing sent); `code` the stable reason
   * (APPROVED; a refusal: ALREADY_VOIDED, VOID_PENDING, GATEWAY_ID_UNKNOWN, REFUNDS_STANDING, NOT_VOIDABLE,
   * NOT_REFUNDABLE, REFUND_AMOUNT_INVALID, REFUND_EXCEEDS_CAPTURED; a gateway reason …). A void of a capture that
   * went through is `approved` whatever became of the release of its authorization hold, its code saying that:
   * APPROVED when released (or found released already), HOLD_NOT_RELEASED when the reversal was refused (the terminal
   * tries again later), HOLD_RELEASE_UNKNOWN when its answer was lost and recovery finishes it.
   */
  | { type: 'refund' | 'void'; outcome: string; code: string; message: string; transactionId: string }
  | { type: 'flush-queue'; forwarded: number; declined: number; remaining: number }
  | { type: 'offline-declines'; declines: OfflineDeclineSummary[] }
  /** Whether it was waiting for acknowledgement, and the ones still waiting after it. */
  | {
      type: 'offline-acknowledge';
      transactionId: string;
      acknowledged: boolean;
      declines: OfflineDeclineSummary[];
    }
  | { type: 'fee-shortfalls'; shortfalls: FeeShortfallSummary[] }
  /** Whether it was waiting for acknowledgement, and the ones still waiting after it. */
  | {
      type: 'fee-shortfall-acknowledge';
      transactionId: string;
      acknowledged: boolean;
      shortfalls: FeeShortfallSummary[];
    }
  | {
      type: 'links';
      offset: number;
      limit: number;
      totalLinks?: number;
      /** The next page, when there is one. */
      next?: { offset: number; limit: number };
      links: OperatorLink[];
    }
  | { type: 'link-deactivate' | 'link-reactivate'; link: OperatorLink }
  | { type: 'alt-sales'; sales: AltSaleSummary[] }
  /** The refund as journaled after its answer, and the sale after it. */
  | { type: 'alt-refund'; saleId: number; refund: AltRefundSummary; sale: AltSaleSummary }
  | { type: 'stays'; stays: OpenStaySummary[] }
  /**
   * The release's reversal ran (`HOLD_NOT_FOUND`, `HOLD_BUSY`, `HOLD_RELEASING` are errors: nothing sent). `outcome`
   * `released` the hold is closed (reversed, or the gateway had released it already); `later` refused for now (`code`
   * the reason): tried again after its wait; `unknown` its outcome is recovery's; `refused` refused for good (`code` the
   * reason): the operator must release it at the processor. In every case the card may enter again.
   */
  | {
      type: 'hold-release';
      holdId: string;
      outcome: 'released' | 'later' | 'unknown' | 'refused';
      code: string;
      message: string;
      /** The reversal's transactionId. */
      transactionId?: string;
      /** What the approved reversal gave back: the hold in full, in its currency (outcome `released`, code APPROVED). */
      reversed?: DisplayAmount;
    };

/** The API itself, as the UI sees it on either transport. */
export interface TerminalApi {
  snapshot(): Promise<Result<TerminalSnapshot>>;
  send(event: UserEvent): Promise<Result<TerminalSnapshot>>;
  operator(request: OperatorRequest): Promise<Result<OperatorResponse>>;
  /** Called with every new snapshot; returns the unsubscribe function. */
  subscribe(listener: (snapshot: TerminalSnapshot) => void): () => void;
}

/** Electron IPC channel names (preload ↔ main). */
export const IPC_CHANNELS = {
  snapshot: 'terminal:snapshot',
  send: 'terminal:send',
  operator: 'terminal:operator',
  update: 'terminal:update',
} as const;

/**
 * WebSocket messages of the headless bridge. Client → server: `{id, method, params}`; server → client: `{id, result}`
 * answers and unsolicited `{type: "snapshot", snapshot}` pushes. A message the bridge cannot parse far enough to find
 * a valid id is answered with `id: null` and an error result (codes BAD_MESSAGE, BAD_REQUEST).
 */
export type WsRequest =
  | { id: number; method: 'snapshot' }
  | { id: number; method: 'send'; params: UserEvent }
  | { id: number; method: 'operator'; params: OperatorRequest };

export type WsMessage =
  { id: number | null; result: Result<unknown> } | { type: 'snapshot'; snapshot: CustomerSnapshot };

/** The terminal as the UI transports serve it: customer snapshots only (see {@link CustomerSnapshot}). */
export interface CustomerApi {
  snapshot(): Promise<Result<CustomerSnapshot>>;
  send(event: UserEvent): Promise<Result<CustomerSnapshot>>;
  operator(request: OperatorRequest): Promise<Result<OperatorResponse>>;
  subscribe(listener: (snapshot: CustomerSnapshot) => void): () => void;
}
