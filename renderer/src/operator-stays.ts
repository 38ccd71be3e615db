import type { OpenStaySummary, OperatorAction, OperatorResponse, Result } from '../../src/host/api.js';
import { button, h } from './dom.js';
import {
  actionsCell,
  codeCell,
  operatorConfirm,
  operatorSection,
  operatorTable,
  timeCell,
} from './operator-table.js';
import { holdReleaseTone } from './operator-notice.js';
import type { PaymentSectionsHost } from './operator-payments.js';

/** How each state of an open stay reads in the panel. */
const STATE_TEXT: Record<OpenStaySummary['state'], string> = {
  open: 'open',
  settling: 'being settled',
  releasing: 'reversal refused',
};

/**
 * The operator panel's open tap-and-go stays (hold, masked card, entry, amount held) and their release — passback
 * reset: a car let out by hand leaves its card's stay open, and the card is refused at the entry until it is released.
 * A release reverses the hold in full (nothing charged); one press arms it, a second confirms it. Never card data but
 * the masked number: the terminal sends none.
 */
export class OperatorStaysSection {
  #stays: OpenStaySummary[] | undefined;
  /** The stay the operator pressed Release on once and must confirm. */
  #armed: OpenStaySummary | undefined;

  constructor(private readonly host: PaymentSectionsHost) {}

  /** Forgets everything (the panel closed). */
  clear(): void {
    this.#stays = undefined;
    this.#armed = undefined;
  }

  async #run(action: OperatorAction): Promise<OperatorResponse | undefined> {
    const r: Result<OperatorResponse> = await this.host.call(action);
    if (!r.ok) {
      this.host.fail(r.error);
      return undefined;
    }
    return r.value;
  }

  async #load(): Promise<void> {
    const list = await this.#run({ type: 'stays' });
    if (list?.type !== 'stays') return;
    this.#stays = list.stays;
    this.host.render();
  }

  async #release(stay: OpenStaySummary): Promise<void> {
    this.#armed = undefined;
    const done = await this.#run({ type: 'hold-release', holdId: stay.holdId });
    if (done?.type === 'hold-release')
      this.host.notice(
        `Stay ${done.holdId}: ${done.outcome} — ${done.message}${done.outcome === 'released' ? '' : ` (${done.code})`}`,
        holdReleaseTone(done.outcome),
      );
    await this.#load();
  }

  render(): HTMLElement {
    const stays = this.#stays;
    const tools = h(
      'div',
      { class: 'operator-tools' },
      button(
        stays ? 'Reload open stays' : 'Show open stays',
        'operator-stays-load',
        () => void this.#load(),
        'btn btn-small',
      ),
    );
    const armed = this.#armed;
    const confirm = armed
      ? operatorConfirm(
          'operator-stay-confirm',
          `Release the stay of ${armed.maskedPan} (${armed.holdId})? Its hold of ${armed.held.text} is reversed, nothing is charged, and the card may enter again.`,
          {
            label: 'Confirm release',
            testid: 'confirm-stay-release',
            onClick: () => void this.#release(armed),
          },
          {
            testid: 'confirm-stay-back',
            onClick: () => {
              this.#armed = undefined;
              this.host.render();
            },
          },
        )
      : null;
    let list: HTMLElement | null = null;
    if (stays)
      list =
        stays.length === 0
          ? h('p', { testid: 'operator-stays-empty', text: 'No open stays' })
          : operatorTable(
              'Open stays',
              'operator-stays',
              ['Entered', 'Card', 'Held', 'State', 'Hold', 'Release'],
              stays.map((s) => this.#row(s)),
            );
    return operatorSection('operator-stays-heading', 'Open tap-and-go stays', tools, confirm, list);
  }

  #row(stay: OpenStaySummary): HTMLElement {
    const actions = stay.allowed.includes('release')
      ? [
          button(
            'Release',
            `stay-release-${stay.holdId}`,
            () => {
              this.#armed = stay;
              this.host.render();
            },
            'btn btn-small',
          ),
        ]
      : [];
    for (const a of actions) a.setAttribute('aria-label', `Release stay ${stay.holdId}`);
    return h(
      'tr',
      { testid: `stay-${stay.holdId}` },
      timeCell(stay.enteredAt),
      codeCell(stay.maskedPan),
      h('td', { text: stay.held.text }),
      h('td', {
        testid: `stay-state-${stay.holdId}`,
        text:
          stay.phonePaymentInDoubt !== undefined
            ? `${STATE_TEXT[stay.state]} — payment by phone in doubt (link ${stay.phonePaymentInDoubt})`
            : STATE_TEXT[stay.state],
      }),
      codeCell(stay.holdId),
      actionsCell(...actions),
    );
  }
}
