/**
 * Card data: track 1 / track 2 (ISO/IEC 7813, reference/reader-protocol.md "Magnetic-stripe data"), tag 57, Luhn,
 * expiry, network detection from the BIN and service codes. Pure functions; errors never contain the data.
 */
import { CardDataError } from './errors.js';
import { bytesToHex, hexToBytes } from './hex.js';
import type { CardType } from './networks.js';
import { TlvError } from './errors.js';

/** The fields common to every card data source. Holds card data: never log it, never send it to the UI. */
export interface CardData {
  /** 12–19 digits. */
  pan: string;
  /** YYMM. */
  expiry: string;
  /** Three digits. */
  serviceCode: string;
  /** Issuer discretionary data after the service code (digits or, for tag 57, hex nibbles). */
  discretionaryData: string;
}

/** Track 1 adds the cardholder name. */
export interface Track1Data extends CardData {
  /** Cardholder name as encoded (`SURNAME/GIVEN`), trailing spaces kept. */
  name: string;
  /** True when the track carried an LRC and it matched; false when there was none to check. */
  lrcChecked: boolean;
}

export interface Track2Data extends CardData {
  /** True when the track carried an LRC and it matched; false when there was none to check. */
  lrcChecked: boolean;
}

const PAN_RE = /^\d{12,19}$/;
const EXPIRY_RE = /^\d{2}(0[1-9]|1[0-2])$/;

function checkFields(pan: string, expiry: string, serviceCode: string, source: string): void {
  if (!PAN_RE.test(pan)) throw new CardDataError('CARD_BAD_PAN', `${source}: the PAN is not 12-19 digits`);
  if (!EXPIRY_RE.test(expiry))
    throw new CardDataError('CARD_BAD_EXPIRY', `${source}: the expiry is not YYMM`);
  if (!/^\d{3}$/.test(serviceCode))
    throw new CardDataError('CARD_BAD_SERVICE_CODE', `${source}: the service code is not three digits`);
}

/**
 * LRC of ISO/IEC 7813: XOR of every character's value (track 1: ASCII − 0x20, 6 bits; track 2: ASCII − 0x30,
 * 4 bits) from the start sentinel through the end sentinel; the LRC character is that value plus the same offset.
 */
function lrcOf(text: string, base: number, mask: number): number {
  let lrc = 0;
  for (let i = 0; i < text.length; i++) lrc ^= (text.charCodeAt(i) - base) & mask;
  return lrc;
}

/**
 * Splits `[start]body[end[lrc]]`: sentinels optional (readers often strip them), LRC checked when present.
 * Returns the body and whether an LRC was checked.
 */
function unwrapTrack(
  s: string,
  start: string,
  base: number,
  mask: number,
  source: string,
): { body: string; lrcChecked: boolean } {
  let body = s;
  let hasStart = false;
  if (body.startsWith(start)) {
    hasStart = true;
    body = body.slice(1);
  }
  const end = body.indexOf('?');
  if (end < 0) return { body, lrcChecked: false };
  const after = body.slice(end + 1);
  body = body.slice(0, end);
  if (after.length === 0) return { body, lrcChecked: false };
  if (after.length > 1) throw new CardDataError('CARD_BAD_TRACK', `${source}: data after the end sentinel`);
  // Without the start sentinel the LRC cannot be recomputed as the standard defines it.
  if (!hasStart) throw new CardDataError('CARD_BAD_TRACK', `${source}: LRC without a start sentinel`);
  const expected = lrcOf(`${start}${body}?`, base, mask);
  if (((after.charCodeAt(0) - base) & 0xff) !== expected)
    throw new CardDataError('CARD_BAD_LRC', `${source}: the LRC does not match`);
  return { body, lrcChecked: true };
}

/**
 * Parses track 1 format B: `%B` PAN `^` NAME `^` YYMM service-code discretionary `?` LRC. Sentinels and LRC are
 * optional; the format code `B` is required. At most 79 characters.
 *
 * @throws CardDataError `CARD_BAD_TRACK`, `CARD_BAD_LRC`, `CARD_BAD_PAN`, `CARD_BAD_EXPIRY`, `CARD_BAD_SERVICE_CODE`.
 */
export function parseTrack1(s: string): Track1Data {
  if (s.length > 79) throw new CardDataError('CARD_BAD_TRACK', 'track 1: longer than 79 characters');
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x5f)
      throw new CardDataError('CARD_BAD_TRACK', `track 1: character ${i} is not allowed`);
  }
  const { body, lrcChecked } = unwrapTrack(s, '%', 0x20, 0x3f, 'track 1');
  if (!body.startsWith('B')) throw new CardDataError('CARD_BAD_TRACK', 'track 1: format code is not B');
  const parts = body.slice(1).split('^');
  if (parts.length !== 3) throw new CardDataError('CARD_BAD_TRACK', 'track 1: expected PAN^NAME^DATA');
  const [pan = '', name = '', rest = ''] = parts;
  if (name.length < 2 || name.length > 26)
    throw new CardDataError('CARD_BAD_TRACK', 'track 1: the name is not 2-26 characters');
  const expiry = rest.slice(0, 4);
  const serviceCode = rest.slice(4, 7);
  checkFields(pan, expiry, serviceCode, 'track 1');
  return { pan, name, expiry, serviceCode, discretionaryData: rest.slice(7), lrcChecked };
}

