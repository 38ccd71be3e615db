/**
 * The money rules of spec 001 as pure functions over amounts in minor units (README, "Sandbox gateway", "Money"):
 * a capture takes at most what the authorization still holds, a reversal is for the authorized amount, refunds add up
 * to at most what was captured. `PaymentService` (payments.ts) applies them after the fields are validated and turns
 * a refusal into the gateway's 400 INVALID_REQUEST answer.
 */

/** The amounts of an authorization (or sale, or capture) the rules look at. */
export interface HeldAmounts {
  /** Approved amount, increments included. */
  authorized: number;
  /** Effective captures (a voided one moved nothing). */
  captured: number;
  /** Released by reversals, timeout reversals and automatic partial reversals. */
  reversed: number;
}

/** A rule refuses: the gateway's reason code, a message, and the request field it names. */
export interface MoneyRefusal {
  ok: false;
  reason: 'EXCEEDS_AUTH_AMOUNT' | 'INVALID_AMOUNT' | 'TRANSACTION_ALREADY_REVERSED_OR_SETTLED';
  message: string;
  field: string;
}

const TOTAL_AMOUNT = 'orderInformation.amountDetails.totalAmount';
const REVERSAL_AMOUNT = 'reversalInformation.amountDetails.totalAmount';

/** Amount still held on an authorization: authorized less captured and released, never below 0. */
export function heldAmount(a: HeldAmounts): number {
  return Math.max(0, a.authorized - a.captured - a.reversed);
}

/**
 * A capture of `amount` against `held`: at most what is held, not 0. Accepted, the rest of the hold is released by the
 * automatic partial reversal (spec 001: "Parking Capture Less Than Auth").
 */
export function captureRule(
  held: number,
  amount: number,
): { ok: true; partialReversal: number } | MoneyRefusal {
  if (amount > held)
    return {
      ok: false,
      reason: 'EXCEEDS_AUTH_AMOUNT',
      message: 'the capture exceeds the authorized amount still held',
      field: TOTAL_AMOUNT,
    };
  if (amount === 0)
    return { ok: false, reason: 'INVALID_AMOUNT', message: 'a capture cannot be for 0', field: TOTAL_AMOUNT };
  return { ok: true, partialReversal: held - amount };
}

/**
 * A reversal of an authorization: nothing captured yet, and for exactly the authorized amount (increments included).
 * Accepted, it is for `amount` and releases what is still held.
 */
export function reversalRule(
  auth: HeldAmounts,
  amount: number | undefined,
): { ok: true; amount: number; released: number } | MoneyRefusal {
  if (auth.captured > 0)
    return {
      ok: false,
      reason: 'TRANSACTION_ALREADY_REVERSED_OR_SETTLED',
      message: 'the authorization is captured',
      field: 'id',
    };
  if (amount !== auth.authorized)
    return {
      ok: false,
      reason: 'INVALID_AMOUNT',
      message: 'the reversal amount must equal the authorized amount',
      field: REVERSAL_AMOUNT,
    };
  return { ok: true, amount: auth.authorized, released: heldAmount(auth) };
}

/** A refund of `amount` of an original that captured `captured` (0 when voided) and has `refunded` already. */
export function refundRule(captured: number, refunded: number, amount: number): { ok: true } | MoneyRefusal {
  if (amount === 0 || refunded + amount > captured)
    return {
      ok: false,
      reason: 'INVALID_AMOUNT',
      message: 'refunds may not exceed the captured amount',
      field: TOTAL_AMOUNT,
    };
  return { ok: true };
}
