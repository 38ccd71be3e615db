/**
 * Payment links (spec 000 part C; reference/gateway.md §2, §4): create, update (a field the update omits is
 * removed), activate/deactivate through `status`, get, list with offset/limit paging, and the payments made on the
 * hosted page.
 */
import { toDecimalString } from '../money/index.js';
import { GatewayAnswer } from './errors.js';
import { FieldReader, isoSeconds, valueAt } from './fields.js';
import type { SandboxStore } from './store.js';

/** A stored payment link. */
export interface StoredLink {
  /** The purchase number (spec 000: `{id}` is the purchase number used at creation). */
  id: string;
  merchantId: string;
  status: 'ACTIVE' | 'INACTIVE';
  linkType: 'PURCHASE' | 'DONATION';
  currency: string;
  /** Minor units. */
  totalMinor?: number;
  minMinor?: number;
  maxMinor?: number;
  lineItems: Array<{
    productName: string;
    unitPriceMinor: number;
    quantity: number;
    productDescription?: string;
    productSku?: string;
  }>;
  requestPhone: boolean;
  requestShipping: boolean;
  partner?: { developerId?: string; solutionId?: string };
  createdAt: string;
  /** Ledger ids of the payments made through the hosted page. */
  payments: string[];
}

/** Largest `limit` of the list (reference/gateway.md §2). */
export const MAX_LIST_LIMIT = 1000;
const DEFAULT_LIST_LIMIT = 100;

/** A 400 of the payment-link service (reference/gateway.md §4). */
export function linkError(
  now: Date,
  reason: 'DUPLICATE_RECORD' | 'ACTION_NOT_ALLOWED' | 'VALIDATION_ERRORS',
  message: string,
  details: Array<{ field: string; reason: string }> = [],
): GatewayAnswer {
  return new GatewayAnswer(
    400,
    {
      submitTimeUtc: isoSeconds(now),
      status: 'BADREQUEST',
      reason,
      message,
      ...(details.length ? { details } : {}),
    },
    reason,
  );
}

function notFound(): GatewayAnswer {
  return new GatewayAnswer(
    404,
    { status: 'NOTFOUND', reason: 'NOTFOUND', message: 'no payment link with this id' },
    'NOTFOUND',
  );
}

function decimalNumber(minor: number, currency: string): number {
  return Number(toDecimalString(minor, currency));
}

