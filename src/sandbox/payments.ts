/**
 * The payment services (spec 001; reference/gateway.md §2–4, §7): authorization, pre-authorization, sale,
 * zero-amount account verification, incremental authorization, reversal, capture, refunds, standalone credit, the
 * four voids, GET and status checks (timeout requests: timeout-requests.ts). Each service has its request's fields
 * checked by its validator (validators/), applies the money rules (money-rules.ts) and the state transition, and
 * commits every change to the store before the answer (answers.ts) is built.
 */
import { currencyByAlpha, parseDecimal } from '../money/index.js';
import {
  captureAnswer,
  clientRef,
  creditAnswer,
  incrementAnswer,
  linkPaymentAnswer,
  paymentAnswer,
  refundAnswer,
  reversalAnswer,
} from './answers.js';
import { isExpired } from './card.js';
import {
  approved,
  cardRecord,
  effectiveCaptured,
  emvRecord,
  followOnFault,
  holdsUnapproved,
  PaymentLedger,
  remainingHold,
} from './payment-ledger.js';
import { dccTermsOf, recordDccAuthorization } from './dcc.js';
import { GatewayAnswer } from './errors.js';
import { FieldReader, isoSeconds, valueAt } from './fields.js';
import { newId } from './ids.js';
import { captureRule, refundRule, reversalRule } from './money-rules.js';
import type { ApiCall, ApiOutcome } from './service-types.js';
import type { LedgerTransaction, TxKind } from './store.js';
import {
  amountTrigger,
  decliningCard,
  faultBeforeCommit,
  type DeclineReason,
  type FaultKind,
  type TriggerOutcome,
} from './triggers.js';
import { validatePayment } from './validators/authorization.js';
import { validateCapture } from './validators/capture.js';
import { validateCredit } from './validators/credit.js';
import { validateIncrement } from './validators/incremental.js';
import { validateRefund } from './validators/refund.js';
import { validateReversal } from './validators/reversal.js';
import { validateVoid, VOID_TARGETS, type VoidCollection } from './validators/void.js';

export type { ApiCall, ApiOutcome, ServiceContext } from './service-types.js';
export { remainingHold } from './payment-ledger.js';

/** Refunds are accepted within 180 days of the authorization (reference/gateway.md §7). */
const REFUND_WINDOW_MS = 180 * 24 * 3600 * 1000;
/** A lodging guide caps increments at 100 per authorization (reference/gateway.md §7). */
const MAX_INCREMENTS = 100;

