/**
 * Field validation of an incremental authorization (`PATCH /pts/v2/payments/{id}`, reference/gateway.md §7):
 * `additionalAmount` or a new `totalAmount` (a lodging guide's form), and for a parking authorization its comments,
 * local date and time and `storedCredentialUsed`.
 */
import { checkDccIncrement, type DccAuthorizationTerms } from '../dcc.js';
import type { FieldReader } from '../fields.js';
import type { LedgerTransaction } from '../store.js';

const ADDITIONAL = 'orderInformation.amountDetails.additionalAmount';
const TOTAL = 'orderInformation.amountDetails.totalAmount';

/**
 * Validates an increment of `auth`; `dcc` gives the authorization's conversion terms when it was converted (the DCC
 * fields an increment sends repeat them). Returns the amount it adds (minor units of the authorization's currency) or
 * throws the 400 answer naming every field at fault.
 */
export function validateIncrement(
  r: FieldReader,
  auth: LedgerTransaction,
  dcc?: DccAuthorizationTerms,
): { addMinor: number } {
  const currency = r.currency('orderInformation.amountDetails.currency');
  if (currency !== undefined && currency !== auth.currency)
    r.invalid('orderInformation.amountDetails.currency', 'currency differs from the authorization');
  const additional = r.amount(ADDITIONAL, auth.currency, false);
  const newTotal = r.amount(TOTAL, auth.currency, false);
  if (additional === undefined && newTotal === undefined) r.missing(ADDITIONAL);
  if (additional !== undefined && newTotal !== undefined)
    r.invalid(TOTAL, 'send additionalAmount or totalAmount, not both');
  const add = additional ?? (newTotal !== undefined ? newTotal - auth.amounts.authorized : 0);
  if (add <= 0 && (additional !== undefined || newTotal !== undefined))
    r.invalid(additional !== undefined ? ADDITIONAL : TOTAL, 'an increment must raise the authorized amount');
  if (auth.card?.entryMode !== undefined) {
    r.oneOf('clientReferenceInformation.comments', ['Parking Incremental Auth'], true);
    r.dateTimeDigits('merchantInformation.transactionLocalDateTime', true);
    if (r.flag('processingInformation.authorizationOptions.initiator.storedCredentialUsed') !== true)
      r.invalid(
        'processingInformation.authorizationOptions.initiator.storedCredentialUsed',
        'storedCredentialUsed must be true',
      );
  }
  checkDccIncrement(dcc, r);
  r.finish();
  return { addMinor: add };
}
