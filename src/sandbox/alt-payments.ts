/**
 * Redirect-based alternative methods (spec 001, "Alternative-method sale and refund"): `AP_SALE` answers PENDING with
 * a `paymentUrl` (the sandbox's own page, where the payment is completed, failed or cancelled), `AP_STATUS` reveals
 * what happened there, `AP_REFUND` refunds within the settled amount. Status checks are held to spec 001's interval
 * ("Poll every 60 minutes (hourly)"; Limits: "status polling interval: every 60 minutes"): a check sooner than that
 * after the sale or the previous check of the same id is refused with HTTP 429 and counted in the ledger
 * (`altPayment.statusChecksTooEarly`, and a consistency problem), so that a client that polls too fast is caught.
 *
 * Triggers (README, "Sandbox", alternative methods): the last two digits of a sale amount 01–11 answer FAILED; the
 * page's buttons settle, fail or cancel the sale; a sale nobody completed within {@link ABANDON_AFTER_MS} is
 * ABANDONED at its next check; a settled sale is FUNDED {@link FUNDED_AFTER_MS} after it settled; refund amounts
 * ending in 01–11 answer FAILED.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { toDecimalString } from '../money/index.js';
import { clientRef, link, RESPONSE_CODES } from './answers.js';
import { GatewayAnswer } from './errors.js';
import { FieldReader, isoSeconds } from './fields.js';
import { fingerprint } from './ids.js';
import { sendHtml } from './http-io.js';
import { refundRule } from './money-rules.js';
import { escapeHtml } from './pages.js';
import { PaymentLedger } from './payment-ledger.js';
import type { ApiCall, ApiOutcome, ServiceContext } from './service-types.js';
import type { LedgerTransaction } from './store.js';
import { amountTrigger, DECLINE_TRIGGERS, faultBeforeCommit, type FaultKind } from './triggers.js';
import {
  isAltSaleBody,
  validateAltRefund,
  validateAltSale,
  validateAltStatus,
} from './validators/alt-payment.js';

/** Spec 001, Limits: "status polling interval: every 60 minutes". */
export const STATUS_CHECK_INTERVAL_MS = 60 * 60 * 1000;
/** A sale nobody completed at its page within two hours is ABANDONED (the customer did not finish). */
export const ABANDON_AFTER_MS = 2 * 60 * 60 * 1000;
/** A settled sale is deposited (FUNDED) a day after it settled. */
export const FUNDED_AFTER_MS = 24 * 60 * 60 * 1000;

/** What the customer can do on the sandbox's payment page. */
export type PageAction = 'pay' | 'fail' | 'cancel';

/** The alternative-method services over one store. */
export class AltPaymentService extends PaymentLedger {
  constructor(
    ctx: ServiceContext,
    /** The page URL of a sale id (the sandbox's base URL is known once it listens). */
    private readonly pageUrl: (id: string) => string,
  ) {
    super(ctx);
  }

  /** Whether a `POST /pts/v2/payments` body is an alternative-method sale. */
  claimsSale(call: ApiCall): boolean {
    return isAltSaleBody(call.body);
  }

  /** Whether `id` names an alternative-method sale or refund of this merchant (its refunds and checks are ours). */
  owns(call: ApiCall, id: string): boolean {
    const tx = this.ctx.store.transactions.get(id);
    return tx !== undefined && tx.merchantId === call.merchantId && tx.altPayment !== undefined;
  }

