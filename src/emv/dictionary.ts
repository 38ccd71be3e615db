/**
 * The EMV tags the terminal handles (reference/emv.md "Dictionary"), with their format and length range, and value
 * validation per format. Errors name the tag and never show the value (it may be card data).
 */
import { EmvValueError } from './errors.js';

/**
 * EMV data element formats (EMV Book 3, section 4.3): `n` BCD digits right-justified with leading zeros; `cn` BCD
 * left-justified padded with trailing `F`; `b` binary; `an` alphanumeric; `ans` alphanumeric and special characters.
 */
export type EmvFormat = 'n' | 'cn' | 'b' | 'an' | 'ans';

/** Where a data object comes from in a transaction. */
export type TagSource = 'card' | 'terminal';

/** One dictionary entry. */
export interface TagDefinition {
  /** Upper-case hex tag. */
  readonly tag: string;
  readonly name: string;
  readonly format: EmvFormat;
  /** Smallest accepted value length in bytes. */
  readonly minLength: number;
  /** Largest accepted value length in bytes. */
  readonly maxLength: number;
  readonly source: TagSource;
  /**
   * Format `n` with fewer digits than its bytes hold (n3 in two bytes): the digits are right-justified, so the
   * nibbles before them are leading zeros.
   */
  readonly digits?: number;
  /** The value is a date YYMMDD (format n6). */
  readonly isDate?: boolean;
  /** The value is card data that must never be logged or sent (gateway.md §3 never-send list). */
  readonly cardData?: boolean;
}

