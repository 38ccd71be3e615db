/**
 * The at-rest key and what is sealed under it (DESIGN.md rule 4): a terminal started with another key than the one
 * its sealed data was sealed with refuses to start, naming what is sealed, instead of failing the capture or reversal
 * of an open authorization later (JOURNAL_DECRYPT: the hold left on the customer's card).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import type { UserEvent } from '../../src/host/api.js';
import { createTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { silentLogger } from '../../src/log/index.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  while (open.length > 0) await open.pop()?.close();
});

async function screenOf(host: TerminalHost): Promise<string> {
  const r = await host.snapshot();
  return r.ok ? r.value.customer.screen : '?';
}

async function waitFor(host: TerminalHost, screens: string[], timeoutMs = 15_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await screenOf(host);
    if (screens.includes(s)) return s;
    if (Date.now() > deadline) throw new Error(`screen is ${s}, wanted ${screens.join('|')}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function send(host: TerminalHost, event: UserEvent): Promise<void> {
  const r = await host.send(event);
  if (!r.ok) throw new Error(`${event.type}: ${r.error.code} ${r.error.message}`);
}

async function setup() {
  const sandbox: Sandbox = await startSandbox({ port: 0, logger: silentLogger() });
  open.push(sandbox);
  const cwd = mkdtempSync(join(tmpdir(), 'pt-key-'));
  let offsetMs = 0;
  const clock = {
    now: () => Date.now() + offsetMs,
    advance: (ms: number) => {
      offsetMs += ms;
    },
  };
  const config = parseConfig({
    terminal: { model: 'meter' },
    reader: { sim: { card: 'n2-contact', presentDelayMs: 20 } },
    journal: { timeoutReversalDelayMs: 0, resolutionRetryMs: 50 },
  });
  const options = { logger: silentLogger(), cwd, gatewayUrlOverride: sandbox.url, parkingClock: clock };
  const start = async (): Promise<TerminalHost> => {
    const host = await createTerminalHost(config, options);
    open.push(host);
    return host;
  };
  return { sandbox, clock, cwd, start, keyFile: join(cwd, config.offline.keyFile) };
}

/** A meter session of 60 minutes bought with a contact card: its pre-authorization approved, its tags kept. */
async function meterSession(host: TerminalHost): Promise<void> {
  await waitFor(host, ['idle']);
  await send(host, { type: 'START' });
  await send(host, { type: 'CHOOSE_DURATION', minutes: 60 });
  await waitFor(host, ['confirm']);
  await send(host, { type: 'CONFIRM' });
  expect(await waitFor(host, ['session', 'declined', 'error'])).toBe('session');
}

async function closed(host: TerminalHost): Promise<void> {
  await host.close();
  open.splice(open.indexOf(host), 1);
}

describe('the at-rest key of a terminal with an open authorization', () => {
  it('refuses a start with another key when only the tags of an open authorization are sealed', async () => {
    const { start, keyFile } = await setup();
    const first = await start();
    await meterSession(first);
    expect(first.offline.status().depth).toBe(0); // nothing stored offline: only the tags are sealed
    await closed(first);
    writeFileSync(keyFile, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
    await expect(start()).rejects.toMatchObject({
      code: 'JOURNAL_KEY',
      message: expect.stringMatching(/1 tag set/) as string,
    });
  });
});
