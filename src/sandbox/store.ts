/**
 * The sandbox's state: transactions with their received requests, payment links, offers and merchant standing. In
 * memory, and written through to SQLite (better-sqlite3, synchronous) when a data file is given, so that a
 * transaction is durable before its answer leaves: "connection reset after commit" means committed.
 */
import Database from 'better-sqlite3';
import { SandboxError } from './errors.js';
import type { AuthScheme } from './auth.js';
import type { DecodedTag } from './emv-rules.js';
import { MAX_UNMATCHED_REQUESTS } from './limits.js';
import type { FaultKind } from './triggers.js';

/** The services a ledger transaction can be. */
export type TxKind =
  | 'authorization'
  | 'sale'
  | 'verification'
  | 'incremental'
  | 'capture'
  | 'reversal'
  | 'timeout-reversal'
  | 'refund'
  | 'credit'
  | 'void'
  | 'timeout-void'
  | 'link-payment'
  /** A redirect-based alternative-method sale (spec 001, AP_SALE); its refunds are `refund`s with `altPayment`. */
  | 'ap-sale';

/** One request the sandbox received, as the ledger shows it. Card data is masked before it is stored. */
export interface LedgerRequest {
  /** Sandbox clock, ISO 8601 UTC. */
  at: string;
  method: string;
  /** Path with query string as received. */
  path: string;
  /** Received headers; `authorization` is reduced to its scheme. */
  headers: Record<string, string>;
  auth: { scheme: AuthScheme; verified: boolean; reason?: string };
  /** The JSON body with PAN masked (first 6 + last 4), track data and security codes redacted. */
  body: unknown;
  /** The body was longer than the ledger keeps of a rejected request: `body` is its first bytes as a string. */
  bodyTruncated?: boolean;
  /** Byte length of the whole masked body, when `bodyTruncated`. */
  bodyBytes?: number;
  /** `pointOfSaleInformation.emv.tags` decoded, in wire order (never-send tag values redacted). */
  emvTags?: DecodedTag[];
  /** HTTP status the sandbox meant to answer (before a fault replaced or dropped it). */
  httpStatus: number;
  response: unknown;
  /** The fault injected into this answer, if any. */
  fault?: FaultKind;
  /** False when the client did not get a usable answer (fault, or the connection closed before the answer). */
  delivered: boolean;
}

/**
 * A request as the server files it: flat data that becomes its {@link LedgerRequest} only when the ledger is read
 * (`request-record.ts` says why). The store asks no more of it, so it does not depend on how a record is kept.
 */
export interface FiledRequest {
  /** The ledger's form of the request; the same object on every call, kept in step with later changes. */
  view(): LedgerRequest;
}

/** Amounts of a transaction in minor units of `currency`. */
export interface TxAmounts {
  /** What the request asked for. */
  requested: number;
  /** Authorizations and sales: the approved amount (new total after increments). */
  authorized: number;
  /** Authorizations: sum of effective (non-voided) captures. Sales: the sold amount. Captures: their amount. */
  captured: number;
  /** Authorizations: amount released by reversals, timeout reversals and automatic partial reversals. */
  reversed: number;
  /** Captures and sales: sum of effective (non-voided) refunds. */
  refunded: number;
}

/** One transaction of the ledger. */
export interface LedgerTransaction {
  /** Gateway id (the `{id}` of follow-on paths). */
  id: string;
  kind: TxKind;
  merchantId: string;
  /** `clientReferenceInformation.transactionId` of the request, when sent. */
  transactionId?: string;
  /** `clientReferenceInformation.code`. */
  code?: string;
  comments?: string;
  /** The transaction this one acts on (authorization of a capture, capture of a refund, target of a void). */
  parentId?: string;
  status: string;
  currency: string;
  amounts: TxAmounts;
  /** Masked PAN (first 6 + last 4 at most), card type and entry mode. */
  card?: { masked?: string; type?: string; entryMode?: string };
  /** Whether the original carried EMV data / was an EMV contact read (capture and reversal rules). */
  emv?: { present: boolean; contact: boolean };
  voided: boolean;
  /** Sandbox clock, ISO 8601 UTC. */
  createdAt: string;
  /** True while the client cannot know this transaction's outcome (its answer was lost or useless). */
  outcomeUnknown: boolean;
  /** Timeout reversals: milliseconds between the original and this reversal (gateway.md §2 asks for 60 s). */
  delayAfterOriginalMs?: number;
  /** Timeout reversals and voids: whether the original was found. */
  originalFound?: boolean;
  /** Incremental authorizations recorded on the authorization. */
  increments?: number;
  /** Alternative-method sales and their refunds: the method and the status-check history (alt-payments.ts). */
  altPayment?: AltPaymentState;
  /** The first answer, replayed for an identical repeated request. */
  answer: { httpStatus: number; body: Record<string, unknown> };
  /** Canonical body of the original request, for DUPLICATE_REQUEST. */
  bodyFingerprint?: string;
  requests: LedgerRequest[];
}

