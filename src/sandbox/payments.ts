/**
 * The payment services (spec 001; reference/gateway.md §2–4, §7): authorization, pre-authorization, sale,
 * zero-amount account verification, incremental authorization, reversal, timeout reversal, capture, refunds,
 * standalone credit, the four voids, timeout void, GET and status checks. Every money rule is enforced here and
 * every change is committed to the store before the answer is built.
 */
import { currencyByAlpha, parseDecimal, toDecimalString } from '../money/index.js';
import { maskPan } from '../emv/index.js';
import {
  captureAnswer,
  clientRef,
  creditAnswer,
  incrementAnswer,
  linkPaymentAnswer,
  paymentAnswer,
  refundAnswer,
  reversalAnswer,
  voidAnswer,
  voidOfNothingAnswer,
} from './answers.js';
import { isExpired } from './card.js';
import { dccTermsOf, recordDccAuthorization } from './dcc.js';
import { GatewayAnswer } from './errors.js';
import { FieldReader, invalidRequest, isoSeconds, valueAt } from './fields.js';
import { fingerprint, newId } from './ids.js';
import { captureRule, heldAmount, refundRule, reversalRule, type MoneyRefusal } from './money-rules.js';
import type { ApiCall, ApiOutcome, ServiceContext } from './service-types.js';
import type { LedgerTransaction, TxKind } from './store.js';
import {
  amountTrigger,
  DECLINING_CARDS,
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
import { validateReversal, validateTimeoutReversal } from './validators/reversal.js';
import { validateTimeoutVoid, validateVoid, VOID_TARGETS, type VoidCollection } from './validators/void.js';

export type { ApiCall, ApiOutcome, ServiceContext } from './service-types.js';

const ORIGINAL_KINDS: ReadonlySet<TxKind> = new Set([
  'authorization',
  'sale',
  'verification',
  'capture',
  'refund',
  'credit',
]);
const MONEY_OUT_KINDS: ReadonlySet<TxKind> = new Set(['capture', 'sale', 'refund', 'credit']);
/** Refunds are accepted within 180 days of the authorization (reference/gateway.md §7). */
const REFUND_WINDOW_MS = 180 * 24 * 3600 * 1000;
/** A lodging guide caps increments at 100 per authorization (reference/gateway.md §7). */
const MAX_INCREMENTS = 100;

function approved(tx: LedgerTransaction): boolean {
  return tx.status === 'AUTHORIZED' || tx.status === 'PARTIAL_AUTHORIZED' || tx.status === 'PENDING';
}

/**
 * The fault an amount trigger selects for a follow-on that cannot decline or be partial (capture, refund): only
 * parking (card-present) requests react to triggers.
 */
function followOnFault(parking: boolean, amount: number): FaultKind | undefined {
  if (!parking) return undefined;
  const trigger = amountTrigger(amount, { canDecline: false, canBePartial: false });
  return trigger.kind === 'fault' ? trigger.fault : undefined;
}

/** Effective captured amount: a voided capture or sale has moved nothing. */
function effectiveCaptured(tx: LedgerTransaction): number {
  return tx.voided ? 0 : tx.amounts.captured;
}

/** Amount still held on an authorization. */
export function remainingHold(auth: LedgerTransaction): number {
  return heldAmount(auth.amounts);
}

/** The payment services over one store. */
export class PaymentService {
  constructor(private readonly ctx: ServiceContext) {}

  private fail(
    reason: string,
    message: string,
    field?: string,
    kind: 'MISSING_FIELD' | 'INVALID_DATA' = 'INVALID_DATA',
  ): GatewayAnswer {
    return invalidRequest(this.ctx.now(), reason, message, field ? [{ field, reason: kind }] : []);
  }

  /** The 400 answer of a money rule's refusal (money-rules.ts). */
  private refuse(refusal: MoneyRefusal): GatewayAnswer {
    return this.fail(refusal.reason, refusal.message, refusal.field);
  }

  private target(call: ApiCall, id: string): LedgerTransaction | undefined {
    const tx = this.ctx.store.transactions.get(id);
    if (!tx || tx.merchantId !== call.merchantId) return undefined;
    call.target = tx;
    return tx;
  }

  /** Finds an earlier original with the same transactionId: replays an identical request, refuses a different one. */
  private duplicate(call: ApiCall, transactionId: string | undefined): ApiOutcome | undefined {
    if (transactionId === undefined) return undefined;
    for (const tx of this.ctx.store.withTransactionId(call.merchantId, transactionId)) {
      if (!ORIGINAL_KINDS.has(tx.kind)) continue;
      call.target = tx;
      if (tx.bodyFingerprint === fingerprint(call.body))
        return {
          httpStatus: tx.answer.httpStatus,
          body: tx.answer.body,
          created: [],
          touched: [tx],
          replayOf: tx,
        };
      throw this.fail(
        'DUPLICATE_REQUEST',
        'clientReferenceInformation.transactionId was already used with a different request',
        'clientReferenceInformation.transactionId',
      );
    }
    return undefined;
  }

  private newTx(
    call: ApiCall,
    kind: TxKind,
    currency: string,
    fields: Partial<LedgerTransaction>,
  ): LedgerTransaction {
    const now = this.ctx.now();
    const code = valueAt(call.body, 'clientReferenceInformation.code');
    const comments = valueAt(call.body, 'clientReferenceInformation.comments');
    const transactionId = valueAt(call.body, 'clientReferenceInformation.transactionId');
    return {
      id: newId(),
      kind,
      merchantId: call.merchantId,
      ...(typeof transactionId === 'string' ? { transactionId } : {}),
      ...(typeof code === 'string' ? { code } : {}),
      ...(typeof comments === 'string' ? { comments } : {}),
      status: 'PENDING',
      currency,
      amounts: { requested: 0, authorized: 0, captured: 0, reversed: 0, refunded: 0 },
      voided: false,
      createdAt: now.toISOString(),
      outcomeUnknown: false,
      answer: { httpStatus: 201, body: {} },
      bodyFingerprint: fingerprint(call.body),
      requests: [],
      ...fields,
    };
  }

  /** Stores a transaction with its answer and returns the outcome. */
  private commit(
    tx: LedgerTransaction,
    httpStatus: number,
    body: Record<string, unknown>,
    touched: LedgerTransaction[],
    fault?: FaultKind,
  ): ApiOutcome {
    tx.answer = { httpStatus, body };
    this.ctx.store.saveTx(tx);
    for (const t of touched) this.ctx.store.saveTx(t);
    return { httpStatus, body, created: [tx], touched, ...(fault ? { fault } : {}) };
  }

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
    let decline: DeclineReason | undefined = pan !== undefined ? DECLINING_CARDS[pan] : undefined;
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
      ? amountTrigger(triggerAmount, { canDecline: true, canBePartial: service !== 'verification' })
      : { kind: 'approve' };
    let fault: FaultKind | undefined;
    let authorized = total;
    if (!decline) {
      switch (trigger.kind) {
        case 'approve':
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
    const status = decline ? 'DECLINED' : authorized < total ? 'PARTIAL_AUTHORIZED' : 'AUTHORIZED';
    const tx = this.newTx(call, kind, currency, {
      status,
      amounts: {
        requested: total,
        authorized: decline ? 0 : authorized,
        captured: !decline && service === 'sale' ? authorized : 0,
        reversed: 0,
        refunded: 0,
      },
      card: {
        ...(pan !== undefined ? { masked: maskPan(pan) } : {}),
        ...(cardType !== undefined ? { type: cardType } : {}),
        ...(entryMode !== undefined ? { entryMode } : {}),
      },
      emv: { present: emv !== undefined, contact: emv !== undefined && entryMode === 'contact' },
    });
    const body = paymentAnswer(
      tx,
      service,
      decline,
      { ...(cardType !== undefined ? { cardType } : {}), ...(emv !== undefined ? { emv } : {}) },
      now,
    );
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
    const { addMinor: add } = validateIncrement(new FieldReader(call.body, now), auth);
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
    if (auth.kind === 'sale')
      throw this.fail('TRANSACTION_ALREADY_SETTLED', 'a sale is voided or refunded, not reversed', 'id');
    if (auth.kind !== 'authorization' && auth.kind !== 'verification')
      throw this.fail('MISSING_AUTH', 'not an authorization', 'id');
    if (auth.status === 'REVERSED')
      throw this.fail('AUTH_ALREADY_REVERSED', 'the authorization is already reversed', 'id');
    if (!approved(auth)) throw this.fail('MISSING_AUTH', 'the authorization was not approved', 'id');
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

  /**
   * A timeout reversal keyed by the transactionId of an incremental authorization: takes back that increment only
   * (the authorization keeps what was authorized before it), for the amount the increment requested.
   */
  private timeoutReversalOfIncrement(
    call: ApiCall,
    increment: LedgerTransaction,
    r: { currency: string; amount: number; now: Date },
  ): ApiOutcome {
    call.target = increment;
    const auth =
      increment.parentId !== undefined ? this.ctx.store.transactions.get(increment.parentId) : undefined;
    if (r.currency !== increment.currency || r.amount !== increment.amounts.requested)
      throw this.fail(
        'INVALID_AMOUNT',
        'a timeout reversal carries the amount that was requested',
        'reversalInformation.amountDetails.totalAmount',
      );
    if (auth && auth.amounts.captured > 0)
      throw this.fail(
        'TRANSACTION_ALREADY_SETTLED',
        'the authorization is captured',
        'clientReferenceInformation.transactionId',
      );
    const released =
      auth && approved(increment) ? Math.min(increment.amounts.authorized, remainingHold(auth)) : 0;
    const tx = this.newTx(call, 'timeout-reversal', r.currency, {
      parentId: increment.id,
      status: 'REVERSED',
      originalFound: true,
      amounts: { requested: r.amount, authorized: 0, captured: 0, reversed: released, refunded: 0 },
      delayAfterOriginalMs: r.now.getTime() - Date.parse(increment.createdAt),
    });
    const touched: LedgerTransaction[] = [increment];
    if (released > 0 && auth) {
      // The increment never happened for the card: the authorization is back to its total before it.
      auth.amounts.authorized -= released;
      increment.amounts.reversed += released;
      increment.status = 'REVERSED';
      touched.push(auth);
    }
    return this.commit(tx, 201, reversalAnswer(tx, r.now, released), touched);
  }

  /** POST /pts/v2/reversals: timeout reversal by the original's transactionId; found or not; idempotent. */
  timeoutReversal(call: ApiCall): ApiOutcome {
    const now = this.ctx.now();
    const {
      transactionId,
      currency,
      amountMinor: amount,
      comments,
    } = validateTimeoutReversal(new FieldReader(call.body, now), now);
    const txs = this.ctx.store.withTransactionId(call.merchantId, transactionId);
    const earlier = txs.find((t) => t.kind === 'timeout-reversal');
    if (earlier) {
      call.target = earlier;
      return {
        httpStatus: earlier.answer.httpStatus,
        body: earlier.answer.body,
        created: [],
        touched: [earlier],
        replayOf: earlier,
      };
    }
    const increment = txs.find((t) => t.kind === 'incremental');
    if (increment && !txs.some((t) => ORIGINAL_KINDS.has(t.kind)))
      return this.timeoutReversalOfIncrement(call, increment, { currency, amount, now });
    const original = txs.find((t) => ORIGINAL_KINDS.has(t.kind));
    if (original) {
      call.target = original;
      if (original.kind !== 'authorization' && original.kind !== 'verification')
        throw this.fail(
          'TRANSACTION_ALREADY_SETTLED',
          'timeout reversal is for authorizations; use a timeout void',
          'clientReferenceInformation.transactionId',
        );
      if (original.card?.entryMode !== undefined && comments === undefined)
        throw this.fail(
          'MISSING_FIELD',
          'clientReferenceInformation.comments is required',
          'clientReferenceInformation.comments',
          'MISSING_FIELD',
        );
      if (original.amounts.captured > 0)
        throw this.fail(
          'TRANSACTION_ALREADY_SETTLED',
          'the authorization is captured',
          'clientReferenceInformation.transactionId',
        );
      if (currency !== original.currency || amount !== original.amounts.requested)
        throw this.fail(
          'INVALID_AMOUNT',
          'a timeout reversal carries the amount that was requested',
          'reversalInformation.amountDetails.totalAmount',
        );
    }
    const released = original && approved(original) ? remainingHold(original) : 0;
    const tx = this.newTx(call, 'timeout-reversal', currency, {
      ...(original ? { parentId: original.id } : {}),
      status: 'REVERSED',
      originalFound: original !== undefined,
      amounts: { requested: amount, authorized: 0, captured: 0, reversed: released, refunded: 0 },
      ...(original ? { delayAfterOriginalMs: now.getTime() - Date.parse(original.createdAt) } : {}),
    });
    const touched: LedgerTransaction[] = [];
    if (original) {
      if (approved(original)) {
        original.amounts.reversed += released;
        original.status = 'REVERSED';
      }
      touched.push(original);
    }
    // gateway.md §7: when the original never reached the gateway the answer carries originalTransactionAmount.
    const body = reversalAnswer(
      tx,
      now,
      released,
      original ? {} : { originalTransactionAmount: toDecimalString(amount, currency) },
    );
    return this.commit(tx, 201, body, touched);
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

  private applyVoid(
    call: ApiCall,
    target: LedgerTransaction,
    kind: 'void' | 'timeout-void',
    now: Date,
  ): ApiOutcome {
    if (target.voided) throw this.fail('NOT_VOIDABLE', 'already voided', 'id');
    if (!approved(target) && target.status !== 'PENDING')
      throw this.fail('NOT_VOIDABLE', `a ${target.status} transaction cannot be voided`, 'id');
    if (!this.ctx.voidable(new Date(target.createdAt)))
      throw this.fail('NOT_VOIDABLE', 'the settlement cut-off has passed; refund instead', 'id');
    if ((target.kind === 'capture' || target.kind === 'sale') && target.amounts.refunded > 0)
      throw this.fail('NOT_VOIDABLE', 'refunds exist; void them first', 'id');
    const touched: LedgerTransaction[] = [target];
    const amount =
      target.kind === 'capture' || target.kind === 'sale'
        ? target.amounts.captured
        : target.amounts.requested;
    target.voided = true;
    target.status = 'VOIDED';
    const parent =
      target.parentId !== undefined ? this.ctx.store.transactions.get(target.parentId) : undefined;
    if (parent && target.kind === 'capture') {
      // gateway.md §7: voiding a capture leaves the authorization hold in place.
      parent.amounts.captured -= amount;
      touched.push(parent);
    } else if (parent && target.kind === 'refund') {
      parent.amounts.refunded -= amount;
      touched.push(parent);
    }
    const tx = this.newTx(call, kind, target.currency, {
      parentId: target.id,
      status: 'VOIDED',
      amounts: { requested: amount, authorized: 0, captured: 0, reversed: 0, refunded: 0 },
      ...(kind === 'timeout-void' ? { originalFound: true } : {}),
    });
    return this.commit(tx, 201, voidAnswer(tx, now, amount), touched);
  }

  /** POST /pts/v2/voids: timeout void by the original's transactionId; found or not; idempotent. */
  timeoutVoid(call: ApiCall): ApiOutcome {
    const now = this.ctx.now();
    const { transactionId, comments } = validateTimeoutVoid(new FieldReader(call.body, now), now);
    const txs = this.ctx.store.withTransactionId(call.merchantId, transactionId);
    const earlier = txs.find((t) => t.kind === 'timeout-void');
    if (earlier) {
      call.target = earlier;
      return {
        httpStatus: earlier.answer.httpStatus,
        body: earlier.answer.body,
        created: [],
        touched: [earlier],
        replayOf: earlier,
      };
    }
    const original = txs.find((t) => ORIGINAL_KINDS.has(t.kind));
    if (original) {
      call.target = original;
      if (!MONEY_OUT_KINDS.has(original.kind))
        throw this.fail(
          'NOT_VOIDABLE',
          'an authorization is reversed (timeout reversal), not voided',
          'clientReferenceInformation.transactionId',
        );
      if (original.card?.entryMode !== undefined && comments === undefined)
        throw this.fail(
          'MISSING_FIELD',
          'clientReferenceInformation.comments is required',
          'clientReferenceInformation.comments',
          'MISSING_FIELD',
        );
      if (original.status === 'DECLINED' || original.voided) {
        const tx = this.newTx(call, 'timeout-void', original.currency, {
          parentId: original.id,
          status: 'VOIDED',
          originalFound: true,
        });
        return this.commit(tx, 201, voidAnswer(tx, now, 0), [original]);
      }
      return this.applyVoid(call, original, 'timeout-void', now);
    }
    // Nothing reached the gateway under this transactionId: nothing to void, still a success for the terminal.
    // ISO 4217 "XXX" (no currency) marks the ledger entry; the answer carries no amount.
    const tx = this.newTx(call, 'timeout-void', 'XXX', { status: 'VOIDED', originalFound: false });
    const body = voidOfNothingAnswer(tx, now);
    return this.commit(tx, 201, body, []);
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
    let decline: DeclineReason | undefined = read.pan !== undefined ? DECLINING_CARDS[read.pan] : undefined;
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
      card: {
        ...(read.pan !== undefined ? { masked: maskPan(read.pan) } : {}),
        ...(read.cardType !== undefined ? { type: read.cardType } : {}),
        ...(read.entryMode !== undefined ? { entryMode: read.entryMode } : {}),
      },
      emv: {
        present: read.emv !== undefined,
        contact: read.emv !== undefined && read.entryMode === 'contact',
      },
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
      id: newId(),
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
