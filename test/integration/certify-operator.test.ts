/**
 * An operator step the terminal refuses itself sends nothing: a case that expected its message fails, and says why —
 * the operator's answer (its outcome and code), not only that no message was sent.
 */
import { describe, expect, it } from 'vitest';
import { runInlinePack } from './certify-fixture.js';

const PACK = `pack: operator
title: Operator steps the terminal refuses
version: "1"
config:
  dcc: { enabled: false }
cases:
  - id: PK-ATT-N2-CT-90
    title: Refund of more than the sale
    model: attended
    attended: true
    card: n2-contact
    steps:
      - do: sale
        amount: 5.00
        expect: [{ service: sale, amount: 5.00, status: AUTHORIZED }]
      - do: refund
        amount: 50.00
        expect: [{ service: refund-payment, amount: 50.00, status: PENDING }]
  - id: PK-ATT-N2-CT-91
    title: A refund of more than the sale, refused by the terminal as the case expects
    model: attended
    attended: true
    card: n2-contact
    steps:
      - do: sale
        amount: 5.00
        expect: [{ service: sale, amount: 5.00, status: AUTHORIZED }]
      - do: refund
        amount: 50.00
        expect: []
`;

describe('an operator step the terminal refuses', () => {
  it('fails a case that expected the message with the operator’s answer, and passes one that expected none', async () => {
    const report = await runInlinePack(PACK, 'operator.yaml');
    const [expected, refused] = report.cases;
    expect(expected).toMatchObject({ id: 'PK-ATT-N2-CT-90', verdict: 'failed' });
    const step = expected!.steps[1]!;
    expect(step.ok).toBe(false);
    expect(step.problems[0]).toContain('the terminal sent 0');
    expect(step.problems.join('\n')).toMatch(/operator refund: not-allowed REFUND_EXCEEDS_CAPTURED/);
    expect(expected!.problems.join('\n')).toMatch(/step 2 \(refund\): operator refund: not-allowed/);
    expect(refused).toMatchObject({ id: 'PK-ATT-N2-CT-91', verdict: 'passed' });
  }, 60_000);
});
