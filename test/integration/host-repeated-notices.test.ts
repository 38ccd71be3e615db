/**
 * The same words said again for a new event (EN 301 549 5.1.3), beside the card refused twice
 * (host-repeated-refusal.test.ts): a value typed for an alternative method refused again in the same words, and a
 * second payment on the phone declined. A customer who relies on speech must hear that this try failed too — each
 * refusal or decline is its own utterance — while the snapshots in between (the same one shown again) say nothing new.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig, type ConfigInput } from '../../src/config/index.js';
import { CATALOGUES } from '../../src/i18n/index.js';
import type { CustomerView, TerminalSnapshot, UserEvent } from '../../src/host/api.js';
import { waitFor } from '../../src/host/drive.js';
import { createTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { silentLogger } from '../../src/log/index.js';
import { ticketFor } from '../e2e/terminal-process.js';
import { hostedPageAnswer } from './link-harness.js';

let host: TerminalHost | undefined;
afterEach(async () => {
  await host?.close();
  host = undefined;
});

async function start(config: ConfigInput): Promise<{ h: TerminalHost; snapshots: TerminalSnapshot[] }> {
  const cwd = mkdtempSync(join(tmpdir(), 'pt-repeated-notice-'));
  const h = (host = await createTerminalHost(parseConfig(config), { logger: silentLogger(), cwd }));
  await waitFor(h, ['idle'], 10_000);
  await send(h, { type: 'SET_ACCESSIBILITY', on: true });
  const snapshots: TerminalSnapshot[] = [];
  h.subscribe((s) => snapshots.push(s));
  return { h, snapshots };
}

async function send(h: TerminalHost, event: UserEvent): Promise<CustomerView> {
  const r = await h.send(event);
  if (!r.ok) throw new Error(`${event.type}: ${r.error.code} ${r.error.message}`);
  return r.value.customer;
}

/** Every utterance of the snapshots that says `words`, once each (by its id). */
function said(snapshots: TerminalSnapshot[], words: string): string[] {
  const byId = new Map<number, string>();
  for (const s of snapshots) if (s.customer.speech) byId.set(s.customer.speech.id, s.customer.speech.text);
  return [...byId.values()].filter((text) => text.includes(words));
}

describe('the same words from a new event on the same screen', () => {
  it('a value refused again for an alternative method is said again, once for each refusal', async () => {
    const { h, snapshots } = await start({
      terminal: {
        model: 'kiosk',
        country: 'ES',
        countryNumeric: '724',
        currency: 'EUR',
        timezone: 'Europe/London',
      },
      alternativeMethods: { profiles: [{ profile: 1, methodName: 'METHOD_1', label: 'Bank transfer' }] },
    });
    await send(h, { type: 'START' });
    await send(h, { type: 'ENTER_TICKET', ticket: ticketFor(130, 'Europe/London') });
    await waitFor(h, ['confirm'], 5_000);
    await send(h, { type: 'ALT_METHOD', profile: 1 });
    const problem = CATALOGUES.en_GB['alt.problem.not-an-email'];
    const first = await send(h, { type: 'ALT_FIELD', value: 'ana.ruiz.example.com' });
    await expect.poll(() => said(snapshots, problem).length).toBe(1);
    // A snapshot of the same refusal (a status refresh) says nothing new.
    expect((await h.snapshot()).ok).toBe(true);
    const second = await send(h, { type: 'ALT_FIELD', value: 'ana.ruiz.example.com' });
    await expect.poll(() => said(snapshots, problem).length).toBe(2);
    expect(first.altField).toMatchObject({ problem, problemEvent: 1 });
    expect(second.altField).toMatchObject({ problem, problemEvent: 2 });
    await send(h, { type: 'CANCEL' });
    expect(said(snapshots, problem)).toHaveLength(2);
  }, 30_000);

  it('a second payment declined on the phone is said again, once for each decline', async () => {
    const { h, snapshots } = await start({ terminal: { model: 'kiosk', timezone: 'Europe/London' } });
    await send(h, { type: 'START' });
    await send(h, { type: 'ENTER_TICKET', ticket: ticketFor(130, 'Europe/London') });
    await waitFor(h, ['confirm'], 5_000);
    await send(h, { type: 'PAY_BY_LINK' });
    const shown = (await waitFor(h, ['pay-by-phone'], 10_000)).customer;
    const url = shown.payByPhone?.url ?? '';
    const notice = CATALOGUES.en_GB['payByPhone.declined'];
    const noticeEvent = async (): Promise<number | undefined> => {
      const s = await h.snapshot();
      return s.ok ? s.value.customer.payByPhone?.noticeEvent : undefined;
    };
    expect(await hostedPageAnswer(url, '4000000000000002')).toContain('Payment declined');
    await expect.poll(() => said(snapshots, notice).length).toBe(1);
    // Another card on the phone, declined too: the same notice, told again.
    expect(await hostedPageAnswer(url, '4000000000000002')).toContain('Payment declined');
    await expect.poll(() => said(snapshots, notice).length, { timeout: 3_000 }).toBe(2);
    expect(await noticeEvent()).toBe(2);
    await send(h, { type: 'CANCEL' });
    await waitFor(h, ['confirm'], 10_000);
    expect(said(snapshots, notice)).toHaveLength(2);
  }, 30_000);
});
