import { describe, expect, it } from 'vitest';
import { maskPan } from './pan.js';

describe('maskPan', () => {
  it.each([
    ['4761739001010119', '476173******0119'],
    ['4761 7390 0101 0119', '476173******0119'],
    ['4761739001010119123', '476173*********9123'],
    ['4761739001010', '476******1010'],
    ['476173900101', '47******0101'],
    ['4761739', '******9'],
    ['12345', '*****'],
    ['', ''],
  ])('masks %s as %s', (pan, masked) => {
    expect(maskPan(pan)).toBe(masked);
  });

  it('never shows more than the first 6 and last 4, and always hides at least 6', () => {
    for (let len = 0; len <= 19; len++) {
      const pan = '1234567890123456789'.slice(0, len);
      const masked = maskPan(pan);
      const visible = [...masked].filter((c) => c !== '*').length;
      expect(masked.length).toBe(len);
      expect(visible).toBeLessThanOrEqual(10);
      expect(len - visible).toBeGreaterThanOrEqual(Math.min(6, len));
      expect(masked.slice(6, -4)).toMatch(/^\**$/);
    }
  });
});