/** The payment services over one store. */
export class PaymentService extends PaymentLedger {
  /** POST /pts/v2/payments: authorization, pre-authorization, sale, account verification (card present or not). */
  createPayment(call: ApiCall): ApiOutcome {
    const now = this.ctx.now();
    const r = new FieldReader(call.body, now);
    const replay = this.duplicate(call, r.text('clientReferenceInformation.transactionId', false));
    if (replay) return replay;
    const {
      service,
      currency,
      totalMinor: total,
      cardPresent,
      pan,
      expiry,
      cardType,
      entryMode,
      emv,
      dcc,
    } = validatePayment(r, call, now, (reader) =>
      this.ctx.checkDccAuthorization(reader, call.merchantId, now),
    );
    let decline: DeclineReason | undefined = pan !== undefined ? decliningCard(pan) : undefined;
    if (!decline && expiry !== undefined && isExpired(expiry, now)) decline = 'EXPIRED_CARD';
    // Amount triggers apply to card-present requests (the terminal's); card-not-present SDK samples such as
    // 102.21 USD must run unchanged, so only the declining test cards act on them.
    // A converted (DCC family A) authorization triggers on the merchant's original amount, which the tester chose.
    const original = valueAt(call.body, 'orderInformation.amountDetails.originalAmount');
    const originalCurrency = valueAt(call.body, 'orderInformation.amountDetails.originalCurrency');
    let triggerAmount = total;
    if (
      typeof original === 'string' &&
      typeof originalCurrency === 'string' &&
      currencyByAlpha(originalCurrency)
    ) {
      try {
        triggerAmount = parseDecimal(original, originalCurrency);
      } catch {
        triggerAmount = total;
      }
    }
    const trigger: TriggerOutcome = cardPresent
      ? amountTrigger(triggerAmount, {
          canDecline: true,
          canBePartial: service !== 'verification',
          canRiskDecline: service !== 'verification',
        })
      : { kind: 'approve' };
    let fault: FaultKind | undefined;
    let authorized = total;
    let riskDeclined = false;
    let inReview = false;
    if (!decline) {
      switch (trigger.kind) {
        case 'approve':
          break;
        case 'risk-decline':
          riskDeclined = true;
          break;
        case 'review':
          inReview = true;
          break;
        case 'decline':
          decline = trigger.reason;
          break;
        case 'partial':
          authorized = trigger.authorizedMinor;
          break;
        case 'fault':
          if (faultBeforeCommit(trigger.fault))
            return { httpStatus: 0, body: {}, created: [], touched: [], fault: trigger.fault };
          fault = trigger.fault;
          break;
      }
    }
    const kind: TxKind = service;
    const status = decline
      ? 'DECLINED'
      : riskDeclined
        ? 'AUTHORIZED_RISK_DECLINED'
        : inReview
          ? 'PENDING_REVIEW'
          : authorized < total
            ? 'PARTIAL_AUTHORIZED'
            : 'AUTHORIZED';
    const tx = this.newTx(call, kind, currency, {
      status,
      amounts: {
        requested: total,
        authorized: decline ? 0 : authorized,
        // A risk decline or a review holds the issuer's approval and captures nothing, a sale's included.
        captured: !decline && !riskDeclined && !inReview && service === 'sale' ? authorized : 0,
        reversed: 0,
        refunded: 0,
      },
      card: cardRecord(pan, cardType, entryMode),
      emv: emvRecord(emv !== undefined, entryMode),
    });
    const body = paymentAnswer(tx, service, decline, cardType, emv !== undefined, now);
    // Spec 001: a capture or refund of a converted payment repeats its terms; remember which offer it used.
    if (dcc !== undefined && !decline) recordDccAuthorization(this.ctx.store, dcc, tx.id);
    return this.commit(tx, 201, body, [], fault);
  }

  /** PATCH /pts/v2/payments/{id}: incremental authorization (gateway.md §7; additionalAmount or new totalAmount). */
  increment(call: ApiCall, id: string): ApiOutcome {
    const now = this.ctx.now();
    const auth = this.target(call, id);
    if (!auth || (auth.kind !== 'authorization' && auth.kind !== 'verification'))
      throw this.fail('INVALID_PAYMENT_ID', 'no authorization with this id', 'id');
    if (auth.status === 'REVERSED')
      throw this.fail('AUTH_ALREADY_REVERSED', 'the authorization is reversed', 'id');
    if (!approved(auth)) throw this.fail('INVALID_PAYMENT_ID', 'the authorization was not approved', 'id');
    if (auth.status === 'REVERSED' || (auth.amounts.reversed > 0 && auth.amounts.captured === 0))
      throw this.fail('AUTH_ALREADY_REVERSED', 'the authorization is reversed', 'id');
    if (auth.amounts.captured > 0)
      throw this.fail('TRANSACTION_ALREADY_SETTLED', 'the authorization is captured', 'id');
    const { addMinor: add } = validateIncrement(
      new FieldReader(call.body, now),
      auth,
      dccTermsOf(this.ctx.store, call.merchantId, auth.id),
    );
    if ((auth.increments ?? 0) >= MAX_INCREMENTS)
      throw this.fail('NOT_SUPPORTED', `at most ${MAX_INCREMENTS} increments per authorization`);
    const trigger: TriggerOutcome =
      auth.card?.entryMode !== undefined
        ? amountTrigger(add, { canDecline: true, canBePartial: false })
        : { kind: 'approve' };
    let fault: FaultKind | undefined;
    let decline: DeclineReason | undefined;
    switch (trigger.kind) {
      case 'approve':
      case 'partial':
      case 'risk-decline':
      case 'review':
        break;
      case 'decline':
        decline = trigger.reason;
        break;
      case 'fault':
        if (faultBeforeCommit(trigger.fault))
          return { httpStatus: 0, body: {}, created: [], touched: [auth], fault: trigger.fault };
        fault = trigger.fault;
        break;
    }
    const tx = this.newTx(call, 'incremental', auth.currency, {
      parentId: auth.id,
      status: decline ? 'DECLINED' : 'AUTHORIZED',
      amounts: { requested: add, authorized: decline ? 0 : add, captured: 0, reversed: 0, refunded: 0 },
    });
    if (!decline) {
      auth.amounts.authorized += add;
      auth.increments = (auth.increments ?? 0) + 1;
    }
    const answerId = this.ctx.incrementalAnswerId === 'original' ? auth.id : tx.id;
    const body = incrementAnswer(tx, auth, answerId, decline, now);
    return this.commit(tx, 201, body, [auth], fault);
  }

