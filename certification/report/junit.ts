import { runOutcome, type CaseResult, type RunReport } from '../results.js';
import { escapeAttribute, escapeText } from './markup.js';
import { scrubCardNumbers } from './scrub.js';
import { errorFindings, messageLine, tallyRun } from './tally.js';

/**
 * JUnit XML of a run for CI servers (Jenkins, GitLab, GitHub test reporters): one `<testsuite>` for the pack, one
 * `<testcase>` per case with `classname` = the parking model and `name` = `<id> <title>`. A failed case carries one
 * `<failure>` listing its problems and error findings; a skipped case `<skipped message="reason"/>`; every case its
 * message summary in `<system-out>`. Every value is escaped and passed through {@link scrubCardNumbers}.
 */

function text(s: string): string {
  return escapeText(scrubCardNumbers(s));
}

function attr(s: string): string {
  return escapeAttribute(scrubCardNumbers(s));
}

function seconds(ms: number): string {
  return (Math.max(0, ms) / 1000).toFixed(3);
}

/**
 * The Ant JUnit schema's timestamp: ISO 8601 without a zone (`2025-03-01T09:30:00`), here always UTC. An unparsable
 * time is passed through as it is rather than invented.
 */
export function junitTimestamp(iso: string): string {
  const t = Date.parse(iso);
  return Number.isNaN(t) ? iso : new Date(t).toISOString().slice(0, 19);
}

/**
 * Why a case failed, one line each: its problems, then its error findings as `rule field: message (message #n)` —
 * those its problems do not state already (a run's problems state each one: `message #n (service): rule field: …`).
 */
export function failureLines(result: CaseResult): string[] {
  const lines = [...result.problems];
  for (const f of errorFindings(result)) {
    const stated = `${f.rule} ${f.field}: ${f.message}`;
    if (!result.problems.some((p) => p.includes(stated)))
      lines.push(`${stated} (message #${f.index}, ${f.service})`);
  }
  return lines.length > 0 ? lines : ['the case failed without a stated reason'];
}

function testcase(result: CaseResult): string {
  const open = `    <testcase classname="${attr(result.model)}" name="${attr(`${result.id} ${result.title}`)}" time="${seconds(result.durationMs)}">`;
  const inner: string[] = [];
  switch (result.verdict) {
    case 'failed': {
      const lines = failureLines(result);
      inner.push(
        `      <failure message="${attr(lines.join('; '))}" type="certification">${text(lines.join('\n'))}</failure>`,
      );
      break;
    }
    case 'skipped':
      inner.push(`      <skipped message="${attr(result.skipReason ?? 'not run')}"/>`);
      break;
    case 'passed':
      break;
  }
  const out = result.messages.map(messageLine);
  const warnings = result.findings.filter((f) => f.severity === 'warning');
  for (const f of warnings) out.push(`warning ${f.rule} ${f.field}: ${f.message} (message #${f.index})`);
  if (out.length > 0) inner.push(`      <system-out>${text(out.join('\n'))}</system-out>`);
  return inner.length > 0 ? `${open}\n${inner.join('\n')}\n    </testcase>` : `${open.slice(0, -1)}/>`;
}

/** The JUnit XML document of a run. */
export function renderJunit(report: RunReport): string {
  const t = tallyRun(report);
  const counts = `tests="${t.cases}" failures="${t.failed}" errors="0" skipped="${t.skipped}" time="${seconds(report.durationMs)}"`;
  const properties: [string, string][] = [
    ['pack.title', report.pack.title],
    ['pack.file', report.pack.file],
    ['pack.version', report.pack.version],
    ['gateway', report.gateway.kind === 'sandbox' ? 'sandbox' : report.gateway.url],
    ['gateway.credentials', report.gateway.credentials],
    ['terminal.id', report.terminal.terminalId],
    ['merchant.id', report.terminal.merchantId],
    ['partner.developerId', report.terminal.developerId],
    ['partner.solutionId', report.terminal.solutionId],
    ['partner.thirdPartyCertificationNumber', report.terminal.thirdPartyCertificationNumber],
    ['terminal.country', report.terminal.country],
    ['terminal.currency', report.terminal.currency],
    ['journal.timeoutReversalDelayMs', report.timeoutReversalDelayMs.join(', ')],
    ['outcome', runOutcome(t, report.stopped)],
    ['tool', `${report.tool.name} ${report.tool.version}`],
    ['messages', String(t.messages)],
    ['findings.error', String(t.errorFindings)],
    ['findings.warning', String(t.warningFindings)],
  ];
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${attr(`certify run ${report.pack.name}`)}" ${counts}>`,
    `  <testsuite name="${attr(report.pack.name)}" ${counts} timestamp="${attr(junitTimestamp(report.startedAt))}">`,
    '    <properties>',
    ...properties.map(([name, value]) => `      <property name="${attr(name)}" value="${attr(value)}"/>`),
    '    </properties>',
    ...report.cases.map(testcase),
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
