/**
 * What the server files of each API request, and the ledger's {@link LedgerRequest} made from it when the ledger is
 * read. Filing happens on every request and reading the ledger rarely, so a record holds only flat data: the masked
 * body as JSON text (masked before it is filed: no card data is kept in clear), the received header object, the
 * EMV tag text. A ledger of tens of thousands of authorizations (a `bench gateway.authorize` run) then holds fewer
 * objects for the garbage collector to trace than with a copied object tree per request.
 */
import type { AuthResult } from './auth.js';
import { decodeEmvTags, type DecodedTag } from './emv-rules.js';
import type { FiledRequest, LedgerRequest } from './store.js';
import { keptBody, MAX_KEPT_BODY_BYTES } from './limits.js';
import type { FaultKind } from './triggers.js';

/** The received headers, as node:http gives them. */
export type ReceivedHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** The recorded copy of received headers: arrays joined; a bearer token is a credential, only its scheme is kept. */
export function recordedHeaders(headers: ReceivedHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of Object.keys(headers)) {
    const v = headers[k];
    if (v === undefined) continue;
    const text = Array.isArray(v) ? v.join(', ') : v;
    out[k] = k === 'authorization' ? `${text.split(' ')[0] ?? ''} [REDACTED]` : text;
  }
  return out;
}

/** One API request as filed; {@link RequestRecord.view} is the ledger's form of it. */
export class RequestRecord implements FiledRequest {
  /** HTTP status the sandbox meant to answer (before a fault replaced or dropped it). */
  httpStatus = 0;
  /** The answer body (the transaction's own answer object when one was committed). */
  response: unknown = undefined;
  /** The fault injected into this answer, if any. */
  fault: FaultKind | undefined = undefined;
  /** JSON text of the body with card data masked; set by {@link RequestRecord.fileBody} before filing. */
  private maskedBodyJson = '{}';
  /**
   * `pointOfSaleInformation.emv.tags` as the services decoded it: its hex text, decoded again for the view (the same
   * deterministic decoder), or the decoded tags themselves when a never-send value was redacted from the body.
   */
  private emv: string | readonly DecodedTag[] | undefined = undefined;
  /** Byte length of the whole masked body when {@link limitBody} cut it. */
  private truncatedFrom: number | undefined = undefined;
  private isDelivered = false;
  private made: LedgerRequest | undefined;

  constructor(
    /** Sandbox clock at arrival, milliseconds since the epoch. */
    readonly atMs: number,
    readonly method: string,
    /** Path with query string as received. */
    readonly path: string,
    private readonly headers: ReceivedHeaders,
    private readonly auth: AuthResult,
  ) {}

  /** Sets the masked body (JSON text) and the decoded EMV tags, if the services decoded any. */
  fileBody(maskedBodyJson: string, emv: { hex: string; tags: readonly DecodedTag[] } | undefined): void {
    this.maskedBodyJson = maskedBodyJson;
    if (emv === undefined) return;
    // Re-decoding the hex gives these very tags unless a value was redacted; then the tags are kept as they are.
    this.emv = emv.tags.some((t) => t.value === '[REDACTED]') ? emv.tags : emv.hex;
  }

  /**
   * Keeps at most `limit` bytes of the masked body (rejected and unmatched requests, limits.ts): a longer one becomes
   * its first bytes as a string in the ledger, with `bodyTruncated` and the whole length in `bodyBytes`.
   */
  limitBody(limit: number = MAX_KEPT_BODY_BYTES): void {
    const kept = keptBody(this.maskedBodyJson, limit);
    if (kept.truncatedFrom === undefined) return;
    this.maskedBodyJson = JSON.stringify(kept.json);
    this.truncatedFrom = kept.truncatedFrom;
  }

  /** The client got a usable answer (its `finish` event, or a late answer that was still read). */
  markDelivered(): void {
    this.isDelivered = true;
    if (this.made) this.made.delivered = true;
  }

  /** The ledger's form of this request; made once, then kept in step with {@link markDelivered}. */
  view(): LedgerRequest {
    if (this.made) return this.made;
    const auth = this.auth;
    const request: LedgerRequest = {
      at: new Date(this.atMs).toISOString(),
      method: this.method,
      path: this.path,
      headers: recordedHeaders(this.headers),
      auth: {
        scheme: auth.scheme,
        verified: auth.verified,
        ...(auth.reason !== undefined ? { reason: auth.reason } : {}),
      },
      body: JSON.parse(this.maskedBodyJson) as unknown,
      ...(this.truncatedFrom !== undefined ? { bodyTruncated: true, bodyBytes: this.truncatedFrom } : {}),
      httpStatus: this.httpStatus,
      response: this.response,
      delivered: this.isDelivered,
    };
    const tags = this.emvTags();
    if (tags) request.emvTags = tags;
    if (this.fault !== undefined) request.fault = this.fault;
    this.made = request;
    return request;
  }

  private emvTags(): DecodedTag[] | undefined {
    if (this.emv === undefined) return undefined;
    if (typeof this.emv !== 'string') return [...this.emv];
    const decoded = decodeEmvTags(this.emv);
    return decoded.ok ? decoded.tags : undefined;
  }
}
