import { describe, expect, it } from 'vitest';
import { digitsToBcd, isValidYymmdd, TAG_DICTIONARY, validateTagValue } from './dictionary.js';
import { EmvValueError } from './errors.js';
import { bytesToHex, hexToBytes } from './hex.js';

function valueError(tag: string, hex: string): EmvValueError {
  try {
    validateTagValue(tag, hexToBytes(hex));
  } catch (e) {
    if (e instanceof EmvValueError) return e;
    throw e;
  }
  throw new Error('expected an EmvValueError');
}

describe('tag dictionary', () => {
  it('holds every tag of reference/emv.md with its format and length range', () => {
    const expected: Array<[string, string, number, number]> = [
      ['4F', 'b', 5, 16],
      ['50', 'ans', 1, 16],
      ['57', 'b', 1, 19],
      ['5A', 'cn', 1, 10],
      ['5F24', 'n', 3, 3],
      ['5F2A', 'n', 2, 2],
      ['5F34', 'n', 1, 1],
      ['82', 'b', 2, 2],
      ['84', 'b', 5, 16],
      ['95', 'b', 5, 5],
      ['9A', 'n', 3, 3],
      ['9C', 'n', 1, 1],
      ['9F02', 'n', 6, 6],
      ['9F03', 'n', 6, 6],
      ['9F10', 'b', 1, 32],
      ['9F12', 'ans', 1, 16],
      ['9F1A', 'n', 2, 2],
      ['9F26', 'b', 8, 8],
      ['9F27', 'b', 1, 1],
      ['9F33', 'b', 3, 3],
      ['9F34', 'b', 3, 3],
      ['9F35', 'n', 1, 1],
      ['9F36', 'b', 2, 2],
      ['9F37', 'b', 4, 4],
      ['9F39', 'n', 1, 1],
      ['9F66', 'b', 4, 4],
      ['9F6E', 'b', 4, 32],
    ];
    for (const [tag, format, min, max] of expected) {
      const def = TAG_DICTIONARY.get(tag);
      expect([tag, def?.format, def?.minLength, def?.maxLength]).toEqual([tag, format, min, max]);
    }
  });
});

describe('validateTagValue', () => {
  it.each([
    ['9F02', '000000001250'],
    ['9A', '240229'],
    ['5F24', '251231'],
    ['5A', '4761739001010119'],
    ['5A', '476173900101011F'],
    ['50', '56495341204352454449'],
    ['9F10', '0110A00009248400000000000000000029FF'],
    ['5F2A', '0826'],
    ['9F1A', '0840'],
  ])('accepts %s = %s', (tag, hex) => {
    expect(() => validateTagValue(tag, hexToBytes(hex))).not.toThrow();
  });

  it.each([
    ['9F02', '0000000012', 'EMV_BAD_LENGTH'],
    ['9F02', '00000000125A', 'EMV_BAD_FORMAT'],
    ['9A', '250230', 'EMV_BAD_DATE'],
    ['9A', '230229', 'EMV_BAD_DATE'],
    ['9A', '251300', 'EMV_BAD_DATE'],
    ['5A', '47F1', 'EMV_BAD_FORMAT'],
    ['5A', 'FFFF', 'EMV_BAD_FORMAT'],
    ['50', '0A', 'EMV_BAD_FORMAT'],
    ['9F26', '01', 'EMV_BAD_LENGTH'],
    ['9F10', '', 'EMV_BAD_LENGTH'],
    ['DF01', '01', 'EMV_UNKNOWN_TAG'],
    // n3 in two bytes (reference/emv.md): three digits right-justified, so the first nibble is the leading zero.
    ['5F2A', '1826', 'EMV_BAD_FORMAT'],
    ['9F1A', '9826', 'EMV_BAD_FORMAT'],
  ])('rejects %s = "%s" with %s, naming the tag but not the value', (tag, hex, code) => {
    const e = valueError(tag, hex);
    expect([e.code, e.tag]).toEqual([code, tag]);
    expect(e.message).toContain(tag);
    if (hex.length > 4) expect(e.message).not.toContain(hex);
  });
});

describe('BCD helpers', () => {
  it('right-justifies digits with leading zeros', () => {
    expect(bytesToHex(digitsToBcd('1250', 6))).toBe('000000001250');
    expect(bytesToHex(digitsToBcd('826', 2))).toBe('0826');
  });

  it('knows leap years and month lengths', () => {
    expect(isValidYymmdd('240229')).toBe(true);
    expect(isValidYymmdd('250229')).toBe(false);
    expect(isValidYymmdd('250431')).toBe(false);
    expect(isValidYymmdd('25043')).toBe(false);
  });
});
