import type { ApiError, DccChoice, Screen, UserEvent } from '../../src/host/api.js';
import { currencyByAlpha, formatMoney } from '../../src/money/index.js';

/** Pure presentation decisions, kept apart from the DOM so that they are tested without a browser. */

/** Events that carry data: the screen offers a widget for them (keypad, list, choice) instead of a plain button. */
export type DataEvent =
  'ENTER_TICKET' | 'CHOOSE_DURATION' | 'ENTER_AMOUNT' | 'CHOOSE_CURRENCY' | 'EXTEND' | 'CREDIT';

/** The button label of an event without data, or null for an event that needs a widget. */
export function actionLabel(type: UserEvent['type']): string | null {
  switch (type) {
    case 'START':
      return 'Pay for parking';
    case 'LOST_TICKET':
      return 'Lost ticket';
    case 'CONFIRM':
      return 'Pay now';
    case 'PAY_BY_LINK':
      return 'Pay by phone';
    // The methods are buttons of their own, by label; the field's value comes from the on-screen keyboard.
    case 'ALT_METHOD':
    case 'ALT_FIELD':
      return null;
    case 'END_SESSION':
      return 'End parking';
    case 'TAP_ENTRY':
      return 'Tap in';
    case 'TAP_EXIT':
      return 'Tap out';
    case 'CANCEL':
      return 'Cancel';
    case 'DONE':
      return 'Done';
    case 'MORE_TIME':
      return 'Yes, I need more time';
    // A standalone credit carries the operator PIN: its button sits beside the PIN field (customer.ts).
    case 'CREDIT':
    case 'ENTER_TICKET':
    case 'CHOOSE_DURATION':
    case 'ENTER_AMOUNT':
    case 'CHOOSE_CURRENCY':
    case 'EXTEND':
    case 'SET_ACCESSIBILITY':
    case 'SET_LANGUAGE':
    case 'SPEECH':
    case 'ECHO':
    case 'SPEECH_STATE':
    case 'ACTIVITY':
      return null;
  }
}

/** A label from the terminal's snapshot (in the customer's language), or the renderer's en_GB one without it. */
export function labelFor(labels: Record<string, string> | undefined, key: string, fallback: string): string {
  const label = labels?.[key];
  return label !== undefined && label.length > 0 ? label : fallback;
}

/**
 * What the customer reads when an event is refused or the terminal cannot be reached: the terminal's own words in
 * their language when it gave them (`customerText`), else the renderer's for its connection (`connection.*` labels of
 * the last snapshot, en_GB without one), else a general "that did not work" — never the developer's `message`.
 */
export function problemText(error: ApiError, labels: Record<string, string> | undefined): string {
  if (error.customerText !== undefined && error.customerText.length > 0) return error.customerText;
  switch (error.code) {
    // A standalone credit's operator PIN refused: the attendant is the operator here, and reads it as operator mode's
    // panel does (wrong PIN; locked, until when).
    case 'OPERATOR_PIN':
    case 'OPERATOR_LOCKED':
      return error.message;
    case 'DISCONNECTED':
      return connectionText('lost', labels);
    case 'TIMEOUT':
      return labelFor(labels, 'connection.timeout', 'The machine did not answer. Please try again.');
    default:
      return labelFor(labels, 'refused', 'That did not work. Please try again.');
  }
}

/** The banner while the renderer is not connected to the terminal, in the language of the last snapshot. */
export function connectionText(
  state: 'connecting' | 'lost',
  labels: Record<string, string> | undefined,
): string {
  return state === 'connecting'
    ? labelFor(labels, 'connection.connecting', 'Connecting to the machine…')
    : labelFor(labels, 'connection.lost', 'Connection to the machine lost — reconnecting…');
}

