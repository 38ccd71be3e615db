import {
  AmountError,
  currencyByAlpha,
  MAX_MINOR,
  parseDecimal,
  requireCurrency,
  toDecimalString,
} from '../../money/index.js';
import { isLoopbackHost } from '../../config/index.js';
import { GatewayError, GatewayInvalidRequestError } from '../errors.js';
import { reasonCode } from '../outcome.js';
import { assertNoPersonalData } from '../personal-data.js';

/** One line item of a payment link. Non-personal data only (spec 000, Payment links). */
export interface PaymentLinkLineItem {
  productName: string;
  /** Unit price, minor units of the link currency. */
  unitPriceMinor: number;
  quantity?: number;
  productDescription?: string;
  productSku?: string;
}

/** A payment link as created or updated: an update repeats every field (omitted ones are removed, spec 000). */
export interface PaymentLinkInput {
  /** `PURCHASE` fixed price, `DONATION` customer-set price (then `minAmountMinor` is required). */
  linkType: 'PURCHASE' | 'DONATION';
  /** Unique per link; becomes the link id. */
  purchaseNumber: string;
  currency: string;
  totalAmountMinor: number;
  minAmountMinor?: number;
  maxAmountMinor?: number;
  lineItems: PaymentLinkLineItem[];
  requestPhone?: boolean;
  requestShipping?: boolean;
  partner?: { developerId?: string; solutionId?: string };
  /** Update only: `INACTIVE` deactivates (there is no DELETE), `ACTIVE` reactivates. */
  status?: 'ACTIVE' | 'INACTIVE';
}

/** A payment link as the gateway returns it. */
export interface PaymentLink {
  id: string;
  /** `ACTIVE` or `INACTIVE` (other values are passed through as the gateway wrote them). */
  status: string;
  linkType?: string;
  purchaseNumber?: string;
  /** URL of the hosted page; returned only while the link is ACTIVE. */
  paymentLink?: string;
  currency?: string;
  totalAmountMinor?: number;
  minAmountMinor?: number;
  maxAmountMinor?: number;
  createdDate?: string;
  lineItems: Array<{
    productName: string;
    unitPriceMinor?: number;
    quantity?: number;
    productDescription?: string;
    productSku?: string;
  }>;
  requestPhone?: boolean;
  requestShipping?: boolean;
  partner?: { developerId?: string; solutionId?: string };
}

/** One page of `GET /ipl/v2/payment-links`. */
export interface PaymentLinkPage {
  totalLinks?: number;
  links: PaymentLink[];
  /** Offset and limit of the next page, from `_links.next`; absent on the last page. */
  next?: { offset: number; limit: number };
}

/** Largest `limit` of a list request (reference/gateway.md §2). */
export const MAX_LIST_LIMIT = 1000;

function money(minor: number, currency: string, field: string): string {
  try {
    return toDecimalString(minor, currency);
  } catch (e) {
    throw new GatewayInvalidRequestError(
      field,
      'INVALID_DATA',
      e instanceof AmountError ? e.message : String(e),
      { cause: e },
    );
  }
}

/**
 * Body of a create (POST) or update (PATCH) of a payment link; required fields per spec 000 are checked.
 * @throws GatewayInvalidRequestError for a missing or invalid field; PersonalDataError (`LINK_PERSONAL_DATA`) when
 *   any field holds a card number, national id, address or security code (src/gateway/personal-data.ts).
 */