/**
 * Parses track 2: `;` PAN `=` YYMM service-code discretionary `?` LRC. Sentinels and LRC are optional. At most 40
 * characters.
 *
 * @throws CardDataError `CARD_BAD_TRACK`, `CARD_BAD_LRC`, `CARD_BAD_PAN`, `CARD_BAD_EXPIRY`, `CARD_BAD_SERVICE_CODE`.
 */
export function parseTrack2(s: string): Track2Data {
  if (s.length > 40) throw new CardDataError('CARD_BAD_TRACK', 'track 2: longer than 40 characters');
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x30 || c > 0x3f)
      throw new CardDataError('CARD_BAD_TRACK', `track 2: character ${i} is not allowed`);
  }
  const { body, lrcChecked } = unwrapTrack(s, ';', 0x30, 0x0f, 'track 2');
  const sep = body.indexOf('=');
  if (sep < 0) throw new CardDataError('CARD_BAD_TRACK', 'track 2: no = separator');
  const pan = body.slice(0, sep);
  const rest = body.slice(sep + 1);
  if (!/^\d*$/.test(rest))
    throw new CardDataError('CARD_BAD_TRACK', 'track 2: non-digits after the separator');
  const expiry = rest.slice(0, 4);
  const serviceCode = rest.slice(4, 7);
  checkFields(pan, expiry, serviceCode, 'track 2');
  return { pan, expiry, serviceCode, discretionaryData: rest.slice(7), lrcChecked };
}

/**
 * Parses tag 57 (Track 2 Equivalent Data): PAN nibbles, `D`, YYMM, service code, discretionary nibbles, one `F` pad
 * nibble when the count is odd (reference/reader-protocol.md). Accepts the value as bytes or hex text.
 *
 * @throws CardDataError `CARD_BAD_TRACK` (also for hex that is not hex), or a field error.
 */
export function parseTag57(hexOrBytes: string | Uint8Array): CardData {
  let bytes: Uint8Array;
  if (typeof hexOrBytes === 'string') {
    try {
      bytes = hexToBytes(hexOrBytes);
    } catch (e) {
      if (e instanceof TlvError) throw new CardDataError('CARD_BAD_TRACK', 'tag 57: not hex', { cause: e });
      throw e;
    }
  } else bytes = hexOrBytes;
  if (bytes.length === 0 || bytes.length > 19)
    throw new CardDataError('CARD_BAD_TRACK', 'tag 57: not 1-19 bytes');
  let nibbles = bytesToHex(bytes);
  if (nibbles.endsWith('F')) nibbles = nibbles.slice(0, -1);
  const sep = nibbles.indexOf('D');
  if (sep < 0) throw new CardDataError('CARD_BAD_TRACK', 'tag 57: no D separator');
  const pan = nibbles.slice(0, sep);
  const rest = nibbles.slice(sep + 1);
  const expiry = rest.slice(0, 4);
  const serviceCode = rest.slice(4, 7);
  checkFields(pan, expiry, serviceCode, 'tag 57');
  return { pan, expiry, serviceCode, discretionaryData: rest.slice(7) };
}

