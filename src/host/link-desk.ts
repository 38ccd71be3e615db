import {
  buildPaymentLinkBody,
  GatewayError,
  isLinkId,
  PersonalDataError,
  personalDataIn,
  type GatewayClient,
  type LinkNotificationRefusal,
  type LinkPaymentNotification,
  type PaymentLink,
  type PaymentLinkInput,
  type PaymentLinkPage,
} from '../gateway/index.js';
import type {
  LinkCloseReason,
  LinkPurpose,
  LinkState,
  PaymentLinkStore,
  StoredLink,
} from '../journal/index.js';
import { isCardNumber } from '../emv/index.js';
import type { Logger } from '../log/index.js';
import type { AuditTrail } from './audit-trail.js';
import { failpoint } from './failpoints.js';
import { isOwnLink, ownLink, purchaseNumber } from './link-ids.js';
import {
  changeLinkStatus,
  LinkDeskError,
  paymentLinkPage,
  setLinkStatus,
  shownLinkText,
  type LinkDeskErrorCode,
} from './link-status.js';

export { LinkDeskError, operatorLinkActions, type LinkDeskErrorCode } from './link-status.js';

/**
 * What the customer's screen shows of a payment link (issue 14, item 1): the QR code's content, the domain printed
 * under it (reference/kiosk.md §4: a QR code bound to the session and amount, with a short expiry and the domain as
 * text), and how the wait ends.
 */
export interface LinkView {
  linkId: string;
  /** The ticket or session reference the link charges for. */
  reference: string;
  purpose: LinkPurpose;
  amountMinor: number;
  currency: string;
  /**
   * `creating` (no URL yet), `active` (show the QR code and wait), `paid`, `deactivated` (cancelled, timed out or
   * closed by the operator), `failed` (never created).
   */
  state: LinkState;
  /** The hosted payment page: the content of the QR code, and the text read out in accessibility mode. */
  url?: string;
  /** The host of `url`, to print under the QR code. */
  domain?: string;
  /** When the terminal stops waiting and deactivates the link (ISO 8601). */
  expiresAt: string;
  /** The terminal is deactivating the link (the customer cancelled, the wait ended, it was paid). */
  closing: boolean;
  /** Why it was closed, once it is. */
  closeReason?: LinkCloseReason;
  /** A payment on the hosted page was declined: the customer may try again with another card while it is active. */
  lastAttemptDeclined?: boolean;
  /**
   * With `lastAttemptDeclined`: how many payments on the hosted page were declined since the link was last made
   * active, each payment once however often it is notified — each decline an event the screen tells again.
   */
  declinedPayments?: number;
  /** Gateway id of the payment, once paid. */
  paymentId?: string;
}

/** A link to create for a fee. */
export interface FeeLinkRequest {
  /**
   * Ticket or session reference: the purchase number is the terminal's id and this reference (made unique with a
   * suffix when the terminal used it before), src/host/link-ids.ts.
   */
  reference: string;
  amountMinor: number;
  currency: string;
  /** Default `fee`; `pay-later` for an amount owed after a failed capture. */
  purpose?: LinkPurpose;
  /** Milliseconds this link waits for its payment (default `waitMs` of the desk): the screen's own wait. */
  waitMs?: number;
  /** The tap-and-go hold whose stay the link charges for, journaled with it (`LinkDeskDeps.stayPaid`). */
  holdId?: string;
}

/** What the desk needs; the host provides it. */
export interface LinkDeskDeps {
  /**
   * `terminal.id`, unique in the fleet: carried in every purchase number the desk makes (src/host/link-ids.ts), so that
   * no other terminal of the merchant makes the same link id, and the terminal touches only links it provably made.
   */
  terminalId: string;
  store: PaymentLinkStore;
  gateway: Pick<GatewayClient, 'paymentLinks'>;
  audit: AuditTrail;
  logger: Logger;
  now: () => Date;
  /** Milliseconds a link waits for its payment (`links.waitSeconds`). */
  waitMs: number;
  /** Milliseconds between looks at the open links through the API (`links.pollSeconds`). */
  pollMs: number;
  /** The line item's product name (`links.productName`). */
  productName: string;
  partner: { developerId: string; solutionId: string };
  /**
   * Whether the terminal can learn that a link was paid (a notification listener or relay runs). Without one the API
   * alone cannot tell (a link's status says nothing of its payments): the screens should not offer pay by phone.
   */
  notificationsReceived: boolean;
  /**
   * Milliseconds the gateway's clock may disagree with the terminal's (`links.notifications.toleranceSeconds`, the
   * notifications' verifier allows the same): a payment notification may be signed that much earlier than its link
   * was created (the terminal's clock). One signed earlier is an old one replayed for a link that reuses its id, not a
   * payment of this link.
   */
  notificationToleranceMs: number;
  /**
   * A fee link paid whose customer's screen counts the payment (the link was awaited): what the payment makes durable
   * besides — the pay station's ticket recorded paid — written in the transaction that makes the link `paid`. It must
   * not throw for a value it refuses (the host logs those): that would lose the payment. Absent: nothing.
   */
  feePaid?: (link: StoredLink) => void;
  /**
   * Whether the fee of a fee link of no hold is owed by something that outlives its customer's session and that nothing
   * paid since — the pay station's ticket, recorded paid by {@link feePaid}: a payment of the link that a restart left
   * in doubt (shown to its customer, closed at start while its payment was unknown) counts for it, however late it is
   * notified. Asked when the restart closes the link and again when its payment comes. Absent: nothing does.
   */
  feeOwedAfterRestart?: (link: StoredLink) => boolean;
  /**
   * A fee link of no hold paid that nobody counts (the gateway confirmed it INACTIVE, or a restart left its payment in
   * doubt) whose fee was paid by card meanwhile — the pay station's ticket: the payment by link, which the terminal
   * cannot refund, pays it, and the card sale is given back (a durable follow-up). Written in the transaction that makes
   * the link `paid`; returns the sale given back and how much of it (undefined: nothing written, the payment is the
   * operator's, `PAID_AFTER_CLOSE`). Must not throw for a value it refuses, as `feePaid`. Absent: nothing.
   */
  feePaidTwice?: (link: StoredLink) => { transactionId: string; amountMinor: number } | undefined;
  /**
   * A link that names a tap-and-go hold (`StoredLink.holdId`: the gate's exit paid by phone, or its fee left to pay
   * later), paid and counted: the stay is paid — written in the transaction that makes the link `paid`, so that no
   * crash separates the payment from the hold it pays (the hold is never charged again). Must not throw for a value it
   * refuses, as `feePaid`. Absent: nothing.
   */
  stayPaid?: (link: StoredLink & { holdId: string }) => void;
  /**
   * A fee link that names a hold, shown to its customer, closed at start while its payment is unknown (the customer
   * may have paid it on the phone, and its notification gone to the process that died): the stay's payment by phone
   * is in doubt — written in the transaction that journals the link's closing, so that the hold is never charged by
   * card once the link is closed. Absent: nothing.
   */
  stayInDoubt?: (link: StoredLink & { holdId: string }) => void;
  /**
   * Whether `link` is the payment by phone in doubt of its hold ({@link stayInDoubt}): an approved payment of it counts
   * for the stay, however late its notification. Absent: never.
   */
  paymentInDoubt?: (link: StoredLink & { holdId: string }) => boolean;
}

