import { describe, expect, it } from 'vitest';
import {
  checkExpiry,
  detectNetwork,
  interpretServiceCode,
  luhnValid,
  parseTag57,
  parseTrack1,
  parseTrack2,
} from './card.js';
import { CardDataError } from './errors.js';

function cardError(fn: () => unknown): CardDataError {
  try {
    fn();
  } catch (e) {
    if (e instanceof CardDataError) return e;
    throw e;
  }
  throw new Error('expected a CardDataError');
}

// LRCs below were computed by hand from ISO/IEC 7813 (reference/reader-protocol.md), not by the code under test.
const TRACK2 = ';4761739001010119=22122011758928889?';
const TRACK2_LRC = `${TRACK2}8`;
const TRACK1 = '%B4761739001010119^VISA ACQUIRER TEST/CARD 01^2212201175892888900000000?';
const TRACK1_LRC = `${TRACK1}B`;

describe('parseTrack2', () => {
  it.each([
    ['with sentinels and LRC', TRACK2_LRC, true],
    ['with sentinels', TRACK2, false],
    ['without sentinels', '4761739001010119=22122011758928889', false],
  ])('parses track 2 %s', (_why, track, lrcChecked) => {
    expect(parseTrack2(track)).toEqual({
      pan: '4761739001010119',
      expiry: '2212',
      serviceCode: '201',
      discretionaryData: '1758928889',
      lrcChecked,
    });
  });

  it('rejects a wrong LRC', () => {
    expect(cardError(() => parseTrack2(`${TRACK2}9`)).code).toBe('CARD_BAD_LRC');
  });

  it.each([
    ['no separator', '4761739001010119', 'CARD_BAD_TRACK'],
    ['a letter', '47617390010101A9=2212201', 'CARD_BAD_TRACK'],
    ['a short PAN', '47617=2212201', 'CARD_BAD_PAN'],
    ['month 13', '4761739001010119=2213201', 'CARD_BAD_EXPIRY'],
    ['a two-digit service code', '4761739001010119=221220', 'CARD_BAD_SERVICE_CODE'],
    ['more than 40 characters', `4761739001010119=2212201${'0'.repeat(20)}`, 'CARD_BAD_TRACK'],
    ['two characters after the end sentinel', `${TRACK2}88`, 'CARD_BAD_TRACK'],
  ])('rejects track 2 with %s', (_why, track, code) => {
    const e = cardError(() => parseTrack2(track));
    expect(e.code).toBe(code);
    expect(e.message).not.toContain('4761739001010119');
  });
});

describe('parseTrack1', () => {
  it.each([
    ['with sentinels and LRC', TRACK1_LRC, true],
    ['with sentinels', TRACK1, false],
    ['without sentinels', TRACK1.slice(1, -1), false],
  ])('parses track 1 %s', (_why, track, lrcChecked) => {
    expect(parseTrack1(track)).toEqual({
      pan: '4761739001010119',
      name: 'VISA ACQUIRER TEST/CARD 01',
      expiry: '2212',
      serviceCode: '201',
      discretionaryData: '175892888900000000',
      lrcChecked,
    });
  });

  it.each([
    ['a wrong LRC', `${TRACK1}C`, 'CARD_BAD_LRC'],
    ['format code A', TRACK1.replace('%B', '%A'), 'CARD_BAD_TRACK'],
    ['one field separator', '%B4761739001010119^2212201?', 'CARD_BAD_TRACK'],
    ['a lower-case character', TRACK1.replace('VISA', 'visa'), 'CARD_BAD_TRACK'],
    ['a one-letter name', '%B4761739001010119^X^2212201?', 'CARD_BAD_TRACK'],
  ])('rejects track 1 with %s', (_why, track, code) => {
    expect(cardError(() => parseTrack1(track)).code).toBe(code);
  });
});

