import { describe, expect, it } from 'vitest';
import { encodableIn, encodeReceipt, receiptCodepage } from './escpos.js';
import { receiptTextLines } from './layout.js';
import type { PrintableReceipt } from './printer.js';
import { PrinterSimulator, type PrintedReceipt } from './sim/printer-simulator.js';

/** Feeds bytes to a fresh simulator, as a printer would receive them, and returns what it cut. */
function printOn(
  bytes: Uint8Array,
  chunk = bytes.length,
  widthChars: 42 | 48 = 42,
): { receipts: readonly PrintedReceipt[]; errors: readonly string[] } {
  const sim = new PrinterSimulator({ printableDots: widthChars === 42 ? 504 : 576 });
  const endpoint = sim.attach({ send: () => undefined, unplugged: () => undefined });
  for (let i = 0; i < bytes.length; i += chunk) endpoint.deliver(bytes.subarray(i, i + chunk));
  return { receipts: sim.receipts, errors: sim.protocolErrors };
}

const RECEIPT: PrintableReceipt = {
  title: 'Parking Sale',
  fields: [
    { label: 'Merchant', value: 'Car park Münster-Süd' },
    { label: 'Amount', value: '£12.50' },
    { label: 'Card', value: '**** **** **** 0119' },
    { label: 'Transaction amount (EUR)', value: '€14.67' },
    {
      label: 'Currency conversion',
      value:
        'I have been offered a choice of currencies and agree to pay in EUR. The exchange rate includes a margin of 3.5%.',
    },
  ],
  qr: 'https://receipts.example/r?ref=01JABCDEF',
};

