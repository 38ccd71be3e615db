import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fingerprint, newId } from './ids.js';

/** The canonical text fingerprints were first computed over: every key sorted, each key and value by JSON.stringify. */
function referenceCanonical(v: unknown): string {
  if (typeof v !== 'object' || v === null) return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map(referenceCanonical).join(',')}]`;
  const entries = Object.keys(v)
    .sort()
    .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${referenceCanonical((v as Record<string, unknown>)[k])}`);
  return `{${entries.join(',')}}`;
}

function referenceFingerprint(v: unknown): string {
  return createHash('sha256').update(referenceCanonical(v)).digest('base64');
}

describe('gateway ids', () => {
  it('are 22 digits that begin with the Unix time in seconds without its leading digit, then milliseconds', () => {
    const at = new Date(Date.UTC(2026, 10, 24, 21, 30, 15, 42));
    const id = newId(at);
    expect(id).toMatch(/^\d{22}$/);
    // 1795555815 s → "795555815", then "042".
    expect(id.slice(0, 12)).toBe(`${String(Math.floor(at.getTime() / 1000) % 1e9)}042`);
  });

  it('rise with time, and within one millisecond with the sequence', () => {
    const base = Date.UTC(2026, 10, 24, 21, 30, 15);
    const ids = [0, 0, 0, 1, 999, 1000, 61_000].map((ms) => newId(new Date(base + ms)));
    expect([...ids].sort()).toEqual(ids);
  });

  it('do not repeat among the 10,000 a process can issue in one millisecond', () => {
    const at = new Date(Date.UTC(2026, 10, 24, 21, 30, 15, 500));
    const ids = Array.from({ length: 10_000 }, () => newId(at));
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('request fingerprints', () => {
  it('hash the canonical JSON of a parsed body: keys sorted at every level, strings escaped as JSON.stringify does', () => {
    const body: unknown = JSON.parse(
      '{"z":1,"a":{"y":[3,{"b":"\\u0000\\"\\\\","a":"\\ud800 lone"}],"x":"é€😀\\u2028"},"__proto__":{"k":null},"m":[true,-0,1e21]}',
    );
    expect(fingerprint(body)).toBe(referenceFingerprint(body));
  });

  it('are the same for the same body whatever the order of its keys', () => {
    expect(fingerprint(JSON.parse('{"a":1,"b":{"c":2,"d":3}}'))).toBe(
      fingerprint(JSON.parse('{"b":{"d":3,"c":2},"a":1}')),
    );
  });

  it('agree with the reference canonicalisation on any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue({ stringUnit: 'binary' }), (v) => {
        const parsed: unknown = JSON.parse(JSON.stringify(v));
        expect(fingerprint(parsed)).toBe(referenceFingerprint(parsed));
      }),
      { numRuns: 500 },
    );
  });
});
