import { GatewayError, MAX_LIST_LIMIT, type PaymentLink } from '../gateway/index.js';
import type { AltSaleState } from '../journal/alt-sales.js';
import type { StoredLink } from '../journal/index.js';
import { formatAmount, resolveLocale } from '../i18n/index.js';
import {
  ALT_SALE_STATES,
  AltPaymentError,
  type AltPaymentDesk,
  type AltRefundView,
  type AltSaleView,
} from './alt-payment-desk.js';
import type {
  AltRefundSummary,
  AltSaleStatus,
  AltSaleSummary,
  DisplayAmount,
  OperatorLink,
  OperatorResponse,
  Result,
} from './api.js';
import { LinkDeskError, operatorLinkActions, type LinkDesk } from './link-desk.js';
import { paymentLinkSummary } from './link-status.js';

/** Links per page in operator mode when the request names no limit. */
export const OPERATOR_LINKS_PAGE = 20;
/** Alternative-method sales listed when the request names no limit; at most {@link ALT_SALES_MAX}. */
const ALT_SALES_DEFAULT = 100;
const ALT_SALES_MAX = 1000;

/** The operator's grouping of each state an alternative-method sale is journaled in. */
function altSaleStatus(state: AltSaleState): AltSaleStatus {
  switch (state) {
    case 'sending':
    case 'PENDING':
      return 'pending';
    case 'SETTLED':
    case 'FUNDED':
      return 'settled';
    case 'FAILED':
      return 'failed';
    case 'ABANDONED':
      return 'abandoned';
    case 'unknown':
      return 'unknown';
  }
}

type Answer<T extends OperatorResponse['type']> = Result<Extract<OperatorResponse, { type: T }>>;

function ok<T>(value: T): Result<T> {
  return { ok: true, value };
}
function fail<T>(code: string, message: string): Result<T> {
  return { ok: false, error: { code, message } };
}

/** A refusal of the link desk or the gateway as the operator reads it; anything else goes up. */
function linkFailure<T>(e: unknown): Result<T> {
  if (e instanceof LinkDeskError) return fail(e.code, e.message);
  if (e instanceof GatewayError)
    return fail(e.code === 'GW_NOT_FOUND' ? 'LINK_NOT_FOUND' : e.code, e.message);
  throw e;
}

/**
 * Operator mode's payment links and alternative-method sales (issue 14, items 3 and 5), behind the operator desk's PIN
 * check: the views (amounts formatted in the terminal's locale, what the operator may do with each) over the link
 * desk and the alternative-method desk, which carry out and record every change in the audit log — nothing is
 * recorded twice here. The sales carry no personal data: the desk keeps none, and no payment page leaves here either.
 */
export class OperatorPayments {
  constructor(
    private readonly deps: {
      links: Pick<LinkDesk, 'operatorPage' | 'setStatusByOperator'>;
      altPayments: Pick<AltPaymentDesk, 'list' | 'get' | 'refund'>;
      /** The terminal's locale, for amounts. */
      locale: string;
    },
  ) {}

