import { eventKey, type CustomerView, type UserEvent } from '../../src/host/api.js';
import { button, h, LiveRegion } from './dom.js';
import { labelFor } from './view-model.js';

/**
 * The customer's accessibility aids in the browser (EN 301 549; WCAG 2.2 AA): the accessibility-mode button and the
 * document class it switches, the "Do you need more time?" dialog (WCAG 2.2.1) and the announcement of each screen.
 * The terminal decides both the mode and the question (CustomerView.accessibility, CustomerView.prompt); the renderer
 * only shows them and sends SET_ACCESSIBILITY and MORE_TIME.
 */

/** Class on `<html>` while the customer has accessibility mode on: large text and high contrast (styles.css). */
export const ACCESSIBLE_CLASS = 'accessible';

/** Shows the document in the customer's mode. */
export function applyAccessibilityMode(on: boolean): void {
  document.documentElement.classList.toggle(ACCESSIBLE_CLASS, on);
}

/**
 * The accessibility-mode toggle, on every customer screen: a button whose pressed state is the terminal's
 * (`aria-pressed`), so a screen reader says "on" or "off"; pressing it sends SET_ACCESSIBILITY with the opposite.
 */
export function accessibilityButton(view: CustomerView, send: (event: UserEvent) => void): HTMLButtonElement {
  const on = view.accessibility === true;
  const b = button(
    labelFor(view.labels, 'accessibility', 'Accessibility: large text'),
    'accessibility-button',
    () => send({ type: 'SET_ACCESSIBILITY', on: !on }),
    'btn btn-secondary accessibility-button',
  );
  b.setAttribute('aria-pressed', String(on));
  return b;
}

/** Seconds left until `expiresAt`, never negative; `fallback` when the time cannot be read. */
export function secondsLeft(expiresAt: string, fallback: number, now = Date.now()): number {
  const at = Date.parse(expiresAt);
  if (Number.isNaN(at)) return Math.max(0, fallback);
  return Math.max(0, Math.ceil((at - now) / 1000));
}

/**
 * Whether the live region speaks this second of the countdown: at the start, every ten seconds and each of the last
 * five. Speaking every second would drown the question itself.
 */
export function announcesSecond(left: number, first: boolean): boolean {
  return first || left <= 5 || left % 10 === 0;
}

/** "20 seconds" in the customer's language, with the plural rule of that language (Intl). */
export function secondsText(seconds: number, locale: string): string {
  try {
    return new Intl.NumberFormat(locale, { style: 'unit', unit: 'second', unitDisplay: 'long' }).format(
      seconds,
    );
  } catch {
    return `${seconds} s`;
  }
}

export interface MoreTimeDialog {
  readonly element: HTMLElement;
  /** The "Yes" button: focus goes there when the question appears. */
  readonly yes: HTMLButtonElement;
  /** Stops the countdown; call when the dialog leaves the page. */
  dispose(): void;
}

/**
 * "Do you need more time?" as a modal alert dialog: labelled by its question, described by the countdown, with Yes
 * (MORE_TIME) and, when the screen allows it, No (CANCEL). Tab stays inside it. The visible countdown ticks every
 * second (`role="timer"`); a polite live region reads it out at a calmer pace.
 */
