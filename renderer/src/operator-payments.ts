import type {
  AltSaleSummary,
  ApiError,
  OperatorAction,
  OperatorLink,
  OperatorResponse,
  Result,
} from '../../src/host/api.js';
import { parseDecimal } from '../../src/money/index.js';
import { button, h } from './dom.js';
import {
  actionsCell,
  codeCell,
  operatorConfirm,
  operatorSection,
  operatorTable,
  timeCell,
} from './operator-table.js';
import { altRefundTone, type NoticeTone } from './operator-notice.js';
import { RefundRequestIds } from './refund-requests.js';

/** Links per page of the panel's list. */
export const LINKS_PAGE = 10;

type LinksPage = Extract<OperatorResponse, { type: 'links' }>;

/** A refund the operator pressed once and must confirm (money moves: one tap is not enough). */
interface ArmedRefund {
  saleId: number;
  amountMinor?: number;
  amountText: string;
  /**
   * Names this refund: confirmed twice, its request repeated, or asked for again after its answer was lost, the
   * terminal carries it out once (see {@link RefundRequestIds}).
   */
  requestId: string;
}

/** What the sections need of the panel: its one way to the terminal (with the PIN) and its result line. */
export interface PaymentSectionsHost {
  call(action: OperatorAction): Promise<Result<OperatorResponse>>;
  /** Shows a refusal (code and message) in the panel's result line. */
  fail(error: ApiError): void;
  /** Shows a result in the panel's result line. */
  notice(text: string, tone: NoticeTone): void;
  /** Draws the panel again. */
  render(): void;
}

/**
 * The operator panel's sections for the terminal's payment links (a page of the gateway's list at a time; deactivate,
 * reactivate) and its phone and alternative-method sales (their status and what may be refunded; a refund, of all or
 * part, confirmed before it is sent). Nothing of the customer is shown: the terminal sends none.
 */
export class OperatorPaymentSections {
  #links: LinksPage | undefined;
  #sales: AltSaleSummary[] | undefined;
  /** What the operator typed as each sale's refund amount (kept across the panel's redraws). */
  #refundDrafts = new Map<number, string>();
  #armed: ArmedRefund | undefined;
  /** Kept when the panel closes: a refund whose answer was lost is the same refund when asked for again. */
  readonly #refundIds = new RefundRequestIds();

  constructor(private readonly host: PaymentSectionsHost) {}

  /** Forgets everything (the panel closed). */
  clear(): void {
    this.#links = undefined;
    this.#sales = undefined;
    this.#armed = undefined;
    this.#refundDrafts.clear();
  }

