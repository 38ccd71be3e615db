import type { CapturedExchange, CaseResult, RunReport } from '../results.js';

/** The counts both reports print, taken from the cases themselves so that a summary can never disagree with them. */
export interface RunTally {
  cases: number;
  passed: number;
  failed: number;
  skipped: number;
  messages: number;
  errorFindings: number;
  warningFindings: number;
}

export function tallyRun(report: Pick<RunReport, 'cases'>): RunTally {
  const t: RunTally = {
    cases: 0,
    passed: 0,
    failed: 0,
    skipped: 0,
    messages: 0,
    errorFindings: 0,
    warningFindings: 0,
  };
  for (const c of report.cases) {
    t.cases += 1;
    t[c.verdict] += 1;
    t.messages += c.messages.length;
    for (const f of c.findings) {
      if (f.severity === 'error') t.errorFindings += 1;
      else t.warningFindings += 1;
    }
  }
  return t;
}

/** The error findings of a case, in message order. */
export function errorFindings(result: CaseResult): CaseResult['findings'] {
  return result.findings.filter((f) => f.severity === 'error');
}

/**
 * One line per message for a CI log: `#0 POST /pts/v2/payments authorization 25.00 EUR -> 201 AUTHORIZED
 * tx=T… id=… 120 ms`. Bodies stay out: they are in the evidence files.
 */
export function messageLine(m: CapturedExchange): string {
  const parts = [`#${m.index}`, m.method, m.path, m.service];
  if (m.amount !== undefined) parts.push(m.currency !== undefined ? `${m.amount} ${m.currency}` : m.amount);
  parts.push('->', m.httpStatus === null ? 'no answer' : String(m.httpStatus), m.status);
  if (m.transactionId !== undefined) parts.push(`tx=${m.transactionId}`);
  if (m.gatewayId !== undefined) parts.push(`id=${m.gatewayId}`);
  parts.push(`${m.durationMs} ms`, `at ${m.at}`);
  return parts.join(' ');
}