export function moreTimeDialog(
  view: CustomerView,
  prompt: NonNullable<CustomerView['prompt']>,
  locale: string,
  send: (event: UserEvent) => void,
): MoreTimeDialog {
  const label = (key: string, fallback: string): string => labelFor(view.labels, key, fallback);
  const left = (): number => secondsLeft(prompt.expiresAt, prompt.seconds);
  const remaining = (n: number): string =>
    label('moreTime.remaining', 'Time left: {time}').replace('{time}', secondsText(n, locale));

  const timer = h('p', {
    class: 'more-time-countdown',
    testid: 'more-time-countdown',
    text: remaining(left()),
    attrs: { role: 'timer', id: 'more-time-countdown' },
  });
  const spoken = h('p', {
    class: 'visually-hidden',
    testid: 'more-time-live',
    attrs: { 'aria-live': 'polite', 'aria-atomic': 'true' },
  });
  const yes = button(
    label('moreTime.yes', label('action.MORE_TIME', 'Yes, I need more time')),
    'more-time-yes',
    () => send({ type: 'MORE_TIME' }),
    'btn btn-primary',
  );
  const no = view.actions.includes('CANCEL')
    ? button(
        label('moreTime.no', 'No, cancel'),
        'more-time-no',
        () => send({ type: 'CANCEL' }),
        'btn btn-secondary',
      )
    : null;
  const sheet = h(
    'div',
    {
      class: 'more-time-sheet',
      testid: 'more-time',
      attrs: {
        role: 'alertdialog',
        'aria-modal': 'true',
        'aria-labelledby': 'more-time-title',
        'aria-describedby': 'more-time-countdown',
      },
    },
    h('h2', {
      class: 'more-time-title',
      testid: 'more-time-title',
      text: label('moreTime.title', 'Do you need more time?'),
      attrs: { id: 'more-time-title' },
    }),
    timer,
    spoken,
    h('div', { class: 'actions' }, yes, no),
  );
  const element = h('div', { class: 'more-time-overlay' }, sheet);

  // A modal: Tab and Shift+Tab go round the dialog's own buttons.
  sheet.addEventListener('keydown', (e) => {
    if (e.key !== 'Tab') return;
    const buttons = [...sheet.querySelectorAll<HTMLButtonElement>('button')];
    const first = buttons[0];
    const last = buttons[buttons.length - 1];
    if (!first || !last) return;
    if (e.shiftKey && document.activeElement === first) {
      e.preventDefault();
      last.focus();
    } else if (!e.shiftKey && document.activeElement === last) {
      e.preventDefault();
      first.focus();
    }
  });

  let firstTick = true;
  const tick = (): void => {
    const n = left();
    timer.textContent = remaining(n);
    if (announcesSecond(n, firstTick)) spoken.textContent = remaining(n);
    firstTick = false;
  };
  // The first announcement waits a moment: the dialog's own name and description are read first.
  const interval = setInterval(tick, 1_000);
  return { element, yes, dispose: () => clearInterval(interval) };
}

/**
 * The texts the screen announcer reads out, by `data-testid`, each with the event that put it there where events can
 * put the same words there again: the title, the message, why a value typed was refused (`alt-problem`) and the
 * notice of a payment on the phone declined (`pay-by-phone-notice`).
 */
const ANNOUNCED: readonly [testid: string, event: (view: AnnouncedView) => number | undefined][] = [
  ['customer-title', () => undefined],
  ['customer-message', (view) => view.messageEvent],
  ['alt-problem', (view) => view.altField?.problemEvent],
  ['pay-by-phone-notice', (view) => view.payByPhone?.noticeEvent],
];

/** What the announcer reads of the view besides the rendered screen: the events of its texts. */
type AnnouncedView = Pick<CustomerView, 'messageEvent' | 'altField' | 'payByPhone'>;

/**
 * A polite live region that reads out each new screen (its title and message), so that a screen-reader user hears
 * that the screen changed without moving focus — and a new title or message on the same screen (a ticket not found,
 * an extension made, the screen in another language), which a sighted customer sees change, with the texts an event
 * put under it (why a value typed was refused, a payment on the phone declined); and the same words again when a new
 * event put them there (`CustomerView.messageEvent`, `AltFieldView.problemEvent`, `PayByPhoneView.noticeEvent`: a
 * card refused a second time in the same words, the same wrong value typed twice, a second card declined on the
 * phone), which a sighted customer sees happen. The same screen drawn again (a refreshed snapshot) is not read out
 * again. Those texts have no live role of their own: every redraw makes their elements anew, which would read them
 * out again each time, or never.
 */
export class ScreenAnnouncer {
  readonly #region = new LiveRegion('screen-announcer');
  readonly element = this.#region.element;
  /** The texts last read out, each by its key with its event (`eventKey`). */
  #said: string | undefined;

  /**
   * Reads out `screen`'s title and message, and the texts an event put there, when it is a new screen, when they
   * changed on the same one, or when a new event of `view` put one of them there again.
   */
  announce(screen: HTMLElement, newScreen: boolean, view: AnnouncedView = {}): void {
    const texts = ANNOUNCED.map(([testid, event]) => ({
      key: eventKey(testid, event(view)),
      text: screen.querySelector(`[data-testid="${testid}"]`)?.textContent?.trim() ?? '',
    })).filter((t) => t.text.length > 0);
    const key = JSON.stringify(texts);
    if (!newScreen && key === this.#said) return;
    this.#said = key;
    // The same text twice in a row (two "Please wait" screens) is still announced.
    this.#region.say(texts.map((t) => t.text).join('. '));
  }
}
