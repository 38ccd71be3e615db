import type { PrintableField } from '../../devices/printer/index.js';
import { VALUE_INDENT } from '../../devices/printer/layout.js';
import { CATALOGUES } from '../../src/i18n/index.js';

/**
 * Reads a receipt's title and fields back from the lines the simulated printer decoded (the layout of
 * devices/printer/layout.ts): `label  value` on one line, or the label alone with the value wrapped under it,
 * indented. A test compares them with the on-screen receipt, field for field.
 */
export function readPrintedReceipt(lines: readonly string[]): { title: string; fields: PrintableField[] } {
  const rules = lines.flatMap((l, i) => (/^-+$/.test(l) ? [i] : []));
  const [open, close] = [rules[0] ?? -1, rules[rules.length - 1] ?? -1];
  if (open <= 0) throw new Error(`no title and rule in ${JSON.stringify(lines)}`);
  const title = lines
    .slice(0, open)
    .map((l) => l.trim())
    .join(' ');
  const fields: PrintableField[] = [];
  for (const line of lines.slice(open + 1, close)) {
    const last = fields[fields.length - 1];
    if (line.startsWith(VALUE_INDENT) && last) {
      fields[fields.length - 1] = {
        label: last.label,
        value: [last.value, line.trim()].filter(Boolean).join(' '),
      };
      continue;
    }
    const m = /^(\S.*?\S|\S) {2,}(\S.*)$/.exec(line);
    fields.push(m ? { label: m[1] ?? '', value: m[2] ?? '' } : { label: line, value: '' });
  }
  return { title, fields };
}

/**
 * `text` with the identifiers the gateway issued (approval code, transaction, reference: the values of those fields
 * in `locale`'s labels) replaced by `<issued>`. They are random digits and letters, so one may contain a card's
 * expiry or digits by chance (approval code 271287 holds "2712"); a search of a receipt for card data runs on this.
 * Only whole tokens are replaced: a value inside a longer run of letters or digits stays.
 */
export function withoutIssuedIdentifiers(
  text: string,
  fields: readonly PrintableField[],
  locale: string,
): string {
  const tr = CATALOGUES[locale as keyof typeof CATALOGUES];
  if (!tr) throw new Error(`no catalogue for ${locale}`);
  const labels = new Set<string>([
    tr['receipt.approvalCode'],
    tr['receipt.transaction'],
    tr['receipt.reference'],
  ]);
  return fields
    .filter((f) => labels.has(f.label) && f.value.length > 0)
    .reduce((t, f) => t.replace(wholeToken(f.value), '<issued>'), text);
}

const wholeToken = (value: string): RegExp =>
  new RegExp(`(?<![0-9A-Za-z])${value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![0-9A-Za-z])`, 'g');
