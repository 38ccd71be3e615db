import {
  GatewayError,
  statusUpdateOf,
  type GatewayClient,
  type PaymentLink,
  type PaymentLinkPage,
} from '../gateway/index.js';
import type { NewAuditRecord, PaymentLinkStore, StoredLink } from '../journal/index.js';
import type { PaymentLinkSummary, TerminalLinkRecord } from './api.js';
import { carriesTerminalId, ownLink } from './link-ids.js';

/**
 * The operator's actions on payment links at the gateway, one implementation for the `links` command and operator
 * mode (src/host/link-desk.ts): a page of the gateway's list merged with the journal's record, and a link set
 * INACTIVE or ACTIVE again by an update that repeats every field (spec 000: an omitted field is removed).
 */

/** Codes of {@link LinkDeskError}. */
export type LinkDeskErrorCode =
  | 'LINK_UNAVAILABLE' // the gateway could not be reached or did not answer: no link to show
  | 'LINK_REFUSED' // the gateway refused the create (400)
  | 'LINK_NOT_FOUND' // no link of this terminal has that id
  | 'LINK_BAD_REQUEST' // an amount, currency or reference the desk cannot use
  | 'LINK_NOT_ALLOWED' // the operator's change does not apply to this link now (see operatorLinkActions)
  | 'LINK_BUSY'; // a request of the terminal about this link is in flight: try again in a moment

export class LinkDeskError extends Error {
  override readonly name = 'LinkDeskError';
  constructor(
    readonly code: LinkDeskErrorCode,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
  }
}

/**
 * Why a link of this terminal may not be made ACTIVE again, or undefined when it may. A link is paid once: a paid link
 * made ACTIVE again could be paid a second time for the same stay, and its journal record would no longer say that it
 * was paid. A link never created, or still being created, has nothing to reactivate.
 */
export function reactivationRefusal(mine: StoredLink): string | undefined {
  switch (mine.state) {
    case 'failed':
      return 'the link was never created';
    case 'creating':
      return 'the link is being created';
    case 'paid':
      return 'the link is paid: a payment link is paid once';
    case 'active':
    case 'deactivated':
      return undefined;
  }
}

/**
 * Why link `linkId` may not be made ACTIVE again by this terminal's operator, or undefined when it may: a link of this
 * terminal (`mine`) as {@link reactivationRefusal} says; a link whose id carries this terminal's id
 * (src/host/link-ids.ts) but that the journal at hand does not hold as the terminal's — none where the command runs,
 * one without it — is refused too, since nothing can tell that it was never paid; any other link is another
 * terminal's (or a portal's), the operator's to change.
 */
function reactivationRefusalOf(
  linkId: string,
  terminalId: string,
  mine: StoredLink | undefined,
): string | undefined {
  if (mine !== undefined) return reactivationRefusal(mine);
  return carriesTerminalId(linkId, terminalId)
    ? `the link carries this terminal's id (${terminalId}), but the terminal's journal here has no record of it: whether it was paid cannot be told`
    : undefined;
}

/**
 * What the operator may do with a link the gateway lists with `status`: only with a link this terminal created
 * (`mine`) — a link of another terminal of the merchant belongs to that terminal's customer. Deactivate one that is not
 * INACTIVE; reactivate an INACTIVE one that {@link reactivationRefusal} allows (created, never paid).
 */
export function operatorLinkActions(
  status: string,
  mine: StoredLink | undefined,
): ('deactivate' | 'reactivate')[] {
  if (mine === undefined || mine.state === 'failed' || mine.state === 'creating') return [];
  if (status !== 'INACTIVE') return ['deactivate'];
  return reactivationRefusal(mine) === undefined ? ['reactivate'] : [];
}

/**
 * The journal's record of a link, as the operator reads it. Its last failure quotes the error (a gateway error's
 * message may carry what the gateway answered): shown as {@link shownLinkText} shows the gateway's own fields.
 */
export function terminalLinkRecord(link: StoredLink): TerminalLinkRecord {
  return {
    state: link.state,
    reference: link.reference,
    purpose: link.purpose,
    ...(link.closeReason !== undefined ? { closeReason: link.closeReason } : {}),
    gatewayInactive: link.gatewayInactive,
    ...(link.paymentId !== undefined ? { paymentId: link.paymentId } : {}),
    watchUntil: new Date(link.watchUntilMs).toISOString(),
    createdAt: new Date(link.createdAtMs).toISOString(),
    ...(link.lastError !== undefined ? { lastError: shownLinkText(link.lastError) } : {}),
  };
}

/** Longest text of a link shown to the operator (a link id is at most 64 characters; a product name a line). */
const MAX_SHOWN_TEXT = 160;

/** Characters that change how the text around them is shown, or show nothing: controls, format (bidi, zero-width), lone surrogates, line and paragraph separators. */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/gu;

