/**
 * The sandbox host's own pages (routes.ts, HOST_ROUTES): the OAuth consent page and token endpoint (spec 000), and
 * the hosted page of a payment link, which records the sale and sends the signed webhook (README, "Sandbox").
 */
import { createHmac } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseDecimal, toDecimalString } from '../money/index.js';
import { maskPan } from '../emv/index.js';
import type { Logger } from '../log/index.js';
import type { MerchantKey } from './auth.js';
import { cardTypeOfPan, isExpired, luhnValid } from './card.js';
import { isoSeconds } from './fields.js';
import { sendHtml, sendJson } from './http-io.js';
import type { MerchantStanding } from './ledger.js';
import type { PaymentLinkService, StoredLink } from './links.js';
import type { OAuthService } from './oauth.js';
import { consentPage, HOSTED_LOCALES, messagePage, paymentPage, resultPage } from './pages.js';
import type { PaymentService } from './payments.js';
import type { LedgerTransaction } from './store.js';
import { amountTrigger, decliningCard } from './triggers.js';

/** What the hosted pages need of the running sandbox. */
export interface HostedPagesDeps {
  oauth: OAuthService;
  links: PaymentLinkService;
  payments: PaymentService;
  merchants: MerchantKey[];
  standing(merchantId: string): MerchantStanding;
  now(): Date;
  /** Where the signed payment-link webhook is POSTed, if anywhere. */
  webhookUrl: string | undefined;
  logger: Logger;
}

/** The consent, token and hosted payment pages. */
export class HostedPages {
  constructor(private readonly deps: HostedPagesDeps) {}

  consent(req: IncomingMessage, res: ServerResponse, query: URLSearchParams, body: Buffer): void {
    const params = req.method === 'POST' ? new URLSearchParams(body.toString('utf8')) : query;
    const problem = this.deps.oauth.checkConsent(params);
    // Never redirect to an unregistered URL: show the problem instead.
    if (problem) return sendHtml(res, 400, messagePage('en_US', 'Authorization request not valid', problem));
    if (req.method === 'GET') {
      const client = this.deps.oauth.client(params.get('client_id'));
      return sendHtml(res, 200, consentPage(client?.clientId ?? '', client?.scope ?? '', params));
    }
    if (req.method !== 'POST')
      return sendHtml(res, 405, messagePage('en_US', 'Method not allowed', 'GET or POST'));
    const decision = params.get('decision');
    params.delete('decision');
    const location = this.deps.oauth.decide(params, decision === 'allow');
    res.writeHead(302, { location, 'content-length': 0 });
    res.end();
  }

  token(req: IncomingMessage, res: ServerResponse, query: URLSearchParams, body: Buffer): void {
    if (req.method !== 'POST')
      return sendJson(res, 500, { error: 'invalid_request', error_description: 'POST only' });
    const answer = this.deps.oauth.exchange(
      req.headers['content-type'],
      new URLSearchParams(body.toString('utf8')),
      [...query.keys()].length > 0,
    );
    this.deps.logger.info({ status: answer.httpStatus }, 'oauth token request');
    sendJson(res, answer.httpStatus, answer.body, {
      'content-type': 'application/json;charset=UTF-8',
      'cache-control': 'no-store',
      pragma: 'no-cache',
    });
  }

