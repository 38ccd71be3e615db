import fc from 'fast-check';
import QRCode from 'qrcode';
import { describe, expect, it } from 'vitest';
import type { CardRead } from '../../devices/reader.js';
import { parseConfig } from '../config/index.js';
import { QR_ERROR_CORRECTION, receiptCodepage } from '../../devices/printer/index.js';
import { hexToBytes } from '../emv/index.js';
import { CATALOGUES, MESSAGE_KEYS, SUPPORTED_LOCALES } from '../i18n/index.js';
import { dccReceiptLines, type DccOfferSummary, type ReceiptData } from '../flows/index.js';
import {
  assertPrintableConfiguration,
  buildReceipt,
  cvmStatement,
  issuedReceipt,
  eReceiptQr,
  lastFourOnly,
  MACHINE_DCC_LABELS,
  RECEIPT_LABELS,
  ReceiptFactsLog,
  receiptCardOf,
  receiptCopy,
  receiptNote,
  receiptOffered,
  receiptSettingsFromConfig,
  receiptText,
  screenReceipt,
  withoutCardData,
  type JournaledReceiptFacts,
  type ReceiptDocument,
  type ReceiptSettings,
} from './receipts.js';

const SETTINGS: ReceiptSettings = {
  merchantName: 'City Car Park',
  merchantLocation: '1 High Street, Leeds',
  merchantId: 'testrest',
  terminalId: 'PT000001',
  catLevel: 2,
  currency: 'GBP',
  locale: 'en-GB',
  timeZone: 'Europe/London',
  noReceiptBelowMinor: 0,
  dccProvider: 'Example Currency Services Ltd',
  dccRateSource: 'ECB euro reference rate',
};

const OFFER: DccOfferSummary = {
  offerId: 'offer-1',
  reconciliationId: 'rec-1',
  localAmountMinor: 600,
  localCurrency: 'GBP',
  billingAmountMinor: 799,
  billingCurrency: 'USD',
  exchangeRate: '1.331838',
  exchangeRateInverted: false,
  marginRate: '3.5',
  exchangeRateTimeStamp: '20261124080000',
  expiresAtUtc: '2026-11-24T08:10:00Z',
  disclaimer: 'I have chosen to pay in the card currency. The conversion is provided by the merchant.',
};

/** A sale as the kiosk machine issues it (src/flows/kiosk.ts). */
function sale(overrides: Partial<ReceiptData> = {}): ReceiptData {
  return {
    service: 'sale',
    comments: 'Parking Sale',
    amountMinor: 600,
    currency: 'GBP',
    maskedPan: '476173******0119',
    transactionId: '01JD5Z8C4M3Q7R9T1V2W3X4Y5Z',
    gatewayId: '7312345678901234567890',
    atMs: Date.UTC(2026, 10, 24, 9, 5, 7),
    lines: [
      { label: 'Ticket', value: '2026112407300001' },
      { label: 'Stay', value: '95 min' },
    ],
    ...overrides,
  };
}

const CARD_READ: CardRead = {
  entryMode: 'contact',
  tlvs: [
    { tag: '5A', value: hexToBytes('4761739001010119') },
    { tag: '5F24', value: hexToBytes('271231') },
    { tag: '4F', value: hexToBytes('A0000000031010') },
    { tag: '50', value: new TextEncoder().encode('VISA CREDIT') },
    { tag: '9F34', value: hexToBytes('1F0302') },
  ],
  maskedPan: '476173******0119',
  fallback: false,
  readerStatus: 'online-requested',
};

const valueOf = (doc: ReceiptDocument, label: string): string | undefined =>
  doc.fields.find((f) => f.label === label)?.value;

