/**
 * One receipt for paper and screen, on a running terminal (issue 13, "Done when": a printed receipt from the simulated
 * printer matches the on-screen receipt field for field; no expiry, no full PAN). A real TerminalHost with the
 * simulated reader (card n2-contact: Visa 4761739001010119, expiry 12/27), the embedded sandbox and the simulated
 * ESC/POS printer: what the printer decoded is read back into fields and compared with the customer view's receipt.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { getPrinterSimulator, type PrintedReceipt } from '../../devices/printer/index.js';
import { parseConfig, type ConfigInput } from '../../src/config/index.js';
import type { CustomerView, Receipt, TerminalSnapshot, UserEvent } from '../../src/host/api.js';
import { createTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { CATALOGUES } from '../../src/i18n/index.js';
import { silentLogger } from '../../src/log/index.js';
import { readPrintedReceipt, withoutIssuedIdentifiers } from './printed-receipt.js';

const hosts: TerminalHost[] = [];
afterEach(async () => {
  while (hosts.length > 0) await hosts.pop()?.close();
});

/** A euro terminal: the sandbox's DCC table offers the n2 card's currency (JPY) on euro amounts. */
const EURO: ConfigInput['terminal'] = {
  currency: 'EUR',
  country: 'DE',
  countryNumeric: '276',
  timezone: 'Europe/Berlin',
};

async function startHost(
  overrides: ConfigInput = {},
  parkingClock?: { now(): number },
): Promise<{ host: TerminalHost; printer: NonNullable<ReturnType<typeof getPrinterSimulator>> }> {
  const cwd = mkdtempSync(join(tmpdir(), 'pt-host-receipt-'));
  const config = parseConfig({
    ...overrides,
    reader: { sim: { card: 'n2-contact', presentDelayMs: 20 } },
    receipts: { merchantName: 'City Car Park', merchantLocation: '1 High Street', ...overrides.receipts },
    printer: { kind: 'sim' },
  });
  const host = await createTerminalHost(config, {
    logger: silentLogger(),
    cwd,
    ...(parkingClock ? { parkingClock } : {}),
  });
  hosts.push(host);
  const printer = getPrinterSimulator(host.receipts.printer!);
  if (!printer) throw new Error('no simulated printer');
  return { host, printer };
}

async function send(host: TerminalHost, event: UserEvent): Promise<void> {
  const r = await host.send(event);
  if (!r.ok) throw new Error(`${event.type}: ${r.error.code} ${r.error.message}`);
}

async function waitFor(
  host: TerminalHost,
  accept: (c: CustomerView) => boolean,
  what: string,
): Promise<TerminalSnapshot> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const r = await host.snapshot();
    if (r.ok && accept(r.value.customer)) return r.value;
    if (Date.now() > deadline)
      throw new Error(`waiting for ${what}: screen ${r.ok ? r.value.customer.screen : '?'}`);
    await new Promise((res) => setTimeout(res, 10));
  }
}

const onScreen = (host: TerminalHost, what: string[]): Promise<TerminalSnapshot> =>
  waitFor(host, (c) => what.includes(c.screen), what.join('|'));

/** The approved screen once its receipt's QR code is drawn (or the screen that says why there is none). */
async function approvedReceipt(host: TerminalHost): Promise<{ customer: CustomerView; receipt: Receipt }> {
  const { customer } = await waitFor(
    host,
    (c) =>
      (c.screen === 'approved' && c.receipt?.qr !== undefined) || ['declined', 'error'].includes(c.screen),
    'the approved screen with its receipt',
  );
  expect(customer.screen).toBe('approved');
  if (!customer.receipt) throw new Error('no receipt on the approved screen');
  return { customer, receipt: customer.receipt };
}

/** Paper and screen, field for field; the QR codes carry the same payload; no card data beyond the last four. */
function expectSameReceipt(paper: PrintedReceipt, receipt: Receipt): void {
  const printed = readPrintedReceipt(paper.lines);
  expect(printed.title).toBe(receipt.title);
  expect(printed.fields).toEqual(receipt.lines);
  expect(paper.qrCodes).toHaveLength(1);
  expect(receipt.qr?.svg).toMatch(/^<svg/);
  expect(receipt.qr?.url).toBeUndefined();
  for (const whole of [paper.lines.join('\n'), JSON.stringify(receipt), paper.qrCodes.join('\n')]) {
    const text = withoutIssuedIdentifiers(whole, receipt.lines, receipt.locale);
    expect(text).not.toContain('4761739001010119');
    expect(text).not.toContain('476173');
    // The expiry (12/27) in any of its forms.
    expect(text).not.toMatch(/2712|1227|12\/27|[=^D]27\d\d/);
  }
  const card = receipt.lines.find((l) => l.value.includes('0119'));
  expect(card?.value).toBe('**** **** **** 0119');
}

const valueOf = (receipt: Receipt, label: string): string | undefined =>
  receipt.lines.find((l) => l.label === label)?.value;

/** A pay-station lost-ticket sale in `locale`, with the currency choice answered when one is offered. */
async function kioskSale(host: TerminalHost, locale: string, currency?: string): Promise<void> {
  await onScreen(host, ['idle']);
  await send(host, { type: 'SET_LANGUAGE', locale });
  await send(host, { type: 'START' });
  await send(host, { type: 'LOST_TICKET' });
  await onScreen(host, ['confirm']);
  await send(host, { type: 'CONFIRM' });
  const next = await onScreen(host, ['choose-currency', 'approved', 'declined', 'error']);
  if (next.customer.screen === 'choose-currency')
    await send(host, { type: 'CHOOSE_CURRENCY', currency: currency ?? next.customer.dcc!.local.currency });
}

