/**
 * The journal's error boundary (DESIGN.md, Errors): one class, a stable `code` callers branch on, and the `cause`.
 * A refusal to accept a payment offline is a result the host shows, not a crash: it has its own subclass so that the
 * host can tell "offline not allowed for this payment" from "the journal is broken".
 */
export type JournalErrorCode =
  /** The database file cannot be opened, migrated or written. */
  | 'JOURNAL_IO'
  /** A migration failed or the file was written by a newer version of the terminal. */
  | 'JOURNAL_MIGRATION'
  /** An argument is malformed (amount, currency, masked PAN that shows too many digits, unknown service …). */
  | 'JOURNAL_INVALID'
  /** No entry with that id. */
  | 'JOURNAL_NOT_FOUND'
  /** The requested state change is not allowed from the entry's current state. */
  | 'JOURNAL_BAD_TRANSITION'
  /** A transactionId that the journal (or the offline queue) already holds. */
  | 'JOURNAL_DUPLICATE'
  /** Encrypted data cannot be decrypted: wrong key or tampered bytes. */
  | 'JOURNAL_DECRYPT'
  /** The at-rest key cannot be read or created, is malformed, or its file is readable by others. */
  | 'JOURNAL_KEY'
  /** The journal was closed. */
  | 'JOURNAL_CLOSED'
  /** Another live process (the running terminal, a `queue flush`) is the journal's sender. */
  | 'JOURNAL_LOCKED'
  /** Recovery was stopped (shutdown) before every entry was resolved. */
  | 'RECOVERY_ABORTED'
  /**
   * A side file of an earlier version (holds.json, authorization-tags.json) cannot be read or decrypted; the message
   * names the file, which is left in place and nothing of it is imported.
   */
  | 'JOURNAL_IMPORT';

export class JournalError extends Error {
  override readonly name: string = 'JournalError';
  constructor(
    readonly code: JournalErrorCode | OfflineRefusalCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Why a payment may not be taken offline (issue 7, item 3). */
export type OfflineRefusalCode =
  /** The terminal's policy is `online-only`. */
  | 'OFFLINE_POLICY'
  /** Only chip reads (contact or contactless EMV) are accepted offline: never swipes, keyed or MSD. */
  | 'OFFLINE_ENTRY_MODE'
  /** The card's service code asks for online authorization by its issuer (second digit other than 0). */
  | 'OFFLINE_CARD_ONLINE_ONLY'
  /**
   * Only sales are stored: never pre-authorizations (their session captures or releases them by the gateway's id, which
   * a stored payment has none of until it is forwarded), refunds, credits or follow-ons.
   */
  | 'OFFLINE_SERVICE'
  /** The amount is above the per-transaction limit. */
  | 'OFFLINE_AMOUNT_LIMIT'
  /** Storing it would take the stored total for its currency above the limit. */
  | 'OFFLINE_TOTAL_LIMIT'
  /** The queue already holds the maximum number of payments. */
  | 'OFFLINE_COUNT_LIMIT'
  /** The queue already holds the maximum number of payments of this card (by its keyed fingerprint). */
  | 'OFFLINE_CARD_LIMIT'
  /** The oldest stored payment is older than the age limit: nothing more is stored until the queue drains. */
  | 'OFFLINE_AGE_LIMIT';

/** A payment the offline rules refuse; `code` says which rule. */
export class OfflineRefusedError extends JournalError {
  override readonly name = 'OfflineRefusedError';
  constructor(
    override readonly code: OfflineRefusalCode,
    message: string,
  ) {
    super(code, message);
  }
}