describe('buildReceipt', () => {
  it('states the merchant, terminal, date, type, amount, card, AID, entry, verification and references', () => {
    const doc = buildReceipt(sale(), { card: receiptCardOf(CARD_READ), approvalCode: '831000' }, SETTINGS);
    expect(doc.title).toBe('City Car Park');
    expect(doc.fields).toEqual([
      { label: 'Location', value: '1 High Street, Leeds' },
      { label: 'Merchant ID', value: 'testrest' },
      { label: 'Terminal ID', value: 'PT000001' },
      { label: 'Date', value: '24/11/2026' },
      { label: 'Time', value: '09:05:07' },
      { label: 'Type', value: 'Sale' },
      { label: 'Ticket', value: '2026112407300001' },
      { label: 'Stay', value: '95 min' },
      { label: 'Amount', value: '£6.00' },
      { label: 'Card', value: '**** **** **** 0119' },
      { label: 'Application', value: 'VISA CREDIT' },
      { label: 'AID', value: 'A0000000031010' },
      { label: 'Entry', value: 'Chip' },
      { label: 'Verification', value: 'No signature required' },
      { label: 'Approval code', value: '831000' },
      { label: 'Transaction', value: '01JD5Z8C4M3Q7R9T1V2W3X4Y5Z' },
      { label: 'Reference', value: '7312345678901234567890' },
    ]);
    expect(doc.converted).toBe(false);
  });

  it('names the card by its network when the card gave no application label', () => {
    const doc = buildReceipt(sale({ maskedPan: '555555******4444' }), {}, SETTINGS);
    expect(valueOf(doc, RECEIPT_LABELS.application)).toBe('Mastercard');
    expect(valueOf(doc, RECEIPT_LABELS.entry)).toBeUndefined();
    expect(valueOf(doc, RECEIPT_LABELS.verification)).toBe('No signature required');
  });

  it('leaves out the approval code, reference and card lines it does not know', () => {
    const { maskedPan: _, gatewayId: __, ...bare } = sale();
    const doc = buildReceipt(bare, {}, SETTINGS);
    const labels = doc.fields.map((f) => f.label);
    for (const absent of ['Approval code', 'Reference', 'Card', 'Application', 'AID', 'Verification'])
      expect(labels).not.toContain(absent);
  });

  it('words the transaction type for the customer, per service', () => {
    expect(valueOf(buildReceipt(sale({ service: 'capture' }), {}, SETTINGS), 'Type')).toBe('Payment');
    expect(valueOf(buildReceipt(sale({ service: 'refund-payment' }), {}, SETTINGS), 'Type')).toBe('Refund');
    expect(valueOf(buildReceipt(sale({ service: 'void-payment' }), {}, SETTINGS), 'Type')).toBe('Void');
  });

  it('prints dates in the terminal time zone', () => {
    const doc = buildReceipt(sale({ atMs: Date.UTC(2026, 6, 1, 23, 30, 0) }), {}, SETTINGS);
    expect(valueOf(doc, 'Date')).toBe('02/07/2026');
    expect(valueOf(doc, 'Time')).toBe('00:30:00');
  });

  describe('DCC disclosure (gateway.md §5, kiosk.md §1)', () => {
    const converted = (): ReceiptDocument =>
      buildReceipt(
        sale({
          lines: [{ label: 'Ticket', value: 'T1' }, ...dccReceiptLines({ indicator: '1', offer: OFFER })],
        }),
        { conversion: OFFER },
        SETTINGS,
      );

    it('states both amounts, the rate, the markup over the ECB rate, the provider and the choice of currencies', () => {
      const doc = converted();
      expect(doc.converted).toBe(true);
      expect(valueOf(doc, 'Amount')).toBe('£6.00');
      expect(valueOf(doc, 'Transaction amount (USD)')).toBe('US$7.99');
      expect(valueOf(doc, 'Exchange rate')).toBe('1 GBP = 1.331838 USD');
      expect(valueOf(doc, 'Markup')).toBe('3.5% over the ECB euro reference rate');
      expect(valueOf(doc, 'Rate source')).toBe('ECB euro reference rate');
      expect(valueOf(doc, 'Rate time (UTC)')).toBe('2026-11-24T08:00:00Z');
      expect(valueOf(doc, 'Conversion provider')).toBe('Example Currency Services Ltd');
      expect(valueOf(doc, 'Currency choice')).toBe(
        'You were offered a choice of currencies and chose to pay in USD.',
      );
    });

    it('states the rate time in UTC as a person reads it, and one an earlier version sent as ISO text as it was', () => {
      const at = (exchangeRateTimeStamp: string) =>
        valueOf(
          buildReceipt(sale(), { conversion: { ...OFFER, exchangeRateTimeStamp } }, SETTINGS),
          'Rate time (UTC)',
        );
      expect(at('20261231235959')).toBe('2026-12-31T23:59:59Z');
      expect(at('2026-11-24T08:00:00Z')).toBe('2026-11-24T08:00:00Z');
    });

    it('prints the gateway disclaimer verbatim', () => {
      expect(valueOf(converted(), 'Disclaimer')).toBe(OFFER.disclaimer);
    });

    it("replaces the machine's DCC lines by the full disclosure, once", () => {
      const labels = converted().fields.map((f) => f.label);
      expect(labels).not.toContain('Paid in card currency');
      expect(labels).not.toContain('Currency conversion');
      expect(labels.filter((l) => l === 'Exchange rate')).toHaveLength(1);
      expect(labels.filter((l) => l === 'Markup')).toHaveLength(1);
      expect(labels).toContain('Ticket');
    });

    it('converts a capture below the offered amount at the offer rate', () => {
      const doc = buildReceipt(
        sale({ service: 'capture', amountMinor: 300 }),
        { conversion: OFFER },
        SETTINGS,
      );
      expect(valueOf(doc, 'Transaction amount (USD)')).toBe('US$4.00');
    });

    it('states a merchant name and a disclaimer carrying control characters as text, on paper and on screen alike', () => {
      const doc = buildReceipt(
        sale(),
        { conversion: { ...OFFER, disclaimer: 'I chose\x1dV\x00 to pay in USD.' } },
        { ...SETTINGS, merchantName: 'City\x1bp\x00 Car Park' },
      );
      expect(doc.title).toBe('City p Car Park');
      expect(valueOf(doc, 'Disclaimer')).toBe('I chose V to pay in USD.');
    });

    it('has no DCC block when the payment was not converted', () => {
      const doc = buildReceipt(sale(), {}, SETTINGS);
      const labels = doc.fields.map((f) => f.label);
      for (const l of [
        'Exchange rate',
        'Markup',
        'Rate source',
        'Conversion provider',
        'Currency choice',
        'Disclaimer',
      ])
        expect(labels).not.toContain(l);
      expect(labels.some((l) => l.startsWith('Transaction amount'))).toBe(false);
    });

    it('knows every label the machines give their DCC lines', () => {
      for (const line of dccReceiptLines({ indicator: '1', offer: OFFER }))
        expect(MACHINE_DCC_LABELS.has(line.label)).toBe(true);
    });
  });
});

