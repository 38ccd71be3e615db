import { describe, expect, it } from 'vitest';
import { SandboxClock } from './clock.js';
import { FaultQueue } from './fault-queue.js';
import { MAX_QUEUED_FAULTS } from './limits.js';

describe('FaultQueue', () => {
  it('hands each fault to the first request it matches, oldest first', () => {
    const q = new FaultQueue();
    q.schedule([{ kind: 'status-500', path: '/captures' }, { kind: 'timeout-502' }]);
    expect(q.take('POST', '/pts/v2/payments')?.kind).toBe('timeout-502');
    expect(q.take('POST', '/pts/v2/payments')).toBeUndefined();
    expect(q.take('POST', '/pts/v2/payments/1/captures')?.kind).toBe('status-500');
    expect(q.list()).toEqual([]);
  });

  it('refuses an unknown kind and more than the bound, queuing nothing', () => {
    const q = new FaultQueue();
    expect(() => q.schedule([{ kind: 'nope' as 'status-500' }])).toThrow(/unknown fault kind/);
    const many = Array.from({ length: MAX_QUEUED_FAULTS + 1 }, () => ({ kind: 'status-500' as const }));
    expect(() => q.schedule(many)).toThrow(/at most/);
    expect(q.list()).toEqual([]);
  });
});

describe('SandboxClock', () => {
  it('adds the advanced offset to its base clock and forgets it on reset', () => {
    const clock = new SandboxClock(() => new Date('2026-11-22T10:00:00Z'));
    clock.advance(60_000);
    expect(clock.now().toISOString()).toBe('2026-11-22T10:01:00.000Z');
    expect(clock.offsetMs()).toBe(60_000);
    expect(() => clock.advance(-1)).toThrow(/non-negative/);
    clock.reset();
    expect(clock.now().toISOString()).toBe('2026-11-22T10:00:00.000Z');
  });
});
