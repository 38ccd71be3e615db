import { describe, expect, it } from 'vitest';
import { redactString } from '../../src/log/index.js';
import { scrubCardNumbers, scrubCardNumbersDeep } from './scrub.js';

describe('scrubCardNumbers', () => {
  it('removes a Luhn-valid card number, alone or grouped by spaces or dashes', () => {
    expect(scrubCardNumbers('pan 4111111111111111 end')).toBe('pan [REDACTED] end');
    expect(scrubCardNumbers('4111 1111 1111 1111')).toBe('[REDACTED]');
    expect(scrubCardNumbers('"5555-5555-5555-4444"')).toBe('"[REDACTED]"');
  });

  it('keeps what the runner masked on purpose: masked PANs, EMV tags with starred values, gateway ids', () => {
    const kept = [
      '411111******1111',
      ';411111******1111=********?',
      '9F02060000000025009F03060000000000005F2A0209789A032503015A08****************5F340101',
      '7412345678901234567890',
      'T01JNQ8ZQ0ABCDEFGHJKMNPQRS',
    ];
    for (const s of kept) expect(scrubCardNumbers(s)).toBe(s);
  });

  it('keeps digit runs that are not Luhn-valid and transactionLocalDateTime values', () => {
    expect(scrubCardNumbers('4111111111111112')).toBe('4111111111111112');
    expect(scrubCardNumbers('20250301093000')).toBe('20250301093000');
  });
});

describe('scrubCardNumbers reads card numbers as the log redaction does', () => {
  // The card numbers the log redaction removes (src/log/logger.test.ts): a number of a card network with any
  // separators or in full-width digits. A certification report used to keep them.
  it.each([
    'cardholder wrote 4111.1111.1111.1111',
    'cardholder wrote 4111/1111/1111/1111',
    'cardholder wrote 4111  1111  1111  1111',
    'cardholder wrote 4111 / 1111 / 1111 / 1111',
    'cardholder wrote ４１１１１１１１１１１１１１１１',
    'cardholder wrote ４１１１．１１１１．１１１１．１１１１',
  ])('removes a card number written with other separators or full-width digits: %s', (text) => {
    expect(redactString(text)).toBe('cardholder wrote [REDACTED]');
    expect(scrubCardNumbers(text)).toBe('cardholder wrote [REDACTED]');
  });

  it('removes them from every string of a report value, keys included', () => {
    const report = { note: 'pan 5555.5555.5555.4444', 'card ４１１１ １１１１ １１１１ １１１１': 'x' };
    expect(JSON.stringify(scrubCardNumbersDeep(report))).toBe(
      '{"note":"pan [REDACTED]","card [REDACTED]":"x"}',
    );
  });

  it('keeps text with too few digits for a card number exactly as it was given, full-width or not', () => {
    for (const text of ['ｆｕｌｌ-ｗｉｄｔｈ １２３ text', 'case 4.2 of 11, 3 messages'])
      expect(scrubCardNumbers(text)).toBe(text);
  });
});

describe('scrubCardNumbers on EMV tags', () => {
  // The tags of a tap-and-go pre-authorization as a run sent them: 9F36 0028, then 82 5C00 — the digits
  // "3602002882025" across the length, value, next tag and next length read as a Luhn-valid number.
  const TAGS =
    '9A032611309C01005F2A0208269F1A0208269F02060000000020009F03060000000000005F3401019F3602002882025C008407A0000000031010950500000080009F100706010A03A000009F26087D144211C78915F59F2701809F3303E028C89F34031F03029F37048C3F092C';

  it('keeps tags whose digits read as a card number only across tags, alone and inside a JSON text', () => {
    expect(scrubCardNumbers(TAGS)).toBe(TAGS);
    const body = JSON.stringify({ pointOfSaleInformation: { emv: { tags: TAGS } } }, null, 2);
    expect(scrubCardNumbers(body)).toBe(body);
    expect(scrubCardNumbersDeep({ tags: TAGS })).toEqual({ tags: TAGS });
  });

  it('stars the value of any tag that holds a card number, the structure kept', () => {
    // 9F10 holding a PAN; 5A starred by the runner stays as it is.
    const tags = `9F02060000000025009F10084111111111111111${'5A08'}${'*'.repeat(16)}`;
    const scrubbed = scrubCardNumbers(`"tags": "${tags}"`);
    expect(scrubbed).toBe(`"tags": "9F02060000000025009F1008${'*'.repeat(16)}5A08${'*'.repeat(16)}"`);
    expect(scrubbed).not.toContain('4111111111111111');
  });

  it('still removes a card number written beside tags, and reads a run that is no TLV as text', () => {
    const tags = '9F02060000000025009F03060000000000';
    expect(scrubCardNumbers(`4111 1111 1111 1111 ${tags}`)).toBe(`[REDACTED] ${tags}`);
    expect(scrubCardNumbers('id ABC4111111111111111')).toBe('id ABC[REDACTED]');
  });
});

describe('scrubCardNumbersDeep', () => {
  it('scrubs strings, keys and large integers at any depth and keeps the rest', () => {
    const value = JSON.parse(
      '{"a":[{"b":"x 4111111111111111"}],"4111111111111111":1,"n":4111111111111111,"m":25,"__proto__":{"p":"q"}}',
    ) as unknown;
    const out = scrubCardNumbersDeep(value) as Record<string, unknown>;
    expect(JSON.stringify(out)).toBe(
      '{"a":[{"b":"x [REDACTED]"}],"[REDACTED]":1,"n":"[REDACTED]","m":25,"__proto__":{"p":"q"}}',
    );
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
  });
});