describe('card data on receipts', () => {
  it('shows the last four digits only', () => {
    expect(lastFourOnly('476173******0119')).toBe('**** **** **** 0119');
    expect(lastFourOnly('4761739001010119')).toBe('**** **** **** 0119');
  });

  it('removes PANs and track data from free text but keeps ticket numbers and ids', () => {
    expect(withoutCardData('card 4761 7390 0101 0119 used')).toBe('card **** used');
    expect(withoutCardData(';4761739001010119=27122011000000000000?')).toBe('****');
    expect(withoutCardData('%B4761739001010119^DOE/J^2712201')).toBe('****');
    expect(withoutCardData('4761739001010119D27122011000F')).toBe('****');
    expect(withoutCardData('2026112407300001')).toBe('2026112407300001');
    expect(withoutCardData('7312345678901234567890')).toBe('7312345678901234567890');
  });

  /** Luhn-valid PANs of the networks a terminal meets. */
  const pan = fc
    .tuple(
      fc.constantFrom('4', '51', '55', '2221', '2720', '34', '37', '6011', '36'),
      fc.integer({ min: 13, max: 19 }),
      fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 19, maxLength: 19 }),
    )
    .map(([prefix, length, digits]) => {
      const body = (prefix + digits.join('')).slice(0, length - 1);
      let sum = 0;
      for (let i = 0; i < body.length; i++) {
        let d = Number(body[body.length - 1 - i]);
        if (i % 2 === 0) {
          d *= 2;
          if (d > 9) d -= 9;
        }
        sum += d;
      }
      return body + String((10 - (sum % 10)) % 10);
    });
  const expiry = fc
    .tuple(fc.integer({ min: 24, max: 40 }), fc.integer({ min: 1, max: 12 }))
    .map(([y, m]) => `${y}${String(m).padStart(2, '0')}`);

  it('never prints a full PAN or an expiry, whatever the machine and the host hand over', () => {
    fc.assert(
      fc.property(pan, expiry, fc.string(), fc.boolean(), (p, exp, noise, contact) => {
        const grouped = p.replace(/(\d{4})(?=\d)/g, '$1 ');
        const leaks = [
          p,
          grouped,
          `;${p}=${exp}2011000?`,
          `%B${p}^DOE/JOHN^${exp}201`,
          `${p}D${exp}2010000F`,
          `${noise} ${p} ${noise}`,
        ];
        const data = sale({
          maskedPan: p, // a full PAN where a masked one belongs
          transactionId: `tx ${p}`,
          gatewayId: `;${p}=${exp}`,
          lines: leaks.map((value, i) => ({ label: i === 0 ? `Ticket ${p}` : `Line ${i}`, value })),
        });
        const read: CardRead = {
          ...CARD_READ,
          entryMode: contact ? 'contact' : 'contactless',
          tlvs: [
            ...CARD_READ.tlvs,
            {
              tag: '57',
              value: hexToBytes(`${p}D${exp}201`.length % 2 ? `${p}D${exp}201F` : `${p}D${exp}201`),
            },
          ],
        };
        const doc = buildReceipt(
          data,
          {
            card: receiptCardOf(read),
            conversion: { ...OFFER, disclaimer: `${OFFER.disclaimer} ${leaks.join(' ')}` },
          },
          SETTINGS,
        );
        const texts = [receiptText(doc), JSON.stringify(screenReceipt({ document: doc, paper: 'printed' }))];
        for (const text of texts) {
          expect(text.replace(/[ -]/g, '')).not.toContain(p);
          for (const marker of ['=', '^', 'D']) expect(text).not.toContain(`${p.slice(-4)}${marker}${exp}`);
          expect(text).not.toMatch(new RegExp(`[=^]${exp}`));
        }
        expect(valueOf(doc, 'Card')).toBe(`**** **** **** ${p.slice(-4)}`);
      }),
      { numRuns: 300 },
    );
  });
});

describe('receiptCardOf and cvmStatement', () => {
  it('keeps the AID (4F, else 84), the application label and the CVM results, and no card data', () => {
    const card = receiptCardOf(CARD_READ);
    expect(card).toEqual({
      entryMode: 'contact',
      aid: 'A0000000031010',
      applicationLabel: 'VISA CREDIT',
      cvmResults: '1F0302',
    });
    const dfOnly = receiptCardOf({
      ...CARD_READ,
      tlvs: [{ tag: '84', value: hexToBytes('A0000000041010') }],
    });
    expect(dfOnly.aid).toBe('A0000000041010');
    expect(JSON.stringify(card)).not.toContain('4761739001010119');
  });

  it('states the verification the card reports', () => {
    const with9F34 = (cvmResults: string, entryMode: 'contact' | 'contactless' = 'contact'): string =>
      cvmStatement({ entryMode, cvmResults });
    expect(cvmStatement(undefined)).toBe('No signature required');
    expect(with9F34('1F0302')).toBe('No signature required');
    expect(with9F34('3F0000')).toBe('No signature required');
    expect(with9F34('420300')).toBe('PIN verified');
    expect(with9F34('410302')).toBe('PIN verified');
    expect(with9F34('410301')).toBe('No signature required');
    expect(with9F34('010002', 'contactless')).toBe("Verified on the cardholder's device");
    expect(with9F34('1E0300')).toBe('Signature required');
  });
});