describe('ESC/POS receipt encoding', () => {
  for (const widthChars of [42, 48] as const)
    it(`decodes back to the receipt's laid-out lines at ${widthChars} characters`, () => {
      const { receipts, errors } = printOn(
        encodeReceipt(RECEIPT, { widthChars, codepage: 'cp858' }),
        undefined,
        widthChars,
      );
      expect(errors).toEqual([]);
      expect(receipts).toHaveLength(1);
      expect(receipts[0]?.lines).toEqual(receiptTextLines(RECEIPT, widthChars));
      expect(receipts[0]?.qrCodes).toEqual([RECEIPT.qr]);
      for (const line of receipts[0]?.lines ?? []) expect(line.length).toBeLessThanOrEqual(widthChars);
    });

  it('sends no control byte for a character a table draws at a control position (§, arrows, bullets)', () => {
    // cp437 and its kin draw glyphs at 0x00–0x1F and 0x7F on screen; a printer executes those bytes as commands
    // (1B ESC, 1D GS: "↔V" would be GS V, a cut). § has a printable position in cp858 (0xF5) as well as 0x15.
    const receipt: PrintableReceipt = {
      title: 'Parking',
      fields: [
        { label: 'Location', value: 'Level 2 ↔V exit ←@ §4 ¶ •' },
        { label: 'Amount', value: '€12.50' },
      ],
    };
    expect(encodableIn('→', 'cp858')).toBe(false);
    expect(encodableIn('§', 'cp858')).toBe(true);
    const { receipts, errors } = printOn(encodeReceipt(receipt, { widthChars: 42, codepage: 'cp858' }));
    expect(errors).toEqual([]);
    expect(receipts).toHaveLength(1);
    expect(receipts[0]?.lines).toEqual(
      receiptTextLines(
        {
          ...receipt,
          fields: [{ label: 'Location', value: 'Level 2 ?V exit ?@ §4 ¶ ?' }, receipt.fields[1]!],
        },
        42,
      ),
    );
  });

  it('prints a letter written decomposed (u and a combining diaeresis) as the one letter its table holds', () => {
    // Text copied from a PDF or written on macOS may carry "ü" as U+0075 U+0308; the tables hold the composed letter.
    const receipt: PrintableReceipt = {
      title: 'Parkhaus Mu\u0308nster',
      fields: [{ label: 'Hinweis', value: 'Gebu\u0308hr inklusive' }],
    };
    expect(receiptCodepage(receipt, 'cp858')).toBe('cp858');
    const { receipts, errors } = printOn(encodeReceipt(receipt, { widthChars: 42, codepage: 'cp858' }));
    expect(errors).toEqual([]);
    expect(receipts[0]?.lines.join('\n')).toContain('Parkhaus Münster');
    expect(receipts[0]?.lines.join('\n')).toContain('Gebühr inklusive');
  });

  it('decodes the same when the bytes arrive one at a time', () => {
    const { receipts, errors } = printOn(encodeReceipt(RECEIPT, { widthChars: 42, codepage: 'cp858' }), 1);
    expect(errors).toEqual([]);
    expect(receipts[0]?.lines).toEqual(receiptTextLines(RECEIPT, 42));
  });

  it('prints £, € and accented letters through the selected code table', () => {
    const text = printOn(
      encodeReceipt(RECEIPT, { widthChars: 42, codepage: 'windows1252' }),
    ).receipts[0]?.lines.join('\n');
    expect(text).toContain('£12.50');
    expect(text).toContain('€14.67');
    expect(text).toContain('Münster-Süd');
  });

  it('lays a field out on one line when it fits and under its label when it does not', () => {
    const lines = receiptTextLines(RECEIPT, 42);
    expect(lines).toContain(`Amount${' '.repeat(42 - 'Amount'.length - '£12.50'.length)}£12.50`);
    const at = lines.indexOf('Currency conversion');
    expect(at).toBeGreaterThan(0);
    expect(lines[at + 1]).toMatch(/^ {2}I have been offered/);
  });

  it('prints no QR code when the receipt has none', () => {
    const { receipts } = printOn(
      encodeReceipt({ title: 'T', fields: [] }, { widthChars: 42, codepage: 'cp858' }),
    );
    expect(receipts[0]?.qrCodes).toEqual([]);
  });

  it('sends no control character of a receipt text to the printer: a hostile name or disclaimer cannot cut, open a drawer or switch the table', () => {
    // ESC p (drawer kick), GS V (cut), ESC t (code table), NUL, form feed, DEL, a C1 control: each prints as a space.
    const hostile: PrintableReceipt = {
      title: 'Car\x1bp\x00\x19park\x1dV\x00',
      fields: [
        { label: 'Disclaimer\x1bt\x05', value: 'I chose\x0c to pay\x7f in EUR\x9b.' },
        { label: 'Amount', value: '€14.67' },
      ],
    };
    const plain: PrintableReceipt = {
      title: 'Car p park V',
      fields: [
        { label: 'Disclaimer t', value: 'I chose to pay in EUR .' },
        { label: 'Amount', value: '€14.67' },
      ],
    };
    for (const codepage of ['cp858', 'windows1252'] as const) {
      const bytes = encodeReceipt(hostile, { widthChars: 42, codepage });
      expect(Buffer.from(bytes).toString('hex')).toBe(
        Buffer.from(encodeReceipt(plain, { widthChars: 42, codepage })).toString('hex'),
      );
      const { receipts, errors } = printOn(bytes);
      expect(errors).toEqual([]);
      expect(receipts).toHaveLength(1);
      expect(receipts[0]?.lines).toEqual(receiptTextLines(plain, 42));
    }
    // The table is chosen for the text as it prints: a control character is no reason to leave the configured one.
    expect(receiptCodepage({ title: 'Car\x1bpark\x1dV\x00', fields: [] }, 'cp858')).toBe('cp858');
  });

  for (const widthChars of [42, 48] as const)
    it(`prints the QR code of a long receipt's text within the ${widthChars}-character roll`, () => {
      // A converted payment's receipt as its own e-receipt (no receipts.eReceiptUrl): 930 bytes, a code of 117
      // modules, 585 dots wide at 5 dots a module — wider than the 504 or 576 dots a roll prints on.
      const text = [
        RECEIPT.title,
        ...Array.from({ length: 27 }, (_, i) => `Line ${String(i).padStart(2, '0')}: ${'x'.repeat(24)}`),
      ].join('\n');
      const { receipts, errors } = printOn(
        encodeReceipt({ ...RECEIPT, qr: text }, { widthChars, codepage: 'cp858' }),
        undefined,
        widthChars,
      );
      expect(errors).toEqual([]);
      expect(receipts[0]?.qrCodes).toEqual([text]);
    });
});