/**
 * A text of a link as the gateway wrote it — any user of the merchant's account may have written it (a link of another
 * terminal, or made in a portal) — as the operator is shown it: every character that would reorder or hide the text
 * around it (a U+202E override making one link id read as another, a zero-width space, a control, an unpaired
 * surrogate) written out as `\u{XXXX}`, and the whole cut to {@link MAX_SHOWN_TEXT} characters. An ordinary text,
 * accents and all, is left as it is; the terminal's own ids are plain ASCII and unchanged, so the actions on them
 * still name the link.
 */
export function shownLinkText(text: string): string {
  const visible = text.replace(
    INVISIBLE,
    (c) => `\\u{${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}}`,
  );
  if (visible.length <= MAX_SHOWN_TEXT) return visible;
  const cut = visible.slice(0, MAX_SHOWN_TEXT - 1);
  // Never end on half of a surrogate pair.
  return `${/[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut}…`;
}

/** A link of the gateway with the journal's record when this terminal created it; `lineItems` for one link shown. */
export function paymentLinkSummary(
  link: PaymentLink,
  mine: StoredLink | undefined,
  options: { lineItems?: boolean } = {},
): PaymentLinkSummary & { lineItems?: PaymentLink['lineItems'] } {
  const shown = (text: string | undefined): string | undefined =>
    text === undefined ? undefined : shownLinkText(text);
  const lineItems = link.lineItems.map((item) => ({
    ...item,
    productName: shownLinkText(item.productName),
    ...(item.productDescription !== undefined
      ? { productDescription: shownLinkText(item.productDescription) }
      : {}),
    ...(item.productSku !== undefined ? { productSku: shownLinkText(item.productSku) } : {}),
  }));
  const linkType = shown(link.linkType);
  const purchaseNumber = shown(link.purchaseNumber);
  const currency = shown(link.currency);
  const createdDate = shown(link.createdDate);
  return {
    id: shownLinkText(link.id),
    status: shownLinkText(link.status),
    ...(linkType !== undefined ? { linkType } : {}),
    ...(purchaseNumber !== undefined ? { purchaseNumber } : {}),
    ...(link.totalAmountMinor !== undefined ? { amountMinor: link.totalAmountMinor } : {}),
    ...(currency !== undefined ? { currency } : {}),
    ...(createdDate !== undefined ? { createdDate } : {}),
    ...(link.paymentLink !== undefined ? { url: link.paymentLink } : {}),
    ...(options.lineItems === true ? { lineItems } : {}),
    ...(mine !== undefined ? { terminal: terminalLinkRecord(mine) } : {}),
  };
}

/**
 * One page of the gateway's list (offset/limit paging), as given, with the journal's record of each link that is
 * provably this terminal's (src/host/link-ids.ts: not one whose create the gateway refused, which is another's).
 */
export async function paymentLinkPage(
  deps: {
    gateway: Pick<GatewayClient, 'paymentLinks'>;
    /** Read only: the journal may be opened read-only. */
    store: Pick<PaymentLinkStore, 'get'> | undefined;
    terminalId: string;
  },
  query: { offset: number; limit: number; status?: 'ACTIVE' | 'INACTIVE' },
): Promise<{ page: PaymentLinkPage; links: { link: PaymentLink; mine: StoredLink | undefined }[] }> {
  const page = await deps.gateway.paymentLinks.list(query);
  return {
    page,
    links: page.links.map((link) => ({ link, mine: ownLink(deps.store, deps.terminalId, link.id) })),
  };
}

/**
 * Sets `linkId` to `target` at the gateway: the link's fields read with a get (a list item leaves fields out), then an
 * update that repeats every one of them with the new status (spec 000: an omitted field is removed), none when the link
 * has that status already. The change is made only when the gateway's answer shows it: an update answered with the
 * link in another status did not take — a link still ACTIVE can still be paid — so nobody may record it. Used by every
 * change of a link's status: the link desk's deactivations and {@link setLinkStatus}.
 * @throws GatewayError GW_UNDOCUMENTED when the update's answer shows another status; the client's errors.
 */
export async function changeLinkStatus(
  gateway: Pick<GatewayClient, 'paymentLinks'>,
  linkId: string,
  target: 'INACTIVE' | 'ACTIVE',
): Promise<{ link: PaymentLink; wasStatus: string }> {
  const current = await gateway.paymentLinks.get(linkId);
  if (current.status === target) return { link: current, wasStatus: current.status };
  const updated = await gateway.paymentLinks.update(linkId, statusUpdateOf(current, target));
  if (updated.status !== target)
    throw new GatewayError(
      'GW_UNDOCUMENTED',
      `payment link ${linkId}: the update to ${target} was answered with status ${updated.status}`,
    );
  return { link: updated, wasStatus: current.status };
}

/**
 * Journals a reactivation about to be sent, or sent without an answer: the link open again (watched for `waitMs`, its
 * end of wait moved) with the operator's intent to close it, which the sweep or the next start carries out unless the
 * gateway's answer shows the link ACTIVE.
 */
