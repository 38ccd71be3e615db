/**
 * Alternative methods at the pay station (spec 001; issue 14 item 5) on the running terminal: the customer's screen
 * chooses the method, types the details field by field (each checked, the problem shown in the customer's language),
 * the host sends AP_SALE through its desk, the pending screen shows the payment page as a QR code with its URL and the
 * ticket's reference; the customer pays on the sandbox's page and the status check, one interval later on a moved
 * clock, sees it SETTLED. Nothing the customer typed reaches the log, the journal or the screen's snapshot.
 */
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig, type ConfigInput } from '../../src/config/index.js';
import type { UserEvent } from '../../src/host/api.js';
import { waitFor } from '../../src/host/drive.js';
import { createTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { createLogger, silentLogger } from '../../src/log/index.js';
import { feeForStay } from '../../src/flows/tariff.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { ticketFor } from '../e2e/terminal-process.js';

const MINUTE = 60_000;
const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  while (open.length > 0) await open.pop()?.close();
});

/** A pay station that charges in euros: the methods of spec 001 profiles 1 and 3 are in EUR. */
const EURO_KIOSK: ConfigInput = {
  terminal: {
    model: 'kiosk',
    country: 'ES',
    countryNumeric: '724',
    currency: 'EUR',
    timezone: 'Europe/London',
  },
  alternativeMethods: {
    profiles: [
      { profile: 1, methodName: 'METHOD_1', label: 'Bank transfer' },
      { profile: 3, methodName: 'METHOD_3', label: 'iDEAL-like' },
    ],
  },
};

const EMAIL = 'ana.ruiz@example.com';
const FIRST = 'Ana';
const LAST = 'Ruiz-Lopez';

async function world(config: ConfigInput = EURO_KIOSK) {
  const sandbox: Sandbox = await startSandbox({ port: 0, logger: silentLogger() });
  open.push(sandbox);
  const cwd = mkdtempSync(join(tmpdir(), 'pt-alt-kiosk-'));
  const clock = { offset: 0 };
  const lines: string[] = [];
  const logger = createLogger({
    level: 'debug',
    destination: new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    }),
  });
  const host: TerminalHost = await createTerminalHost(parseConfig(config), {
    logger,
    cwd,
    gatewayUrlOverride: sandbox.url,
    now: () => new Date(Date.now() + clock.offset),
  });
  open.push(host);
  const advance = (ms: number): void => {
    clock.offset += ms;
    sandbox.advanceClock(ms);
  };
  return { sandbox, host, cwd, lines, advance };
}

async function send(h: TerminalHost, event: UserEvent) {
  const r = await h.send(event);
  if (!r.ok) throw new Error(`${event.type}: ${r.error.code} ${r.error.message}`);
  return r.value.customer;
}

/** The pay station's choice of how to pay for `ticket` (by default a ticket of its own, 130 minutes old). */
async function toChoice(h: TerminalHost, ticket = ticketFor(130, 'Europe/London')) {
  await waitFor(h, ['idle'], 10_000);
  await send(h, { type: 'START' });
  await send(h, { type: 'ENTER_TICKET', ticket });
  return (await waitFor(h, ['confirm'], 5_000)).customer;
}