  /** POST /pts/v2/payments/{id}/captures (spec 001 capture rules; gateway.md §7). */
  capture(call: ApiCall, id: string): ApiOutcome {
    const now = this.ctx.now();
    const auth = this.target(call, id);
    if (!auth || auth.kind !== 'authorization')
      throw this.fail('INVALID_PAYMENT_ID', 'no authorization with this id', 'id');
    if (auth.status === 'REVERSED')
      throw this.fail('AUTH_ALREADY_REVERSED', 'the authorization is reversed', 'id');
    if (!approved(auth)) throw this.fail('INVALID_PAYMENT_ID', 'the authorization was not approved', 'id');
    const r = new FieldReader(call.body, now);
    const replay = this.duplicate(
      call,
      r.text('clientReferenceInformation.transactionId', auth.card?.entryMode !== undefined),
    );
    if (replay) return replay;
    call.target = auth;
    const dcc = dccTermsOf(this.ctx.store, call.merchantId, auth.id);
    const { amountMinor: amount } = validateCapture(r, call, auth, dcc, now);
    const remaining = remainingHold(auth);
    const parking = auth.card?.entryMode !== undefined;
    const rule = captureRule(remaining, amount);
    if (!rule.ok) throw this.refuse(rule);
    const fault = followOnFault(parking, amount);
    if (fault !== undefined && faultBeforeCommit(fault))
      return { httpStatus: 0, body: {}, created: [], touched: [auth], fault };
    const partialReversal = rule.partialReversal;
    const tx = this.newTx(call, 'capture', auth.currency, {
      parentId: auth.id,
      status: 'PENDING',
      amounts: { requested: amount, authorized: 0, captured: amount, reversed: 0, refunded: 0 },
      ...(auth.card ? { card: auth.card } : {}),
    });
    auth.amounts.captured += amount;
    // Spec 001: a capture below the authorization makes the host reverse the rest automatically.
    auth.amounts.reversed += partialReversal;
    const body = captureAnswer(tx, partialReversal, now);
    return this.commit(tx, 201, body, [auth], fault);
  }

  /** POST /pts/v2/payments/{id}/reversals: amount must equal the authorized amount (spec 001, Reversal). */
  reverse(call: ApiCall, id: string): ApiOutcome {
    const now = this.ctx.now();
    const auth = this.target(call, id);
    if (!auth) throw this.fail('MISSING_AUTH', 'no authorization with this id', 'id');
    // A risk-declined sale, or one in review, captured nothing: its authorization is reversed like any other.
    const riskDeclinedSale = auth.kind === 'sale' && holdsUnapproved(auth);
    if (auth.kind === 'sale' && !riskDeclinedSale && auth.status !== 'REVERSED')
      throw this.fail('TRANSACTION_ALREADY_SETTLED', 'a sale is voided or refunded, not reversed', 'id');
    if (auth.kind !== 'authorization' && auth.kind !== 'verification' && auth.kind !== 'sale')
      throw this.fail('MISSING_AUTH', 'not an authorization', 'id');
    if (auth.status === 'REVERSED')
      throw this.fail('AUTH_ALREADY_REVERSED', 'the authorization is already reversed', 'id');
    if (!approved(auth) && !holdsUnapproved(auth))
      throw this.fail('MISSING_AUTH', 'the authorization was not approved', 'id');
    const { requestedMinor: requested } = validateReversal(new FieldReader(call.body, now), call, auth, () =>
      dccTermsOf(this.ctx.store, call.merchantId, auth.id),
    );
    const rule = reversalRule(auth.amounts, requested);
    if (!rule.ok) throw this.refuse(rule);
    const { amount, released } = rule;
    const tx = this.newTx(call, 'reversal', auth.currency, {
      parentId: auth.id,
      status: 'REVERSED',
      amounts: { requested: amount, authorized: 0, captured: 0, reversed: released, refunded: 0 },
    });
    auth.amounts.reversed += released;
    auth.status = 'REVERSED';
    return this.commit(tx, 201, reversalAnswer(tx, now, amount), [auth]);
  }