export function buildPaymentLinkBody(link: PaymentLinkInput, update: boolean): Buffer {
  let currency: string;
  try {
    currency = requireCurrency(link.currency).alpha;
  } catch (e) {
    throw new GatewayInvalidRequestError(
      'orderInformation.amountDetails.currency',
      'INVALID_DATA',
      `"${link.currency}" is not a currency`,
      { cause: e },
    );
  }
  if (link.purchaseNumber === '') {
    throw new GatewayInvalidRequestError(
      'purchaseInformation.purchaseNumber',
      'MISSING_FIELD',
      'purchaseNumber is required',
    );
  }
  if (link.lineItems.length === 0) {
    throw new GatewayInvalidRequestError(
      'orderInformation.lineItems',
      'MISSING_FIELD',
      'at least one line item is required',
    );
  }
  if (link.linkType === 'DONATION' && link.minAmountMinor === undefined) {
    throw new GatewayInvalidRequestError(
      'orderInformation.amountDetails.minAmount',
      'MISSING_FIELD',
      'a DONATION link needs minAmount',
    );
  }
  const lineItems = link.lineItems.map((item, i) => {
    const f = `orderInformation.lineItems[${i}]`;
    if (item.productName === '')
      throw new GatewayInvalidRequestError(`${f}.productName`, 'MISSING_FIELD', 'productName is required');
    if (item.quantity !== undefined && (!Number.isInteger(item.quantity) || item.quantity < 1)) {
      throw new GatewayInvalidRequestError(
        `${f}.quantity`,
        'INVALID_DATA',
        'quantity must be a positive integer',
      );
    }
    return {
      productName: item.productName,
      unitPrice: money(item.unitPriceMinor, currency, `${f}.unitPrice`),
      ...(item.quantity !== undefined ? { quantity: item.quantity } : {}),
      ...(item.productDescription !== undefined ? { productDescription: item.productDescription } : {}),
      ...(item.productSku !== undefined ? { productSku: item.productSku } : {}),
    };
  });
  const amountDetails = {
    currency,
    totalAmount: money(link.totalAmountMinor, currency, 'orderInformation.amountDetails.totalAmount'),
    ...(link.minAmountMinor !== undefined
      ? { minAmount: money(link.minAmountMinor, currency, 'orderInformation.amountDetails.minAmount') }
      : {}),
    ...(link.maxAmountMinor !== undefined
      ? { maxAmount: money(link.maxAmountMinor, currency, 'orderInformation.amountDetails.maxAmount') }
      : {}),
  };
  const body = {
    ...(link.partner !== undefined ? { clientReferenceInformation: { partner: link.partner } } : {}),
    processingInformation: {
      linkType: link.linkType,
      ...(link.requestPhone !== undefined ? { requestPhone: link.requestPhone } : {}),
      ...(link.requestShipping !== undefined ? { requestShipping: link.requestShipping } : {}),
    },
    purchaseInformation: { purchaseNumber: link.purchaseNumber },
    orderInformation: { amountDetails, lineItems },
    ...(update && link.status !== undefined ? { status: link.status } : {}),
  };
  // Spec 000 suspends a merchant whose link fields carry personal data: every field is checked, nothing is sent.
  assertNoPersonalData(body);
  return Buffer.from(JSON.stringify(body), 'utf8');
}

/**
 * Whether `id` can be a payment link id in a request path: 1–64 letters, digits, `.`, `_` or `-`, and not dots alone —
 * `.` and `..` are dot segments that every URL parser on the way (the gateway's, a proxy's) removes, so that
 * `/ipl/v2/payment-links/..` is `/ipl/v2/` and `/ipl/v2/payment-links/.` the list: never a link.
 */
export function isLinkId(id: string): boolean {
  return /^[A-Za-z0-9_.-]{1,64}$/.test(id) && !/^\.+$/.test(id);
}

/** The path segment of a link id (its purchase number), refused when it could alter the path ({@link isLinkId}). */
export function linkPath(id: string): string {
  if (!isLinkId(id)) {
    throw new GatewayInvalidRequestError(
      'id',
      'INVALID_DATA',
      'a payment link id is 1–64 letters, digits, . _ or -, not dots alone',
    );
  }
  return `/ipl/v2/payment-links/${id}`;
}

/** Path of a list request; `limit` at most {@link MAX_LIST_LIMIT}. */
export function listPath(query: { offset?: number; limit?: number; status?: 'ACTIVE' | 'INACTIVE' }): string {
  const offset = query.offset ?? 0;
  const limit = query.limit ?? 100;
  if (!Number.isInteger(offset) || offset < 0)
    throw new GatewayInvalidRequestError('offset', 'INVALID_DATA', 'offset must be ≥ 0');
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
    throw new GatewayInvalidRequestError('limit', 'INVALID_DATA', `limit must be 1–${MAX_LIST_LIMIT}`);
  }
  const params = new URLSearchParams({ offset: String(offset), limit: String(limit) });
  if (query.status !== undefined) params.set('status', query.status);
  return `/ipl/v2/payment-links?${params.toString()}`;
}

