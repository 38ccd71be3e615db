import type { PrintableField } from '../../devices/printer/index.js';
import { VALUE_INDENT } from '../../devices/printer/layout.js';

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
