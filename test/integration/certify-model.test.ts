/**
 * catLevel per model (spec 001: unattended 2, attended mobile 6): a builder that declares a meter attended — catLevel
 * 6 with an attended operating environment, consistent inside the message so that no message rule can see it — must
 * fail the case, because the case says which model and attendance the terminal is.
 */
import { describe, expect, it, vi } from 'vitest';
import type * as Payments from '../../src/gateway/services/payments.js';
import { runShippedCases } from './certify-fixture.js';

vi.mock('../../src/gateway/services/payments.js', async (importOriginal) => {
  const { withSeededDefect } = await import('./seeded-defect.js');
  return withSeededDefect<{
    pointOfSaleInformation?: { catLevel?: unknown; operatingEnvironment?: unknown };
  }>(await importOriginal<typeof Payments>(), (body) => {
    if (body.pointOfSaleInformation?.catLevel === undefined) return false;
    body.pointOfSaleInformation.catLevel = 6;
    body.pointOfSaleInformation.operatingEnvironment = '3';
    return true;
  });
});

describe('a builder that sends the attended catLevel from an unattended meter', () => {
  it('fails the meter case naming catLevel', async () => {
    const report = await runShippedCases('PK-MTR-N2-CT-01');
    const [meter] = report.cases;
    expect(meter).toMatchObject({ id: 'PK-MTR-N2-CT-01', verdict: 'failed' });
    expect(meter!.problems.some((p) => p.includes('pointOfSaleInformation.catLevel'))).toBe(true);
  }, 60_000);
});
