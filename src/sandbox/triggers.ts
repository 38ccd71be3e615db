/**
 * Deterministic triggers (README, section "Sandbox": the trigger table). The last two digits of an amount in minor
 * units select the answer, so that every ordinary parking fee (multiples of 0.50: last two digits 00 or 50) approves.
 * Test card numbers decline whatever the amount. Scheduled faults (`/__sandbox/faults`) come on top of these.
 */

/** Decline reasons of reference/gateway.md §4 that the triggers produce. */
export type DeclineReason =
  | 'PROCESSOR_DECLINED'
  | 'INSUFFICIENT_FUND'
  | 'EXPIRED_CARD'
  | 'STOLEN_LOST_CARD'
  | 'ISSUER_UNAVAILABLE'
  | 'UNAUTHORIZED_CARD'
  | 'INVALID_ACCOUNT'
  | 'GENERAL_DECLINE'
  | 'CONTACT_PROCESSOR'
  | 'ALLOWABLE_PIN_RETRIES_EXCEEDED'
  | 'PROCESSOR_ERROR';

/**
 * A fault the sandbox can inject. "before commit": nothing is recorded as money moved; "after commit": the
 * transaction is recorded, then the answer is lost or useless to the client (its outcome is unknown to it).
 */
export type FaultKind =
  /** 502 SERVER_ERROR / SYSTEM_ERROR; nothing committed. */
  | 'server-error-502'
  /** The connection is destroyed before anything is committed. */
  | 'reset-before-commit'
  /** Committed, then 502 SERVER_ERROR / SERVER_TIMEOUT. */
  | 'timeout-502'
  /** Committed, then the answer is held for `lateResponseMs` (past the client's timeout). */
  | 'late-response'
  /** Committed, then the connection is destroyed without an answer. */
  | 'reset-after-commit'
  /** Committed, then an undocumented 500. */
  | 'status-500'
  /** Committed, then an undocumented 202 carrying the normal body. */
  | 'status-202'
  /**
   * 400 INVALID_REQUEST `PROCESSOR_UNAVAILABLE` (reference/gateway.md §4): the gateway answers, its processor is down;
   * nothing committed. Scheduled only (no amount selects it): an outage lasts as many requests as are scheduled.
   */
  | 'processor-unavailable';

/** Every fault kind, for validation of `/__sandbox/faults`. */
export const FAULT_KINDS: readonly FaultKind[] = [
  'server-error-502',
  'reset-before-commit',
  'timeout-502',
  'late-response',
  'reset-after-commit',
  'status-500',
  'status-202',
  'processor-unavailable',
];

/** True for the faults that leave nothing committed. */
export function faultBeforeCommit(kind: FaultKind): boolean {
  switch (kind) {
    case 'server-error-502':
    case 'reset-before-commit':
    case 'processor-unavailable':
      return true;
    case 'timeout-502':
    case 'late-response':
    case 'reset-after-commit':
    case 'status-500':
    case 'status-202':
      return false;
  }
}

/** A fault scheduled through `scheduleFaults` or `POST /__sandbox/faults`; consumed by the next matching request. */
export interface Fault {
  kind: FaultKind;
  /** Only requests whose path contains this text (e.g. `/captures`, `/pts/v2/payments`); every API request when absent. */
  path?: string;
  /** Only requests with this HTTP method (upper case); any when absent. */
  method?: string;
}

/** What an amount trigger decides for a money-moving request. */
export type TriggerOutcome =
  | { kind: 'approve' }
  | { kind: 'decline'; reason: DeclineReason }
  | { kind: 'partial'; authorizedMinor: number }
  /** AUTHORIZED_RISK_DECLINED: the issuer approves, the gateway's risk check refuses; nothing is captured. */
  | { kind: 'risk-decline' }
  /** PENDING_REVIEW: held for the merchant's review, which never decides in the sandbox; nothing is captured. */
  | { kind: 'review' }
  | { kind: 'fault'; fault: FaultKind };

/** Last two digits of the amount in minor units → decline reason. */
export const DECLINE_TRIGGERS: Readonly<Record<number, DeclineReason>> = {
  1: 'PROCESSOR_DECLINED',
  2: 'INSUFFICIENT_FUND',
  3: 'EXPIRED_CARD',
  4: 'STOLEN_LOST_CARD',
  5: 'ISSUER_UNAVAILABLE',
  6: 'UNAUTHORIZED_CARD',
  7: 'INVALID_ACCOUNT',
  8: 'GENERAL_DECLINE',
  9: 'CONTACT_PROCESSOR',
  10: 'ALLOWABLE_PIN_RETRIES_EXCEEDED',
  11: 'PROCESSOR_ERROR',
};

