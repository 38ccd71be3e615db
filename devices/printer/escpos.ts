import CodepageEncoder from '@point-of-sale/codepage-encoder';
import ReceiptPrinterEncoder from '@point-of-sale/receipt-printer-encoder';
import QRCode from 'qrcode';
import { centred, printableText, receiptTextLines } from './layout.js';
import { QR_ERROR_CORRECTION, type PrintableReceipt } from './printer.js';

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

const tableChars = new Map<PrinterCodepage, ReadonlySet<number>>();
function charsOf(codepage: PrinterCodepage): ReadonlySet<number> {
  let chars = tableChars.get(codepage);
  if (chars === undefined) {
    chars = new Set(CodepageEncoder.getCodepoints(codepage, true));
    tableChars.set(codepage, chars);
  }
  return chars;
}

/** Whether every character of `text` is in the code table (whitespace prints as a space). */
export function encodableIn(text: string, codepage: PrinterCodepage): boolean {
  const chars = charsOf(codepage);
  for (const ch of text.replace(/\s/g, ' ')) if (!chars.has(ch.codePointAt(0) ?? 0)) return false;
  return true;
}

/**
 * The code table a receipt prints in: `preferred` (the configured one) when it holds every character of the title
 * and the fields, else the first table of {@link ESC_T_CODEPAGES} that does (Polish needs cp852, which cp858 lacks);
 * undefined when none does. Scripts written right to left with joined letters (Arabic) are in none of them on
 * purpose: a printer in text mode prints one isolated glyph per byte, left to right, so Arabic from cp864 or
 * windows-1256 would come out as unjoined letters in reverse order.
 */
export function receiptCodepage(
  receipt: Pick<PrintableReceipt, 'title' | 'fields'>,
  preferred: PrinterCodepage,
): PrinterCodepage | undefined {
  // The text as it prints (layout.ts printableText: control characters print as spaces).
  const text = printableText([receipt.title, ...receipt.fields.flatMap((f) => [f.label, f.value])].join(' '));
  const candidates = [preferred, ...Object.values(ESC_T_CODEPAGES).filter((c) => c !== preferred)];
  return candidates.find((codepage) => encodableIn(text, codepage));
}

/**
 * A QR code's data as the encoder takes it. The encoder writes each character of the data as one ISO 8859-1 byte, so
 * text beyond it ("ł", "€") would print as "?": the payload goes in as its UTF-8 bytes, one character per byte — the
 * same bytes the on-screen QR code (qrcode) holds, and what phone cameras read.
 */
/** The encoder's name of each QR error correction level. */
const ESC_POS_ERROR_LEVEL = { L: 'l', M: 'm', Q: 'q', H: 'h' } as const;

function qrData(payload: string): string {
  return Buffer.from(payload, 'utf8').toString('latin1');
}

/** Dots across the printable width of a roll of `widthChars` font A characters (12 dots each): 504 or 576. */
export function printableDots(widthChars: number): number {
  return 8 * Math.floor((widthChars * 12) / 8);
}

/** Dots per module of a receipt's QR code: 5 (0.625 mm at 203 dpi) when it fits, else as few as 3 (0.375 mm). */
const QR_MODULE_DOTS = [5, 4, 3] as const;

/**
 * The dots per module at which the QR code of `payload` fits the printable width of a `widthChars` roll (GS ( k fn
 * 67), or undefined when it fits at none: an Epson printer does not print a symbol wider than its print area, so a
 * long payload at 5 dots a module (a converted payment's receipt text, 109 modules and more) would leave the paper
 * without its code. Sized as the printer encodes it: the payload's UTF-8 bytes in byte mode, error correction
 * {@link QR_ERROR_CORRECTION}.
 */
export function qrModuleDots(payload: string, widthChars: number): number | undefined {
  let modules: number;
  try {
    modules = QRCode.create([{ data: Buffer.from(payload, 'utf8'), mode: 'byte' }], {
      errorCorrectionLevel: QR_ERROR_CORRECTION,
    }).modules.size;
  } catch {
    return undefined; // more data than any QR code holds
  }
  return QR_MODULE_DOTS.find((dots) => modules * dots <= printableDots(widthChars));
}

export interface EscPosLayout {
  /** Characters per line in font A (42 or 48). */
  readonly widthChars: number;
  readonly codepage: PrinterCodepage;
}

/**
 * The ESC/POS bytes of one receipt, through `@point-of-sale/receipt-printer-encoder`: initialise (ESC @), the code
 * table (ESC t: {@link receiptCodepage}, the configured one when it can print the receipt), the lines of {@link receiptTextLines} (the title in bold), the QR code when there is one (GS ( k,
 * model 2, error correction {@link QR_ERROR_CORRECTION}: kiosk.md §4; as many dots a module as the roll's width allows,
 * {@link qrModuleDots}, and none when it allows none), then a feed and a partial cut (GS V). A character the code table lacks
 * prints as "?".
 */
export function encodeReceipt(receipt: PrintableReceipt, layout: EscPosLayout): Uint8Array {
  const encoder = new ReceiptPrinterEncoder({
    language: 'esc-pos',
    columns: layout.widthChars,
    codepageMapping: 'epson',
    feedBeforeCut: 4,
  });
  encoder.initialize().codepage(receiptCodepage(receipt, layout.codepage) ?? layout.codepage);
  const titleLines = centred(receipt.title, layout.widthChars).length;
  receiptTextLines(receipt, layout.widthChars).forEach((line, i) => {
    if (i < titleLines) encoder.bold(true).line(line).bold(false);
    else encoder.line(line);
  });
  const qrSize =
    receipt.qr !== undefined && receipt.qr !== '' ? qrModuleDots(receipt.qr, layout.widthChars) : undefined;
  if (receipt.qr !== undefined && qrSize !== undefined)
    encoder
      .align('center')
      .qrcode(qrData(receipt.qr), {
        model: 2,
        size: qrSize,
        errorlevel: ESC_POS_ERROR_LEVEL[QR_ERROR_CORRECTION],
      })
      .align('left');
  return encoder.cut('partial').encode();
}
