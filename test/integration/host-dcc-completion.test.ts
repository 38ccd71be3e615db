import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkSession } from '../../certification/check.js';
import { ExchangeRecorder } from '../../certification/runner/recorder.js';
import { parseConfig } from '../../src/config/index.js';
import type { TerminalSnapshot, UserEvent } from '../../src/host/api.js';
import { createTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { silentLogger } from '../../src/log/index.js';

/**
 * The currency choice again at completion (config dcc.choiceAtCompletion; reference/kiosk.md §1) on a real
 * TerminalHost with the simulated reader and the strict embedded sandbox: a meter pricing in EUR, the simulator's N2
 * card billed in JPY. The session's hold is converted at the pre-authorization; at the end of the session the fee is
 * offered again in both currencies at the authorization's rate.
 */

const hosts: TerminalHost[] = [];
const recorders = new Map<TerminalHost, ExchangeRecorder>();
afterEach(async () => {
  for (const host of hosts.splice(0)) {
    await host.close();
    await recorders.get(host)?.close();
  }
  recorders.clear();
});

/**
 * The session's messages as the gateway received them, judged by the certification rules (`certify check`): the
 * findings of every message, none expected.
 */
function certificationFindings(
  host: TerminalHost,
  alter: (messages: { method: string; path: string; body: unknown }[]) => void = () => {},
): string[] {
  const exchanges = recorders.get(host)?.exchanges ?? [];
  if (exchanges.length < 2) throw new Error('the session was not recorded');
  const parse = (b: Buffer): unknown => (b.length === 0 ? undefined : JSON.parse(b.toString('utf8')));
  const messages = exchanges.map((x) => ({
    method: x.method,
    path: x.path,
    body: parse(x.requestBody) ?? {},
    response: parse(x.responseBody),
  }));
  alter(messages);
  return checkSession(messages).messages.flatMap((m) =>
    m.findings.map((f) => `${m.index} ${m.service} ${f.rule} ${f.field}`),
  );
}

const clock = { offsetMs: 0, now: () => Date.now() + clock.offsetMs };

async function startMeter(processorFamily: 'A' | 'B' = 'A'): Promise<TerminalHost> {
  clock.offsetMs = 0;
  const config = parseConfig({
    terminal: {
      model: 'meter',
      currency: 'EUR',
      country: 'DE',
      countryNumeric: '276',
      timezone: 'Europe/Berlin',
    },
    reader: { sim: { card: 'n2-contact', presentDelayMs: 50 } },
    dcc: { choiceAtCompletion: true, processorFamily },
  });
  const recorder = new ExchangeRecorder(config.gateway.timeouts);
  const host = await createTerminalHost(config, {
    gatewayDispatcher: recorder.dispatcher,
    logger: silentLogger(),
    cwd: mkdtempSync(join(tmpdir(), 'pt-dcc-completion-')),
    parkingClock: { now: () => clock.now() },
  });
  hosts.push(host);
  recorders.set(host, recorder);
  return host;
}

async function send(host: TerminalHost, event: UserEvent): Promise<TerminalSnapshot> {
  const r = await host.send(event);
  if (!r.ok) throw new Error(`${event.type}: ${r.error.code} ${r.error.message}`);
  return r.value;
}

async function waitForScreen(host: TerminalHost, screens: string[]): Promise<TerminalSnapshot> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const r = await host.snapshot();
    if (r.ok && screens.includes(r.value.customer.screen)) return r.value;
    if (Date.now() > deadline)
      throw new Error(`screen is ${r.ok ? r.value.customer.screen : '?'}, wanted ${screens.join('|')}`);
    await new Promise((res) => setTimeout(res, 20));
  }
}

/** A session pre-authorized in JPY, ended after 45 minutes: the choice at completion on screen. */
async function convertedSessionEnded(host: TerminalHost): Promise<TerminalSnapshot> {
  await waitForScreen(host, ['idle']);
  const startedAt = clock.offsetMs;
  await send(host, { type: 'START' });
  await send(host, { type: 'CHOOSE_DURATION', minutes: 120 });
  await send(host, { type: 'CONFIRM' });
  expect((await waitForScreen(host, ['choose-currency', 'session', 'error'])).customer.screen).toBe(
    'choose-currency',
  );
  await send(host, { type: 'CHOOSE_CURRENCY', currency: 'JPY' });
  expect((await waitForScreen(host, ['session', 'declined', 'error'])).customer.screen).toBe('session');
  clock.offsetMs = startedAt + 45 * 60_000;
  await send(host, { type: 'END_SESSION' });
  return waitForScreen(host, ['choose-currency', 'approved', 'declined', 'error']);
}

