/**
 * The terminal's identity in its messages: the terminal id and the partner ids (developerId, solutionId,
 * thirdPartyCertificationNumber) are the ones the acquirer matches the certification against, and the report states
 * the configured ones. A builder that sends others — well formed, so that no message rule can see it — must fail the
 * case.
 */
import { describe, expect, it, vi } from 'vitest';
import type * as Payments from '../../src/gateway/services/payments.js';
import { runShippedCases } from './certify-fixture.js';

vi.mock('../../src/gateway/services/payments.js', async (importOriginal) => {
  const { withSeededDefect } = await import('./seeded-defect.js');
  return withSeededDefect<{
    clientReferenceInformation: { partner: { developerId: string } };
    pointOfSaleInformation: { terminalId: string };
  }>(await importOriginal<typeof Payments>(), (body, prepared) => {
    if (prepared.service !== 'sale') return false;
    body.clientReferenceInformation.partner.developerId = '99999999';
    body.pointOfSaleInformation.terminalId = 'PT999999';
    return true;
  });
});

describe('a builder that sends another terminal id and developer id than configured', () => {
  it('fails the case naming both fields', async () => {
    const report = await runShippedCases('PK-ATT-N1-CT-01');
    const [sale] = report.cases;
    expect(report.terminal.terminalId).toBe('PT000001');
    expect(sale).toMatchObject({ id: 'PK-ATT-N1-CT-01', verdict: 'failed' });
    expect(sale!.problems).toEqual(
      expect.arrayContaining([
        'message #0 (sale): clientReferenceInformation.partner.developerId 99999999: the terminal is configured with 12345678',
        'message #0 (sale): pointOfSaleInformation.terminalId PT999999: the terminal is configured with PT000001',
      ]),
    );
  }, 60_000);
});
