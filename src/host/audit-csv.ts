import type { AuditRecord } from '../journal/index.js';

/** The columns of an audit log export, in order (the header row). */
export const AUDIT_CSV_COLUMNS = [
  'id',
  'time',
  'actor',
  'action',
  'subject',
  'result',
  'code',
  'details',
] as const;

/** A spreadsheet reads a cell starting with one of these as a formula (OWASP, CSV injection). */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * Quoted: what RFC 4180 quotes (comma, double quote, CR, LF), and the separators a spreadsheet may split on instead of
 * the comma (`;` where the comma is the decimal mark, tab): unquoted, they would start a cell in the middle of a value,
 * and that cell could begin with a formula (OWASP, CSV injection).
 */
const QUOTED = /[",;\t\r\n]/;

/**
 * One CSV field: a value a spreadsheet would run as a formula is prefixed with `'`, then the field is quoted when it
 * holds a separator, a double quote, CR or LF, with double quotes doubled (RFC 4180, 2.6–2.7).
 */
export function csvField(value: string): string {
  const safe = FORMULA_START.test(value) ? `'${value}` : value;
  return QUOTED.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/**
 * The audit log as CSV (RFC 4180): a header row, one row per record, CRLF after every row; `details` as its JSON
 * text. Absent fields are empty.
 */
export function auditCsv(records: readonly AuditRecord[]): string {
  const rows = [AUDIT_CSV_COLUMNS.join(',')];
  for (const r of records) {
    const cells: Record<(typeof AUDIT_CSV_COLUMNS)[number], string> = {
      id: String(r.id),
      time: r.time,
      actor: r.actor,
      action: r.action,
      subject: r.subject ?? '',
      result: r.result,
      code: r.code ?? '',
      details: JSON.stringify(r.details),
    };
    rows.push(AUDIT_CSV_COLUMNS.map((c) => csvField(cells[c])).join(','));
  }
  return `${rows.join('\r\n')}\r\n`;
}
