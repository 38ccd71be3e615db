/**
 * A case's problems and findings quote what the terminal sent; they are card data free as its evidence is
 * (certification/results.ts): a builder that puts a card number where a terminal id or a comment goes must not have
 * it printed in the progress lines, on stdout or in any report.
 */
import { describe, expect, it, vi } from 'vitest';
import type * as Payments from '../../src/gateway/services/payments.js';
import { runShippedCases } from './certify-fixture.js';

const PAN = '4111111111111111';

vi.mock('../../src/gateway/services/payments.js', async (importOriginal) => {
  const { withSeededDefect } = await import('./seeded-defect.js');
  return withSeededDefect<{
    clientReferenceInformation: { comments: string };
    pointOfSaleInformation: { terminalId: string };
  }>(await importOriginal<typeof Payments>(), (body, prepared) => {
    if (prepared.service !== 'sale') return false;
    body.pointOfSaleInformation.terminalId = '4111111111111111';
    body.clientReferenceInformation.comments = 'Parking Sale 4111111111111111';
    return true;
  });
});

describe('a builder that sends a card number in a terminal id and a comment', () => {
  it('fails the case with problems and findings that show the number masked', async () => {
    const report = await runShippedCases('PK-ATT-N1-CT-01');
    const [sale] = report.cases;
    expect(sale).toMatchObject({ id: 'PK-ATT-N1-CT-01', verdict: 'failed' });
    expect(sale!.problems).toEqual(
      expect.arrayContaining([
        'message #0 (sale): pointOfSaleInformation.terminalId 411111******1111: the terminal is configured with PT000001',
        'step 1 (sale): message 1 (sale): expected comments "Parking Sale", sent "Parking Sale 411111******1111"',
      ]),
    );
    expect(JSON.stringify(report)).not.toContain(PAN);
  }, 60_000);
});