function domainOf(url: string | undefined): string | undefined {
  if (url === undefined || !URL.canParse(url)) return undefined;
  return new URL(url).host;
}

function viewOf(link: StoredLink, declined: ReadonlySet<string> | undefined): LinkView {
  const open = link.state === 'creating' || link.state === 'active';
  const domain = domainOf(link.url);
  return {
    linkId: link.linkId,
    reference: link.reference,
    purpose: link.purpose,
    amountMinor: link.amountMinor,
    currency: link.currency,
    state: link.state,
    ...(link.url !== undefined && link.state === 'active' && link.closeReason === undefined
      ? { url: link.url }
      : {}),
    ...(domain !== undefined && link.state === 'active' ? { domain } : {}),
    expiresAt: new Date(link.watchUntilMs).toISOString(),
    closing: open && link.closeReason !== undefined,
    ...(!open && link.closeReason !== undefined ? { closeReason: link.closeReason } : {}),
    ...(declined !== undefined ? { lastAttemptDeclined: true, declinedPayments: declined.size } : {}),
    ...(link.paymentId !== undefined ? { paymentId: link.paymentId } : {}),
  };
}

/**
 * A wait is over for the customer: paid, never created, or confirmed INACTIVE by the gateway. The terminal's intent to
 * close a link does not end it: until the gateway confirms the link INACTIVE a payment can still come, and it counts.
 */
function ended(link: StoredLink): boolean {
  return link.state === 'paid' || link.state === 'failed' || link.gatewayInactive;
}

/**
 * Whether a payment of this status took nothing from the customer: declined, or refused as invalid (reference/gateway.md
 * §4, the payments' statuses). Any other status but `AUTHORIZED` — approved for part of the amount, approved pending a
 * review, pending, one nobody documented — may hold the customer's money without paying the fee.
 */
function tookNothing(status: string): boolean {
  return status === 'DECLINED' || status === 'INVALID_REQUEST';
}

const errorText = (e: unknown): string =>
  e instanceof GatewayError ? `${e.code}: ${e.message}` : e instanceof Error ? e.message : String(e);

/**
 * Pay by phone with a payment link (issue 14, item 1), the host's side: creates a fixed-price `PURCHASE` link for a
 * fee, journaled before it is sent; waits for its payment (the verified notification handed to {@link notify}, and a
 * look at every open link through the API each `pollMs`); deactivates it when it is paid (one use), cancelled or the
 * wait ends; and at start ({@link recover}) takes every link a restart left open — a pay-later link is watched again
 * while its wait lasts, every other deactivated. Nothing active is left unwatched: the same sweep that polls adopts any open link of
 * the journal that nobody watches (e.g. reactivated by the operator).
 *
 * The kiosk screens use {@link createForFee}, {@link watch}, {@link cancel}, {@link get} and {@link subscribe}; a
 * paid link's reference is then settled by the caller (the ticket or session is the machine's).
 */
