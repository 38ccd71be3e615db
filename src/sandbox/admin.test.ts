import { describe, expect, it } from 'vitest';
import { adminAnswer, tooManyFaults, type AdminHost } from './admin.js';
import type { Fault } from './triggers.js';

function fakeHost(): AdminHost & { queue: Fault[]; offset: number; reinstated: string[] } {
  const host = {
    queue: [] as Fault[],
    offset: 0,
    reinstated: [] as string[],
    ledger: () => {
      throw new Error('not used');
    },
    consistency: () => ({ ok: true, problems: [] }),
    now: () => new Date(Date.UTC(2026, 0, 1) + host.offset),
    clockOffsetMs: () => host.offset,
    advanceClock: (ms: number) => {
      host.offset += ms;
    },
    faults: () => host.queue,
    scheduleFaults: (list: Fault[]) => {
      host.queue.push(...list);
    },
    clearFaults: () => {
      host.queue = [];
    },
    reset: () => undefined,
    reinstate: (merchantId: string) => {
      host.reinstated.push(merchantId);
      return { merchantId, suspended: false };
    },
  };
  return host;
}

const json = (v: unknown): Buffer => Buffer.from(JSON.stringify(v));
const none = new URLSearchParams();

describe('adminAnswer', () => {
  it('queues, lists and clears faults', () => {
    const host = fakeHost();
    const posted = adminAnswer(
      host,
      'POST',
      '/__sandbox/faults',
      none,
      json({ faults: [{ kind: 'status-500', path: '/captures', method: 'post' }] }),
    );
    expect(posted).toEqual({
      status: 200,
      body: { faults: [{ kind: 'status-500', path: '/captures', method: 'POST' }] },
    });
    expect(adminAnswer(host, 'DELETE', '/__sandbox/faults', none, Buffer.alloc(0))).toEqual({
      status: 200,
      body: { faults: [] },
    });
  });

  it('refuses an unknown fault kind and a queue past the limit', () => {
    const host = fakeHost();
    expect(
      adminAnswer(host, 'POST', '/__sandbox/faults', none, json({ faults: [{ kind: 'nope' }] })).status,
    ).toBe(400);
    host.queue = Array.from({ length: 1000 }, () => ({ kind: 'status-500' as const }));
    const over = adminAnswer(
      host,
      'POST',
      '/__sandbox/faults',
      none,
      json({ faults: [{ kind: 'status-500' }] }),
    );
    expect(over).toMatchObject({ status: 400, body: { error: { code: 'TOO_MANY_FAULTS' } } });
    expect(tooManyFaults(999, 1)).toBeUndefined();
    expect(tooManyFaults(1000, 1)).toMatch(/at most 1000 faults/);
  });

  it('advances the clock by a non-negative integer only', () => {
    const host = fakeHost();
    expect(adminAnswer(host, 'POST', '/__sandbox/clock', none, json({ advanceMs: 1500 }))).toMatchObject({
      status: 200,
      body: { offsetMs: 1500 },
    });
    expect(adminAnswer(host, 'POST', '/__sandbox/clock', none, json({ advanceMs: -1 })).status).toBe(400);
  });

  it('reinstates a merchant by its decoded id', () => {
    const host = fakeHost();
    const a = adminAnswer(host, 'POST', '/__sandbox/merchants/a%20b/reinstate', none, Buffer.alloc(0));
    expect(a).toEqual({ status: 200, body: { merchantId: 'a b', suspended: false } });
    expect(host.reinstated).toEqual(['a b']);
  });

  it('answers BAD_JSON to a body that is not a JSON object or nests too deep, 404 to an unknown endpoint', () => {
    const host = fakeHost();
    expect(adminAnswer(host, 'POST', '/__sandbox/clock', none, Buffer.from('[1]'))).toMatchObject({
      status: 400,
      body: { error: { code: 'BAD_JSON' } },
    });
    const deep = Buffer.from(`${'{"a":'.repeat(100)}1${'}'.repeat(100)}`);
    expect(adminAnswer(host, 'POST', '/__sandbox/clock', none, deep)).toMatchObject({
      status: 400,
      body: { error: { code: 'BAD_JSON' } },
    });
    expect(adminAnswer(host, 'GET', '/__sandbox/nothing', none, Buffer.alloc(0)).status).toBe(404);
  });
});
