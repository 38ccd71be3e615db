/**
 * Field validation of a refund (`POST /pts/v2/captures/{id}/refunds`, `POST /pts/v2/payments/{id}/refunds`; spec 001):
 * comments, EMV tags allowed for the card type, and a converted authorization's DCC field set at its rate.
 */
import { checkDccFollowOn, type DccAuthorizationTerms } from '../dcc.js';
import type { FieldReader } from '../fields.js';
import type { ApiCall } from '../service-types.js';
import type { LedgerTransaction } from '../store.js';
import { prohibitedTags } from '../emv-rules.js';
import { EMV_TAGS, readEmvTags, refuseNeverSendTags } from './emv-tags.js';
import { refusal } from './refusal.js';

/**
 * Validates a refund of `target` (a capture or a sale; its transactionId already read for the replay check); `dcc`
 * is the conversion terms of the authorization it follows. Returns the amount or throws the 400 answer naming every
 * field at fault.
 */
export function validateRefund(
  r: FieldReader,
  call: ApiCall,
  collection: 'captures' | 'payments',
  target: LedgerTransaction,
  dcc: DccAuthorizationTerms | undefined,
  now: Date,
): { amountMinor: number } {
  const currency = r.currency('orderInformation.amountDetails.currency');
  if (currency !== undefined && currency !== target.currency)
    r.invalid('orderInformation.amountDetails.currency', 'currency differs from the original');
  const amount = r.amount('orderInformation.amountDetails.totalAmount', target.currency);
  // gateway.md §7: a parking refund carries code and comments, like the other follow-ons of spec 001.
  r.text('clientReferenceInformation.code', target.card?.entryMode !== undefined);
  if (target.card?.entryMode !== undefined)
    r.oneOf(
      'clientReferenceInformation.comments',
      [collection === 'captures' ? 'REFUND Capture' : 'REFUND Payment'],
      true,
    );
  const tags = readEmvTags(r, call, false);
  if (tags && target.card?.type) {
    refuseNeverSendTags(r, tags);
    // Spec 001's table: e.g. tag 9F6E is prohibited on refunds of card type 002.
    const type = target.card.type;
    if (type === '001' || type === '002') {
      const prohibited = prohibitedTags(type, 'refund');
      for (const t of tags)
        if (prohibited.includes(t.tag))
          r.invalid(EMV_TAGS, `tag ${t.tag} is prohibited on a refund of card type ${type}`);
    }
  }
  checkDccFollowOn(dcc, r, amount);
  r.finish();
  if (amount === undefined) throw refusal(now, 'MISSING_FIELD', 'amount required');
  return { amountMinor: amount };
}
