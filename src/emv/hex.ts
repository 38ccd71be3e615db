import { TlvError } from './errors.js';

const HEX_DIGITS = '0123456789ABCDEF';
/** Byte → two upper-case hex characters, precomputed: the codec's hot path formats every tag. */
const BYTE_TO_HEX: readonly string[] = Array.from(
  { length: 256 },
  (_, b) => `${HEX_DIGITS[b >> 4] ?? ''}${HEX_DIGITS[b & 0xf] ?? ''}`,
);

/** Nibble value of an ASCII code, -1 when not a hex digit; indexable by char code. */
const NIBBLE = new Int8Array(128).fill(-1);
for (let i = 0; i < 10; i++) NIBBLE[0x30 + i] = i;
for (let i = 0; i < 6; i++) {
  NIBBLE[0x41 + i] = 10 + i;
  NIBBLE[0x61 + i] = 10 + i;
}

/** Longest value {@link bytesToHex} formats by concatenation; longer ones are formatted natively. */
const CONCAT_MAX_BYTES = 16;

/**
 * Upper-case hex of `b` (empty string for an empty array). Short values (most tags) are concatenated from the table;
 * a longer one (a whole tag set, a field 55) goes through Node's native hex: concatenation makes a string object per
 * byte for the garbage collector (200 bytes: 1.9-2.3 µs and about 8 KB of garbage, natively 0.4 µs).
 */
export function bytesToHex(b: Uint8Array): string {
  if (b.length > CONCAT_MAX_BYTES)
    return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex').toUpperCase();
  let s = '';
  for (let i = 0; i < b.length; i++) s += BYTE_TO_HEX[b[i] ?? 0] ?? '';
  return s;
}

/** Upper-case hex of one byte. */
export function byteToHex(b: number): string {
  return BYTE_TO_HEX[b & 0xff] ?? '';
}

function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

/**
 * Bytes of a hex string; either case; spaces, tabs and line breaks are ignored anywhere (vectors are often printed
 * grouped). Throws {@link TlvError} `TLV_BAD_HEX` for any other character (offset = its index in `hex`) or for an odd
 * number of hex digits (offset = `hex.length`).
 */
export function hexToBytes(hex: string): Uint8Array {
  // One pass for the usual input (even length, no whitespace); the first whitespace sends it to the general pass.
  if (hex.length % 2 === 0) {
    const out = new Uint8Array(hex.length / 2);
    let i = 0;
    for (; i < hex.length; i += 2) {
      const a = hex.charCodeAt(i);
      const b = hex.charCodeAt(i + 1);
      const hi = a < 128 ? (NIBBLE[a] ?? -1) : -1;
      const lo = b < 128 ? (NIBBLE[b] ?? -1) : -1;
      if (hi < 0 || lo < 0) break;
      out[i >> 1] = (hi << 4) | lo;
    }
    if (i >= hex.length) return out;
  }
  return hexToBytesSpaced(hex);
}

/** {@link hexToBytes} of input with whitespace, an odd length or a bad character (which it reports). */
function hexToBytesSpaced(hex: string): Uint8Array {
  let digits = 0;
  for (let i = 0; i < hex.length; i++) {
    const c = hex.charCodeAt(i);
    if (isWhitespace(c)) continue;
    if (c >= 128 || (NIBBLE[c] ?? -1) < 0)
      throw new TlvError('TLV_BAD_HEX', `character ${i} is not a hex digit`, i);
    digits++;
  }
  if (digits % 2 !== 0) throw new TlvError('TLV_BAD_HEX', 'odd number of hex digits', hex.length);
  const out = new Uint8Array(digits / 2);
  let hi = -1;
  let o = 0;
  for (let i = 0; i < hex.length; i++) {
    const c = hex.charCodeAt(i);
    if (isWhitespace(c)) continue;
    const n = NIBBLE[c] ?? 0;
    if (hi < 0) hi = n;
    else {
      out[o++] = (hi << 4) | n;
      hi = -1;
    }
  }
  return out;
}

/** True when `hex` is non-empty, even-length and only hex digits (no whitespace): the canonical wire form. */
export function isCanonicalHex(hex: string): boolean {
  // The regular expression engine's compiled loop costs about half of a loop over the characters.
  return CANONICAL_HEX.test(hex);
}

const CANONICAL_HEX = /^(?:[0-9A-Fa-f]{2})+$/;
