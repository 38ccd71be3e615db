/**
 * A captured message as the rules read it: its service, its fields by dotted path, and its EMV tags decoded once
 * (with src/emv, never with the client's builders).
 */
import { bcdToDigits, bytesToHex, decodeTlv, flattenTlv, hexToBytes, TlvError } from '../../src/emv/index.js';
import { currencyByAlpha } from '../../src/money/index.js';
import type { CapturedMessage } from '../session.js';
import type { CertifiedService } from '../service.js';

export const TAGS_FIELD = 'pointOfSaleInformation.emv.tags';

export interface MessageView {
  readonly index: number;
  readonly message: CapturedMessage;
  readonly service: CertifiedService;
  readonly targetId: string | undefined;
  /** Decoded primitive tags, first occurrence wins, values as upper-case hex; undefined when no tags are sent. */
  readonly tags: ReadonlyMap<string, string> | undefined;
  /** Why `emv.tags` could not be decoded (no tag rule runs then). */
  readonly tagsError: string | undefined;
  /**
   * Tags sent whose values a capture masked (card data): present, value unknown. When the whole of `emv.tags` is
   * masked, {@link tagsMasked} is set and `tags` is undefined.
   */
  readonly maskedTags: ReadonlySet<string>;
  /** `emv.tags` was sent but masked whole (`[REDACTED]`): present, nothing readable. */
  readonly tagsMasked: boolean;
}

/**
 * Whether a value is card data masked by a capture rather than a value the terminal sent: starred digits
 * (`476173******0119=****`), `#` fill, a run of X, or a redaction marker (`[REDACTED]`, `[…]`). The one test every
 * rule uses: a masked value is skipped, never reported (captures keep no card data, DESIGN.md money rule 4).
 */
export function isMasked(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  return /[*#…]|X{4,}|x{4,}|\[(?:REDACTED|MASKED)\]/i.test(value) || /^(?:REDACTED|MASKED)$/i.test(value);
}

/** Whether `tag` was sent, readable or masked. */
export function hasTag(view: MessageView, tag: string): boolean {
  return view.tags?.has(tag) === true || view.maskedTags.has(tag);
}

/** Dotted paths split once: the rules read the same few dozen paths in every message. */
const PATH_KEYS = new Map<string, readonly string[]>();

function keysOf(path: string): readonly string[] {
  let keys = PATH_KEYS.get(path);
  if (keys === undefined) {
    keys = path.split('.');
    // Bounded: paths come from the rule tables, but a finding path built from data must not grow the cache forever.
    if (PATH_KEYS.size < 4096) PATH_KEYS.set(path, keys);
  }
  return keys;
}

/** The value at a dotted path of the body, or undefined. */
export function field(body: unknown, path: string): unknown {
  let at: unknown = body;
  for (const key of keysOf(path)) {
    if (typeof at !== 'object' || at === null || Array.isArray(at)) return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

/** A field as text: strings as they are, numbers in decimal (the gateway accepts both for codes like catLevel). */
export function text(body: unknown, path: string): string | undefined {
  const v = field(body, path);
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return undefined;
}

const AMOUNT_PATTERNS = new Map<number, RegExp>();

/** `^(digits)\.(exponent digits)$` (no point for exponent 0), built once per exponent. */
export function amountPattern(exponent: number): RegExp {
  let re = AMOUNT_PATTERNS.get(exponent);
  if (re === undefined) {
    re = exponent === 0 ? /^(\d+)$/ : new RegExp(`^(\\d+)\\.(\\d{${exponent}})$`);
    AMOUNT_PATTERNS.set(exponent, re);
  }
  return re;
}

/**
 * An amount in minor units when it is a plain decimal string with exactly the currency's exponent, else undefined.
 */
export function minorUnits(amount: unknown, currency: string | undefined): number | undefined {
  if (typeof amount !== 'string' || currency === undefined) return undefined;
  const c = currencyByAlpha(currency);
  if (c === undefined) return undefined;
  const m = amountPattern(c.exponent).exec(amount);
  if (!m) return undefined;
  const minor = Number(`${m[1] ?? ''}${m[2] ?? ''}`);
  return Number.isSafeInteger(minor) ? minor : undefined;
}

/** The digits of a BCD tag (format n), or undefined. */
export function tagDigits(tags: ReadonlyMap<string, string> | undefined, tag: string): string | undefined {
  const hex = tags?.get(tag);
  if (hex === undefined) return undefined;
  try {
    return bcdToDigits(hexToBytes(hex));
  } catch {
    return undefined;
  }
}

const NO_TAGS: ReadonlySet<string> = new Set();

function decodeHex(hex: string): Map<string, string> {
  const tags = new Map<string, string>();
  for (const entry of flattenTlv(decodeTlv(hexToBytes(hex)))) {
    if (!tags.has(entry.tag)) tags.set(entry.tag, bytesToHex(entry.value));
  }
  return tags;
}

interface DecodedTags {
  tags?: Map<string, string>;
  masked?: Set<string>;
  wholeMasked?: boolean;
  error?: string;
}

function decodeTags(body: unknown): DecodedTags {
  const raw = field(body, TAGS_FIELD);
  if (raw === undefined) return {};
  if (typeof raw !== 'string') return { error: 'emv.tags must be a hex string' };
  try {
    if (/^[0-9A-Fa-f*]*$/.test(raw) && raw.includes('*')) {
      // A capture starred the values of card-data tags and kept their tag and length: decode twice with the stars
      // as 0 and as F; a tag whose value differs between the two was masked.
      const low = decodeHex(raw.replaceAll('*', '0'));
      const high = decodeHex(raw.replaceAll('*', 'F'));
      const tags = new Map<string, string>();
      const masked = new Set<string>();
      for (const [tag, value] of low) {
        if (high.get(tag) === value) tags.set(tag, value);
        else masked.add(tag);
      }
      return { tags, masked };
    }
    // Hex never looks masked: a redaction marker shows only when decoding fails.
    return { tags: decodeHex(raw) };
  } catch (e) {
    if (e instanceof TlvError) {
      if (isMasked(raw)) return { wholeMasked: true };
      return { error: `malformed TLV (${e.code} at offset ${e.offset})` };
    }
    throw e;
  }
}

export function viewMessage(
  index: number,
  message: CapturedMessage,
  service: CertifiedService,
  targetId: string | undefined,
): MessageView {
  const { tags, masked, wholeMasked, error } = decodeTags(message.body);
  return {
    index,
    message,
    service,
    targetId,
    tags,
    tagsError: error,
    maskedTags: masked ?? NO_TAGS,
    tagsMasked: wholeMasked === true,
  };
}