describe('receiptOffered (receipts.noReceiptBelowMinor)', () => {
  const doc = (amountMinor: number): ReceiptDocument => buildReceipt(sale({ amountMinor }), {}, SETTINGS);

  it('always offers a receipt by default', () => {
    expect(receiptOffered(doc(1), SETTINGS)).toBe(true);
  });

  it('offers none below the threshold at an unattended terminal, and one from the threshold up', () => {
    const settings = { ...SETTINGS, noReceiptBelowMinor: 2_000 };
    expect(receiptOffered(doc(1_999), settings)).toBe(false);
    expect(receiptOffered(doc(2_000), settings)).toBe(true);
  });

  it('always offers one at an attended terminal', () => {
    expect(receiptOffered(doc(1), { ...SETTINGS, catLevel: 6, noReceiptBelowMinor: 2_000 })).toBe(true);
  });

  it('always offers the receipt of a converted payment: its disclosure is owed on a durable medium', () => {
    // kiosk.md §1 (EU Regulation 2021/1230): the mark-up and both amounts before the payment, and the same on the receipt.
    const converted = buildReceipt(sale({ amountMinor: 600 }), { conversion: OFFER }, SETTINGS);
    expect(receiptOffered(converted, { ...SETTINGS, noReceiptBelowMinor: 2_000 })).toBe(true);
  });
});

describe('screenReceipt and eReceiptQr', () => {
  it('shows the same fields as the document, in order', () => {
    const doc = buildReceipt(sale(), { card: receiptCardOf(CARD_READ) }, SETTINGS);
    const screen = screenReceipt({ document: doc, paper: 'printed' });
    expect(screen.title).toBe(doc.title);
    expect(screen.lines).toEqual(doc.fields);
    expect(screen.qr).toBeUndefined();
    expect(screen.notice).toBeUndefined();
    expect(screen).toMatchObject({ locale: 'en_GB', direction: 'ltr' });
  });

  it('gives the BCP 47 tag of its language for the renderer, which may not import src/i18n', () => {
    for (const [locale, lang, direction] of [
      ['ar_AE', 'ar-AE', 'rtl'],
      ['de-DE', 'de-DE', 'ltr'],
    ] as const) {
      const doc = buildReceipt(sale(), {}, SETTINGS, locale);
      expect(screenReceipt({ document: doc, paper: 'printed' })).toMatchObject({ lang, direction });
    }
  });

  it('encodes the e-receipt URL with the transaction reference when one is configured', async () => {
    const doc = buildReceipt(sale(), {}, SETTINGS);
    const qr = await eReceiptQr(doc, { ...SETTINGS, eReceiptUrl: 'https://receipts.example/r' });
    if (qr === undefined) expect.unreachable('the QR code is drawn');
    expect(qr.url).toBe('https://receipts.example/r?ref=01JD5Z8C4M3Q7R9T1V2W3X4Y5Z');
    expect(qr.payload).toBe(qr.url);
    expect(qr.svg).toMatch(/^<svg[\s\S]*<\/svg>\s*$/);
    expect(screenReceipt({ document: doc, paper: 'printed', qr }).qr).toEqual({
      svg: qr.svg,
      alt: 'QR code of your receipt link',
      url: qr.url,
    });
  });

  it("encodes the receipt's text when there is no URL, with the last four digits at most", async () => {
    const doc = buildReceipt(sale(), { card: receiptCardOf(CARD_READ), conversion: OFFER }, SETTINGS);
    const qr = await eReceiptQr(doc, SETTINGS);
    if (qr === undefined) expect.unreachable('the QR code is drawn');
    expect(qr.url).toBeUndefined();
    expect(qr.payload).toBe(receiptText(doc));
    expect(qr.payload).toContain('Card: **** **** **** 0119');
    expect(qr.payload).not.toContain('476173');
    expect(qr.svg).toContain('<svg');
  });

  it('draws the code at error correction M, as the printer encodes it, or gives none: never an L code on screen alone', async () => {
    expect(QR_ERROR_CORRECTION).toBe('M');
    const doc = buildReceipt(sale(), {}, SETTINGS);
    // A URL of about 2,500 bytes: more than the largest code holds at M (2,331 bytes), less than at L (2,953).
    const eReceiptUrl = `https://receipts.example/${'r'.repeat(2_470)}`;
    expect(() =>
      QRCode.create(`${eReceiptUrl}?ref=${doc.transactionId}`, { errorCorrectionLevel: 'L' }),
    ).not.toThrow();
    await expect(eReceiptQr(doc, { ...SETTINGS, eReceiptUrl })).resolves.toBeUndefined();
  });

  it('draws no code on screen that the printer cannot print across its roll, and the same code without a printer', async () => {
    const doc = buildReceipt(sale(), {}, SETTINGS);
    // A URL of about 2,150 bytes: a code of 173 modules at M, 519 dots at the smallest 3 dots a module the printer is
    // given — wider than the 504 dots of a 42-column roll, within the 576 of a 48-column one.
    const eReceiptUrl = `https://receipts.example/${'r'.repeat(2_100)}`;
    const printer = { ...SETTINGS, eReceiptUrl, printerCodepage: 'cp858' as const };
    await expect(eReceiptQr(doc, { ...printer, printerWidthChars: 42 })).resolves.toBeUndefined();
    await expect(eReceiptQr(doc, { ...printer, printerWidthChars: 48 })).resolves.toMatchObject({
      url: `${eReceiptUrl}?ref=${doc.transactionId}`,
    });
    await expect(eReceiptQr(doc, { ...SETTINGS, eReceiptUrl })).resolves.toMatchObject({
      url: `${eReceiptUrl}?ref=${doc.transactionId}`,
    });
  });

  it('gives no code, rather than an error, for a payload too long for any QR code', async () => {
    const doc = buildReceipt(sale(), {}, SETTINGS);
    const eReceiptUrl = `https://receipts.example/${'r'.repeat(3_000)}`;
    await expect(eReceiptQr(doc, { ...SETTINGS, eReceiptUrl })).resolves.toBeUndefined();
  });
});

