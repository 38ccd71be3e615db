import type {
  ApiError,
  AuditEntry,
  FeeShortfallSummary,
  OfflineDeclineSummary,
  OperatorAction,
  OperatorResponse,
  OperatorStatus,
  Result,
  ServiceTask,
  TransactionSummary,
} from '../../src/host/api.js';
import { parseDecimal } from '../../src/money/index.js';
import type { TerminalClient } from './client.js';
import { button, h, replaceChildren } from './dom.js';
import { OperatorPaymentSections } from './operator-payments.js';
import { OperatorStaysSection } from './operator-stays.js';
import {
  actionsCell,
  codeCell,
  operatorConfirm,
  operatorTable,
  reasonCell,
  timeCell,
} from './operator-table.js';
import {
  followOnNotice,
  NoticeAnnouncer,
  renderNotice,
  type NoticeTone,
  type OperatorNotice,
} from './operator-notice.js';
import { answerNeverCame, RefundRequestIds } from './refund-requests.js';
import { renderStatusBar } from './status-bar.js';

/** A refund or void the operator pressed once and must confirm (money moves: one tap is not enough). */
interface Armed {
  type: 'refund' | 'void';
  transactionId: string;
  amountMinor?: number;
  amountText: string;
  /**
   * Names this refund: confirmed twice, its request repeated, or asked for again after its answer was lost, the
   * terminal carries it out once (see {@link RefundRequestIds}).
   */
  requestId: string;
}

/**
 * The panel closes itself, forgetting the PIN, after this long without the operator's touch or key: an operator who
 * walks away from a kiosk in the street leaves neither refunds and voids to the next passer-by nor the customer's
 * screen covered. The status refresh every 2 s is not the operator's doing and does not count.
 */
export const OPERATOR_PANEL_IDLE_MS = 5 * 60_000;

/**
 * The operator panel: PIN, the transaction list with refund and void, and flushing the offline queue. Every request
 * carries the PIN (DESIGN.md: operator actions need it); the terminal checks it, the panel only remembers it while
 * open and forgets it on close.
 */
export class OperatorPanel {
  readonly element: HTMLElement;
  #pin = '';
  #transactions: TransactionSummary[] | undefined;
  #notice: OperatorNotice | undefined;
  /** Reads out each new notice once; kept while the panel is drawn again. */
  readonly #announcer = new NoticeAnnouncer();
  /** The panel's sheet as last drawn: replaced on each redraw, the announcer beside it kept. */
  #sheet: HTMLElement | undefined;
  #armed: Armed | undefined;
  #busy = false;
  #refundDrafts = new Map<string, string>();
  /** Kept when the panel closes: a refund whose answer was lost is the same refund when asked for again. */
  readonly #refundIds = new RefundRequestIds();
  #status: OperatorStatus | undefined;
  #audit: AuditEntry[] | undefined;
  /** The stored payments not collected in full after forwarding, once the operator asked for them. */
  #declines: OfflineDeclineSummary[] | undefined;
  /** The fees not collected in full, once the operator asked for them. */
  #shortfalls: FeeShortfallSummary[] | undefined;
  #statusTimer: ReturnType<typeof setInterval> | undefined;
  /** Closes the panel once the operator has left it alone for {@link OPERATOR_PANEL_IDLE_MS}. */
  #idleTimer: ReturnType<typeof setTimeout> | undefined;
  /** Payment links and phone / alternative-method sales. */
  readonly #payments: OperatorPaymentSections;
  /** The open tap-and-go stays and their release (passback reset). */
  readonly #stays: OperatorStaysSection;
  /** What the operator typed as the out-of-service notice so far: the panel redraws while they type. */
  #serviceNotice = '';

