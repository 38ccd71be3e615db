import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { AmountError, formatMoney, parseDecimal, toDecimalString } from './amount.js';
import { currencyByNumeric, requireCurrency } from './currency.js';

describe('amounts', () => {
  it('writes decimal strings with the exponent of the currency', () => {
    expect(toDecimalString(1250, 'EUR')).toBe('12.50');
    expect(toDecimalString(5, 'USD')).toBe('0.05');
    expect(toDecimalString(0, 'EUR')).toBe('0.00');
    expect(toDecimalString(1250, 'JPY')).toBe('1250');
    expect(toDecimalString(1250, 'KWD')).toBe('1.250');
  });

  it('parses gateway amounts given as strings or numbers', () => {
    expect(parseDecimal('12.50', 'EUR')).toBe(1250);
    expect(parseDecimal('12.5', 'EUR')).toBe(1250);
    expect(parseDecimal(12.5, 'EUR')).toBe(1250);
    expect(parseDecimal('12', 'EUR')).toBe(1200);
    expect(parseDecimal('0.00', 'EUR')).toBe(0);
    expect(parseDecimal('1250', 'JPY')).toBe(1250);
  });

  it('refuses amounts that would need rounding or are not plain decimals', () => {
    expect(() => parseDecimal('12.505', 'EUR')).toThrow(AmountError);
    expect(() => parseDecimal('-1.00', 'EUR')).toThrow(AmountError);
    expect(() => parseDecimal('1e3', 'EUR')).toThrow(AmountError);
    expect(() => parseDecimal('', 'EUR')).toThrow(AmountError);
    expect(() => toDecimalString(1.5, 'EUR')).toThrow(AmountError);
  });

  it('round-trips every amount through its decimal string', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 999_999_999_999 }),
        fc.constantFrom('EUR', 'JPY', 'KWD'),
        (m, c) => {
          expect(parseDecimal(toDecimalString(m, c), c)).toBe(m);
        },
      ),
    );
  });

  it('formats for display with the currency symbol', () => {
    expect(formatMoney(1250, 'EUR', 'en-GB')).toBe('€12.50');
    expect(formatMoney(1250, 'JPY', 'en-GB')).toBe('JP¥1,250');
  });

  it('knows numeric codes with leading zeros', () => {
    expect(currencyByNumeric('36')?.alpha).toBe('AUD');
    expect(requireCurrency('EUR').numeric).toBe('978');
    expect(() => requireCurrency('XXX')).toThrow(/XXX/);
  });
});
