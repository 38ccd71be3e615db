/**
 * What every payment service does to the ledger (spec 001; reference/gateway.md §7): finds the transaction a path
 * names, replays an identical repeated request, creates and commits transactions with their answers, voids.
 */
import { maskPan } from '../emv/index.js';
import type { GatewayAnswer } from './errors.js';
import { invalidRequest, valueAt } from './fields.js';
import { voidAnswer } from './answers.js';
import { fingerprint, newId } from './ids.js';
import { heldAmount, type MoneyRefusal } from './money-rules.js';
import type { ApiCall, ApiOutcome, ServiceContext } from './service-types.js';
import type { AltPaymentState, LedgerTransaction, TxAmounts, TxKind } from './store.js';
import { amountTrigger, type FaultKind } from './triggers.js';

export const ORIGINAL_KINDS: ReadonlySet<TxKind> = new Set([
  'authorization',
  'sale',
  'verification',
  'capture',
  'refund',
  'credit',
]);
export const MONEY_OUT_KINDS: ReadonlySet<TxKind> = new Set(['capture', 'sale', 'refund', 'credit']);
export function approved(tx: LedgerTransaction): boolean {
  return tx.status === 'AUTHORIZED' || tx.status === 'PARTIAL_AUTHORIZED' || tx.status === 'PENDING';
}

// The ledger's rule, defined beside the answers that state it (an import of this module from there would be a cycle).
export { holdsUnapproved } from './answers.js';

/**
 * The fault an amount trigger selects for a follow-on that cannot decline or be partial (capture, refund): only
 * parking (card-present) requests react to triggers.
 */
export function followOnFault(parking: boolean, amount: number): FaultKind | undefined {
  if (!parking) return undefined;
  const trigger = amountTrigger(amount, { canDecline: false, canBePartial: false });
  return trigger.kind === 'fault' ? trigger.fault : undefined;
}

/**
 * What the ledger keeps of a card-present read: the PAN masked (first 6 + last 4; DESIGN.md, money safety rule 4),
 * the card type and the entry mode. Absent ones are undefined members, which the ledger's JSON leaves out.
 */
export function cardRecord(
  pan: string | undefined,
  cardType: string | undefined,
  entryMode: string | undefined,
): NonNullable<LedgerTransaction['card']> {
  return { masked: pan !== undefined ? maskPan(pan) : undefined, type: cardType, entryMode };
}

/** Whether the original carried EMV data, and was an EMV contact read (the follow-ons' rules). */
export function emvRecord(
  emvPresent: boolean,
  entryMode: string | undefined,
): NonNullable<LedgerTransaction['emv']> {
  return { present: emvPresent, contact: emvPresent && entryMode === 'contact' };
}

/** Effective captured amount: a voided capture or sale has moved nothing. */
export function effectiveCaptured(tx: LedgerTransaction): number {
  return tx.voided ? 0 : tx.amounts.captured;
}

/** Amount still held on an authorization. */
export function remainingHold(auth: LedgerTransaction): number {
  return heldAmount(auth.amounts);
}

/**
 * What a service states about a transaction it creates ({@link PaymentLedger.newTx}); absent amounts are all 0. The
 * ledger's JSON writes these members after the common ones, in this order.
 */
export interface NewTxFields {
  status: string;
  amounts?: TxAmounts;
  parentId?: string | undefined;
  card?: LedgerTransaction['card'];
  emv?: LedgerTransaction['emv'];
  originalFound?: boolean;
  delayAfterOriginalMs?: number | undefined;
  altPayment?: AltPaymentState;
}

/** The ledger side of the payment services over one store. */
export class PaymentLedger {
  constructor(protected readonly ctx: ServiceContext) {}

  protected fail(
    reason: string,
    message: string,
    field?: string,
    kind: 'MISSING_FIELD' | 'INVALID_DATA' = 'INVALID_DATA',
  ): GatewayAnswer {
    return invalidRequest(this.ctx.now(), reason, message, field ? [{ field, reason: kind }] : []);
  }

