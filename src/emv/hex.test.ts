import { describe, expect, it } from 'vitest';
import type { TlvError } from './errors.js';
import { bytesToHex, hexToBytes, isCanonicalHex } from './hex.js';

function errorOf(fn: () => unknown): TlvError | undefined {
  try {
    fn();
  } catch (e) {
    return e as TlvError;
  }
  return undefined;
}

describe('hex', () => {
  it('round-trips bytes through upper-case hex', () => {
    const bytes = Uint8Array.from({ length: 256 }, (_, i) => i);
    const hex = bytesToHex(bytes);
    expect(hex).toBe(hex.toUpperCase());
    expect(hexToBytes(hex.toLowerCase())).toEqual(bytes);
  });

  it('formats short and long values, and views into a larger buffer, alike', () => {
    const reference = (b: Uint8Array): string =>
      Array.from(b, (x) => x.toString(16).padStart(2, '0').toUpperCase()).join('');
    const whole = Uint8Array.from({ length: 300 }, (_, i) => (i * 37 + 11) & 0xff);
    for (const length of [0, 1, 15, 16, 17, 40, 258]) {
      const view = whole.subarray(7, 7 + length);
      expect(bytesToHex(view)).toBe(reference(view));
      expect(bytesToHex(whole.slice(0, length))).toBe(reference(whole.slice(0, length)));
    }
  });

  it('ignores spaces, tabs and line breaks', () => {
    expect(bytesToHex(hexToBytes(' 9F 02\t06\n00 00 00 00 12 50 '))).toBe('9F0206000000001250');
  });

  it('rejects an odd number of digits and a non-hex character with its index', () => {
    const odd = errorOf(() => hexToBytes('9F0'));
    expect([odd?.code, odd?.offset]).toEqual(['TLV_BAD_HEX', 3]);
    const bad = errorOf(() => hexToBytes('9F 0G'));
    expect([bad?.code, bad?.offset]).toEqual(['TLV_BAD_HEX', 4]);
    // Even length, no whitespace (the one-pass form): the same error, at the same index.
    const unspaced = errorOf(() => hexToBytes('9F02x6'));
    expect([unspaced?.code, unspaced?.offset]).toEqual(['TLV_BAD_HEX', 4]);
    const wide = errorOf(() => hexToBytes('9F\u00e9020'));
    expect([wide?.code, wide?.offset]).toEqual(['TLV_BAD_HEX', 2]);
  });

  it('reads an even-length string whose whitespace comes late', () => {
    expect(bytesToHex(hexToBytes('9F02  0600'))).toBe('9F020600');
    expect(hexToBytes('')).toEqual(new Uint8Array(0));
  });

  it('tells canonical hex from text with spaces or odd length', () => {
    expect(isCanonicalHex('9F02')).toBe(true);
    expect(isCanonicalHex('9F 02')).toBe(false);
    expect(isCanonicalHex('9F0')).toBe(false);
    expect(isCanonicalHex('')).toBe(false);
  });
});
