/** `pointOfSaleInformation.emv.tags` as every service reads it: decoded once, never-send tags refused. */
import { decodeEmvTags, NEVER_SEND_TAGS, type DecodedTag } from '../emv-rules.js';
import type { FieldReader } from '../fields.js';
import type { ApiCall } from '../service-types.js';
import type { LedgerTransaction } from '../store.js';

/** The field every service reads its EMV tags from. */
export const EMV_TAGS = 'pointOfSaleInformation.emv.tags';

/**
 * Decodes `emv.tags` when present (MISSING_FIELD when `required` and absent); returns the decoded tags, kept on the
 * call for the ledger, or records the problem in `r`.
 */
export function readEmvTags(r: FieldReader, call: ApiCall, required: boolean): DecodedTag[] | undefined {
  const raw = r.text(EMV_TAGS, required);
  if (raw === undefined) return undefined;
  const decoded = decodeEmvTags(raw);
  if (!decoded.ok) {
    r.invalid(EMV_TAGS, decoded.message);
    return undefined;
  }
  call.emvTags = decoded.tags;
  return decoded.tags;
}

/** Records a problem when `tags` carry a tag of the gateway's never-send list (DESIGN.md, money safety rule 4). */
export function refuseNeverSendTags(r: FieldReader, tags: readonly DecodedTag[] | undefined): void {
  if (tags?.some((t) => NEVER_SEND_TAGS.has(t.tag)))
    r.invalid(EMV_TAGS, 'emv.tags carries a tag that must never be sent');
}

/** Records a problem naming the tags of `required` that `tags` lack (`what` names the request). */
export function requireTags(
  r: FieldReader,
  tags: readonly DecodedTag[],
  required: readonly string[],
  what: string,
): void {
  const missing = required.filter((t) => !tags.some((x) => x.tag === t));
  if (missing.length) r.invalid(EMV_TAGS, `${what} tags lack ${missing.join(', ')}`);
}

/**
 * Records a problem naming the tags of a follow-on whose values differ from those its original was sent with
 * (DESIGN.md money rule 7, gateway.md §7: a capture or reversal repeats the authorization's tags — its cryptogram
 * 9F26 covers the original's amount and date, so they are repeated, not rebuilt). Tags the original did not send are
 * left to the other rules.
 */
export function requireOriginalValues(
  r: FieldReader,
  tags: readonly DecodedTag[],
  original: LedgerTransaction,
  what: string,
): void {
  const sent = original.requests.find((q) => q.emvTags !== undefined)?.emvTags;
  if (sent === undefined) return;
  const values = new Map(sent.map((t) => [t.tag, t.value]));
  const differing = tags.filter((t) => values.has(t.tag) && values.get(t.tag) !== t.value).map((t) => t.tag);
  if (differing.length)
    r.invalid(EMV_TAGS, `${what} tags ${differing.join(', ')} differ from the authorization's`);
}
