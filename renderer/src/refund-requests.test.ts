import { describe, expect, it } from 'vitest';
import { RefundRequestIds } from './refund-requests.js';

const approved = { ok: true as const, value: { type: 'refund', outcome: 'approved' } };
const failed = (code: string) => ({ ok: false as const, error: { code, message: code } });

describe('RefundRequestIds', () => {
  it('asks for a refund whose answer never came under its first id again, for the same payment and amount', () => {
    for (const code of ['DISCONNECTED', 'TIMEOUT', 'INTERNAL']) {
      const ids = new RefundRequestIds();
      const first = ids.idFor('T1', 300);
      ids.settle('T1', 300, failed(code));
      expect(ids.idFor('T1', 300)).toBe(first);
      // Another amount, or all that is left, or another payment, is another refund.
      expect(ids.idFor('T1', 200)).not.toBe(first);
      expect(ids.idFor('T1', undefined)).not.toBe(first);
      expect(ids.idFor('T2', 300)).not.toBe(first);
    }
  });

  it('takes a new id once the terminal answered, with an outcome or a refusal of its own', () => {
    for (const answer of [approved, failed('ALT_REFUND_ABOVE_SETTLED'), failed('OPERATOR_PIN')]) {
      const ids = new RefundRequestIds();
      const first = ids.idFor('T1', 300);
      ids.settle('T1', 300, answer);
      expect(ids.idFor('T1', 300)).not.toBe(first);
    }
  });

  it('keeps the id of a refund armed and not sent, which the terminal has not seen', () => {
    const ids = new RefundRequestIds();
    expect(ids.idFor('T1', undefined)).toBe(ids.idFor('T1', undefined));
  });
});
