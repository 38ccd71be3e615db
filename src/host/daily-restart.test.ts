import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/index.js';
import { DailyRestart, maintenanceWindowOf } from './daily-restart.js';

function setup(startIso: string) {
  let now = new Date(startIso);
  let idle: { idle: true } | { idle: false; why: string } = { idle: true };
  const restarts: string[] = [];
  const daily = new DailyRestart({
    window: { start: '03:00', end: '05:00' },
    timeZone: 'UTC',
    idle: { idle: () => idle },
    restart: (reason) => restarts.push(reason),
    now: () => now,
  });
  return {
    daily,
    restarts,
    at: (iso: string) => (now = new Date(iso)),
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

  it('uses the fleet maintenance window, or its default without a fleet link', () => {
    expect(maintenanceWindowOf(parseConfig({}, 'test'))).toEqual({ start: '03:00', end: '05:00' });
  });
});
