import type Database from 'better-sqlite3';
import type { SchemaRewrite } from './migration.js';

/**
 * A stored payment declined (or left unknown) after forwarding that the operator has not acknowledged: the condition
 * of `offline_payments_declined`, which a query repeats as it is to read from it. Equalities, not `state IN (…)`:
 * SQLite would build a temporary index of that list for every change of a payment's state (see `state-checks.ts`).
 */
export const UNACKNOWLEDGED_DECLINE =
  "(state = 'declined' OR state = 'rejected' OR state = 'unknown') AND decline_acknowledged = 0";

/** The reason recorded for a stored payment the gateway approved for less than its amount when it was forwarded. */
export const PARTIAL_APPROVAL = 'PARTIAL_APPROVAL';

/**
 * A stored payment approved for less than its amount when forwarded (its customer was told it was paid in full) that
 * the operator has not acknowledged: the condition of `offline_payments_short`, which a query repeats as it is to read
 * from it.
 */
export const UNACKNOWLEDGED_SHORTFALL = `state = 'approved' AND reason = '${PARTIAL_APPROVAL}' AND decline_acknowledged = 0`;

/**
 * An approved pre-authorization, in the journal's own words: the condition of `journal_entries_approved_preauths`,
 * which `unsettledAuthorizations` repeats as it is to read from it.
 */
export const APPROVED_PREAUTH = "service = 'preauth' AND state = 'approved'";

/**
 * A fee a capture did not collect in full (the audit log's `fee-shortfall`): the condition of
 * `audit_log_fee_shortfalls`, which a query repeats as it is to read from it.
 */
export const FEE_SHORTFALL = "action = 'fee-shortfall'";

/**
 * The operator's acknowledgement of a fee shortfall (`fee-shortfall-acknowledge` that took): the condition of
 * `audit_log_shortfalls_acknowledged`, which a query repeats as it is to read from it.
 */
export const SHORTFALL_ACKNOWLEDGED = "action = 'fee-shortfall-acknowledge' AND result = 'ok'";

/** Each index: its name, and the statement that creates it. */
const LOOKUP_INDEXES: readonly { name: string; sql: string }[] = [
  {
    name: 'journal_entries_not_sent',
    sql: `CREATE INDEX journal_entries_not_sent ON journal_entries(transaction_id) WHERE resolution = 'not-sent'`,
  },
  {
    name: 'journal_entries_increments',
    sql: `CREATE INDEX journal_entries_increments ON journal_entries(parent_gateway_id) WHERE service = 'incremental'`,
  },
  {
    name: 'journal_entries_approved_preauths',
    sql: `CREATE INDEX journal_entries_approved_preauths ON journal_entries(id) WHERE ${APPROVED_PREAUTH}`,
  },
  {
    name: 'holds_by_fingerprint',
    sql: `CREATE INDEX holds_by_fingerprint ON holds(fingerprint, entered_at)`,
  },
  {
    name: 'offline_payments_declined',
    sql: `CREATE INDEX offline_payments_declined ON offline_payments(id) WHERE ${UNACKNOWLEDGED_DECLINE}`,
  },
  {
    name: 'offline_payments_short',
    sql: `CREATE INDEX offline_payments_short ON offline_payments(id) WHERE ${UNACKNOWLEDGED_SHORTFALL}`,
  },
  {
    name: 'offline_payments_open_by_time',
    sql: `CREATE INDEX offline_payments_open_by_time ON offline_payments(stored_at)
      WHERE state IN ('stored', 'forwarding')`,
  },
  {
    name: 'audit_log_fee_shortfalls',
    sql: `CREATE INDEX audit_log_fee_shortfalls ON audit_log(subject) WHERE ${FEE_SHORTFALL}`,
  },
  {
    name: 'audit_log_shortfalls_acknowledged',
    sql: `CREATE INDEX audit_log_shortfalls_acknowledged ON audit_log(subject) WHERE ${SHORTFALL_ACKNOWLEDGED}`,
  },
];

/** The names of the indexes {@link lookupIndexes} adds. */
export const LOOKUP_INDEX_NAMES: readonly string[] = LOOKUP_INDEXES.map((i) => i.name);

function missing(db: Database.Database): (typeof LOOKUP_INDEXES)[number][] {
  const has = db.prepare<[string], { n: number }>(
    "SELECT COUNT(*) AS n FROM sqlite_schema WHERE type = 'index' AND name = ?",
  );
  return LOOKUP_INDEXES.filter((i) => (has.get(i.name)?.n ?? 0) === 0);
}

/**
 * Indexes for lookups that read every entry ever written. A journal keeps every entry (a busy pay station writes
 * about 200,000 a year), and each of these read them all, on the event loop: 38 ms apiece at 200,000 entries on the
 * build machine.
 *
 * - `journal_entries_not_sent`: the entries resolved as never sent, by transactionId. The unique index on
 *   transactionId leaves them out (such an id may be used again), so `findByTransactionId` read every entry to find
 *   them (and to learn that there were none, for every payment stored offline). An entry enters this index only when
 *   it is resolved as not sent, never when it is written.
 * - `journal_entries_increments`: incremental authorizations by the gateway id of the authorization they extend
 *   (`incrementsOf`, read for the authorized total of a capture or an extension). Only incremental entries are in it.
 * - `journal_entries_approved_preauths`: the approved pre-authorizations, which the start reads for the holds nothing
 *   settled (`unsettledAuthorizations`). It read the newest 10,000 entries instead, and missed an older hold. An
 *   entry enters it only when a pre-authorization is approved.
 * - `holds_by_fingerprint`: the tap-and-go holds, open or closed, by card fingerprint and time of entry, which the exit
 *   reads for the last stay of a card without an open hold (`HoldStore.claimAtExit`: a paid exit shown again after a
 *   restart). The table keeps every closed hold.
 * - `offline_payments_declined`: stored payments declined (or left unknown) after forwarding that the operator has
 *   not acknowledged, which the offline status counts for every operator snapshot. A payment leaves it once
 *   acknowledged.
 * - `offline_payments_short`: stored payments approved for less than their amount when forwarded that the operator
 *   has not acknowledged, counted with the declined ones. Added to files this rewrite had already given the others:
 *   it is applied again to any file that lacks one of its indexes.
 * - `offline_payments_open_by_time`: the payments in the offline queue by their time of storage, which every claim of a
 *   forward (and each run's closing of those past the limit) reads for the last one stored more than the offline
 *   limit ago (`OfflineQueue.expiredThrough`): a search of the few past it, usually none, where the queue's own
 *   index read every payment queued (7 ms a claim at 10,000 stored here). Added later, as `offline_payments_short`.
 * - `audit_log_fee_shortfalls`, `audit_log_shortfalls_acknowledged`: the audit log's fee shortfalls and the operator's
 *   acknowledgements of them, by subject, which the operator status counts for every snapshot (the log keeps every
 *   record of the terminal's life). Added later, as `offline_payments_short`.
 *
 * No column, name or rule changes, and SQLite keeps an index up to date for any code that writes the table: the
 * previous terminal reads and writes the file as before, so it keeps its version.
 */
export const lookupIndexes: SchemaRewrite = {
  name: 'lookup-indexes',
  needed: (db) => missing(db).length > 0,
  apply(db) {
    for (const i of missing(db)) db.exec(i.sql);
  },
};
