import { afterEach, describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { createPrinter, DEFAULT_PRINTER_OPTIONS, getPrinterSimulator } from '../../devices/printer/index.js';
import type { ReceiptPrinter } from '../../devices/printer/index.js';
import { createReader, DEFAULT_READER_OPTIONS, type CardRead } from '../../devices/index.js';
import { parseConfig } from '../../src/config/index.js';
import { provideFlowEffects, type DccOfferSummary, type ReceiptData } from '../../src/flows/index.js';
import { FakeTerminal, settle, testSettings } from '../../src/flows/testing/fake-terminal.js';
import type { Receipt } from '../../src/host/api.js';
import {
  buildReceipt,
  ReceiptFactsLog,
  receiptSettingsFromConfig,
  screenReceipt,
  type ReceiptDocument,
} from '../../src/host/receipts.js';
import { readPrintedReceipt } from './printed-receipt.js';

// The kiosk machine pays a lost-ticket fee with a card the simulated reader reads; its receipt goes through the one
// builder to the screen and, through the ESC/POS driver, to the simulated printer. What the printer decoded must say
// exactly what the screen says, field for field (issue 13: "a printed receipt from the simulated printer matches the
// on-screen receipt field for field; no expiry, no full PAN").

const OFFER: DccOfferSummary = {
  offerId: 'offer-1',
  reconciliationId: 'rec-1',
  localAmountMinor: 3_000,
  localCurrency: 'GBP',
  billingAmountMinor: 3_996,
  billingCurrency: 'USD',
  exchangeRate: '1.331838',
  exchangeRateInverted: false,
  marginRate: '3.5',
  exchangeRateTimeStamp: '20250106080000',
  expiresAtUtc: '2025-01-06T08:10:00Z',
  disclaimer:
    'I have been offered a choice of currencies and agree to pay in the card currency. The conversion is provided by the merchant.',
};

const config = parseConfig(
  {
    receipts: { merchantName: 'City Car Park', merchantLocation: '1 High Street, Leeds' },
    printer: { widthChars: 42 },
  },
  'printer-receipt.test',
);
const settings = receiptSettingsFromConfig(config);

/** A card read by the simulated reader (virtual card n2-contact: Visa 4761739001010119). */
async function readCard(): Promise<CardRead> {
  const reader = createReader({
    ...DEFAULT_READER_OPTIONS,
    sim: { ...DEFAULT_READER_OPTIONS.sim, presentDelayMs: 0 },
  });
  await reader.connect();
  try {
    return await reader.activate({
      amountMinor: 3_000,
      otherAmountMinor: 0,
      currencyNumeric: '826',
      countryNumeric: '826',
      transactionType: '00',
      timeoutSeconds: 5,
    });
  } finally {
    await reader.close();
  }
}

/** Runs a kiosk lost-ticket sale on the machine; returns the receipt it issued and the facts the host would note. */
async function kioskSale(
  read: CardRead,
  offer?: DccOfferSummary,
): Promise<{ data: ReceiptData; log: ReceiptFactsLog }> {
  const fake = new FakeTerminal();
  fake.card = { ...fake.card, maskedPan: read.maskedPan, entryMode: read.entryMode };
  if (offer) fake.offers.push(offer);
  const actor = createActor(provideFlowEffects.kiosk(fake), {
    input: {
      settings: testSettings({ dcc: { enabled: offer !== undefined, processorFamily: 'A' } }),
      clock: fake.clock,
    },
    clock: fake.clock,
  });
  actor.start();
  actor.send({ type: 'START' });
  actor.send({ type: 'LOST_TICKET' });
  actor.send({ type: 'CONFIRM' });
  await settle();
  if (offer) {
    actor.send({ type: 'CHOOSE_CURRENCY', currency: offer.billingCurrency });
    await settle();
  }
  actor.stop();
  // What the host does in its submit effect: note each answered request with the card read it used.
  const log = new ReceiptFactsLog();
  for (const sent of fake.sent) log.noteSubmit(sent, sent, sent.cardRef !== undefined ? read : undefined);
  const data = fake.receipts[0];
  if (!data) throw new Error('the machine issued no receipt');
  return { data, log };
}

describe('printed receipt = on-screen receipt', () => {
  let printer: ReceiptPrinter | null = null;
  afterEach(async () => {
    await printer?.close();
    printer = null;
  });

  async function printAndCompare(doc: ReceiptDocument): Promise<{ screen: Receipt; printed: string }> {
    printer = createPrinter({
      ...DEFAULT_PRINTER_OPTIONS,
      widthChars: config.printer.widthChars,
      codepage: config.printer.codepage,
    });
    if (!printer) throw new Error('no printer');
    const control = getPrinterSimulator(printer);
    if (!control) throw new Error('no simulator');
    await printer.connect();
    const next = control.nextReceipt();
    await printer.print(doc);
    const printed = await next;
    expect(control.protocolErrors).toEqual([]);
    const screen = screenReceipt({ document: doc, paper: 'printed' });
    const read = readPrintedReceipt(printed.lines);
    expect(read.title).toBe(screen.title);
    expect(read.fields).toEqual(screen.lines);
    return { screen, printed: printed.lines.join('\n') };
  }

  it('agrees field for field for an approved sale', async () => {
    const read = await readCard();
    const { data, log } = await kioskSale(read);
    const doc = buildReceipt(data, log.factsFor(data.transactionId), settings);
    const { screen, printed } = await printAndCompare(doc);
    const labels = screen.lines.map((l) => l.label);
    expect(labels).toEqual(
      expect.arrayContaining(['Amount', 'Card', 'Application', 'AID', 'Entry', 'Verification']),
    );
    expect(screen.lines).toContainEqual({ label: 'Card', value: '**** **** **** 0119' });
    expect(screen.lines).toContainEqual({ label: 'Amount', value: '£30.00' });
    expect(screen.lines).toContainEqual({ label: 'Entry', value: 'Chip' });
    expect(labels).not.toContain('Exchange rate');
    expect(printed).not.toContain('4761739001010119');
    expect(printed).not.toContain('476173');
    expect(printed).not.toMatch(/[=^D]\d{4}/);
  });

  it('agrees field for field for a converted (DCC) sale, disclosure included', async () => {
    const read = await readCard();
    const { data, log } = await kioskSale(read, OFFER);
    const doc = buildReceipt(data, log.factsFor(data.transactionId), settings);
    expect(doc.converted).toBe(true);
    const { screen, printed } = await printAndCompare(doc);
    expect(screen.lines).toEqual(
      expect.arrayContaining([
        { label: 'Amount', value: '£30.00' },
        { label: 'Transaction amount (USD)', value: 'US$39.96' },
        { label: 'Exchange rate', value: '1 GBP = 1.331838 USD' },
        { label: 'Markup', value: '3.5% over the ECB euro reference rate' },
        { label: 'Conversion provider', value: config.receipts.dccProvider },
        {
          label: 'Currency choice',
          value: 'You were offered a choice of currencies and chose to pay in USD.',
        },
        { label: 'Disclaimer', value: OFFER.disclaimer },
      ]),
    );
    expect(printed).not.toContain('4761739001010119');
  });
});
