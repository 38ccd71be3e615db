import type { CapturedExchange, CaseResult } from '../results.js';

export { tallyRun, type RunTally } from '../results.js';

/** The error findings of a case, in message order. */
export function errorFindings(result: CaseResult): CaseResult['findings'] {
  return result.findings.filter((f) => f.severity === 'error');
}

/** `no answer`, with why none came when the client said: `no answer: other side closed`. */
export function noAnswer(m: Pick<CapturedExchange, 'failure'>): string {
  return m.failure !== undefined ? `no answer: ${m.failure}` : 'no answer';
}

/**
 * One line per message for a CI log: `#0 POST /pts/v2/payments authorization 25.00 EUR -> 201 AUTHORIZED
 * tx=T… id=… 120 ms`. Bodies stay out: they are in the evidence files.
 */
export function messageLine(m: CapturedExchange): string {
  const parts = [`#${m.index}`, m.method, m.path, m.service];
  if (m.amount !== undefined) parts.push(m.currency !== undefined ? `${m.amount} ${m.currency}` : m.amount);
  parts.push('->', m.httpStatus === null ? noAnswer(m) : String(m.httpStatus), m.status);
  if (m.transactionId !== undefined) parts.push(`tx=${m.transactionId}`);
  if (m.gatewayId !== undefined) parts.push(`id=${m.gatewayId}`);
  parts.push(`${m.durationMs} ms`, `at ${m.at}`);
  return parts.join(' ');
}
