import { describe, expect, it } from 'vitest';
import { newId } from './ids.js';

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
