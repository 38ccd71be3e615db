/**
 * The contract between the server and the payment services: what the services need (ServiceContext), the request
 * they are given (ApiCall) and what they answer (ApiOutcome).
 */
import type { DccAuthorizationTerms } from './dcc.js';
import type { DecodedTag } from './emv-rules.js';
import type { FieldReader } from './fields.js';
import type { LedgerTransaction, SandboxStore } from './store.js';
import type { FaultKind } from './triggers.js';

/** What the payment services need from the server. */
export interface ServiceContext {
  store: SandboxStore;
  now(): Date;
  /** True while a transaction created at `createdAt` may still be voided (before the settlement cut-off). */
  voidable(createdAt: Date): boolean;
  /**
   * Which id the answer to an incremental authorization carries: reference/gateway.md §2 says the original's,
   * §7 a new id for the increment (with links to the original). The facts conflict, so it is configurable.
   */
  incrementalAnswerId: 'increment' | 'original';
  /**
   * DCC: checks a converted authorization against the offer, collecting problems in `reader`; returns the offer and
   * family it was checked against (its captures and refunds are held to them), undefined when not converted.
   */
  checkDccAuthorization(
    reader: FieldReader,
    merchantId: string,
    now: Date,
  ): DccAuthorizationTerms | undefined;
}

/** One authenticated API request. */
export interface ApiCall {
  merchantId: string;
  method: string;
  /** Path without query string. */
  path: string;
  body: Record<string, unknown>;
  /** Set by the service once the path names an existing transaction, so that a refusal is filed under it. */
  target?: LedgerTransaction;
  /** Decoded `pointOfSaleInformation.emv.tags`, for the ledger. */
  emvTags?: DecodedTag[];
}

/** The answer of a service, with the transactions it created or changed. */
export interface ApiOutcome {
  httpStatus: number;
  body: Record<string, unknown>;
  /** Transactions this request created (their outcome is unknown to the client if the answer is lost). */
  created: LedgerTransaction[];
  /** Existing transactions this request acted on or replayed. */
  touched: LedgerTransaction[];
  /** Fault selected by an amount trigger. */
  fault?: FaultKind;
  /** Set when an identical repeated request got the first answer again. */
  replayOf?: LedgerTransaction;
}
