/**
 * The entry mode of the case's card: a builder that sends a chip read as a tap — entryMode contactless with the
 * contact read's tags, terminalCapability 5 and no 9F39, consistent inside the message so that no message rule can
 * see it — must fail the case, because the case says which card the reader presented and how it is read.
 */
import { describe, expect, it, vi } from 'vitest';
import type * as Payments from '../../src/gateway/services/payments.js';
import { runShippedCases } from './certify-fixture.js';

vi.mock('../../src/gateway/services/payments.js', async (importOriginal) => {
  const { withSeededDefect } = await import('./seeded-defect.js');
  return withSeededDefect<{ pointOfSaleInformation?: { entryMode?: unknown } }>(
    await importOriginal<typeof Payments>(),
    (body) => {
      if (body.pointOfSaleInformation?.entryMode !== 'contact') return false;
      body.pointOfSaleInformation.entryMode = 'contactless';
      return true;
    },
  );
});

describe('a builder that sends a contact read as contactless', () => {
  it('fails the contact case naming entryMode, and leaves the contactless case passing', async () => {
    const report = await runShippedCases('PK-ATT-N1-CT-01', 'PK-ATT-N1-CL-01');
    const [contact, contactless] = report.cases;
    expect(contact).toMatchObject({ id: 'PK-ATT-N1-CT-01', verdict: 'failed' });
    expect(contact!.problems).toContainEqual(
      expect.stringMatching(/^message #0 \(sale\): pointOfSaleInformation\.entryMode contactless: .*contact/),
    );
    expect(contactless).toMatchObject({ id: 'PK-ATT-N1-CL-01', verdict: 'passed' });
  }, 60_000);
});
