import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { caseFileNames } from './evidence.js';
import { renderHtml } from './html.js';
import { sampleRunReport, withHostileText } from './sample-run.js';
import type { RunReport } from '../results.js';

function render(report: RunReport): string {
  return renderHtml(report, caseFileNames(report.cases));
}

const PAN = '4111111111111111';

describe('renderHtml', () => {
  it('is one self-contained English document: no script, no external resource, a CSP that forbids both', () => {
    const html = render(sampleRunReport());
    expect(html.startsWith('<!DOCTYPE html>\n<html lang="en">')).toBe(true);
    expect(html).not.toMatch(/<script|<link|<img|<iframe|<object|\ssrc=|@import|url\(/i);
    const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/
      .exec(html)![1]!
      .replaceAll('&#39;', "'");
    expect(csp).toContain("default-src 'none'");
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)![1]!;
    expect(csp).toContain(`'sha256-${createHash('sha256').update(style).digest('base64')}'`);
  });

  it('prints on A4 with each case on a new page', () => {
    const html = render(sampleRunReport());
    expect(html).toMatch(/@page \{ size: A4;/);
    expect(html).toMatch(/@media print \{[\s\S]*section\.case \{ break-before: page;/);
  });

  it('summarises the run and links every case row to its section', () => {
    const html = render(sampleRunReport());
    expect(html).toContain('<h2 id="summary-title">Summary</h2>');
    expect(html).toContain('<td>3</td><td>1</td><td>1</td><td>1</td><td>4</td><td>1</td><td>2</td>');
    for (const id of ['PK-MTR-N2-CL-01', 'PK-KSK-N1-CT-02', 'PK-TAP-N2-SW-03']) {
      expect(html).toContain(`<a href="#case-${id}">${id}</a>`);
      expect(html).toContain(`<section class="case" id="case-${id}"`);
    }
    expect(html.match(/<th scope="col">/g)!.length).toBeGreaterThan(10);
    expect(html).toContain('<th scope="row">');
  });

  it('states the result of the run, and a run whose every case was skipped as nothing checked', () => {
    expect(render(sampleRunReport())).toContain(
      '<dt>Result</dt><dd><span class="verdict verdict-failed">FAILED</span> at least one case failed</dd>',
    );
    const report = sampleRunReport();
    report.cases = report.cases.filter((c) => c.verdict === 'passed');
    expect(render(report)).toContain(
      '<dt>Result</dt><dd><span class="verdict verdict-passed">PASSED</span> every case run passed</dd>',
    );
    report.stopped = true;
    expect(render(report)).toContain(
      '<dt>Result</dt><dd><span class="verdict verdict-skipped">STOPPED</span> the run was stopped before its last case</dd>',
    );
    report.stopped = false;
    report.cases = sampleRunReport().cases.filter((c) => c.verdict === 'skipped');
    expect(render(report)).toContain(
      '<dt>Result</dt><dd><span class="verdict verdict-skipped">NOTHING CHECKED</span> every case was skipped: nothing was checked</dd>',
    );
  });

  it('states the identity the run used: terminal id, merchant id, partner ids and the gateway credentials', () => {
    const html = render(sampleRunReport());
    expect(html).toContain('<dt>Terminal id</dt><dd><code>PT000001</code></dd>');
    expect(html).toContain(
      'developerId <code>12345678</code>, solutionId <code>PARKTERM</code>, thirdPartyCertificationNumber <code>PT0000000001</code>',
    );
    expect(html).toContain('embedded sandbox (sandbox credentials)');
  });

  it('shows each case with its steps, findings and evidence', () => {
    const html = render(sampleRunReport());
    const failed = html.slice(html.indexOf('<section class="case" id="case-PK-KSK-N1-CT-02"'));
    expect(failed).toContain('<span class="verdict verdict-failed">FAILED</span>');
    expect(failed).toContain('expected authorization-reversal → REVERSED, got NO ANSWER');
    expect(failed).toContain('IC-REVERSAL-TAGS');
    expect(failed).toContain('<a href="#case-PK-KSK-N1-CT-02-msg-1">#1</a>');
    expect(failed).toContain('id="case-PK-KSK-N1-CT-02-msg-1"');
    expect(failed).toContain('No JSON answer.');
    expect(failed).toContain('&quot;number&quot;: &quot;411111******1111&quot;');
    expect(failed).toContain('5A08****************5F340101');
    expect(html).toContain('<strong>Not run:</strong> the test host cannot inject a swipe fallback');
  });

  it('shows a hostile <script> and quotes as text in every value it interpolates', () => {
    const html = render(withHostileText(sampleRunReport()));
    expect(html).not.toMatch(/<script/i);
    // A quote that survived unescaped would end an attribute; an apostrophe or ampersand would show raw.
    expect(html).not.toContain('"pwn"');
    expect(html).not.toContain("</script>' &");
    // eslint-disable-next-line no-control-regex
    expect(html).not.toMatch(/[\u0000-\u0008\u000B\u000C\u000E-\u001F]/);
    const shown = html.match(/&lt;script&gt;alert\(\\?&quot;pwn\\?&quot;\)&lt;\/script&gt;/g) ?? [];
    expect(shown.length).toBeGreaterThan(60);
    // Titles, ids, findings, steps, message facts, bodies and answers (keys included) all carry it.
    for (const fragment of [
      '<title>Certification report: Parking core pack&lt;script&gt;',
      'Parking core pack&lt;script&gt;',
      'PT000001&lt;script&gt;',
      'IC-REVERSAL-TAGS&lt;script&gt;',
      'pre-authorize for 60 minutes&lt;script&gt;',
      '&quot;&lt;script&gt;alert(\\&quot;pwn\\&quot;)',
    ])
      expect(html).toContain(fragment);
  });

  it('never lets a Luhn-valid card number planted in a body, an answer or a problem reach the report', () => {
    const report = sampleRunReport();
    const m = report.cases[0]!.messages[0]!;
    m.body.note = `card ${PAN}`;
    m.body.cardNumber = Number(PAN);
    m.response = { echo: { number: '4111-1111-1111-1111' } };
    report.cases[1]!.problems.push(`the terminal sent ${PAN}`);
    const html = render(report);
    expect(html.replace(/[\s-]/g, '')).not.toContain(PAN);
    expect(html).toContain('A value that reads as a full card number was removed from this request body.');
    expect(html).toContain('A value that reads as a full card number was removed from this answer.');
    // The evidence around it is intact.
    expect(html).toContain('5A08****************5F340101');
    expect(html).toContain('741234567890123450');
  });
});