/**
 * Longest hosted-page URL the terminal shows a customer. The address of a hosted page is a few dozen characters; 512
 * leaves room and keeps its QR code at error correction M (kiosk.md §4) within version 18 of 40 (89 modules), still
 * readable at about 4.5 cm on screen and on the pay-later slip. The largest M code holds 2,331 bytes: a longer URL could
 * not be drawn at all.
 */
export const MAX_HOSTED_PAGE_URL = 512;

/** The characters of a URI (RFC 3986 §2: unreserved, reserved, and `%` of a percent-encoding). */
const URI_CHARACTERS = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]+$/;

/**
 * Where a payment link's hosted page may be (README, `links.hostedPageHosts`): the terminal vouches on its own screen
 * for the page its QR code opens, so an answer (or a proxy) naming a page of someone else's choosing is refused.
 * Built by {@link hostedPageOriginsOf}.
 */
export interface HostedPageOrigins {
  /**
   * `host` (exactly) or `*.domain` (any host below it, not the domain itself), each with `:port` when the page is not on
   * the scheme's default port; lower case, as the configuration schema checks them.
   */
  readonly hosts: readonly string[];
  /** Plain `http:` allowed (on this machine only): the gateway itself is plain http on loopback, as the sandbox. */
  readonly plainHttp: boolean;
}

/**
 * The origins of the pages of the gateway at `baseUrl`: `configured` (`links.hostedPageHosts`) when given, else the
 * gateway's own host and port and, for a gateway named by a host name of three labels or more, any host of its parent
 * domain on the default port (`api.gateway.example` → `*.gateway.example`): spec 000 and gateway.md document no host
 * for the page of `paymentLink`, a gateway serves its hosted pages on a host of its own domain other than its API's,
 * and nobody else can serve a page there. The embedded sandbox serves it at its own URL (a loopback address: no
 * parent domain).
 */
export function hostedPageOriginsOf(baseUrl: string, configured?: readonly string[]): HostedPageOrigins {
  const gateway = new URL(baseUrl);
  const labels = gateway.hostname.split('.');
  const named = labels.length >= 3 && !/^\d+$/.test(labels.at(-1) ?? '') && !gateway.hostname.startsWith('[');
  return {
    hosts: configured ?? (named ? [gateway.host, `*.${labels.slice(1).join('.')}`] : [gateway.host]),
    plainHttp: gateway.protocol === 'http:' && isLoopbackHost(gateway.hostname),
  };
}

const DEFAULT_PORTS: Record<string, string> = { 'https:': '443', 'http:': '80' };

/** Whether the host and port of `url` are those of an entry of {@link HostedPageOrigins.hosts}. */
function onHostedPageHost(url: URL, hosts: readonly string[]): boolean {
  const port = url.port || DEFAULT_PORTS[url.protocol];
  return hosts.some((entry) => {
    // The port is what follows the last colon after the host (an IPv6 literal is bracketed).
    const m = /^(.+?)(?::(\d+))?$/.exec(entry);
    if (m === null) return false;
    const [, host = '', entryPort] = m;
    if ((entryPort ?? DEFAULT_PORTS[url.protocol]) !== port) return false;
    return host.startsWith('*.')
      ? url.hostname.endsWith(host.slice(1)) && url.hostname.length > host.length - 1
      : url.hostname === host;
  });
}

/**
 * Why `url` cannot be the address of a hosted payment page put in front of a customer (as a QR code, as text, on the
 * slip), or undefined when it can: printable ASCII (the bytes the QR code holds) of the characters a URI holds, at most
 * {@link MAX_HOSTED_PAGE_URL} characters, a well-formed `https:` URL without credentials — plain `http:` only on this
 * machine.
 * - With `origins` (a payment link's page): on one of its hosts and ports, and plain `http:` only when the gateway is
 *   itself plain http on loopback (the embedded sandbox's page).
 * - Without (the `paymentUrl` of an alternative-method sale, alt-payments.ts, which is another provider's page): any
 *   host; plain `http:` on this machine (the sandbox's page).
 */
