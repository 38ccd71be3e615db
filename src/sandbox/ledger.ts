/**
 * The ledger view (`GET /__sandbox/ledger`, `Sandbox.ledger()`) and its consistency check: the invariants every
 * flow, crash and certification test judges the terminal by.
 */
import { holdsUnapproved } from './payment-ledger.js';
import type { LedgerRequest, LedgerTransaction, SandboxStore } from './store.js';

/** One broken invariant. */
export interface ConsistencyProblem {
  /** Gateway id of the transaction concerned. */
  id?: string;
  /** The client's `clientReferenceInformation.transactionId` of that transaction, when it sent one. */
  transactionId?: string;
  /** Stable rule name, e.g. `CAPTURE_ABOVE_AUTHORIZATION`. */
  rule: string;
  message: string;
}

/** Stricter checks for the end of a test run. */
export interface ConsistencyOptions {
  /**
   * Also report every approved authorization that still holds funds (`OPEN_AUTHORIZATION`): at the end of a crash
   * test every authorization must be captured or reversed, whether or not the sandbox saw its answer get lost (a
   * terminal killed after the answer left the gateway never journaled it).
   */
  requireResolved?: boolean;
}

/** Result of {@link checkConsistency}. */
export interface Consistency {
  ok: boolean;
  problems: ConsistencyProblem[];
}

/** Standing of a merchant (the personal-data rule of spec 000 suspends it). */
export interface MerchantStanding {
  merchantId: string;
  suspended: boolean;
  reason?: string;
}

/** The whole ledger as JSON. Amounts are integer minor units of each transaction's currency. */
export interface Ledger {
  /** Sandbox clock, ISO 8601 UTC. */
  now: string;
  merchants: MerchantStanding[];
  /** Every transaction in the order it was created, each with the requests that created or targeted it. */
  transactions: LedgerTransaction[];
  /** Requests that created or targeted no transaction: authentication failures, rejected requests, faults before commit. */
  unmatchedRequests: LedgerRequest[];
  consistency: Consistency;
}

/** An approved authorization (or risk-declined sale) that still holds funds: open, or unknown to the client. */
function heldProblems(
  tx: LedgerTransaction,
  options: ConsistencyOptions,
  problems: ConsistencyProblem[],
): void {
  const a = tx.amounts;
  if (a.captured > 0 || a.reversed >= a.authorized) return;
  if (options.requireResolved && !tx.outcomeUnknown)
    problems.push(problem(tx, 'OPEN_AUTHORIZATION', 'the authorization is neither captured nor reversed'));
  if (tx.outcomeUnknown)
    problems.push(
      problem(
        tx,
        'UNKNOWN_AUTHORIZATION_NOT_REVERSED',
        'the client never got this answer and the authorization still holds funds',
      ),
    );
}

function problem(tx: LedgerTransaction, rule: string, message: string): ConsistencyProblem {
  return {
    id: tx.id,
    ...(tx.transactionId !== undefined ? { transactionId: tx.transactionId } : {}),
    rule,
    message,
  };
}

/**
 * The invariants (README, Sandbox): no capture above its authorization, nothing released above it, no refund above
 * its capture or sale, no authorization captured twice and no sale charged twice for one order, every transaction
 * whose outcome the client could not know resolved (authorizations reversed, captures/sales/refunds/credits voided),
 * and every timeout reversal matched (no original arriving after its own timeout reversal and left standing).
 */