  constructor(private readonly client: TerminalClient) {
    const sections = {
      call: (action: OperatorAction) => this.#call(action),
      fail: (error: ApiError) => this.#fail(error),
      notice: (text: string, tone: NoticeTone) => {
        this.#notice = { text, tone };
        this.#render();
      },
      render: () => this.#render(),
    };
    this.#payments = new OperatorPaymentSections(sections);
    this.#stays = new OperatorStaysSection(sections);
    this.element = h('div', {
      class: 'operator-overlay',
      testid: 'operator-panel',
      // The operator's panel is in English, left to right, whatever the customer's language and direction.
      attrs: { hidden: '', role: 'dialog', 'aria-label': 'Operator', lang: 'en', dir: 'ltr' },
    });
    for (const type of ['pointerdown', 'keydown', 'input'])
      this.element.addEventListener(type, () => this.#touched());
  }

  open(): void {
    this.element.hidden = false;
    this.#touched();
    this.#render();
  }

  /** The operator did something in the panel: the idle time starts again. */
  #touched(): void {
    clearTimeout(this.#idleTimer);
    this.#idleTimer = setTimeout(() => {
      // A refund or void under way finishes and shows its answer first.
      if (this.#busy) this.#touched();
      else this.close();
    }, OPERATOR_PANEL_IDLE_MS);
  }

