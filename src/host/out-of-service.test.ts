import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../config/index.js';
import { silentLogger } from '../log/index.js';
import type { TerminalSnapshot, UserEvent } from './api.js';
import { waitFor } from './drive.js';
import { createTerminalHost, type TerminalHost } from './terminal-host.js';

const hosts: TerminalHost[] = [];
afterEach(async () => {
  while (hosts.length > 0) await hosts.pop()?.close();
});

async function outOfServiceHost(): Promise<TerminalHost> {
  const cwd = mkdtempSync(join(tmpdir(), 'pt-out-of-service-'));
  const config = parseConfig({ reader: { sim: { presentDelayMs: 50 } } });
  const host = await createTerminalHost(config, { logger: silentLogger(), cwd });
  hosts.push(host);
  await waitFor(host, ['idle'], 15_000);
  host.outOfService('test');
  return host;
}

async function accepted(host: TerminalHost, event: UserEvent): Promise<TerminalSnapshot> {
  const r = await host.send(event);
  if (!r.ok) throw new Error(`${event.type}: ${r.error.code} ${r.error.message}`);
  return r.value;
}

describe('the out-of-service screen', () => {
  it('takes the language, accessibility mode and the speech keys, so that every customer can learn why', async () => {
    const host = await outOfServiceHost();
    const arabic = await accepted(host, { type: 'SET_LANGUAGE', locale: 'ar_AE' });
    expect(arabic.customer.screen).toBe('out-of-service');
    expect(arabic.customer.language?.direction).toBe('rtl');

    const accessible = await accepted(host, { type: 'SET_ACCESSIBILITY', on: true });
    expect(accessible.customer.screen).toBe('out-of-service');
    expect(accessible.customer.accessibility).toBe(true);
    expect(accessible.customer.speech?.text).toContain(accessible.customer.message);

    const repeated = await accepted(host, { type: 'SPEECH', command: 'repeat' });
    expect(repeated.customer.screen).toBe('out-of-service');

    const off = await accepted(host, { type: 'SET_ACCESSIBILITY', on: false });
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