export class LinkDesk {
  private readonly listeners = new Set<(view: LinkView) => void>();
  private readonly waiters = new Map<string, Array<(view: LinkView) => void>>();
  private readonly deadlines = new Map<string, NodeJS.Timeout>();
  /**
   * Links whose last payment was declined: the payments declined since the link was last made active, by id — so that
   * the customer's screen tells each decline once, however often it is notified. Kept only while the link's wait lasts:
   * forgotten when the link is published ended (paid, never created, confirmed INACTIVE), or by the sweep once the link
   * is no longer open (closed beside the terminal), so that it does not grow for the life of the process.
   */
  private readonly declined = new Map<string, Set<string>>();
  /**
   * The failure last recorded in the audit log of each link whose deactivation keeps failing, so that it is recorded
   * once, not at every try; forgotten once the link is no longer open.
   */
  private readonly deactivationFailed = new Map<string, string>();
  /** Links with a gateway request of the desk in flight (one at a time per link). */
  private readonly busy = new Set<string>();
  /** Links whose deactivation waited for the request in flight about them: it runs as soon as that request ends. */
  private readonly closeAfterBusy = new Set<string>();
  /**
   * Fee links a customer of this run still waits on: a payment of one counts (the machine settles the ticket) until the
   * gateway confirms it INACTIVE. A link leaves the set when the customer is told it was not paid, or once it is paid.
   */
  private readonly awaited = new Set<string>();
  /** Links this run created: every other link of the journal was left by an earlier run (a restart). */
  private readonly madeHere = new Set<string>();
  private sweepTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly deps: LinkDeskDeps) {}

  /** Whether pay by phone can be offered: the terminal receives payment notifications and is not closing. */
  get available(): boolean {
    return this.deps.notificationsReceived && !this.closed;
  }

  /**
   * Creates the link for a fee and starts waiting for its payment. The request is checked (required fields and the
   * personal-data guard) before anything is written or sent, then journaled as `creating`, then sent once.
   * A link of the same reference that the gateway has not confirmed INACTIVE (a cancel whose deactivation failed or
   * had no answer) is deactivated first: one ticket never has two links to pay it.
   * @throws PersonalDataError (`LINK_PERSONAL_DATA`) before anything is sent; LinkDeskError `LINK_BAD_REQUEST`,
   *   `LINK_REFUSED` (the gateway refused it), `LINK_UNAVAILABLE` (no answer: the link, if the gateway made it, is
   *   deactivated by the sweep), `LINK_BUSY` (an earlier link of the reference is not confirmed INACTIVE yet) — but a
   *   link whose payment was notified before the create's answer came is `paid` in the journal, counted for its
   *   customer: the view returned is then `paid`, whatever that answer, so that the screen says what the journal holds.
   */
  async createForFee(request: FeeLinkRequest): Promise<LinkView> {
    if (this.closed) throw new LinkDeskError('LINK_UNAVAILABLE', 'the terminal is closing');
    if (!Number.isSafeInteger(request.amountMinor) || request.amountMinor <= 0)
      throw new LinkDeskError('LINK_BAD_REQUEST', 'the amount must be a positive number of minor units');
    // The reference as given, before it is made into a purchase number (which could hide a shape: spaces made dashes,
    // a letter put into a long digit run). A reference of digits only is the terminal's own ticket or session number
    // and is refused only when it is a card number of a known network; its long runs are then split.
    const digitsOnly = /^\d+$/.test(request.reference);
    const kind = digitsOnly
      ? isCardNumber(request.reference)
        ? 'card-number'
        : undefined
      : personalDataIn(request.reference);
    if (kind !== undefined) throw new PersonalDataError('purchaseInformation.purchaseNumber', kind);
    await this.closeEarlierLinks(request.reference.slice(0, 128));
    const linkId = this.freshId(request.reference);
    const input: PaymentLinkInput = {
      linkType: 'PURCHASE',
      purchaseNumber: linkId,
      currency: request.currency,
      totalAmountMinor: request.amountMinor,
      lineItems: [{ productName: this.deps.productName, unitPriceMinor: request.amountMinor, quantity: 1 }],
      partner: { ...this.deps.partner },
    };
    try {
      // Every check of the request, the personal-data guard included, before the journal and the wire.
      buildPaymentLinkBody(input, false);
    } catch (e) {
      if (e instanceof GatewayError && e.code === 'GW_INVALID_REQUEST')
        throw new LinkDeskError('LINK_BAD_REQUEST', e.message, { cause: e });
      throw e;
    }
    const now = this.deps.now().getTime();
    this.deps.store.begin({
      linkId,
      reference: request.reference.slice(0, 128) || linkId,
      purpose: request.purpose ?? 'fee',
      amountMinor: request.amountMinor,
      currency: request.currency,
      ...(request.holdId !== undefined ? { holdId: request.holdId } : {}),
      watchUntilMs: now + (request.waitMs ?? this.deps.waitMs),
    });
    this.madeHere.add(linkId);
    if ((request.purpose ?? 'fee') === 'fee') this.awaited.add(linkId);
    this.busy.add(linkId);
    try {
      const created = await this.deps.gateway.paymentLinks.create(input);
      const link = this.deps.store.activated(linkId, created.paymentLink);
      this.deps.logger.info({ linkId, amountMinor: link.amountMinor }, 'payment link created');
      this.watchLink(link);
      return this.publish(link);
    } catch (e) {
      // A verified payment notified while the create was out: the gateway made the link and the customer paid it. The
      // journal holds it paid (the fee counted with it): so is the customer told, whatever the answer. Its deactivation
      // (one use) follows the end of this request.
      const paidFirst = this.deps.store.get(linkId);
      if (paidFirst?.state === 'paid') {
        this.deps.logger.warn({ linkId, err: errorText(e) }, 'payment link create failed after its payment');
        return this.publish(this.deps.store.noteError(linkId, errorText(e)));
      }
      // The customer is told no: a payment of a link the gateway made anyway is the operator's to settle.
      this.awaited.delete(linkId);
      const known = e instanceof GatewayError && !e.outcomeUnknown;
      if (known) {
        const link = this.deps.store.failed(linkId, errorText(e));
        this.publish(link);
        throw new LinkDeskError(
          e.code === 'GW_INVALID_REQUEST' ? 'LINK_REFUSED' : 'LINK_UNAVAILABLE',
          `the payment link could not be created (${e.code})`,
          { cause: e },
        );
      }
      // The gateway may have made it: the customer is told no, and the sweep deactivates it if it exists.
      this.deps.store.noteError(linkId, errorText(e));
      this.deps.store.closing(linkId, 'cancelled');
      this.deps.logger.warn({ linkId, err: errorText(e) }, 'payment link create: outcome unknown');
      throw new LinkDeskError('LINK_UNAVAILABLE', 'the gateway did not answer the payment link request', {
        cause: e,
      });
    } finally {
      this.release(linkId);
    }
  }

  /** The link as the customer view shows it; undefined when this terminal has no such link. */
  get(linkId: string): LinkView | undefined {
    const link = this.deps.store.get(linkId);
    return link === undefined ? undefined : viewOf(link, this.declined.get(linkId));
  }

  /**
   * Resolves when the wait for the link is over: paid, or the terminal closes it (cancel, the wait ran out, the
   * operator), or it was never created. The view tells which.
   */
  watch(linkId: string): Promise<LinkView> {
    const link = this.deps.store.get(linkId);
    if (link === undefined)
      return Promise.reject(new LinkDeskError('LINK_NOT_FOUND', `no payment link ${linkId}`));
    if (ended(link)) return Promise.resolve(viewOf(link, this.declined.get(linkId)));
    return new Promise((resolve) => {
      const list = this.waiters.get(linkId) ?? [];
      list.push(resolve);
      this.waiters.set(linkId, list);
    });
  }

  /**
   * The customer walked away (or chose another way to pay): the link is deactivated. The intent is journaled first,
   * so a failure to reach the gateway now is finished by the sweep or the next start. A payment notified before the
   * gateway confirms the link INACTIVE counts: the view returned is then `paid`. A view still `active` (or `creating`):
   * the gateway has not confirmed it INACTIVE — its customer still waits on it ({@link watch}), not asked for another
   * payment of the fee, and its payment still counts. Otherwise the customer is told it was not paid, and a payment
   * that still comes is recorded for the operator (`PAID_AFTER_CLOSE`).
   */
  async cancel(linkId: string, reason: LinkCloseReason = 'cancelled'): Promise<LinkView> {
    const link = this.deps.store.get(linkId);
    if (link === undefined) throw new LinkDeskError('LINK_NOT_FOUND', `no payment link ${linkId}`);
    if (link.state !== 'paid' && link.state !== 'failed' && link.state !== 'deactivated') {
      // A request about the link in flight (the sweep's look, a deactivation) ends first, so that the answer given
      // here follows the gateway's.
      await this.idle(linkId);
      await this.deactivate(linkId, reason);
    }
    const after = this.deps.store.get(linkId) ?? link;
    if (ended(after) && after.state !== 'paid') this.awaited.delete(linkId);
    return viewOf(after, this.declined.get(linkId));
  }

  /** Operator mode: one page of the gateway's list (offset/limit), each link with the journal's record of it. */
  operatorPage(query: {
    offset: number;
    limit: number;
  }): Promise<{ page: PaymentLinkPage; links: { link: PaymentLink; mine: StoredLink | undefined }[] }> {
    return paymentLinkPage(
      { gateway: this.deps.gateway, store: this.deps.store, terminalId: this.deps.terminalId },
      query,
    );
  }

  /**
   * Operator mode: sets a link this terminal created INACTIVE or ACTIVE again (src/host/link-status.ts, the same
   * change as `parking-terminal links deactivate|reactivate`). A customer waiting on a deactivated link is told; a
   * reactivated link is watched again for `waitMs`, then deactivated. Recorded in the audit log, refusals too.
   * @throws LinkDeskError LINK_NOT_FOUND (not a link of this terminal), LINK_NOT_ALLOWED (see
   *   {@link operatorLinkActions}: never created, or reactivating a paid link, refused by `setLinkStatus`), LINK_BUSY,
   *   LINK_UNAVAILABLE (closing); GatewayError.
   */
  async setStatusByOperator(
    linkId: string,
    target: 'INACTIVE' | 'ACTIVE',
  ): Promise<{ link: PaymentLink; mine: StoredLink | undefined }> {
    const action = target === 'INACTIVE' ? 'link-deactivate' : 'link-reactivate';
    const mine = this.deps.store.get(linkId);
    const refuse = (code: LinkDeskErrorCode, message: string): never => {
      this.deps.audit.record({ actor: 'operator', action, subject: linkId, result: 'refused', code });
      throw new LinkDeskError(code, message);
    };
    if (this.closed) refuse('LINK_UNAVAILABLE', 'the terminal is closing');
    if (mine === undefined) return refuse('LINK_NOT_FOUND', `no payment link ${linkId} of this terminal`);
    if (mine.state === 'failed' || mine.state === 'creating')
      refuse('LINK_NOT_ALLOWED', `the link is ${mine.state === 'failed' ? 'not created' : 'being created'}`);
    if (this.busy.has(linkId)) refuse('LINK_BUSY', 'the terminal is talking to the gateway about this link');
    this.busy.add(linkId);
    try {
      const done = await setLinkStatus(
        {
          gateway: this.deps.gateway,
          store: this.deps.store,
          terminalId: this.deps.terminalId,
          audit: this.deps.audit,
          now: this.deps.now,
          waitMs: this.deps.waitMs,
        },
        linkId,
        target,
      );
      const after = this.deps.store.get(linkId);
      if (after !== undefined) {
        this.declined.delete(linkId);
        if (target === 'INACTIVE') {
          const t = this.deadlines.get(linkId);
          if (t) clearTimeout(t);
          this.deadlines.delete(linkId);
        } else this.watchLink(after);
        this.publish(after);
      }
      return done;
    } catch (e) {
      const after = this.deps.store.get(linkId);
      if (after !== undefined) this.publish(after);
      throw e;
    } finally {
      this.release(linkId);
    }
  }

  /** Every change of a link, as the customer view shows it. Returns the function that unsubscribes. */
  subscribe(listener: (view: LinkView) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Whether an approved payment of the link is counted: the gateway has not confirmed the link INACTIVE, and someone
   * counts it — the customer of this run waiting on a fee link (its machine settles the ticket), or the amount owed of
   * a pay-later link. Or the link is the payment by phone in doubt of its stay ({@link LinkDeskDeps.paymentInDoubt}:
   * a restart closed it while its customer may have paid it): its payment, notified however late, was made before the
   * link was INACTIVE (the gateway takes none after), and pays the stay, never charged by card since. Otherwise it is
   * the operator's to settle or refund (`PAID_AFTER_CLOSE`).
   */
  private counts(link: StoredLink): boolean {
    if (link.state === 'failed') return false;
    if (link.paymentInDoubt === true && link.holdId === undefined)
      return this.deps.feeOwedAfterRestart?.(link) === true;
    if (link.holdId !== undefined && this.deps.paymentInDoubt?.({ ...link, holdId: link.holdId }) === true)
      return true;
    if (link.gatewayInactive || link.state === 'deactivated') return false;
    return link.purpose === 'pay-later' || this.awaited.has(link.linkId);
  }

  /**
   * A payment through a link that the terminal does not count as the link's; the operator settles or refunds it. Once:
   * a notification is delivered again (a relay hands over what it holds at every fetch, past a restart too; a gateway
   * sends again what it got no answer to), and a payment of the link already recorded in that status, under whatever
   * code, changes nothing.
   */
  private auditRefusedPayment(
    linkId: string,
    n: LinkPaymentNotification,
    code: 'PAID_TWICE' | 'AMOUNT_MISMATCH' | 'SIGNED_BEFORE_LINK' | 'NOT_COUNTED' | 'PAYMENT_CHANGED',
  ): void {
    if (this.deps.audit.holds('link-paid', linkId, { paymentId: n.paymentId, status: n.status })) return;
    this.deps.audit.record({
      actor: 'system',
      action: 'link-paid',
      subject: linkId,
      result: 'refused',
      code,
      details: {
        paymentId: n.paymentId,
        status: n.status,
        amountMinor: n.amountMinor,
        currency: n.currency,
        ...(n.signedAtMs !== undefined ? { signedAt: new Date(n.signedAtMs).toISOString() } : {}),
      },
    });
  }

  /**
   * A notification the gateway signed (its MAC verified) that was refused all the same — signed too far in the future,
   * for another merchant, or a body the terminal cannot read: it may be a real payment, so the operator is told
   * (`link-paid`, refused, `NOTIFICATION_<problem>`), not only the log. Once, as a refused payment is
   * ({@link auditRefusedPayment}): the gateway sends again what it was answered 401 or 400, and the same signed
   * notification (its signature time, reason and ids) already recorded changes nothing.
   */
  notificationRefused(refusal: LinkNotificationRefusal): void {
    // The texts are the body's, read as far as they could be (the body was refused): the subject is a link id or
    // nothing, and each text is kept as the operator is shown a link's texts — visibly, bounded — so that none can
    // turn the record around nor make it too long to be written.
    const { linkId, paymentId } = refusal;
    const linkIdShape = linkId !== undefined && isLinkId(linkId);
    const subject = linkIdShape ? linkId : undefined;
    const facts = {
      reason: shownLinkText(refusal.message),
      signedAt: new Date(refusal.signedAtMs).toISOString(),
      ...(linkId !== undefined && !linkIdShape ? { linkId: shownLinkText(linkId) } : {}),
      ...(paymentId !== undefined ? { paymentId: shownLinkText(paymentId) } : {}),
    };
    if (this.deps.audit.holds('link-paid', subject, facts)) return;
    this.deps.audit.record({
      actor: 'system',
      action: 'link-paid',
      ...(subject !== undefined ? { subject } : {}),
      result: 'refused',
      code: `NOTIFICATION_${refusal.problem.toUpperCase()}`,
      details: {
        ...facts,
        mine: linkIdShape && ownLink(this.deps.store, this.deps.terminalId, linkId) !== undefined,
      },
    });
  }

  /**
   * A verified payment notification (src/gateway/link-notifications.ts). An approved payment of the link's amount
   * makes it `paid` (journaled before this returns) and deactivates it; a decline leaves it active for another try.
   * A notification for a link that is not provably this terminal's (src/host/link-ids.ts: unknown, its create refused,
   * or of another terminal) is ignored. Synchronous: the listener answers once the payment is journaled.
   */
  notify(n: LinkPaymentNotification): void {
    failpoint('link.notified');
    // Only a link provably this terminal's: a relay may carry the payment of another terminal's link of the same id.
    const link = ownLink(this.deps.store, this.deps.terminalId, n.linkId);
    if (link === undefined) {
      this.deps.logger.warn({ linkId: n.linkId }, 'payment-link notification for a link of another terminal');
      return;
    }
    // A relayed notification may be old (the relay held it): it must still be younger than its link.
    if (n.signedAtMs !== undefined && n.signedAtMs < link.createdAtMs - this.deps.notificationToleranceMs) {
      this.auditRefusedPayment(link.linkId, n, 'SIGNED_BEFORE_LINK');
      return;
    }
    if (link.state === 'paid') {
      // The same notification again is nothing new; a second approved payment (paid in the moment before the link was
      // deactivated) is money the operator must refund.
      if (n.paymentId !== link.paymentId) {
        if (!tookNothing(n.status)) this.auditRefusedPayment(link.linkId, n, 'PAID_TWICE');
        return;
      }
      // The payment the link was paid with, in another status (declined by a review, reversed) or of another amount:
      // the fee was settled on money the gateway no longer says it took as it was counted. The journal keeps the
      // payment (the ticket or stay was released on it); the operator settles the difference.
      if (n.status !== 'AUTHORIZED' || n.amountMinor !== link.amountMinor || n.currency !== link.currency)
        this.auditRefusedPayment(link.linkId, n, 'PAYMENT_CHANGED');
      return;
    }
    if (n.status !== 'AUTHORIZED') {
      // The fee is not paid: the customer may try again. A status that may hold money all the same (approved for
      // part, pending a review …) is the operator's to settle or refund.
      if (!tookNothing(n.status)) this.auditRefusedPayment(link.linkId, n, 'NOT_COUNTED');
      this.declined.set(link.linkId, (this.declined.get(link.linkId) ?? new Set()).add(n.paymentId));
      this.deps.logger.info({ linkId: link.linkId, status: n.status }, 'payment-link payment not approved');
      this.publish(link);
      return;
    }
    if (n.amountMinor !== link.amountMinor || n.currency !== link.currency) {
      this.auditRefusedPayment(link.linkId, n, 'AMOUNT_MISMATCH');
      return;
    }
    // A link an earlier run left open, the gateway not having confirmed it INACTIVE, notified before this run's recovery
    // took it (the gateway's resend of what the run that died never answered reaches the listener while the journal's
    // own recovery runs): what that recovery would find, it finds now — a gate's stay in doubt with the link's closing,
    // so that the payment counts for it as it would once notified after (the closing's reason stays the first one).
    const leftOpen = !this.madeHere.has(link.linkId) && !link.gatewayInactive;
    const doubt = leftOpen ? this.paymentInDoubtOf(link) : undefined;
    if (doubt !== undefined) this.deps.store.closing(link.linkId, 'recovery', doubt);
    const counted = this.counts(this.deps.store.get(link.linkId) ?? link);
    // Not counted, a fee paid by card meanwhile: the card sale is given back (the payment by link cannot be).
    let cardGivenBack: { transactionId: string; amountMinor: number } | undefined;
    const paid = this.deps.store.paid(link.linkId, n.paymentId, (l) => {
      if (!counted) {
        if (l.purpose === 'fee' && l.holdId === undefined) cardGivenBack = this.deps.feePaidTwice?.(l);
        return;
      }
      if (l.purpose === 'fee') this.deps.feePaid?.(l);
      if (l.holdId !== undefined) this.deps.stayPaid?.({ ...l, holdId: l.holdId });
    });
    this.deps.audit.record({
      actor: 'system',
      action: 'link-paid',
      subject: link.linkId,
      // A payment nobody counts (the link confirmed INACTIVE, or its customer told it was not paid) still happened:
      // the operator settles or refunds it — unless it paid a fee paid by card too, whose card sale is given back.
      result: counted || cardGivenBack !== undefined ? 'ok' : 'refused',
      code: counted ? 'PAID' : cardGivenBack !== undefined ? 'PAID_CARD_GIVEN_BACK' : 'PAID_AFTER_CLOSE',
      details: {
        reference: link.reference,
        paymentId: n.paymentId,
        amountMinor: n.amountMinor,
        currency: n.currency,
        ...(cardGivenBack !== undefined
          ? {
              givenBack: {
                transactionId: cardGivenBack.transactionId,
                amountMinor: cardGivenBack.amountMinor,
              },
            }
          : {}),
      },
    });
    failpoint('link.paid');
    this.publish(paid);
    if (!paid.gatewayInactive) this.deactivateInBackground(paid.linkId, 'paid');
  }

  /**
   * At start, before the terminal takes a card: a link left `creating` is looked up first (and adopted only when its id
   * proves it this terminal's, src/host/link-ids.ts; one of the format before terminal ids is left `failed`, for the
   * operator, whatever the gateway has of that id); a fee link is deactivated
   * (its customer's session did not survive the restart: a payment of it goes to the operator as `PAID_AFTER_CLOSE` —
   * unless it was shown and its payment is in doubt: a gate's stay, or a pay station's ticket still owed, which a late
   * payment of it pays);
   * a pay-later link is watched again while its wait lasts, deactivated otherwise. Then the sweep runs every `pollMs`.
   * Returns the links taken.
   */
  async recover(): Promise<LinkView[]> {
    const open = this.deps.store.open();
    for (const link of open) {
      await this.resolve(link, true);
    }
    this.startSweep();
    return open.map((l) => this.get(l.linkId)).filter((v): v is LinkView => v !== undefined);
  }

  /** Stops the timers (the journal keeps the links; the next start recovers them). */
  stop(): void {
    this.closed = true;
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    for (const t of this.deadlines.values()) clearTimeout(t);
    this.deadlines.clear();
    // Nobody waits past the terminal's end: each wait ends with the link as it stands (recovered at the next start).
    for (const [linkId, list] of this.waiters) {
      const view = this.get(linkId);
      if (view) for (const w of list) w(view);
    }
    this.waiters.clear();
    // The links awaited stay so: the listener takes notifications until the terminal has closed, and a payment of one
    // made in that moment still pays its ticket or stay (in the payment's transaction) — not a payment for the operator
    // to refund while the next start charges the stay by card, or the ticket again.
  }

  /**
   * Resolves once no gateway request of the desk is in flight (each is bounded by the gateway client's timeouts): the
   * terminal's close waits for it, so that an answer is journaled before the journal closes.
   */
  async settled(): Promise<void> {
    while (this.busy.size > 0) await new Promise((r) => setTimeout(r, 20));
  }

  /** One pass over the open links (the sweep; tests). */
  async sweep(): Promise<void> {
    const open = this.deps.store.open();
    // A link closed beside the terminal (`parking-terminal links deactivate`, another process) is never published here.
    const openIds = new Set(open.map((l) => l.linkId));
    for (const linkId of this.declined.keys()) if (!openIds.has(linkId)) this.declined.delete(linkId);
    for (const linkId of this.deactivationFailed.keys())
      if (!openIds.has(linkId)) this.deactivationFailed.delete(linkId);
    for (const link of open) {
      if (this.closed) return;
      await this.resolve(link, false);
    }
  }

  // ---- internals ----

  private startSweep(): void {
    if (this.sweepTimer || this.closed) return;
    this.sweepTimer = setInterval(() => {
      void this.sweep().catch((err: unknown) => this.deps.logger.error({ err }, 'payment-link sweep failed'));
    }, this.deps.pollMs);
    this.sweepTimer.unref();
  }

  /**
   * Deactivates every open link of `reference` (as journaled) before another is made for it; a link paid but not yet
   * INACTIVE is deactivated too (one use).
   * @throws LinkDeskError `LINK_BUSY` while one of them is not confirmed INACTIVE (the sweep keeps trying).
   */
  private async closeEarlierLinks(reference: string): Promise<void> {
    for (const link of this.deps.store.open()) {
      if (link.reference !== reference) continue;
      // Its customer is gone: this request is the customer's new try.
      if (link.state !== 'paid') this.awaited.delete(link.linkId);
      await this.idle(link.linkId);
      await this.deactivate(link.linkId, link.closeReason ?? (link.state === 'paid' ? 'paid' : 'cancelled'));
      const after = this.deps.store.get(link.linkId);
      if (after !== undefined && !after.gatewayInactive && after.state !== 'failed')
        throw new LinkDeskError(
          'LINK_BUSY',
          `the earlier payment link ${link.linkId} of this reference is not confirmed inactive yet`,
        );
    }
  }

  /** A purchase number of this terminal the journal has not used: the reference's, else with `-2`, `-3` … */
  private freshId(reference: string): string {
    for (let n = 1; ; n++) {
      const id = purchaseNumber(this.deps.terminalId, reference, n);
      if (this.deps.store.get(id) === undefined) return id;
    }
  }

  private publish(link: StoredLink): LinkView {
    const view = viewOf(link, this.declined.get(link.linkId));
    for (const l of this.listeners) {
      try {
        l(view);
      } catch (err) {
        this.deps.logger.error({ err }, 'payment-link listener failed');
      }
    }
    if (ended(link)) {
      const list = this.waiters.get(link.linkId);
      this.waiters.delete(link.linkId);
      this.declined.delete(link.linkId);
      // Its wait is over: a paid link's payment is counted already (a later one of it is never counted), so nothing
      // is kept of its customer either.
      this.awaited.delete(link.linkId);
      for (const w of list ?? []) w(view);
    }
    return view;
  }

  private watchLink(link: StoredLink): void {
    // Stopped, the desk starts no timer (a create answered while the terminal closes): one would fire on a journal
    // closed by then. The link is open in the journal, and the next start takes it.
    if (this.closed) return;
    const old = this.deadlines.get(link.linkId);
    if (old) clearTimeout(old);
    const ms = Math.max(0, link.watchUntilMs - this.deps.now().getTime());
    const timer = setTimeout(() => {
      this.deadlines.delete(link.linkId);
      this.deactivateInBackground(link.linkId, 'timeout');
    }, ms);
    timer.unref();
    this.deadlines.set(link.linkId, timer);
  }

  /**
   * What an open link needs now (recovery and the sweep): a `creating` link is looked up; a link the terminal decided
   * to close (or paid, or past its wait) is deactivated; an active one within its wait is watched, and its status read.
   */
  private async resolve(link: StoredLink, atStart: boolean): Promise<void> {
    if (this.busy.has(link.linkId)) return;
    const now = this.deps.now().getTime();
    let current = link;
    if (current.state === 'creating' && !isOwnLink(current, this.deps.terminalId)) {
      await this.leaveUnprovenCreate(current);
      return;
    }
    if (current.state === 'creating') {
      this.busy.add(link.linkId);
      try {
        const found = await this.deps.gateway.paymentLinks.get(link.linkId);
        // Recorded INACTIVE only when the gateway's answer says so: a link in any other status (none, or a word the
        // terminal does not know) may still be paid, and is adopted to be watched or deactivated as any other.
        current =
          found.status === 'INACTIVE'
            ? this.deps.store.deactivated(link.linkId, link, 'recovery')
            : this.deps.store.activated(link.linkId, found.paymentLink);
      } catch (e) {
        if (e instanceof GatewayError && e.code === 'GW_NOT_FOUND') {
          this.publish(this.deps.store.failed(link.linkId, 'the gateway has no such link'));
        } else {
          this.deps.store.noteError(link.linkId, errorText(e));
        }
        return;
      } finally {
        this.release(link.linkId);
      }
      if (current.state !== 'active') {
        this.publish(current);
        return;
      }
    }
    // A fee link's customer and session were gone with the restart: nobody would count its payment (no ticket
    // released, no receipt), so it is deactivated at once; a payment that still comes is the operator's — except a
    // gate's: a link shown to its customer (active before the restart; one still `creating` was never shown, and cannot
    // have been paid), and not known paid, may have been paid, its notification lost with the process — whether or not
    // the terminal had decided to close it (a wait run out, a customer who chose the card): until the gateway confirms
    // it INACTIVE a payment can still come. Its stay's payment by phone is in doubt, with the closing's decision: the
    // hold is never charged by card, and a late payment counts for the stay. So with a pay station's ticket that
    // nothing paid since: the link is in doubt, and a late payment of it records the ticket paid.
    const inDoubt = atStart ? this.paymentInDoubtOf(link) : undefined;
    if (current.closeReason !== undefined || current.state === 'paid') {
      await this.deactivate(current.linkId, current.closeReason ?? 'paid', inDoubt);
      return;
    }
    if (atStart && current.purpose === 'fee') {
      await this.deactivate(current.linkId, 'recovery', inDoubt);
      return;
    }
    if (now >= current.watchUntilMs) {
      await this.deactivate(current.linkId, atStart ? 'recovery' : 'timeout');
      return;
    }
    if (!this.deadlines.has(current.linkId)) {
      this.watchLink(current);
      if (atStart || link.state === 'creating')
        this.deps.audit.record({
          actor: 'system',
          action: 'recovery',
          subject: current.linkId,
          result: 'ok',
          code: 'link-watched',
          details: { reference: current.reference, watchUntil: new Date(current.watchUntilMs).toISOString() },
        });
      this.publish(current);
      if (atStart) return;
    }
    await this.pollStatus(current);
  }

  /**
   * What a restart that found `link` as it is puts in doubt (see {@link resolve}), written with the link's closing, for
   * a fee link shown to its customer (`active`: one still `creating` was never shown) and not known paid: the stay of a
   * gate's link ({@link LinkDeskDeps.stayInDoubt}); the link itself when its fee outlives the session
   * ({@link LinkDeskDeps.feeOwedAfterRestart}: a pay station's ticket), so that its payment, notified however late,
   * pays the ticket as it would have without the restart. Undefined for any other link.
   */
  private paymentInDoubtOf(link: StoredLink): ((closing: StoredLink) => void) | undefined {
    const { holdId } = link;
    if (link.purpose !== 'fee' || link.state !== 'active') return undefined;
    if (holdId !== undefined) return (closing) => this.deps.stayInDoubt?.({ ...closing, holdId });
    if (this.deps.feeOwedAfterRestart?.(link) !== true) return undefined;
    return (closing) => void this.deps.store.paymentInDoubt(closing.linkId);
  }

  /**
   * A create of unknown outcome whose id does not prove the link this terminal's (the format before terminal ids): a
   * link of that id at the gateway may be another terminal's, whose customer is paying it. It is looked up, never
   * adopted nor deactivated: `failed` (the gateway has no such link, or the terminal cannot tell whose it is — then
   * recorded for the operator, `recovery` refused `link-not-adopted`). Nobody was shown its URL: the create's answer
   * never came.
   */
  private async leaveUnprovenCreate(link: StoredLink): Promise<void> {
    this.busy.add(link.linkId);
    let status: string;
    try {
      status = (await this.deps.gateway.paymentLinks.get(link.linkId)).status;
    } catch (e) {
      if (e instanceof GatewayError && e.code === 'GW_NOT_FOUND')
        this.publish(this.deps.store.failed(link.linkId, 'the gateway has no such link'));
      else this.deps.store.noteError(link.linkId, errorText(e));
      return;
    } finally {
      this.release(link.linkId);
    }
    const failed = this.deps.store.failed(
      link.linkId,
      `the create had no answer, and a link of this id (${status} at the gateway) may be another terminal's: not adopted`,
    );
    this.deps.audit.record({
      actor: 'system',
      action: 'recovery',
      subject: link.linkId,
      result: 'refused',
      code: 'link-not-adopted',
      details: { reference: link.reference, gatewayStatus: status },
    });
    this.deps.logger.warn(
      { linkId: link.linkId },
      'payment link of unknown outcome not adopted: not provably ours',
    );
    this.publish(failed);
  }

  /** The fallback look through the API: a link made INACTIVE elsewhere, or gone, ends the wait. */
  private async pollStatus(link: StoredLink): Promise<void> {
    if (this.busy.has(link.linkId)) return;
    this.busy.add(link.linkId);
    try {
      const found = await this.deps.gateway.paymentLinks.get(link.linkId);
      if (found.status === 'INACTIVE') this.finishDeactivation(link.linkId, link, 'gone');
    } catch (e) {
      if (e instanceof GatewayError && e.code === 'GW_NOT_FOUND')
        this.finishDeactivation(link.linkId, link, 'gone');
      else this.deps.logger.warn({ linkId: link.linkId, err: errorText(e) }, 'payment-link status unknown');
    } finally {
      this.release(link.linkId);
    }
  }

  /** Resolves once no request of the desk about `linkId` is in flight (each is bounded by the client's timeouts). */
  private async idle(linkId: string): Promise<void> {
    while (this.busy.has(linkId)) await new Promise((r) => setTimeout(r, 20));
  }

  /** Ends a request about `linkId`; a deactivation that waited for it starts now. */
  private release(linkId: string): void {
    this.busy.delete(linkId);
    if (!this.closeAfterBusy.delete(linkId)) return;
    const link = this.deps.store.get(linkId);
    if (link?.closeReason === undefined) return;
    this.deactivateInBackground(linkId, link.closeReason);
  }

  /**
   * {@link deactivate} with nobody awaiting it: a failure (a journal write refused) is logged, and the link, open in the
   * journal, is deactivated by the sweep or the next start — never an unexpected error that takes the terminal out of
   * service.
   */
  private deactivateInBackground(linkId: string, reason: LinkCloseReason): void {
    this.deactivate(linkId, reason).catch((e: unknown) =>
      this.deps.logger.warn({ linkId, err: errorText(e) }, 'payment link not deactivated yet; retried'),
    );
  }

  /**
   * Journals the intent (with `withClosing`, in its transaction), then sets the link INACTIVE at the gateway (repeating
   * every field, spec 000); the link stays open (the sweep tries again) until the gateway's answer shows it INACTIVE.
   */
  private async deactivate(
    linkId: string,
    reason: LinkCloseReason,
    withClosing?: (link: StoredLink) => void,
  ): Promise<void> {
    const before = this.deps.store.get(linkId);
    // Never another terminal's link of the same id: its customer could no longer pay.
    if (before === undefined || before.gatewayInactive || !isOwnLink(before, this.deps.terminalId)) return;
    const intent = this.deps.store.closing(linkId, reason, withClosing);
    this.publish(intent);
    if (this.busy.has(linkId)) {
      // A request about it is in flight (the sweep's look at its status): the deactivation follows at its end.
      this.closeAfterBusy.add(linkId);
      return;
    }
    this.busy.add(linkId);
    try {
      // Recorded INACTIVE only once the gateway's answer shows it (a link still ACTIVE can still be paid).
      await changeLinkStatus(this.deps.gateway, linkId, 'INACTIVE');
      this.finishDeactivation(linkId, before);
    } catch (e) {
      if (e instanceof GatewayError && e.code === 'GW_NOT_FOUND') {
        this.finishDeactivation(linkId, before);
        return;
      }
      this.deps.store.noteError(linkId, errorText(e));
      this.deps.logger.warn({ linkId, err: errorText(e) }, 'payment link not deactivated yet; retried');
      // The audit log keeps every record for good: the same failure again (the sweep tries every `pollMs`, through an
      // outage or an answer that never changes) is the journal's last error of the link, not a record a try.
      if (this.deactivationFailed.get(linkId) === errorText(e)) return;
      this.deactivationFailed.set(linkId, errorText(e));
      this.deps.audit.record({
        actor: 'system',
        action: 'link-deactivate',
        subject: linkId,
        result: 'failed',
        code: e instanceof GatewayError ? e.code : 'ERROR',
        details: { reason: intent.closeReason ?? reason },
      });
    } finally {
      this.release(linkId);
    }
  }

  /**
   * Records the gateway's answer that the link is INACTIVE (`reason`: the intent, when none was journaled before the
   * request); `since` is the link as the journal held it when that request was sent. A link made ACTIVE again since
   * (the operator's `links reactivate` runs beside the terminal) is not recorded closed: the answer may be older than
   * the reactivation. It stays open, and the sweep watches it again until its new end of wait.
   */
  private finishDeactivation(linkId: string, since: StoredLink, reason?: LinkCloseReason): void {
    this.deactivationFailed.delete(linkId);
    const t = this.deadlines.get(linkId);
    if (t) clearTimeout(t);
    this.deadlines.delete(linkId);
    const link = this.deps.store.deactivated(linkId, since, reason);
    if (!link.gatewayInactive) {
      this.deps.logger.info({ linkId }, 'payment link made active again while it was being deactivated');
      this.publish(link);
      return;
    }
    this.deps.audit.record({
      actor: 'system',
      action: 'link-deactivate',
      subject: linkId,
      result: 'ok',
      code: link.closeReason ?? 'closed',
      details: { reference: link.reference, state: link.state },
    });
    this.deps.logger.info({ linkId, reason: link.closeReason }, 'payment link deactivated');
    this.publish(link);
  }
}
