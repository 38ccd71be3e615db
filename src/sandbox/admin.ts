/**
 * The test-only admin endpoints under `/__sandbox/` (README, "Admin endpoints"): ledger, consistency, health, clock,
 * faults, reset and merchant reinstatement. No authentication; the server routes every `/__sandbox/` path here and
 * sends the answer this returns.
 */
import type { Consistency, ConsistencyOptions, Ledger, MerchantStanding } from './ledger.js';
import { jsonDepthExceeds, MAX_JSON_DEPTH, MAX_QUEUED_FAULTS } from './limits.js';
import { FAULT_KINDS, type Fault, type FaultKind } from './triggers.js';

/** What the admin endpoints act on: the running sandbox's state. */
export interface AdminHost {
  ledger(): Ledger;
  consistency(options: ConsistencyOptions): Consistency;
  /** The sandbox clock. */
  now(): Date;
  /** Milliseconds the sandbox clock is ahead of its base clock. */
  clockOffsetMs(): number;
  advanceClock(ms: number): void;
  /** The queued faults, oldest first. */
  faults(): readonly Fault[];
  scheduleFaults(faults: Fault[]): void;
  clearFaults(): void;
  reset(): void;
  /** Lifts a merchant's suspension; its standing afterwards. */
  reinstate(merchantId: string): MerchantStanding;
}

/** An admin answer: HTTP status and JSON body. */
export interface AdminAnswer {
  status: number;
  body: unknown;
}

/** The message of a fault request that would pass {@link MAX_QUEUED_FAULTS}, undefined when it fits. */
export function tooManyFaults(queued: number, asked: number): string | undefined {
  if (queued + asked <= MAX_QUEUED_FAULTS) return undefined;
  return `at most ${MAX_QUEUED_FAULTS} faults may be queued: ${queued} queued, ${asked} more asked`;
}

const ok = (body: unknown): AdminAnswer => ({ status: 200, body });
const bad = (message: string): AdminAnswer => ({
  status: 400,
  body: { error: { code: 'BAD_REQUEST', message } },
});

/** Answers one admin request. */
export function adminAnswer(
  host: AdminHost,
  method: string,
  path: string,
  query: URLSearchParams,
  body: Buffer,
): AdminAnswer {
  let parsed: Record<string, unknown> = {};
  if (body.length) {
    try {
      if (jsonDepthExceeds(body, MAX_JSON_DEPTH)) throw new Error('nested too deep');
      const v: unknown = JSON.parse(body.toString('utf8'));
      if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error('not an object');
      parsed = v as Record<string, unknown>;
    } catch {
      return { status: 400, body: { error: { code: 'BAD_JSON', message: 'the body is not a JSON object' } } };
    }
  }
  if (path === '/__sandbox/ledger' && method === 'GET') return ok(host.ledger());
  if (path === '/__sandbox/consistency' && method === 'GET')
    return ok(host.consistency({ requireResolved: query.get('requireResolved') === '1' }));
  if (path === '/__sandbox/health' && method === 'GET')
    return ok({ ok: true, now: host.now().toISOString() });
  if (path === '/__sandbox/clock') {
    if (method === 'GET') return ok({ now: host.now().toISOString(), offsetMs: host.clockOffsetMs() });
    if (method === 'POST') {
      const ms = parsed.advanceMs;
      if (typeof ms !== 'number' || !Number.isSafeInteger(ms) || ms < 0)
        return bad('advanceMs must be a non-negative integer');
      host.advanceClock(ms);
      return ok({ now: host.now().toISOString(), offsetMs: host.clockOffsetMs() });
    }
  }
  if (path === '/__sandbox/faults') {
    if (method === 'GET') return ok({ faults: host.faults() });
    if (method === 'DELETE') {
      host.clearFaults();
      return ok({ faults: host.faults() });
    }
    if (method === 'POST') {
      const list = parsed.faults;
      if (!Array.isArray(list)) return bad('faults must be an array');
      const tooMany = tooManyFaults(host.faults().length, list.length);
      if (tooMany !== undefined)
        return { status: 400, body: { error: { code: 'TOO_MANY_FAULTS', message: tooMany } } };
      const checked: Fault[] = [];
      for (const f of list as unknown[]) {
        const o = f as Record<string, unknown>;
        if (typeof f !== 'object' || f === null || !FAULT_KINDS.includes(o.kind as FaultKind))
          return bad(`each fault needs kind: ${FAULT_KINDS.join(' | ')}`);
        if (o.path !== undefined && typeof o.path !== 'string') return bad('path must be a string');
        if (o.method !== undefined && typeof o.method !== 'string') return bad('method must be a string');
        checked.push({
          kind: o.kind as FaultKind,
          ...(typeof o.path === 'string' ? { path: o.path } : {}),
          ...(typeof o.method === 'string' ? { method: o.method.toUpperCase() } : {}),
        });
      }
      host.scheduleFaults(checked);
      return ok({ faults: host.faults() });
    }
  }
  if (path === '/__sandbox/reset' && method === 'POST') {
    host.reset();
    return ok({ ok: true });
  }
  const reinstate = /^\/__sandbox\/merchants\/([^/]+)\/reinstate$/.exec(path);
  if (reinstate?.[1] && method === 'POST') return ok(host.reinstate(decodeURIComponent(reinstate[1])));
  return {
    status: 404,
    body: { error: { code: 'NOT_FOUND', message: `no admin endpoint ${method} ${path}` } },
  };
}