/** The title shown when the terminal sends none. */
export function defaultTitle(screen: Screen): string {
  switch (screen) {
    case 'starting':
      return 'Starting';
    case 'recovering':
      return 'Please wait';
    case 'idle':
      return 'Welcome';
    case 'enter-ticket':
      return 'Your ticket';
    case 'choose-duration':
      return 'How long will you park?';
    case 'enter-amount':
      return 'Amount';
    case 'confirm':
      return 'Please confirm';
    case 'choose-currency':
      return DCC_TITLE;
    case 'present-card':
      return 'Present your card';
    case 'processing':
      return 'Processing';
    case 'approved':
      return 'Approved';
    case 'declined':
      return 'Declined';
    case 'session':
      return 'Your parking';
    case 'pay-by-phone':
      return 'Pay by phone';
    case 'alt-details':
      return 'Your details';
    case 'alt-pending':
      return 'Payment pending';
    case 'error':
      return 'Sorry';
    case 'out-of-service':
      return 'Out of service';
  }
}

/**
 * The pay-by-phone QR code's width in CSS pixels (reference/kiosk.md §4): whole pixels per module, never fewer than 4,
 * and about 4.5 cm (170 CSS px) in all for scanning at 30–50 cm.
 */
export function linkQrPixels(modules: number): number {
  const perModule = Math.max(4, Math.round(180 / Math.max(1, modules)));
  return modules * perModule;
}

/** "4:05": minutes and seconds left, the same in every language (digits and a colon). */
export function timeLeftText(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

/** Screens on which the terminal is busy and the customer only waits. */
export function isWaitScreen(screen: Screen): boolean {
  return screen === 'starting' || screen === 'recovering' || screen === 'processing';
}

/** gateway.md §5: a neutral title, the same whatever the currencies. */
export const DCC_TITLE = 'Select currency';

/**
 * gateway.md §5: "An unattended terminal that cannot show all of this must not offer conversion." The choice screen
 * needs both amounts with their currencies, the rate, the markup and the disclaimer; without any of them the renderer
 * offers the local currency alone.
 */
export function dccComplete(dcc: DccChoice | undefined): boolean {
  if (!dcc) return false;
  const filled = (s: string | undefined): boolean => typeof s === 'string' && s.trim().length > 0;
  return (
    filled(dcc.local.text) &&
    filled(dcc.local.currency) &&
    filled(dcc.card.text) &&
    filled(dcc.card.currency) &&
    dcc.card.currency !== dcc.local.currency &&
    filled(dcc.rate) &&
    filled(dcc.markup) &&
    filled(dcc.disclaimer)
  );
}

/** Longest amount the keypad accepts, in digits (minor units). */
export const MAX_KEYED_DIGITS = 9;

/** The keypad's digits after pressing `key` ('0'–'9', 'back', 'clear'); leading zeros are dropped. */
export function pressKey(digits: string, key: string): string {
  if (key === 'clear') return '';
  if (key === 'back') return digits.slice(0, -1);
  if (!/^[0-9]$/.test(key)) return digits;
  const next = (digits + key).replace(/^0+/, '');
  return next.length > MAX_KEYED_DIGITS ? digits : next;
}

/** Minor units keyed so far (digits are minor units: "1250" is 12.50 in a two-decimal currency). */
export function keyedMinor(digits: string): number {
  return digits === '' ? 0 : Number.parseInt(digits, 10);
}

/** How the keyed amount reads; with an unknown currency, two decimals and no symbol. */
export function formatKeyed(digits: string, currency: string | undefined, locale: string): string {
  const minor = keyedMinor(digits);
  if (currency && currencyByAlpha(currency)) {
    try {
      return formatMoney(minor, currency, locale);
    } catch {
      // An unsupported locale: fall through to the plain form.
    }
  }
  const padded = String(minor).padStart(3, '0');
  return `${padded.slice(0, -2)}.${padded.slice(-2)}`;
}

/**
 * The QR code's SVG (sent by the terminal in the snapshot) as an image URL. As an <img>, the SVG cannot run script
 * or reach the page; the CSP allows data: images only.
 */
export function svgDataUrl(svg: string): string {
  return `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
}
