import { luhnValid, maskCardNumbers } from '../emv/index.js';

/**
 * Removes card data from anything about to be logged: PANs (any Luhn-valid run of 13–19 digits, and a number of a
 * card network written with any separators or in full-width digits), magnetic-stripe track data (with or without
 * sentinels, and the nibble-packed tag 57 form), hex blobs that may hold EMV card tags, and the values of keys that
 * carry card data by name. Over-redaction is acceptable; a PAN in a log is not (DESIGN.md, money safety rule 4).
 */

const REDACTED = '[REDACTED]';

/** Keys whose values are card data whatever they look like (compared case-insensitively, without separators). */
const CARD_KEYS = new Set(
  [
    'pan',
    'cardnumber',
    'number',
    'track1',
    'track2',
    'track3',
    'trackdata',
    'tracks',
    'tag57',
    'tag5a',
    'cvv',
    'cvc',
    'cvv2',
    'securitycode',
    'expirationdate',
    'expirationmonth',
    'expirationyear',
    'expiry',
    'cardholdername',
    'tlvs',
    'tlv',
    'emvtags',
    'rawframe',
    'frame',
    'cleartext',
    'carddata',
    'sensitive',
    'ciphertext',
  ].map((k) => k),
);

function normaliseKey(k: string): string {
  return k.toLowerCase().replace(/[^a-z0-9]/g, '');
}

// Track 1 (format B) and track 2 with or without sentinels; tag 57 nibble form (PAN D YYMM service code ...).
const TRACK1 = /%?B\d{8,19}\^[^^\n]{0,26}\^[^\s"',}]*/g;
const TRACK2 = /;?\d{8,19}=\d{4}[\d=]*\??/g;
const TAG57 = /\d{8,19}[Dd]\d{4}[0-9A-Fa-f]*/g;
// Digits possibly grouped by spaces or dashes ("4111 1111 1111 1111").
const PAN_CANDIDATE = /(?<![0-9])(?:\d[ -]?){12,18}\d(?![0-9])/g;
// transactionLocalDateTime (YYYYMMDDhhmmss) is 14 digits and sometimes Luhn-valid: not a card number.
const LOCAL_DATE_TIME = /^20\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])(?:[01]\d|2[0-3])[0-5]\d[0-5]\d$/;
const HEX_BLOB = /(?<![0-9A-Za-z])[0-9A-Fa-f]{20,}(?![0-9A-Za-z])/g;
/**
 * A blob of decimal digits alone is no hex of card tags (tag 5A and the separator of tag 57 are letters) and, at 20
 * digits or more, no card number (12–19): it is an id, like the gateway's 22-digit transaction and payment ids, and
 * stays readable. A card number written beside it is a group of its own and still removed by the card-number rule.
 */
const DIGITS_ONLY = /^\d+$/;

/**
 * Fewer digits than any card data holds: a PAN has at least 13, and track data and the EMV tags that carry card data
 * hold one (a card number is decimal, also in the hex of tags 57 and 5A).
 */
const MIN_CARD_DIGITS = 12;
const NON_ASCII = /[^\p{ASCII}]/u;

function digitCount(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 48 && c <= 57) n++;
  }
  return n;
}

/**
 * Whether `digits` (digits only) is removed as a card number by the rule below whatever its network: 13–19 digits,
 * Luhn-valid, and not a transactionLocalDateTime. The certification runner masks the same runs (runner/mask.ts).
 */
export function isLuhnCardNumber(digits: string): boolean {
  return digits.length >= 13 && digits.length <= 19 && !LOCAL_DATE_TIME.test(digits) && luhnValid(digits);
}

/**
 * The one card-number rule of everything that leaves the terminal as text (log lines, the fleet's payloads, the audit
 * log, certification evidence), on text already in NFKC form.
 */
function removeCardNumbers(text: string): string {
  // A card number of a known network, however its groups are joined ("4111.1111.1111.1111", "4111 / 1111 / …"): the
  // terminal's one reading of card numbers in free text (src/emv/card-numbers-in-text.ts), as the receipts' cleaner
  // and the payment-link guard read them. Its network rule keeps ticket numbers and dates, which start with the year,
  // readable.
  const out = maskCardNumbers(text, REDACTED, { separators: 'any' });
  // Over-redaction beyond it: any Luhn-valid run of 13–19 digits grouped by single spaces or dashes, whatever its
  // network (Mir, RuPay, private-label cards), except a transactionLocalDateTime.
  return out.replace(PAN_CANDIDATE, (m) => (isLuhnCardNumber(m.replace(/[ -]/g, '')) ? REDACTED : m));
}