interface AmountDetails {
  totalAmount: string;
  currency: string;
  originalAmount?: string;
  originalCurrency?: string;
  exchangeRate?: string;
  currencyConversion?: { indicator: string };
}

function amountDetailsOf(body: unknown): AmountDetails {
  return (body as { orderInformation: { amountDetails: AmountDetails } }).orderInformation.amountDetails;
}

/** The sandbox's ledger: each transaction's kind, status, currency and comments, in order. */
function ledgerOf(host: TerminalHost) {
  return host.sandbox!.ledger().transactions.map((t) => ({
    kind: t.kind,
    status: t.status,
    currency: t.currency,
    comments: t.comments,
  }));
}

describe('terminal host: the currency choice again at completion (dcc.choiceAtCompletion)', () => {
  it('shows the fee in EUR and in JPY at the authorization rate, with the rate, markup and disclaimer', async () => {
    const host = await startMeter();
    const choice = (await convertedSessionEnded(host)).customer;
    expect(choice.screen).toBe('choose-currency');
    expect(choice.actions).toEqual(['CHOOSE_CURRENCY', 'CANCEL']);
    const auth = host.sandbox!.ledger().transactions.find((t) => t.kind === 'authorization');
    const authDetails = amountDetailsOf(auth!.requests[0]?.body);
    expect(choice.dcc).toMatchObject({
      title: 'Select currency',
      local: { currency: 'EUR' },
      card: { currency: 'JPY' },
    });
    expect(choice.dcc?.rate).toContain(authDetails.exchangeRate);
    expect(choice.dcc?.markup).toMatch(/margin/);
    expect(choice.dcc?.disclaimer.length).toBeGreaterThan(0);
    // The fee (45 minutes) is less than the hold (120 minutes) in both currencies.
    expect(choice.dcc!.local.minor).toBeLessThan(Number(authDetails.originalAmount!.replace('.', '')));
    // Nothing was sent while the customer chooses.
    expect(ledgerOf(host).map((t) => t.kind)).toEqual(['authorization']);
  });

  it('captures in JPY at the authorization rate when the card currency is chosen again', async () => {
    const host = await startMeter();
    const choice = (await convertedSessionEnded(host)).customer;
    await send(host, { type: 'CHOOSE_CURRENCY', currency: 'JPY' });
    expect((await waitForScreen(host, ['approved', 'error'])).customer.screen).toBe('approved');
    expect(ledgerOf(host)).toEqual([
      { kind: 'authorization', status: 'AUTHORIZED', currency: 'JPY', comments: 'Parking Auth' },
      { kind: 'capture', status: 'PENDING', currency: 'JPY', comments: 'Parking Capture Less Than Auth' },
    ]);
    const [auth, capture] = host.sandbox!.ledger().transactions;
    // The capture is for the card amount the customer saw, at the authorization's rate.
    expect(amountDetailsOf(capture!.requests[0]?.body)).toMatchObject({
      currency: 'JPY',
      totalAmount: String(choice.dcc!.card.minor),
      originalCurrency: 'EUR',
      exchangeRate: amountDetailsOf(auth!.requests[0]?.body).exchangeRate,
      currencyConversion: { indicator: '1' },
    });
    expect(host.sandbox!.consistency({ requireResolved: true })).toMatchObject({ ok: true });
    expect(certificationFindings(host)).toEqual([]);
    // The checker refuses what the sandbox refuses: the same capture in EUR as the customer's refusal (indicator 3).
    const inEuro = certificationFindings(host, (messages) => {
      const captured = messages.find((m) => m.path.endsWith('/captures'));
      const details = amountDetailsOf(captured!.body) as unknown as Record<string, unknown>;
      for (const key of ['exchangeRate', 'exchangeRateTimeStamp', 'originalAmount', 'originalCurrency'])
        delete details[key];
      Object.assign(details, {
        currency: 'EUR',
        totalAmount: (choice.dcc!.local.minor / 100).toFixed(2),
        currencyConversion: { indicator: '3' },
      });
    });
    expect(inEuro).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /capture IC-DCC-FOLLOW-ON-FIELDS orderInformation\.amountDetails\.exchangeRate$/,
        ),
      ]),
    );
  });

  for (const decline of ['local', 'cancel'] as const)
    it(`takes a local EUR sale and reverses the JPY hold in full when the customer ${decline === 'local' ? 'chooses EUR' : 'cancels'}`, async () => {
      const host = await startMeter();
      const choice = (await convertedSessionEnded(host)).customer;
      await send(
        host,
        decline === 'local' ? { type: 'CHOOSE_CURRENCY', currency: 'EUR' } : { type: 'CANCEL' },
      );
      const done = await waitForScreen(host, ['approved', 'error', 'declined']);
      expect(done.customer.screen).toBe('approved');
      expect(ledgerOf(host)).toEqual([
        { kind: 'authorization', status: 'REVERSED', currency: 'JPY', comments: 'Parking Auth' },
        { kind: 'sale', status: 'AUTHORIZED', currency: 'EUR', comments: 'Parking Sale' },
        // After the sale: the converted hold released in full, in its billing currency.
        { kind: 'reversal', status: 'REVERSED', currency: 'JPY', comments: 'REVERSAL' },
      ]);
      const [auth, sale, reversal] = host.sandbox!.ledger().transactions;
      // The sale: the fee in EUR, conversion declined by the customer (indicator 3), no conversion fields.
      const saleDetails = amountDetailsOf(sale!.requests[0]?.body);
      expect(saleDetails).toMatchObject({
        currency: 'EUR',
        totalAmount: (choice.dcc!.local.minor / 100).toFixed(2),
        currencyConversion: { indicator: '3' },
      });
      expect(saleDetails.exchangeRate).toBeUndefined();
      // The reversal of the converted hold: the authorized amount in JPY.
      expect(
        (reversal!.requests[0]?.body as { reversalInformation: { amountDetails: { totalAmount: string } } })
          .reversalInformation.amountDetails.totalAmount,
      ).toBe(amountDetailsOf(auth!.requests[0]?.body).totalAmount);
      // No new offer for the sale: the one offer is the pre-authorization's.
      expect(host.dcc.exchanges()).toHaveLength(1);
      expect(host.sandbox!.consistency({ requireResolved: true })).toMatchObject({ ok: true });
      expect(certificationFindings(host)).toEqual([]);
      expect(certificationFindings(host)).toEqual([]);
    });

  it('reverses the JPY hold and records the fee as not collected when the card is not presented again', async () => {
    const host = await startMeter();
    await convertedSessionEnded(host);
    host.simulator!.setCard('no-card');
    await send(host, { type: 'CHOOSE_CURRENCY', currency: 'EUR' });
    await waitForScreen(host, ['present-card']);
    await send(host, { type: 'CANCEL' });
    const done = await waitForScreen(host, ['approved', 'error', 'declined']);
    expect(done.customer).toMatchObject({
      screen: 'error',
      message: 'The parking fee was not paid. The amount held on your card has been released',
    });
    expect(ledgerOf(host)).toEqual([
      { kind: 'authorization', status: 'REVERSED', currency: 'JPY', comments: 'Parking Auth' },
      { kind: 'reversal', status: 'REVERSED', currency: 'JPY', comments: 'REVERSAL' },
    ]);
    expect(host.sandbox!.consistency({ requireResolved: true })).toMatchObject({ ok: true });
    expect(certificationFindings(host)).toEqual([]);
  });

  it('takes the same paths with processor family B: a local sale and the reversal, or the converted capture', async () => {
    const host = await startMeter('B');
    for (const choice of ['EUR', 'JPY'] as const) {
      if (choice === 'JPY') {
        // A second session on the same terminal, this time captured in the card currency.
        await send(host, { type: 'DONE' });
      }
      expect((await convertedSessionEnded(host)).customer.screen).toBe('choose-currency');
      await send(host, { type: 'CHOOSE_CURRENCY', currency: choice });
      expect((await waitForScreen(host, ['approved', 'error', 'declined'])).customer.screen).toBe('approved');
    }
    expect(ledgerOf(host).map((t) => [t.kind, t.status, t.currency])).toEqual([
      ['authorization', 'REVERSED', 'EUR'],
      ['sale', 'AUTHORIZED', 'EUR'],
      ['reversal', 'REVERSED', 'EUR'],
      ['authorization', 'AUTHORIZED', 'EUR'],
      ['capture', 'PENDING', 'EUR'],
    ]);
    expect(host.sandbox!.consistency({ requireResolved: true })).toMatchObject({ ok: true });
    expect(certificationFindings(host)).toEqual([]);
  });
});
