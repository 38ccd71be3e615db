import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../main.js';

interface Table {
  networks: Array<{
    cardType: string;
    network: string;
    rows: Array<{ tag: string; rule: string; presence: Record<string, string> }>;
  }>;
  neverSend: Array<{ tag: string }>;
}

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

describe('parking-terminal emv table', () => {
  it('prints both networks, N1 first, with the 9F6E rule per service', async () => {
    const { code, json } = await run(['emv', 'table']);
    expect(code).toBe(0);
    const table = json as Table;
    expect(table.networks.map((n) => [n.cardType, n.network, n.rows.length])).toEqual([
      ['002', 'N1', 18],
      ['001', 'N2', 18],
    ]);
    const ffi = table.networks[0]?.rows.find((r) => r.tag === '9F6E');
    expect(ffi?.presence).toEqual({
      authorization: 'O',
      capture: 'O',
      reversal: 'O',
      refund: 'P',
      credit: 'P',
    });
    expect(table.neverSend.map((t) => t.tag)).toEqual([
      '56',
      '57',
      '5A',
      '5F20',
      '5F24',
      '99',
      '9F0B',
      '9F1F',
      '9F20',
    ]);
  });

  it('prints one network with --network', async () => {
    const { json } = await run(['emv', 'table', '--network', '001']);
    const table = json as Table;
    expect(table.networks.map((n) => n.network)).toEqual(['N2']);
    expect(table.networks[0]?.rows.find((r) => r.tag === '9F27')?.rule).toBe('O');
  });

  it('exits 2 for an unknown network', async () => {
    const { code, json } = await run(['emv', 'table', '--network', '003']);
    expect(code).toBe(2);
    expect((json as { error: { code: string } }).error.code).toBe('BAD_ARGUMENTS');
  });
});
