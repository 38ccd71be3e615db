/**
 * The service vocabulary of the terminal, written once (DESIGN.md, Dependency direction): the names of the gateway
 * services the parking models use, their `clientReferenceInformation.comments`, which of them can move money, and what
 * undoes each when its outcome is unknown. The gateway client, the journal and the machines import it; the sandbox keeps
 * its own copy on purpose (an independent oracle). Every table is a `Record<ServiceName, …>`: adding a service without
 * deciding each of its properties does not compile.
 *
 * Paths (gateway.md §2): `avr`, `preauth`, `sale` POST /pts/v2/payments; `incremental` PATCH /pts/v2/payments/{id};
 * `reversal` POST /pts/v2/payments/{id}/reversals; `timeout-reversal` POST /pts/v2/reversals; `capture` POST
 * /pts/v2/payments/{id}/captures; `refund-capture` / `refund-payment` POST /pts/v2/{captures|payments}/{id}/refunds;
 * `credit` POST /pts/v2/credits; `void-*` POST /pts/v2/{captures|payments|refunds|credits}/{id}/voids; `timeout-void`
 * POST /pts/v2/voids.
 */

export const SERVICE_NAMES = [
  'avr',
  'preauth',
  'incremental',
  'reversal',
  'timeout-reversal',
  'capture',
  'sale',
  'refund-capture',
  'refund-payment',
  'credit',
  'void-capture',
  'void-payment',
  'void-refund',
  'void-credit',
  'timeout-void',
] as const;

/** A gateway service of the parking section, in the order of spec 001's comments table. */
export type ServiceName = (typeof SERVICE_NAMES)[number];

/**
 * Every value of `clientReferenceInformation.comments` in spec 001's "Card-present parking" table. The
 * pre-authorization has two spellings in the spec ("Parking Authorization" in the table, "Parking Auth" in the
 * required-field list): {@link PreauthComments} chooses.
 */
export type ParkingComments =
  | 'Parking AVR'
  | 'Parking Auth'
  | 'Parking Authorization'
  | 'Parking Incremental Auth'
  | 'REVERSAL'
  | 'REVERSAL Timeout'
  | 'Parking Capture'
  | 'Parking Capture Less Than Auth'
  | 'Parking Sale'
  | 'REFUND Capture'
  | 'REFUND Payment'
  | 'Parking Standalone Credit'
  | 'VOID Capture'
  | 'VOID Payment'
  | 'VOID Refund'
  | 'VOID Credit'
  | 'VOID Timeout';

/** The two spellings of the pre-authorization's comments in spec 001 (table vs required-field list). */
export type PreauthComments = 'Parking Auth' | 'Parking Authorization';

/**
 * The comments of each service (spec 001 comments table). `preauth` and `capture` depend on a choice: see
 * {@link commentsFor}.
 */
const COMMENTS: Readonly<Record<ServiceName, ParkingComments>> = {
  avr: 'Parking AVR',
  preauth: 'Parking Auth',
  incremental: 'Parking Incremental Auth',
  reversal: 'REVERSAL',
  'timeout-reversal': 'REVERSAL Timeout',
  capture: 'Parking Capture',
  sale: 'Parking Sale',
  'refund-capture': 'REFUND Capture',
  'refund-payment': 'REFUND Payment',
  credit: 'Parking Standalone Credit',
  'void-capture': 'VOID Capture',
  'void-payment': 'VOID Payment',
  'void-refund': 'VOID Refund',
  'void-credit': 'VOID Credit',
  'timeout-void': 'VOID Timeout',
};

/**
 * The comments value of a service. A capture below the authorized amount is "Parking Capture Less Than Auth" (the
 * gateway then reverses the rest itself, gateway.md §7); the pre-authorization takes the configured spelling.
 */
export function commentsFor(
  service: ServiceName,
  options: {
    preauthComments?: PreauthComments;
    capture?: { amountMinor: number; authorizedMinor: number };
  } = {},
): ParkingComments {
  if (service === 'preauth') return options.preauthComments ?? COMMENTS.preauth;
  if (
    service === 'capture' &&
    options.capture &&
    options.capture.amountMinor < options.capture.authorizedMinor
  )
    return 'Parking Capture Less Than Auth';
  return COMMENTS[service];
}

