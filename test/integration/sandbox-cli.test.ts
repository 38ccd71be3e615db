import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';

function capture(): { stream: PassThrough; text: () => string; firstLine: () => Promise<string> } {
  const stream = new PassThrough();
  let text = '';
  const waiters: Array<(line: string) => void> = [];
  stream.on('data', (c: Buffer) => {
    text += c.toString('utf8');
    const nl = text.indexOf('\n');
    if (nl >= 0) for (const w of waiters.splice(0)) w(text.slice(0, nl));
  });
  return {
    stream,
    text: () => text,
    firstLine: () =>
      new Promise((resolve) => {
        const nl = text.indexOf('\n');
        if (nl >= 0) resolve(text.slice(0, nl));
        else waiters.push(resolve);
      }),
  };
}

describe('parking-terminal sandbox', () => {
  it('prints its base URL as the first stdout line, serves, and stops on the abort signal', async () => {
    const out = capture();
    const err = capture();
    const controller = new AbortController();
    const exit = main(['sandbox', '--port', '0'], {
      stdout: out.stream,
      stderr: err.stream,
      signal: controller.signal,
    });
    const url = await out.firstLine();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const health = await fetch(`${url}/__sandbox/health`);
    expect(health.status).toBe(200);
    const ledger = (await (await fetch(`${url}/__sandbox/ledger`)).json()) as {
      transactions: unknown[];
      consistency: { ok: boolean };
    };
    expect(ledger.transactions).toEqual([]);
    expect(ledger.consistency.ok).toBe(true);
    controller.abort();
    expect(await exit).toBe(0);
  });

  it('refuses a bad --cutoff with exit 2 and the error document', async () => {
    const out = capture();
    const code = await main(['sandbox', '--cutoff', '25:99'], {
      stdout: out.stream,
      stderr: new PassThrough(),
      signal: new AbortController().signal,
    });
    expect(code).toBe(2);
    expect(JSON.parse(out.text())).toMatchObject({ error: { code: 'BAD_ARGUMENTS' } });
  });
});
