import { createServer, type Server, type Socket } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../main.js';

/**
 * `fleet send` and `fleet status` given input no broker or terminal could act on: refused with exit 2 and a typed
 * error before anything is sent. The broker here is a port that accepts connections and never answers, so that a
 * command that got as far as connecting shows as the CLI waiting rather than as a refusal.
 */

let silent: Server;
const sockets = new Set<Socket>();
let url: string;
const dir = mkdtempSync(join(tmpdir(), 'fleet-cli-'));
const keyFile = join(dir, 'fleet.hmac');
writeFileSync(keyFile, 'a shared fleet key of at least thirty-two characters', { mode: 0o600 });

beforeAll(async () => {
  silent = createServer((socket) => void sockets.add(socket));
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  const address = silent.address();
  url = `mqtt://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((r) => silent.close(r));
});

async function run(
  args: string[],
  broker = url,
): Promise<{ code: number; error: { code: string; message: string } }> {
  const stdout = new PassThrough();
  let out = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  const sending = args[0] === 'send' ? ['--fleet-key', keyFile, '--timeout', '1'] : [];
  const code = await main(['fleet', ...args, '--url', broker, ...sending], {
    stdout,
    stderr: new PassThrough(),
    cwd: dir,
    signal: new AbortController().signal,
  });
  return { code, ...(JSON.parse(out) as { error: { code: string; message: string } }) };
}

describe('parking-terminal fleet, given bad input', () => {
  it.each(['+', '#', 'PT/0001', 'PT0000001'])(
    'refuses a TERMINAL no terminal can have (%s): it would be a wildcard or another topic',
    async (terminal) => {
      const { code, error } = await run(['send', terminal, 'flush-queue']);
      expect(code).toBe(2);
      expect(error.code).toBe('BAD_ARGUMENTS');
      expect(error.message).toContain('TERMINAL');
    },
  );

  it.each([['send', 'PT000001', 'flush-queue'], ['status']])(
    'refuses a --prefix that is not topic levels: %s',
    async (...args) => {
      const { code, error } = await run([...args, '--prefix', 'parking/#']);
      expect(code).toBe(2);
      expect(error.code).toBe('BAD_ARGUMENTS');
      expect(error.message).toContain('--prefix');
    },
  );

  it('refuses an argument the command does not take (a misspelt notice would be dropped)', async () => {
    const { code, error } = await run(['send', 'PT000001', 'out-of-service', '--args', '{"notic":"works"}']);
    expect(code).toBe(2);
    expect(error.code).toBe('BAD_ARGUMENTS');
    expect(error.message).toBe('--args: "notic": not an argument of out-of-service (it takes notice)');
  });

  it.each([
    ['status', '--timeout', '5'],
    ['watch', '--json'],
    ['send', 'PT000001', 'flush-queue', '--wait', '5'],
  ])('refuses an option of another action rather than leave it unread: %s %s', async (...args) => {
    const { code, error } = await run(args);
    expect(code).toBe(2);
    expect(error.code).toBe('BAD_ARGUMENTS');
    expect(error.message).toContain(`does not take ${args.find((a) => a.startsWith('--'))}`);
  });

  it('refuses --args nested deeper than a terminal takes, as bad arguments (not as the fleet key)', async () => {
    const nested = `{"notice":${'['.repeat(40)}${']'.repeat(40)}}`;
    const { code, error } = await run(['send', 'PT000001', 'out-of-service', '--args', nested]);
    expect(code).toBe(2);
    expect(error.code).toBe('BAD_ARGUMENTS');
    expect(error.message).toContain('--args');
  });

  it('refuses a command larger than a terminal takes before sending it (the broker would drop it unanswered)', async () => {
    const args = JSON.stringify({ notice: 'x'.repeat(300 * 1024) });
    const { code, error } = await run(['send', 'PT000001', 'out-of-service', '--args', args]);
    expect(code).toBe(2);
    expect(error.code).toBe('BAD_ARGUMENTS');
    expect(error.message).toContain('bytes');
  });
});

describe('parking-terminal fleet, with the broker away', () => {
  /** A port nothing listens on: the broker's host answers, its broker does not run. */
  async function closedPort(): Promise<string> {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const address = server.address();
    await new Promise((r) => server.close(r));
    return `mqtt://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  }

  it.each([['status'], ['send', 'PT000001', 'flush-queue']])(
    'says the broker cannot be reached, exit 1 (not bad input): %s',
    async (...args) => {
      const broker = await closedPort();
      const { code, error } = await run(args, broker);
      expect(error.code).toBe('BROKER_UNREACHABLE');
      expect(error.message).toContain(broker);
      expect(code).toBe(1);
    },
  );
});