export function checkConsistency(store: SandboxStore, options: ConsistencyOptions = {}): Consistency {
  const problems: ConsistencyProblem[] = [];
  const all = [...store.transactions.values()];
  const byParent = new Map<string, LedgerTransaction[]>();
  for (const tx of all) {
    if (tx.parentId === undefined) continue;
    const list = byParent.get(tx.parentId) ?? [];
    list.push(tx);
    byParent.set(tx.parentId, list);
  }
  const salesByCode = new Map<string, LedgerTransaction[]>();
  for (const tx of all) {
    const a = tx.amounts;
    switch (tx.kind) {
      case 'authorization':
      case 'verification': {
        if (a.captured > a.authorized)
          problems.push(
            problem(
              tx,
              'CAPTURE_ABOVE_AUTHORIZATION',
              `captured ${a.captured} above authorized ${a.authorized}`,
            ),
          );
        if (a.captured + a.reversed > a.authorized)
          problems.push(
            problem(
              tx,
              'RELEASED_ABOVE_AUTHORIZATION',
              `captured ${a.captured} + reversed ${a.reversed} above authorized ${a.authorized}`,
            ),
          );
        const captures = (byParent.get(tx.id) ?? []).filter((c) => c.kind === 'capture' && !c.voided);
        if (captures.length > 1)
          problems.push(
            problem(tx, 'CAPTURED_TWICE', `${captures.length} effective captures of one authorization`),
          );
        const approved =
          tx.status === 'AUTHORIZED' || tx.status === 'PARTIAL_AUTHORIZED' || holdsUnapproved(tx);
        if (approved) heldProblems(tx, options, problems);
        break;
      }
      case 'sale':
      case 'link-payment': {
        // A risk-declined sale captured nothing and holds the issuer's approval: it is reversed, like an authorization.
        if (holdsUnapproved(tx)) heldProblems(tx, options, problems);
        if (!tx.voided && a.refunded > a.captured)
          problems.push(
            problem(tx, 'REFUND_ABOVE_CAPTURE', `refunded ${a.refunded} above sold ${a.captured}`),
          );
        if (tx.outcomeUnknown && !tx.voided && tx.status !== 'DECLINED' && a.captured > 0)
          problems.push(
            problem(tx, 'UNKNOWN_CHARGE_NOT_VOIDED', 'the client never got this answer and the sale stands'),
          );
        if (tx.code !== undefined && !tx.voided && a.captured > 0) {
          const key = `${tx.merchantId}\u0000${tx.code}`;
          const list = salesByCode.get(key) ?? [];
          list.push(tx);
          salesByCode.set(key, list);
        }
        break;
      }
      case 'capture':
        if (!tx.voided && a.refunded > a.captured)
          problems.push(
            problem(tx, 'REFUND_ABOVE_CAPTURE', `refunded ${a.refunded} above captured ${a.captured}`),
          );
        if (tx.outcomeUnknown && !tx.voided)
          problems.push(
            problem(
              tx,
              'UNKNOWN_CHARGE_NOT_VOIDED',
              'the client never got this answer and the capture stands',
            ),
          );
        break;
      case 'refund':
      case 'credit':
        if (tx.outcomeUnknown && !tx.voided && tx.status !== 'DECLINED')
          problems.push(
            problem(
              tx,
              'UNKNOWN_CREDIT_NOT_VOIDED',
              `the client never got this answer and the ${tx.kind} stands`,
            ),
          );
        break;
      case 'timeout-reversal':
        if (tx.originalFound === false && tx.transactionId !== undefined) {
          const late = all.find(
            (o) =>
              o.merchantId === tx.merchantId &&
              o.transactionId === tx.transactionId &&
              (o.kind === 'authorization' || o.kind === 'verification') &&
              o.amounts.captured + o.amounts.reversed < o.amounts.authorized,
          );
          if (late)
            problems.push(
              problem(
                tx,
                'TIMEOUT_REVERSAL_UNMATCHED',
                'the original arrived after its timeout reversal and still holds funds',
              ),
            );
        }
        break;
      case 'ap-sale':
        if (a.refunded > a.captured)
          problems.push(
            problem(tx, 'REFUND_ABOVE_CAPTURE', `refunded ${a.refunded} above settled ${a.captured}`),
          );
        break;
      case 'incremental':
      case 'reversal':
      case 'void':
      case 'timeout-void':
        break;
    }
    // Spec 001: alternative-method status checks every 60 minutes at most.
    if ((tx.altPayment?.statusChecksTooEarly ?? 0) > 0)
      problems.push(
        problem(
          tx,
          'STATUS_POLLED_TOO_OFTEN',
          `${tx.altPayment?.statusChecksTooEarly ?? 0} status checks sooner than 60 minutes after the previous one`,
        ),
      );
  }
  for (const list of salesByCode.values()) {
    if (list.length > 1)
      for (const tx of list.slice(1))
        problems.push(problem(tx, 'CHARGED_TWICE', `order ${tx.code ?? ''} was sold ${list.length} times`));
  }
  return { ok: problems.length === 0, problems };
}

/** The ledger document. */
export function buildLedger(store: SandboxStore, merchants: MerchantStanding[], now: Date): Ledger {
  store.flushRequests();
  return {
    now: now.toISOString(),
    merchants,
    transactions: [...store.transactions.values()],
    unmatchedRequests: [...store.unmatched],
    consistency: checkConsistency(store),
  };
}