  /** The 400 answer of a money rule's refusal (money-rules.ts). */
  protected refuse(refusal: MoneyRefusal): GatewayAnswer {
    return this.fail(refusal.reason, refusal.message, refusal.field);
  }

  protected target(call: ApiCall, id: string): LedgerTransaction | undefined {
    const tx = this.ctx.store.transactions.get(id);
    if (!tx || tx.merchantId !== call.merchantId) return undefined;
    call.target = tx;
    return tx;
  }

  /** The first answer again, for a request that repeats `earlier` (an idempotent resend). */
  protected replay(call: ApiCall, earlier: LedgerTransaction): ApiOutcome {
    call.target = earlier;
    return {
      httpStatus: earlier.answer.httpStatus,
      body: earlier.answer.body,
      created: [],
      touched: [earlier],
      replayOf: earlier,
    };
  }

  /** Finds an earlier original with the same transactionId: replays an identical request, refuses a different one. */
  protected duplicate(call: ApiCall, transactionId: string | undefined): ApiOutcome | undefined {
    if (transactionId === undefined) return undefined;
    for (const tx of this.ctx.store.withTransactionId(call.merchantId, transactionId)) {
      if (!ORIGINAL_KINDS.has(tx.kind)) continue;
      call.target = tx;
      if (tx.bodyFingerprint === fingerprint(call.body)) return this.replay(call, tx);
      throw this.fail(
        'DUPLICATE_REQUEST',
        'clientReferenceInformation.transactionId was already used with a different request',
        'clientReferenceInformation.transactionId',
      );
    }
    return undefined;
  }

  /**
   * A new transaction of `call` with what the service states in `fields`; the rest (id, time, client reference,
   * fingerprint) from the request. One literal of every member, absent ones undefined, so that every transaction has
   * one hidden class; the ledger's JSON leaves undefined members out, and keeps the order of the members written.
   */
  protected newTx(call: ApiCall, kind: TxKind, currency: string, fields: NewTxFields): LedgerTransaction {
    const now = this.ctx.now();
    const code = valueAt(call.body, 'clientReferenceInformation.code');
    const comments = valueAt(call.body, 'clientReferenceInformation.comments');
    const transactionId = valueAt(call.body, 'clientReferenceInformation.transactionId');
    return {
      id: newId(now),
      kind,
      merchantId: call.merchantId,
      transactionId: typeof transactionId === 'string' ? transactionId : undefined,
      code: typeof code === 'string' ? code : undefined,
      comments: typeof comments === 'string' ? comments : undefined,
      status: fields.status,
      currency,
      amounts: fields.amounts ?? { requested: 0, authorized: 0, captured: 0, reversed: 0, refunded: 0 },
      voided: false,
      createdAt: now.toISOString(),
      outcomeUnknown: false,
      answer: { httpStatus: 201, body: {} },
      bodyFingerprint: fingerprint(call.body),
      requests: [],
      parentId: fields.parentId,
      card: fields.card,
      emv: fields.emv,
      originalFound: fields.originalFound,
      delayAfterOriginalMs: fields.delayAfterOriginalMs,
      altPayment: fields.altPayment,
    };
  }

  /** Stores a transaction with its answer and returns the outcome. */
  protected commit(
    tx: LedgerTransaction,
    httpStatus: number,
    body: Record<string, unknown>,
    touched: LedgerTransaction[],
    fault?: FaultKind,
  ): ApiOutcome {
    tx.answer = { httpStatus, body };
    this.ctx.store.saveTx(tx);
    for (const t of touched) this.ctx.store.saveTx(t);
    return { httpStatus, body, created: [tx], touched, fault };
  }

  /** Voids `target` (a void or a timeout void): the money it moved is given back, the hold stays. */
  protected applyVoid(
    call: ApiCall,
    target: LedgerTransaction,
    kind: 'void' | 'timeout-void',
    now: Date,
  ): ApiOutcome {
    if (target.voided) throw this.fail('NOT_VOIDABLE', 'already voided', 'id');
    // REFUNDED: an alternative-method refund (spec 001) that its timeout void takes back.
    if (!approved(target) && target.status !== 'PENDING' && target.status !== 'REFUNDED')
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
}
