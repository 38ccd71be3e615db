/**
 * What recovery does with each gateway service when its outcome is unknown (gateway.md §2 and §7). The names are
 * the gateway client's service names (spec 001's comments table); `authorization` covers a final authorization.
 */
export type RecoveryPlan =
  /** Timeout reversal keyed by the entry's own transactionId, for the amount requested. */
  | 'timeout-reversal'
  /** Timeout void keyed by the entry's own transactionId. */
  | 'timeout-void'
  /** Timeout reversal of the authorization the entry refers to (see TimeoutRecovery for the reasoning). */
  | 'reverse-referenced-authorization'
  /** Timeout void of the transaction the entry refers to. */
  | 'void-referenced'
  /** The entry is itself a timeout reversal or void: send it again (both are idempotent at the gateway). */
  | 'repeat-timeout-request'
  /** Zero-amount account verification: no funds are held, nothing to undo. */
  | 'nothing-held';

const PLANS: Readonly<Record<string, RecoveryPlan>> = {
  authorization: 'timeout-reversal',
  preauth: 'timeout-reversal',
  avr: 'nothing-held',
  sale: 'timeout-void',
  capture: 'timeout-void',
  'refund-capture': 'timeout-void',
  'refund-payment': 'timeout-void',
  credit: 'timeout-void',
  incremental: 'reverse-referenced-authorization',
  reversal: 'reverse-referenced-authorization',
  'void-capture': 'void-referenced',
  'void-payment': 'void-referenced',
  'void-refund': 'void-referenced',
  'void-credit': 'void-referenced',
  'timeout-reversal': 'repeat-timeout-request',
  'timeout-void': 'repeat-timeout-request',
};

/** The money-moving services the journal knows how to recover; any other money-moving service is refused. */
export const MONEY_MOVING_SERVICES: readonly string[] = Object.keys(PLANS);

/** Original requests: they carry a transactionId of their own (gateway.md §2). */
export const ORIGINAL_SERVICES: ReadonlySet<string> = new Set([
  'authorization',
  'preauth',
  'avr',
  'sale',
  'capture',
  'refund-capture',
  'refund-payment',
  'credit',
]);

/** Services whose timeout reversal needs the amount that was requested. */
export const AMOUNT_REQUIRED_SERVICES: ReadonlySet<string> = new Set([
  'authorization',
  'preauth',
  'incremental',
  'timeout-reversal',
]);

/** Timeout requests, keyed by the referenced original's transactionId. */
export const TIMEOUT_SERVICES: ReadonlySet<string> = new Set(['timeout-reversal', 'timeout-void']);

/** The plan for a money-moving service, or undefined when the service is not one the journal knows. */
export function recoveryPlanFor(service: string): RecoveryPlan | undefined {
  return Object.hasOwn(PLANS, service) ? PLANS[service] : undefined;
}