export function hostedPageUrlProblem(url: string, origins?: HostedPageOrigins): string | undefined {
  if (url.length > MAX_HOSTED_PAGE_URL) return `longer than ${MAX_HOSTED_PAGE_URL} characters`;
  if (!/^[\x21-\x7e]+$/.test(url)) return 'not printable ASCII';
  // A character no URI holds (RFC 3986 §2) is mended by each reader its own way: the URL standard reads a `\` as a `/`,
  // so "https://pay.gateway.example\@other.example/" is the gateway's page to the check below — and other.example to a
  // reader of RFC 3986 (a scanner app, its preview), whose authority runs to the first `/` and whose host follows the
  // `@`. The QR code holds this text as it is: every reader must find the same host in it.
  if (!URI_CHARACTERS.test(url)) return 'a character no URI holds (RFC 3986)';
  if (!URL.canParse(url)) return 'not a URL';
  const parsed = new URL(url);
  const plainHttp = origins === undefined || origins.plainHttp;
  const secure =
    parsed.protocol === 'https:' ||
    (plainHttp && parsed.protocol === 'http:' && isLoopbackHost(parsed.hostname));
  if (!secure) return `${parsed.protocol} is not https`;
  if (parsed.hostname === '') return 'no host';
  if (parsed.username !== '' || parsed.password !== '') return 'carries credentials';
  // The host itself is not repeated: it is the gateway's text, not ours to put in a log line.
  if (origins !== undefined && !onHostedPageHost(parsed, origins.hosts))
    return 'not on a host and port of links.hostedPageHosts';
  return undefined;
}

const obj = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/**
 * An amount of a link in minor units. `listed`: an item of a list page, whose unreadable amount (a currency the terminal
 * does not know, too many decimals, negative, beyond the largest amount) is left out — one such link of the merchant
 * (another terminal's, a portal's) must not hide every other link of the page from the operator.
 */
function amountOf(v: unknown, currency: string | undefined, listed: boolean): number | undefined {
  if (currency === undefined || (typeof v !== 'string' && typeof v !== 'number')) return undefined;
  try {
    return parseDecimal(v, currency);
  } catch (e) {
    if (listed) return undefined;
    throw new GatewayError('GW_PARSE', 'a payment-link amount is unreadable', { cause: e });
  }
}

/**
 * Longest text of a link the terminal reads (a product name, description or SKU, a purchase number, a link type, a
 * date): a line of a link, as long as the journal's texts are at most. The terminal repeats these in an update (spec
 * 000: an omitted field is removed) and shows them to the operator; a longer one is no field of a link it made.
 */
const MAX_LINK_TEXT = 256;

/**
 * A text of a link: undefined when absent; when longer than {@link MAX_LINK_TEXT}, left out of a list item (`listed`)
 * and GW_PARSE otherwise (an update must repeat it exactly).
 */
function textOf(v: unknown, field: string, listed: boolean): string | undefined {
  const text = str(v);
  if (text === undefined || text.length <= MAX_LINK_TEXT) return text;
  if (listed) return undefined;
  throw new GatewayError('GW_PARSE', `a payment-link ${field} is longer than ${MAX_LINK_TEXT} characters`);
}

/**
 * The quantity of a line item: a count, 1 or more (spec 000: an integer; 1 when omitted), and no more than the largest
 * amount in minor units — nor, with its unit price, an item worth more than that. Undefined when absent; otherwise as
 * {@link textOf}: left out of a list item, GW_PARSE in a single link (an update repeats it, and the request builder
 * would refuse it).
 */