  /** The hosted payment page: GET shows it, POST pays with a test card, records the sale and sends the webhook. */
  payPage(req: IncomingMessage, res: ServerResponse, id: string, query: URLSearchParams, body: Buffer): void {
    const requested = query.get('locale') ?? 'en_US';
    const locale = HOSTED_LOCALES.includes(requested) ? requested : 'en_US';
    const link = this.deps.links.find(undefined, id);
    if (!link || link.status !== 'ACTIVE' || this.deps.standing(link.merchantId).suspended)
      return sendHtml(
        res,
        404,
        messagePage(locale, 'Link not available', 'This payment link is not active.'),
      );
    if (req.method === 'GET') return sendHtml(res, 200, paymentPage(link, locale));
    if (req.method !== 'POST')
      return sendHtml(res, 405, messagePage(locale, 'Method not allowed', 'GET or POST'));
    const form = new URLSearchParams(body.toString('utf8'));
    const pan = (form.get('cardNumber') ?? '').replace(/[\s-]/g, '');
    const expiry = /^(\d{2})\s*\/\s*(\d{2})$/.exec(form.get('expiry') ?? '');
    const cvv = form.get('securityCode') ?? '';
    if (!/^\d{12,19}$/.test(pan) || !luhnValid(pan) || !cardTypeOfPan(pan))
      return sendHtml(
        res,
        400,
        paymentPage(link, locale, 'The card number is not valid (Visa or Mastercard test cards).'),
      );
    if (!expiry?.[1] || !expiry[2] || Number(expiry[1]) < 1 || Number(expiry[1]) > 12)
      return sendHtml(res, 400, paymentPage(link, locale, 'The expiry must be MM/YY.'));
    if (!/^\d{3,4}$/.test(cvv))
      return sendHtml(res, 400, paymentPage(link, locale, 'The security code must be 3 or 4 digits.'));
    let amount = link.totalMinor ?? 0;
    if (link.linkType === 'DONATION') {
      try {
        amount = parseDecimal(form.get('amount') ?? '', link.currency);
      } catch {
        return sendHtml(res, 400, paymentPage(link, locale, 'The amount is not valid.'));
      }
      if (
        amount < (link.minMinor ?? 0) ||
        (link.maxMinor !== undefined && amount > link.maxMinor) ||
        amount === 0
      )
        return sendHtml(res, 400, paymentPage(link, locale, 'The amount is outside the allowed range.'));
    }
    const at = this.deps.now();
    let decline = decliningCard(pan);
    if (!decline && isExpired(`${expiry[2]}${expiry[1]}`, at)) decline = 'EXPIRED_CARD';
    const trigger = amountTrigger(amount, { canDecline: true, canBePartial: false });
    if (!decline && trigger.kind === 'decline') decline = trigger.reason;
    const masked = maskPan(pan);
    const created = this.deps.payments.linkPayment(
      link.merchantId,
      link.id,
      amount,
      link.currency,
      masked,
      cardTypeOfPan(pan) ?? '',
      decline,
    );
    link.payments.push(created.id);
    this.deps.links.save(link);
    const money = `${toDecimalString(amount, link.currency)} ${link.currency}`;
    sendHtml(res, 200, resultPage(locale, decline === undefined, masked, money, decline));
    this.sendWebhook(link, created);
  }

  private sendWebhook(link: StoredLink, tx: LedgerTransaction): void {
    if (!this.deps.webhookUrl) return;
    const key = this.deps.merchants.find((m) => m.merchantId === link.merchantId);
    const payload = JSON.stringify({
      eventType: 'payByLink.payment',
      eventDate: isoSeconds(this.deps.now()),
      merchantId: link.merchantId,
      payload: {
        paymentLinkId: link.id,
        purchaseNumber: link.id,
        paymentId: tx.id,
        status: tx.status,
        amount: toDecimalString(tx.amounts.requested, tx.currency),
        currency: tx.currency,
        card: { maskedNumber: tx.card?.masked, type: tx.card?.type },
      },
    });
    const t = String(Math.floor(this.deps.now().getTime() / 1000));
    // Signature: HMAC-SHA256 keyed with the merchant's base64-decoded shared secret over "<t>.<body>" (README).
    const sig = createHmac('sha256', Buffer.from(key?.sharedSecret ?? '', 'base64'))
      .update(`${t}.${payload}`)
      .digest('base64');
    fetch(this.deps.webhookUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'v-c-merchant-id': link.merchantId,
        'v-c-signature': `t=${t},sig=${sig}`,
      },
      body: payload,
    }).then(
      (r) => this.deps.logger.info({ status: r.status, link: link.id }, 'payment-link webhook delivered'),
      (e: unknown) =>
        this.deps.logger.warn(
          { err: e instanceof Error ? e.message : String(e), link: link.id },
          'payment-link webhook failed',
        ),
    );
  }
}
