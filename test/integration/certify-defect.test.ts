/**
 * A defect seeded in a request builder must make `certify run` fail, naming the case and the rule: the validator does
 * not share the builders (DESIGN.md), so a builder that drops the EMV tags of a reversal is caught by the rules and by
 * the sandbox, not excused by them.
 */
import { describe, expect, it, vi } from 'vitest';
import type * as Payments from '../../src/gateway/services/payments.js';
import { runShippedCases } from './certify-fixture.js';

vi.mock('../../src/gateway/services/payments.js', async (importOriginal) => {
  const { withSeededDefect } = await import('./seeded-defect.js');
  // The seeded defect: a reversal goes out without the original's EMV tags.
  return withSeededDefect<{ pointOfSaleInformation?: { emv?: { tags?: string } } }>(
    await importOriginal<typeof Payments>(),
    (body, prepared) => {
      if (prepared.service !== 'reversal') return false;
      delete body.pointOfSaleInformation?.emv?.tags;
      return true;
    },
  );
});

describe('a defect seeded in the reversal builder', () => {
  it('fails the reversal case naming the case and the rule, and leaves the other cases passing', async () => {
    const report = await runShippedCases('PK-MTR-N2-CT-03', 'PK-ATT-N2-CT-01');
    const [reversal, sale] = report.cases;
    expect(sale).toMatchObject({ id: 'PK-ATT-N2-CT-01', verdict: 'passed' });
    expect(reversal).toMatchObject({ id: 'PK-MTR-N2-CT-03', verdict: 'failed' });
    const finding = reversal!.findings.find((f) => f.rule === 'IC-REVERSAL-EMV-TAGS');
    expect(finding).toMatchObject({ rule: 'IC-REVERSAL-EMV-TAGS', severity: 'error', service: 'reversal' });
    expect(finding?.field).toContain('emv.tags');
    // Numbered as the evidence numbers it (the report's "Message #N", certify check's index), not one higher.
    const problem = reversal!.problems.find((p) => p.includes('IC-REVERSAL-EMV-TAGS'));
    expect(problem).toMatch(new RegExp(`^message #${finding!.index} \\(reversal\\): IC-REVERSAL-EMV-TAGS `));
    expect(reversal!.messages[finding!.index]?.service).toBe('reversal');
    expect(report.summary).toMatchObject({ failed: 1, passed: 1 });
  }, 60_000);
});
