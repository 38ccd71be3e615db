import { describe, expect, it } from 'vitest';
import { localDateTime, lookupTicket, zoneOffsetMs } from './local-time.js';

const formats = new Map<string, Intl.DateTimeFormat>();

/** The wall-clock fields as the platform's formatter gives them for the instant itself. */
function reference(at: Date, timeZone: string): string {
  let format = formats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-GB', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    });
    formats.set(timeZone, format);
  }
  const parts = format.formatToParts(at);
  const get = (type: string): string => parts.find((p) => p.type === type)?.value ?? '';
  return `${get('year')}${get('month')}${get('day')}${get('hour')}${get('minute')}${get('second')}`;
}

// Zones with whole-hour, half-hour (Lord Howe's DST moves by 30 minutes) and 45-minute offsets, both hemispheres.
const TRANSITIONS: [string, string][] = [
  ['Europe/London', '2026-03-29T01:00:00Z'],
  ['Europe/London', '2026-10-25T01:00:00Z'],
  ['America/New_York', '2026-03-08T07:00:00Z'],
  ['America/New_York', '2026-11-01T06:00:00Z'],
  ['Australia/Lord_Howe', '2026-04-04T15:00:00Z'],
  ['Australia/Lord_Howe', '2026-10-03T15:30:00Z'],
  ['Asia/Kathmandu', '2026-06-01T00:00:00Z'],
  ['Pacific/Chatham', '2026-04-04T14:00:00Z'],
];

describe('local time', () => {
  it.each(TRANSITIONS)('gives the wall-clock time in %s around %s, second by second', (zone, iso) => {
    const at = Date.parse(iso);
    // From two hours before to two hours after, in steps that fall on and around each minute's boundary.
    for (let ms = at - 2 * 3_600_000; ms <= at + 2 * 3_600_000; ms += 7_001) {
      const d = new Date(ms);
      expect(localDateTime(d, zone), `${zone} ${d.toISOString()}`).toBe(reference(d, zone));
    }
    for (const edge of [at - 1_000, at - 1, at, at + 1, at + 999, at + 1_000]) {
      const d = new Date(edge);
      expect(localDateTime(d, zone), `${zone} ${d.toISOString()}`).toBe(reference(d, zone));
    }
  });

  it('agrees with the formatter at random instants in several zones, asked in any order', () => {
    let seed = 42;
    const next = (): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const zones = ['UTC', 'Europe/Warsaw', 'Asia/Dubai', 'America/Los_Angeles', 'Australia/Lord_Howe'];
    for (let i = 0; i < 2_000; i++) {
      const d = new Date(Date.UTC(2020, 0, 1) + Math.floor(next() * 10 * 365 * 86_400_000));
      const zone = zones[Math.floor(next() * zones.length)]!;
      expect(localDateTime(d, zone)).toBe(reference(d, zone));
    }
  });

  it('gives the offset of the instant asked about', () => {
    expect(zoneOffsetMs(Date.parse('2026-07-01T12:00:00Z'), 'Europe/London')).toBe(3_600_000);
    expect(zoneOffsetMs(Date.parse('2026-01-01T12:00:00Z'), 'Europe/London')).toBe(0);
    expect(zoneOffsetMs(Date.parse('2026-01-01T12:00:00Z'), 'Asia/Kathmandu')).toBe(20_700_000);
  });

  it('fails on an invalid date or zone as the formatter does', () => {
    expect(() => localDateTime(new Date(Number.NaN), 'Europe/London')).toThrow(RangeError);
    expect(() => localDateTime(new Date(), 'Mars/Olympus_Mons')).toThrow(RangeError);
  });

  it('reads a ticket’s entry time in the terminal’s zone', () => {
    expect(lookupTicket('202607011230001', 'Europe/London')).toEqual({
      found: true,
      ticket: '202607011230001',
      enteredAtMs: Date.parse('2026-07-01T11:30:00Z'),
    });
    expect(lookupTicket('2026-07-01', 'Europe/London')).toEqual({ found: false, ticket: '2026-07-01' });
  });
});
