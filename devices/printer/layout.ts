import type { PrintableField, PrintableReceipt } from './printer.js';

/**
 * The text layout of a receipt on a roll `width` characters wide, as pure lines: the ESC/POS encoder prints exactly
 * these lines, and the simulator's decoded text is compared with them.
 *
 * - The title, centred.
 * - A rule of dashes.
 * - Each field on one line, the label left and the value right with at least two spaces between them; when it does
 *   not fit, the label on its own line and the value under it, indented by two spaces and wrapped at spaces (a word
 *   longer than the line is cut).
 * - A closing rule.
 *
 * Whitespace runs inside labels and values print as one space, so that a printed line reads back unambiguously
 * (two spaces only ever separate a label from its value).
 */

/** Indentation of a value wrapped under its label. */
export const VALUE_INDENT = '  ';

/**
 * Collapses whitespace runs (tabs and newlines included) to single spaces and trims. Control characters (C0, DEL, C1)
 * count as whitespace: a byte below 0x20 is an ESC/POS command to the printer (ESC p opens the cash drawer, GS V cuts,
 * ESC t switches the code table, NUL ends an argument), so a merchant name from the configuration or a disclaimer from
 * the gateway that carried one would otherwise drive the printer instead of printing. Letters written decomposed (u and
 * a combining diaeresis, as text copied from a PDF may carry "ü") are composed (NFC): the code tables hold the composed
 * letter and no combining mark.
 */
export function printableText(s: string): string {
  return s
    .normalize('NFC')
    .replace(/[\s\p{Cc}]+/gu, ' ')
    .trim();
}

/** Words of `text` in lines of at most `width` characters. */
export function wrapWords(text: string, width: number): string[] {
  const lines: string[] = [];
  let current = '';
  for (const word of printableText(text).split(' ')) {
    if (word === '') continue;
    let rest = word;
    while (rest.length > width) {
      if (current !== '') {
        lines.push(current);
        current = '';
      }
      lines.push(rest.slice(0, width));
      rest = rest.slice(width);
    }
    if (current === '') current = rest;
    else if (current.length + 1 + rest.length <= width) current = `${current} ${rest}`;
    else {
      lines.push(current);
      current = rest;
    }
  }
  if (current !== '') lines.push(current);
  return lines;
}

export function centred(text: string, width: number): string[] {
  return wrapWords(text, width).map((line) => {
    const pad = Math.floor((width - line.length) / 2);
    return `${' '.repeat(pad)}${line}`;
  });
}

export function fieldLines(field: PrintableField, width: number): string[] {
  const label = printableText(field.label);
  const value = printableText(field.value);
  if (label.length + 2 + value.length <= width)
    return [`${label}${' '.repeat(width - label.length - value.length)}${value}`];
  return [
    ...wrapWords(label, width),
    ...wrapWords(value, width - VALUE_INDENT.length).map((l) => `${VALUE_INDENT}${l}`),
  ];
}

export function rule(width: number): string {
  return '-'.repeat(width);
}

/** The printed lines of a receipt (the QR code, a picture, is not a line). */
export function receiptTextLines(receipt: PrintableReceipt, width: number): string[] {
  return [
    ...centred(receipt.title, width),
    rule(width),
    ...receipt.fields.flatMap((f) => fieldLines(f, width)),
    rule(width),
  ];
}
