/**
 * Card data out of evidence (DESIGN.md, money safety rule 4): what a certification run writes shows the analyst every
 * field of every message, the EMV tags readable, and no card data — the PAN in track data keeps its first 6 and last
 * 4 digits (the BIN the rules compare), card-data tags (which must never be sent anyway) lose their values, and any
 * other Luhn-valid digit run is removed.
 */
import {
  bytesToHex,
  decodeTlv,
  encodeTlv,
  hexToBytes,
  maskPan,
  CARD_DATA_TAGS,
  type TlvNode,
} from '../../src/emv/index.js';
import { isLuhnCardNumber } from '../../src/log/index.js';

/**
 * Track 1 (`%B` PAN `^` name `^` …), track 2 (`;` PAN `=` …) or track 2 equivalent data (tag 57's PAN `D` …): PAN
 * masked, everything after it starred.
 */
export function maskTrackData(track: string): string {
  return track.replace(
    /(%?B)?(\d{12,19})([=^Dd])([^?;%]*)/g,
    (_m, b: string | undefined, pan: string, sep: string, rest: string) =>
      `${b ?? ''}${maskPan(pan)}${sep}${'*'.repeat(rest.length)}`,
  );
}

/** Tags that do not decode are not shown: which bytes are card data cannot be told. */
function unreadable(hex: string): string {
  return `[unreadable TLV, ${Math.ceil(hex.length / 2)} bytes]`;
}

/** One TLV object as hex, card-data values starred, at any depth of a constructed object (a template). */
function maskNode(node: TlvNode): string {
  const encoded = bytesToHex(encodeTlv([node]));
  if (node.children !== undefined) {
    const content = bytesToHex(encodeTlv(node.children));
    return encoded.slice(0, encoded.length - content.length) + node.children.map(maskNode).join('');
  }
  return node.value !== undefined && CARD_DATA_TAGS.has(node.tag)
    ? encoded.slice(0, encoded.length - node.value.length * 2) + '*'.repeat(node.value.length * 2)
    : encoded;
}

/** EMV tags as hex TLV with the values of card-data tags starred; anything unreadable is scrubbed whole. */
export function maskEmvTags(hex: string): string {
  try {
    const nodes = decodeTlv(hexToBytes(hex));
    let plain = '';
    let out = '';
    for (const node of nodes) {
      plain += bytesToHex(encodeTlv([node]));
      out += maskNode(node);
    }
    // Re-encoding gives back the same text for canonical TLV; anything else is not ours to show.
    return plain.toUpperCase() === hex.toUpperCase() ? out : unreadable(hex);
  } catch {
    return unreadable(hex);
  }
}

const CARD_NUMBER_KEYS = new Set(['number', 'pan', 'cardnumber', 'accountnumber']);
const CARD_SECRET_KEYS = new Set([
  'securitycode',
  'cvv',
  'cvc',
  'expirationmonth',
  'expirationyear',
  'expirydate',
]);

/**
 * Any other text: a Luhn-valid run of 13–19 digits (not a transactionLocalDateTime: the log redaction's rule,
 * `isLuhnCardNumber`) is masked as a PAN, track data inside it is masked. Unlike the
 * log redaction (which removes every long hex or digit run), gateway ids and reconciliation ids stay readable: they
 * are the evidence an analyst matches against the gateway's records.
 */
export function maskText(s: string): string {
  if (s.length < 13) return s;
  const tracks = /[=^]/.test(s) ? maskTrackData(s) : s;
  return tracks.replace(/(?<!\d)\d{13,19}(?!\d)/g, (m) => (isLuhnCardNumber(m) ? maskPan(m) : m));
}

function normalise(k: string): string {
  return k.toLowerCase().replace(/[^a-z0-9]/g, '');
}

/** A deep copy of a request or answer body with card data masked; structure and every other value kept. */
export function maskCardData(value: unknown, key = '', depth = 0): unknown {
  if (depth > 64) return '[…]';
  if (typeof value === 'string') {
    const k = normalise(key);
    if (k === 'trackdata') return maskTrackData(value);
    if (k === 'tags' && /^[0-9A-Fa-f]*$/.test(value)) return maskEmvTags(value);
    if (CARD_NUMBER_KEYS.has(k) && /^\d{12,19}$/.test(value)) return maskPan(value);
    if (CARD_SECRET_KEYS.has(k)) return '*'.repeat(value.length);
    return maskText(value);
  }
  if (Array.isArray(value)) return value.map((v) => maskCardData(v, key, depth + 1));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = maskCardData(v, k, depth + 1);
    return out;
  }
  return value;
}