  /** POST /pts/v2/payments with actionList AP_SALE. */
  sale(call: ApiCall): ApiOutcome {
    const now = this.ctx.now();
    const r = new FieldReader(call.body, now);
    const replay = this.repeatedSale(call, r.text('clientReferenceInformation.transactionId', false));
    if (replay) return replay;
    const fields = validateAltSale(r);
    const trigger = amountTrigger(fields.amountMinor, { canDecline: true, canBePartial: false });
    let fault: FaultKind | undefined;
    if (trigger.kind === 'fault') {
      if (faultBeforeCommit(trigger.fault))
        return { httpStatus: 0, body: {}, created: [], touched: [], fault: trigger.fault };
      fault = trigger.fault;
    }
    const decline = trigger.kind === 'decline' ? trigger.reason : undefined;
    const tx = this.newTx(call, 'ap-sale', fields.currency, {
      status: decline ? 'FAILED' : 'PENDING',
      amounts: { requested: fields.amountMinor, authorized: 0, captured: 0, reversed: 0, refunded: 0 },
      altPayment: {
        profile: fields.profile.profile,
        methodName: fields.profile.methodName,
        paymentTypeName: fields.paymentTypeName,
        statusChecks: 0,
        statusChecksTooEarly: 0,
      },
    });
    const body: Record<string, unknown> = {
      _links: {
        self: link(`/pts/v2/payments/${tx.id}`, 'GET'),
        ...(decline ? {} : { status: link(`/pts/v2/refresh-payment-status/${tx.id}`, 'POST') }),
      },
      id: tx.id,
      submitTimeUtc: isoSeconds(now),
      status: tx.status,
      reconciliationId: tx.id.slice(-12),
      clientReferenceInformation: clientRef(tx),
      orderInformation: {
        amountDetails: {
          totalAmount: toDecimalString(fields.amountMinor, fields.currency),
          currency: fields.currency,
        },
      },
      ...(decline
        ? {
            errorInformation: { reason: decline, message: `The payment cannot be completed - ${decline}` },
            processorInformation: { responseCode: RESPONSE_CODES[decline] },
          }
        : {
            message: 'Request was processed successfully.',
            processorInformation: {
              transactionId: tx.id,
              responseCode: '00001',
              responseDetails: '00001',
              paymentUrl: this.pageUrl(tx.id),
            },
          }),
    };
    return this.commit(tx, 201, body, [], fault);
  }

  /** POST /pts/v2/refresh-payment-status/{id} of an alternative-method sale or refund. */
  status(call: ApiCall, id: string): ApiOutcome {
    const now = this.ctx.now();
    const tx = this.target(call, id);
    const alt = tx?.altPayment;
    if (!tx || !alt)
      throw this.fail('INVALID_PAYMENT_ID', 'no alternative-method payment with this id', 'id');
    const sale = tx.kind === 'ap-sale' ? tx : this.ctx.store.transactions.get(tx.parentId ?? '');
    if (!sale) throw this.fail('INVALID_PAYMENT_ID', 'the refund has no sale', 'id');
    validateAltStatus(new FieldReader(call.body, now), sale);
    const last = Date.parse(alt.lastStatusCheckAt ?? tx.createdAt);
    const nextAt = last + STATUS_CHECK_INTERVAL_MS;
    if (now.getTime() < nextAt) {
      alt.statusChecksTooEarly += 1;
      this.ctx.store.saveTx(tx);
      throw new GatewayAnswer(
        429,
        {
          submitTimeUtc: isoSeconds(now),
          status: 'TOO_MANY_REQUESTS',
          reason: 'TOO_MANY_REQUESTS',
          message: `status checks of ${tx.id} are allowed every 60 minutes (spec 001); next at ${isoSeconds(new Date(nextAt))}`,
        },
        'TOO_MANY_REQUESTS',
      );
    }
    alt.lastStatusCheckAt = now.toISOString();
    alt.statusChecks += 1;
    if (tx.kind === 'ap-sale') this.age(tx, now);
    this.ctx.store.saveTx(tx);
    const settled = tx.status === 'SETTLED' || tx.status === 'FUNDED';
    const body: Record<string, unknown> = {
      id: tx.id,
      submitTimeUtc: isoSeconds(now),
      status: tx.status,
      reconciliationId: tx.id.slice(-12),
      clientReferenceInformation: { code: sale.code ?? '' },
      ...(settled
        ? { processorInformation: { responseCode: '00004', responseDetails: '00004', token: `tok${tx.id}` } }
        : {}),
      ...(tx.status === 'REFUNDED'
        ? { processorInformation: { responseCode: '00006', responseDetails: '00006' } }
        : {}),
      ...(tx.status === 'FAILED'
        ? { errorInformation: { reason: 'PROCESSOR_DECLINED', message: 'rejected by the method' } }
        : {}),
    };
    return { httpStatus: 200, body, created: [], touched: [tx] };
  }

