/** Gateway ids and request fingerprints of the ledger. */
import { createHash, randomFillSync } from 'node:crypto';

/** Random bytes for ids, refilled a page at a time (one call into the CSPRNG per ~180 ids, not five per id). */
const ID_RANDOM = Buffer.alloc(4096);
let idRandomPos = ID_RANDOM.length;

/** A 22-digit gateway id, like the real gateway's: first digit 1-9, then uniform digits (bytes 250-255 skipped). */
export function newId(): string {
  let s = '';
  while (s.length < 22) {
    if (idRandomPos >= ID_RANDOM.length) {
      randomFillSync(ID_RANDOM);
      idRandomPos = 0;
    }
    const b = ID_RANDOM[idRandomPos++] ?? 255;
    if (b >= 250) continue;
    const digit = b % 10;
    if (s.length === 0 && digit === 0) continue;
    s += String(digit);
  }
  return s;
}

/**
 * Canonical JSON of a parsed body: keys sorted at every level, otherwise exactly `JSON.stringify` (the text that
 * ledgers written before this function existed were fingerprinted over), built in one pass.
 */
function canonicalJson(v: unknown): string {
  if (typeof v !== 'object' || v === null) return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) {
    let out = '[';
    for (let i = 0; i < v.length; i++) out += (i > 0 ? ',' : '') + canonicalJson(v[i]);
    return `${out}]`;
  }
  const keys = Object.keys(v).sort();
  let out = '{';
  let first = true;
  for (const k of keys) {
    const value = (v as Record<string, unknown>)[k];
    if (value === undefined || typeof value === 'function') continue;
    out += `${first ? '' : ','}${JSON.stringify(k)}:${canonicalJson(value)}`;
    first = false;
  }
  return `${out}}`;
}

/** Canonical JSON (sorted keys) for DUPLICATE_REQUEST; never stored in clear: hashed. */
export function fingerprint(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('base64');
}
