/**
 * The reversal or void that should undo an approved original is refused or unanswered: the customer is never told
 * "declined" or "cancelled" and offered a retry that charges again, and nothing held is left without an owner.
 */
import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { provideFlowEffects } from './provide.js';
import { FakeTerminal, testSettings } from './testing/fake-terminal.js';
import { describeView } from './view.js';

function attended(fake: FakeTerminal) {
  const actor = createActor(provideFlowEffects.attended(fake), {
    input: { settings: testSettings(), clock: fake.clock },
    clock: fake.clock,
  });
  actor.start();
  return actor;
}

async function settle(fake: FakeTerminal, ms = 0): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
  if (ms > 0) fake.clock.increment(ms);
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

describe('an undo (void or reversal) that does not stand', () => {
  it('a partial sale whose void FAILED is not reported as "declined" with a retry that charges again', async () => {
    const fake = new FakeTerminal();
    fake.partialMinor.sale = 300; // approved for 3.00 of 8.50
    fake.script('void-payment', 'declined'); // void answered FAILED: the 3.00 sale stands
    const actor = attended(fake);
    actor.send({ type: 'START' });
    actor.send({ type: 'ENTER_AMOUNT', minor: 850 });
    actor.send({ type: 'CONFIRM' });
    await settle(fake);
    const view = describeView(actor.getSnapshot());
    expect(view.messageKey).toBe('result.partialNotUndone');
    // The customer has been charged 3.00: telling them "Card declined" and offering the retry is not the truth.
    expect(view.screen).not.toBe('declined');
    expect(actor.getSnapshot().can({ type: 'CONFIRM' })).toBe(false);
    expect(fake.netChargedMinor()).toBe(300);
  });

  it('a sale cancelled while out, whose void FAILED, is not dropped back to the idle screen as if cancelled', async () => {
    const fake = new FakeTerminal();
    let open!: () => void;
    fake.submitGate = new Promise<void>((r) => (open = r));
    fake.script('void-payment', 'declined');
    const actor = attended(fake);
    actor.send({ type: 'START' });
    actor.send({ type: 'ENTER_AMOUNT', minor: 850 });
    actor.send({ type: 'CONFIRM' });
    await settle(fake);
    actor.send({ type: 'CANCEL' }); // while the sale is out
    open();
    fake.submitGate = undefined;
    await settle(fake);
    const view = describeView(actor.getSnapshot());
    expect(fake.sent.map((r) => `${r.service}:${r.kind}`)).toEqual([
      'sale:approved',
      'void-payment:declined',
    ]);
    expect(fake.netChargedMinor()).toBe(850);
    // 8.50 was taken and stays taken: the screen must not say "Cancelled" and go back to idle as if nothing happened.
    expect({ screen: view.screen, messageKey: view.messageKey }).not.toMatchObject({ screen: 'idle' });
    expect(view.messageKey).not.toBe('result.cancelled');
    // It was paid: the attendant sees it paid, as any sale.
    expect(view.screen).toBe('approved');
  });
});

describe('tap-and-go entry cancelled while the pre-authorization is out', () => {
  it('does not leave the approved hold with nobody to settle it when its reversal is refused', async () => {
    const fake = new FakeTerminal();
    const actor = createActor(provideFlowEffects.tapAndGo(fake), {
      input: { settings: testSettings(), clock: fake.clock },
      clock: fake.clock,
    });
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const submit = fake.submit.bind(fake);
    fake.submit = async (request, signal) => {
      if (request.service === 'preauth') await gate; // the pre-authorization is out
      return submit(request, signal);
    };
    actor.start();
    actor.send({ type: 'TAP_ENTRY' });
    await settle(fake);
    fake.script('reversal', 'declined');
    actor.send({ type: 'CANCEL' });
    open();
    await settle(fake);
    expect(fake.sent.map((r) => `${r.service}:${r.kind}`)).toEqual([
      'avr:approved',
      'preauth:approved',
      'reversal:declined',
    ]);
    // The reversal was refused: 20.00 stays held. The entry stands as any other, its hold open and watched (the
    // exit captures it, the expiry reverses it), rather than the customer sent back to "Tap your card".
    expect(actor.getSnapshot().value).toBe('entered');
    expect([...fake.holds.values()]).toHaveLength(1);
    actor.send({ type: 'DONE' });
    expect(fake.balanceProblems()).toEqual([]);
  });
});