function journalReactivation(deps: LinkStatusDeps, store: PaymentLinkStore, linkId: string): void {
  store.closing(store.reactivated(linkId, deps.now().getTime() + deps.waitMs).linkId, 'operator');
}

/** What {@link setLinkStatus} needs. */
export interface LinkStatusDeps {
  gateway: Pick<GatewayClient, 'paymentLinks'>;
  /** The terminal's journal of links (absent when the terminal never ran: the `links` command). */
  store: PaymentLinkStore | undefined;
  /** `terminal.id`: the journal's record of a link counts only when the link is provably this terminal's. */
  terminalId: string;
  /** Where the change is recorded (the operator's audit log). */
  audit: { record(entry: NewAuditRecord): unknown } | undefined;
  now: () => Date;
  /** How long a link made ACTIVE again is watched for its payment (`links.waitSeconds`). */
  waitMs: number;
}

/**
 * Sets a link INACTIVE (`deactivate`) or ACTIVE again (`reactivate`) at the gateway, for the operator. A link of this
 * terminal: the intent to deactivate is journaled before the request (the sweep finishes it if the gateway does not
 * answer now), and the journal follows the gateway's answer — deactivated, or active and watched again for
 * `waitMs` — once it shows the new status ({@link changeLinkStatus}); a reactivation is journaled before it is sent as
 * the link open with the intent to close it, so that one whose answer is lost is deactivated by the sweep. A link of
 * this terminal that {@link reactivationRefusal} keeps INACTIVE (paid, or never created), or one of this terminal's id
 * that the journal has no record of, is refused before anything is sent. Recorded in the audit log (`link-deactivate` / `link-reactivate`, actor operator), a
 * refusal or a gateway's failure too, then rethrown.
 * @throws LinkDeskError LINK_NOT_ALLOWED; GatewayError (GW_NOT_FOUND for a link the gateway does not have,
 *   LINK_PERSONAL_DATA, the transport's).
 */
export async function setLinkStatus(
  deps: LinkStatusDeps,
  linkId: string,
  target: 'INACTIVE' | 'ACTIVE',
): Promise<{ link: PaymentLink; mine: StoredLink | undefined; wasStatus: string }> {
  const { gateway, store, audit } = deps;
  const action = target === 'INACTIVE' ? 'link-deactivate' : 'link-reactivate';
  // A link whose create the gateway refused is another terminal's: changed, if the operator says so, as one.
  const mine = ownLink(store, deps.terminalId, linkId);
  try {
    // Checked before anything is sent, for every caller (operator mode and the `links` command alike).
    const refusal = target === 'ACTIVE' ? reactivationRefusalOf(linkId, deps.terminalId, mine) : undefined;
    if (refusal !== undefined) throw new LinkDeskError('LINK_NOT_ALLOWED', refusal);
    if (target === 'INACTIVE' && mine && !mine.gatewayInactive) store?.closing(linkId, 'operator');
    // A reactivation is journaled before it is sent too: the link open again with the intent to close it, so that an
    // answer lost (the update may have taken) or a stop before the answer is journaled leaves it to the sweep or the
    // next start, which deactivate it — never ACTIVE at the gateway while the journal holds it closed, unwatched. Once
    // the answer shows it ACTIVE, the intent is dropped and the link watched.
    if (target === 'ACTIVE' && mine?.gatewayInactive === true && store)
      journalReactivation(deps, store, linkId);
    let changed: Awaited<ReturnType<typeof changeLinkStatus>>;
    try {
      changed = await changeLinkStatus(gateway, linkId, target);
    } catch (e) {
      // An update that may have taken, whose answer is lost: journaled again, after it. The running terminal's sweep
      // may have recorded the link closed meanwhile from a look at it made before the update arrived (the command is
      // another process); open again with the intent to close it, the link is deactivated by the sweep.
      if (target === 'ACTIVE' && mine && store && e instanceof GatewayError && e.outcomeUnknown)
        journalReactivation(deps, store, linkId);
      throw e;
    }
    const { link: updated, wasStatus } = changed;
    if (mine && store) {
      if (target === 'INACTIVE') store.deactivated(linkId, mine);
      else store.reactivated(linkId, deps.now().getTime() + deps.waitMs);
    }
    audit?.record({
      actor: 'operator',
      action,
      subject: linkId,
      result: 'ok',
      code: target === 'INACTIVE' ? 'operator' : 'ACTIVE',
      details: { terminalLink: mine !== undefined, wasStatus },
    });
    return { link: updated, mine: ownLink(store, deps.terminalId, linkId), wasStatus };
  } catch (e) {
    if (e instanceof LinkDeskError)
      audit?.record({ actor: 'operator', action, subject: linkId, result: 'refused', code: e.code });
    else if (e instanceof GatewayError)
      audit?.record({
        actor: 'operator',
        action,
        subject: linkId,
        result: e.code === 'GW_NOT_FOUND' || e.code === 'LINK_PERSONAL_DATA' ? 'refused' : 'failed',
        code: e.code,
      });
    throw e;
  }
}
