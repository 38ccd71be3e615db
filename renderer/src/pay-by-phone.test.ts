import { describe, expect, it } from 'vitest';
import { linkQrPixels, timeLeftText } from './view-model.js';

describe('the payment link QR code on screen', () => {
  it('is whole CSS pixels per module, never fewer than 4, and about 4.5 cm (kiosk.md §4)', () => {
    for (const modules of [29, 33, 37, 41, 45, 49, 57]) {
      const px = linkQrPixels(modules);
      expect(px % modules).toBe(0);
      expect(px / modules).toBeGreaterThanOrEqual(4);
      // 4–5 cm at 96 CSS px per inch: 151–189 px, or 4 px per module when the code is larger.
      if (modules <= 45) expect(px).toBeGreaterThanOrEqual(151);
      expect(px <= 200 || px / modules === 4).toBe(true);
    }
  });

  it('counts down in minutes and seconds, the same in every language', () => {
    expect(timeLeftText(300)).toBe('5:00');
    expect(timeLeftText(65)).toBe('1:05');
    expect(timeLeftText(0)).toBe('0:00');
    expect(timeLeftText(-3)).toBe('0:00');
  });
});
