import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/index.js';
import { DailyRestart, maintenanceWindowOf } from './daily-restart.js';

function setup(startIso: string, window = { start: '03:00', end: '05:00' }, timeZone = 'UTC') {
  let now = new Date(startIso);
  // The monotonic clock: moves with the wall clock in `later`, not when the wall clock alone is set (`at`).
  let monotonic = 5_000;
  let idle: { idle: true } | { idle: false; why: string } = { idle: true };
  const restarts: string[] = [];
  const daily = new DailyRestart({
    window,
    timeZone,
    idle: { idle: () => idle },
    restart: (reason) => restarts.push(reason),
    now: () => now,
    monotonicMs: () => monotonic,
  });
  return {
    daily,
    restarts,
    /** Time passes: both clocks move. */
    at: (iso: string) => {
      const next = new Date(iso);
      monotonic += next.getTime() - now.getTime();
      now = next;
    },
    /** The wall clock alone is set (NTP stepping it, a clock without a battery set at boot). */
    stepped: (iso: string) => (now = new Date(iso)),
    busy: (why: string) => (idle = { idle: false, why }),
    free: () => (idle = { idle: true }),
  };
}

describe('daily restart', () => {
  it('restarts once in the window, at the first idle moment', () => {
    const t = setup('2026-11-24T12:00:00Z');
    expect(t.daily.check()).toBe(false);
    t.at('2026-11-25T03:00:00Z');
    t.busy('a customer session is in progress');
    expect(t.daily.check()).toBe(false);
    t.busy('1 authorization(s) open');
    t.at('2026-11-25T03:30:00Z');
    expect(t.daily.check()).toBe(false);
    t.free();
    t.at('2026-11-25T03:31:00Z');
    expect(t.daily.check()).toBe(true);
    expect(t.daily.check()).toBe(false);
    expect(t.restarts).toHaveLength(1);
  });

  it('does not restart again in the window it started in, but in the next one', () => {
    const t = setup('2026-11-25T03:02:00Z');
    expect(t.daily.check()).toBe(false);
    t.at('2026-11-25T12:00:00Z');
    expect(t.daily.check()).toBe(false);
    t.at('2026-11-26T03:00:00Z');
    expect(t.daily.check()).toBe(true);
  });

  it('lets a window spent busy pass without a restart', () => {
    const t = setup('2026-11-24T12:00:00Z');
    t.busy('journal entries are in flight or of unknown outcome');
    t.at('2026-11-25T04:59:00Z');
    expect(t.daily.check()).toBe(false);
    t.free();
    t.at('2026-11-25T05:00:00Z');
    expect(t.daily.check()).toBe(false);
    expect(t.restarts).toEqual([]);
  });

  it('restarts once on the night the clocks go back, though the window comes twice', () => {
    // Europe/Berlin, 2026-10-25: 03:00 CEST goes back to 02:00 CET, so 02:30–03:00 happens twice. The first pass
    // restarts the terminal; the restarted one starts inside the window, leaves it at 03:00 CEST = 02:00 CET, and
    // must not restart again an hour later at 02:30 CET.
    const t = setup('2026-10-25T00:31:00Z', { start: '02:30', end: '03:00' }, 'Europe/Berlin');
    expect(t.daily.check()).toBe(false);
    t.at('2026-10-25T01:00:00Z');
    expect(t.daily.check()).toBe(false);
    t.at('2026-10-25T01:30:00Z');
    expect(t.daily.check()).toBe(false);
    t.at('2026-10-26T01:30:00Z');
    expect(t.daily.check()).toBe(true);
    expect(t.restarts).toHaveLength(1);
  });

  it('does not restart again when NTP steps the clock back out of the window it restarted in', () => {
    // A clock ten minutes fast restarted the terminal at 03:00 (really 02:50); NTP sets it right just after.
    const t = setup('2026-11-25T03:00:30Z');
    expect(t.daily.check()).toBe(false);
    t.stepped('2026-11-25T02:50:40Z');
    expect(t.daily.check()).toBe(false);
    t.at('2026-11-25T03:00:40Z');
    expect(t.daily.check()).toBe(false);
    expect(t.restarts).toEqual([]);
  });

  it('does not restart a terminal just booted whose clock NTP steps into the window', () => {
    // No battery-backed clock: the terminal starts at the time saved at the last shutdown, then NTP sets it.
    const t = setup('2026-11-24T18:00:00Z');
    expect(t.daily.check()).toBe(false);
    t.stepped('2026-11-25T03:20:00Z');
    expect(t.daily.check()).toBe(false);
    t.at('2026-11-26T03:00:00Z');
    expect(t.daily.check()).toBe(true);
  });

  it('restarts once a day in a window open all day (start equal to end)', () => {
    const t = setup('2026-11-24T12:00:00Z', { start: '00:00', end: '00:00' });
    expect(t.daily.check()).toBe(false);
    t.at('2026-11-25T11:00:00Z');
    expect(t.daily.check()).toBe(false);
    t.at('2026-11-25T12:00:00Z');
    expect(t.daily.check()).toBe(true);
    t.at('2026-11-25T13:00:00Z');
    expect(t.daily.check()).toBe(false);
    expect(t.restarts).toHaveLength(1);
  });

  it('does not restart, nor throw, when the idle check fails (a journal on a failing disk)', () => {
    const restarts: string[] = [];
    let monotonic = 0;
    const daily = new DailyRestart({
      window: { start: '03:00', end: '05:00' },
      timeZone: 'UTC',
      idle: {
        idle: () => {
          throw new Error('SQLITE_IOERR: disk I/O error');
        },
      },
      restart: (reason) => restarts.push(reason),
      now: () => new Date('2026-11-25T03:30:00Z'),
      monotonicMs: () => monotonic,
    });
    monotonic = 2 * 86_400_000;
    expect(daily.check()).toBe(false);
    expect(restarts).toEqual([]);
  });

  it('uses the fleet maintenance window, or its default without a fleet link', () => {
    expect(maintenanceWindowOf(parseConfig({}, 'test'))).toEqual({ start: '03:00', end: '05:00' });
  });
});
