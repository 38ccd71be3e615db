import { afterEach, describe, expect, it } from 'vitest';
import { closeHosts, startHost } from '../../test/integration/host-harness.js';
import type { ApiError, UserEvent } from './api.js';
import { send, waitFor } from './drive.js';
import type { TerminalHost } from './terminal-host.js';

afterEach(closeHosts);

async function idleHost(): Promise<TerminalHost> {
  const host = await startHost();
  await waitFor(host, ['idle'], 15_000);
  return host;
}

async function outOfServiceHost(): Promise<TerminalHost> {
  const host = await idleHost();
  host.outOfService('test');
  return host;
}

async function refused(host: TerminalHost, event: UserEvent): Promise<ApiError> {
  const r = await host.send(event);
  if (r.ok) throw new Error(`${event.type} was accepted`);
  return r.error;
}

describe('the out-of-service screen', () => {
  it('takes the language, accessibility mode and the speech keys, so that every customer can learn why', async () => {
    const host = await outOfServiceHost();
    const arabic = await send(host, { type: 'SET_LANGUAGE', locale: 'ar_AE' });
    expect(arabic.customer.screen).toBe('out-of-service');
    expect(arabic.customer.language?.direction).toBe('rtl');

    const accessible = await send(host, { type: 'SET_ACCESSIBILITY', on: true });
    expect(accessible.customer.screen).toBe('out-of-service');
    expect(accessible.customer.accessibility).toBe(true);
    expect(accessible.customer.speech?.text).toContain(accessible.customer.message);

    const repeated = await send(host, { type: 'SPEECH', command: 'repeat' });
    expect(repeated.customer.screen).toBe('out-of-service');

    const off = await send(host, { type: 'SET_ACCESSIBILITY', on: false });
    expect(off.customer.accessibility).toBeUndefined();
  });

  it('refuses every payment event with OUT_OF_SERVICE', async () => {
    const host = await outOfServiceHost();
    const events: UserEvent[] = [
      { type: 'START' },
      { type: 'CONFIRM' },
      { type: 'ENTER_TICKET', ticket: '1' },
      { type: 'CHOOSE_CURRENCY', currency: 'EUR' },
      { type: 'MORE_TIME' },
      { type: 'DONE' },
    ];
    for (const event of events) {
      const r = await host.send(event);
      expect(r.ok ? 'ok' : r.error.code, event.type).toBe('OUT_OF_SERVICE');
    }
  });
});

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