  /** POST /pts/v2/payments/{id}/refunds of an alternative-method sale (AP_REFUND). */
  refund(call: ApiCall, saleId: string): ApiOutcome {
    const now = this.ctx.now();
    const sale = this.target(call, saleId);
    if (sale?.kind !== 'ap-sale' || !sale.altPayment)
      throw this.fail('INVALID_PAYMENT_ID', 'no alternative-method sale with this id', 'id');
    const r = new FieldReader(call.body, now);
    const replay = this.duplicate(call, r.text('clientReferenceInformation.transactionId', false));
    if (replay) return replay;
    const { amountMinor } = validateAltRefund(r, sale);
    this.age(sale, now);
    // Spec 001: a refund of a sale that is not settled, or above what remains of it, is a FAILED refund (status
    // instead of an HTTP error); several partial refunds while their sum stays within the settled amount.
    let failure: { reason: string; message: string } | undefined;
    if (sale.status !== 'SETTLED' && sale.status !== 'FUNDED')
      failure = { reason: 'NOT_SUPPORTED', message: `a ${sale.status} sale cannot be refunded` };
    else {
      const rule = refundRule(sale.amounts.captured, sale.amounts.refunded, amountMinor);
      if (!rule.ok) failure = { reason: rule.reason, message: 'refunds may not exceed the settled amount' };
    }
    const decline = DECLINE_TRIGGERS[amountMinor % 100];
    if (!failure && decline) failure = { reason: decline, message: `rejected by the method - ${decline}` };
    const tx = this.newTx(call, 'refund', sale.currency, {
      parentId: sale.id,
      status: failure ? 'FAILED' : 'REFUNDED',
      amounts: {
        requested: amountMinor,
        authorized: 0,
        captured: 0,
        reversed: 0,
        refunded: failure ? 0 : amountMinor,
      },
      altPayment: { ...sale.altPayment, statusChecks: 0, statusChecksTooEarly: 0 },
    });
    delete tx.altPayment?.lastStatusCheckAt;
    delete tx.altPayment?.customer;
    delete tx.altPayment?.settledAt;
    if (!failure) sale.amounts.refunded += amountMinor;
    const body: Record<string, unknown> = {
      _links: {
        self: link(`/pts/v2/refunds/${tx.id}`, 'GET'),
        status: link(`/pts/v2/refresh-payment-status/${tx.id}`, 'POST'),
      },
      id: tx.id,
      submitTimeUtc: isoSeconds(now),
      status: tx.status,
      reconciliationId: tx.id.slice(-12),
      clientReferenceInformation: { ...clientRef(tx), returnReconciliationId: sale.id.slice(-12) },
      refundAmountDetails: {
        refundAmount: toDecimalString(failure ? 0 : amountMinor, sale.currency),
        currency: sale.currency,
      },
      processorInformation: {
        responseCode: failure ? '00002' : '00006',
        ...(failure ? {} : { responseDetails: '00006' }),
      },
      ...(failure ? { errorInformation: failure } : {}),
    };
    return this.commit(tx, 201, body, [sale]);
  }

