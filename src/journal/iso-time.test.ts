import { describe, expect, it } from 'vitest';
import { isoTime } from './iso-time.js';

describe('isoTime', () => {
  it('gives the string toISOString gives, for times across the range the journal keeps', () => {
    let seed = 0x2f6b_1d3a;
    const random = (): number => {
      seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
      return seed / 2 ** 32;
    };
    const times: number[] = [0, 1, 999, 1_000, 59_999, 60_000, 951_782_400_000, 1_764_374_400_000];
    // Random times up to the year 9999, then runs of nearby times (the minute's cached prefix used and replaced).
    for (let i = 0; i < 20_000; i++) times.push(Math.floor(random() * 253_402_300_799_999));
    let t = 1_764_374_399_000;
    for (let i = 0; i < 5_000; i++) times.push((t += Math.floor(random() * 997)));
    for (const ms of times) expect(isoTime(ms)).toBe(new Date(ms).toISOString());
  });

  it('leaves times outside 1970–9999 and fractions to toISOString', () => {
    for (const ms of [
      -1, -62_198_755_200_000, 253_402_300_799_999, 253_402_300_800_000, 8.64e15, 1_000.7, -0.5,
    ])
      expect(isoTime(ms)).toBe(new Date(ms).toISOString());
  });

  it('throws RangeError for an invalid time, as toISOString does', () => {
    expect(() => isoTime(Number.NaN)).toThrow(RangeError);
    expect(() => isoTime(8.64e15 + 1)).toThrow(RangeError);
  });
});
