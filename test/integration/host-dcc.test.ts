import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { getPrinterSimulator } from '../../devices/printer/index.js';
import { main } from '../../src/cli/main.js';
import { parseConfig, type ConfigInput } from '../../src/config/index.js';
import type { TerminalSnapshot, UserEvent } from '../../src/host/api.js';
import { localDateTime } from '../../src/host/local-time.js';
import { RECEIPT_LABELS } from '../../src/host/receipts.js';
import { createTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { silentLogger } from '../../src/log/index.js';
import { DEFAULT_DCC_TABLE, startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { readPrintedReceipt } from './printed-receipt.js';

/**
 * Currency conversion end to end (spec 001, DCC; reference/gateway.md §5) on a real TerminalHost with the simulated
 * reader and the embedded sandbox. The simulator's N2 card (4761739001010119) has a BIN the sandbox's default DCC
 * table bills in JPY, and the table converts EUR to JPY: a terminal pricing in EUR gets an offer.
 */

const hosts: TerminalHost[] = [];
const sandboxes: Sandbox[] = [];
afterEach(async () => {
  while (hosts.length > 0) await hosts.pop()?.close();
  while (sandboxes.length > 0) await sandboxes.pop()?.close();
});

const EURO_TERMINAL: ConfigInput = {
  terminal: { currency: 'EUR', country: 'DE', countryNumeric: '276', timezone: 'Europe/Berlin' },
};

/**
 * A terminal of `overrides` pricing in EUR, with the N2 card, in a directory of its own — or, for a restart, in `at.cwd`
 * against the sandbox at `at.gatewayUrl` (one that outlives the terminal, so that the second one finds its payments).
 */
async function startHost(
  overrides: ConfigInput,
  parkingClock?: { now(): number },
  at: { cwd?: string; gatewayUrl?: string } = {},
): Promise<TerminalHost> {
  const cwd = at.cwd ?? mkdtempSync(join(tmpdir(), 'pt-host-dcc-'));
  const config = parseConfig({
    ...EURO_TERMINAL,
    ...overrides,
    terminal: { ...EURO_TERMINAL.terminal, ...overrides.terminal },
    reader: { sim: { card: 'n2-contact', presentDelayMs: 50 } },
  });
  const host = await createTerminalHost(config, {
    logger: silentLogger(),
    cwd,
    ...(parkingClock ? { parkingClock } : {}),
    ...(at.gatewayUrl !== undefined ? { gatewayUrlOverride: at.gatewayUrl } : {}),
  });
  hosts.push(host);
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

/** An attended sale of 12.50 EUR up to the currency choice. */
async function saleToChoice(host: TerminalHost): Promise<TerminalSnapshot> {
  await waitForScreen(host, ['idle']);
  await send(host, { type: 'START' });
  await send(host, { type: 'ENTER_AMOUNT', minor: 1_250 });
  await send(host, { type: 'CONFIRM' });
  return waitForScreen(host, ['choose-currency', 'approved', 'declined', 'error']);
}

interface AmountDetails {
  totalAmount: string;
  currency: string;
  originalAmount?: string;
  originalCurrency?: string;
  foreignAmount?: string;
  foreignCurrency?: string;
  exchangeRate?: string;
  exchangeRateTimeStamp?: string;
  currencyConversion?: { indicator: string; reconciliationId?: string };
}

function amountDetailsOf(body: unknown): AmountDetails {
  return (body as { orderInformation: { amountDetails: AmountDetails } }).orderInformation.amountDetails;
}

describe('terminal host: currency conversion (DCC)', () => {
  it('shows the offer on choose-currency and authorizes the card currency against it (family A)', async () => {
    const host = await startHost({ terminal: { model: 'attended' } });
    const choice = await saleToChoice(host);
    expect(choice.customer.screen).toBe('choose-currency');
    expect(choice.customer.title).toBe('Select currency');
    expect(choice.customer.actions).toEqual(expect.arrayContaining(['CHOOSE_CURRENCY', 'CANCEL']));
    const dcc = choice.customer.dcc;
    expect(dcc).toBeDefined();
    expect(dcc).toMatchObject({
      title: 'Select currency',
      local: { minor: 1_250, currency: 'EUR' },
      card: { currency: 'JPY' },
      disclaimer: DEFAULT_DCC_TABLE.disclaimer,
    });
    expect(dcc?.rate).toMatch(/^1 EUR = \d+\.\d+ JPY$/);
    expect(dcc?.markup).toContain(`${DEFAULT_DCC_TABLE.marginPercent}%`);
    expect(Date.parse(dcc?.expiresAt ?? '')).toBeGreaterThan(Date.now());
    // No card number reaches the UI: masked PAN only.
    expect(JSON.stringify(choice)).not.toMatch(/4761739001010119/);
    expect(host.dcc.exchanges()).toMatchObject([
      { service: 'dcc-offer', path: '/vas/v1/currencyconversion', amountMinor: 1_250, status: 'PENDING' },
    ]);

    await send(host, { type: 'CHOOSE_CURRENCY', currency: 'JPY' });
    const done = await waitForScreen(host, ['approved', 'declined', 'error']);
    expect(done.customer.screen).toBe('approved');
    // The receipt (the printed document, on screen): both amounts and the gateway's disclaimer verbatim.
    expect(done.customer.receipt?.lines).toEqual(
      expect.arrayContaining([
        { label: 'Amount', value: dcc?.local.text },
        { label: 'Transaction amount (JPY)', value: dcc?.card.text },
        { label: 'Disclaimer', value: DEFAULT_DCC_TABLE.disclaimer },
      ]),
    );

    const ledger = host.sandbox!.ledger();
    expect(ledger.transactions).toHaveLength(1);
    const tx = ledger.transactions[0]!;
    // Family A authorizes the billing amount in the billing currency; the sandbox checked it against its offer
    // (reconciliation id, rate, both amounts) and would have answered 400 on any difference.
    expect(tx).toMatchObject({ kind: 'sale', status: 'AUTHORIZED', currency: 'JPY' });
    expect(tx.amounts.requested).toBe(dcc?.card.minor);
    const details = amountDetailsOf(tx.requests[0]?.body);
    expect(details).toMatchObject({
      currency: 'JPY',
      originalAmount: '12.50',
      originalCurrency: 'EUR',
      currencyConversion: { indicator: '1' },
    });
    expect(details.currencyConversion?.reconciliationId).toMatch(/.+/);
    expect(dcc?.rate).toContain(details.exchangeRate ?? '(none)');
    expect(host.sandbox!.consistency().ok).toBe(true);
    expect(host.journal.counts().inFlight).toBe(0);
  });

  it('authorizes the local currency with indicator 3 when the customer chooses it', async () => {
    const host = await startHost({ terminal: { model: 'attended' } });
    const choice = await saleToChoice(host);
    expect(choice.customer.screen).toBe('choose-currency');
    await send(host, { type: 'CHOOSE_CURRENCY', currency: 'EUR' });
    const done = await waitForScreen(host, ['approved', 'declined', 'error']);
    expect(done.customer.screen).toBe('approved');
    const tx = host.sandbox!.ledger().transactions[0]!;
    expect(tx).toMatchObject({ kind: 'sale', status: 'AUTHORIZED', currency: 'EUR' });
    expect(tx.amounts.requested).toBe(1_250);
    const details = amountDetailsOf(tx.requests[0]?.body);
    expect(details).toMatchObject({
      totalAmount: '12.50',
      currency: 'EUR',
      currencyConversion: { indicator: '3' },
    });
    expect(details.exchangeRate).toBeUndefined();
    expect(host.sandbox!.consistency().ok).toBe(true);
  });

  it('sends family B fields: the local total with the converted amount as foreign amount', async () => {
    const host = await startHost({ terminal: { model: 'attended' }, dcc: { processorFamily: 'B' } });
    const choice = await saleToChoice(host);
    await send(host, { type: 'CHOOSE_CURRENCY', currency: 'JPY' });
    expect((await waitForScreen(host, ['approved', 'declined', 'error'])).customer.screen).toBe('approved');
    const tx = host.sandbox!.ledger().transactions[0]!;
    expect(tx).toMatchObject({ status: 'AUTHORIZED', currency: 'EUR' });
    expect(amountDetailsOf(tx.requests[0]?.body)).toMatchObject({
      totalAmount: '12.50',
      currency: 'EUR',
      foreignAmount: String(choice.customer.dcc?.card.minor),
      foreignCurrency: 'JPY',
      currencyConversion: { indicator: '1' },
    });
    expect(host.sandbox!.consistency().ok).toBe(true);
  });

  it('sends nothing when the customer cancels on the choice screen', async () => {
    const host = await startHost({ terminal: { model: 'attended' } });
    expect((await saleToChoice(host)).customer.screen).toBe('choose-currency');
    await send(host, { type: 'CANCEL' });
    await waitForScreen(host, ['idle']);
    expect(host.sandbox!.ledger().transactions).toEqual([]);
    expect(host.cards.size).toBe(0);
  });

  it('captures a converted meter pre-authorization at its rate in its billing currency (family A)', async () => {
    let offsetMs = 0;
    const host = await startHost({ terminal: { model: 'meter' } }, { now: () => Date.now() + offsetMs });
    await waitForScreen(host, ['idle']);
    await send(host, { type: 'START' });
    await send(host, { type: 'CHOOSE_DURATION', minutes: 120 });
    await send(host, { type: 'CONFIRM' });
    const choice = await waitForScreen(host, ['choose-currency', 'session', 'declined', 'error']);
    expect(choice.customer.screen).toBe('choose-currency');
    await send(host, { type: 'CHOOSE_CURRENCY', currency: 'JPY' });
    expect((await waitForScreen(host, ['session', 'declined', 'error'])).customer.screen).toBe('session');
    offsetMs = 45 * 60_000;
    await send(host, { type: 'END_SESSION' });
    expect((await waitForScreen(host, ['approved', 'declined', 'error'])).customer.screen).toBe('approved');

    const ledger = host.sandbox!.ledger();
    const auth = ledger.transactions.find((t) => t.kind === 'authorization');
    const capture = ledger.transactions.find((t) => t.kind === 'capture');
    expect(auth).toMatchObject({ status: 'AUTHORIZED', currency: 'JPY' });
    expect(capture).toMatchObject({ currency: 'JPY', comments: 'Parking Capture Less Than Auth' });
    expect(capture!.amounts.requested).toBeLessThan(auth!.amounts.authorized);
    expect(amountDetailsOf(capture!.requests[0]?.body)).toMatchObject({
      currency: 'JPY',
      originalCurrency: 'EUR',
      exchangeRate: amountDetailsOf(auth!.requests[0]?.body).exchangeRate,
      currencyConversion: { indicator: '1' },
    });
    // The offer's rate time, sent as the gateway takes it (14 digits yyyyMMddHHmmss, GMT) and repeated by the capture.
    const stamp = amountDetailsOf(auth!.requests[0]?.body).exchangeRateTimeStamp;
    expect(stamp).toMatch(/^\d{14}$/);
    expect(amountDetailsOf(capture!.requests[0]?.body).exchangeRateTimeStamp).toBe(stamp);
    expect(host.sandbox!.consistency().ok).toBe(true);
  });

  it('simulate kiosk --dcc card lists the offer request before the converted sale', async () => {
    let out = '';
    const stdout = new Writable({
      write(chunk: Buffer, _e, cb) {
        out += chunk.toString();
        cb();
      },
    });
    const code = await main(['simulate', 'kiosk', '--dcc', 'card'], {
      stdout,
      stderr: stdout,
      signal: new AbortController().signal,
    });
    expect(code).toBe(0);
    const result = JSON.parse(out) as {
      messages: { service: string; path: string; amount?: string; status: string }[];
      ledger: { transactions: { kind: string; currency: string }[]; consistency: { ok: boolean } };
    };
    expect(result.messages.map((m) => [m.service, m.status])).toEqual([
      ['dcc-offer', 'PENDING'],
      ['sale', 'AUTHORIZED'],
    ]);
    expect(result.messages[0]).toMatchObject({ path: '/vas/v1/currencyconversion', amount: '6.00 EUR' });
    expect(result.messages[1]?.amount).toMatch(/^\d+ JPY$/);
    expect(result.ledger.transactions).toMatchObject([{ kind: 'sale', currency: 'JPY' }]);
    expect(result.ledger.consistency.ok).toBe(true);
  });

  it('simulate refuses a --dcc answer other than card or local', async () => {
    let out = '';
    const stdout = new Writable({
      write(chunk: Buffer, _e, cb) {
        out += chunk.toString();
        cb();
      },
    });
    const code = await main(['simulate', 'kiosk', '--dcc', 'yes'], {
      stdout,
      stderr: stdout,
      signal: new AbortController().signal,
    });
    expect(code).toBe(2);
    expect(out).toContain('BAD_ARGUMENTS');
  });

  it('keeps 9F02/5F2A of a converted sale at the local price the card was read with', async () => {
    const host = await startHost({ terminal: { model: 'attended' } });
    await saleToChoice(host);
    await send(host, { type: 'CHOOSE_CURRENCY', currency: 'JPY' });
    expect((await waitForScreen(host, ['approved', 'declined', 'error'])).customer.screen).toBe('approved');
    const request = host.sandbox!.ledger().transactions[0]!.requests[0]!;
    expect(amountDetailsOf(request.body)).toMatchObject({ currency: 'JPY', originalAmount: '12.50' });
    // src/host/dcc.ts emvTransactionAmount: the cryptogram covers the amount and currency the reader was activated
    // with, before the customer chose the card's currency.
    const tag = (t: string): string | undefined => request.emvTags?.find((x) => x.tag === t)?.value;
    expect(tag('9F02')).toBe('000000001250');
    expect(tag('5F2A')).toBe('0978');
  });

  // The host keeps the sale's conversion terms in the journal database (src/host/follow-on-store.ts) and the refund
  // repeats them (src/host/payments.ts followOnDcc); without them the sandbox refuses the refund with 400
  // MISSING_FIELD exchangeRate, originalAmount, originalCurrency.
  it("refunds a kiosk sale paid in the card's currency with the DCC field set at the sale's rate", async () => {
    const host = await startHost({ terminal: { model: 'kiosk' } });
    await waitForScreen(host, ['idle']);
    await send(host, { type: 'START' });
    const entered = new Date(Date.now() - 95 * 60_000);
    await send(host, {
      type: 'ENTER_TICKET',
      ticket: `${localDateTime(entered, 'Europe/Berlin').slice(0, 12)}0001`,
    });
    await waitForScreen(host, ['confirm']);
    await send(host, { type: 'CONFIRM' });
    expect((await waitForScreen(host, ['choose-currency', 'approved', 'error'])).customer.screen).toBe(
      'choose-currency',
    );
    await send(host, { type: 'CHOOSE_CURRENCY', currency: 'JPY' });
    expect((await waitForScreen(host, ['approved', 'declined', 'error'])).customer.screen).toBe('approved');

    const sale = host.journal.list({ limit: 10 }).find((e) => e.service === 'sale' && e.state === 'approved');
    const saleTransactionId = sale?.transactionId;
    if (saleTransactionId === undefined) throw new Error('no approved sale in the journal');
    const pin = host.generatedOperatorPin;
    if (pin === undefined) throw new Error('no generated operator PIN');
    const refund = await host.operator({
      pin,
      action: { type: 'refund', transactionId: saleTransactionId },
    });
    expect(refund.ok && refund.value).toMatchObject({ type: 'refund', outcome: 'approved' });

    const ledger = host.sandbox!.ledger();
    const saleTx = ledger.transactions.find((t) => t.kind === 'sale')!;
    const refundTx = ledger.transactions.find((t) => t.kind === 'refund');
    expect(refundTx).toMatchObject({ status: 'PENDING', parentId: saleTx.id, currency: 'JPY' });
    const saleDetails = amountDetailsOf(saleTx.requests[0]?.body);
    // Spec 001: the refund repeats the family A field set at the authorization's rate; the full refund is the sale.
    expect(amountDetailsOf(refundTx!.requests[0]?.body)).toMatchObject({
      totalAmount: saleDetails.totalAmount,
      currency: 'JPY',
      originalAmount: saleDetails.originalAmount,
      originalCurrency: 'EUR',
      exchangeRate: saleDetails.exchangeRate,
    });
    expect(refundTx!.amounts.refunded).toBe(saleTx.amounts.captured);
    expect(host.sandbox!.consistency().ok).toBe(true);
  });
});

describe('terminal host: partial refunds of a converted sale (family B)', () => {
  it('credit the card, all refunds together, exactly the card amount the sale took', async () => {
    const host = await startHost({ terminal: { model: 'attended' }, dcc: { processorFamily: 'B' } });
    expect((await saleToChoice(host)).customer.screen).toBe('choose-currency');
    await send(host, { type: 'CHOOSE_CURRENCY', currency: 'JPY' });
    expect((await waitForScreen(host, ['approved', 'declined', 'error'])).customer.screen).toBe('approved');
    const sale = host.journal.list({ limit: 10 }).find((e) => e.service === 'sale' && e.state === 'approved');
    const pin = host.generatedOperatorPin;
    if (sale?.transactionId === undefined || pin === undefined) throw new Error('no approved sale or no PIN');
    // 0.01 EUR, 0.50 EUR, then the rest of the 12.50 EUR = 2088 JPY: converted one by one, 2 + 84 + 2003 = 2089 JPY.
    for (const amountMinor of [1, 50, undefined]) {
      const refund = await host.operator({
        pin,
        action: {
          type: 'refund',
          transactionId: sale.transactionId,
          ...(amountMinor !== undefined ? { amountMinor } : {}),
        },
      });
      expect(refund.ok && refund.value).toMatchObject({ type: 'refund', outcome: 'approved' });
    }
    const ledger = host.sandbox!.ledger();
    const saleTx = ledger.transactions.find((t) => t.kind === 'sale')!;
    const refunds = ledger.transactions.filter((t) => t.kind === 'refund');
    expect(refunds).toHaveLength(3);
    const foreignMinor = (body: unknown): number => Number(amountDetailsOf(body).foreignAmount);
    const paid = foreignMinor(saleTx.requests[0]?.body);
    expect(refunds.reduce((sum, t) => sum + foreignMinor(t.requests[0]?.body), 0)).toBe(paid);
    expect(refunds.reduce((sum, t) => sum + t.amounts.refunded, 0)).toBe(1_250);
    expect(host.sandbox!.consistency().ok).toBe(true);
  });
});

describe('terminal host: receipts of a converted payment after a restart', () => {
  /** The conversion disclosure of a receipt (kiosk.md §1; gateway.md §5), card in JPY: its fields, in order. */
  const DISCLOSURE = [
    RECEIPT_LABELS.convertedAmount('JPY'),
    RECEIPT_LABELS.rate,
    RECEIPT_LABELS.markup,
    RECEIPT_LABELS.rateSource,
    RECEIPT_LABELS.rateTime,
    RECEIPT_LABELS.provider,
    RECEIPT_LABELS.currencyChoice,
    RECEIPT_LABELS.disclaimer,
  ];
  const disclosure = (lines: readonly string[]) =>
    readPrintedReceipt(lines).fields.filter((f) => DISCLOSURE.includes(f.label));

  // The margin and the disclaimer of the offer were the host's memory only: a receipt of the sale (the operator's
  // reprint) or of its refund issued by the next process left the whole disclosure out.
  it('states the disclosure of the first receipt on the reprint and on the refund of the sale', async () => {
    const sandbox = await startSandbox({ port: 0, logger: silentLogger() });
    sandboxes.push(sandbox);
    const at = { cwd: mkdtempSync(join(tmpdir(), 'pt-host-dcc-')), gatewayUrl: sandbox.url };
    const attended: ConfigInput = { terminal: { model: 'attended' }, printer: { kind: 'sim' } };
    const first = await startHost(attended, undefined, at);
    const printed = getPrinterSimulator(first.receipts.printer!)!.nextReceipt();
    expect((await saleToChoice(first)).customer.screen).toBe('choose-currency');
    await send(first, { type: 'CHOOSE_CURRENCY', currency: 'JPY' });
    expect((await waitForScreen(first, ['approved', 'declined', 'error'])).customer.screen).toBe('approved');
    const shown = disclosure((await printed).lines);
    expect(shown.map((f) => f.label)).toEqual(DISCLOSURE);
    expect(shown.find((f) => f.label === RECEIPT_LABELS.disclaimer)?.value).toBe(
      DEFAULT_DCC_TABLE.disclaimer,
    );
    const sale = first.journal
      .list({ limit: 10 })
      .find((e) => e.service === 'sale' && e.state === 'approved');
    if (sale?.transactionId === undefined) throw new Error('no approved sale in the journal');
    await hosts.pop()?.close();

    const second = await startHost(attended, undefined, at);
    await waitForScreen(second, ['idle']);
    const pin = second.generatedOperatorPin ?? '';
    const sim = getPrinterSimulator(second.receipts.printer!)!;
    const copy = sim.nextReceipt();
    expect(await second.operator({ pin, action: { type: 'service', task: 'reprint' } })).toMatchObject({
      ok: true,
      value: { outcome: 'ok' },
    });
    expect(disclosure((await copy).lines)).toEqual(shown);

    const refundReceipt = sim.nextReceipt();
    const refund = await second.operator({
      pin,
      action: { type: 'refund', transactionId: sale.transactionId },
    });
    expect(refund.ok && refund.value).toMatchObject({ type: 'refund', outcome: 'approved' });
    // The whole sale refunded at its rate: the same card amount, rate, markup and disclaimer.
    expect(disclosure((await refundReceipt).lines)).toEqual(shown);
  }, 60_000);

  it("states the disclosure of a meter session's capture on the refund of that capture after a restart", async () => {
    const sandbox = await startSandbox({ port: 0, logger: silentLogger() });
    sandboxes.push(sandbox);
    const at = { cwd: mkdtempSync(join(tmpdir(), 'pt-host-dcc-')), gatewayUrl: sandbox.url };
    const meter: ConfigInput = { terminal: { model: 'meter' }, printer: { kind: 'sim' } };
    let offsetMs = 0;
    const first = await startHost(meter, { now: () => Date.now() + offsetMs }, at);
    await waitForScreen(first, ['idle']);
    await send(first, { type: 'START' });
    await send(first, { type: 'CHOOSE_DURATION', minutes: 120 });
    await send(first, { type: 'CONFIRM' });
    expect((await waitForScreen(first, ['choose-currency', 'error'])).customer.screen).toBe(
      'choose-currency',
    );
    await send(first, { type: 'CHOOSE_CURRENCY', currency: 'JPY' });
    expect((await waitForScreen(first, ['session', 'declined', 'error'])).customer.screen).toBe('session');
    const printed = getPrinterSimulator(first.receipts.printer!)!.nextReceipt();
    offsetMs = 45 * 60_000;
    await send(first, { type: 'END_SESSION' });
    expect((await waitForScreen(first, ['approved', 'declined', 'error'])).customer.screen).toBe('approved');
    // The capture takes less than the authorization: its card amount is converted at the authorization's rate.
    const shown = disclosure((await printed).lines);
    expect(shown.map((f) => f.label)).toEqual(DISCLOSURE);
    const capture = first.journal.list({ limit: 10 }).find((e) => e.service === 'capture');
    if (capture?.transactionId === undefined) throw new Error('no capture in the journal');
    await hosts.pop()?.close();

    const second = await startHost(meter, undefined, at);
    await waitForScreen(second, ['idle']);
    const refundReceipt = getPrinterSimulator(second.receipts.printer!)!.nextReceipt();
    const refund = await second.operator({
      pin: second.generatedOperatorPin ?? '',
      action: { type: 'refund', transactionId: capture.transactionId },
    });
    expect(refund.ok && refund.value).toMatchObject({ type: 'refund', outcome: 'approved' });
    expect(disclosure((await refundReceipt).lines)).toEqual(shown);
    expect(sandbox.consistency().ok).toBe(true);
  }, 60_000);
});