/** Reads and validates a create or update body; throws VALIDATION_ERRORS naming every bad field. */
function readLink(
  body: Record<string, unknown>,
  now: Date,
  update: boolean,
): Omit<StoredLink, 'id' | 'merchantId' | 'createdAt' | 'payments' | 'status'> & {
  purchaseNumber?: string;
  status?: 'ACTIVE' | 'INACTIVE';
} {
  const r = new FieldReader(body, now);
  const linkType = r.oneOf('processingInformation.linkType', ['PURCHASE', 'DONATION'], true) as
    'PURCHASE' | 'DONATION' | undefined;
  const currency = r.currency('orderInformation.amountDetails.currency');
  const totalMinor = r.amount('orderInformation.amountDetails.totalAmount', currency);
  const minMinor = r.amount('orderInformation.amountDetails.minAmount', currency, linkType === 'DONATION');
  const maxMinor = r.amount('orderInformation.amountDetails.maxAmount', currency, false);
  const purchaseNumber = r.text('purchaseInformation.purchaseNumber', !update || linkType === 'DONATION');
  const status = r.oneOf('status', ['ACTIVE', 'INACTIVE'], false) as 'ACTIVE' | 'INACTIVE' | undefined;
  if (!update && r.has('status')) r.invalid('status', 'status is set by update only');
  const items = valueAt(body, 'orderInformation.lineItems');
  const lineItems: StoredLink['lineItems'] = [];
  if (!Array.isArray(items) || items.length === 0) r.missing('orderInformation.lineItems');
  else
    items.forEach((_, i) => {
      const p = `orderInformation.lineItems.${i}`;
      const productName = r.text(`${p}.productName`, true);
      const unitPriceMinor = r.amount(`${p}.unitPrice`, currency);
      const q = valueAt(body, `${p}.quantity`);
      if (q !== undefined && (typeof q !== 'number' || !Number.isInteger(q) || q < 1))
        r.invalid(`${p}.quantity`, 'quantity must be a positive integer');
      const productDescription = r.text(`${p}.productDescription`, false);
      const productSku = r.text(`${p}.productSku`, false);
      if (productName !== undefined && unitPriceMinor !== undefined)
        lineItems.push({
          productName,
          unitPriceMinor,
          quantity: typeof q === 'number' ? q : 1,
          ...(productDescription !== undefined ? { productDescription } : {}),
          ...(productSku !== undefined ? { productSku } : {}),
        });
    });
  if (minMinor !== undefined && maxMinor !== undefined && minMinor > maxMinor)
    r.invalid('orderInformation.amountDetails.maxAmount', 'maxAmount is below minAmount');
  const requestPhone = r.flag('processingInformation.requestPhone') ?? false;
  const requestShipping = r.flag('processingInformation.requestShipping') ?? false;
  const developerId = r.text('clientReferenceInformation.partner.developerId', false);
  const solutionId = r.text('clientReferenceInformation.partner.solutionId', false);
  if (r.details.length)
    throw linkError(now, 'VALIDATION_ERRORS', 'the payment link request is not valid', r.details);
  return {
    linkType: linkType ?? 'PURCHASE',
    currency: currency ?? 'XXX',
    ...(totalMinor !== undefined ? { totalMinor } : {}),
    ...(minMinor !== undefined ? { minMinor } : {}),
    ...(maxMinor !== undefined ? { maxMinor } : {}),
    lineItems,
    requestPhone,
    requestShipping,
    ...(developerId !== undefined || solutionId !== undefined
      ? {
          partner: {
            ...(developerId !== undefined ? { developerId } : {}),
            ...(solutionId !== undefined ? { solutionId } : {}),
          },
        }
      : {}),
    ...(purchaseNumber !== undefined ? { purchaseNumber } : {}),
    ...(status !== undefined ? { status } : {}),
  };
}

/** The payment-link service over one store; `pageUrl(id)` is the hosted page's URL. */
export class PaymentLinkService {
  constructor(
    private readonly store: SandboxStore,
    private readonly now: () => Date,
    private readonly pageUrl: (id: string) => string,
  ) {}

  /** The link with `id` of `merchantId`, or undefined. */
  find(merchantId: string | undefined, id: string): StoredLink | undefined {
    const link = this.store.get<StoredLink>('link', id);
    return link && (merchantId === undefined || link.merchantId === merchantId) ? link : undefined;
  }

  /** Saves a link after a change made elsewhere (a payment on the hosted page). */
  save(link: StoredLink): void {
    this.store.put('link', link.id, link);
  }

  /** The resource JSON of a link (spec 000 "Payment link"): amounts as numbers, URL only while ACTIVE. */
  view(link: StoredLink, list = false): Record<string, unknown> {
    const self = `/ipl/v2/payment-links/${encodeURIComponent(link.id)}`;
    const created = list ? link.createdAt.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : link.createdAt;
    return {
      _links: { self: { href: self, method: 'GET' }, update: { href: self, method: 'PATCH' } },
      id: link.id,
      ...(list ? { createdDate: created } : { submitTimeUtc: isoSeconds(this.now()) }),
      status: link.status,
      processingInformation: {
        linkType: link.linkType,
        requestPhone: link.requestPhone,
        requestShipping: link.requestShipping,
      },
      purchaseInformation: {
        purchaseNumber: link.id,
        createdDate: created,
        ...(link.status === 'ACTIVE' ? { paymentLink: this.pageUrl(link.id) } : {}),
      },
      orderInformation: {
        amountDetails: {
          currency: link.currency,
          ...(link.totalMinor !== undefined
            ? { totalAmount: decimalNumber(link.totalMinor, link.currency) }
            : {}),
          ...(link.minMinor !== undefined ? { minAmount: decimalNumber(link.minMinor, link.currency) } : {}),
          ...(link.maxMinor !== undefined ? { maxAmount: decimalNumber(link.maxMinor, link.currency) } : {}),
        },
        lineItems: link.lineItems.map((i) => ({
          productName: i.productName,
          unitPrice: decimalNumber(i.unitPriceMinor, link.currency),
          ...(list
            ? {}
            : {
                quantity: i.quantity,
                ...(i.productDescription !== undefined ? { productDescription: i.productDescription } : {}),
                ...(i.productSku !== undefined ? { productSku: i.productSku } : {}),
              }),
        })),
      },
      ...(link.partner ? { clientReferenceInformation: { partner: link.partner } } : {}),
    };
  }

