import { describe, expect, it } from 'vitest';
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