describe('parseTag57', () => {
  it('parses the tag 57 of reference/reader-protocol.md', () => {
    expect(parseTag57('4761739001010119D22122011758928889')).toEqual({
      pan: '4761739001010119',
      expiry: '2212',
      serviceCode: '201',
      discretionaryData: '1758928889',
    });
  });

  it('parses tag 57 bytes of binaryfoo/emv-bertlv contact-visa-in.txt', () => {
    const value = Uint8Array.from(Buffer.from('4761340000000050D171220112523451', 'hex'));
    expect(parseTag57(value)).toMatchObject({ pan: '4761340000000050', expiry: '1712', serviceCode: '201' });
  });

  it('drops the single F pad nibble (emv-utils README vector)', () => {
    expect(parseTag57('40123456789095D2512201197339300F')).toEqual({
      pan: '40123456789095',
      expiry: '2512',
      serviceCode: '201',
      discretionaryData: '197339300',
    });
  });

  it.each([
    ['not hex', 'XYZ', 'CARD_BAD_TRACK'],
    ['no D separator', '4761739001010119', 'CARD_BAD_TRACK'],
    ['more than 19 bytes', `4761739001010119D2212201${'0'.repeat(18)}`, 'CARD_BAD_TRACK'],
    ['a hex letter in the PAN', '47617390010101A9D2212201', 'CARD_BAD_PAN'],
    ['a truncated expiry', '4761739001010119D22F', 'CARD_BAD_EXPIRY'],
  ])('rejects tag 57 with %s', (_why, hex, code) => {
    expect(cardError(() => parseTag57(hex)).code).toBe(code);
  });
});

describe('luhnValid', () => {
  it.each([
    '4761739001010119',
    '5413339000001513',
    '5555555555554444',
    '79927398713',
    '4111111111111111',
    '5413330089600044',
  ])('accepts %s', (pan) => expect(luhnValid(pan)).toBe(true));

  it.each(['4111111111111112', '79927398710', '', '4', '4111-1111-1111-1111'])('rejects "%s"', (pan) =>
    expect(luhnValid(pan)).toBe(false),
  );
});

describe('detectNetwork', () => {
  it.each([
    ['4111111111111111', 'visa', '001'],
    ['4761739001010119', 'visa', '001'],
    ['5555555555554444', 'mastercard', '002'],
    ['5105105105105100', 'mastercard', '002'],
    ['2222420000001113', 'mastercard', '002'],
    ['2720990000000000', 'mastercard', '002'],
    ['2221000000000009', 'mastercard', '002'],
    ['2220990000000000', 'unknown', null],
    ['2721000000000000', 'unknown', null],
    ['378282246310005', 'amex', null],
    ['6011111111111117', 'discover', null],
    ['3530111333300000', 'jcb', null],
    ['30569309025904', 'diners', null],
    ['6200000000000005', 'unionpay', null],
    ['6759649826438453', 'maestro', null],
    ['12', 'unknown', null],
  ])('detects %s as %s (card type %s)', (pan, network, cardType) => {
    expect(detectNetwork(pan)).toEqual({ network, cardType });
  });
});

describe('checkExpiry', () => {
  it('keeps a card valid through the last day of its expiry month, by the terminal clock', () => {
    expect(checkExpiry('2502', new Date(2025, 1, 28, 23, 59, 59))).toEqual({
      expired: false,
      lastValidDay: '2025-02-28',
    });
    expect(checkExpiry('2502', new Date(2025, 2, 1, 0, 0, 0)).expired).toBe(true);
    expect(checkExpiry('2402', new Date(2024, 0, 1)).lastValidDay).toBe('2024-02-29');
  });

  it.each(['2513', '2500', '251', 'YYMM'])('rejects the expiry "%s"', (expiry) => {
    expect(cardError(() => checkExpiry(expiry, new Date())).code).toBe('CARD_BAD_EXPIRY');
  });
});

describe('interpretServiceCode', () => {
  it('flags a chip card (2xx) so that a swipe follows the fallback rules', () => {
    expect(interpretServiceCode('201')).toEqual({
      chip: true,
      interchange: 'international',
      authorization: 'normal',
      pinRequired: false,
      pinIfPinPad: false,
      goodsAndServices: true,
    });
    expect(interpretServiceCode('601').chip).toBe(true);
  });

  it('reads a magnetic-stripe-only card with online authorization and PIN required', () => {
    expect(interpretServiceCode('120')).toMatchObject({
      chip: false,
      authorization: 'online',
      pinRequired: true,
    });
  });

  it('reads ATM-only and cash-only codes as not for goods and services', () => {
    expect(interpretServiceCode('103').goodsAndServices).toBe(false);
    expect(interpretServiceCode('504')).toMatchObject({ interchange: 'national', goodsAndServices: false });
  });

  it('rejects a service code that is not three digits', () => {
    expect(cardError(() => interpretServiceCode('2O1')).code).toBe('CARD_BAD_SERVICE_CODE');
  });
});
