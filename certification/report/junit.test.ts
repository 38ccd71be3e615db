import { describe, expect, it } from 'vitest';
import { junitTimestamp, renderJunit } from './junit.js';
import { HOSTILE_TEXT, sampleRunReport, withHostileText } from './sample-run.js';

function testcases(xml: string): string[] {
  return xml.match(/<testcase [\s\S]*?(?:\/>|<\/testcase>)/g) ?? [];
}

describe('renderJunit', () => {
  it('counts tests, failures and skipped cases in the suite', () => {
    const xml = renderJunit(sampleRunReport());
    expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites ')).toBe(true);
    expect(xml).toContain(
      '<testsuite name="parking-core" tests="3" failures="1" errors="0" skipped="1" time="6.000" timestamp="2025-03-01T09:30:00">',
    );
    expect(xml.match(/<testsuite /g)).toHaveLength(1);
    expect(testcases(xml)).toHaveLength(3);
  });

  it('states the partner ids and the gateway credentials of the run among its properties', () => {
    const xml = renderJunit(sampleRunReport());
    expect(xml).toContain('<property name="partner.developerId" value="12345678"/>');
    expect(xml).toContain('<property name="partner.solutionId" value="PARKTERM"/>');
    expect(xml).toContain('<property name="partner.thirdPartyCertificationNumber" value="PT0000000001"/>');
    expect(xml).toContain('<property name="gateway.credentials" value="sandbox"/>');
    expect(xml).toContain('<property name="outcome" value="failed"/>');
  });

  it('names each case by model, id and title', () => {
    const [passed] = testcases(renderJunit(sampleRunReport()));
    expect(passed).toContain(
      '<testcase classname="meter" name="PK-MTR-N2-CL-01 Meter: pre-authorize 25.00, capture 18.75 less than authorized" time="2.000">',
    );
  });

  it('lists the problems and the error findings of a failed case, and not its warnings, in one failure', () => {
    const failed = testcases(renderJunit(sampleRunReport()))[1]!;
    expect(failed.match(/<failure /g)).toHaveLength(1);
    const message = /<failure message="([^"]*)"/.exec(failed)![1]!;
    expect(message).toContain('step 2 (cancel): expected authorization-reversal → REVERSED, got NO ANSWER');
    expect(message).toContain(
      'IC-REVERSAL-TAGS pointOfSaleInformation.emv.tags: a reversal of an EMV authorization must repeat its tags',
    );
    expect(message).not.toContain('CE-9F1A-COUNTRY');
    // The body has one line per reason; the warning is in the output, marked as such.
    expect(failed).toMatch(/<failure [^>]*>[^<]*\nIC-REVERSAL-TAGS/);
    expect(failed).toContain('warning CE-9F1A-COUNTRY');
  });

  it('lists an error finding once when the case’s problems already state it, as a run’s do', () => {
    const report = sampleRunReport();
    report.cases[1]!.problems.push(
      'message #1 (authorization-reversal): IC-REVERSAL-TAGS pointOfSaleInformation.emv.tags: a reversal of an EMV authorization must repeat its tags',
    );
    const failed = testcases(renderJunit(report))[1]!;
    const body = /<failure [^>]*>([^<]*)<\/failure>/.exec(failed)![1]!;
    expect(body.match(/IC-REVERSAL-TAGS/g)).toHaveLength(1);
  });

  it('marks a skipped case with its reason and no failure', () => {
    const skipped = testcases(renderJunit(sampleRunReport()))[2]!;
    expect(skipped).toContain('<skipped message="the test host cannot inject a swipe fallback"/>');
    expect(skipped).not.toContain('<failure');
  });

  it('puts the masked message summary of each case in system-out, without bodies', () => {
    const passed = testcases(renderJunit(sampleRunReport()))[0]!;
    expect(passed).not.toContain('<failure');
    const out = /<system-out>([\s\S]*)<\/system-out>/.exec(passed)![1]!;
    expect(out.split('\n')[0]).toBe(
      '#0 POST /pts/v2/payments authorization 25.00 EUR -&gt; 201 AUTHORIZED tx=T01JNQ8ZQ00ABCDEFGHJKMNPQ id=741234567890123450 120 ms at 2025-03-01T09:30:00.000Z',
    );
    expect(out).not.toContain('9F0206');
  });

  it('escapes every hostile value and drops the control characters XML forbids', () => {
    const xml = renderJunit(withHostileText(sampleRunReport()));
    expect(xml).not.toMatch(/<script/i);
    expect(xml).not.toContain('"pwn"');
    expect(xml).not.toContain(']]>');
    // eslint-disable-next-line no-control-regex
    expect(xml).not.toMatch(/[\u0000-\u0008\u000B\u000C\u000E-\u001F]/);
    expect(xml).toContain('&lt;script&gt;alert(&quot;pwn&quot;)&lt;/script&gt;&#39; &amp; ]]&gt; --&gt; ');
    // Outside attribute values and element content, only our own markup: every `&` starts an entity.
    expect(xml.replace(/&(amp|lt|gt|quot|#39|#9|#10|#13);/g, '')).not.toContain('&');
    expect(HOSTILE_TEXT).toContain('\u0001');
  });

  it('keeps a full card number out of failure messages and output', () => {
    const report = sampleRunReport();
    report.cases[1]!.problems.push('card 4111 1111 1111 1111 was declined');
    report.cases[1]!.messages[0]!.path = '/pts/v2/payments?pan=4111111111111111';
    const xml = renderJunit(report);
    expect(xml.replace(/[ -]/g, '')).not.toContain('4111111111111111');
    expect(xml).toContain('card [REDACTED] was declined');
  });
});

describe('junitTimestamp', () => {
  it('writes UTC without a zone, as the JUnit schema wants, and passes an unparsable time through', () => {
    expect(junitTimestamp('2025-03-01T10:30:00.123+01:00')).toBe('2025-03-01T09:30:00');
    expect(junitTimestamp('yesterday')).toBe('yesterday');
  });
});
