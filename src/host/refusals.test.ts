import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../config/index.js';
import { silentLogger } from '../log/index.js';
import type { ApiError, UserEvent } from './api.js';
import { waitFor } from './drive.js';
import { createTerminalHost, type TerminalHost } from './terminal-host.js';

const hosts: TerminalHost[] = [];
afterEach(async () => {
  while (hosts.length > 0) await hosts.pop()?.close();
});

async function idleHost(): Promise<TerminalHost> {
  const cwd = mkdtempSync(join(tmpdir(), 'pt-refusals-'));
  const config = parseConfig({ reader: { sim: { presentDelayMs: 50 } } });
  const host = await createTerminalHost(config, { logger: silentLogger(), cwd });
  hosts.push(host);
  await waitFor(host, ['idle'], 15_000);
  return host;
}

async function refused(host: TerminalHost, event: UserEvent): Promise<ApiError> {
  const r = await host.send(event);
  if (r.ok) throw new Error(`${event.type} was accepted`);
  return r.error;
}

describe('a refused customer event', () => {
  it('is explained in the customer’s language, never in the developer’s message', async () => {
    const host = await idleHost();
    expect(await refused(host, { type: 'CONFIRM' })).toEqual({
      code: 'NOT_ALLOWED_NOW',
      message: 'CONFIRM is not possible on this screen',
      customerText: 'That is not possible right now.',
    });
    expect((await host.send({ type: 'SET_LANGUAGE', locale: 'de_DE' })).ok).toBe(true);
    expect((await refused(host, { type: 'MORE_TIME' })).customerText).toBe('Das ist gerade nicht möglich.');
    host.outOfService('test');
    expect(await refused(host, { type: 'START' })).toMatchObject({
      code: 'OUT_OF_SERVICE',
      customerText: 'Dieser Automat ist außer Betrieb.',
    });
  });

  it('is spoken while the screen is, and the repeat key still says the screen', async () => {
    const host = await idleHost();
    const on = await host.send({ type: 'SET_ACCESSIBILITY', on: true });
    if (!on.ok) throw new Error(on.error.message);
    const screen = on.value.customer.speech;
    expect(screen?.text).toBeTruthy();
    const error = await refused(host, { type: 'CONFIRM' });
    const after = await host.snapshot();
    if (!after.ok) throw new Error(after.error.message);
    expect(after.value.customer.speech).toMatchObject({ text: error.customerText, screen: screen?.screen });
    expect(after.value.customer.speech?.id).toBeGreaterThan(screen?.id ?? Infinity);
    const repeated = await host.send({ type: 'SPEECH', command: 'repeat' });
    if (!repeated.ok) throw new Error(repeated.error.message);
    expect(repeated.value.customer.speech?.text).toBe(screen?.screen);
  });

  it('is not spoken when accessibility mode is off', async () => {
    const host = await idleHost();
    await refused(host, { type: 'CONFIRM' });
    const after = await host.snapshot();
    expect(after.ok && after.value.customer.speech).toBe(undefined);
  });
});
