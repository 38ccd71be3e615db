import './styles.css';
import type { ApiError, Screen, CustomerSnapshot, SpeechCommand, UserEvent } from '../../src/host/api.js';
import { connectTerminal, type ConnectionState, type TerminalClient } from './client.js';
import {
  accessibilityButton,
  applyAccessibilityMode,
  moreTimeDialog,
  ScreenAnnouncer,
  type MoreTimeDialog,
} from './accessibility.js';
import { InputActivity } from './activity.js';
import { renderCustomer, type CustomerContext } from './customer.js';
import { h, replaceChildren } from './dom.js';
import { installKeypad, type Keypad } from './keypad.js';
import { OperatorPanel } from './operator-panel.js';
import { ScreenSpeech, speechButtons, spokenLang, spokenName } from './speech.js';
import { connectionText, problemText } from './view-model.js';

/** The keys of the screen keypads and the details keyboard: what they type stays on the page until Continue. */
const LOCAL_KEYS = '[data-testid^="ticket-key-"], [data-testid^="amount-key-"], [data-testid^="alt-key-"]';

/** Keys that move between the controls or within a field, and send nothing. */
const MOVING_KEYS: ReadonlySet<string> = new Set([
  'Tab',
  'ArrowLeft',
  'ArrowRight',
  'ArrowUp',
  'ArrowDown',
  'Home',
  'End',
]);

/**
 * The customer's language as a BCP 47 tag (what `lang` and `Intl` take), as the terminal writes it
 * (`CustomerView.language.lang`); `terminal.locale` for a view without a language.
 */
function customerLocale(snapshot: CustomerSnapshot): string {
  return snapshot.customer.language?.lang ?? snapshot.locale;
}

/**
 * `el`, or, when it sits in a part of the page drawn closed (`hidden`: the language list, closed again once a
 * language is chosen), the control that opens that part (`aria-controls`): a hidden control cannot take focus, and
 * focus would otherwise fall back to the top of the page.
 */
function shownControl(el: HTMLElement, scope: HTMLElement): HTMLElement {
  const closed = el.closest<HTMLElement>('[hidden]');
  if (!closed?.id) return el;
  return scope.querySelector<HTMLElement>(`[aria-controls="${CSS.escape(closed.id)}"]`) ?? el;
}

/**
 * The terminal's UI. It holds no payment state (DESIGN.md, TerminalApi): it shows the latest snapshot and sends the
 * customer's events; the terminal's answer (or its next pushed snapshot) decides what comes next.
 */
