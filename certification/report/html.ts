import { createHash } from 'node:crypto';
import {
  runOutcome,
  type CapturedExchange,
  type CaseFinding,
  type CaseResult,
  type RunOutcome,
  type RunReport,
  type StepResult,
  type Verdict,
} from '../results.js';
import { escapeAttribute, escapeText } from './markup.js';
import { scrubCardNumbers } from './scrub.js';
import { noAnswer, tallyRun } from './tally.js';

/**
 * The printable report for the acquirer's analyst: one self-contained HTML file (no script, no external resource,
 * inline CSS with a print stylesheet for A4) with a summary of the run and one section per case holding its verdict,
 * its steps, its findings and the masked messages as evidence. A Content-Security-Policy in the document itself
 * forbids scripts and every fetch, so even a value that escaped the escaping could not run or phone home.
 *
 * Every interpolated value goes through {@link scrubCardNumbers} and then HTML escaping.
 */

/** Escaped element content. */
function t(s: string | number | boolean): string {
  return escapeText(scrubCardNumbers(String(s)));
}

/** Escaped attribute value (the caller writes the quotes). */
function a(s: string): string {
  return escapeAttribute(scrubCardNumbers(s));
}

const STYLE = `
:root { color-scheme: light; --ink: #111; --muted: #555; --rule: #999; --fail: #a40000; --pass: #0a5c0a; --skip: #5a4a00; }
* { box-sizing: border-box; }
body { font: 10.5pt/1.4 "DejaVu Sans", "Liberation Sans", Arial, sans-serif; color: var(--ink); background: #fff; margin: 0 auto; max-width: 210mm; padding: 12mm; }
h1 { font-size: 18pt; margin: 0 0 4pt; }
h2 { font-size: 14pt; margin: 18pt 0 6pt; border-bottom: 1.5pt solid var(--ink); padding-bottom: 2pt; }
h3 { font-size: 12pt; margin: 12pt 0 4pt; }
h4 { font-size: 10.5pt; margin: 10pt 0 3pt; }
p, dl { margin: 4pt 0; }
.subtitle { color: var(--muted); margin: 0 0 10pt; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 1pt 10pt; }
dl.facts dt { font-weight: bold; }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
table { border-collapse: collapse; width: 100%; margin: 4pt 0 8pt; font-size: 9pt; }
th, td { border: 0.75pt solid var(--rule); padding: 2pt 4pt; text-align: left; vertical-align: top; overflow-wrap: break-word; }
table.cases tbody th, .nowrap { white-space: nowrap; }
thead th { background: #e8e8e8; border-bottom: 1.5pt solid var(--ink); }
tbody th { font-weight: normal; }
tr { break-inside: avoid; page-break-inside: avoid; }
thead { display: table-header-group; }
.counts td, .counts th { text-align: center; font-size: 11pt; }
.verdict { display: inline-block; white-space: nowrap; font-weight: bold; letter-spacing: 0.05em; padding: 0 4pt; border: 1pt solid currentColor; }
.verdict-passed { color: var(--pass); }
.verdict-failed { color: var(--fail); border-width: 2pt; }
.verdict-skipped { color: var(--skip); border-style: dashed; }
.bad { font-weight: bold; }
.bad::before { content: "\\2717\\00a0"; }
ul.problems { margin: 2pt 0 6pt 14pt; padding: 0; }
pre { font: 8pt/1.3 "DejaVu Sans Mono", "Liberation Mono", monospace; white-space: pre-wrap; overflow-wrap: anywhere; word-break: break-all; border: 0.75pt solid var(--rule); background: #f6f6f6; padding: 4pt; margin: 2pt 0 6pt; }
.message { border-left: 2pt solid var(--rule); padding-left: 6pt; margin: 8pt 0; break-inside: auto; }
.note { color: var(--muted); font-style: italic; }
a { color: inherit; }
section.case { margin-top: 20pt; }
@page { size: A4; margin: 14mm 12mm 16mm; }
@media print {
  body { max-width: none; padding: 0; font-size: 9.5pt; }
  section.case { break-before: page; page-break-before: always; margin-top: 0; }
  h2, h3, h4 { break-after: avoid; page-break-after: avoid; }
  thead th { background: none; }
  pre { background: none; }
  a { text-decoration: none; }
  .verdict, .verdict-passed, .verdict-failed, .verdict-skipped { color: #000; }
}
`;

/** `#case-…` anchors are made of the evidence file names, which are safe in an id and a URL fragment. */
function caseAnchor(fileName: string): string {
  return `case-${fileName}`;
}