/** The kind of request each service is: it decides what the journal requires of it (gateway.md §2). */
export type ServiceRole =
  /** Carries a transactionId of its own (unique for 180 days) and starts a transaction at the gateway. */
  | 'original'
  /** Acts on an earlier transaction through its gateway id. */
  | 'follow-on'
  /** Keyed by the transactionId of an unanswered original. */
  | 'timeout';

export const SERVICE_ROLE: Readonly<Record<ServiceName, ServiceRole>> = {
  avr: 'original',
  preauth: 'original',
  // An increment carries a transactionId of its own but acts on the authorization's gateway id.
  incremental: 'follow-on',
  reversal: 'follow-on',
  'timeout-reversal': 'timeout',
  capture: 'original',
  sale: 'original',
  'refund-capture': 'original',
  'refund-payment': 'original',
  credit: 'original',
  'void-capture': 'follow-on',
  'void-payment': 'follow-on',
  'void-refund': 'follow-on',
  'void-credit': 'follow-on',
  'timeout-void': 'timeout',
};

/**
 * Whether a duplicate of the request could move money (the client never retries such a request, and the journal
 * writes it durably before it is sent). Every parking service can; payment links and DCC offers (other modules)
 * cannot.
 */
export const MONEY_MOVING: Readonly<Record<ServiceName, boolean>> = {
  avr: true,
  preauth: true,
  incremental: true,
  reversal: true,
  'timeout-reversal': true,
  capture: true,
  sale: true,
  'refund-capture': true,
  'refund-payment': true,
  credit: true,
  'void-capture': true,
  'void-payment': true,
  'void-refund': true,
  'void-credit': true,
  'timeout-void': true,
};

/**
 * What undoes each service when its outcome is unknown (gateway.md §2, "Timeouts", and §7). The journal's recovery
 * is the only place that carries a plan out; the machines ask it through the host.
 */
export type RecoveryPlan =
  /** Timeout reversal keyed by the entry's own transactionId, for the amount requested, 60 s after the original. */
  | 'timeout-reversal'
  /** Timeout void keyed by the entry's own transactionId, at once. */
  | 'timeout-void'
  /**
   * Timeout reversal of the WHOLE authorization a reversal refers to: a reversal whose answer was lost may or may not
   * have released the hold; the timeout reversal keyed by the authorization's transactionId is idempotent and
   * releases whatever is still held.
   */
  | 'reverse-referenced-authorization'
  /** Timeout void of the transaction the entry voids (a void's own outcome is unknown: the original is voided). */
  | 'void-referenced'
  /** The entry is itself a timeout reversal or void: send it again (both are idempotent at the gateway). */
  | 'repeat-timeout-request';

export const RECOVERY_PLAN: Readonly<Record<ServiceName, RecoveryPlan>> = {
  // A zero-amount account verification is an authorization (spec 001: service Authorization, comments `Parking AVR`;
  // gateway.md §7: a pre-authorization for 0.00), and an authorization without response is followed by a timeout
  // reversal keyed by its transactionId (spec 001 `REVERSAL Timeout`, gateway.md §2), for the amount it requested:
  // 0.00. It holds no funds, but an approval the gateway kept would stand as an authorization nobody reversed — the
  // terminal reverses an approved verification its customer cancelled for the same reason (COMPENSATION).
  avr: 'timeout-reversal',
  preauth: 'timeout-reversal',
  // An incremental authorization is an authorization with a transactionId of its own: gateway.md §2 applies to it as
  // to any authorization — a timeout reversal keyed by ITS transactionId for the amount it requested. The gateway
  // takes back the increment alone; the original authorization stands and is captured or reversed as usual, so the
  // customer is charged at most what they saw approved.
  incremental: 'timeout-reversal',
  reversal: 'reverse-referenced-authorization',
  'timeout-reversal': 'repeat-timeout-request',
  capture: 'timeout-void',
  sale: 'timeout-void',
  'refund-capture': 'timeout-void',
  'refund-payment': 'timeout-void',
  credit: 'timeout-void',
  'void-capture': 'void-referenced',
  'void-payment': 'void-referenced',
  'void-refund': 'void-referenced',
  'void-credit': 'void-referenced',
  'timeout-void': 'repeat-timeout-request',
};

/** Whether `name` is a service of the vocabulary (journal rows and stored payments carry plain strings). */
export function isServiceName(name: string): name is ServiceName {
  return Object.hasOwn(RECOVERY_PLAN, name);
}

