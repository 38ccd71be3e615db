/**
 * Field validation of a standalone credit (`POST /pts/v2/credits`; reference/gateway.md §7, comments `Parking
 * Standalone Credit`): a card-present request whose contact read carries the tags 95, 9F10 and 9F26.
 */
import type { FieldReader } from '../fields.js';
import type { ApiCall } from '../service-types.js';
import { validateCardPresent, type CardRead } from './card-present.js';
import { requireTags } from './emv-tags.js';
import { refusal } from './refusal.js';

/** A standalone credit that passed validation. */
export interface CreditRequest {
  currency: string;
  amountMinor: number;
  read: CardRead;
}

/**
 * Validates a standalone credit (its transactionId already read for the replay check); throws the 400 answer naming
 * every field at fault.
 */
export function validateCredit(r: FieldReader, call: ApiCall, now: Date): CreditRequest {
  const currency = r.currency('orderInformation.amountDetails.currency');
  const amount = r.amount('orderInformation.amountDetails.totalAmount', currency);
  r.oneOf('clientReferenceInformation.comments', ['Parking Standalone Credit'], true);
  const read = validateCardPresent(r, call, 'credit', currency, amount, now);
  if (read.emv && read.entryMode === 'contact') requireTags(r, read.emv, ['95', '9F10', '9F26'], 'credit');
  r.finish();
  if (currency === undefined || amount === undefined) throw refusal(now, 'MISSING_FIELD', 'amount required');
  if (amount === 0)
    throw refusal(
      now,
      'INVALID_AMOUNT',
      'a credit cannot be for 0',
      'orderInformation.amountDetails.totalAmount',
    );
  return { currency, amountMinor: amount, read };
}
