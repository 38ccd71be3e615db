import { JournalError } from './errors.js';
import { readOn, type JournalConnection } from './field-checks.js';
import { entriesOfFlow, type JournalEntry } from './journal.js';
import { migration0009 } from './migrations/0009-alt-payments.js';
import { openJournalReadOnly, readOnlyStore } from './read-only.js';

/**
 * The terminal's alternative-method sales over `alt_sales` and the status checks of their refunds over
 * `alt_refund_checks` (migration 0009). Every write commits durably (synchronous=FULL). The spacing rule of status
 * checks lives here, once: {@link AltSaleStore.claimCheck} is a conditional update that records the check BEFORE it is
 * sent and refuses one sooner than the interval after the previous, whichever process asks.
 */

/** 'sending': journaled, answer not (yet) recorded; 'unknown': the answer was lost (nothing to poll, nothing shown). */
export type AltSaleState = 'sending' | 'unknown' | 'PENDING' | 'SETTLED' | 'FUNDED' | 'FAILED' | 'ABANDONED';

export interface AltSaleRecord {
  readonly id: number;
  readonly transactionId: string;
  readonly code: string;
  readonly profile: number;
  readonly methodName: string;
  readonly paymentTypeName: string;
  readonly amountMinor: number;
  readonly currency: string;
  readonly flowId?: string;
  readonly state: AltSaleState;
  readonly gatewayId?: string;
  readonly paymentUrl?: string;
  readonly reason?: string;
  /** Epoch ms. */
  readonly createdAt: number;
  readonly updatedAt: number;
  /** Epoch ms of the last status check sent (or about to be), undefined before the first. */
  readonly lastCheckAt?: number;
  readonly checks: number;
}

export interface NewAltSale {
  transactionId: string;
  code: string;
  profile: number;
  methodName: string;
  paymentTypeName: string;
  amountMinor: number;
  currency: string;
  flowId?: string;
}

/** A refund's status checks (`AP_STATUS` of the refund id). */
export interface AltRefundCheck {
  readonly journalEntryId: number;
  readonly saleId: number;
  readonly status?: 'REFUNDED' | 'FAILED';
  readonly lastCheckAt?: number;
  readonly checks: number;
  readonly createdAt: number;
}

interface SaleRow {
  id: number;
  transaction_id: string;
  code: string;
  profile: number;
  method_name: string;
  payment_type_name: string;
  amount_minor: number;
  currency: string;
  flow_id: string | null;
  state: AltSaleState;
  gateway_id: string | null;
  payment_url: string | null;
  reason: string | null;
  created_at: number;
  updated_at: number;
  last_check_at: number | null;
  checks: number;
}

interface RefundRow {
  journal_entry_id: number;
  sale_id: number;
  status: 'REFUNDED' | 'FAILED' | null;
  last_check_at: number | null;
  checks: number;
  created_at: number;
}

const opt = <T>(v: T | null): T | undefined => (v === null ? undefined : v);

function toSale(r: SaleRow): AltSaleRecord {
  return {
    id: r.id,
    transactionId: r.transaction_id,
    code: r.code,
    profile: r.profile,
    methodName: r.method_name,
    paymentTypeName: r.payment_type_name,
    amountMinor: r.amount_minor,
    currency: r.currency,
    ...(r.flow_id !== null ? { flowId: r.flow_id } : {}),
    state: r.state,
    ...(r.gateway_id !== null ? { gatewayId: r.gateway_id } : {}),
    ...(r.payment_url !== null ? { paymentUrl: r.payment_url } : {}),
    ...(r.reason !== null ? { reason: r.reason } : {}),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    ...(r.last_check_at !== null ? { lastCheckAt: r.last_check_at } : {}),
    checks: r.checks,
  };
}

function toRefund(r: RefundRow): AltRefundCheck {
  const status = opt(r.status);
  const lastCheckAt = opt(r.last_check_at);
  return {
    journalEntryId: r.journal_entry_id,
    saleId: r.sale_id,
    ...(status !== undefined ? { status } : {}),
    ...(lastCheckAt !== undefined ? { lastCheckAt } : {}),
    checks: r.checks,
    createdAt: r.created_at,
  };
}

/** The flow id that ties an AP_REFUND journal entry to its sale. */
export function altRefundFlowId(saleId: number): string {
  return `alt-sale:${saleId}`;
}

/** The alternative-method sales of the journal database. */
export class AltSaleStore {
  constructor(private readonly journal: JournalConnection) {}

  private get db() {
    return this.journal.db;
  }

  private row(id: number): SaleRow {
    const r = this.db.prepare<[number], SaleRow>('SELECT * FROM alt_sales WHERE id = ?').get(id);
    if (!r) throw new JournalError('JOURNAL_NOT_FOUND', `no alternative-method sale ${id}`);
    return r;
  }

