import './styles.css';
import type { Screen, CustomerSnapshot, UserEvent } from '../../src/host/api.js';
import { connectTerminal, type ConnectionState, type TerminalClient } from './client.js';
import { renderCustomer, type CustomerContext } from './customer.js';
import { h, replaceChildren } from './dom.js';
import { OperatorPanel } from './operator-panel.js';

/**
 * The terminal's UI. It holds no payment state (DESIGN.md, TerminalApi): it shows the latest snapshot and sends the
 * customer's events; the terminal's answer (or its next pushed snapshot) decides what comes next.
 */
class App {
  #snapshot: CustomerSnapshot | undefined;
  #connection: ConnectionState = 'connecting';
  #renderedCustomer = '';
  #renderedScreen: Screen | undefined;
  #pending = false;
  #problem: string | undefined;
  readonly #drafts: CustomerContext['drafts'] = { ticket: '', amountDigits: '' };
  readonly #customerSlot = h('main', { class: 'customer-slot', testid: 'customer-slot' });
  readonly #problemSlot = h('div', { class: 'problem-slot', attrs: { 'aria-live': 'assertive' } });
  readonly #operator: OperatorPanel;

  constructor(
    private readonly root: HTMLElement,
    private readonly client: TerminalClient,
  ) {
    this.#operator = new OperatorPanel(client);
    root.dataset.transport = client.transport;
    replaceChildren(root, this.#problemSlot, this.#customerSlot, this.#operator.element);
    this.#listenForOperator(root);
    client.subscribe((s) => this.#apply(s));
    client.onConnection((state) => {
      this.#connection = state;
      if (state === 'open') void this.#refresh();
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
      this.#problem = r.error.message;
      this.#renderProblem();
    }
  }

  #apply(snapshot: CustomerSnapshot): void {
    if (this.#snapshot && snapshot.seq <= this.#snapshot.seq) return;
    this.#snapshot = snapshot;
    this.root.lang = snapshot.locale.split('-')[0] ?? 'en';
    this.#renderCustomer();
  }

  #send(event: UserEvent): void {
    if (this.#pending) return;
    this.#pending = true;
    this.#problem = undefined;
    this.#setBusy(true);
    void this.client.send(event).then((r) => {
      this.#pending = false;
      this.#setBusy(false);
      if (r.ok) this.#apply(r.value);
      else this.#problem = r.error.message;
      this.#renderProblem();
    });
  }

  #setBusy(busy: boolean): void {
    // Inert while an event is on its way: a second tap must not send a second CONFIRM.
    this.#customerSlot.inert = busy;
    if (busy) this.#customerSlot.setAttribute('aria-busy', 'true');
    else this.#customerSlot.removeAttribute('aria-busy');
  }

  #renderProblem(): void {
    const lines: HTMLElement[] = [];
    if (this.#connection !== 'open')
      lines.push(
        h('p', {
          class: 'banner banner-connection',
          testid: 'connection-banner',
          text:
            this.#connection === 'connecting'
              ? 'Connecting to the terminal…'
              : 'Connection to the terminal lost — reconnecting…',
        }),
      );
    if (this.#problem) lines.push(h('p', { class: 'banner', testid: 'problem', text: this.#problem }));
    replaceChildren(this.#problemSlot, ...lines);
  }

  #renderCustomer(): void {
    const snapshot = this.#snapshot;
    if (!snapshot) return;
    const view = snapshot.customer;
    const key = JSON.stringify(view);
    if (key === this.#renderedCustomer) return;
    if (view.screen !== this.#renderedScreen) {
      this.#drafts.ticket = '';
      this.#drafts.amountDigits = '';
      this.#problem = undefined;
      this.#renderProblem();
    }
    const active = document.activeElement;
    const focused =
      active instanceof HTMLElement && this.#customerSlot.contains(active)
        ? active.dataset.testid
        : undefined;
    const el = renderCustomer(view, {
      send: (e) => this.#send(e),
      locale: snapshot.locale,
      drafts: this.#drafts,
    });
    replaceChildren(this.#customerSlot, el);
    this.#renderedCustomer = key;
    this.#renderedScreen = view.screen;
    // Keep the cursor in a field the customer was typing in; never focus anything else (gateway.md §5: nothing
    // pre-selected on the currency choice).
    const again = focused ? el.querySelector<HTMLElement>(`[data-testid="${CSS.escape(focused)}"]`) : null;
    if (again instanceof HTMLInputElement) again.focus();
    else if (
      document.activeElement instanceof HTMLElement &&
      this.#customerSlot.contains(document.activeElement)
    )
      document.activeElement.blur();
  }
}

const root = document.getElementById('app');
if (root) new App(root, connectTerminal());