describe('alternative methods at the pay station', () => {
  it('offers the methods, refuses invalid details, leaves the sale pending with its page, then it settles', async () => {
    const w = await world();
    const h = w.host;
    const ticket = ticketFor(130, 'Europe/London');
    const choice = await toChoice(h, ticket);
    expect(choice.altMethods).toEqual([
      { profile: 1, label: 'Bank transfer' },
      { profile: 3, label: 'iDEAL-like' },
    ]);
    expect(choice.actions).toEqual(expect.arrayContaining(['CONFIRM', 'ALT_METHOD']));
    const fee = choice.amount;

    let view = await send(h, { type: 'ALT_METHOD', profile: 1 });
    expect(view).toMatchObject({
      screen: 'alt-details',
      title: 'Your details',
      altField: { method: 'Bank transfer', field: 'email', step: 1, steps: 3, inputMode: 'email' },
    });
    view = await send(h, { type: 'ALT_FIELD', value: 'ana.ruiz.example.com' });
    expect(view.altField).toMatchObject({ field: 'email', problem: 'This is not an e-mail address.' });
    expect(view.message).toBe('Enter your e-mail address. The receipt is sent there.');
    // In the customer's language.
    const german = await h.send({ type: 'SET_LANGUAGE', locale: 'de_DE' });
    expect(german.ok && german.value.customer.altField?.problem).toBe('Das ist keine E-Mail-Adresse.');
    await h.send({ type: 'SET_LANGUAGE', locale: 'en_GB' });

    view = await send(h, { type: 'ALT_FIELD', value: EMAIL });
    expect(view.altField).toMatchObject({ field: 'firstName', step: 2 });
    view = await send(h, { type: 'ALT_FIELD', value: '4111 1111 1111 1111' });
    expect(view.altField?.problem).toBe('A name may contain only letters, spaces, hyphens and apostrophes.');
    await send(h, { type: 'ALT_FIELD', value: FIRST });
    await send(h, { type: 'ALT_FIELD', value: LAST });

    const pending = (await waitFor(h, ['alt-pending'], 10_000)).customer;
    expect(pending.title).toBe('Payment pending');
    expect(pending.message).toContain('Bank transfer');
    expect(pending.altPending?.url).toMatch(new RegExp(`^${w.sandbox.url}/ap/`));
    expect(pending.altPending?.qr?.svg).toMatch(/^<svg /);
    expect(pending.actions).toContain('DONE');

    // The ticket is recorded as payment pending by the method: the desk's sale under the ticket's reference.
    const sale = h.altPayments.get(pending.altPending?.saleId ?? 0);
    expect(sale).toMatchObject({
      state: 'PENDING',
      profile: 1,
      code: ticket,
      currency: 'EUR',
      amountMinor: fee?.minor,
    });
    expect(pending.altPending?.reference).toBe(`Reference: ${ticket}`);

    // The customer may leave: the sale stays in the journal and its checks go on from the host.
    await send(h, { type: 'DONE' });
    await waitFor(h, ['idle'], 5_000);

    const page = await fetch(pending.altPending?.url ?? '', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'action=pay',
    });
    expect(page.status).toBe(200);
    w.advance(60 * MINUTE);
    expect(await h.altPayments.runDue()).toBe(0);
    w.advance(MINUTE);
    expect(await h.altPayments.runDue()).toBe(1);
    expect(h.altPayments.get(sale?.id ?? 0)).toMatchObject({ state: 'SETTLED', settledMinor: fee?.minor });

    // Personal data: not in the log, not in the journal database, not in any snapshot after the sale.
    await h.close();
    const logged = w.lines.join('');
    expect(logged).toContain('alternative-method sale');
    for (const secret of [EMAIL, FIRST, LAST]) expect(logged).not.toContain(secret);
    for (const file of readdirSync(w.cwd, { recursive: true, withFileTypes: true })) {
      if (!file.isFile()) continue;
      const bytes = readFileSync(join(file.parentPath, file.name)).toString('latin1');
      for (const secret of [EMAIL, LAST]) expect(bytes, file.name).not.toContain(secret);
    }
  }, 60_000);

  it('records the ticket paid with the pending sale: not charged again, until the sale is abandoned', async () => {
    const w = await world();
    const h = w.host;
    const ticket = ticketFor(130, 'Europe/London');
    const fee = (await toChoice(h, ticket)).amount;
    await send(h, { type: 'ALT_METHOD', profile: 1 });
    for (const value of [EMAIL, FIRST, LAST]) await send(h, { type: 'ALT_FIELD', value });
    const pending = (await waitFor(h, ['alt-pending'], 10_000)).customer;
    const saleId = pending.altPending?.saleId ?? 0;
    expect(h.tickets.forTicket(ticket)).toMatchObject([
      { ticket, method: 'alt', paymentRef: String(saleId), amountMinor: fee?.minor, currency: 'EUR' },
    ]);
    await send(h, { type: 'DONE' });

    // The customer was told they may go: the ticket inserted again owes nothing, and nothing is sent.
    await waitFor(h, ['idle'], 5_000);
    await send(h, { type: 'START' });
    await send(h, { type: 'ENTER_TICKET', ticket });
    const again = (await waitFor(h, ['approved', 'confirm'], 5_000)).customer;
    expect(again.screen).toBe('approved');
    expect(again.message).toBe('This ticket is paid already: nothing to pay, have a good journey');
    expect(h.altPayments.list()).toHaveLength(1);
    await send(h, { type: 'DONE' });

    // Never paid: the page cancelled, the status check sees it ABANDONED, and the whole stay is owed again.
    const page = await fetch(pending.altPending?.url ?? '', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'action=cancel',
    });
    expect(page.status).toBe(200);
    w.advance(61 * MINUTE);
    expect(await h.altPayments.runDue()).toBe(1);
    expect(h.altPayments.get(saleId)?.state).toBe('ABANDONED');
    await waitFor(h, ['idle'], 5_000);
    await send(h, { type: 'START' });
    await send(h, { type: 'ENTER_TICKET', ticket });
    const owed = (await waitFor(h, ['approved', 'confirm'], 5_000)).customer;
    expect(owed.screen).toBe('confirm');
    const minutes = Number(/for (\d+) minutes/.exec(owed.message ?? '')?.[1]);
    expect(owed.amount?.minor).toBe(feeForStay(h.config.tariff, minutes));
  }, 60_000);

  it('Cancel on the keyboard goes back to the choice and sends nothing', async () => {
    const w = await world();
    const h = w.host;
    await toChoice(h);
    await send(h, { type: 'ALT_METHOD', profile: 3 });
    const view = await send(h, { type: 'ALT_FIELD', value: EMAIL });
    expect(view.altField).toMatchObject({ field: 'firstName', steps: 5 });
    const back = await send(h, { type: 'CANCEL' });
    expect(back.screen).toBe('confirm');
    expect(h.altPayments.list()).toHaveLength(0);
  }, 30_000);

  it('offers no method whose currency is not the terminal’s (the fee is never converted)', async () => {
    const w = await world({ ...EURO_KIOSK, terminal: { model: 'kiosk', timezone: 'Europe/London' } });
    const choice = await toChoice(w.host);
    expect(choice.altMethods).toBeUndefined();
    expect(choice.actions).not.toContain('ALT_METHOD');
    const refused = await w.host.send({ type: 'ALT_METHOD', profile: 1 });
    expect(refused.ok).toBe(false);
  }, 30_000);
});
