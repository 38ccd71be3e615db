/** Gateway ids and request fingerprints of the ledger. */
import { hash, randomFillSync } from 'node:crypto';

/** Random bytes for ids, refilled a page at a time (one call into the CSPRNG per ~400 ids, not one per digit). */
const ID_RANDOM = Buffer.alloc(4096);
let idRandomPos = ID_RANDOM.length;
/** Per-process sequence: ids issued in the same millisecond differ in it before their random digits. */
let idSequence = 0;

function randomDigits(count: number): string {
  let s = '';
  while (s.length < count) {
    if (idRandomPos >= ID_RANDOM.length) {
      randomFillSync(ID_RANDOM);
      idRandomPos = 0;
    }
    const b = ID_RANDOM[idRandomPos++] ?? 255;
    if (b < 250) s += String(b % 10);
  }
  return s;
}

/**
 * A 22-digit gateway id shaped like the real gateway's request ids, which begin with the time they were issued: the
 * Unix time in seconds without its leading digit (nine digits; the documented example 4465837560045000001541 begins
 * with 446583756, the time 1446583756 of November 2015 without its 1), then three digits of milliseconds, four of a
 * per-process sequence and six random ones. So ids rise with time as the real gateway's do, ids of one millisecond
 * rise with the sequence, and no two ids of this process are equal unless 10,000 are issued in one millisecond and
 * their random digits also agree.
 */
export function newId(now: Date): string {
  const ms = Math.max(0, Math.floor(now.getTime()));
  const seconds = Math.floor(ms / 1000) % 1_000_000_000;
  idSequence = (idSequence + 1) % 10_000;
  return (
    String(seconds).padStart(9, '0') +
    String(ms % 1000).padStart(3, '0') +
    String(idSequence).padStart(4, '0') +
    randomDigits(6)
  );
}

/**
 * What may make `JSON.stringify` escape a character of a string: a quote, a backslash, a control character (it
 * escapes U+0000–U+001F) or a lone surrogate. Without any, the JSON text of a string is the string in quotes; with one,
 * `JSON.stringify` itself writes it.
 */
const ESCAPED_IN_JSON = /["\\\p{Cc}\p{Cs}]/u;

/** `JSON.stringify(s)`, without calling it for the usual string that needs no escape. */
function jsonString(s: string): string {
  return ESCAPED_IN_JSON.test(s) ? JSON.stringify(s) : `"${s}"`;
}

/**
 * Canonical JSON of a parsed body: keys sorted at every level, otherwise exactly `JSON.stringify` (the text that
 * ledgers written before this function existed were fingerprinted over), built in one pass. Keys already in order
 * are not sorted again (`>` compares strings as the default sort does, by UTF-16 code units).
 */
function canonicalJson(v: unknown): string {
  if (typeof v === 'string') return jsonString(v);
  if (typeof v !== 'object' || v === null) return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) {
    let out = '[';
    for (let i = 0; i < v.length; i++) out += (i > 0 ? ',' : '') + canonicalJson(v[i]);
    return `${out}]`;
  }
  const keys = Object.keys(v);
  for (let i = 1; i < keys.length; i++) {
    if ((keys[i - 1] ?? '') > (keys[i] ?? '')) {
      keys.sort();
      break;
    }
  }
  let out = '{';
  let first = true;
  for (const k of keys) {
    const value = (v as Record<string, unknown>)[k];
    if (value === undefined || typeof value === 'function') continue;
    out += `${first ? '' : ','}${jsonString(k)}:${canonicalJson(value)}`;
    first = false;
  }
  return `${out}}`;
}

/** Canonical JSON (sorted keys) for DUPLICATE_REQUEST; never stored in clear: hashed. */
export function fingerprint(body: unknown): string {
  return hash('sha256', canonicalJson(body), 'base64');
}