  create(
    merchantId: string,
    body: Record<string, unknown>,
  ): { httpStatus: number; body: Record<string, unknown> } {
    const now = this.now();
    const fields = readLink(body, now, false);
    const id = fields.purchaseNumber ?? '';
    if (this.store.get<StoredLink>('link', id))
      throw linkError(now, 'DUPLICATE_RECORD', 'purchaseNumber is already used by another link');
    const { purchaseNumber: _p, status: _s, ...rest } = fields;
    const link: StoredLink = {
      ...rest,
      id,
      merchantId,
      status: 'ACTIVE',
      createdAt: now.toISOString(),
      payments: [],
    };
    this.save(link);
    return { httpStatus: 201, body: this.view(link) };
  }

  /** PATCH: the update replaces every field (spec 000: an omitted field is removed from the page). */
  update(
    merchantId: string,
    id: string,
    body: Record<string, unknown>,
  ): { httpStatus: number; body: Record<string, unknown> } {
    const now = this.now();
    const old = this.find(merchantId, id);
    if (!old) throw notFound();
    const fields = readLink(body, now, true);
    if (fields.purchaseNumber !== undefined && fields.purchaseNumber !== id)
      throw linkError(now, 'ACTION_NOT_ALLOWED', 'the purchase number of a link cannot change', [
        { field: 'purchaseInformation.purchaseNumber', reason: 'INVALID_DATA' },
      ]);
    const { purchaseNumber: _p, status, ...rest } = fields;
    const link: StoredLink = {
      ...rest,
      id,
      merchantId,
      status: status ?? old.status,
      createdAt: old.createdAt,
      payments: old.payments,
    };
    this.save(link);
    return { httpStatus: 200, body: this.view(link) };
  }

  get(merchantId: string, id: string): { httpStatus: number; body: Record<string, unknown> } {
    const link = this.find(merchantId, id);
    if (!link) throw notFound();
    return { httpStatus: 200, body: this.view(link) };
  }

  list(merchantId: string, query: URLSearchParams): { httpStatus: number; body: Record<string, unknown> } {
    const now = this.now();
    const num = (name: string, dflt: number, min: number, max: number): number => {
      const v = query.get(name);
      if (v === null) return dflt;
      if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max)
        throw linkError(now, 'VALIDATION_ERRORS', `${name} must be an integer from ${min} to ${max}`, [
          { field: name, reason: 'INVALID_DATA' },
        ]);
      return Number(v);
    };
    const offset = num('offset', 0, 0, Number.MAX_SAFE_INTEGER);
    // A page holds one link at least: a page of none would name itself as the next page, without end.
    const limit = num('limit', DEFAULT_LIST_LIMIT, 1, MAX_LIST_LIMIT);
    const status = query.get('status');
    if (status !== null && status !== 'ACTIVE' && status !== 'INACTIVE')
      throw linkError(now, 'VALIDATION_ERRORS', 'status must be ACTIVE or INACTIVE', [
        { field: 'status', reason: 'INVALID_DATA' },
      ]);
    const all = this.store
      .values<StoredLink>('link')
      .filter((l) => l.merchantId === merchantId && (status === null || l.status === status));
    const page = all.slice(offset, offset + limit);
    const href = (o: number): string =>
      `/ipl/v2/payment-links?offset=${o}&limit=${limit}${status !== null ? `&status=${status}` : ''}`;
    return {
      httpStatus: 200,
      body: {
        _links: {
          self: { href: href(offset), method: 'GET' },
          ...(offset + limit < all.length ? { next: { href: href(offset + limit), method: 'GET' } } : {}),
        },
        totalLinks: all.length,
        links: page.map((l) => this.view(l, true)),
      },
    };
  }
}
