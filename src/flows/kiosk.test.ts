import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { provideFlowEffects } from './provide.js';
import { FakeTerminal, settle, testSettings } from './testing/fake-terminal.js';
import { describeView } from './view.js';

function kiosk(fake: FakeTerminal) {
  const actor = createActor(provideFlowEffects.kiosk(fake), {
    input: { settings: testSettings(), clock: fake.clock },
    clock: fake.clock,
  });
  actor.start();
  return actor;
}

describe('kiosk machine', () => {
  it('asks for another card after a decline without the declined card or its result on the screen', async () => {
    const fake = new FakeTerminal().script('sale', 'declined');
    const actor = kiosk(fake);
    actor.send({ type: 'START' });
    actor.send({ type: 'LOST_TICKET' });
    actor.send({ type: 'CONFIRM' });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'declined',
      messageKey: 'result.declined',
      maskedPan: '411111******1111',
    });
    // The customer presents a second card: while it is awaited, nothing of the first attempt is shown.
    fake.reads.push('hang');
    actor.send({ type: 'CONFIRM' });
    await settle();
    const view = describeView(actor.getSnapshot());
    expect(view).toMatchObject({
      screen: 'present-card',
      messageKey: 'kiosk.lostTicketFee',
      amountMinor: 3_000,
    });
    expect(view.reason).toBeUndefined();
    expect(view.maskedPan).toBeUndefined();
    actor.stop();
  });

  it('shows the second card and its approval once another card is taken after a decline', async () => {
    const fake = new FakeTerminal().script('sale', 'declined');
    const actor = kiosk(fake);
    actor.send({ type: 'START' });
    actor.send({ type: 'LOST_TICKET' });
    actor.send({ type: 'CONFIRM' });
    await settle();
    fake.card = { ...fake.card, maskedPan: '555555******4444', fingerprint: 'fp-2' };
    actor.send({ type: 'CONFIRM' });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'approved',
      messageKey: 'kiosk.paid',
      maskedPan: '555555******4444',
      reason: 'APPROVED',
    });
    expect(fake.comments()).toEqual(['Parking Sale', 'Parking Sale']);
    expect(fake.netChargedMinor()).toBe(3_000);
    actor.stop();
  });
});