/** Luhn (mod 10) check; false for anything that is not 2 or more digits. */
export function luhnValid(pan: string): boolean {
  if (!/^\d{2,}$/.test(pan)) return false;
  let sum = 0;
  let double = false;
  for (let i = pan.length - 1; i >= 0; i--) {
    let d = pan.charCodeAt(i) - 0x30;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

/** A card network recognised from the BIN. */
export type CardNetwork =
  'visa' | 'mastercard' | 'maestro' | 'amex' | 'discover' | 'diners' | 'jcb' | 'unionpay' | 'unknown';

/** Result of {@link detectNetwork}. */
export interface NetworkDetection {
  network: CardNetwork;
  /** Gateway card type for the parking section, or null: this network is not supported for parking (spec 001). */
  cardType: CardType | null;
}

/**
 * BIN ranges, first match wins, so the narrow ranges come before the wide ones. Only Visa (`001`) and Mastercard
 * (`002`, with the 2221–2720 series) are parking card types (spec 001, gateway.md §6).
 */
const BIN_RANGES: ReadonlyArray<{
  from: string;
  to: string;
  network: CardNetwork;
  cardType: CardType | null;
}> = [
  { from: '4', to: '4', network: 'visa', cardType: '001' },
  { from: '51', to: '55', network: 'mastercard', cardType: '002' },
  { from: '2221', to: '2720', network: 'mastercard', cardType: '002' },
  { from: '34', to: '34', network: 'amex', cardType: null },
  { from: '37', to: '37', network: 'amex', cardType: null },
  { from: '300', to: '305', network: 'diners', cardType: null },
  { from: '36', to: '36', network: 'diners', cardType: null },
  { from: '38', to: '39', network: 'diners', cardType: null },
  { from: '3528', to: '3589', network: 'jcb', cardType: null },
  { from: '6011', to: '6011', network: 'discover', cardType: null },
  { from: '622126', to: '622925', network: 'discover', cardType: null },
  { from: '644', to: '649', network: 'discover', cardType: null },
  { from: '65', to: '65', network: 'discover', cardType: null },
  { from: '62', to: '62', network: 'unionpay', cardType: null },
  { from: '50', to: '50', network: 'maestro', cardType: null },
  { from: '56', to: '58', network: 'maestro', cardType: null },
  { from: '6', to: '6', network: 'maestro', cardType: null },
];

/** The network of a PAN from its BIN; `cardType` null means "not supported for parking". */
export function detectNetwork(pan: string): NetworkDetection {
  if (!/^\d{6,19}$/.test(pan)) return { network: 'unknown', cardType: null };
  for (const r of BIN_RANGES) {
    const prefix = pan.slice(0, r.from.length);
    if (prefix >= r.from && prefix <= r.to) return { network: r.network, cardType: r.cardType };
  }
  return { network: 'unknown', cardType: null };
}

/** Result of {@link checkExpiry}. */
export interface ExpiryCheck {
  /** True when `now` is after the last day of the expiry month. */
  expired: boolean;
  /** The last day the card is valid, `YYYY-MM-DD` (cards are valid through the end of their expiry month). */
  lastValidDay: string;
}

/**
 * Checks a YYMM expiry against the terminal clock (local time of `now`; years 2000–2099).
 *
 * @throws CardDataError `CARD_BAD_EXPIRY` when `expiry` is not YYMM with a month 01–12.
 */
export function checkExpiry(expiry: string, now: Date): ExpiryCheck {
  if (!EXPIRY_RE.test(expiry)) throw new CardDataError('CARD_BAD_EXPIRY', 'the expiry is not YYMM');
  const year = 2000 + Number(expiry.slice(0, 2));
  const month = Number(expiry.slice(2, 4));
  const lastDay = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const nowKey = now.getFullYear() * 100 + (now.getMonth() + 1);
  return {
    expired: nowKey > year * 100 + month,
    lastValidDay: `${year}-${expiry.slice(2, 4)}-${String(lastDay).padStart(2, '0')}`,
  };
}

/** Meaning of a magnetic-stripe service code (ISO/IEC 7813). */
export interface ServiceCodeInfo {
  /** Digit 1 is 2 or 6: the card has a chip, so a swipe is a fallback and the chip must be tried first. */
  chip: boolean;
  interchange: 'international' | 'national' | 'private' | 'test' | 'reserved';
  /** Digit 2: authorization processing. */
  authorization: 'normal' | 'online' | 'online-except-bilateral' | 'reserved';
  /** Digit 3 requires a PIN (0, 3, 5). */
  pinRequired: boolean;
  /** Digit 3 prompts for a PIN when a PIN pad is present (6, 7). */
  pinIfPinPad: boolean;
  /** Digit 3 allows goods and services (everything except 3 ATM only and 4 cash only). */
  goodsAndServices: boolean;
}

/**
 * Interprets a three-digit service code.
 *
 * @throws CardDataError `CARD_BAD_SERVICE_CODE` when `code` is not three digits.
 */
export function interpretServiceCode(code: string): ServiceCodeInfo {
  if (!/^\d{3}$/.test(code))
    throw new CardDataError('CARD_BAD_SERVICE_CODE', 'the service code is not three digits');
  const [d1, d2, d3] = [code[0], code[1], code[2]];
  const interchange: ServiceCodeInfo['interchange'] =
    d1 === '1' || d1 === '2'
      ? 'international'
      : d1 === '5' || d1 === '6'
        ? 'national'
        : d1 === '7'
          ? 'private'
          : d1 === '9'
            ? 'test'
            : 'reserved';
  const authorization: ServiceCodeInfo['authorization'] =
    d2 === '0' ? 'normal' : d2 === '2' ? 'online' : d2 === '4' ? 'online-except-bilateral' : 'reserved';
  return {
    chip: d1 === '2' || d1 === '6',
    interchange,
    authorization,
    pinRequired: d3 === '0' || d3 === '3' || d3 === '5',
    pinIfPinPad: d3 === '6' || d3 === '7',
    goodsAndServices: d3 !== '3' && d3 !== '4',
  };
}