/** What the ledger keeps of an alternative-method sale or refund besides the common fields. */
export interface AltPaymentState {
  profile: number;
  methodName: string;
  paymentTypeName: string;
  /** What the customer did on the sandbox's payment page; absent while nothing was done there. */
  customer?: 'paid' | 'failed' | 'cancelled';
  /** Sandbox time the sale settled (the customer paid). */
  settledAt?: string;
  /** Sandbox time of the last status check answered. */
  lastStatusCheckAt?: string;
  statusChecks: number;
  /** Status checks refused because they came sooner than spec 001's interval after the previous one. */
  statusChecksTooEarly: number;
}

/** What a stored record is. */
type RecordKind = 'tx' | 'unmatched' | 'link' | 'offer' | 'merchant' | 'oauth';

/** Keyed records, written through to SQLite when a file is configured. */
export class SandboxStore {
  readonly transactions = new Map<string, LedgerTransaction>();
  /**
   * Transactions by merchant, then client transactionId (duplicate detection, timeout reversal and void): two maps,
   * not one keyed by a joined string, which would be a new string to hash on every lookup.
   */
  private readonly byClientId = new Map<string, Map<string, LedgerTransaction | LedgerTransaction[]>>();
  /**
   * Requests that neither created nor targeted a transaction (authentication failures, rejected requests): the last
   * `maxUnmatched` of them, oldest first. Complete after {@link flushRequests}.
   */
  readonly unmatched: LedgerRequest[] = [];
  /** Filed requests not yet in their transaction's `requests` (or `unmatched`), in arrival order. */
  private pending: Array<{ owner: LedgerTransaction | undefined; record: FiledRequest }> = [];
  private readonly others = new Map<string, Map<string, unknown>>();
  private db: Database.Database | undefined;
  private upsert: Database.Statement | undefined;
  private unmatchedSeq = 0;
  /** Filed requests in {@link pending} without a transaction (bounded: past `maxUnmatched`, pending is flushed). */
  private pendingUnmatched = 0;
  private dropUnmatched: Database.Statement | undefined;

  constructor(
    dataFile?: string,
    private readonly maxUnmatched: number = MAX_UNMATCHED_REQUESTS,
  ) {
    if (dataFile === undefined) return;
    try {
      this.db = new Database(dataFile);
      this.db.pragma('journal_mode = WAL');
      this.db.pragma('synchronous = FULL');
      this.db.exec(
        'CREATE TABLE IF NOT EXISTS sandbox_records (kind TEXT NOT NULL, id TEXT NOT NULL, json TEXT NOT NULL, PRIMARY KEY (kind, id))',
      );
      this.upsert = this.db.prepare(
        'INSERT INTO sandbox_records (kind, id, json) VALUES (?, ?, ?) ON CONFLICT(kind, id) DO UPDATE SET json = excluded.json',
      );
      this.dropUnmatched = this.db.prepare(
        "DELETE FROM sandbox_records WHERE kind = 'unmatched' AND id <= ?",
      );
      const rows = this.db
        .prepare('SELECT kind, id, json FROM sandbox_records ORDER BY rowid')
        .all() as Array<{
        kind: RecordKind;
        id: string;
        json: string;
      }>;
      for (const row of rows) {
        const value: unknown = JSON.parse(row.json);
        if (row.kind === 'tx') this.index(value as LedgerTransaction);
        else if (row.kind === 'unmatched') {
          this.unmatched.push(value as LedgerRequest);
          this.unmatchedSeq = Number(row.id) + 1;
        } else this.map(row.kind).set(row.id, value);
      }
      this.trimUnmatched();
    } catch (e) {
      throw new SandboxError('SANDBOX_STORE', `cannot open the sandbox ledger ${dataFile}`, { cause: e });
    }
  }

  private map(kind: RecordKind): Map<string, unknown> {
    let m = this.others.get(kind);
    if (!m) {
      m = new Map();
      this.others.set(kind, m);
    }
    return m;
  }

