/**
 * The timeout requests (reference/gateway.md §2, §7): a timeout reversal or timeout void keyed by the
 * transactionId of a request whose answer was lost; found or not, idempotent.
 */
import { toDecimalString } from '../money/index.js';
import { reversalAnswer, voidAnswer, voidOfNothingAnswer } from './answers.js';
import { FieldReader } from './fields.js';
import {
  approved,
  holdsUnapproved,
  MONEY_OUT_KINDS,
  ORIGINAL_KINDS,
  PaymentLedger,
  remainingHold,
} from './payment-ledger.js';
import type { ApiCall, ApiOutcome } from './service-types.js';
import type { LedgerTransaction } from './store.js';
import { validateTimeoutReversal } from './validators/reversal.js';
import { validateTimeoutVoid } from './validators/void.js';

/** Timeout reversals and timeout voids over one store. */
export class TimeoutRequests extends PaymentLedger {
  /** A timeout request for a card-present original names itself in `comments` (spec 001: REVERSAL/VOID Timeout). */
  private requireCommentsForCard(original: LedgerTransaction, comments: string | undefined): void {
    if (original.card?.entryMode !== undefined && comments === undefined)
      throw this.fail(
        'MISSING_FIELD',
        'clientReferenceInformation.comments is required',
        'clientReferenceInformation.comments',
        'MISSING_FIELD',
      );
  }

  /**
   * A timeout reversal keyed by the transactionId of an incremental authorization: takes back that increment only
   * (the authorization keeps what was authorized before it), for the amount the increment requested.
   */
  private reversalOfIncrement(
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
    if (earlier) return this.replay(call, earlier);
    const increment = txs.find((t) => t.kind === 'incremental');
    if (increment && !txs.some((t) => ORIGINAL_KINDS.has(t.kind)))
      return this.reversalOfIncrement(call, increment, { currency, amount, now });
    const original = txs.find((t) => ORIGINAL_KINDS.has(t.kind));
    if (original) {
      call.target = original;
      // A risk-declined sale captured nothing: the issuer's approval it holds is an authorization not yet captured.
      if (original.kind !== 'authorization' && original.kind !== 'verification' && !holdsUnapproved(original))
        throw this.fail(
          'TRANSACTION_ALREADY_SETTLED',
          'timeout reversal is for authorizations; use a timeout void',
          'clientReferenceInformation.transactionId',
        );
      this.requireCommentsForCard(original, comments);
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
    const holds = original !== undefined && (approved(original) || holdsUnapproved(original));
    const released = holds ? remainingHold(original) : 0;
    const tx = this.newTx(call, 'timeout-reversal', currency, {
      ...(original ? { parentId: original.id } : {}),
      status: 'REVERSED',
      originalFound: original !== undefined,
      amounts: { requested: amount, authorized: 0, captured: 0, reversed: released, refunded: 0 },
      ...(original ? { delayAfterOriginalMs: now.getTime() - Date.parse(original.createdAt) } : {}),
    });
    const touched: LedgerTransaction[] = [];
    if (original) {
      if (holds) {
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

  /** POST /pts/v2/voids: timeout void by the original's transactionId; found or not; idempotent. */
  timeoutVoid(call: ApiCall): ApiOutcome {
    const now = this.ctx.now();
    const { transactionId, comments } = validateTimeoutVoid(new FieldReader(call.body, now), now);
    const txs = this.ctx.store.withTransactionId(call.merchantId, transactionId);
    const earlier = txs.find((t) => t.kind === 'timeout-void');
    if (earlier) return this.replay(call, earlier);
    const original = txs.find((t) => ORIGINAL_KINDS.has(t.kind));
    if (original) {
      call.target = original;
      if (!MONEY_OUT_KINDS.has(original.kind))
        throw this.fail(
          'NOT_VOIDABLE',
          'an authorization is reversed (timeout reversal), not voided',
          'clientReferenceInformation.transactionId',
        );
      this.requireCommentsForCard(original, comments);
      // FAILED: an alternative-method refund that moved nothing (spec 001).
      if (original.status === 'DECLINED' || original.status === 'FAILED' || original.voided) {
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
}