/** reference/emv.md "Dictionary", plus the never-send tags of gateway.md §3 so that they can be named. */
const DEFINITIONS: readonly TagDefinition[] = [
  {
    tag: '4F',
    name: 'Application Identifier (ADF name)',
    format: 'b',
    minLength: 5,
    maxLength: 16,
    source: 'card',
  },
  { tag: '50', name: 'Application Label', format: 'ans', minLength: 1, maxLength: 16, source: 'card' },
  {
    tag: '56',
    name: 'Track 1 Data',
    format: 'ans',
    minLength: 1,
    maxLength: 76,
    source: 'card',
    cardData: true,
  },
  {
    tag: '57',
    name: 'Track 2 Equivalent Data',
    format: 'b',
    minLength: 1,
    maxLength: 19,
    source: 'card',
    cardData: true,
  },
  {
    tag: '5A',
    name: 'Application PAN',
    format: 'cn',
    minLength: 1,
    maxLength: 10,
    source: 'card',
    cardData: true,
  },
  {
    tag: '5F20',
    name: 'Cardholder Name',
    format: 'ans',
    minLength: 2,
    maxLength: 26,
    source: 'card',
    cardData: true,
  },
  {
    tag: '5F24',
    name: 'Application Expiration Date',
    format: 'n',
    minLength: 3,
    maxLength: 3,
    source: 'card',
    isDate: true,
    cardData: true,
  },
  {
    tag: '5F2A',
    name: 'Transaction Currency Code',
    format: 'n',
    minLength: 2,
    maxLength: 2,
    digits: 3,
    source: 'terminal',
  },
  { tag: '5F34', name: 'PAN Sequence Number', format: 'n', minLength: 1, maxLength: 1, source: 'card' },
  {
    tag: '82',
    name: 'Application Interchange Profile',
    format: 'b',
    minLength: 2,
    maxLength: 2,
    source: 'card',
  },
  { tag: '84', name: 'Dedicated File Name', format: 'b', minLength: 5, maxLength: 16, source: 'card' },
  {
    tag: '95',
    name: 'Terminal Verification Results',
    format: 'b',
    minLength: 5,
    maxLength: 5,
    source: 'terminal',
  },
  {
    tag: '99',
    name: 'Transaction PIN Data',
    format: 'b',
    minLength: 0,
    maxLength: 255,
    source: 'terminal',
    cardData: true,
  },
  {
    tag: '9A',
    name: 'Transaction Date',
    format: 'n',
    minLength: 3,
    maxLength: 3,
    source: 'terminal',
    isDate: true,
  },
  { tag: '9C', name: 'Transaction Type', format: 'n', minLength: 1, maxLength: 1, source: 'terminal' },
  { tag: '9F02', name: 'Amount, Authorised', format: 'n', minLength: 6, maxLength: 6, source: 'terminal' },
  { tag: '9F03', name: 'Amount, Other', format: 'n', minLength: 6, maxLength: 6, source: 'terminal' },
  {
    tag: '9F0B',
    name: 'Cardholder Name Extended',
    format: 'ans',
    minLength: 27,
    maxLength: 45,
    source: 'card',
    cardData: true,
  },
  { tag: '9F10', name: 'Issuer Application Data', format: 'b', minLength: 1, maxLength: 32, source: 'card' },
  {
    tag: '9F12',
    name: 'Application Preferred Name',
    format: 'ans',
    minLength: 1,
    maxLength: 16,
    source: 'card',
  },
  {
    tag: '9F1A',
    name: 'Terminal Country Code',
    format: 'n',
    minLength: 2,
    maxLength: 2,
    digits: 3,
    source: 'terminal',
  },
  {
    tag: '9F1F',
    name: 'Track 1 Discretionary Data',
    format: 'ans',
    minLength: 1,
    maxLength: 255,
    source: 'card',
    cardData: true,
  },
  {
    tag: '9F20',
    name: 'Track 2 Discretionary Data',
    format: 'cn',
    minLength: 1,
    maxLength: 255,
    source: 'card',
    cardData: true,
  },
  { tag: '9F26', name: 'Application Cryptogram', format: 'b', minLength: 8, maxLength: 8, source: 'card' },
  {
    tag: '9F27',
    name: 'Cryptogram Information Data',
    format: 'b',
    minLength: 1,
    maxLength: 1,
    source: 'card',
  },
  { tag: '9F33', name: 'Terminal Capabilities', format: 'b', minLength: 3, maxLength: 3, source: 'terminal' },
  { tag: '9F34', name: 'CVM Results', format: 'b', minLength: 3, maxLength: 3, source: 'terminal' },
  { tag: '9F35', name: 'Terminal Type', format: 'n', minLength: 1, maxLength: 1, source: 'terminal' },
  {
    tag: '9F36',
    name: 'Application Transaction Counter',
    format: 'b',
    minLength: 2,
    maxLength: 2,
    source: 'card',
  },
  { tag: '9F37', name: 'Unpredictable Number', format: 'b', minLength: 4, maxLength: 4, source: 'terminal' },
  { tag: '9F39', name: 'POS Entry Mode', format: 'n', minLength: 1, maxLength: 1, source: 'terminal' },
  {
    tag: '9F66',
    name: 'Terminal Transaction Qualifiers',
    format: 'b',
    minLength: 4,
    maxLength: 4,
    source: 'terminal',
  },
  {
    tag: '9F6E',
    name: 'Form Factor Indicator / Third Party Data',
    format: 'b',
    minLength: 4,
    maxLength: 32,
    source: 'card',
  },
];

/** The dictionary by tag. */
export const TAG_DICTIONARY: ReadonlyMap<string, TagDefinition> = new Map(DEFINITIONS.map((d) => [d.tag, d]));

/** The dictionary entry of `tag`, or undefined when the tag is not one the terminal knows. */
export function tagDefinition(tag: string): TagDefinition | undefined {
  return TAG_DICTIONARY.get(tag);
}

/** True when every nibble of `value` is a decimal digit (format n). */
export function isBcd(value: Uint8Array): boolean {
  for (const b of value) if (b >> 4 > 9 || (b & 0xf) > 9) return false;
  return true;
}

/** The digits of a BCD value (format n), or undefined when a nibble is not a digit. */
export function bcdToDigits(value: Uint8Array): string | undefined {
  if (!isBcd(value)) return undefined;
  let s = '';
  for (const b of value) s += `${b >> 4}${b & 0xf}`;
  return s;
}