  async #run(action: OperatorAction): Promise<OperatorResponse | undefined> {
    const r = await this.host.call(action);
    if (!r.ok) {
      this.host.fail(r.error);
      return undefined;
    }
    return r.value;
  }

  async #loadLinks(offset: number): Promise<void> {
    const page = await this.#run({ type: 'links', offset, limit: LINKS_PAGE });
    if (page?.type !== 'links') return;
    this.#links = page;
    this.host.render();
  }

  async #setLink(link: OperatorLink, type: 'link-deactivate' | 'link-reactivate'): Promise<void> {
    const done = await this.#run({ type, linkId: link.id });
    if (done?.type !== 'link-deactivate' && done?.type !== 'link-reactivate') return;
    this.host.notice(
      `Link ${done.link.id} ${type === 'link-deactivate' ? 'deactivated' : 'reactivated'}: ${done.link.status}`,
      'success',
    );
    await this.#loadLinks(this.#links?.offset ?? 0);
  }

  async #loadSales(): Promise<void> {
    const sales = await this.#run({ type: 'alt-sales' });
    if (sales?.type !== 'alt-sales') return;
    this.#sales = sales.sales;
    this.host.render();
  }

  #arm(sale: AltSaleSummary): void {
    const draft = this.#refundDrafts.get(sale.id)?.trim() ?? '';
    let amountMinor: number | undefined;
    let amountText = `all that remains (${sale.refundable.text})`;
    if (draft !== '') {
      try {
        amountMinor = parseDecimal(draft, sale.amount.currency);
      } catch (e) {
        this.host.fail({
          code: 'BAD_AMOUNT',
          message: `Refund amount: ${e instanceof Error ? e.message : String(e)}`,
        });
        return;
      }
      amountText = `${draft} ${sale.amount.currency}`;
    }
    this.#armed = {
      saleId: sale.id,
      amountText,
      requestId: this.#refundIds.idFor(String(sale.id), amountMinor),
      ...(amountMinor !== undefined ? { amountMinor } : {}),
    };
    this.host.render();
  }

  async #refund(armed: ArmedRefund): Promise<void> {
    this.#armed = undefined;
    const answer = await this.host.call({
      type: 'alt-refund',
      saleId: armed.saleId,
      requestId: armed.requestId,
      ...(armed.amountMinor !== undefined ? { amountMinor: armed.amountMinor } : {}),
    });
    this.#refundIds.settle(String(armed.saleId), armed.amountMinor, answer);
    if (!answer.ok) return this.host.fail(answer.error);
    const done = answer.value;
    if (done.type !== 'alt-refund') return;
    this.#refundDrafts.delete(armed.saleId);
    const refund = `Refund of ${done.refund.amount.text} of sale ${done.saleId}`;
    // The terminal answers `in-flight` for a refund whose gateway answer was lost: recovery cancels it (its timeout
    // void), so the customer is not refunded by it — never "under way" to the operator.
    this.host.notice(
      done.refund.state === 'in-flight'
        ? `${refund}: its answer was lost: the terminal is cancelling it. Do not tell the customer it is refunded; ` +
            'once the sale shows it refundable again, nothing was refunded: refund again'
        : `${refund}: ${done.refund.state}; ${done.sale.refundable.text} may still be refunded`,
      altRefundTone(done.refund.state),
    );
    await this.#loadSales();
  }

  render(): HTMLElement {
    return h('div', { class: 'operator-payments' }, this.#renderLinks(), this.#renderSales());
  }

  #renderLinks(): HTMLElement {
    const page = this.#links;
    const tools = h(
      'div',
      { class: 'operator-tools' },
      button(
        page ? 'Reload links' : 'Show links',
        'operator-links-load',
        () => void this.#loadLinks(page?.offset ?? 0),
        'btn btn-small',
      ),
    );
    let list: HTMLElement | null = null;
    let paging: HTMLElement | null = null;
    if (page) {
      const first = page.links.length === 0 ? 0 : page.offset + 1;
      const last = page.offset + page.links.length;
      const of = page.totalLinks !== undefined ? ` of ${page.totalLinks}` : '';
      const previous = button(
        'Previous page',
        'operator-links-previous',
        () => void this.#loadLinks(Math.max(0, page.offset - page.limit)),
        'btn btn-small',
      );
      previous.disabled = page.offset === 0;
      const nextPage = page.next;
      const next = button(
        'Next page',
        'operator-links-next',
        () => void (nextPage ? this.#loadLinks(nextPage.offset) : undefined),
        'btn btn-small',
      );
      next.disabled = nextPage === undefined;
      paging = h(
        'div',
        { class: 'operator-tools', attrs: { role: 'group', 'aria-label': 'Pages of payment links' } },
        previous,
        h('span', { testid: 'operator-links-range', text: `Links ${first}–${last}${of}` }),
        next,
      );
      list =
        page.links.length === 0
          ? h('p', { testid: 'operator-links-empty', text: 'No payment links' })
          : operatorTable(
              'Payment links',
              'operator-links',
              ['Link', 'Reference', 'Amount', 'Gateway status', 'Terminal', 'Created', 'Actions'],
              page.links.map((l) => this.#linkRow(l)),
            );
    }
    return operatorSection('operator-links-heading', 'Payment links', tools, list, paging);
  }

  #linkRow(link: OperatorLink): HTMLElement {
    const actions = link.allowed.map((allowed) =>
      allowed === 'deactivate'
        ? labelled(
            button(
              'Deactivate',
              `link-deactivate-${link.id}`,
              () => void this.#setLink(link, 'link-deactivate'),
              'btn btn-small',
            ),
            `Deactivate link ${link.id}`,
          )
        : labelled(
            button(
              'Reactivate',
              `link-reactivate-${link.id}`,
              () => void this.#setLink(link, 'link-reactivate'),
              'btn btn-small',
            ),
            `Reactivate link ${link.id}`,
          ),
    );
    const t = link.terminal;
    const terminal = t
      ? `${t.state}${t.closeReason ? ` (${t.closeReason})` : ''}${t.purpose === 'pay-later' ? ', pay later' : ''}`
      : 'another terminal';
    return h(
      'tr',
      { testid: `link-${link.id}` },
      h('th', { class: 'code', text: link.id, attrs: { scope: 'row' } }),
      codeCell(t?.reference ?? ''),
      h('td', { text: link.amount?.text ?? '' }),
      h('td', { testid: `link-status-${link.id}`, text: link.status }),
      h('td', { testid: `link-terminal-${link.id}`, text: terminal }),
      timeCell(link.createdDate ?? t?.createdAt ?? ''),
      actionsCell(...actions),
    );
  }

  #renderSales(): HTMLElement {
    const sales = this.#sales;
    const tools = h(
      'div',
      { class: 'operator-tools' },
      button(
        sales ? 'Reload sales' : 'Show sales',
        'operator-alt-load',
        () => void this.#loadSales(),
        'btn btn-small',
      ),
    );
    const armed = this.#armed;
    const confirm = armed
      ? operatorConfirm(
          'operator-alt-confirm',
          `Confirm refund of ${armed.amountText} of sale ${armed.saleId}?`,
          { label: 'Confirm refund', testid: 'confirm-alt-refund', onClick: () => void this.#refund(armed) },
          {
            testid: 'confirm-alt-back',
            onClick: () => {
              this.#armed = undefined;
              this.host.render();
            },
          },
        )
      : null;
    let list: HTMLElement | null = null;
    if (sales)
      list =
        sales.length === 0
          ? h('p', { testid: 'operator-alt-empty', text: 'No phone or alternative-method sales' })
          : operatorTable(
              'Phone and alternative-method sales',
              'operator-alt-sales',
              ['Sale', 'Method', 'Reference', 'Amount', 'Status', 'Refunded', 'Refundable', 'Refund'],
              sales.map((s) => this.#saleRow(s)),
            );
    return operatorSection('operator-alt-heading', 'Phone and alternative payments', tools, confirm, list);
  }

  #saleRow(sale: AltSaleSummary): HTMLElement {
    const actions: HTMLElement[] = [];
    if (sale.allowed.includes('refund')) {
      const amount = h('input', {
        class: 'refund-amount',
        testid: `alt-refund-amount-${sale.id}`,
        attrs: {
          type: 'text',
          inputmode: 'decimal',
          autocomplete: 'off',
          placeholder: 'all',
          'aria-label': `Refund amount for sale ${sale.id} (${sale.amount.currency}), empty for all`,
        },
      });
      amount.value = this.#refundDrafts.get(sale.id) ?? '';
      amount.addEventListener('input', () => this.#refundDrafts.set(sale.id, amount.value));
      amount.addEventListener('keydown', (e) => {
        if (e.key === 'Enter') this.#arm(sale);
      });
      actions.push(
        amount,
        labelled(
          button('Refund', `alt-refund-${sale.id}`, () => this.#arm(sale), 'btn btn-small'),
          `Refund sale ${sale.id}`,
        ),
      );
    }
    const state = sale.state.toLowerCase() === sale.status ? sale.status : `${sale.status} (${sale.state})`;
    return h(
      'tr',
      { testid: `alt-sale-${sale.id}` },
      h('th', { text: String(sale.id), attrs: { scope: 'row' } }),
      h('td', { text: sale.label }),
      codeCell(sale.reference),
      h('td', { text: sale.amount.text }),
      h('td', { testid: `alt-status-${sale.id}`, text: sale.reason ? `${state}: ${sale.reason}` : state }),
      h('td', { testid: `alt-refunded-${sale.id}`, text: sale.refunded.text }),
      h('td', { testid: `alt-refundable-${sale.id}`, text: sale.refundable.text }),
      actionsCell(...actions),
    );
  }
}

function labelled<T extends HTMLElement>(el: T, label: string): T {
  el.setAttribute('aria-label', label);
  return el;
}