describe('ReceiptFactsLog', () => {
  it('remembers the card and the accepted offer of a sale, and a capture inherits those of its authorization', () => {
    const log = new ReceiptFactsLog();
    log.noteSubmit(
      { cardRef: 'c1', dcc: { indicator: '1', offer: OFFER } },
      { transactionId: 'A1' },
      CARD_READ,
    );
    log.noteSubmit({ original: { transactionId: 'A1' } }, { transactionId: 'C1', approvalCode: '123456' });
    expect(log.factsFor('C1')).toEqual({
      card: receiptCardOf(CARD_READ),
      conversion: OFFER,
      approvalCode: '123456',
    });
    expect(log.factsFor('unknown')).toEqual({});
  });

  it('states no approval code the journal would not keep: never a card number on the receipt or the screen', () => {
    const log = new ReceiptFactsLog();
    log.noteSubmit({ service: 'sale' }, { transactionId: 'S1', approvalCode: '4111111111111111' });
    log.noteSubmit({ service: 'sale' }, { transactionId: 'S2', approvalCode: '12 34' });
    expect(log.factsFor('S1').approvalCode).toBeUndefined();
    expect(log.factsFor('S2').approvalCode).toBeUndefined();
  });

  it("gives a capture its authorization's approval code when its own answer has none, and a refund never", () => {
    const log = new ReceiptFactsLog();
    log.noteSubmit(
      { service: 'preauth', cardRef: 'c1' },
      { transactionId: 'A1', approvalCode: '831000' },
      CARD_READ,
    );
    log.noteSubmit({ service: 'capture', original: { transactionId: 'A1' } }, { transactionId: 'C1' });
    log.noteSubmit({ service: 'refund-capture', original: { transactionId: 'C1' } }, { transactionId: 'R1' });
    expect(log.factsFor('C1').approvalCode).toBe('831000');
    expect(log.factsFor('R1').approvalCode).toBeUndefined();
  });

  it('states on a refund, void or cancellation the card of its original but not how it was read or verified', () => {
    // The card read with a PIN verified by the chip (9F34 410302), so the sale's receipt says "PIN verified".
    const pinRead: CardRead = {
      ...CARD_READ,
      tlvs: CARD_READ.tlvs.map((t) => (t.tag === '9F34' ? { ...t, value: hexToBytes('410302') } : t)),
    };
    const log = new ReceiptFactsLog();
    log.noteSubmit(
      { service: 'sale', cardRef: 'c1' },
      { transactionId: 'S1', approvalCode: '831000' },
      pinRead,
    );
    const saleDoc = buildReceipt(sale({ transactionId: 'S1' }), log.factsFor('S1'), SETTINGS);
    expect(valueOf(saleDoc, RECEIPT_LABELS.entry)).toBe('Chip');
    expect(valueOf(saleDoc, RECEIPT_LABELS.verification)).toBe('PIN verified');
    const followOns = [
      ['refund-payment', 'R1'],
      ['void-payment', 'V1'],
      ['void-refund', 'V2'],
      ['reversal', 'X1'],
    ] as const;
    for (const [service, transactionId] of followOns) {
      // A reversal of an EMV authorization carries its tags (the held read), but reads no card either.
      log.noteSubmit(
        { service, original: { transactionId: 'S1' }, cardRef: 'c1' },
        { transactionId },
        pinRead,
      );
      const doc = buildReceipt(sale({ service, transactionId }), log.factsFor(transactionId), SETTINGS);
      expect(valueOf(doc, RECEIPT_LABELS.card)).toBe('**** **** **** 0119');
      expect(valueOf(doc, RECEIPT_LABELS.application)).toBe('VISA CREDIT');
      expect(valueOf(doc, RECEIPT_LABELS.aid)).toBe('A0000000031010');
      expect(valueOf(doc, RECEIPT_LABELS.entry)).toBeUndefined();
      expect(valueOf(doc, RECEIPT_LABELS.verification)).toBeUndefined();
    }
    // Not even a refund of an original the terminal knows nothing of says how a card was verified.
    const unknown = buildReceipt(sale({ service: 'refund-payment' }), log.factsFor('R-unknown'), SETTINGS);
    expect(valueOf(unknown, RECEIPT_LABELS.card)).toBe('**** **** **** 0119');
    expect(valueOf(unknown, RECEIPT_LABELS.verification)).toBeUndefined();
  });

  it('keeps no conversion for a refused offer (indicator 3)', () => {
    const log = new ReceiptFactsLog();
    log.noteSubmit({ dcc: { indicator: '3' } }, { transactionId: 'A1' });
    expect(log.factsFor('A1').conversion).toBeUndefined();
  });

  it("reads a transaction it did not note from the journal: a capture states its authorization's code and card", () => {
    const card = receiptCardOf(CARD_READ);
    const journaled: Record<string, JournaledReceiptFacts> = {
      A1: { service: 'preauth', approvalCode: '831000', card },
      C1: { service: 'capture', originalTransactionId: 'A1' },
      R1: { service: 'refund-capture', originalTransactionId: 'C1' },
    };
    const log = new ReceiptFactsLog(64, (tx) => journaled[tx]);
    expect(log.factsFor('C1')).toEqual({ card, approvalCode: '831000' });
    // A refund names the card it goes back to, but read no card and verified no cardholder: the entry mode and the
    // CVM results are facts of the authorization's card read, which its receipt must not state as its own.
    expect(log.factsFor('R1')).toEqual({
      card: { aid: card.aid, applicationLabel: card.applicationLabel },
    });
    expect(log.factsFor('unknown')).toEqual({});
    // A capture sent in this process of an authorization of an earlier one (its card read gone with that process).
    log.noteSubmit({ service: 'capture', original: { transactionId: 'A1' } }, { transactionId: 'C2' });
    expect(log.factsFor('C2')).toEqual({ card, approvalCode: '831000' });
  });

  it("states on the receipt of a converted authorization's capture of an earlier process the disclosure it states live", () => {
    // What the journal database keeps of the accepted offer: the terms its follow-ons repeat, the margin and the
    // disclaimer (src/host/follow-on-store.ts receiptOffer) — not the offer's expiry or rate id.
    const { expiresAtUtc: _expiry, ...kept } = OFFER;
    const journaled: Record<string, JournaledReceiptFacts> = {
      A1: { service: 'preauth', conversion: kept },
      C1: { service: 'capture', originalTransactionId: 'A1' },
      R1: { service: 'refund-capture', originalTransactionId: 'C1' },
    };
    const live = new ReceiptFactsLog();
    live.noteSubmit({ service: 'preauth', dcc: { indicator: '1', offer: OFFER } }, { transactionId: 'A1' });
    live.noteSubmit({ service: 'capture', original: { transactionId: 'A1' } }, { transactionId: 'C1' });
    const restarted = new ReceiptFactsLog(64, (tx) => journaled[tx]);
    // A capture for less than the authorization: its card amount converted at the authorization's rate.
    const capture = sale({ service: 'capture', amountMinor: 450, lines: [] });
    const labels = [
      RECEIPT_LABELS.convertedAmount('USD'),
      RECEIPT_LABELS.rate,
      RECEIPT_LABELS.markup,
      RECEIPT_LABELS.rateSource,
      RECEIPT_LABELS.rateTime,
      RECEIPT_LABELS.provider,
      RECEIPT_LABELS.currencyChoice,
      RECEIPT_LABELS.disclaimer,
    ];
    const first = buildReceipt(capture, live.factsFor('C1'), SETTINGS);
    const again = buildReceipt(capture, restarted.factsFor('C1'), SETTINGS);
    expect(again.converted).toBe(true);
    expect(again.fields).toEqual(first.fields);
    expect(again.fields.filter((f) => labels.includes(f.label)).map((f) => f.label)).toEqual(labels);
    expect(restarted.factsFor('R1').conversion).toEqual(kept);
  });

  it('forgets the oldest transactions beyond its capacity', () => {
    const log = new ReceiptFactsLog(2);
    for (const id of ['T1', 'T2', 'T3']) log.noteSubmit({}, { transactionId: id, approvalCode: id });
    expect(log.factsFor('T1')).toEqual({});
    expect(log.factsFor('T3').approvalCode).toBe('T3');
  });
});

