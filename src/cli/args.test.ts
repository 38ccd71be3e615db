import { describe, expect, it } from 'vitest';
import { parseWholeNumber } from './args.js';

const delay = { unit: 'milliseconds', min: 0, max: 3_600_000, fallback: 60_000 } as const;

describe('parseWholeNumber', () => {
  it('returns the fallback when the option is absent', () => {
    expect(parseWholeNumber(undefined, '--reversal-delay', delay)).toBe(60_000);
  });

  it('accepts whole numbers within the bounds, both included', () => {
    expect(parseWholeNumber('0', '--reversal-delay', delay)).toBe(0);
    expect(parseWholeNumber('120000', '--reversal-delay', delay)).toBe(120_000);
    expect(parseWholeNumber('3600000', '--reversal-delay', delay)).toBe(3_600_000);
  });

  it.each(['3600001', '-1', '1.5', '1e3', ' 5', '', 'soon', '0x10'])(
    'refuses %j with BAD_ARGUMENTS naming the option and the unit',
    (value) => {
      expect(() => parseWholeNumber(value, '--reversal-delay', delay)).toThrowError(
        expect.objectContaining({
          code: 'BAD_ARGUMENTS',
          message: expect.stringMatching(
            /^--reversal-delay takes whole milliseconds from 0 to 3600000/,
          ) as string,
        }) as Error,
      );
    },
  );
});
