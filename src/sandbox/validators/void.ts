/**
 * Field validation of the four voids (`POST /pts/v2/{payments|captures|refunds|credits}/{id}/voids`) and of a timeout
 * void (`POST /pts/v2/voids`, keyed by the original's transactionId; reference/gateway.md §7).
 */
import type { FieldReader } from '../fields.js';
import type { LedgerTransaction, TxKind } from '../store.js';
import { refusal } from './refusal.js';

/** The collection a void is posted under. */
export type VoidCollection = 'payments' | 'captures' | 'refunds' | 'credits';

/** What each void path voids, and its comments (spec 001). */
export const VOID_TARGETS: Readonly<Record<VoidCollection, { kind: TxKind; comments: string }>> = {
  payments: { kind: 'sale', comments: 'VOID Payment' },
  captures: { kind: 'capture', comments: 'VOID Capture' },
  refunds: { kind: 'refund', comments: 'VOID Refund' },
  credits: { kind: 'credit', comments: 'VOID Credit' },
};

/** Validates a void of `target` posted under `collection`; throws the 400 answer naming every field at fault. */
export function validateVoid(r: FieldReader, collection: VoidCollection, target: LedgerTransaction): void {
  const want = VOID_TARGETS[collection];
  const comments = r.text('clientReferenceInformation.comments', target.card?.entryMode !== undefined);
  if (comments !== undefined && comments !== want.comments)
    r.invalid('clientReferenceInformation.comments', `comments must be ${want.comments}`);
  r.finish();
}

/** A timeout void that passed validation. */
export interface TimeoutVoidRequest {
  transactionId: string;
  comments?: string;
}

/** Validates a timeout void; throws the 400 answer naming every field at fault. */
export function validateTimeoutVoid(r: FieldReader, now: Date): TimeoutVoidRequest {
  const transactionId = r.text('clientReferenceInformation.transactionId', true);
  const comments = r.text('clientReferenceInformation.comments', false);
  if (comments !== undefined && comments !== 'VOID Timeout')
    r.invalid('clientReferenceInformation.comments', 'comments must be VOID Timeout');
  r.finish();
  if (transactionId === undefined) throw refusal(now, 'MISSING_FIELD', 'transactionId required');
  return { transactionId, ...(comments !== undefined ? { comments } : {}) };
}
