import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import type { ServiceRequest, SubmitOutcome } from './effects.js';
import type { OperatorCommand } from './operator.js';
import { provideFlowEffects } from './provide.js';
import { FakeTerminal, settle, testSettings } from './testing/fake-terminal.js';

/** The gateway answers the reversal of a voided capture's hold with `answer` (its other requests as the fake does). */
class ReversalAnswered extends FakeTerminal {
  constructor(private readonly reversalAnswer: Omit<SubmitOutcome, 'transactionId'>) {
    super();
  }

  override async submit(request: ServiceRequest, signal: AbortSignal): Promise<SubmitOutcome> {
    const outcome = await super.submit(request, signal);
    if (request.service !== 'reversal') return outcome;
    return { ...this.reversalAnswer, transactionId: outcome.transactionId };
  }
}

/** A meter capture `C1` of £1.50 out of a £3.00 authorization, still voidable. */
function withCapture(fake: FakeTerminal): void {
  fake.auths.set('G-A1', { transactionId: 'A1', authorizedMinor: 300, capturedMinor: 150, reversed: false });
  fake.settled.set('G-C1', {
    service: 'capture',
    transactionId: 'C1',
    gatewayId: 'G-C1',
    amountMinor: 150,
    refundedMinor: 0,
    voided: false,
    authGatewayId: 'G-A1',
  });
}

async function operator(fake: FakeTerminal, command: OperatorCommand) {
  const actor = createActor(provideFlowEffects.operator(fake), {
    input: { settings: testSettings(), clock: fake.clock, pin: fake.pin, command },
    clock: fake.clock,
  });
  actor.start();
  await settle();
  return actor.getSnapshot().output;
}

describe('operator mode: the release of a voided capture’s hold', () => {
  it('tells the operator the hold is released once the reversal is approved', async () => {
    const fake = new FakeTerminal();
    withCapture(fake);
    expect(await operator(fake, { type: 'void', transactionId: 'C1' })).toMatchObject({
      outcome: 'approved',
      code: 'APPROVED',
      message: 'Voided; the authorization was released',
    });
    expect(fake.sent.map((r) => r.service)).toEqual(['void-capture', 'reversal']);
  });

  for (const [kind, reason] of [
    ['declined', 'AUTH_ALREADY_REVERSED'],
    ['rejected', 'TRANSACTION_ALREADY_REVERSED_OR_SETTLED'],
  ] as const)
    it(`tells the operator the hold is released when its reversal is ${kind} ${reason}: it is over`, async () => {
      const fake = new ReversalAnswered({ kind, reason });
      withCapture(fake);
      expect(await operator(fake, { type: 'void', transactionId: 'C1' })).toMatchObject({
        outcome: 'approved',
        code: 'APPROVED',
        message: 'Voided; the authorization was released already',
        service: 'void-capture',
      });
    });

  for (const [kind, reason] of [
    ['rejected', 'INVALID_DATA'],
    ['declined', 'PROCESSOR_UNAVAILABLE'],
  ] as const)
    it(`reports the void approved when the release is ${kind} ${reason}: the hold stands, and why`, async () => {
      const fake = new ReversalAnswered({ kind, reason });
      withCapture(fake);
      const result = await operator(fake, { type: 'void', transactionId: 'C1' });
      // The capture is voided: the money is given back whatever became of the hold.
      expect(fake.settled.get('G-C1')?.voided).toBe(true);
      expect(result).toMatchObject({
        outcome: 'approved',
        code: 'HOLD_NOT_RELEASED',
        message: `Voided, but the authorization hold was not released (${reason}): the terminal tries again later`,
        service: 'void-capture',
        transactionId: fake.sent.find((r) => r.service === 'void-capture')?.transactionId,
      });
    });
});