function messageAnchor(fileName: string, index: number): string {
  return `case-${fileName}-msg-${index}`;
}

function verdictBadge(v: Verdict): string {
  return `<span class="verdict verdict-${a(v)}">${t(v.toUpperCase())}</span>`;
}

/** The run's result: a run in which every case was skipped checked nothing, which is no pass. */
function outcomeBadge(outcome: RunOutcome): string {
  const v: Verdict = outcome === 'passed' || outcome === 'failed' ? outcome : 'skipped';
  const why = {
    passed: 'every case run passed',
    failed: 'at least one case failed',
    stopped: 'the run was stopped before its last case',
    'nothing checked': 'every case was skipped: nothing was checked',
  }[outcome];
  return `<span class="verdict verdict-${a(v)}">${t(outcome.toUpperCase())}</span> ${t(why)}`;
}

/** `2025-03-01 09:30:00 UTC` for an ISO 8601 time; anything unparsable as it is. */
function when(iso: string): string {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? iso : `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

function seconds(ms: number): string {
  return `${(Math.max(0, ms) / 1000).toFixed(1)} s`;
}

/**
 * How long the run's terminals waited after a request left without an answer before its timeout reversal: the
 * evidence's timestamps show that wait, which the gateway's test host holds a terminal to (60 s).
 */
function delayText(report: RunReport): string {
  if (report.timeoutReversalDelayMs.length === 0) return 'not known: no case configured a terminal';
  const values = report.timeoutReversalDelayMs.map((ms) => `${ms / 1000} s`).join(', ');
  const whose =
    report.gateway.kind === 'sandbox'
      ? 'shortened for the embedded sandbox unless the configuration sets journal.timeoutReversalDelayMs'
      : 'journal.timeoutReversalDelayMs of the configuration';
  return `${values} after the original (${whose})`;
}

function facts(rows: [string, string][]): string {
  return `<dl class="facts">${rows.map(([k, v]) => `<dt>${t(k)}</dt><dd>${v}</dd>`).join('')}</dl>`;
}

/** A table with a header row (`scope="col"`) and, when `rowHeader`, the first cell of each row a `scope="row"` header. */
function table(caption: string, head: string[], rows: string[][], rowHeader = true, cls = ''): string {
  const thead = `<thead><tr>${head.map((h) => `<th scope="col">${t(h)}</th>`).join('')}</tr></thead>`;
  const body = rows
    .map(
      (cells) =>
        `<tr>${cells.map((c, i) => (i === 0 && rowHeader ? `<th scope="row">${c}</th>` : `<td>${c}</td>`)).join('')}</tr>`,
    )
    .join('\n');
  return `<table${cls ? ` class="${cls}"` : ''}><caption class="note">${t(caption)}</caption>${thead}<tbody>\n${body}\n</tbody></table>`;
}

function prettyJson(value: unknown): string {
  if (value === undefined) return '';
  try {
    return JSON.stringify(value, null, 2) ?? '';
  } catch {
    return '[not JSON]';
  }
}

/** A `<pre>` of a JSON value, with a note when a card number had to be removed from it. */
function evidencePre(label: string, value: unknown): string {
  const raw = prettyJson(value);
  const scrubbed = scrubCardNumbers(raw);
  const note =
    scrubbed === raw
      ? ''
      : `<p class="note">A value that reads as a full card number was removed from this ${t(label.toLowerCase())}.</p>`;
  return `<p><strong>${t(label)}</strong></p>${note}<pre>${escapeText(scrubbed)}</pre>`;
}

function expectedText(e: StepResult['expected'][number]): string {
  const parts = [e.service];
  if (e.amount !== undefined) parts.push(e.amount);
  if (e.status !== undefined) parts.push(`→ ${e.status}`);
  if (e.comments !== undefined) parts.push(`“${e.comments}”`);
  return parts.join(' ');
}

function actualText(x: StepResult['actual'][number]): string {
  const parts = [x.service];
  if (x.amount !== undefined) parts.push(x.amount);
  parts.push(`→ ${x.status}`);
  if (x.comments !== undefined) parts.push(`“${x.comments}”`);
  return parts.join(' ');
}

function lines(items: string[]): string {
  return items.length === 0 ? '—' : items.map(t).join('<br>');
}

function stepsTable(steps: StepResult[]): string {
  if (steps.length === 0) return '<p class="note">No steps were run.</p>';
  return table(
    'Each step: what the script expected the terminal to send, and what it sent.',
    ['#', 'Step', 'Expected', 'Actual', 'Screen (expected / shown)', 'Result'],
    steps.map((s) => [
      t(s.index + 1),
      `<strong>${t(s.action)}</strong><br>${t(s.description)}`,
      lines(s.expected.map(expectedText)),
      lines(s.actual.map(actualText)),
      `${s.expectedScreen !== undefined ? t(s.expectedScreen) : '—'} / ${s.screen !== undefined ? t(s.screen) : '—'}`,
      s.ok
        ? 'OK'
        : `<span class="bad">FAILED</span>${s.problems.length > 0 ? `<ul class="problems">${s.problems.map((p) => `<li>${t(p)}</li>`).join('')}</ul>` : ''}`,
    ]),
  );
}

function findingsTable(findings: CaseFinding[], fileName: string): string {
  if (findings.length === 0) return '<p>No findings: every message passed every rule.</p>';
  return table(
    'Findings of the message-level rules.',
    ['Rule', 'Category', 'Severity', 'Field', 'Message', 'Message #'],
    findings.map((f) => [
      t(f.rule),
      t(f.category),
      f.severity === 'error' ? `<span class="bad">${t('ERROR')}</span>` : t(f.severity),
      `<code>${t(f.field)}</code>`,
      t(f.message),
      `<a href="#${a(messageAnchor(fileName, f.index))}">${t(`#${f.index}`)}</a> ${t(f.service)}`,
    ]),
  );
}

function messageBlock(m: CapturedExchange, fileName: string): string {
  const amount =
    m.amount !== undefined ? t(m.currency !== undefined ? `${m.amount} ${m.currency}` : m.amount) : '—';
  return `<div class="message" id="${a(messageAnchor(fileName, m.index))}">
<h4>${t(`Message #${m.index}: ${m.service}`)}</h4>
${facts([
  ['Request', `<code>${t(`${m.method} ${m.path}`)}</code>`],
  ['Service', t(m.service)],
  ['Step', m.step === null ? 'after the last step' : t(m.step + 1)],
  ['Status', t(m.status)],
  ['HTTP status', m.httpStatus === null ? t(noAnswer(m)) : t(m.httpStatus)],
  ['Sent at', `${t(m.at)} (took ${t(`${m.durationMs} ms`)})`],
  ['transactionId', m.transactionId !== undefined ? `<code>${t(m.transactionId)}</code>` : '—'],
  ['Gateway id', m.gatewayId !== undefined ? `<code>${t(m.gatewayId)}</code>` : '—'],
  ['Amount', amount],
])}
${evidencePre('Request body', m.body)}
${m.response !== undefined ? evidencePre('Answer', m.response) : '<p><strong>Answer</strong></p><p class="note">No JSON answer.</p>'}
</div>`;
}

function caseSection(c: CaseResult, fileName: string): string {
  const problems =
    c.problems.length > 0
      ? `<h3>Problems</h3><ul class="problems">${c.problems.map((p) => `<li>${t(p)}</li>`).join('')}</ul>`
      : '';
  const skipped =
    c.verdict === 'skipped' ? `<p><strong>Not run:</strong> ${t(c.skipReason ?? 'no reason given')}</p>` : '';
  const evidence =
    c.messages.length > 0
      ? c.messages.map((m) => messageBlock(m, fileName)).join('\n')
      : '<p class="note">The terminal sent no message in this case.</p>';
  return `<section class="case" id="${a(caseAnchor(fileName))}" aria-labelledby="${a(`${caseAnchor(fileName)}-title`)}">
<h2 id="${a(`${caseAnchor(fileName)}-title`)}">${t(c.id)}: ${t(c.title)}</h2>
<p>${verdictBadge(c.verdict)}</p>
${facts([
  ['Model', t(c.model)],
  ['Network', t(c.network)],
  ['Entry mode', t(c.entryMode)],
  ['Attended', c.attended ? 'yes' : 'no'],
  ['Card profile', t(c.card)],
  ['Parent case', c.parent !== undefined ? t(c.parent) : '—'],
  ['Terminal id', c.terminal !== undefined ? `<code>${t(c.terminal.terminalId)}</code>` : '—'],
  ['Currency', t(c.currency)],
  ['Run', `${t(when(c.startedAt))} to ${t(when(c.finishedAt))} (${t(seconds(c.durationMs))})`],
  [
    'transactionIds',
    c.transactionIds.length > 0 ? c.transactionIds.map((id) => `<code>${t(id)}</code>`).join(', ') : '—',
  ],
  [
    'Gateway ids',
    c.gatewayIds.length > 0 ? c.gatewayIds.map((id) => `<code>${t(id)}</code>`).join(', ') : '—',
  ],
  [
    'Evidence files',
    `<a href="${a(`cases/${fileName}.json`)}">${t(`cases/${fileName}.json`)}</a>, <a href="${a(`cases/${fileName}.capture.json`)}">${t(`cases/${fileName}.capture.json`)}</a>`,
  ],
])}
${skipped}${problems}
<h3>Steps</h3>
${stepsTable(c.steps)}
<h3>Findings</h3>
${findingsTable(c.findings, fileName)}
<h3>Evidence</h3>
${evidence}
</section>`;
}

/**
 * The HTML report of a run.
 *
 * @param fileNames each case's evidence file name (see `caseFileNames`), in case order; also its anchor.
 */
export function renderHtml(report: RunReport, fileNames: readonly string[]): string {
  const tally = tallyRun(report);
  const style = STYLE.trim();
  const styleHash = createHash('sha256').update(style).digest('base64');
  const csp = `default-src 'none'; style-src 'sha256-${styleHash}'; img-src data:; base-uri 'none'; form-action 'none'`;
  const gateway = report.gateway.kind === 'sandbox' ? 'embedded sandbox' : report.gateway.url;
  const title = `Certification report: ${report.pack.title}`;
  const caseRows = report.cases.map((c, i) => {
    const name = fileNames[i] ?? String(i);
    return [
      `<a href="#${a(caseAnchor(name))}">${t(c.id)}</a>`,
      t(c.title),
      t(c.model),
      t(c.network),
      t(c.entryMode),
      c.attended ? 'yes' : 'no',
      verdictBadge(c.verdict),
    ];
  });
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${a(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="${a(`${report.tool.name} ${report.tool.version}`)}">
<title>${t(title)}</title>
<style>${style}</style>
</head>
<body>
<header>
<h1>${t(title)}</h1>
<p class="subtitle">${t(`Pack ${report.pack.name} ${report.pack.version}`)}, ${t(`run of ${when(report.startedAt)}`)}</p>
</header>
<main>
<section id="summary" aria-labelledby="summary-title">
<h2 id="summary-title">Summary</h2>
${facts([
  ['Result', outcomeBadge(runOutcome(tally, report.stopped))],
  [
    'Pack',
    `${t(report.pack.title)} (<code>${t(report.pack.name)}</code>, version ${t(report.pack.version)}, ${t(report.pack.file)})`,
  ],
  [
    'Gateway',
    `${t(gateway)} (${report.gateway.credentials === 'configuration' ? 'credentials of the configuration' : 'sandbox credentials'})`,
  ],
  ['Terminal id', `<code>${t(report.terminal.terminalId)}</code>`],
  ['Merchant id', `<code>${t(report.terminal.merchantId)}</code>`],
  [
    'Partner ids',
    `developerId <code>${t(report.terminal.developerId)}</code>, solutionId <code>${t(report.terminal.solutionId)}</code>, thirdPartyCertificationNumber <code>${t(report.terminal.thirdPartyCertificationNumber)}</code>`,
  ],
  ['Country / currency', `${t(report.terminal.country)} / ${t(report.terminal.currency)}`],
  ['Timeout reversal delay', t(delayText(report))],
  [
    'Date',
    `${t(when(report.startedAt))} to ${t(when(report.finishedAt))} (${t(seconds(report.durationMs))})`,
  ],
  ['Tool', t(`${report.tool.name} ${report.tool.version}`)],
])}
${table(
  'Totals of the run.',
  ['Cases', 'Passed', 'Failed', 'Skipped', 'Messages', 'Error findings', 'Warning findings'],
  [
    [
      t(tally.cases),
      t(tally.passed),
      t(tally.failed),
      t(tally.skipped),
      t(tally.messages),
      t(tally.errorFindings),
      t(tally.warningFindings),
    ],
  ],
  false,
  'counts',
)}
<h3>Cases</h3>
${
  caseRows.length > 0
    ? table(
        'Every case of the run; the id links to its section.',
        ['Case', 'Title', 'Model', 'Network', 'Entry mode', 'Attended', 'Verdict'],
        caseRows,
        true,
        'cases',
      )
    : '<p>The run has no cases.</p>'
}
</section>
${report.cases.map((c, i) => caseSection(c, fileNames[i] ?? String(i))).join('\n')}
</main>
</body>
</html>
`;
}