  /** POST /pts/v2/{payments|captures|refunds|credits}/{id}/voids. */
  voidOne(call: ApiCall, collection: VoidCollection, id: string): ApiOutcome {
    const now = this.ctx.now();
    const want = VOID_TARGETS[collection];
    const target = this.target(call, id);
    if (!target) throw this.fail('INVALID_PAYMENT_ID', 'no transaction with this id', 'id');
    validateVoid(new FieldReader(call.body, now), collection, target);
    if (target.kind !== want.kind)
      throw this.fail('NOT_VOIDABLE', `only a ${want.kind} can be voided at this path`, 'id');
    return this.applyVoid(call, target, 'void', now);
  }

  /** POST /pts/v2/captures/{id}/refunds and /pts/v2/payments/{id}/refunds (sum of refunds ≤ captured). */
  refund(call: ApiCall, collection: 'captures' | 'payments', id: string): ApiOutcome {
    const now = this.ctx.now();
    const target = this.target(call, id);
    const wantKind: TxKind = collection === 'captures' ? 'capture' : 'sale';
    if (!target || target.kind !== wantKind)
      throw this.fail('INVALID_PAYMENT_ID', `no ${wantKind} with this id`, 'id');
    const r = new FieldReader(call.body, now);
    const parking = target.card?.entryMode !== undefined;
    const replay = this.duplicate(call, r.text('clientReferenceInformation.transactionId', parking));
    if (replay) return replay;
    call.target = target;
    // A refund of a capture follows the capture's authorization; a refund of a sale, the sale itself.
    const authorizationId = collection === 'captures' ? target.parentId : target.id;
    const dcc =
      authorizationId !== undefined
        ? dccTermsOf(this.ctx.store, call.merchantId, authorizationId)
        : undefined;
    const { amountMinor: amount } = validateRefund(r, call, collection, target, dcc, now);
    if (target.voided) throw this.fail('CAPTURE_ALREADY_VOIDED', 'the original is voided', 'id');
    if (!approved(target)) throw this.fail('INVALID_PAYMENT_ID', 'the original was not approved', 'id');
    if (now.getTime() - Date.parse(target.createdAt) > REFUND_WINDOW_MS)
      throw this.fail('NOT_SUPPORTED', 'refunds are accepted within 180 days', 'id');
    const rule = refundRule(effectiveCaptured(target), target.amounts.refunded, amount);
    if (!rule.ok) throw this.refuse(rule);
    const fault = followOnFault(parking, amount);
    if (fault !== undefined && faultBeforeCommit(fault))
      return { httpStatus: 0, body: {}, created: [], touched: [target], fault };
    const tx = this.newTx(call, 'refund', target.currency, {
      parentId: target.id,
      status: 'PENDING',
      amounts: { requested: amount, authorized: 0, captured: 0, reversed: 0, refunded: amount },
      ...(target.card ? { card: target.card } : {}),
    });
    target.amounts.refunded += amount;
    const body = refundAnswer(tx, now);
    return this.commit(tx, 201, body, [target], fault);
  }

