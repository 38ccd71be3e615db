/**
 * A defect seeded in the request builders, for a certification test to show that `certify run` catches it: the
 * payments module with the JSON body of what `preparePayment` builds rewritten. It imports no value, so that the
 * vi.mock factory of that very module can import it.
 */
import type * as Payments from '../../src/gateway/services/payments.js';
import type { PreparedRequest } from '../../src/gateway/services/types.js';

type PaymentsModule = typeof Payments;

/**
 * `original` with the body of every message it prepares handed to `seed`, which changes it in place and returns true,
 * or returns false to send that message as built.
 */
export function withSeededDefect<Body>(
  original: PaymentsModule,
  seed: (body: Body, prepared: PreparedRequest) => boolean,
): PaymentsModule {
  return {
    ...original,
    preparePayment: (...args) => {
      const prepared = original.preparePayment(...args);
      const body = JSON.parse(prepared.body.toString('utf8')) as Body;
      return seed(body, prepared) ? { ...prepared, body: Buffer.from(JSON.stringify(body)) } : prepared;
    },
  };
}