/**
 * `s` in the form the rules read (NFKC, so that full-width digits "４１１１…" are digits), or undefined when it holds
 * too few digits for any card data: most of what is logged, for which no rule is read.
 */
function readable(s: string): string | undefined {
  if (s.length < 8) return undefined;
  const text = NON_ASCII.test(s) ? s.normalize('NFKC') : s;
  return digitCount(text) < MIN_CARD_DIGITS ? undefined : text;
}

/**
 * An RFC 9562 UUID (versions 1 to 8, its variant bits 10): the id of a fleet command, a request, a payment link. Its
 * digit groups joined by dashes read as a card number in about one UUID of 400 ("…27026-6790-4560-99…" is Luhn-valid
 * under a known network), which hid the command an audit record names. No card number is written in a UUID's
 * 8-4-4-4-12 shape with its version and variant digits: one is left whole.
 */
const UUID =
  /(?<![0-9A-Za-z-])([0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[1-8][0-9A-Fa-f]{3}-[89ABab][0-9A-Fa-f]{3}-[0-9A-Fa-f]{12})(?![0-9A-Za-z-])/;

/** `scrub` applied to `text` outside its UUIDs ({@link UUID}), which are kept as they are. */
function outsideUuids(text: string, scrub: (part: string) => string): string {
  if (!UUID.test(text)) return scrub(text);
  // split with a capturing group: UUIDs at the odd places.
  return text
    .split(new RegExp(UUID.source, 'g'))
    .map((part, i) => (i % 2 === 1 ? part : scrub(part)))
    .join('');
}

/**
 * Card numbers out of one string, and nothing else: what {@link redactString} removes as a card number, with track
 * data, hex blobs and gateway ids left as they are (certification evidence keeps them for the analyst). A string with
 * nothing to remove is returned as it was given.
 */
export function redactCardNumbers(s: string): string {
  const text = readable(s);
  if (text === undefined) return s;
  const out = outsideUuids(text, removeCardNumbers);
  return out === text ? s : out;
}

/**
 * Scrubs card data out of one string. It is read in NFKC form, so full-width digits ("４１１１…") are digits; a string
 * with nothing to scrub is returned as it was given.
 */
export function redactString(s: string): string {
  const text = readable(s);
  if (text === undefined) return s;
  const out = outsideUuids(text, scrubCardData);
  return out === text ? s : out;
}

/** Track data, hex of card tags and card numbers out of `text` (the rules of {@link redactString}). */
function scrubCardData(text: string): string {
  const out = text
    .replace(TRACK1, REDACTED)
    .replace(TRACK2, REDACTED)
    .replace(TAG57, REDACTED)
    .replace(HEX_BLOB, (blob) =>
      !DIGITS_ONLY.test(blob) && (/\d{12,}/.test(blob) || /5A0[0-9A]|57[01][0-9A-F]/i.test(blob))
        ? REDACTED
        : blob,
    );
  return removeCardNumbers(out);
}

/** A deep copy of `value` with card data removed. Cycles and depth are bounded. */
export function redactValue(value: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (typeof value === 'string') return redactString(value);
  if (typeof value === 'number' && Number.isInteger(value) && value >= 1e12)
    return redactString(String(value));
  if (value === null || typeof value !== 'object') return value;
  if (depth > 12 || seen.has(value)) return '[…]';
  seen.add(value);
  if (Buffer.isBuffer(value) || ArrayBuffer.isView(value)) return `[${value.byteLength} bytes]`;
  if (Array.isArray(value)) return value.map((v) => redactValue(v, depth + 1, seen));
  if (value instanceof Error) {
    const e: Record<string, unknown> = { type: value.name, message: redactString(value.message) };
    const extra = value as unknown as Record<string, unknown>;
    for (const k of Object.keys(extra))
      e[k] = CARD_KEYS.has(normaliseKey(k)) ? REDACTED : redactValue(extra[k], depth + 1, seen);
    if (value.stack) e.stack = redactString(value.stack);
    return e;
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] =
      CARD_KEYS.has(normaliseKey(k)) && v !== undefined && v !== null
        ? REDACTED
        : redactValue(v, depth + 1, seen);
  }
  return out;
}