  close(): void {
    clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
    if (this.#statusTimer !== undefined) clearInterval(this.#statusTimer);
    this.#statusTimer = undefined;
    this.#status = undefined;
    this.#audit = undefined;
    this.#declines = undefined;
    this.#shortfalls = undefined;
    this.#pin = '';
    this.#transactions = undefined;
    this.#notice = undefined;
    this.#armed = undefined;
    this.#refundDrafts.clear();
    this.#payments.clear();
    this.#stays.clear();
    this.#serviceNotice = '';
    this.element.hidden = true;
    this.#sheet = undefined;
    this.#announcer.announce(undefined);
    replaceChildren(this.element, this.#announcer.element);
  }

  async #call(action: OperatorAction, pin = this.#pin): Promise<Result<OperatorResponse>> {
    this.#busy = true;
    this.#render();
    try {
      return await this.client.operator({ pin, action });
    } finally {
      this.#busy = false;
    }
  }

  #fail(error: ApiError): void {
    // No answer came (the connection dropped, a timeout): what the terminal did is not known — never "not done".
    this.#notice = {
      text: `${error.message} (${error.code})`,
      tone: answerNeverCame(error.code) ? 'unknown' : 'refusal',
    };
    if (error.code === 'OPERATOR_PIN' || error.code === 'OPERATOR_LOCKED') this.#signOut();
    this.#render();
  }

  /**
   * The terminal refused the PIN (wrong, or operator mode locked): the panel forgets it and stops the status refresh,
   * which would otherwise send it every 2 s — each a wrong PIN that counts towards the lockout (a terminal restarted
   * with another PIN under an open panel would be locked by the panel itself, ever longer).
   */
  #signOut(): void {
    if (this.#statusTimer !== undefined) clearInterval(this.#statusTimer);
    this.#statusTimer = undefined;
    this.#status = undefined;
    this.#pin = '';
    this.#transactions = undefined;
  }

  async #signIn(pin: string): Promise<void> {
    const r = await this.#call({ type: 'transactions', limit: 50 }, pin);
    if (!r.ok) return this.#fail(r.error);
    this.#pin = pin;
    this.#notice = undefined;
    this.#accept(r.value);
    // The status figures come only to a signed-in operator, and stay fresh while the panel is open.
    await this.#refreshStatus();
    if (this.#pin === '') return;
    if (this.#statusTimer !== undefined) clearInterval(this.#statusTimer);
    this.#statusTimer = setInterval(() => void this.#refreshStatus(), 2_000);
  }

  async #refreshStatus(): Promise<void> {
    const pin = this.#pin;
    if (pin === '') return;
    const r = await this.client.operator({ pin, action: { type: 'status' } });
    if (r.ok && r.value.type === 'status') {
      this.#status = r.value.status;
      this.#render();
    } else if (
      !r.ok &&
      this.#pin === pin &&
      (r.error.code === 'OPERATOR_PIN' || r.error.code === 'OPERATOR_LOCKED')
    )
      this.#fail(r.error);
  }

  async #reload(): Promise<void> {
    const r = await this.#call({ type: 'transactions', limit: 50 });
    if (!r.ok) return this.#fail(r.error);
    this.#accept(r.value);
  }

  #accept(response: OperatorResponse): void {
    switch (response.type) {
      case 'transactions':
        this.#transactions = response.transactions;
        break;
      case 'status':
        this.#status = response.status;
        break;
      case 'audit':
        this.#audit = response.records;
        break;
      case 'service':
        this.#notice = {
          text: `${response.task}: ${response.message}${response.outcome === 'refused' ? ` (${response.code})` : ''}`,
          tone: response.outcome === 'ok' ? 'success' : 'refusal',
        };
        break;
      case 'flush-queue':
        this.#notice = {
          text: `Queue flushed: ${response.forwarded} forwarded, ${response.declined} declined, ${response.remaining} remaining`,
          tone: 'info',
        };
        break;
      case 'offline-declines':
        this.#declines = response.declines;
        break;
      case 'offline-acknowledge':
        this.#declines = response.declines;
        this.#notice = response.acknowledged
          ? { text: `Acknowledged ${response.transactionId}`, tone: 'success' }
          : {
              text: `${response.transactionId} was not waiting for acknowledgement (NOT_AWAITING_ACKNOWLEDGEMENT)`,
              tone: 'refusal',
            };
        break;
      case 'fee-shortfalls':
        this.#shortfalls = response.shortfalls;
        break;
      case 'fee-shortfall-acknowledge':
        this.#shortfalls = response.shortfalls;
        this.#notice = response.acknowledged
          ? { text: `Acknowledged ${response.transactionId}`, tone: 'success' }
          : {
              text: `${response.transactionId} was not waiting for acknowledgement (NOT_AWAITING_ACKNOWLEDGEMENT)`,
              tone: 'refusal',
            };
        break;
      // Shown by the one who asked for them: a refund or void by #perform, which knows the payment it was of; the
      // others by their sections (renderer/src/operator-payments.ts, operator-stays.ts).
      case 'refund':
      case 'void':
      case 'links':
      case 'link-deactivate':
      case 'link-reactivate':
      case 'alt-sales':
      case 'alt-refund':
      case 'stays':
      case 'hold-release':
        break;
    }
    this.#render();
  }

  async #perform(armed: Armed): Promise<void> {
    this.#armed = undefined;
    const action: OperatorAction =
      armed.type === 'void'
        ? { type: 'void', transactionId: armed.transactionId }
        : {
            type: 'refund',
            transactionId: armed.transactionId,
            requestId: armed.requestId,
            ...(armed.amountMinor !== undefined ? { amountMinor: armed.amountMinor } : {}),
          };
    const r = await this.#call(action);
    if (armed.type === 'refund') this.#refundIds.settle(armed.transactionId, armed.amountMinor, r);
    if (!r.ok) return this.#fail(r.error);
    if (r.value.type === 'refund' || r.value.type === 'void')
      this.#notice = followOnNotice(armed.transactionId, r.value);
    this.#accept(r.value);
    await this.#reload();
  }

  /** Service mode: out of service with a notice for customers, back in service, self-test, prints, recovery. */
  #renderService(): HTMLElement {
    const notice = h('input', {
      class: 'service-notice',
      testid: 'service-notice',
      attrs: { type: 'text', maxlength: '120', id: 'service-notice' },
    });
    notice.value = this.#serviceNotice;
    notice.addEventListener('input', () => {
      this.#serviceNotice = notice.value;
    });
    const run = (task: ServiceTask, label: string): HTMLElement =>
      button(label, `service-${task}`, () => void this.#service(task, notice.value.trim()), 'btn btn-small');
    return h(
      'div',
      { class: 'operator-tools', attrs: { role: 'group', 'aria-label': 'Service mode' } },
      // A visible label, not a placeholder that goes when the operator types.
      h(
        'label',
        { class: 'service-notice-label', attrs: { for: 'service-notice' } },
        h('span', { text: 'Notice for customers while out of service (optional)' }),
        notice,
      ),
      run('on', 'Out of service'),
      run('off', 'Back in service'),
      run('reader-self-test', 'Reader self-test'),
      run('test-print', 'Test print'),
      run('reprint', 'Reprint last receipt'),
      run('rerun-recovery', 'Re-run recovery'),
      button('Audit log', 'operator-audit', () => void this.#loadAudit('json'), 'btn btn-small'),
      button(
        'Export audit log (CSV)',
        'operator-audit-csv',
        () => void this.#loadAudit('csv'),
        'btn btn-small',
      ),
    );
  }

  /** The audit log's newest records; with `csv`, also the export as a file the operator saves. */
  async #loadAudit(format: 'json' | 'csv'): Promise<void> {
    const r = await this.#call({ type: 'audit', limit: 50, format });
    if (!r.ok) return this.#fail(r.error);
    if (r.value.type === 'audit' && r.value.csv !== undefined) {
      const link = document.createElement('a');
      link.href = URL.createObjectURL(new Blob([r.value.csv], { type: 'text/csv' }));
      link.download = 'audit-log.csv';
      link.click();
      URL.revokeObjectURL(link.href);
    }
    this.#accept(r.value);
  }

  #renderAudit(): HTMLElement | null {
    if (!this.#audit) return null;
    return operatorTable(
      'Audit log',
      'operator-audit-log',
      ['Time', 'Actor', 'Action', 'Subject', 'Result'],
      this.#audit.map((e) =>
        h(
          'tr',
          { testid: `audit-${e.id}` },
          timeCell(e.time),
          h('td', { text: e.actor }),
          h('td', { text: e.action }),
          codeCell(e.subject ?? ''),
          h('td', { text: e.code ? `${e.result} (${e.code})` : e.result }),
        ),
      ),
      { caption: true },
    );
  }

  async #service(task: ServiceTask, notice: string): Promise<void> {
    const r = await this.#call({
      type: 'service',
      task,
      ...(task === 'on' && notice !== '' ? { reason: notice } : {}),
    });
    if (!r.ok) return this.#fail(r.error);
    this.#accept(r.value);
    await this.#refreshStatus();
  }

  async #flush(): Promise<void> {
    const r = await this.#call({ type: 'flush-queue' });
    if (!r.ok) return this.#fail(r.error);
    this.#accept(r.value);
    // A flush can add payments not collected in full: the list, when open, shows them.
    if (this.#declines !== undefined) await this.#loadDeclines();
  }

  async #loadDeclines(): Promise<void> {
    const r = await this.#call({ type: 'offline-declines' });
    if (!r.ok) return this.#fail(r.error);
    this.#accept(r.value);
  }

  async #acknowledge(transactionId: string): Promise<void> {
    const r = await this.#call({ type: 'offline-acknowledge', transactionId });
    if (!r.ok) return this.#fail(r.error);
    this.#accept(r.value);
    await this.#refreshStatus();
  }

  async #loadShortfalls(): Promise<void> {
    const r = await this.#call({ type: 'fee-shortfalls' });
    if (!r.ok) return this.#fail(r.error);
    this.#accept(r.value);
  }

  async #acknowledgeShortfall(transactionId: string): Promise<void> {
    const r = await this.#call({ type: 'fee-shortfall-acknowledge', transactionId });
    if (!r.ok) return this.#fail(r.error);
    this.#accept(r.value);
    await this.#refreshStatus();
  }

  /**
   * The fees a capture did not collect in full (an increment not approved, a capture for less than asked) or that a
   * tap-and-go exit could not price — money the operator is to collect or write off — each with its acknowledgement.
   */
  #renderShortfalls(): HTMLElement | null {
    const shortfalls = this.#shortfalls;
    if (shortfalls === undefined) return null;
    if (shortfalls.length === 0)
      return h('p', { testid: 'operator-shortfalls-empty', text: 'No fee shortfalls await acknowledgement' });
    return operatorTable(
      'Fees not collected in full',
      'operator-shortfalls',
      ['Recorded', 'Owed', 'Captured', 'Not collected', 'Reason', 'Transaction', ''],
      shortfalls.map((f) =>
        h(
          'tr',
          { testid: `shortfall-${f.transactionId}` },
          timeCell(f.at),
          h('td', { text: f.owed.text }),
          h('td', { text: f.captured.text }),
          h('td', { text: f.shortfall.text }),
          reasonCell(f.code),
          codeCell(f.transactionId),
          actionsCell(
            labelled(
              button(
                'Acknowledge',
                `acknowledge-shortfall-${f.transactionId}`,
                () => void this.#acknowledgeShortfall(f.transactionId),
                'btn btn-small',
              ),
              `Acknowledge shortfall ${f.transactionId}`,
            ),
          ),
        ),
      ),
      { caption: true },
    );
  }

  /**
   * The payments stored offline that the gateway declined, rejected, left unknown or approved for less when they were
   * forwarded — money the terminal told a customer was paid and did not collect — each with its acknowledgement.
   */
  #renderDeclines(): HTMLElement | null {
    const declines = this.#declines;
    if (declines === undefined) return null;
    if (declines.length === 0)
      return h('p', {
        testid: 'operator-declines-empty',
        text: 'No stored payments await acknowledgement',
      });
    return operatorTable(
      'Stored payments not collected in full after forwarding',
      'operator-declines',
      ['Stored', 'Forwarded', 'Amount', 'Card', 'State', 'Reason', 'Transaction', ''],
      declines.map((d) =>
        h(
          'tr',
          { testid: `decline-${d.transactionId}` },
          timeCell(d.storedAt),
          timeCell(d.forwardedAt ?? ''),
          h('td', { text: d.amount.text }),
          codeCell(d.maskedPan ?? ''),
          // An unknown outcome recovery resolved since: how (voided, or standing and collected).
          h('td', { text: d.resolution !== undefined ? `${d.state}: ${d.resolution}` : d.state }),
          reasonCell(d.reason ?? ''),
          codeCell(d.transactionId),
          actionsCell(
            labelled(
              button(
                'Acknowledge',
                `acknowledge-${d.transactionId}`,
                () => void this.#acknowledge(d.transactionId),
                'btn btn-small',
              ),
              `Acknowledge ${d.transactionId}`,
            ),
          ),
        ),
      ),
      { caption: true },
    );
  }

  /**
   * Arms a refund or void of a listed transaction. The listed amount of a payment the operator can act on is the one
   * the terminal sends — for a refund in full, what is left to refund; for a void, the amount it takes back — in the
   * local currency the terminal counts refunds in (src/host/operator-desk.ts), so a typed partial amount is read, and
   * confirmed, in that currency.
   */
  #arm(type: 'refund' | 'void', txn: TransactionSummary): void {
    let amountMinor: number | undefined;
    let amountText = txn.amount?.text ?? '';
    const draft = this.#refundDrafts.get(txn.transactionId)?.trim() ?? '';
    if (type === 'refund' && draft !== '') {
      const currency = txn.amount?.currency;
      if (!currency) {
        this.#notice = { text: 'This transaction has no amount to refund part of', tone: 'refusal' };
        this.#render();
        return;
      }
      try {
        amountMinor = parseDecimal(draft, currency);
      } catch (e) {
        this.#notice = {
          text: `Refund amount: ${e instanceof Error ? e.message : String(e)}`,
          tone: 'refusal',
        };
        this.#render();
        return;
      }
      amountText = `${draft} ${currency}`;
    }
    this.#armed = {
      type,
      transactionId: txn.transactionId,
      amountText,
      requestId: this.#refundIds.idFor(txn.transactionId, amountMinor),
      ...(amountMinor !== undefined ? { amountMinor } : {}),
    };
    this.#notice = undefined;
    this.#render();
  }

  #render(): void {
    if (this.element.hidden) return;
    const header = h(
      'div',
      { class: 'operator-header' },
      h('h2', { text: 'Operator' }),
      button('Close', 'operator-close', () => this.close(), 'btn btn-small'),
    );
    const notice = this.#notice ? renderNotice(this.#notice) : null;
    this.#announcer.announce(this.#notice);
    const body = this.#pin === '' ? this.#renderSignIn() : this.#renderSignedIn();
    const status = this.#pin !== '' && this.#status ? renderStatusBar(this.#status) : null;
    const focused = this.#focused();
    const sheet = h(
      'div',
      { class: 'operator-sheet', attrs: this.#busy ? { 'aria-busy': 'true' } : {} },
      header,
      status,
      notice,
      body,
    );
    // The sheet alone is drawn anew: the announcer stays put, or a screen reader could read its words out again.
    if (this.#sheet?.parentNode === this.element) this.#sheet.replaceWith(sheet);
    else replaceChildren(this.element, sheet, this.#announcer.element);
    this.#sheet = sheet;
    if (focused) this.#refocus(focused);
  }

  /**
   * The control that has focus before a redraw (a button, or a field with its caret; its value is kept in a draft), so
   * that a keyboard or screen-reader operator does not lose their place when the panel is drawn again.
   */
  #focused(): { testid: string; start: number | null; end: number | null } | undefined {
    const active = document.activeElement;
    if (!(active instanceof HTMLElement) || !this.element.contains(active) || !active.dataset.testid)
      return undefined;
    const field = active instanceof HTMLInputElement;
    return {
      testid: active.dataset.testid,
      start: field ? active.selectionStart : null,
      end: field ? active.selectionEnd : null,
    };
  }

  /** After a redraw (such as the status refresh every 2 s), the same control has focus again, a field its caret. */
  #refocus(focused: { testid: string; start: number | null; end: number | null }): void {
    const control = this.element.querySelector<HTMLElement>(`[data-testid="${CSS.escape(focused.testid)}"]`);
    if (!control) return;
    control.focus();
    if (control instanceof HTMLInputElement && focused.start !== null && focused.end !== null)
      control.setSelectionRange(focused.start, focused.end);
  }

  #renderSignIn(): HTMLElement {
    const pin = h('input', {
      class: 'pin-input',
      testid: 'operator-pin',
      attrs: {
        type: 'password',
        inputmode: 'numeric',
        autocomplete: 'off',
        maxlength: '32',
        'aria-label': 'Operator PIN',
      },
    });
    const submit = (): void => {
      if (pin.value.length > 0 && !this.#busy) void this.#signIn(pin.value);
    };
    pin.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') submit();
    });
    queueMicrotask(() => pin.focus());
    return h(
      'div',
      { class: 'operator-signin' },
      pin,
      button('Sign in', 'operator-login', submit, 'btn btn-primary'),
    );
  }

  #renderSignedIn(): HTMLElement {
    const armed = this.#armed;
    const confirm = armed
      ? operatorConfirm(
          'operator-confirm',
          `Confirm ${armed.type} of ${armed.amountText || 'the full amount'} (${armed.transactionId})?`,
          {
            label: `Confirm ${armed.type}`,
            testid: `confirm-${armed.type}`,
            onClick: () => void this.#perform(armed),
          },
          {
            testid: 'confirm-back',
            onClick: () => {
              this.#armed = undefined;
              this.#render();
            },
          },
        )
      : null;
    const rows = (this.#transactions ?? []).map((t) => this.#row(t));
    return h(
      'div',
      { class: 'operator-body' },
      h(
        'div',
        { class: 'operator-tools' },
        button('Reload', 'operator-reload', () => void this.#reload(), 'btn btn-small'),
        button('Flush offline queue', 'operator-flush', () => void this.#flush(), 'btn btn-small'),
        button(
          `Not collected after forwarding (${this.#status?.offline.declinedAfterForward ?? 0})`,
          'operator-declines-open',
          () => void this.#loadDeclines(),
          'btn btn-small',
        ),
        button(
          `Fee shortfalls (${this.#status?.feeShortfalls ?? 0})`,
          'operator-shortfalls-open',
          () => void this.#loadShortfalls(),
          'btn btn-small',
        ),
      ),
      this.#renderService(),
      this.#renderAudit(),
      this.#renderDeclines(),
      this.#renderShortfalls(),
      confirm,
      rows.length === 0
        ? h('p', { testid: 'operator-empty', text: 'No transactions' })
        : operatorTable(
            'Transactions',
            'operator-transactions',
            ['Time', 'Service', 'Amount', 'Card', 'State', 'Reference', ''],
            rows,
            { caption: true },
          ),
      this.#stays.render(),
      this.#payments.render(),
    );
  }

  #row(t: TransactionSummary): HTMLElement {
    const actions: HTMLElement[] = [];
    for (const allowed of t.allowed) {
      switch (allowed) {
        case 'refund': {
          // Named after the row's transaction: a screen reader on any row hears which payment it refunds.
          const amount = h('input', {
            class: 'refund-amount',
            testid: `refund-amount-${t.transactionId}`,
            attrs: {
              type: 'text',
              inputmode: 'decimal',
              placeholder: 'full',
              'aria-label': `Refund amount for ${t.transactionId}${
                t.amount ? ` (${t.amount.currency})` : ''
              }, empty for all that is left`,
            },
          });
          amount.value = this.#refundDrafts.get(t.transactionId) ?? '';
          amount.addEventListener('input', () => this.#refundDrafts.set(t.transactionId, amount.value));
          actions.push(
            amount,
            labelled(
              button('Refund', `refund-${t.transactionId}`, () => this.#arm('refund', t), 'btn btn-small'),
              `Refund ${t.transactionId}`,
            ),
          );
          break;
        }
        case 'void':
          actions.push(
            labelled(
              button('Void', `void-${t.transactionId}`, () => this.#arm('void', t), 'btn btn-small'),
              `Void ${t.transactionId}`,
            ),
          );
          break;
      }
    }
    return h(
      'tr',
      { testid: `txn-${t.transactionId}` },
      timeCell(t.at),
      h('td', { text: `${t.service}${t.comments ? ` — ${t.comments}` : ''}` }),
      h('td', { text: t.amount?.text ?? '' }),
      codeCell(t.maskedPan ?? ''),
      h(
        'td',
        { testid: `txn-state-${t.transactionId}` },
        t.note ? t.state : t.shortfall ? `${t.state}, ${t.shortfall.text} not collected` : t.state,
        // The host's words for the operator (in terminal.locale, which may be right to left): under the state, in
        // their own language and direction.
        t.note
          ? h('span', {
              class: 'txn-note',
              testid: `txn-note-${t.transactionId}`,
              text: t.note.text,
              attrs: { lang: t.note.lang, dir: 'auto' },
            })
          : null,
      ),
      codeCell(t.gatewayId ?? t.transactionId),
      actionsCell(...actions),
    );
  }
}

/** `control` with an accessible name of its own (a row's button, whose visible label every row repeats). */
function labelled<T extends HTMLElement>(control: T, name: string): T {
  control.setAttribute('aria-label', name);
  return control;
}
