import type { AuditActor, AuditRecord, AuditStore } from '../journal/index.js';
import { formatAmount, resolveLocale } from '../i18n/index.js';
import type { FeeShortfallSummary } from './api.js';
import type { Acknowledgement } from './offline-declines.js';

/** The audit log's side of fee shortfalls: what awaits the operator, and the operator's acknowledgement. */
export type FeeShortfallLog = Pick<AuditStore, 'feeShortfallsAwaiting' | 'acknowledgeFeeShortfall'>;

/**
 * The fees not collected in full that the operator has not acknowledged — the operator status's `feeShortfalls` — as
 * operator mode and `parking-terminal shortfalls list` (from the audit log read-only) show them, oldest first. No card
 * data.
 */
export function feeShortfalls(
  log: Pick<FeeShortfallLog, 'feeShortfallsAwaiting'>,
  locale: string,
): FeeShortfallSummary[] {
  return log.feeShortfallsAwaiting().flatMap((r) => {
    const summary = shortfallSummary(r, locale);
    return summary === undefined ? [] : [summary];
  });
}

/** One `fee-shortfall` record as {@link feeShortfalls} lists it; undefined for one without its subject or amounts. */
function shortfallSummary(r: AuditRecord, locale: string): FeeShortfallSummary | undefined {
  const { owedMinor, capturedMinor, shortfallMinor, currency, authorizationTransactionId } = r.details;
  if (
    r.subject === undefined ||
    typeof owedMinor !== 'number' ||
    typeof capturedMinor !== 'number' ||
    typeof shortfallMinor !== 'number' ||
    typeof currency !== 'string'
  )
    return undefined;
  // terminal.locale as configured (de_DE or de-DE): the formatter takes it resolved, as the other operator views do.
  const shown = resolveLocale(locale);
  const amount = (minor: number) => ({ minor, currency, text: formatAmount(minor, currency, shown) });
  return {
    transactionId: r.subject,
    code: r.code ?? 'FEE_SHORTFALL',
    owed: amount(owedMinor),
    captured: amount(capturedMinor),
    shortfall: amount(shortfallMinor),
    ...(typeof authorizationTransactionId === 'string' ? { authorizationTransactionId } : {}),
    at: r.time,
  };
}

/**
 * The operator has seen these fee shortfalls (by the transactionId they are recorded under): each leaves the count, and
 * each request is recorded in the audit log (`fee-shortfall-acknowledge`; refused `NOT_AWAITING_ACKNOWLEDGEMENT` for
 * one that was not waiting), whoever asks — operator mode or `parking-terminal shortfalls acknowledge`.
 */
export function acknowledgeFeeShortfalls(
  log: FeeShortfallLog,
  transactionIds: readonly string[],
  actor: AuditActor = 'operator',
): Acknowledgement[] {
  return transactionIds.map((transactionId) => ({
    transactionId,
    acknowledged: log.acknowledgeFeeShortfall(transactionId, actor),
  }));
}
