import {
  acknowledgeOfflineDecline,
  offlineDeclinesToAcknowledge,
  type NewAuditRecord,
  type SqliteJournal,
  type StoredPayment,
} from '../journal/index.js';
import { formatAmount, resolveLocale } from '../i18n/index.js';
import type { OfflineDeclineSummary } from './api.js';

/**
 * The stored payments forwarded and not collected in full (declined, rejected, of unknown outcome, or approved for
 * less than their amount) that the operator has not acknowledged — the status bar's "not collected in full after
 * forwarding" — as operator mode and `parking-terminal queue declined` show them: no card data but the masked number.
 */
export function offlineDeclines(journal: SqliteJournal, locale: string): OfflineDeclineSummary[] {
  return offlineDeclinesToAcknowledge(journal).map((p) => declineSummary(p, locale));
}

/**
 * One stored payment not collected in full, as {@link offlineDeclines} lists it; its amount formatted in `locale`
 * (terminal.locale, `de_DE` or `de-DE`).
 */
export function declineSummary(p: StoredPayment, locale: string): OfflineDeclineSummary {
  return {
    transactionId: p.transactionId,
    amount: {
      minor: p.amountMinor,
      currency: p.currency,
      text: formatAmount(p.amountMinor, p.currency, resolveLocale(locale)),
    },
    ...(p.maskedPan !== undefined ? { maskedPan: p.maskedPan } : {}),
    state: p.state,
    ...(p.reason !== undefined ? { reason: p.reason } : {}),
    ...(p.resolution !== undefined ? { resolution: p.resolution } : {}),
    storedAt: p.storedAt,
    ...(p.forwardedAt !== undefined ? { forwardedAt: p.forwardedAt } : {}),
  };
}

/** Whether the operator's acknowledgement of one stored payment took (it was waiting for one). */
export interface Acknowledgement {
  transactionId: string;
  acknowledged: boolean;
}

/**
 * The operator has seen these stored payments not collected in full (by transactionId): each leaves the count, and
 * each request is recorded in the audit log (`queue-acknowledge`; refused `NOT_AWAITING_ACKNOWLEDGEMENT` for one that
 * was not waiting), through `record`, whoever asks — operator mode or `parking-terminal queue acknowledge`. One
 * transaction: an id that cannot be a transactionId (`JOURNAL_INVALID`), or a record that throws, leaves every one of
 * them as it was — never some acknowledged behind an error, nor an acknowledgement without its record.
 */
export function acknowledgeOfflineDeclines(
  journal: SqliteJournal,
  transactionIds: readonly string[],
  record: (entry: NewAuditRecord) => unknown,
): Acknowledgement[] {
  return journal.atomically(true, () =>
    transactionIds.map((transactionId) => {
      const acknowledged = acknowledgeOfflineDecline(journal, transactionId);
      record({
        actor: 'operator',
        action: 'queue-acknowledge',
        subject: transactionId,
        result: acknowledged ? 'ok' : 'refused',
        code: acknowledged ? 'ACKNOWLEDGED' : 'NOT_AWAITING_ACKNOWLEDGEMENT',
      });
      return { transactionId, acknowledged };
    }),
  );
}
