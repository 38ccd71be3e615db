import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../main.js';

async function run(args: string[]): Promise<{ code: number; text: string; json: unknown }> {
  let text = '';
  const sink = (): Writable =>
    new Writable({
      write(chunk: Buffer, _enc, cb) {
        text += chunk.toString();
        cb();
      },
    });
  const code = await main(args, { stdout: sink(), stderr: sink(), signal: new AbortController().signal });
  return { code, text, json: JSON.parse(text) };
}

describe('parking-terminal card parse', () => {
  it.each([
    ['--track2', ';4761739001010119=22122011758928889?8'],
    ['--track1', '%B4761739001010119^VISA ACQUIRER TEST/CARD 01^2212201175892888900000000?B'],
    ['--tag57', '4761739001010119D22122011758928889'],
  ])('parses %s into the DESIGN.md shape with the PAN masked', async (option, data) => {
    const { code, text, json } = await run(['card', 'parse', option, data]);
    expect(code).toBe(0);
    expect(json).toEqual({
      pan: '476173******0119',
      expiry: '2212',
      serviceCode: '201',
      luhn: true,
      network: 'visa',
      cardType: '001',
    });
    expect(text).not.toContain('4761739001010119');
    expect(text).not.toContain('ACQUIRER');
  });

  it('reports a Mastercard 2-series card as card type 002', async () => {
    const { json } = await run(['card', 'parse', '--track2', '2222420000001113=2812201']);
    expect(json).toMatchObject({ network: 'mastercard', cardType: '002', luhn: true });
  });

  it('reports another network as not supported (cardType null)', async () => {
    const { code, json } = await run(['card', 'parse', '--track2', '378282246310005=2812201']);
    expect(code).toBe(0);
    expect(json).toMatchObject({ network: 'amex', cardType: null });
  });

  it('exits 2 with the card data error code, without echoing the data', async () => {
    const { code, text, json } = await run([
      'card',
      'parse',
      '--track2',
      ';4761739001010119=22122011758928889?9',
    ]);
    expect(code).toBe(2);
    expect((json as { error: { code: string } }).error.code).toBe('CARD_BAD_LRC');
    expect(text).not.toContain('4761739001010119');
  });

  it('exits 2 unless exactly one source is given', async () => {
    expect((await run(['card', 'parse'])).code).toBe(2);
    expect((await run(['card', 'parse', '--track2', 'a', '--tag57', 'b'])).code).toBe(2);
  });
});