  /** One page of the gateway's list, each link with the journal's record and what the operator may do. */
  async links(query: { offset?: number; limit?: number }): Promise<Answer<'links'>> {
    const offset = query.offset ?? 0;
    const limit = query.limit ?? OPERATOR_LINKS_PAGE;
    if (!Number.isSafeInteger(offset) || offset < 0)
      return fail('BAD_REQUEST', 'offset must be a whole number from 0');
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT)
      return fail('BAD_REQUEST', `limit must be a whole number from 1 to ${MAX_LIST_LIMIT}`);
    try {
      const { page, links } = await this.deps.links.operatorPage({ offset, limit });
      return ok({
        type: 'links',
        offset,
        limit,
        ...(page.totalLinks !== undefined ? { totalLinks: page.totalLinks } : {}),
        ...(page.next !== undefined ? { next: page.next } : {}),
        links: links.map(({ link, mine }) => this.link(link, mine)),
      });
    } catch (e) {
      return linkFailure(e);
    }
  }

  /** Deactivates (`INACTIVE`) or reactivates (`ACTIVE`) a link of this terminal. */
  async setLinkStatus(
    linkId: string,
    target: 'INACTIVE' | 'ACTIVE',
  ): Promise<Answer<'link-deactivate' | 'link-reactivate'>> {
    try {
      const { link, mine } = await this.deps.links.setStatusByOperator(linkId, target);
      return ok({
        type: target === 'INACTIVE' ? 'link-deactivate' : 'link-reactivate',
        link: this.link(link, mine),
      });
    } catch (e) {
      return linkFailure(e);
    }
  }

  /** The sales in the given groups (all by default), newest first. */
  altSales(query: { status?: AltSaleStatus[]; limit?: number }): Answer<'alt-sales'> {
    const limit = query.limit ?? ALT_SALES_DEFAULT;
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > ALT_SALES_MAX)
      return fail('BAD_REQUEST', `limit must be a whole number from 1 to ${ALT_SALES_MAX}`);
    const wanted = query.status;
    const states =
      wanted === undefined ? undefined : ALT_SALE_STATES.filter((s) => wanted.includes(altSaleStatus(s)));
    const sales = this.deps.altPayments.list({ limit, ...(states !== undefined ? { states } : {}) });
    return ok({ type: 'alt-sales', sales: sales.map((s) => this.altSale(s)) });
  }

  /** A refund within what remains of the settled amount; the desk's typed refusal otherwise. */
  async altRefund(request: { saleId: number; amountMinor?: number }): Promise<Answer<'alt-refund'>> {
    if (!Number.isSafeInteger(request.saleId) || request.saleId < 1)
      return fail('BAD_REQUEST', 'saleId must be a sale number');
    try {
      const refund = await this.deps.altPayments.refund(request.saleId, request.amountMinor);
      const sale = this.deps.altPayments.get(request.saleId);
      if (sale === undefined) return fail('ALT_NOT_FOUND', `no alternative-method sale ${request.saleId}`);
      return ok({
        type: 'alt-refund',
        saleId: request.saleId,
        refund: this.refund(refund),
        sale: this.altSale(sale),
      });
    } catch (e) {
      if (e instanceof AltPaymentError) return fail(e.code, e.message);
      throw e;
    }
  }

  private money(minor: number, currency: string): DisplayAmount {
    return { minor, currency, text: formatAmount(minor, currency, resolveLocale(this.deps.locale)) };
  }

  private link(link: PaymentLink, mine: StoredLink | undefined): OperatorLink {
    return {
      ...paymentLinkSummary(link, mine),
      ...(link.totalAmountMinor !== undefined && link.currency !== undefined
        ? { amount: this.money(link.totalAmountMinor, link.currency) }
        : {}),
      allowed: operatorLinkActions(link.status, mine),
    };
  }

  private refund(r: AltRefundView): AltRefundSummary {
    return {
      entryId: r.entryId,
      amount: this.money(r.amountMinor, r.currency),
      state: r.state,
      ...(r.gatewayId !== undefined ? { gatewayId: r.gatewayId } : {}),
      ...(r.reason !== undefined ? { reason: r.reason } : {}),
      at: r.createdAt,
    };
  }

  /** Field by field: nothing of the customer, and not the payment page (it is the customer's to pay on). */
  private altSale(s: AltSaleView): AltSaleSummary {
    return {
      id: s.id,
      label: s.label,
      methodName: s.methodName,
      reference: s.code,
      status: altSaleStatus(s.state),
      state: s.state,
      amount: this.money(s.amountMinor, s.currency),
      settled: this.money(s.settledMinor, s.currency),
      refunded: this.money(s.refundedMinor, s.currency),
      refundable: this.money(s.refundableMinor, s.currency),
      ...(s.gatewayId !== undefined ? { gatewayId: s.gatewayId } : {}),
      ...(s.reason !== undefined ? { reason: s.reason } : {}),
      at: s.createdAt,
      ...(s.lastCheckAt !== undefined ? { lastCheckAt: s.lastCheckAt } : {}),
      ...(s.nextCheckAt !== undefined ? { nextCheckAt: s.nextCheckAt } : {}),
      refunds: s.refunds.map((r) => this.refund(r)),
      allowed: s.refundableMinor > 0 ? ['refund'] : [],
    };
  }
}