  /** Writes a sale about to be sent ('sending'), durably, before a byte goes out. */
  begin(sale: NewAltSale): AltSaleRecord {
    const at = this.journal.now().getTime();
    const id = this.journal.atomically(true, () =>
      Number(
        this.db
          .prepare(
            `INSERT INTO alt_sales (transaction_id, code, profile, method_name, payment_type_name, amount_minor,
              currency, flow_id, state, created_at, updated_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'sending', ?, ?)`,
          )
          .run(
            sale.transactionId,
            sale.code,
            sale.profile,
            sale.methodName,
            sale.paymentTypeName,
            sale.amountMinor,
            sale.currency,
            sale.flowId ?? null,
            at,
            at,
          ).lastInsertRowid,
      ),
    );
    return toSale(this.row(id));
  }

  /**
   * The sale's answer: PENDING with its id and paymentUrl, or FAILED (with the id when there is one). `onRecorded` is
   * called with the sale as answered in the same transaction: what the answer makes durable with it is written there.
   */
  recordAnswer(
    id: number,
    answer:
      | { state: 'PENDING'; gatewayId: string; paymentUrl: string }
      | { state: 'FAILED'; gatewayId?: string; reason: string }
      | { state: 'unknown'; gatewayId?: string; reason: string },
    onRecorded?: (sale: AltSaleRecord) => void,
  ): AltSaleRecord {
    const at = this.journal.now().getTime();
    this.journal.atomically(true, () => {
      const changes = this.db
        .prepare(
          `UPDATE alt_sales SET state = ?, gateway_id = ?, payment_url = ?, reason = ?, updated_at = ?
           WHERE id = ? AND state = 'sending'`,
        )
        .run(
          answer.state,
          'gatewayId' in answer ? (answer.gatewayId ?? null) : null,
          answer.state === 'PENDING' ? answer.paymentUrl : null,
          answer.state === 'PENDING' ? null : answer.reason,
          at,
          id,
        ).changes;
      if (changes !== 1)
        throw new JournalError('JOURNAL_BAD_TRANSITION', `alternative-method sale ${id} is not being sent`);
      onRecorded?.(toSale(this.row(id)));
    });
    return toSale(this.row(id));
  }

  /** Sales left 'sending' by a crash: their answer is lost (start-up). Returns how many. */
  abandonUnanswered(): number {
    const at = this.journal.now().getTime();
    return this.journal.atomically(
      true,
      () =>
        this.db
          .prepare(
            `UPDATE alt_sales SET state = 'unknown', reason = 'answer lost (restart)', updated_at = ?
             WHERE state = 'sending'`,
          )
          .run(at).changes,
    );
  }

  /**
   * Records a status check of a PENDING sale as sent at `at`, durably, when the previous check (or the sale's answer)
   * is at least `intervalMs` earlier. False when it is too soon or the sale is no longer pending: then nothing may be
   * sent. The one place the spacing rule is decided.
   */
  claimCheck(id: number, at: number, intervalMs: number): boolean {
    return (
      this.journal.atomically(true, () =>
        this.db
          .prepare(
            `UPDATE alt_sales SET last_check_at = @at, checks = checks + 1
             WHERE id = @id AND state = 'PENDING' AND COALESCE(last_check_at, updated_at) <= @at - @interval`,
          )
          .run({ id, at, interval: intervalMs }),
      ).changes === 1
    );
  }

  /** A status the gateway reported for a sale. */
  recordStatus(
    id: number,
    state: 'PENDING' | 'SETTLED' | 'FUNDED' | 'FAILED' | 'ABANDONED',
    reason?: string,
  ): AltSaleRecord {
    const at = this.journal.now().getTime();
    this.journal.atomically(true, () => {
      // The time a sale became pending stays its updated_at until it leaves PENDING (the interval reads it).
      this.db
        .prepare(
          `UPDATE alt_sales SET state = @state, reason = COALESCE(@reason, reason),
             updated_at = CASE WHEN state = @state THEN updated_at ELSE @at END
           WHERE id = @id AND state NOT IN ('sending', 'unknown')`,
        )
        .run({ id, state, reason: reason ?? null, at });
    });
    return toSale(this.row(id));
  }

  get(id: number): AltSaleRecord | undefined {
    const r = this.db.prepare<[number], SaleRow>('SELECT * FROM alt_sales WHERE id = ?').get(id);
    return r ? toSale(r) : undefined;
  }

  /** Newest first. */
  list(options: { states?: readonly AltSaleState[]; limit?: number } = {}): AltSaleRecord[] {
    const rows = this.db
      .prepare<[number], SaleRow>('SELECT * FROM alt_sales ORDER BY id DESC LIMIT ?')
      .all(options.limit ?? 1000)
      .map(toSale);
    return options.states ? rows.filter((r) => options.states?.includes(r.state)) : rows;
  }

