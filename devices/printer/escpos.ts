import CodepageEncoder from '@point-of-sale/codepage-encoder';
import ReceiptPrinterEncoder from '@point-of-sale/receipt-printer-encoder';
import QRCode from 'qrcode';
import { centred, printableText, receiptTextLines } from './layout.js';
import { QR_ERROR_CORRECTION, type PrintableReceipt } from './printer.js';

/** Character code tables the terminal selects (ESC t n, Epson numbering: see {@link ESC_T_CODEPAGES}). */
export type PrinterCodepage =
  'cp437' | 'cp850' | 'cp852' | 'cp858' | 'cp860' | 'cp863' | 'cp865' | 'cp866' | 'windows1252';

const ESC = 0x1b;

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

/** ESC t's n of each table (the inverse of {@link ESC_T_CODEPAGES}). */
const ESC_T_OF = new Map<PrinterCodepage, number>(
  Object.entries(ESC_T_CODEPAGES).map(([n, codepage]) => [codepage, Number(n)]),
);

/**
 * Whether a table's byte prints as text. Bytes below 0x20 and 0x7F are commands to an ESC/POS printer (1B ESC, 1D GS,
 * 0A LF …), whatever glyph a code page chart draws there: cp437 and its kin draw ☺ ♥ • ← ↔ § ¶ at 0x01–0x1F and ⌂ at
 * 0x7F, and a character sent as one of those bytes would drive the printer ("↔V" is GS V, a cut) instead of printing.
 */
const printsAsText = (byte: number): boolean => byte >= 0x20 && byte !== 0x7f;

const tableBytes = new Map<PrinterCodepage, ReadonlyMap<number, number>>();
/** Each character the table prints as text → its byte (§ and ¶, at 0x15 and 0x14 too in cp850, by 0xF5 and 0xF4). */
function bytesOf(codepage: PrinterCodepage): ReadonlyMap<number, number> {
  let bytes = tableBytes.get(codepage);
  if (bytes === undefined) {
    const map = new Map<number, number>();
    CodepageEncoder.getCodepoints(codepage, true).forEach((codepoint, byte) => {
      if (printsAsText(byte) && !map.has(codepoint)) map.set(codepoint, byte);
    });
    bytes = map;
    tableBytes.set(codepage, bytes);
  }
  return bytes;
}

/** Whether every character of `text` prints as text from the code table (whitespace prints as a space). */
export function encodableIn(text: string, codepage: PrinterCodepage): boolean {
  const bytes = bytesOf(codepage);
  for (const ch of text.replace(/\s/g, ' ')) if (!bytes.has(ch.codePointAt(0) ?? 0)) return false;
  return true;
}

/** The bytes of one printed line in the code table: a character it does not print as text comes out as "?". */
function encodeLine(line: string, codepage: PrinterCodepage): number[] {
  const bytes = bytesOf(codepage);
  return [...line].map((ch) => bytes.get(ch.codePointAt(0) ?? 0) ?? 0x3f);
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
 * {@link qrModuleDots}, and none when it allows none), then a feed and a partial cut (GS V). The text's bytes are
 * encoded here ({@link encodableIn}): a character the code table does not print as text prints as "?", never as a
 * control byte.
 */
export function encodeReceipt(receipt: PrintableReceipt, layout: EscPosLayout): Uint8Array {
  const encoder = new ReceiptPrinterEncoder({
    language: 'esc-pos',
    columns: layout.widthChars,
    codepageMapping: 'epson',
    feedBeforeCut: 4,
  });
  const codepage = receiptCodepage(receipt, layout.codepage) ?? layout.codepage;
  // The text is encoded here, not by the encoder, which takes a character's first position in the table, a control
  // byte for § in cp858 (see printsAsText); ESC t with it.
  encoder.initialize().raw([ESC, 0x74, ESC_T_OF.get(codepage) ?? 0]);
  const titleLines = centred(receipt.title, layout.widthChars).length;
  receiptTextLines(receipt, layout.widthChars).forEach((line, i) => {
    const text = encodeLine(line, codepage);
    // The title in bold (ESC E 1 … ESC E 0).
    encoder.raw(i < titleLines ? [ESC, 0x45, 1, ...text, ESC, 0x45, 0] : text).newline();
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
