import { describe, expect, it } from 'vitest';
import { announcesSecond, secondsLeft, secondsText } from './accessibility.js';

describe('the "more time" countdown', () => {
  it('counts whole seconds up to the expiry, never below zero', () => {
    const now = Date.parse('2030-01-01T10:00:00Z');
    expect(secondsLeft('2030-01-01T10:00:20Z', 99, now)).toBe(20);
    expect(secondsLeft('2030-01-01T10:00:19.200Z', 99, now)).toBe(20);
    expect(secondsLeft('2030-01-01T09:59:00Z', 99, now)).toBe(0);
  });

  it('falls back to the seconds the terminal sent when the expiry cannot be read', () => {
    expect(secondsLeft('not a time', 25)).toBe(25);
  });

  it('speaks at the start, every ten seconds and each of the last five', () => {
    const spoken = [30, 29, 21, 20, 11, 10, 6, 5, 4, 1, 0].filter((n) => announcesSecond(n, false));
    expect(spoken).toEqual([30, 20, 10, 5, 4, 1, 0]);
    expect(announcesSecond(27, true)).toBe(true);
  });

  it('says the seconds with the plural rule of the language', () => {
    expect(secondsText(1, 'en-GB')).toBe('1 second');
    expect(secondsText(20, 'en-GB')).toBe('20 seconds');
    expect(secondsText(20, 'de-DE')).toBe('20 Sekunden');
  });
});
