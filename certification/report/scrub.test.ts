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