describe("the receipt in the customer's language", () => {
  const facts = { card: receiptCardOf(CARD_READ), approvalCode: '831000' };

  it('writes labels and fixed texts from the catalogues, amounts and dates through Intl (de_DE)', () => {
    const doc = buildReceipt(sale(), facts, SETTINGS, 'de_DE');
    expect(doc.locale).toBe('de_DE');
    expect(doc.fields).toEqual([
      { label: 'Ort', value: '1 High Street, Leeds' },
      { label: 'Händler-ID', value: 'testrest' },
      { label: 'Terminal-ID', value: 'PT000001' },
      { label: 'Datum', value: '24.11.2026' },
      { label: 'Uhrzeit', value: '09:05:07' },
      { label: 'Art', value: 'Verkauf' },
      { label: 'Ticket', value: '2026112407300001' },
      { label: 'Parkdauer', value: '95 min' },
      { label: 'Betrag', value: '6,00 £' },
      { label: 'Karte', value: '**** **** **** 0119' },
      { label: 'Anwendung', value: 'VISA CREDIT' },
      { label: 'AID', value: 'A0000000031010' },
      { label: 'Eingabe', value: 'Chip' },
      { label: 'Verifizierung', value: 'Keine Unterschrift erforderlich' },
      { label: 'Genehmigungscode', value: '831000' },
      { label: 'Transaktion', value: '01JD5Z8C4M3Q7R9T1V2W3X4Y5Z' },
      { label: 'Referenz', value: '7312345678901234567890' },
    ]);
  });

  it('translates the labels and fixed values of machine lines, and keeps the rest as the machine wrote it', () => {
    const doc = buildReceipt(
      sale({
        lines: [
          { label: 'Parking', value: 'On-street meter' },
          { label: 'Plate', value: 'AB12 CDE' },
        ],
      }),
      {},
      SETTINGS,
      'fr_FR',
    );
    expect(doc.fields).toContainEqual({ label: 'Stationnement', value: 'Horodateur' });
    expect(doc.fields).toContainEqual({ label: 'Plate', value: 'AB12 CDE' });
  });

  it('states the DCC disclosure in the language, and the gateway disclaimer verbatim', () => {
    const doc = buildReceipt(sale(), { conversion: OFFER }, SETTINGS, 'de_DE');
    expect(valueOf(doc, 'Transaktionsbetrag (USD)')).toBe('7,99 $');
    expect(valueOf(doc, 'Währungswahl')).toBe(
      'Ihnen wurde eine Auswahl an Währungen angeboten, und Sie haben die Zahlung in USD gewählt.',
    );
    expect(valueOf(doc, 'Hinweis')).toBe(OFFER.disclaimer);
  });

  it("prints the customer's language when the printer can (cp852 for Polish), else the terminal's", () => {
    const printing: ReceiptSettings = { ...SETTINGS, printerCodepage: 'cp858' };
    expect(issuedReceipt(sale(), facts, printing, 'de_DE').locale).toBe('de_DE');
    expect(issuedReceipt(sale(), facts, printing, 'pl_PL').locale).toBe('pl_PL');
    // Arabic is in no code table a printer prints as text: the receipt is the terminal's language, on screen too.
    const arabic = issuedReceipt(sale(), facts, printing, 'ar_AE');
    expect(arabic.locale).toBe('en_GB');
    expect(arabic).toEqual(buildReceipt(sale(), facts, SETTINGS, 'en_GB'));
    // A terminal whose own language is Arabic prints in en_GB, which every table holds.
    const uae = issuedReceipt(sale(), facts, { ...printing, locale: 'ar_AE' }, 'ar_AE');
    expect(uae.locale).toBe('en_GB');
    expect(issuedReceipt(sale(), facts, { ...printing, locale: 'ar_AE' }, 'de_DE').locale).toBe('de_DE');
    // Without a printer nothing limits the screen.
    expect(issuedReceipt(sale(), facts, SETTINGS, 'ar_AE').locale).toBe('ar_AE');
  });

  it('prints a readable DCC disclosure when the gateway disclaimer is in a script no code table holds', () => {
    const printing: ReceiptSettings = { ...SETTINGS, printerCodepage: 'cp858' };
    const greek = { ...OFFER, disclaimer: 'Επέλεξα να πληρώσω στο νόμισμα της κάρτας μου.' };
    const doc = issuedReceipt(sale(), { conversion: greek }, printing, 'pl_PL');
    // Every character of it prints from one table: no "?" in the disclosure, nor in the Polish around it.
    expect(receiptCodepage(doc, 'cp858')).toBe('cp852');
    expect(doc.locale).toBe('pl_PL');
    expect(valueOf(doc, CATALOGUES.pl_PL['receipt.disclaimer'])).toBe(
      CATALOGUES.pl_PL['receipt.dcc.disclaimer'],
    );
    // The rest of the disclosure is the one a printable disclaimer gets.
    const asSent = buildReceipt(sale(), { conversion: OFFER }, SETTINGS, 'pl_PL');
    expect(doc.fields.map((f) => f.label)).toEqual(asSent.fields.map((f) => f.label));
    // A disclaimer the table prints is printed as it came; without a printer the screen shows any as it came.
    expect(valueOf(issuedReceipt(sale(), { conversion: OFFER }, printing, 'pl_PL'), 'Zastrzeżenie')).toBe(
      OFFER.disclaimer,
    );
    expect(valueOf(issuedReceipt(sale(), { conversion: greek }, SETTINGS, 'pl_PL'), 'Zastrzeżenie')).toBe(
      greek.disclaimer,
    );
  });

  it('writes a currency as its ISO code where the table lacks its symbol, rather than change the language', () => {
    const euro: ReceiptSettings = { ...SETTINGS, currency: 'EUR', printerCodepage: 'cp858' };
    // cp852 holds Polish but no €, cp858 the € but no Polish: "6,00 EUR" prints from cp852.
    const polish = issuedReceipt(sale({ currency: 'EUR' }), facts, euro, 'pl_PL');
    expect(polish.locale).toBe('pl_PL');
    expect(valueOf(polish, CATALOGUES.pl_PL['receipt.amount'])).toMatch(/^6,00\sEUR$/);
    expect(receiptCodepage(polish, 'cp858')).toBe('cp852');
    // A table with the symbol keeps it; without a printer the screen keeps it.
    expect(valueOf(issuedReceipt(sale({ currency: 'EUR' }), facts, euro, 'de_DE'), 'Betrag')).toMatch(
      /^6,00\s€$/,
    );
    expect(
      valueOf(
        issuedReceipt(sale({ currency: 'EUR' }), facts, SETTINGS, 'pl_PL'),
        CATALOGUES.pl_PL['receipt.amount'],
      ),
    ).toMatch(/^6,00\s€$/);
  });

  it('every receipt text of every Latin-script locale fits a code table the printer carries', () => {
    for (const locale of SUPPORTED_LOCALES.filter((l) => l !== 'ar_AE')) {
      const fields = MESSAGE_KEYS.filter((k) => k.startsWith('receipt.')).map((k) => ({
        label: k,
        value: CATALOGUES[locale][k],
      }));
      expect(receiptCodepage({ title: '', fields }, 'cp858'), locale).toBeDefined();
    }
  });

  it("marks a receipt printed again as a copy in the receipt's language, and changes nothing else", () => {
    const doc = buildReceipt(sale(), facts, SETTINGS, 'de_DE');
    expect(receiptCopy(doc)).toEqual({ ...doc, title: `${doc.title} - KOPIE` });
  });

  it("journals for a copy the customer's language and the machine's lines, without card data or a partial disclosure", () => {
    expect(receiptNote(sale(), 'de-DE', SETTINGS)).toEqual({ locale: 'de_DE', lines: sale().lines });
    // A language the terminal has no catalogue for is noted as the receipt took it: the terminal's.
    expect(receiptNote(sale(), 'xx_XX', SETTINGS).locale).toBe('en_GB');
    const converted = sale({
      lines: [
        ...sale().lines,
        ...dccReceiptLines({ indicator: '1', offer: OFFER }),
        { label: 'Note', value: 'card 4761 7390 0101 0119' },
      ],
    });
    expect(receiptNote(converted, 'de_DE', SETTINGS).lines).toEqual([
      ...sale().lines,
      { label: 'Note', value: 'card ****' },
    ]);
  });

  it('tells the customer, in their language, why no paper receipt comes', () => {
    const doc = buildReceipt(sale(), facts, SETTINGS, 'en_GB');
    const failed = screenReceipt({ document: doc, paper: 'unavailable' }, 'nl_NL');
    expect(failed.notice).toBe(CATALOGUES.nl_NL['receipt.notice.unavailable']);
    expect(failed.lines).toEqual(doc.fields);
    const small = screenReceipt({ document: doc, paper: 'not-offered' }, 'en_GB');
    expect(small.notice).toBe(CATALOGUES.en_GB['receipt.notice.notOffered']);
    expect(small.lines).toEqual([]);
  });
});