  /** The sandbox's payment page of a sale: GET shows it, POST `action=pay|fail|cancel` completes it. */
  page(req: IncomingMessage, res: ServerResponse, id: string, body: Buffer): void {
    const tx = this.ctx.store.transactions.get(id);
    if (tx?.kind !== 'ap-sale' || !tx.altPayment)
      return sendHtml(res, 404, altPage('Payment not found', '<p id="message">No such payment.</p>'));
    const now = this.ctx.now();
    this.age(tx, now);
    if (req.method === 'POST') {
      const action = new URLSearchParams(body.toString('utf8')).get('action');
      if (action !== 'pay' && action !== 'fail' && action !== 'cancel')
        return sendHtml(
          res,
          400,
          altPage('Not valid', '<p id="message">action must be pay, fail or cancel</p>'),
        );
      if (tx.status !== 'PENDING')
        return sendHtml(
          res,
          409,
          altPage('Already done', `<p id="message">This payment is ${escapeHtml(tx.status)}.</p>`),
        );
      this.complete(tx, action, now);
      return sendHtml(res, 200, altPage('Done', `<p id="result">Payment ${escapeHtml(tx.status)}</p>`));
    }
    if (req.method !== 'GET') return sendHtml(res, 405, altPage('Method not allowed', '<p>GET or POST</p>'));
    const amount = `${toDecimalString(tx.amounts.requested, tx.currency)} ${tx.currency}`;
    const form =
      tx.status === 'PENDING'
        ? `<form method="post">
<button type="submit" name="action" value="pay" id="pay">Pay</button>
<button type="submit" name="action" value="fail" id="fail">Fail</button>
<button type="submit" name="action" value="cancel" id="cancel">Cancel</button>
</form>`
        : `<p id="result">Payment ${escapeHtml(tx.status)}</p>`;
    return sendHtml(
      res,
      200,
      altPage(
        tx.altPayment.methodName,
        `<p id="total">Total: <strong>${escapeHtml(amount)}</strong></p>${form}
<p class="note">Sandbox gateway: alternative-method test page.</p>`,
      ),
    );
  }

  /** What the page's buttons do (also what tests and `simulate` use through the page). */
  complete(tx: LedgerTransaction, action: PageAction, now: Date): void {
    const alt = tx.altPayment;
    if (!alt || tx.status !== 'PENDING') return;
    switch (action) {
      case 'pay':
        alt.customer = 'paid';
        alt.settledAt = now.toISOString();
        tx.status = 'SETTLED';
        tx.amounts.captured = tx.amounts.requested;
        break;
      case 'fail':
        alt.customer = 'failed';
        tx.status = 'FAILED';
        break;
      case 'cancel':
        alt.customer = 'cancelled';
        tx.status = 'ABANDONED';
        break;
    }
    this.ctx.store.saveTx(tx);
  }

  /** Time-driven transitions: abandoned when nobody finished at the page, funded a day after settling. */
  private age(tx: LedgerTransaction, now: Date): void {
    const alt = tx.altPayment;
    if (!alt) return;
    if (tx.status === 'PENDING' && now.getTime() - Date.parse(tx.createdAt) >= ABANDON_AFTER_MS) {
      tx.status = 'ABANDONED';
      this.ctx.store.saveTx(tx);
    } else if (
      tx.status === 'SETTLED' &&
      alt.settledAt !== undefined &&
      now.getTime() - Date.parse(alt.settledAt) >= FUNDED_AFTER_MS
    ) {
      tx.status = 'FUNDED';
      this.ctx.store.saveTx(tx);
    }
  }

  /** An identical repeated sale gets its first answer; a different one with the same transactionId is refused. */
  private repeatedSale(call: ApiCall, transactionId: string | undefined): ApiOutcome | undefined {
    if (transactionId === undefined) return undefined;
    const earlier = this.ctx.store
      .withTransactionId(call.merchantId, transactionId)
      .find((t) => t.kind === 'ap-sale');
    if (!earlier) return this.duplicate(call, transactionId);
    call.target = earlier;
    if (earlier.bodyFingerprint !== fingerprint(call.body))
      throw this.fail(
        'DUPLICATE_REQUEST',
        'clientReferenceInformation.transactionId was already used with a different request',
        'clientReferenceInformation.transactionId',
      );
    return this.replay(call, earlier);
  }
}

function altPage(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem}button{margin:1rem .5rem 0 0;padding:.6rem 1.2rem;font-size:1rem}.note{color:#555;font-size:.9rem}</style>
</head><body><h1>${escapeHtml(title)}</h1>
${body}
</body></html>`;
}
