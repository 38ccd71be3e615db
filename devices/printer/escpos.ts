import ReceiptPrinterEncoder from '@point-of-sale/receipt-printer-encoder';
import { centred, receiptTextLines } from './layout.js';
import type { PrintableReceipt } from './printer.js';

/** Character code tables the terminal selects (ESC t n, Epson numbering: see {@link ESC_T_CODEPAGES}). */
export type PrinterCodepage =
  'cp437' | 'cp850' | 'cp852' | 'cp858' | 'cp860' | 'cp863' | 'cp865' | 'cp866' | 'windows1252';

/** ESC t n → table, as Epson (and the encoder's `epson` mapping) number them. */
export const ESC_T_CODEPAGES: Readonly<Record<number, PrinterCodepage>> = {
  0: 'cp437',
  2: 'cp850',
  3: 'cp860',
  4: 'cp863',
  5: 'cp865',
  16: 'windows1252',
  17: 'cp866',
  18: 'cp852',
  19: 'cp858',
};

export interface EscPosLayout {
  /** Characters per line in font A (42 or 48). */
  readonly widthChars: number;
  readonly codepage: PrinterCodepage;
}

/**
 * The ESC/POS bytes of one receipt, through `@point-of-sale/receipt-printer-encoder`: initialise (ESC @), the code
 * table (ESC t), the lines of {@link receiptTextLines} (the title in bold), the QR code when there is one (GS ( k,
 * model 2, error correction M: kiosk.md §4), then a feed and a partial cut (GS V). A character the code table lacks
 * prints as "?".
 */
export function encodeReceipt(receipt: PrintableReceipt, layout: EscPosLayout): Uint8Array {
  const encoder = new ReceiptPrinterEncoder({
    language: 'esc-pos',
    columns: layout.widthChars,
    codepageMapping: 'epson',
    feedBeforeCut: 4,
  });
  encoder.initialize().codepage(layout.codepage);
  const titleLines = centred(receipt.title, layout.widthChars).length;
  receiptTextLines(receipt, layout.widthChars).forEach((line, i) => {
    if (i < titleLines) encoder.bold(true).line(line).bold(false);
    else encoder.line(line);
  });
  if (receipt.qr !== undefined && receipt.qr !== '')
    encoder.align('center').qrcode(receipt.qr, { model: 2, size: 5, errorlevel: 'm' }).align('left');
  return encoder.cut('partial').encode();
}
