import {
  GatewayError,
  statusUpdateOf,
  type GatewayClient,
  type PaymentLink,
  type PaymentLinkPage,
} from '../gateway/index.js';
import type { NewAuditRecord, PaymentLinkStore, StoredLink } from '../journal/index.js';
import type { PaymentLinkSummary, TerminalLinkRecord } from './api.js';

/**
 * The operator's actions on payment links at the gateway, one implementation for the `links` command and operator
 * mode (src/host/link-desk.ts): a page of the gateway's list merged with the journal's record, and a link set
 * INACTIVE or ACTIVE again by an update that repeats every field (spec 000: an omitted field is removed).
 */

/** The journal's record of a link, as the operator reads it. */
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
    ...(link.lastError !== undefined ? { lastError: link.lastError } : {}),
  };
}

/** A link of the gateway with the journal's record when this terminal created it; `lineItems` for one link shown. */
export function paymentLinkSummary(
  link: PaymentLink,
  mine: StoredLink | undefined,
  options: { lineItems?: boolean } = {},
): PaymentLinkSummary & { lineItems?: PaymentLink['lineItems'] } {
  return {
    id: link.id,
    status: link.status,
    ...(link.linkType !== undefined ? { linkType: link.linkType } : {}),
    ...(link.purchaseNumber !== undefined ? { purchaseNumber: link.purchaseNumber } : {}),
    ...(link.totalAmountMinor !== undefined ? { amountMinor: link.totalAmountMinor } : {}),
    ...(link.currency !== undefined ? { currency: link.currency } : {}),
    ...(link.createdDate !== undefined ? { createdDate: link.createdDate } : {}),
    ...(link.paymentLink !== undefined ? { url: link.paymentLink } : {}),
    ...(options.lineItems === true ? { lineItems: link.lineItems } : {}),
    ...(mine !== undefined ? { terminal: terminalLinkRecord(mine) } : {}),
  };
}

/** One page of the gateway's list (offset/limit paging), as given, with the journal's link of each id. */
export async function paymentLinkPage(
  deps: { gateway: Pick<GatewayClient, 'paymentLinks'>; store: PaymentLinkStore | undefined },
  query: { offset: number; limit: number; status?: 'ACTIVE' | 'INACTIVE' },
): Promise<{ page: PaymentLinkPage; links: { link: PaymentLink; mine: StoredLink | undefined }[] }> {
  const page = await deps.gateway.paymentLinks.list(query);
  return { page, links: page.links.map((link) => ({ link, mine: deps.store?.get(link.id) })) };
}

/** What {@link setLinkStatus} needs. */
export interface LinkStatusDeps {
  gateway: Pick<GatewayClient, 'paymentLinks'>;
  /** The terminal's journal of links (absent when the terminal never ran: the `links` command). */
  store: PaymentLinkStore | undefined;
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
 * `waitMs`. An update that repeats every field of the link as the gateway returns it; none when it already has that
 * status. Recorded in the audit log (`link-deactivate` / `link-reactivate`, actor operator), a gateway's refusal or
 * failure too, then rethrown.
 * @throws GatewayError (GW_NOT_FOUND for a link the gateway does not have, LINK_PERSONAL_DATA, the transport's).
 */
export async function setLinkStatus(
  deps: LinkStatusDeps,
  linkId: string,
  target: 'INACTIVE' | 'ACTIVE',
): Promise<{ link: PaymentLink; mine: StoredLink | undefined; wasStatus: string }> {
  const { gateway, store, audit } = deps;
  const action = target === 'INACTIVE' ? 'link-deactivate' : 'link-reactivate';
  const mine = store?.get(linkId);
  try {
    if (target === 'INACTIVE' && mine && !mine.gatewayInactive) store?.closing(linkId, 'operator');
    const current = await gateway.paymentLinks.get(linkId);
    const updated =
      current.status === target
        ? current
        : await gateway.paymentLinks.update(linkId, statusUpdateOf(current, target));
    if (mine && store) {
      if (target === 'INACTIVE') store.deactivated(linkId);
      else store.reactivated(linkId, deps.now().getTime() + deps.waitMs);
    }
    audit?.record({
      actor: 'operator',
      action,
      subject: linkId,
      result: 'ok',
      code: target === 'INACTIVE' ? 'operator' : 'ACTIVE',
      details: { terminalLink: mine !== undefined, wasStatus: current.status },
    });
    return { link: updated, mine: store?.get(linkId), wasStatus: current.status };
  } catch (e) {
    if (e instanceof GatewayError)
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