function quantityOf(v: unknown, unitMinor: number | undefined, listed: boolean): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (
    typeof v === 'number' &&
    Number.isSafeInteger(v) &&
    v >= 1 &&
    v <= MAX_MINOR &&
    (unitMinor === undefined || unitMinor * v <= MAX_MINOR)
  )
    return v;
  if (listed) return undefined;
  throw new GatewayError('GW_PARSE', 'a payment-link quantity is not a count of items');
}

/**
 * Reads one link of a create, update, get or list answer (amounts are numbers in answers, strings tolerated). A
 * `paymentLink` the terminal could not show a customer ({@link hostedPageUrlProblem}, on `origins`) is left out, as if
 * the answer had none: the link can still be read, watched and deactivated. A create answer is read by {@link parseCreatedPaymentLink}.
 * An amount, a quantity ({@link quantityOf}) or a text ({@link textOf}) that cannot be read is GW_PARSE (an update must
 * repeat it exactly), but in an item of a list page (`listed`), where it is left out. An id that is no link id
 * ({@link isLinkId}) is GW_PARSE: a list leaves such a link out ({@link parsePaymentLinkPage}).
 */
export function parsePaymentLink(
  v: unknown,
  origins: HostedPageOrigins,
  options: { listed?: boolean } = {},
): PaymentLink {
  const listed = options.listed === true;
  const b = obj(v);
  const id = str(b.id) ?? str(obj(b.purchaseInformation).purchaseNumber);
  if (id === undefined) throw new GatewayError('GW_PARSE', 'a payment link without id');
  // An id is taken only in the shape the terminal keeps, shows and puts into a request's path (isLinkId).
  if (!isLinkId(id))
    throw new GatewayError('GW_PARSE', 'a payment link id is not 1–64 letters, digits, . _ or -');
  const details = obj(obj(b.orderInformation).amountDetails);
  // A currency stated as something else than a code (826, true) names none the amounts can be read in: unreadable, as
  // an unreadable amount is (left out of a list item).
  if (
    details.currency !== undefined &&
    details.currency !== null &&
    typeof details.currency !== 'string' &&
    !listed
  )
    throw new GatewayError('GW_PARSE', 'a payment-link currency is not a currency code');
  const named = str(details.currency);
  // A currency is one the money table knows (its amounts are read in it, an update repeats it); another is left out of
  // a list item (with the amounts, which cannot be read without it) and makes a single link unreadable.
  const currency = named !== undefined && currencyByAlpha(named) !== undefined ? named : undefined;
  if (named !== undefined && currency === undefined && !listed)
    throw new GatewayError('GW_PARSE', 'a payment-link currency is not one the terminal knows');
  const purchase = obj(b.purchaseInformation);
  const out: PaymentLink = {
    id,
    // A status is a code (ACTIVE, INACTIVE); anything else is none the terminal knows.
    status: reasonCode(b.status) ?? 'UNKNOWN',
    lineItems: [],
  };
  const linkType = textOf(obj(b.processingInformation).linkType, 'linkType', listed);
  if (linkType !== undefined) out.linkType = linkType;
  const purchaseNumber = textOf(purchase.purchaseNumber, 'purchaseNumber', listed);
  if (purchaseNumber !== undefined) out.purchaseNumber = purchaseNumber;
  const paymentLink = str(purchase.paymentLink);
  if (paymentLink !== undefined && hostedPageUrlProblem(paymentLink, origins) === undefined)
    out.paymentLink = paymentLink;
  const createdDate =
    textOf(purchase.createdDate, 'createdDate', listed) ?? textOf(b.createdDate, 'createdDate', listed);
  if (createdDate !== undefined) out.createdDate = createdDate;
  if (currency !== undefined) out.currency = currency;
  const total = amountOf(details.totalAmount, currency, listed);
  if (total !== undefined) out.totalAmountMinor = total;
  const min = amountOf(details.minAmount, currency, listed);
  if (min !== undefined) out.minAmountMinor = min;
  const max = amountOf(details.maxAmount, currency, listed);
  if (max !== undefined) out.maxAmountMinor = max;
  const items = obj(b.orderInformation).lineItems;
  if (Array.isArray(items)) {
    out.lineItems = items.map((it) => {
      const i = obj(it);
      const unit = amountOf(i.unitPrice, currency, listed);
      const description = textOf(i.productDescription, 'productDescription', listed);
      const sku = textOf(i.productSku, 'productSku', listed);
      const quantity = quantityOf(i.quantity, unit, listed);
      return {
        productName: textOf(i.productName, 'productName', listed) ?? '',
        ...(unit !== undefined ? { unitPriceMinor: unit } : {}),
        ...(quantity !== undefined ? { quantity } : {}),
        ...(description !== undefined ? { productDescription: description } : {}),
        ...(sku !== undefined ? { productSku: sku } : {}),
      };
    });
  }
  const processing = obj(b.processingInformation);
  if (typeof processing.requestPhone === 'boolean') out.requestPhone = processing.requestPhone;
  if (typeof processing.requestShipping === 'boolean') out.requestShipping = processing.requestShipping;
  const partner = obj(obj(b.clientReferenceInformation).partner);
  const developerId = str(partner.developerId);
  const solutionId = str(partner.solutionId);
  if (developerId !== undefined || solutionId !== undefined)
    out.partner = {
      ...(developerId !== undefined ? { developerId } : {}),
      ...(solutionId !== undefined ? { solutionId } : {}),
    };
  return out;
}