describe('assertPrintableConfiguration', () => {
  const printing = (receipts: Record<string, unknown>, printer: Record<string, unknown> = {}) =>
    parseConfig({ printer: { kind: 'sim', codepage: 'cp858', ...printer }, receipts });
  const refusal = (key: string, message: string): Error =>
    expect.objectContaining({
      name: 'ConfigError',
      code: 'CONFIG_INVALID',
      key,
      message: expect.stringContaining(message) as string,
    }) as Error;

  it('refuses a printed text with a character no code table the printer selects holds, naming the key and it', () => {
    expect(() =>
      assertPrintableConfiguration(printing({ merchantName: 'Καφέ Parking' }), 'terminal.yml'),
    ).toThrowError(
      refusal(
        'receipts.merchantName',
        'terminal.yml: "receipts.merchantName": "Κ" (U+039A) is in no code table the printer prints (printer.codepage cp858',
      ),
    );
    for (const key of ['merchantLocation', 'dccProvider', 'dccRateSource'])
      expect(() => assertPrintableConfiguration(printing({ [key]: 'Οδός 1' }))).toThrowError(
        refusal(`receipts.${key}`, '"Ο" (U+039F)'),
      );
    expect(() =>
      assertPrintableConfiguration(
        parseConfig({ printer: { kind: 'sim' }, gateway: { merchantId: 'καφέ' } }),
      ),
    ).toThrowError(refusal('gateway.merchantId', '"κ" (U+03BA)'));
  });

  it('takes a text another table the printer carries holds: each receipt is printed in that table', () => {
    const polish = printing({ merchantName: 'Parking Łódź', merchantLocation: 'ul. Piotrkowska 1, Łódź' });
    expect(() => assertPrintableConfiguration(polish)).not.toThrow();
    const doc = buildReceipt(sale(), {}, receiptSettingsFromConfig(polish), 'pl_PL');
    expect(receiptCodepage(doc, 'cp858')).toBe('cp852');
  });

  it('refuses texts that fit no one table together: one receipt prints in one table', () => {
    expect(() =>
      assertPrintableConfiguration(printing({ merchantName: 'Парковка', merchantLocation: 'Łódź' })),
    ).toThrowError(
      refusal(
        'receipts.merchantLocation',
        '"Ł" (U+0141) is in no code table the printer prints together with the text of receipts.merchantName',
      ),
    );
    expect(() => assertPrintableConfiguration(printing({ merchantName: 'Łódź Парковка' }))).toThrowError(
      refusal(
        'receipts.merchantName',
        '"П" (U+041F) is in no code table the printer prints together with the text of receipts.merchantName',
      ),
    );
  });

  it('checks nothing without a printer: the screen shows every text as it is', () => {
    expect(() =>
      assertPrintableConfiguration(printing({ merchantName: 'Καφέ Parking' }, { kind: 'none' })),
    ).not.toThrow();
  });
});

describe('receiptSettingsFromConfig', () => {
  it('reads the receipts section, the merchant id and the terminal with their defaults', () => {
    const settings = receiptSettingsFromConfig(parseConfig({}, 'defaults'));
    expect(settings).toMatchObject({
      merchantName: 'Parking',
      merchantId: 'testrest',
      terminalId: 'PT000001',
      catLevel: 2,
      noReceiptBelowMinor: 0,
      dccRateSource: 'ECB euro reference rate',
    });
    expect(settings.eReceiptUrl).toBeUndefined();
  });
});
