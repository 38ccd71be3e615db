import { describe, expect, it } from 'vitest';
import { containsCardNumber, isCardNumber, maskCardNumbers } from './card-numbers-in-text.js';

describe('card numbers in text', () => {
  it('masks whole groups of a grouped card number and keeps what is around it', () => {
    expect(maskCardNumbers('card 4761 7390 0101 0119 used')).toBe('card **** used');
    expect(maskCardNumbers('ticket 2026 0001 and 4111-1111-1111-1111')).toBe('ticket 2026 0001 and ****');
  });

  it('leaves timestamps, ticket numbers and long ids readable', () => {
    expect(maskCardNumbers('2026112407300001')).toBe('2026112407300001');
    expect(maskCardNumbers('7312345678901234567890')).toBe('7312345678901234567890');
  });

  it('reads any separators only when asked', () => {
    const dotted = 'pay 4111.1111.1111.1111 now';
    expect(containsCardNumber(dotted)).toBe(false);
    expect(containsCardNumber(dotted, { separators: 'any' })).toBe(true);
    expect(containsCardNumber('4111 / 1111 - 1111.1111', { separators: 'any' })).toBe(true);
  });

  it('counts a Luhn-valid run of an unknown network only when told to', () => {
    // 13 digits starting with 1 (no network), Luhn-valid.
    const digits = '1000000000009';
    expect(isCardNumber(digits)).toBe(false);
    expect(isCardNumber(digits, false)).toBe(true);
    expect(containsCardNumber(`ref ${digits}`, { knownNetworkOnly: false })).toBe(true);
  });
});