  /** POST /pts/v2/credits: standalone credit (gateway.md §7; comments `Parking Standalone Credit`). */
  credit(call: ApiCall): ApiOutcome {
    const now = this.ctx.now();
    const r = new FieldReader(call.body, now);
    const replay = this.duplicate(call, r.text('clientReferenceInformation.transactionId', true));
    if (replay) return replay;
    const { currency, amountMinor: amount, read } = validateCredit(r, call, now);
    let decline: DeclineReason | undefined = read.pan !== undefined ? decliningCard(read.pan) : undefined;
    const trigger = amountTrigger(amount, { canDecline: true, canBePartial: false });
    let fault: FaultKind | undefined;
    if (!decline && trigger.kind === 'decline') decline = trigger.reason;
    if (trigger.kind === 'fault') {
      if (faultBeforeCommit(trigger.fault))
        return { httpStatus: 0, body: {}, created: [], touched: [], fault: trigger.fault };
      fault = trigger.fault;
    }
    const tx = this.newTx(call, 'credit', currency, {
      status: decline ? 'DECLINED' : 'PENDING',
      amounts: { requested: amount, authorized: 0, captured: 0, reversed: 0, refunded: decline ? 0 : amount },
      card: cardRecord(read.pan, read.cardType, read.entryMode),
      emv: emvRecord(read.emv !== undefined, read.entryMode),
    });
    const body = creditAnswer(tx, amount, decline, now);
    return this.commit(tx, 201, body, [], fault);
  }

  /** A payment made on the hosted page of a payment link: a sale recorded in the ledger. */
  linkPayment(
    merchantId: string,
    linkId: string,
    amount: number,
    currency: string,
    maskedPan: string,
    cardType: string,
    decline: DeclineReason | undefined,
  ): LedgerTransaction {
    const now = this.ctx.now();
    const tx: LedgerTransaction = {
      id: newId(now),
      kind: 'link-payment',
      merchantId,
      code: linkId,
      status: decline ? 'DECLINED' : 'AUTHORIZED',
      currency,
      amounts: {
        requested: amount,
        authorized: decline ? 0 : amount,
        captured: decline ? 0 : amount,
        reversed: 0,
        refunded: 0,
      },
      card: { masked: maskedPan, type: cardType, entryMode: 'keyed' },
      voided: false,
      createdAt: now.toISOString(),
      outcomeUnknown: false,
      answer: { httpStatus: 201, body: { id: '', status: decline ? 'DECLINED' : 'AUTHORIZED' } },
      requests: [],
    };
    tx.answer.body = linkPaymentAnswer(tx, linkId, decline, now);
    this.ctx.store.saveTx(tx);
    return tx;
  }

  /** GET /pts/v2/{collection}/{id}: the stored answer with the current status. */
  get(call: ApiCall, collection: string, id: string): ApiOutcome {
    const kindsByCollection: Record<string, readonly TxKind[]> = {
      payments: ['authorization', 'sale', 'verification', 'incremental', 'link-payment'],
      captures: ['capture'],
      reversals: ['reversal', 'timeout-reversal'],
      refunds: ['refund'],
      credits: ['credit'],
      voids: ['void', 'timeout-void'],
    };
    const tx = this.target(call, id);
    if (!tx || !(kindsByCollection[collection] ?? []).includes(tx.kind))
      throw new GatewayAnswer(
        404,
        {
          submitTimeUtc: isoSeconds(this.ctx.now()),
          status: 'NOT_FOUND',
          reason: 'NOT_FOUND',
          message: 'no such resource',
        },
        'NOT_FOUND',
      );
    return { httpStatus: 200, body: { ...tx.answer.body, status: tx.status }, created: [], touched: [tx] };
  }

  /** POST /pts/v2/refresh-payment-status/{id}. */
  refreshStatus(call: ApiCall, id: string): ApiOutcome {
    const tx = this.target(call, id);
    if (!tx) throw this.fail('INVALID_PAYMENT_ID', 'no payment with this id', 'id');
    return {
      httpStatus: 200,
      body: {
        id: tx.id,
        status: tx.status,
        clientReferenceInformation: clientRef(tx),
        submitTimeUtc: isoSeconds(this.ctx.now()),
      },
      created: [],
      touched: [tx],
    };
  }
}
