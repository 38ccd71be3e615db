/**
 * The masked copy of a request body that the ledger keeps (DESIGN.md, money safety rule 4): PANs masked, track data,
 * security codes and cryptograms redacted, an `emv.tags` carrying a never-send tag redacted.
 */
import { maskPan } from '../emv/index.js';
import { luhnValid } from './card.js';
import { NEVER_SEND_TAGS, decodeEmvTags, type DecodedTag } from './emv-rules.js';

/** Keys whose string value is replaced whole (track data, security codes, cryptograms, generic values). */
const REDACTED_KEYS: ReadonlySet<string> = new Set([
  'trackdata',
  'securitycode',
  'cryptogram',
  'value',
  'track1',
  'track2',
]);
const CARD_NUMBER_RUN = /(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)/g;
const PAN_TEXT = /^\d{12,19}$/;

/** The `emv.tags` text of a request with its decoded tags, when the service already decoded it. */
export interface KnownEmvTags {
  hex: string;
  tags: readonly DecodedTag[];
}

/** Fewer than 13 digits cannot hold a card number: most strings are settled without running the pattern. */
function mayHoldCardNumber(text: string): boolean {
  let digits = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57 && ++digits >= 13) return true;
  }
  return false;
}

function maskString(value: string, key: string, known: KnownEmvTags | undefined): string {
  const k = key.toLowerCase();
  if (k === 'number') return PAN_TEXT.test(value) ? maskPan(value) : '[REDACTED]';
  if (k === 'tags') {
    const tags =
      known !== undefined && known.hex === value
        ? known.tags
        : ((d) => (d.ok ? d.tags : undefined))(decodeEmvTags(value));
    return tags !== undefined && !tags.some((t) => NEVER_SEND_TAGS.has(t.tag)) ? value : '[REDACTED]';
  }
  if (k === 'transactionlocaldatetime') return value;
  if (REDACTED_KEYS.has(k)) return '[REDACTED]';
  // Any Luhn-valid card-number-like run elsewhere (a link field, a comment) is masked too.
  if (!mayHoldCardNumber(value)) return value;
  return value.replace(CARD_NUMBER_RUN, (run) => {
    const digits = run.replace(/[ -]/g, '');
    return luhnValid(digits) ? maskPan(digits) : run;
  });
}

/**
 * The masked copy of a request body, as the JSON text the ledger keeps (DESIGN.md, money safety rule 4): PANs masked
 * (first 6 + last 4), track data, security codes and cryptograms redacted, and an `emv.tags` carrying a never-send
 * tag redacted. `body` is a parsed JSON body (what `JSON.parse` returns). `JSON.stringify` writes it, masking each
 * string under its key as it goes: no copy of the body is made, and the text comes out flat (the ledger keeps one
 * string per request, not a rope of its pieces). An array element's key is its index, which no rule names, as the
 * body's own key `''` names none. `known` passes tags the service already decoded, so they are not decoded twice.
 */
export function maskedBodyJson(body: unknown, known?: KnownEmvTags): string {
  return JSON.stringify(body, (key: string, value: unknown) =>
    typeof value === 'string' ? maskString(value, key, known) : value,
  );
}