  /** Pending sales with the time their next check is allowed (epoch ms). */
  pending(intervalMs: number): { sale: AltSaleRecord; dueAt: number }[] {
    return this.db
      .prepare<[], SaleRow>(`SELECT * FROM alt_sales WHERE state = 'PENDING' ORDER BY id`)
      .all()
      .map(toSale)
      .map((sale) => ({ sale, dueAt: (sale.lastCheckAt ?? sale.updatedAt) + intervalMs }));
  }

  /** The journal entries of a sale's refunds (AP_REFUND), oldest first. */
  refundEntries(saleId: number): JournalEntry[] {
    return entriesOfFlow(this.journal, altRefundFlowId(saleId), 1000)
      .filter((e) => e.service === 'refund-payment')
      .reverse();
  }

  /** Starts following an accepted refund's status (in the transaction of its outcome). Idempotent. */
  followRefund(journalEntryId: number, saleId: number): void {
    this.db
      .prepare(
        `INSERT OR IGNORE INTO alt_refund_checks (journal_entry_id, sale_id, created_at) VALUES (?, ?, ?)`,
      )
      .run(journalEntryId, saleId, this.journal.now().getTime());
  }

  refundCheck(journalEntryId: number): AltRefundCheck | undefined {
    const r = this.db
      .prepare<[number], RefundRow>('SELECT * FROM alt_refund_checks WHERE journal_entry_id = ?')
      .get(journalEntryId);
    return r ? toRefund(r) : undefined;
  }

  /** Refunds whose settlement is not yet confirmed by a status check, with the time the next check is allowed. */
  unconfirmedRefunds(intervalMs: number): { refund: AltRefundCheck; dueAt: number }[] {
    return this.db
      .prepare<[], RefundRow>(
        'SELECT * FROM alt_refund_checks WHERE status IS NULL ORDER BY journal_entry_id',
      )
      .all()
      .map(toRefund)
      .map((refund) => ({ refund, dueAt: (refund.lastCheckAt ?? refund.createdAt) + intervalMs }));
  }

  /** {@link claimCheck} for a refund. */
  claimRefundCheck(journalEntryId: number, at: number, intervalMs: number): boolean {
    return (
      this.journal.atomically(true, () =>
        this.db
          .prepare(
            `UPDATE alt_refund_checks SET last_check_at = @at, checks = checks + 1
             WHERE journal_entry_id = @id AND status IS NULL AND COALESCE(last_check_at, created_at) <= @at - @interval`,
          )
          .run({ id: journalEntryId, at, interval: intervalMs }),
      ).changes === 1
    );
  }

  recordRefundStatus(journalEntryId: number, status: 'REFUNDED' | 'FAILED'): void {
    this.journal.atomically(true, () =>
      this.db
        .prepare('UPDATE alt_refund_checks SET status = ? WHERE journal_entry_id = ?')
        .run(status, journalEntryId),
    );
  }
}

/** What is read of the alternative-method sales to show them (`altpay list`, `altpay show`, the desk's views). */
export type AltSaleReading = Pick<AltSaleStore, 'get' | 'list' | 'refundEntries' | 'refundCheck'>;

/** The alternative-method sales of a journal, read-only (see {@link openAltSalesReadOnly}). */
export interface AltSaleReader extends AltSaleReading {
  close(): void;
}

/**
 * Opens the alternative-method sales of the journal at `path` read-only ({@link openJournalReadOnly}), for
 * `altpay list` and `altpay show` while the terminal runs: no write, no migration, no schema rewrite (what they read
 * names no column of one). A journal older than the alternative methods (schema before migration 0009) has no sale.
 * `JOURNAL_IO` when the file cannot be opened or read, `JOURNAL_MIGRATION` when a newer terminal wrote it.
 */
export function openAltSalesReadOnly(path: string, options: { busyTimeoutMs?: number } = {}): AltSaleReader {
  const journal = openJournalReadOnly(path, migration0009.version, options);
  if (journal === undefined)
    return {
      get: () => undefined,
      list: () => [],
      refundEntries: () => [],
      refundCheck: () => undefined,
      close: () => undefined,
    };
  const store = readOnlyStore(journal, path, (j) => new AltSaleStore(j));
  return {
    get: (id) => readOn(journal, () => store.get(id)),
    list: (options) => readOn(journal, () => store.list(options)),
    refundEntries: (saleId) => store.refundEntries(saleId),
    refundCheck: (journalEntryId) => readOn(journal, () => store.refundCheck(journalEntryId)),
    close: () => journal.close(),
  };
}
