/**
 * Field validation of a reversal (`POST /pts/v2/payments/{id}/reversals`; spec 001, Reversal; reference/gateway.md
 * §7) and of a timeout reversal (`POST /pts/v2/reversals`, keyed by the original's transactionId).
 */
import { checkDccFollowOn, type DccAuthorizationTerms } from '../dcc.js';
import type { FieldReader } from '../fields.js';
import type { ApiCall } from '../service-types.js';
import type { LedgerTransaction } from '../store.js';
import { EMV_TAGS, readEmvTags, refuseNeverSendTags, requireOriginalValues } from './emv-tags.js';
import { refusal } from './refusal.js';

const REVERSAL_AMOUNT = 'reversalInformation.amountDetails.totalAmount';
/** The fields of `orderInformation.amountDetails` that make up a DCC field set (spec 001, families A and B). */
const DCC_FIELDS = [
  'currencyConversion',
  'exchangeRate',
  'exchangeRateTimeStamp',
  'originalAmount',
  'originalCurrency',
  'foreignAmount',
  'foreignCurrency',
] as const;

/**
 * Validates a reversal of `auth`; `dcc` gives the authorization's conversion terms when it was converted. Returns the
 * amount asked for (undefined when absent: the money rule names it) or throws the 400 answer naming every field at
 * fault.
 */
export function validateReversal(
  r: FieldReader,
  call: ApiCall,
  auth: LedgerTransaction,
  dcc: () => DccAuthorizationTerms | undefined,
): { requestedMinor: number | undefined } {
  // Spec 001, Reversal: the request carries clientReferenceInformation.code.
  r.text('clientReferenceInformation.code', true);
  const currency = r.currency('orderInformation.amountDetails.currency');
  if (currency !== undefined && currency !== auth.currency)
    r.invalid('orderInformation.amountDetails.currency', 'currency differs from the authorization');
  const requested = r.amount(REVERSAL_AMOUNT, auth.currency);
  if (auth.card?.entryMode !== undefined) r.oneOf('clientReferenceInformation.comments', ['REVERSAL'], true);
  // gateway.md §7 and spec 001: when the original carried EMV data (a contact or contactless read), the reversal
  // repeats its EMV tags.
  const tags = readEmvTags(r, call, false);
  if (auth.emv?.present === true && tags === undefined && !r.details.some((d) => d.field === EMV_TAGS))
    r.missing(EMV_TAGS, `the reversal of an EMV authorization repeats its EMV tags (${EMV_TAGS})`);
  refuseNeverSendTags(r, tags);
  if (tags) requireOriginalValues(r, tags, auth, 'reversal');
  // Spec 001 requires the DCC field set of capture and refund only; a reversal of a converted authorization that
  // carries any of it carries all of it, at the authorization's rate (as the certification pack checks).
  if (DCC_FIELDS.some((f) => r.has(`orderInformation.amountDetails.${f}`)))
    checkDccFollowOn(dcc(), r, requested);
  r.finish();
  return { requestedMinor: requested };
}

/** A timeout reversal that passed validation. */
export interface TimeoutReversalRequest {
  transactionId: string;
  currency: string;
  amountMinor: number;
  comments?: string;
}

/** Validates a timeout reversal; throws the 400 answer naming every field at fault. */
export function validateTimeoutReversal(r: FieldReader, now: Date): TimeoutReversalRequest {
  const transactionId = r.text('clientReferenceInformation.transactionId', true);
  const currency = r.currency('orderInformation.amountDetails.currency');
  const amount = r.amount(REVERSAL_AMOUNT, currency);
  const comments = r.text('clientReferenceInformation.comments', false);
  if (comments !== undefined && comments !== 'REVERSAL Timeout')
    r.invalid('clientReferenceInformation.comments', 'comments must be REVERSAL Timeout');
  r.finish();
  if (transactionId === undefined || currency === undefined || amount === undefined)
    throw refusal(now, 'MISSING_FIELD', 'fields missing');
  return { transactionId, currency, amountMinor: amount, ...(comments !== undefined ? { comments } : {}) };
}
