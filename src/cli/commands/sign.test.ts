import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { signRequest } from '../../gateway/index.js';
import { main } from '../main.js';

const SECRET = 'yBJxy6LjM2TmcPGu+GaJrHtkke25fPpUX+UY6/L/1tE=';
const DATE = 'Thu, 18 Jul 2019 00:18:03 GMT';

async function run(
  args: string[],
  cwd = process.cwd(),
): Promise<{ code: number; json: Record<string, unknown> }> {
  const stdout = new PassThrough();
  let out = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  const code = await main(args, {
    stdout,
    stderr: new PassThrough(),
    cwd,
    signal: new AbortController().signal,
  });
  return { code, json: JSON.parse(out) as Record<string, unknown> };
}

const base = [
  '--host',
  'apitest.cybersource.com',
  '--date',
  DATE,
  '--merchant-id',
  'testrest',
  '--key-id',
  'k1',
  '--secret',
  SECRET,
];

describe('parking-terminal sign', () => {
  it('prints the headers of a POST with the digest over the body file bytes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sign-'));
    writeFileSync(join(dir, 'body.json'), '{"a":1}');
    const { code, json } = await run(
      ['sign', '--method', 'POST', '--path', '/pts/v2/payments', '--body-file', 'body.json', ...base],
      dir,
    );
    expect(code).toBe(0);
    expect(json).toEqual({
      headers: signRequest({
        method: 'POST',
        path: '/pts/v2/payments',
        host: 'apitest.cybersource.com',
        date: DATE,
        merchantId: 'testrest',
        keyId: 'k1',
        secretBase64: SECRET,
        body: '{"a":1}',
      }),
    });
    expect((json.headers as Record<string, string>).digest).toBe(
      'SHA-256=AVq9f1zFei3ZS3WQ8ErYCEJzkF7jPsXOvq5iJ2qX+GI=',
    );
  });

  it('prints no digest for a GET', async () => {
    const { code, json } = await run([
      'sign',
      '--method',
      'get',
      '--path',
      '/ipl/v2/payment-links?offset=0&limit=10',
      ...base,
    ]);
    expect(code).toBe(0);
    expect(Object.keys(json.headers as object).sort()).toEqual([
      'date',
      'host',
      'signature',
      'v-c-merchant-id',
    ]);
  });

  it.each([
    [['--method', 'POST', '--path', '/p', ...base.slice(0, 2)], 'BAD_ARGUMENTS'],
    [['--method', 'BREW', '--path', '/p', ...base], 'BAD_ARGUMENTS'],
    [
      ['--method', 'POST', '--path', '/p', ...base.slice(0, 2), '--date', 'yesterday', ...base.slice(4)],
      'BAD_ARGUMENTS',
    ],
    [['--method', 'POST', '--path', '/p', ...base.slice(0, 8), '--secret', 'not base64!'], 'BAD_SECRET'],
    [['--method', 'POST', '--path', '/p', '--body-file', '/nonexistent/body', ...base], 'FILE_UNREADABLE'],
    // Values a header cannot carry as signed: a space, a quote that would end the keyid parameter, a line break.
    [
      [
        '--method',
        'POST',
        '--path',
        '/p',
        ...base.slice(0, 4),
        '--merchant-id',
        'test rest',
        ...base.slice(6),
      ],
      'BAD_ARGUMENTS',
    ],
    [
      [
        '--method',
        'POST',
        '--path',
        '/p',
        ...base.slice(0, 6),
        '--key-id',
        'k", algorithm="none',
        ...base.slice(8),
      ],
      'BAD_ARGUMENTS',
    ],
    [
      ['--method', 'POST', '--path', '/p', ...base.slice(0, 6), '--key-id', 'k1\r\nx: 1', ...base.slice(8)],
      'BAD_ARGUMENTS',
    ],
  ])('exits 2 with a typed error for bad input %#', async (args, code) => {
    const r = await run(['sign', ...args]);
    expect(r.code).toBe(2);
    expect((r.json.error as { code: string }).code).toBe(code);
  });
});