  private write(kind: RecordKind, id: string, value: unknown): void {
    this.upsert?.run(kind, id, JSON.stringify(value));
  }

  private index(tx: LedgerTransaction): void {
    if (!this.transactions.has(tx.id) && tx.transactionId !== undefined) {
      let ofMerchant = this.byClientId.get(tx.merchantId);
      if (ofMerchant === undefined) {
        ofMerchant = new Map();
        this.byClientId.set(tx.merchantId, ofMerchant);
      }
      // Nearly every transactionId names one transaction: no list until a second one shares it.
      const found = ofMerchant.get(tx.transactionId);
      if (found === undefined) ofMerchant.set(tx.transactionId, tx);
      else if (Array.isArray(found)) found.push(tx);
      else ofMerchant.set(tx.transactionId, [found, tx]);
    }
    this.transactions.set(tx.id, tx);
  }

  /** Stores (or re-stores after a change) a transaction; durable when this returns. */
  saveTx(tx: LedgerTransaction): void {
    this.index(tx);
    this.write('tx', tx.id, tx);
  }

  /** Every transaction of `merchantId` that carried `transactionId`, in creation order. */
  withTransactionId(merchantId: string, transactionId: string): readonly LedgerTransaction[] {
    const found = this.byClientId.get(merchantId)?.get(transactionId);
    return found === undefined ? [] : Array.isArray(found) ? found : [found];
  }

  /**
   * Files a request under the transaction it created or targeted (`owner`), or as unmatched. In memory, it joins
   * `owner.requests` / {@link unmatched} at the next {@link flushRequests}, when the ledger is read; with a data
   * file, at once, so that it is durable when this returns.
   */
  fileRequest(owner: LedgerTransaction | undefined, record: FiledRequest): void {
    if (this.db === undefined) {
      this.pending.push({ owner, record });
      // Unmatched requests are kept to the last `maxUnmatched`: pending ones are placed (and the oldest dropped)
      // before they outnumber that, even when the ledger is never read.
      if (owner === undefined && ++this.pendingUnmatched > this.maxUnmatched) this.flushRequests();
      return;
    }
    this.place(owner, record);
  }

  /** Moves every filed request into its transaction's `requests` or {@link unmatched}, in arrival order. */
  flushRequests(): void {
    const pending = this.pending;
    if (pending.length === 0) return;
    this.pending = [];
    this.pendingUnmatched = 0;
    for (const { owner, record } of pending) this.place(owner, record);
    this.trimUnmatched();
  }

  private place(owner: LedgerTransaction | undefined, record: FiledRequest): void {
    const req = record.view();
    if (owner) {
      owner.requests.push(req);
      this.saveTx(owner);
    } else {
      this.unmatched.push(req);
      this.write('unmatched', unmatchedKey(this.unmatchedSeq++), req);
      if (this.db !== undefined) this.trimUnmatched();
    }
  }

  /** Drops the oldest unmatched requests beyond `maxUnmatched`, in memory and on disk. */
  private trimUnmatched(): void {
    const excess = this.unmatched.length - this.maxUnmatched;
    if (excess <= 0) return;
    this.unmatched.splice(0, excess);
    this.dropUnmatched?.run(unmatchedKey(this.unmatchedSeq - this.maxUnmatched - 1));
  }

  /** Any other record kind (links, offers, merchant standing, OAuth grants). */
  get<T>(kind: Exclude<RecordKind, 'tx' | 'unmatched'>, id: string): T | undefined {
    return this.map(kind).get(id) as T | undefined;
  }

  put(kind: Exclude<RecordKind, 'tx' | 'unmatched'>, id: string, value: unknown): void {
    this.map(kind).set(id, value);
    this.write(kind, id, value);
  }

  values<T>(kind: Exclude<RecordKind, 'tx' | 'unmatched'>): T[] {
    return [...this.map(kind).values()] as T[];
  }

  /** Forgets everything (admin reset), in memory and on disk. */
  clear(): void {
    this.transactions.clear();
    this.byClientId.clear();
    this.unmatched.length = 0;
    this.pending = [];
    this.pendingUnmatched = 0;
    this.others.clear();
    this.unmatchedSeq = 0;
    this.db?.exec('DELETE FROM sandbox_records');
  }

  close(): void {
    this.db?.close();
    this.db = undefined;
    this.upsert = undefined;
    this.dropUnmatched = undefined;
  }
}

/** The row id of the `seq`-th unmatched request: zero-padded, so that ids sort as numbers. */
function unmatchedKey(seq: number): string {
  return String(seq).padStart(10, '0');
}
