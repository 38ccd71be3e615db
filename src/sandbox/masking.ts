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
  // The gateway's 14-digit date-times (yyyyMMddHHmmss): one in ten passes the Luhn check, and masked it would no
  // longer say when (a certification analyst, the follow-on's stamp compared with its authorization's).
  if (k === 'transactionlocaldatetime' || k === 'exchangeratetimestamp') return value;
  if (REDACTED_KEYS.has(k)) return '[REDACTED]';
  // Any Luhn-valid card-number-like run elsewhere (a link field, a comment) is masked too.
  if (!mayHoldCardNumber(value)) return value;
  return value.replace(CARD_NUMBER_RUN, (run) => {
    const digits = run.replace(/[ -]/g, '');
    return luhnValid(digits) ? maskPan(digits) : run;
  });
}

/** Sets own property `k` of `out`; a JSON key "__proto__" is an own property too (no prototype change). */
function setOwn(out: Record<string, unknown>, k: string, v: unknown): void {
  if (k === '__proto__')
    Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  else out[k] = v;
}

/**
 * `value` (found under `key`; `''` for the body and for array elements) with every string masked. An object or array
 * in which nothing changes is returned as it is: only the path to a masked string is copied, so a body is not copied
 * whole for the one or two values that change.
 */
function masked(value: unknown, key: string, known: KnownEmvTags | undefined): unknown {
  if (typeof value === 'string') return maskString(value, key, known);
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      const m = masked(v, '', known);
      if (m === v) continue;
      copy ??= value.slice();
      copy[i] = m;
    }
    return copy ?? value;
  }
  const source = value as Record<string, unknown>;
  const keys = Object.keys(source);
  let copy: Record<string, unknown> | undefined;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i] ?? '';
    const v = source[k];
    const m = masked(v, k, known);
    if (copy === undefined) {
      if (m === v) continue;
      copy = {};
      for (let j = 0; j < i; j++) setOwn(copy, keys[j] ?? '', source[keys[j] ?? '']);
    }
    setOwn(copy, k, m);
  }
  return copy ?? value;
}

/**
 * The masked copy of a request body, as the JSON text the ledger keeps (DESIGN.md, money safety rule 4): PANs masked
 * (first 6 + last 4), track data, security codes and cryptograms redacted, and an `emv.tags` carrying a never-send
 * tag redacted. `body` is a parsed JSON body (what `JSON.parse` returns). Only the objects on the path to a masked
 * value are copied, and `JSON.stringify` writes the text flat (one string per request in the ledger, not a rope).
 * `known` passes tags the service already decoded, so they are not decoded twice.
 */
export function maskedBodyJson(body: unknown, known?: KnownEmvTags): string {
  return JSON.stringify(masked(body, '', known));
}