/**
 * Reads the answer of a get or an update of link `id` ({@link parsePaymentLink}).
 * @throws GatewayError GW_UNDOCUMENTED when the answer is another link: its status is not the status of the link asked
 *   for (an ACTIVE link read as INACTIVE would be recorded deactivated while its customer can still pay it).
 *   `outcomeUnknown` for an update (`changed`), which may have taken effect all the same.
 */
export function parsePaymentLinkOf(
  v: unknown,
  id: string,
  changed: boolean,
  origins: HostedPageOrigins,
): PaymentLink {
  let link: PaymentLink;
  try {
    link = parsePaymentLink(v, origins);
  } catch (e) {
    // A create or update answered 2xx took effect, whatever its answer says: one that cannot be read leaves the link
    // as the gateway holds it unknown (a link created may be payable; the caller must find out, not assume nothing).
    if (!changed || !(e instanceof GatewayError) || e.outcomeUnknown) throw e;
    throw new GatewayError(e.code, `payment link ${id}: ${e.message}`, { outcomeUnknown: true, cause: e });
  }
  if (link.id !== id)
    throw new GatewayError('GW_UNDOCUMENTED', `payment link ${id}: answered with the link ${link.id}`, {
      outcomeUnknown: changed,
    });
  return link;
}

/**
 * Reads the answer of a create of `requested` (spec 000: the link ACTIVE, with the URL of its hosted page).
 * @throws GatewayError GW_PARSE with `outcomeUnknown` when the answer has no URL the terminal can show a customer
 *   ({@link hostedPageUrlProblem}): the gateway made a link nobody can pay, which the terminal must deactivate;
 *   GW_UNDOCUMENTED with `outcomeUnknown` when the answer is not the link requested — another id, or an amount,
 *   currency or status it states otherwise (its URL would send the customer to pay another link, or another amount) —
 *   or when its URL is a page on a host outside `origins` (a page of someone else's choosing, which the terminal's
 *   screen would vouch for).
 */
