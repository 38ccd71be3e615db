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
    input: { settings: testSettings(), clock: fake.clock, command },
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

describe('operator mode: a journal that cannot be read', () => {
  it('says so, and that nothing was sent — not that the transaction does not exist', async () => {
    const fake = new FakeTerminal();
    fake.findTransaction = () =>
      Promise.reject(Object.assign(new Error('disk I/O error'), { code: 'JOURNAL_IO' }));
    for (const command of [
      { type: 'refund', transactionId: 'S1' },
      { type: 'void', transactionId: 'S1' },
    ] as const)
      expect(await operator(fake, command)).toEqual({
        outcome: 'failed',
        code: 'JOURNAL_UNREADABLE',
        message: 'The journal could not be read: nothing was sent; try again',
      });
    expect(fake.sent).toEqual([]);
  });
});

describe('operator mode: a refund amount it does not send', () => {
  /** A sale `S1` of £6.00 with £2.50 of it refunded already. */
  function withSale(fake: FakeTerminal): void {
    fake.settled.set('G-S1', {
      service: 'sale',
      transactionId: 'S1',
      gatewayId: 'G-S1',
      amountMinor: 600,
      refundedMinor: 250,
      voided: false,
    });
  }

  it('says how much is left to refund in money, not in minor units an operator could read as pounds', async () => {
    const fake = new FakeTerminal();
    withSale(fake);
    expect(await operator(fake, { type: 'refund', transactionId: 'S1', amountMinor: 351 })).toEqual({
      outcome: 'not-allowed',
      code: 'REFUND_EXCEEDS_CAPTURED',
      message: 'At most 3.50 GBP can be refunded',
    });
    fake.settled.get('G-S1')!.refundedMinor = 600;
    expect(await operator(fake, { type: 'refund', transactionId: 'S1' })).toEqual({
      outcome: 'not-allowed',
      code: 'REFUND_EXCEEDS_CAPTURED',
      message: 'Nothing is left to refund',
    });
    expect(fake.sent).toEqual([]);
  });

  it.each([0, -100, 1.5])(
    'refuses a refund of %s minor units as an amount that is no refund',
    async (amountMinor) => {
      const fake = new FakeTerminal();
      withSale(fake);
      expect(await operator(fake, { type: 'refund', transactionId: 'S1', amountMinor })).toEqual({
        outcome: 'not-allowed',
        code: 'REFUND_AMOUNT_INVALID',
        message: 'A refund is of an amount above 0 (none: all that is left)',
      });
      expect(fake.sent).toEqual([]);
    },
  );
});

describe('operator mode: a refund whose answer was lost and that its timeout void cancelled', () => {
  it('says nothing was refunded, as an outcome known — not an unknown one', async () => {
    const fake = new FakeTerminal();
    fake.settled.set('G-S1', {
      service: 'sale',
      transactionId: 'S1',
      gatewayId: 'G-S1',
      amountMinor: 600,
      refundedMinor: 0,
      voided: false,
    });
    fake.script('refund-payment', 'unknown');
    const actor = createActor(provideFlowEffects.operator(fake), {
      input: {
        settings: testSettings(),
        clock: fake.clock,
        command: { type: 'refund', transactionId: 'S1', amountMinor: 100 },
      },
      clock: fake.clock,
    });
    actor.start();
    await settle();
    // Its timeout void goes after the delay the gateway asks for, and is approved.
    fake.clock.increment(testSettings().timing.timeoutReversalDelayMs);
    await settle();
    expect(fake.comments()).toEqual(['REFUND Payment', 'VOID Timeout']);
    expect(fake.netChargedMinor()).toBe(600);
    expect(actor.getSnapshot().output).toMatchObject({
      outcome: 'cancelled',
      code: 'TIMEOUT_RESOLVED',
      message:
        'The answer to the refund was lost and the terminal cancelled it: nothing was refunded; refund again',
      service: 'refund-payment',
    });
  });
});

describe('operator mode: a refund the gateway answers for less than asked', () => {
  it("gives the customer a receipt of what was refunded, as the journal's reprint states it", async () => {
    // The gateway states the amount it refunded (`refundAmountDetails.refundAmount`): 2.00 of the 3.50 asked.
    const fake = new (class extends FakeTerminal {
      override async submit(request: ServiceRequest, signal: AbortSignal): Promise<SubmitOutcome> {
        const outcome = await super.submit(request, signal);
        return request.service === 'refund-payment' && outcome.kind === 'approved'
          ? { ...outcome, authorizedMinor: 200 }
          : outcome;
      }
    })();
    fake.settled.set('G-S1', {
      service: 'sale',
      transactionId: 'S1',
      gatewayId: 'G-S1',
      amountMinor: 600,
      refundedMinor: 0,
      voided: false,
    });
    expect(await operator(fake, { type: 'refund', transactionId: 'S1', amountMinor: 350 })).toMatchObject({
      outcome: 'approved',
      service: 'refund-payment',
    });
    expect(fake.receipts.map((r) => [r.service, r.amountMinor])).toEqual([['refund-payment', 200]]);
  });
});