class App {
  #snapshot: CustomerSnapshot | undefined;
  #connection: ConnectionState = 'connecting';
  #renderedCustomer = '';
  #renderedScreen: Screen | undefined;
  /** `expiresAt` of the "more time" question on the page, if one is. */
  #renderedPrompt: string | undefined;
  #dialog: MoreTimeDialog | undefined;
  /** Where focus was when the question appeared: it goes back there when the question is answered. */
  #focusBeforeDialog: string | undefined;
  /** The control to focus once the area can take focus: a `data-testid`, null for none, undefined for no change. */
  #wantFocus: string | null | undefined;
  /** The control the customer last used to send an event: the area is inert meanwhile, which takes focus away. */
  #focusBeforeSend: string | undefined;
  #pending = false;
  /** The last refusal or failure of a request, until the next request or screen. */
  #problem: ApiError | undefined;
  readonly #drafts: CustomerContext['drafts'] = {
    ticket: '',
    amountDigits: '',
    alt: '',
    altField: '',
    pin: '',
  };
  readonly #customerSlot = h('main', { class: 'customer-slot', testid: 'customer-slot' });
  readonly #problemSlot = h('div', { class: 'problem-slot', attrs: { 'aria-live': 'assertive' } });
  readonly #announcer = new ScreenAnnouncer();
  readonly #operator: OperatorPanel;
  readonly #keypad: Keypad;
  // An echo, and what the page says of its own speech, go out by themselves, never as the screen's pending event: the
  // screen stays live, and the next key counts.
  readonly #speech = new ScreenSpeech((e) =>
    e.type === 'ECHO' || e.type === 'SPEECH_STATE' ? void this.client.send(e) : this.#send(e),
  );
  // Likewise ACTIVITY: a Continue pressed right after a key is never dropped behind it.
  readonly #activity = new InputActivity((e) => void this.client.send(e));

  constructor(
    private readonly root: HTMLElement,
    private readonly client: TerminalClient,
  ) {
    this.#operator = new OperatorPanel(client);
    root.dataset.transport = client.transport;
    replaceChildren(
      root,
      this.#announcer.element,
      this.#problemSlot,
      this.#customerSlot,
      this.#operator.element,
    );
    this.#listenForOperator(root);
    this.#keypad = installKeypad(
      this.#customerSlot,
      (command) => this.#speechKey(command),
      // A move by 4 or 6 is the customer's, as a Tab is: the control is said, and it counts as activity.
      (el) => {
        this.#speech.echo(spokenName(el), spokenLang(el));
        this.#activity.input(this.#snapshot?.customer);
      },
    );
    this.#listenForEcho();
    this.#listenForActivity();
    client.subscribe((s) => this.#apply(s));
    client.onConnection((state) => {
      this.#connection = state;
      if (state === 'open') {
        void this.#refresh();
        this.#speech.reconnected();
      }
      this.#renderProblem();
    });
    this.#renderProblem();
  }

  /**
   * Operator mode is entered discreetly, never from a button a customer sees: the key combination Ctrl+Alt+O (a
   * service keyboard inside the cabinet), or a press held for three seconds on the top-left corner of the screen
   * (a touch screen). Either only opens the PIN prompt.
   */
  #listenForOperator(root: HTMLElement): void {
    document.addEventListener('keydown', (e) => {
      if (e.ctrlKey && e.altKey && (e.key === 'o' || e.key === 'O')) {
        e.preventDefault();
        this.#operator.open();
      }
    });
    let held: ReturnType<typeof setTimeout> | undefined;
    const release = (): void => {
      if (held !== undefined) clearTimeout(held);
      held = undefined;
    };
    root.addEventListener('pointerdown', (e) => {
      if (e.clientX > 64 || e.clientY > 64) return;
      release();
      held = setTimeout(() => this.#operator.open(), 3_000);
    });
    root.addEventListener('pointerup', release);
    root.addEventListener('pointercancel', release);
    root.addEventListener('pointerleave', release);
  }

  async #refresh(): Promise<void> {
    const r = await this.client.snapshot();
    if (r.ok) {
      // After a reconnect the terminal may have restarted and counts from zero again: take its word.
      this.#snapshot = undefined;
      this.#apply(r.value);
    } else {
      this.#problem = r.error;
      this.#renderProblem();
    }
  }

  #apply(snapshot: CustomerSnapshot): void {
    if (this.#snapshot && snapshot.seq <= this.#snapshot.seq) return;
    this.#snapshot = snapshot;
    // The customer's language (what every customer text is in), not the terminal's: a screen reader reads the screen
    // in the language of its nearest `lang`, and this one holds every customer text.
    this.root.lang = customerLocale(snapshot);
    this.#renderCustomer();
  }

  #send(event: UserEvent): void {
    if (this.#pending) return;
    this.#pending = true;
    this.#problem = undefined;
    this.#focusBeforeSend = this.#focusedTestId();
    this.#setBusy(true);
    void this.client.send(event).then((r) => {
      this.#pending = false;
      this.#setBusy(false);
      if (r.ok) this.#apply(r.value);
      else {
        this.#problem = r.error;
        // Refused: the screen stays, and so does the customer's place on it.
        this.#wantFocus ??= this.#focusBeforeSend;
        // The terminal says its own refusals while the screen is spoken; a failure of the connection is the page's.
        if (r.error.customerText === undefined)
          this.#speech.echo(problemText(r.error, this.#snapshot?.customer.labels));
      }
      this.#renderProblem();
      this.#applyFocus();
    });
  }

  #setBusy(busy: boolean): void {
    // Inert while an event is on its way: a second tap must not send a second CONFIRM.
    this.#customerSlot.inert = busy;
    if (busy) this.#customerSlot.setAttribute('aria-busy', 'true');
    else this.#customerSlot.removeAttribute('aria-busy');
  }

  /**
   * Input echo in accessibility mode: the key of the screen keypad just pressed (by touch or the tactile keypad), and
   * the control Tab moved to — only a move the customer made, so that focus the page moves itself (the "more time"
   * question) does not cut off what is being said.
   */
  #listenForEcho(): void {
    let tabbedAt = 0;
    document.addEventListener(
      'keydown',
      (e) => {
        if (e.key === 'Tab') tabbedAt = Date.now();
      },
      true,
    );
    this.#customerSlot.addEventListener('focusin', (e) => {
      if (Date.now() - tabbedAt < 1_000) this.#speech.echo(spokenName(e.target), spokenLang(e.target));
    });
    this.#customerSlot.addEventListener('click', (e) => {
      const key =
        e.target instanceof Element
          ? e.target.closest('[data-testid^="ticket-key-"], [data-testid^="amount-key-"]')
          : null;
      if (key) this.#speech.echo(spokenName(key));
    });
  }

  /**
   * Typing the terminal does not see until Continue counts as the customer's activity for its time limits (ACTIVITY):
   * a key of a screen keypad (touched, or pressed through the tactile keypad, which presses it), a change of a text
   * field, a move between controls or within a field. A press that sends an event of its own is not counted here.
   */
  #listenForActivity(): void {
    const active = (): void => this.#activity.input(this.#snapshot?.customer);
    this.#customerSlot.addEventListener('input', active);
    this.#customerSlot.addEventListener('click', (e) => {
      if (e.target instanceof Element && e.target.closest(LOCAL_KEYS)) active();
    });
    this.#customerSlot.addEventListener('keydown', (e) => {
      if (MOVING_KEYS.has(e.key)) active();
    });
  }

  /**
   * A speech key (keypad or screen). With accessibility mode off, `*` turns it on: the tactile way into speech
   * (kiosk.md §2), for a customer who cannot see the accessibility button.
   */
  #speechKey(command: SpeechCommand): boolean {
    const view = this.#snapshot?.customer;
    if (!view) return false;
    if (view.accessibility !== true) {
      if (command !== 'repeat') return false;
      this.#send({ type: 'SET_ACCESSIBILITY', on: true });
      return true;
    }
    return this.#speech.command(command);
  }

  #renderProblem(): void {
    const lines: HTMLElement[] = [];
    const labels = this.#snapshot?.customer.labels;
    if (this.#connection !== 'open')
      lines.push(
        h('p', {
          class: 'banner banner-connection',
          testid: 'connection-banner',
          text: connectionText(this.#connection === 'connecting' ? 'connecting' : 'lost', labels),
        }),
      );
    const problem = this.#problem;
    if (problem)
      lines.push(
        h('p', {
          class: 'banner',
          testid: 'problem',
          text: problemText(problem, labels),
          attrs: { 'data-code': problem.code },
        }),
      );
    replaceChildren(this.#problemSlot, ...lines);
  }

  /** The `data-testid` of the focused control of the customer area, if focus is there. */
  #focusedTestId(): string | undefined {
    const active = document.activeElement;
    return active instanceof HTMLElement && this.#customerSlot.contains(active)
      ? active.dataset.testid
      : undefined;
  }

  #renderCustomer(): void {
    const snapshot = this.#snapshot;
    if (!snapshot) return;
    const view = snapshot.customer;
    const key = JSON.stringify(view);
    if (key === this.#renderedCustomer) return;
    const screenChanged = view.screen !== this.#renderedScreen;
    if (screenChanged) {
      this.#drafts.ticket = '';
      this.#drafts.amountDigits = '';
      // What was typed for an alternative method is personal data: gone as soon as its screen is.
      this.#drafts.alt = '';
      this.#drafts.altField = '';
      this.#drafts.pin = '';
      this.#keypad.reset();
      this.#problem = undefined;
      this.#renderProblem();
    }
    const hadDialog = this.#dialog !== undefined;
    let focused = this.#focusedTestId() ?? this.#focusBeforeSend;
    this.#focusBeforeSend = undefined;
    if (hadDialog && !view.prompt) focused = this.#focusBeforeDialog;
    applyAccessibilityMode(view.accessibility === true);
    this.#speech.update(view);
    const send = (e: UserEvent): void => this.#send(e);
    // Numbers the page formats itself (a keyed amount, the seconds left) in the customer's language too.
    const locale = customerLocale(snapshot);
    const el = renderCustomer(view, { send, locale, drafts: this.#drafts });
    const tools = h(
      'div',
      { class: 'customer-tools', testid: 'customer-tools' },
      accessibilityButton(view, send),
      speechButtons(view, (command) => void this.#speechKey(command)),
    );
    this.#dialog?.dispose();
    this.#dialog = view.prompt ? moreTimeDialog(view, view.prompt, locale, send) : undefined;
    // While the question is asked, the screen behind it is out of reach (a modal dialog).
    el.inert = this.#dialog !== undefined;
    tools.inert = this.#dialog !== undefined;
    replaceChildren(this.#customerSlot, el, tools, this.#dialog?.element);
    const promptAppeared = view.prompt !== undefined && view.prompt.expiresAt !== this.#renderedPrompt;
    this.#renderedCustomer = key;
    this.#renderedScreen = view.screen;
    this.#renderedPrompt = view.prompt?.expiresAt;
    this.#announcer.announce(el, screenChanged, view);

    if (this.#dialog && promptAppeared) {
      if (!hadDialog) this.#focusBeforeDialog = focused;
      this.#wantFocus = 'more-time-yes';
    } else {
      // On the same screen, focus stays on the control the customer was using (a field, the accessibility button, a
      // key). On a new screen nothing is focused: nothing may look pre-selected (gateway.md §5, the currency choice),
      // and the announcer reads the new screen; Tab starts from its top.
      this.#wantFocus = !screenChanged && focused ? focused : null;
    }
    this.#applyFocus();
  }

  /**
   * Moves focus where the last render wants it. While an event is on its way the area is inert and cannot take focus:
   * the move waits for the answer.
   */
  #applyFocus(): void {
    const want = this.#wantFocus;
    if (want === undefined || this.#customerSlot.inert) return;
    this.#wantFocus = undefined;
    const wanted = want
      ? this.#customerSlot.querySelector<HTMLElement>(`[data-testid="${CSS.escape(want)}"]`)
      : null;
    const target = wanted ? shownControl(wanted, this.#customerSlot) : null;
    if (target && !target.closest('[inert]')) target.focus();
    else if (
      document.activeElement instanceof HTMLElement &&
      this.#customerSlot.contains(document.activeElement)
    )
      document.activeElement.blur();
  }
}

const root = document.getElementById('app');
if (root) new App(root, connectTerminal());