/** The recovery plan of a service name read from storage, or undefined when it is not one of ours. */
export function recoveryPlanFor(name: string): RecoveryPlan | undefined {
  return isServiceName(name) ? RECOVERY_PLAN[name] : undefined;
}

/**
 * Refusal reasons of a reversal that mean nothing is held on the authorization any more (gateway.md §4, reversal
 * reasons): it was reversed already — by an earlier reversal whose answer came late or was lost, say — or settled. A
 * reversal refused so is done, not failed: repeating it is refused the same way, and there is nothing left for the
 * operator to release. The one rule of the journal's recovery (a timeout reversal refused so), the journal's rule of a
 * settled authorization (its SQL is built from this set), the host's follow-ups and the tap-and-go expiry.
 */
export const REVERSAL_REFUSALS_RELEASED: ReadonlySet<string> = new Set([
  'AUTH_ALREADY_REVERSED',
  'TRANSACTION_ALREADY_REVERSED_OR_SETTLED',
]);

/** Whether a reversal refused with `reason` found the authorization released already (see above). */
export function reversalRefusalReleased(reason: string | undefined): boolean {
  return reason !== undefined && REVERSAL_REFUSALS_RELEASED.has(reason);
}

/**
 * Refusal reasons that pass (gateway.md §4, the 400 reasons of the payment services, which reversals and voids share):
 * the request was right and nothing was processed, but the gateway could not process it now — PROCESSOR_UNAVAILABLE,
 * the processor is down for a while. The same request later can succeed, so a reversal or void of money the terminal
 * must give back that is refused so is tried again later, and is not left to the operator as a refusal that will
 * never succeed. Every other reason is a definite "no" to this request: the request itself is wrong (MISSING_FIELD,
 * INVALID_DATA, INVALID_AMOUNT, INVALID_PAYMENT_ID, NOT_SUPPORTED), it is a duplicate (DUPLICATE_REQUEST: sending it
 * again would be refused the same way), or the merchant's or the card's set-up refuses it (INVALID_MERCHANT_CONFIGURATION,
 * INVALID_CARD, CARD_TYPE_NOT_ACCEPTED), which only a person changes. ISSUER_UNAVAILABLE is a decline reason of an
 * authorization (201), not a refusal of a reversal or void. Used by the tap-and-go expiry (its machine and the host's
 * watch), the host's follow-ups, its reversals of orphaned authorizations and the payment router, which sends a
 * reversal that gives an authorization up for good again later (`releases`: a meter session's end, a partial approval
 * not accepted, an approval nobody waited for).
 *
 * Two reasons are the terminal's own, for a request the payment router held back, unsent, because a follow-on of the
 * same authorization is still unresolved (its outcome unknown, recovery's timeout request not through yet): until it
 * is, what the gateway holds is unknown. INCREMENT_UNRESOLVED: a capture, reversal or increment while an increment is
 * unresolved (a reversal must carry the authorized total, and a later increment's answer would count the unknown one
 * in its new total). CAPTURE_UNRESOLVED: a reversal while a capture is unresolved (the capture may have taken its part;
 * its timeout void, if it had, leaves the authorization held, which the reversal must release then). Each passes
 * with that resolution.
 */
export const INCREMENT_UNRESOLVED = 'INCREMENT_UNRESOLVED';
/** The 400 reason of a gateway that answers while its processor is down for a while (gateway.md §4). */
export const PROCESSOR_UNAVAILABLE = 'PROCESSOR_UNAVAILABLE';
export const CAPTURE_UNRESOLVED = 'CAPTURE_UNRESOLVED';

export const REFUSALS_THAT_PASS: ReadonlySet<string> = new Set([
  PROCESSOR_UNAVAILABLE,
  INCREMENT_UNRESOLVED,
  CAPTURE_UNRESOLVED,
]);

/** Whether a request refused with `reason` may succeed when sent again later (see above). */
export function refusalPasses(reason: string | undefined): boolean {
  return reason !== undefined && REFUSALS_THAT_PASS.has(reason);
}

/**
 * Whether a request's outcome leaves it to be sent again later, nothing having moved: refused for a reason that passes
 * ({@link refusalPasses}) or provably never sent — the journal's `not-sent` outcome, a machine's `rejected` result
 * marked `notSent` (the gateway could not be reached, or refused the terminal's credentials unprocessed). An unknown
 * outcome is none of these: it is recovery's. The one rule of which settlement steps the host sends again (a reversal
 * that releases a hold, a meter's capture of its fee).
 */