describe('the printed receipt is the on-screen receipt', () => {
  it.each([
    ['en_GB', 'Approval code', 'Type', 'Sale'],
    ['de_DE', 'Genehmigungscode', 'Art', 'Verkauf'],
  ])(
    'a pay-station sale in %s, with the approval code the gateway gave',
    async (locale, approval, type, sale) => {
      const { host, printer } = await startHost();
      const paper = printer.nextReceipt();
      await kioskSale(host, locale);
      const { customer, receipt } = await approvedReceipt(host);
      expectSameReceipt(await paper, receipt);
      expect(receipt.locale).toBe(locale);
      expect(customer.language?.current).toBe(locale);
      expect(valueOf(receipt, type)).toBe(sale);
      expect(valueOf(receipt, approval)).toMatch(/^\d{6}$/);
      // The QR code on the screen holds what the printed one holds: the receipt's text, without a URL.
      expect((await paper).qrCodes[0]).toContain(
        receipt.lines.map((l) => `${l.label}: ${l.value}`).join('\n'),
      );
    },
    40_000,
  );

  it.each([['en_GB'], ['de_DE']])(
    'a currency-converted (DCC) pay-station sale in %s, the disclosure included',
    async (locale) => {
      const { host, printer } = await startHost({ terminal: EURO });
      const paper = printer.nextReceipt();
      await kioskSale(host, locale, 'JPY');
      const { receipt } = await approvedReceipt(host);
      expectSameReceipt(await paper, receipt);
      const tr = CATALOGUES[locale as 'en_GB' | 'de_DE'];
      for (const key of [
        'receipt.exchangeRate',
        'receipt.markup',
        'receipt.rateSource',
        'receipt.provider',
        'receipt.currencyChoice',
        'receipt.disclaimer',
      ] as const)
        expect(valueOf(receipt, tr[key]), key).toBeDefined();
      expect(valueOf(receipt, tr['receipt.convertedAmount'].replace('{currency}', 'JPY'))).toMatch(/¥/);
      expect(valueOf(receipt, tr['receipt.currencyChoice'])).toContain('JPY');
    },
    40_000,
  );

  it.each([['en_GB'], ['de_DE']])(
    'the capture that ends an on-street meter session in %s',
    async (locale) => {
      let offsetMs = 0;
      const { host, printer } = await startHost(
        { terminal: { ...EURO, model: 'meter' }, dcc: { enabled: false } },
        { now: () => Date.now() + offsetMs },
      );
      await onScreen(host, ['idle']);
      await send(host, { type: 'SET_LANGUAGE', locale });
      await send(host, { type: 'START' });
      await send(host, { type: 'CHOOSE_DURATION', minutes: 120 });
      await send(host, { type: 'CONFIRM' });
      await onScreen(host, ['session']);
      offsetMs = 45 * 60_000;
      const paper = printer.nextReceipt();
      await send(host, { type: 'END_SESSION' });
      const { receipt } = await approvedReceipt(host);
      expectSameReceipt(await paper, receipt);
      const tr = CATALOGUES[locale as 'en_GB' | 'de_DE'];
      expect(valueOf(receipt, tr['receipt.type'])).toBe(tr['receipt.kind.payment']);
      expect(valueOf(receipt, tr['receipt.parking'])).toBe(tr['receipt.value.meter']);
      // The capture states the approval code of the pre-authorization it completes.
      expect(valueOf(receipt, tr['receipt.approvalCode'])).toMatch(/^\d{6}$/);
    },
    40_000,
  );

  it('an Arabic-speaking customer gets the terminal language on paper, and the same document on screen', async () => {
    const { host, printer } = await startHost();
    const paper = printer.nextReceipt();
    await kioskSale(host, 'ar_AE');
    const { customer, receipt } = await approvedReceipt(host);
    expectSameReceipt(await paper, receipt);
    expect(customer.language).toMatchObject({ current: 'ar_AE', direction: 'rtl' });
    expect(receipt).toMatchObject({ locale: 'en_GB', direction: 'ltr' });
    expect(valueOf(receipt, 'Type')).toBe('Sale');
    expect(receipt.qr?.alt).toBe(CATALOGUES.ar_AE['receipt.qr.text']);
  }, 40_000);
});

describe('when no paper receipt comes', () => {
  it('tells the customer the paper receipt is not available and offers the e-receipt', async () => {
    const { host, printer } = await startHost({ receipts: { eReceiptUrl: 'https://receipts.example/r' } });
    await onScreen(host, ['idle']);
    printer.setPaper('out');
    await kioskSale(host, 'fr_FR');
    const { customer } = await waitFor(
      host,
      (c) => c.receipt?.notice !== undefined && c.receipt.qr !== undefined,
      'the notice',
    );
    const receipt = customer.receipt!;
    expect(receipt.notice).toBe(CATALOGUES.fr_FR['receipt.notice.unavailable']);
    expect(receipt.lines.length).toBeGreaterThan(0);
    expect(receipt.qr?.url).toMatch(/^https:\/\/receipts\.example\/r\?ref=/);
    expect(receipt.qr?.alt).toBe(CATALOGUES.fr_FR['receipt.qr.link']);
    expect(printer.receipts).toHaveLength(0);
  }, 40_000);

  it('prints nothing for a small unattended amount and says so, with the e-receipt offered', async () => {
    const { host, printer } = await startHost({ receipts: { noReceiptBelowMinor: 100_000 } });
    await kioskSale(host, 'en_GB');
    const { customer } = await waitFor(host, (c) => c.receipt?.qr !== undefined, 'the e-receipt');
    expect(customer.receipt).toMatchObject({
      lines: [],
      notice: CATALOGUES.en_GB['receipt.notice.notOffered'],
    });
    expect(printer.receipts).toHaveLength(0);
    expect(printer.pendingLines).toHaveLength(0);
  }, 40_000);
});
