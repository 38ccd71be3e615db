/**
 * Field validation of a capture (`POST /pts/v2/payments/{id}/captures`; spec 001 capture rules, reference/gateway.md
 * §7): the comments say whether it is below the hold, no card data is repeated, the EMV tags of a contact
 * pre-authorization are, and a converted authorization's DCC field set at its rate.
 */
import { checkDccFollowOn, type DccAuthorizationTerms } from '../dcc.js';
import type { FieldReader } from '../fields.js';
import { heldAmount } from '../money-rules.js';
import type { ApiCall } from '../service-types.js';
import type { LedgerTransaction } from '../store.js';
import {
  EMV_TAGS,
  readEmvTags,
  refuseNeverSendTags,
  requireOriginalValues,
  requireTags,
} from './emv-tags.js';
import { refusal } from './refusal.js';

/** Spec 001: the capture of an EMV contact pre-authorization carries these tags. */
export const CONTACT_CAPTURE_TAGS = ['95', '9F10', '9F26'] as const;

/**
 * Validates a capture of `auth` (its transactionId already read for the replay check); `dcc` is the authorization's
 * conversion terms when it was converted. Returns the amount or throws the 400 answer naming every field at fault.
 */
export function validateCapture(
  r: FieldReader,
  call: ApiCall,
  auth: LedgerTransaction,
  dcc: DccAuthorizationTerms | undefined,
  now: Date,
): { amountMinor: number } {
  // Spec 001, Capture: the request carries clientReferenceInformation.code.
  r.text('clientReferenceInformation.code', true);
  const currency = r.currency('orderInformation.amountDetails.currency');
  if (currency !== undefined && currency !== auth.currency)
    r.invalid('orderInformation.amountDetails.currency', 'currency differs from the authorization');
  const amount = r.amount('orderInformation.amountDetails.totalAmount', auth.currency);
  if (auth.card?.entryMode !== undefined && amount !== undefined) {
    // Spec 001: "Parking Capture Less Than Auth" makes the host reverse the rest; the comment must say which.
    const expected = amount < heldAmount(auth.amounts) ? 'Parking Capture Less Than Auth' : 'Parking Capture';
    r.oneOf('clientReferenceInformation.comments', [expected], true);
  }
  // gateway.md §7: a capture repeats no card or terminal data.
  if (r.has('pointOfSaleInformation.trackData'))
    r.invalid('pointOfSaleInformation.trackData', 'a capture repeats no card data');
  if (r.has('paymentInformation.card.number'))
    r.invalid('paymentInformation.card.number', 'a capture repeats no card data');
  const tags = r.has(EMV_TAGS) ? readEmvTags(r, call, false) : undefined;
  if (auth.emv?.contact) {
    // Spec 001: EMV contact pre-authorizations need the EMV tags on their capture (95, 9F10, 9F26).
    if (!r.has(EMV_TAGS))
      r.missing(EMV_TAGS, 'the capture of an EMV contact pre-authorization carries the EMV tags');
    else if (tags) {
      requireTags(r, tags, CONTACT_CAPTURE_TAGS, 'capture');
      requireOriginalValues(r, tags, auth, 'capture');
    }
  } else if (r.has(EMV_TAGS)) {
    r.invalid(EMV_TAGS, 'EMV tags go on a capture only after an EMV contact pre-authorization');
  }
  refuseNeverSendTags(r, tags);
  checkDccFollowOn(dcc, r, amount);
  r.finish();
  if (amount === undefined) throw refusal(now, 'MISSING_FIELD', 'amount required');
  return { amountMinor: amount };
}