export function parseCreatedPaymentLink(
  v: unknown,
  requested: PaymentLinkInput,
  origins: HostedPageOrigins,
): PaymentLink {
  const link = parsePaymentLinkOf(v, requested.purchaseNumber, true, origins);
  const differs = (what: string, answered: unknown, sent: unknown): never => {
    throw new GatewayError(
      'GW_UNDOCUMENTED',
      `payment link ${requested.purchaseNumber}: the create was answered with ${what} ${String(answered)}, not ${String(sent)}`,
      { outcomeUnknown: true },
    );
  };
  if (link.status !== 'ACTIVE') differs('status', link.status, 'ACTIVE');
  // Amounts and currency may be left out of the answer; when stated, they are the ones requested.
  if (link.currency !== undefined && link.currency !== requireCurrency(requested.currency).alpha)
    differs('currency', link.currency, requested.currency);
  if (link.totalAmountMinor !== undefined && link.totalAmountMinor !== requested.totalAmountMinor)
    differs('the amount (minor units)', link.totalAmountMinor, requested.totalAmountMinor);
  if (link.paymentLink === undefined) {
    const url = str(obj(obj(v).purchaseInformation).paymentLink);
    // A URL that any page could have but not the gateway's (another host or port, plain http from a remote gateway)
    // is an answer the terminal does not trust rather than one it cannot read.
    const unreadable = url === undefined ? 'none' : hostedPageUrlProblem(url);
    const problem = url === undefined ? 'none' : (unreadable ?? hostedPageUrlProblem(url, origins));
    throw new GatewayError(
      unreadable === undefined ? 'GW_UNDOCUMENTED' : 'GW_PARSE',
      `payment link ${link.id}: no URL of a hosted page to show (purchaseInformation.paymentLink: ${problem})`,
      { outcomeUnknown: true },
    );
  }
  return link;
}

/** Reads a list answer, including the offset and limit of `_links.next`. */
export function parsePaymentLinkPage(v: unknown, origins: HostedPageOrigins): PaymentLinkPage {
  const b = obj(v);
  // A link the terminal cannot read at all (no id it can keep or name in a request) is left out: one such link of
  // the merchant must not hide the others from the operator, and nothing could be done with it.
  const links = Array.isArray(b.links)
    ? b.links.flatMap((l) => {
        try {
          return [parsePaymentLink(l, origins, { listed: true })];
        } catch (e) {
          if (e instanceof GatewayError) return [];
          throw e;
        }
      })
    : [];
  const page: PaymentLinkPage = { links };
  if (typeof b.totalLinks === 'number') page.totalLinks = b.totalLinks;
  const href = str(obj(obj(b._links).next).href);
  if (href !== undefined) {
    const q = new URL(href, 'http://gateway.invalid').searchParams;
    const offset = Number(q.get('offset'));
    const limit = Number(q.get('limit'));
    if (Number.isInteger(offset) && Number.isInteger(limit) && limit > 0) page.next = { offset, limit };
  }
  return page;
}

/**
 * The update that changes only the status of `link` as the gateway returned it (a get, not a list item: list items
 * leave fields out). Spec 000: an update must repeat every field of the creation, an omitted one is removed.
 * @throws GatewayError GW_PARSE when the link lacks what an update must repeat (currency, amount, line item prices).
 */
export function statusUpdateOf(link: PaymentLink, status: 'ACTIVE' | 'INACTIVE'): PaymentLinkInput {
  const { currency, totalAmountMinor } = link;
  if (currency === undefined || totalAmountMinor === undefined)
    throw new GatewayError(
      'GW_PARSE',
      `payment link ${link.id}: no currency or amount to repeat in the update`,
    );
  const linkType = link.linkType === 'DONATION' ? 'DONATION' : 'PURCHASE';
  return {
    linkType,
    purchaseNumber: link.purchaseNumber ?? link.id,
    currency,
    totalAmountMinor,
    ...(link.minAmountMinor !== undefined ? { minAmountMinor: link.minAmountMinor } : {}),
    ...(link.maxAmountMinor !== undefined ? { maxAmountMinor: link.maxAmountMinor } : {}),
    lineItems: link.lineItems.map((item) => {
      if (item.unitPriceMinor === undefined)
        throw new GatewayError('GW_PARSE', `payment link ${link.id}: a line item without its unit price`);
      return {
        productName: item.productName,
        unitPriceMinor: item.unitPriceMinor,
        ...(item.quantity !== undefined ? { quantity: item.quantity } : {}),
        ...(item.productDescription !== undefined ? { productDescription: item.productDescription } : {}),
        ...(item.productSku !== undefined ? { productSku: item.productSku } : {}),
      };
    }),
    ...(link.requestPhone !== undefined ? { requestPhone: link.requestPhone } : {}),
    ...(link.requestShipping !== undefined ? { requestShipping: link.requestShipping } : {}),
    ...(link.partner !== undefined ? { partner: link.partner } : {}),
    status,
  };
}