/** Last two digits of the amount in minor units → fault. */
export const FAULT_TRIGGERS: Readonly<Record<number, FaultKind>> = {
  41: 'server-error-502',
  42: 'timeout-502',
  43: 'late-response',
  44: 'reset-after-commit',
  45: 'status-500',
  46: 'status-202',
  47: 'reset-before-commit',
};

/** Last two digits that approve for half the amount (rounded down): PARTIAL_AUTHORIZED. */
export const PARTIAL_TRIGGER = 21;

/**
 * Last two digits of an authorization or sale that the issuer approves and the gateway's risk check declines
 * (AUTHORIZED_RISK_DECLINED, reference/gateway.md §4): the funds are held and nothing is captured, a sale's included,
 * until the authorization is reversed.
 */
export const RISK_DECLINE_TRIGGER = 22;

/** The `errorInformation.reason` of a risk decline (the gateway's decision profile rejected the order). */
export const RISK_DECLINE_REASON = 'DECISION_PROFILE_REJECT';

/**
 * Last two digits of an authorization or sale the gateway's risk check holds for the merchant's review (PENDING_REVIEW,
 * reference/gateway.md §4): the issuer's approval is held and nothing is captured, a sale's included, until the
 * authorization is reversed. The sandbox's review never decides: the payment stays in review until it is reversed.
 */
export const REVIEW_TRIGGER = 23;

/** The `errorInformation.reason` of a payment held for review (the gateway's decision profile asked for a review). */
export const REVIEW_REASON = 'DECISION_PROFILE_REVIEW';

/**
 * The gateway's message-level-validation script amounts (reference/gateway.md §7), in minor units of a two-decimal
 * currency: 9900.00, 9601.00 and 9604.00 approve; 9901.00 approves for 3000.00 (partial authorization).
 */
const MLV_AMOUNTS: Readonly<Record<number, TriggerOutcome>> = {
  990000: { kind: 'approve' },
  960100: { kind: 'approve' },
  960400: { kind: 'approve' },
  990100: { kind: 'partial', authorizedMinor: 300000 },
};

/** Which of the amount triggers a service takes (README, Triggers). */
export interface TriggerOptions {
  /** Declines (01–11): not captures or refunds. */
  canDecline: boolean;
  /** Partial approval (21): authorizations and sales. */
  canBePartial: boolean;
  /** Risk decline (22) and review (23): authorizations and sales. */
  canRiskDecline?: boolean;
}

/** The answer an amount selects. `decline` only applies to services that can decline (not captures or refunds). */
export function amountTrigger(minor: number, options: TriggerOptions): TriggerOutcome {
  const mlv = MLV_AMOUNTS[minor];
  if (mlv) return mlv.kind === 'partial' && !options.canBePartial ? { kind: 'approve' } : mlv;
  const cents = minor % 100;
  const fault = FAULT_TRIGGERS[cents];
  if (fault) return { kind: 'fault', fault };
  if (options.canDecline) {
    const reason = DECLINE_TRIGGERS[cents];
    if (reason) return { kind: 'decline', reason };
  }
  if (options.canBePartial && cents === PARTIAL_TRIGGER)
    return { kind: 'partial', authorizedMinor: Math.floor(minor / 2) };
  if (options.canRiskDecline === true && cents === RISK_DECLINE_TRIGGER) return { kind: 'risk-decline' };
  if (options.canRiskDecline === true && cents === REVIEW_TRIGGER) return { kind: 'review' };
  return { kind: 'approve' };
}

/** Test card numbers that decline whatever the amount (all Luhn-valid). */
export const DECLINING_CARDS: Readonly<Record<string, DeclineReason>> = {
  '4000000000000002': 'GENERAL_DECLINE',
  '4000000000000069': 'EXPIRED_CARD',
  '4000000000009995': 'INSUFFICIENT_FUND',
  '4000000000009987': 'STOLEN_LOST_CARD',
  '5105105105105100': 'PROCESSOR_DECLINED',
  '5200828282828210': 'INSUFFICIENT_FUND',
};

/** {@link DECLINING_CARDS} as a map: looking up a fresh 16-digit string as an object key is a slow keyed load. */
const DECLINING_CARD_REASONS: ReadonlyMap<string, DeclineReason> = new Map(Object.entries(DECLINING_CARDS));

/** The decline reason of a test card number that declines whatever the amount; undefined for any other number. */
export function decliningCard(pan: string): DeclineReason | undefined {
  return DECLINING_CARD_REASONS.get(pan);
}