export function refusedForNow(outcome: { kind: string; reason?: string; notSent?: boolean }): boolean {
  if (outcome.kind === 'not-sent') return true;
  if (outcome.kind !== 'declined' && outcome.kind !== 'rejected') return false;
  return refusalPasses(outcome.reason) || (outcome.kind === 'rejected' && outcome.notSent === true);
}

/**
 * The payment status of an authorization or sale the issuer approved and the gateway's risk check declined
 * (reference/gateway.md §4): a decline for the customer, yet the issuer holds the amount the answer states it
 * authorized (`authorizedAmount`, which may be less than was asked) until the authorization is reversed — by a
 * reversal of that amount, as of any authorization (spec 001, Reversal: the authorized amount, not the one requested).
 */
export const RISK_DECLINED_STATUS = 'AUTHORIZED_RISK_DECLINED';

/**
 * The payment status of an authorization or sale the gateway's risk check holds for the merchant's review
 * (reference/gateway.md §4). A card-present terminal cannot wait for that review: its customer is told the payment was
 * declined, and may well pay again with another card. Yet the review may later accept the payment, and then the card
 * is charged (a sale) or held (a pre-authorization) for a payment the customer was told had failed. So the terminal
 * gives it up at once, with the reversal of the authorization it would get as a risk decline: while it is in review
 * nothing was captured, and the reversal leaves the review nothing to accept.
 */
export const REVIEW_STATUS = 'PENDING_REVIEW';

/**
 * The statuses of a declined pre-authorization or sale that leave the payment on the gateway until the terminal
 * reverses its authorization ({@link RISK_DECLINED_STATUS}, {@link REVIEW_STATUS}): the one rule of which declines
 * oblige a reversal — the gateway classification (their answers need an id to reverse by), the payment router and the
 * forwarding of stored payments (the reversal's follow-up), the journal (the amount such a decline holds).
 */
export const HELD_DECLINE_STATUSES: ReadonlySet<string> = new Set([RISK_DECLINED_STATUS, REVIEW_STATUS]);

/** Whether a declined pre-authorization or sale answered `status` must still be reversed (see above). */
export function declineHolds(status: string | undefined): boolean {
  return status !== undefined && HELD_DECLINE_STATUSES.has(status);
}

/** Services whose timeout reversal needs the amount that was requested (gateway.md §2). */
export const AMOUNT_REQUIRED: Readonly<Record<ServiceName, boolean>> = {
  avr: true,
  preauth: true,
  incremental: true,
  reversal: false,
  'timeout-reversal': true,
  capture: false,
  sale: false,
  'refund-capture': false,
  'refund-payment': false,
  credit: false,
  'void-capture': false,
  'void-payment': false,
  'void-refund': false,
  'void-credit': false,
  'timeout-void': false,
};

/**
 * What undoes an approved original the customer cancelled while it was in flight, or a partial approval the model
 * does not accept: a reversal of an authorization, a void of a sale or credit; null for everything else.
 */
export const COMPENSATION: Readonly<Record<ServiceName, 'reversal' | 'void-payment' | 'void-credit' | null>> =
  {
    avr: 'reversal',
    preauth: 'reversal',
    incremental: null,
    reversal: null,
    'timeout-reversal': null,
    capture: null,
    sale: 'void-payment',
    'refund-capture': null,
    'refund-payment': null,
    credit: 'void-credit',
    'void-capture': null,
    'void-payment': null,
    'void-refund': null,
    'void-credit': null,
    'timeout-void': null,
  };

/**
 * The timeout request keyed by a service's own transactionId when its outcome is unknown, derived from
 * {@link RECOVERY_PLAN} (one rule). Null when the service is resolved through what it refers to (reversals, voids) or
 * is itself a timeout request.
 */
export function timeoutRequestFor(service: ServiceName): 'timeout-reversal' | 'timeout-void' | null {
  const plan = RECOVERY_PLAN[service];
  switch (plan) {
    case 'timeout-reversal':
    case 'timeout-void':
      return plan;
    case 'reverse-referenced-authorization':
    case 'void-referenced':
    case 'repeat-timeout-request':
      return null;
  }
}

/** Whether the journal must hold the request's own transactionId (its recovery is keyed by it, gateway.md §2). */
export function needsOwnTransactionId(service: ServiceName): boolean {
  return SERVICE_ROLE[service] === 'original' || timeoutRequestFor(service) !== null;
}
