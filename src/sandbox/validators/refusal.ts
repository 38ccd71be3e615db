/** The 400 answer a validator throws at once, when the gateway refuses a request without reading further. */
import type { GatewayAnswer } from '../errors.js';
import { invalidRequest } from '../fields.js';

/**
 * A 400 INVALID_REQUEST with `reason` and `message`, naming `field` (as `kind`) when given: the payment services'
 * error style (reference/gateway.md §4).
 */
export function refusal(
  now: Date,
  reason: string,
  message: string,
  field?: string,
  kind: 'MISSING_FIELD' | 'INVALID_DATA' = 'INVALID_DATA',
): GatewayAnswer {
  return invalidRequest(now, reason, message, field ? [{ field, reason: kind }] : []);
}
