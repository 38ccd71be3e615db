import { describe, expect, it } from 'vitest';
import { isJsonContentType, jsonDepthExceeds, keptBody } from './limits.js';

const bytes = (text: string): Buffer => Buffer.from(text, 'utf8');

describe('jsonDepthExceeds', () => {
  it('counts nested objects and arrays', () => {
    expect(jsonDepthExceeds(bytes('{"a":[{"b":1}]}'), 3)).toBe(false);
    expect(jsonDepthExceeds(bytes('{"a":[{"b":[1]}]}'), 3)).toBe(true);
    expect(jsonDepthExceeds(bytes('[[],[],[],[]]'), 2)).toBe(false);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    expect(jsonDepthExceeds(bytes('{"a":"[[[[{{{{"}'), 1)).toBe(false);
    expect(jsonDepthExceeds(bytes('{"a":"\\"[[[[\\\\"}'), 1)).toBe(false);
    expect(jsonDepthExceeds(bytes('{"a\\"{{":"x"}'), 1)).toBe(false);
  });

  it('scans 100,000 levels without recursion', () => {
    expect(jsonDepthExceeds(bytes('['.repeat(100_000) + ']'.repeat(100_000)))).toBe(true);
  });
});

describe('isJsonContentType', () => {
  it.each([
    ['application/json', true],
    ['application/json;charset=utf-8', true],
    [' Application/JSON ; charset=UTF-8', true],
    ['text/plain', false],
    ['application/jsonx', false],
    ['application/x-www-form-urlencoded', false],
    [undefined, false],
  ])('%s → %s', (header, expected) => {
    expect(isJsonContentType(header)).toBe(expected);
  });
});

describe('keptBody', () => {
  it('keeps a short body whole', () => {
    expect(keptBody('{"a":1}', 16)).toEqual({ json: '{"a":1}' });
  });

  it('cuts a long one to its first bytes and says how long it was', () => {
    const json = JSON.stringify({ a: 'é'.repeat(100) });
    const kept = keptBody(json, 16);
    expect(Buffer.byteLength(kept.json)).toBeLessThanOrEqual(16);
    expect(kept.truncatedFrom).toBe(Buffer.byteLength(json));
    const odd = keptBody(json, 17);
    expect(odd.json).toBe('{"a":"' + 'é'.repeat(5));
  });
});