/** True when `yymmdd` (6 digits) is a calendar date in 2000–2099 (EMV dates carry no century). */
export function isValidYymmdd(yymmdd: string): boolean {
  if (!/^\d{6}$/.test(yymmdd)) return false;
  const year = 2000 + Number(yymmdd.slice(0, 2));
  const month = Number(yymmdd.slice(2, 4));
  const day = Number(yymmdd.slice(4, 6));
  if (month < 1 || month > 12 || day < 1) return false;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return day <= daysInMonth;
}

function isCnValid(value: Uint8Array): boolean {
  // Digits, then only F padding: once an F nibble is seen, every following nibble must be F too.
  let padding = false;
  let digits = 0;
  for (const b of value) {
    for (const n of [b >> 4, b & 0xf]) {
      if (n === 0xf) padding = true;
      else if (padding || n > 9) return false;
      else digits++;
    }
  }
  return digits > 0;
}

/**
 * Checks `value` against the dictionary entry of `tag`: length in range, BCD digits for `n` (leading zeros before the
 * digits of an `n` shorter than its bytes, such as n3), digits then `F` padding for `cn`, printable ASCII for
 * `an`/`ans`, and a real calendar date for YYMMDD tags.
 *
 * @throws EmvValueError `EMV_UNKNOWN_TAG`, `EMV_BAD_LENGTH`, `EMV_BAD_FORMAT` or `EMV_BAD_DATE`, naming the tag.
 */
export function validateTagValue(tag: string, value: Uint8Array): void {
  const def = TAG_DICTIONARY.get(tag);
  if (!def) throw new EmvValueError('EMV_UNKNOWN_TAG', tag, `tag ${tag} is not in the EMV dictionary`);
  if (value.length < def.minLength || value.length > def.maxLength) {
    const range = def.minLength === def.maxLength ? `${def.minLength}` : `${def.minLength}-${def.maxLength}`;
    throw new EmvValueError(
      'EMV_BAD_LENGTH',
      tag,
      `tag ${tag} (${def.name}) must be ${range} bytes, got ${value.length}`,
    );
  }
  switch (def.format) {
    case 'n': {
      const digits = bcdToDigits(value);
      if (digits === undefined)
        throw new EmvValueError(
          'EMV_BAD_FORMAT',
          tag,
          `tag ${tag} (${def.name}) must be BCD digits (format n)`,
        );
      if (def.digits !== undefined && !/^0*$/.test(digits.slice(0, digits.length - def.digits)))
        throw new EmvValueError(
          'EMV_BAD_FORMAT',
          tag,
          `tag ${tag} (${def.name}) must be ${def.digits} digits right-justified with leading zeros (format n${def.digits})`,
        );
      if (def.isDate && !isValidYymmdd(digits))
        throw new EmvValueError('EMV_BAD_DATE', tag, `tag ${tag} (${def.name}) is not a valid YYMMDD date`);
      return;
    }
    case 'cn':
      if (!isCnValid(value))
        throw new EmvValueError(
          'EMV_BAD_FORMAT',
          tag,
          `tag ${tag} (${def.name}) must be BCD digits padded with trailing F (format cn)`,
        );
      return;
    case 'an':
    case 'ans': {
      const alnum = def.format === 'an';
      for (const c of value) {
        const ok = alnum
          ? (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)
          : c >= 0x20 && c <= 0x7e;
        if (!ok)
          throw new EmvValueError(
            'EMV_BAD_FORMAT',
            tag,
            `tag ${tag} (${def.name}) must be printable characters (format ${def.format})`,
          );
      }
      return;
    }
    case 'b':
      return;
  }
}

/** Digits as BCD of `bytes` bytes, right-justified with leading zeros (format n). `digits` must be decimal. */
export function digitsToBcd(digits: string, bytes: number): Uint8Array {
  const padded = digits.padStart(bytes * 2, '0');
  const out = new Uint8Array(bytes);
  for (let i = 0; i < bytes; i++) out[i] = parseInt(padded.slice(2 * i, 2 * i + 2), 16);
  return out;
}
