import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { provideFlowEffects } from './provide.js';
import { cardAwaitedAgain, FakeTerminal, settle, testSettings } from './testing/fake-terminal.js';
import { cardReadingActor, describeView } from './view.js';
import type { ServiceRequest, SubmitOutcome } from './effects.js';

function attended(fake: FakeTerminal, settings = testSettings()) {
  const actor = createActor(provideFlowEffects.attended(fake), {
    input: { settings, clock: fake.clock },
    clock: fake.clock,
  });
  actor.start();
  return actor;
}

/** An attended sale of 8.50 started, its amount entered and confirmed: the card read under way. */
async function atTheCard(fake: FakeTerminal): Promise<ReturnType<typeof attended>> {
  const actor = attended(fake);
  actor.send({ type: 'START' });
  actor.send({ type: 'ENTER_AMOUNT', minor: 850 });
  actor.send({ type: 'CONFIRM' });
  await settle();
  return actor;
}

describe('attended machine', () => {
  it('asks for the amount, then for a confirmation of it, for a sale and for a credit', () => {
    for (const [start, enter, confirm] of [
      ['START', 'attended.enterAmount', 'attended.confirmSale'],
      ['CREDIT', 'attended.enterCreditAmount', 'attended.confirmCredit'],
    ] as const) {
      const actor = attended(new FakeTerminal());
      actor.send({ type: start });
      expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'enter-amount', messageKey: enter });
      actor.send({ type: 'ENTER_AMOUNT', minor: 850 });
      expect(describeView(actor.getSnapshot())).toMatchObject({
        screen: 'confirm',
        messageKey: confirm,
        amountMinor: 850,
      });
      actor.send({ type: 'CANCEL' });
      expect(describeView(actor.getSnapshot())).toMatchObject({
        screen: 'idle',
        messageKey: 'attended.ready',
      });
      actor.stop();
    }
  });

  it('takes no CREDIT when standalone credits are off, and offers none; a sale goes on as ever', () => {
    const actor = attended(new FakeTerminal(), testSettings({ standaloneCredit: false }));
    expect(describeView(actor.getSnapshot()).actions).not.toContain('CREDIT');
    expect(actor.getSnapshot().can({ type: 'CREDIT' })).toBe(false);
    actor.send({ type: 'CREDIT' });
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'idle', messageKey: 'attended.ready' });
    actor.send({ type: 'START' });
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'enter-amount' });
    actor.stop();
  });

  it('offers CREDIT by default', () => {
    const actor = attended(new FakeTerminal());
    expect(describeView(actor.getSnapshot()).actions).toContain('CREDIT');
    actor.stop();
  });

  it('asks for another card after a decline without the declined card or its result on the screen', async () => {
    const fake = new FakeTerminal().script('sale', 'declined');
    const actor = await atTheCard(fake);
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'declined',
      messageKey: 'result.declined',
      maskedPan: '411111******1111',
    });
    const view = await cardAwaitedAgain(fake, actor);
    expect(view).toMatchObject({
      screen: 'present-card',
      messageKey: 'attended.confirmSale',
      amountMinor: 850,
    });
    expect(view.reason).toBeUndefined();
    expect(view.maskedPan).toBeUndefined();
    actor.stop();
  });
});

describe('attended machine: a card the reader asks to present again', () => {
  it('says to insert the card after a refused tap and takes it again, nothing sent in between', async () => {
    const fake = new FakeTerminal();
    fake.reads.push('CARD_USE_CONTACT');
    const actor = await atTheCard(fake);
    const view = describeView(actor.getSnapshot());
    expect(view).toMatchObject({
      screen: 'error',
      messageKey: 'result.insertCard',
      reason: 'CARD_USE_CONTACT',
    });
    expect(view.actions).toContain('CONFIRM');
    expect(fake.sent).toEqual([]);
    actor.send({ type: 'CONFIRM' });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'approved',
      messageKey: 'attended.paid',
    });
    expect(fake.comments()).toEqual(['Parking Sale']);
    actor.stop();
  });

  it('tells the customer to insert a chip card that was swiped, and to swipe it once its chip could not be read', async () => {
    const fake = new FakeTerminal();
    fake.reads.push('chip-swiped', 'chip-unreadable', 'hang');
    const actor = await atTheCard(fake);
    // The swipe was refused and the chip read failed since: the screen says the last.
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'present-card',
      messageKey: 'result.swipeCard',
      message: 'The chip could not be read: swipe the card',
      amountMinor: 850,
    });
    expect(fake.sent).toEqual([]);
    actor.stop();
  });

  it('numbers each refused read, so that the same words again are a new event; a fresh activation is not one', async () => {
    const fake = new FakeTerminal();
    fake.reads.push('chip-swiped', 'hang');
    const actor = await atTheCard(fake);
    const first = describeView(actor.getSnapshot());
    expect(first).toMatchObject({ screen: 'present-card', messageKey: 'result.useChip', messageEvent: 1 });
    // More time asked for: the same wait activated afresh, no new refusal.
    const reading = cardReadingActor(actor);
    fake.reads.push('hang');
    reading?.send({ type: 'READ_AGAIN' });
    await settle();
    expect(describeView(actor.getSnapshot())).toEqual(first);
    // The chip card swiped again: refused again, in the same words, as a new event.
    fake.reads.push('chip-swiped', 'hang');
    reading?.send({ type: 'READ_AGAIN' });
    await settle();
    expect(describeView(actor.getSnapshot())).toEqual({ ...first, messageEvent: 2 });
    expect(fake.sent).toEqual([]);
    actor.stop();
  });

  it('asks for the chip of a chip card swiped, on the screen that waits for the card', async () => {
    const fake = new FakeTerminal();
    fake.reads.push('chip-swiped', 'hang');
    const actor = await atTheCard(fake);
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'present-card',
      messageKey: 'result.useChip',
      message: 'This card has a chip: insert it in the reader, or tap it',
    });
    expect(describeView(actor.getSnapshot()).actions).toContain('CANCEL');
    expect(fake.sent).toEqual([]);
    actor.stop();
  });
});

describe('attended machine: a standalone credit the gateway answers for less than asked', () => {
  it('shows and prints what was credited, as the journal records it', async () => {
    // The gateway states the amount it credited (`creditAmountDetails.creditAmount`): 5.00 of the 8.50 asked.
    const fake = new (class extends FakeTerminal {
      override async submit(request: ServiceRequest, signal: AbortSignal): Promise<SubmitOutcome> {
        const outcome = await super.submit(request, signal);
        return request.service === 'credit' && outcome.kind === 'approved'
          ? { ...outcome, authorizedMinor: 500 }
          : outcome;
      }
    })();
    const actor = attended(fake);
    actor.send({ type: 'CREDIT' });
    actor.send({ type: 'ENTER_AMOUNT', minor: 850 });
    actor.send({ type: 'CONFIRM' });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'approved',
      messageKey: 'attended.credited',
      amountMinor: 500,
    });
    expect(fake.receipts.map((r) => [r.service, r.amountMinor])).toEqual([['credit', 500]]);
    actor.stop();
  });
});
