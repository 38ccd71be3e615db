import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../main.js';

async function run(args: string[]): Promise<{ code: number; json: unknown }> {
  let out = '';
  const sink = (): Writable =>
    new Writable({
      write(chunk: Buffer, _enc, cb) {
        out += chunk.toString();
        cb();
      },
    });
  const code = await main(args, { stdout: sink(), stderr: sink(), signal: new AbortController().signal });
  return { code, json: JSON.parse(out) };
}

describe('parking-terminal tlv', () => {
  it('decodes a template into the JSON tree of DESIGN.md', async () => {
    const { code, json } = await run([
      'tlv',
      'decode',
      '701A9F390105571040123456789095D2512201197339300F82025900',
    ]);
    expect(code).toBe(0);
    expect(json).toEqual([
      {
        tag: '70',
        length: 26,
        children: [
          { tag: '9F39', length: 1, value: '05' },
          // Card data (DESIGN.md, money safety rule 4): the value of a card-data tag is never printed.
          { tag: '57', length: 16, value: '*'.repeat(32) },
          { tag: '82', length: 2, value: '5900' },
        ],
      },
    ]);
  });

  it('prints no card data: the PAN (5A), track 2 equivalent (57) and name (5F20) are starred, at any depth', async () => {
    const pan = '4761739001010119';
    const name = '4D5220412054455354455220'; // "MR A TESTER "
    const track = `${pan}D22122011758928889`;
    const hex = `5A08${pan}5F200C${name}77135711${track}9F0206000000001250`;
    const { code, json } = await run(['tlv', 'decode', hex]);
    expect(code).toBe(0);
    const text = JSON.stringify(json);
    expect(text).not.toContain(pan);
    expect(text).not.toContain(name);
    expect(json).toEqual([
      { tag: '5A', length: 8, value: '*'.repeat(16) },
      { tag: '5F20', length: 12, value: '*'.repeat(24) },
      { tag: '77', length: 19, children: [{ tag: '57', length: 17, value: '*'.repeat(34) }] },
      { tag: '9F02', length: 6, value: '000000001250' },
    ]);
  });

  it('joins HEX given as several arguments', async () => {
    const { json } = await run(['tlv', 'decode', '9F02', '06', '000000001250']);
    expect(json).toEqual([{ tag: '9F02', length: 6, value: '000000001250' }]);
  });

  it('exits 2 with the TLV error code and offset for malformed input', async () => {
    const { code, json } = await run(['tlv', 'decode', 'DF9A03001736']);
    expect(code).toBe(2);
    expect(json).toMatchObject({ error: { code: 'TLV_TRUNCATED_VALUE', offset: 4 } });
  });

  it('exits 2 with TLV_BAD_HEX for text that is not hex', async () => {
    const { code, json } = await run(['tlv', 'decode', '9F0']);
    expect(code).toBe(2);
    expect((json as { error: { code: string } }).error.code).toBe('TLV_BAD_HEX');
  });

  it('encodes the JSON tree that decode prints, recomputing lengths', async () => {
    const tree = [
      {
        tag: '70',
        length: 0,
        children: [
          { tag: '9F39', value: '05' },
          { tag: '82', value: '5900' },
        ],
      },
    ];
    const { code, json } = await run(['tlv', 'encode', JSON.stringify(tree)]);
    expect(code).toBe(0);
    expect(json).toEqual({ hex: '70089F39010582025900' });
  });

  it.each([
    ['not JSON', '[', 'BAD_JSON'],
    ['an object instead of an array', '{}', 'BAD_JSON'],
    ['an unknown key', '[{"tag":"9A","value":"01","x":1}]', 'BAD_JSON'],
    ['value and children', '[{"tag":"70","value":"01","children":[]}]', 'BAD_JSON'],
    ['a value that is not hex', '[{"tag":"9A","value":"0"}]', 'TLV_BAD_HEX'],
    ['a value on a constructed tag', '[{"tag":"70","value":"01"}]', 'TLV_BAD_NODE'],
  ])('refuses to encode %s with exit 2', async (_why, arg, errorCode) => {
    const { code, json } = await run(['tlv', 'encode', arg]);
    expect(code).toBe(2);
    expect((json as { error: { code: string } }).error.code).toBe(errorCode);
  });

  it('exits 2 for an unknown subcommand', async () => {
    expect((await run(['tlv', 'parse', '00'])).code).toBe(2);
  });
});
