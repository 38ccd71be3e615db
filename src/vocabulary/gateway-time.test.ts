import { describe, expect, it } from 'vitest';
import { isDigitDateTime, isoDateTimeMs, isoOfUtcTimeStamp, utcTimeStamp } from './gateway-time.js';

describe('isoDateTimeMs', () => {
  it('reads an ISO 8601 date-time with seconds and a zone as the instant it stands for', () => {
    expect(isoDateTimeMs('2026-11-30T10:00:00Z')).toBe(Date.UTC(2026, 10, 30, 10, 0, 0));
    expect(isoDateTimeMs('2026-11-30T10:00:00.25Z')).toBe(Date.UTC(2026, 10, 30, 10, 0, 0, 250));
    expect(isoDateTimeMs('2026-11-30T10:00:00.123456789Z')).toBe(Date.UTC(2026, 10, 30, 10, 0, 0, 123));
    expect(isoDateTimeMs('2026-11-30T11:30:00+01:30')).toBe(Date.UTC(2026, 10, 30, 10, 0, 0));
    expect(isoDateTimeMs('2026-11-30T05:00:00-05:00')).toBe(Date.UTC(2026, 10, 30, 10, 0, 0));
    expect(isoDateTimeMs('2024-02-29T00:00:00Z')).toBe(Date.UTC(2024, 1, 29));
  });

  it('refuses any other text, and dates and times that do not exist', () => {
    for (const text of [
      '2026-01-01 junk',
      '2026-11-30',
      '2026-11-30T10:00Z',
      '2026-11-30T10:00:00',
      '2026-11-30t10:00:00z',
      '2026-11-30T10:00:00.Z',
      '2026-11-30T10:00:00.1234567890Z',
      '2026-11-30T10:00:00+0100',
      ' 2026-11-30T10:00:00Z',
      '2026-11-30T10:00:00Z\n',
      '+002026-11-30T10:00:00Z',
      '2025-02-29T00:00:00Z',
      '2026-04-31T00:00:00Z',
      '2026-13-01T00:00:00Z',
      '2026-11-30T24:00:00Z',
      '2026-11-30T10:60:00Z',
      '2026-12-31T23:59:60Z',
      '2026-11-30T10:00:00+24:00',
      '1969-12-31T23:59:59Z',
      '9999-12-31T23:00:00-02:00',
      'Mon, 30 Nov 2026 10:00:00 GMT',
      '20261130100000',
    ])
      expect(isoDateTimeMs(text), text).toBeUndefined();
    expect(isoDateTimeMs(Date.UTC(2026, 0, 1))).toBeUndefined();
    expect(isoDateTimeMs(undefined)).toBeUndefined();
  });
});

describe('utcTimeStamp', () => {
  it('writes an instant as 14 digits yyyyMMddHHmmss in UTC, keeping the second a fraction falls in', () => {
    expect(utcTimeStamp(Date.UTC(2026, 10, 30, 10, 0, 0))).toBe('20261130100000');
    expect(utcTimeStamp(Date.UTC(2026, 0, 2, 3, 4, 5, 999))).toBe('20260102030405');
    expect(utcTimeStamp(isoDateTimeMs('2026-12-01T00:30:15+01:00')!)).toBe('20261130233015');
  });

  it('refuses an instant no four-digit year can write', () => {
    expect(() => utcTimeStamp(-1)).toThrow(RangeError);
    expect(() => utcTimeStamp(Date.UTC(10000, 0, 1))).toThrow(RangeError);
    expect(() => utcTimeStamp(Number.NaN)).toThrow(RangeError);
  });
});

describe('isDigitDateTime and isoOfUtcTimeStamp', () => {
  it('take 14 digits of a real date and time only', () => {
    expect(isDigitDateTime('20261130100000')).toBe(true);
    expect(isDigitDateTime('20240229235959')).toBe(true);
    for (const text of [
      '2026-11-30T10:00:00Z',
      '2026113010000',
      '202611301000000',
      '20250229000000',
      '20261131000000',
      '20261130240000',
      '20261130106000',
      '20261130100060',
      '2026113010000Z',
    ])
      expect(isDigitDateTime(text), text).toBe(false);
    expect(isDigitDateTime(20261130100000)).toBe(false);
  });

  it('write a stamp back as the ISO 8601 UTC time it stands for', () => {
    expect(isoOfUtcTimeStamp('20261130100000')).toBe('2026-11-30T10:00:00Z');
    expect(isoOfUtcTimeStamp('2026-11-30T10:00:00Z')).toBeUndefined();
    const stamp = utcTimeStamp(Date.UTC(2026, 5, 7, 8, 9, 10));
    expect(isoDateTimeMs(isoOfUtcTimeStamp(stamp))).toBe(Date.UTC(2026, 5, 7, 8, 9, 10));
  });
});
