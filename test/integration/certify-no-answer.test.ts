/**
 * A request whose answer never came is evidence too: the report says why none came (the connection reset, the answer
 * timed out), as the terminal's client saw it, not only "no answer".
 */
import { describe, expect, it } from 'vitest';
import { renderHtml, renderJunit } from '../../certification/report/index.js';
import { runInlinePack } from './certify-fixture.js';

const PACK = `pack: no-answer
title: A sale whose answer is lost
version: "1"
config:
  dcc: { enabled: false }
cases:
  - id: PK-ATT-N2-CT-92
    title: Sale reset after commit, timeout void
    model: attended
    attended: true
    card: n2-contact
    steps:
      - do: sale
        amount: 5.00
        faults: [{ kind: reset-after-commit, path: /pts/v2/payments, method: POST }]
        expect:
          - { service: sale, amount: 5.00, status: NO ANSWER }
          - { service: timeout-void, status: VOIDED }
`;

describe('a request without answer in the evidence', () => {
  it('keeps why no answer came, in the case result, the HTML evidence and the JUnit output', async () => {
    const report = await runInlinePack(PACK, 'no-answer.yaml');
    const [result] = report.cases;
    expect(result?.problems).toEqual([]);
    const lost = result!.messages[0]!;
    expect(lost).toMatchObject({ service: 'sale', status: 'NO ANSWER', httpStatus: null });
    expect(lost.failure).toEqual(expect.any(String));
    expect(lost.failure!.length).toBeGreaterThan(0);
    expect(renderHtml(report, [result!.id])).toContain(`no answer: ${lost.failure!}`);
    expect(renderJunit(report)).toContain(`no answer: ${lost.failure!}`);
  }, 60_000);
});
