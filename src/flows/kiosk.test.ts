import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { provideFlowEffects } from './provide.js';
import { cardAwaitedAgain, FakeTerminal, settle, testSettings } from './testing/fake-terminal.js';
import type { FlowSettings } from './settings.js';
import { describeView } from './view.js';

function kiosk(fake: FakeTerminal, settings: FlowSettings = testSettings()) {
  const actor = createActor(provideFlowEffects.kiosk(fake), {
    input: { settings, clock: fake.clock },
    clock: fake.clock,
  });
  actor.start();
  return actor;
}

/** A kiosk sale of a lost ticket started and its fee confirmed: the card read under way. */
async function lostTicketAtTheCard(fake: FakeTerminal): Promise<ReturnType<typeof kiosk>> {
  const actor = kiosk(fake);
  actor.send({ type: 'START' });
  actor.send({ type: 'LOST_TICKET' });
  actor.send({ type: 'CONFIRM' });
  await settle();
  return actor;
}

describe('kiosk machine', () => {
  it('keeps the result screen (the receipt read out) longer in accessibility mode, by the customer’s factor', async () => {
    for (const factor of [1, 2]) {
      const fake = new FakeTerminal().script('sale', 'approved');
      // The host's effects give the accessibility factor while the customer has the mode on.
      const effects = Object.assign(fake, { waitFactor: () => factor });
      const actor = createActor(provideFlowEffects.kiosk(effects), {
        input: { settings: testSettings(), clock: fake.clock },
        clock: fake.clock,
      });
      actor.start();
      actor.send({ type: 'START' });
      actor.send({ type: 'LOST_TICKET' });
      actor.send({ type: 'CONFIRM' });
      await settle();
      expect(describeView(actor.getSnapshot()).screen).toBe('approved');
      const { resultScreenMs } = testSettings().timing;
      fake.clock.increment(resultScreenMs * factor - 1);
      await settle();
      expect(describeView(actor.getSnapshot()).screen, `factor ${factor}`).toBe('approved');
      fake.clock.increment(1);
      await settle();
      expect(describeView(actor.getSnapshot()).screen, `factor ${factor}`).toBe('idle');
      actor.stop();
    }
  });

  it('asks the host how long a result screen stays, with its time in accessibility mode (the screen read out)', async () => {
    const fake = new FakeTerminal().script('sale', 'approved');
    const asked: number[] = [];
    // The host holds a screen it reads out: the machine's timer is then the bound it answers.
    const effects = Object.assign(fake, {
      waitFactor: () => 2,
      resultScreenMs: (ms: number) => (asked.push(ms), ms * 10),
    });
    const actor = createActor(provideFlowEffects.kiosk(effects), {
      input: { settings: testSettings(), clock: fake.clock },
      clock: fake.clock,
    });
    actor.start();
    actor.send({ type: 'START' });
    actor.send({ type: 'LOST_TICKET' });
    actor.send({ type: 'CONFIRM' });
    await settle();
    const { resultScreenMs } = testSettings().timing;
    expect(asked).toEqual([resultScreenMs * 2]);
    fake.clock.increment(resultScreenMs * 20 - 1);
    await settle();
    expect(describeView(actor.getSnapshot()).screen).toBe('approved');
    fake.clock.increment(1);
    await settle();
    expect(describeView(actor.getSnapshot()).screen).toBe('idle');
    actor.stop();
  });

  it('asks for another card after a decline without the declined card or its result on the screen', async () => {
    const fake = new FakeTerminal().script('sale', 'declined');
    const actor = await lostTicketAtTheCard(fake);
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'declined',
      messageKey: 'result.declined',
      maskedPan: '411111******1111',
    });
    // The customer presents a second card: while it is awaited, nothing of the first attempt is shown.
    const view = await cardAwaitedAgain(fake, actor);
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
    const actor = await lostTicketAtTheCard(fake);
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

describe('kiosk machine: a card the reader asks to present again', () => {
  for (const [code, messageKey] of [
    ['CARD_USE_CONTACT', 'result.insertCard'],
    ['CARD_COLLISION', 'result.oneCard'],
    ['CARD_REMOVED', 'result.cardRemoved'],
    ['CARD_NOT_PRESENTED', 'result.noCard'],
  ] as const) {
    it(`${code}: says what to do and takes the card again, nothing sent in between`, async () => {
      const fake = new FakeTerminal();
      fake.reads.push(code);
      const actor = kiosk(fake);
      actor.send({ type: 'START' });
      actor.send({ type: 'LOST_TICKET' });
      actor.send({ type: 'CONFIRM' });
      await settle();
      const view = describeView(actor.getSnapshot());
      expect(view).toMatchObject({ screen: 'error', messageKey, reason: code });
      expect(view.actions).toContain('CONFIRM');
      expect(fake.sent).toEqual([]);
      actor.send({ type: 'CONFIRM' });
      await settle();
      expect(describeView(actor.getSnapshot())).toMatchObject({
        screen: 'approved',
        messageKey: 'kiosk.paid',
      });
      expect(fake.comments()).toEqual(['Parking Sale']);
      expect(fake.netChargedMinor()).toBe(3_000);
      actor.stop();
    });
  }

  it('TAP_FAILED: asks for the card tapped again or inserted (not "cannot be used contactless"), and takes it again', async () => {
    const fake = new FakeTerminal();
    fake.reads.push('tap-failed');
    const actor = await lostTicketAtTheCard(fake);
    const view = describeView(actor.getSnapshot());
    expect(view).toMatchObject({ screen: 'error', messageKey: 'result.tapFailed', reason: 'TAP_FAILED' });
    expect(view.actions).toContain('CONFIRM');
    expect(fake.sent).toEqual([]);
    actor.send({ type: 'CONFIRM' });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'approved', messageKey: 'kiosk.paid' });
    expect(fake.comments()).toEqual(['Parking Sale']);
    actor.stop();
  });

  it('says no card was presented when none came in time, and takes one again, nothing sent in between', async () => {
    const fake = new FakeTerminal();
    fake.reads.push('hang');
    const actor = await lostTicketAtTheCard(fake);
    fake.clock.increment(65_000);
    await settle();
    const view = describeView(actor.getSnapshot());
    expect(view).toMatchObject({ screen: 'error', messageKey: 'result.noCard', reason: 'READ_TIMEOUT' });
    expect(view.actions).toContain('CONFIRM');
    expect(fake.sent).toEqual([]);
    actor.send({ type: 'CONFIRM' });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'approved', messageKey: 'kiosk.paid' });
    expect(fake.comments()).toEqual(['Parking Sale']);
    actor.stop();
  });

  it('offers no second card after an outcome that is being checked', async () => {
    const fake = new FakeTerminal();
    fake.submitHangs = true;
    const actor = await lostTicketAtTheCard(fake);
    fake.clock.increment(100_000);
    await settle();
    const view = describeView(actor.getSnapshot());
    expect(view).toMatchObject({ screen: 'error', messageKey: 'result.timeoutUnresolved' });
    expect(view.actions).not.toContain('CONFIRM');
    actor.stop();
  });
});

describe('kiosk machine: a read the card or the reader cannot complete', () => {
  for (const [code, messageKey] of [
    // The reader does not support the card or its network (activate error 27): as a network the terminal refuses.
    ['CARD_UNSUPPORTED', 'result.cardNotSupported'],
    // The reader went away, or is away, while the card is awaited: not the card's fault.
    ['READER_DISCONNECTED', 'host.readerUnavailable'],
    ['READER_NOT_CONNECTED', 'host.readerUnavailable'],
    ['READER_UNAVAILABLE', 'host.readerUnavailable'],
  ] as const) {
    it(`${code}: says ${messageKey}, not that the card could not be read, and asks for no card again`, async () => {
      const fake = new FakeTerminal();
      fake.reads.push(code);
      const actor = kiosk(fake);
      actor.send({ type: 'START' });
      actor.send({ type: 'LOST_TICKET' });
      actor.send({ type: 'CONFIRM' });
      await settle();
      const view = describeView(actor.getSnapshot());
      expect(view).toMatchObject({ screen: 'error', messageKey, reason: code });
      expect(view.actions).not.toContain('CONFIRM');
      expect(fake.sent).toEqual([]);
      actor.stop();
    });
  }
});

describe('kiosk machine: another way to pay after a declined card', () => {
  const OTHER_WAYS = testSettings({
    payByPhone: { waitMs: 300_000 },
    altMethods: [{ profile: 1, label: 'Bank transfer', fields: ['email'] }],
  });

  async function declined(fake: FakeTerminal) {
    const actor = kiosk(fake, OTHER_WAYS);
    actor.send({ type: 'START' });
    actor.send({ type: 'LOST_TICKET' });
    actor.send({ type: 'CONFIRM' });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'declined',
      maskedPan: '411111******1111',
    });
    return actor;
  }

  it('pays by phone without showing the declined card, on the phone screen or on the approval', async () => {
    const fake = new FakeTerminal().script('sale', 'declined');
    const actor = await declined(fake);
    actor.send({ type: 'PAY_BY_LINK' });
    await settle();
    const scan = describeView(actor.getSnapshot());
    expect(scan.screen).toBe('pay-by-phone');
    expect(scan.maskedPan).toBeUndefined();
    expect(scan.reason).toBeUndefined();
    fake.payLink();
    await settle();
    const paid = describeView(actor.getSnapshot());
    expect(paid).toMatchObject({ screen: 'approved', messageKey: 'kiosk.paid', reason: 'PAID_BY_LINK' });
    // The card shown was declined and charged nothing: the approval is the phone's.
    expect(paid.maskedPan).toBeUndefined();
    expect(fake.netChargedMinor()).toBe(0);
    actor.stop();
  });

  it("asks for an alternative method's details without showing the declined card", async () => {
    const fake = new FakeTerminal().script('sale', 'declined');
    const actor = await declined(fake);
    actor.send({ type: 'ALT_METHOD', profile: 1 });
    const view = describeView(actor.getSnapshot());
    expect(view.screen).toBe('alt-details');
    expect(view.maskedPan).toBeUndefined();
    actor.stop();
  });
});

describe('kiosk machine: a ticket paid before', () => {
  const MIN = 60_000;

  function ticketed(enteredMinutesAgo: number, paid?: { standingMinor: number; paidMinutesAgo: number }) {
    const fake = new FakeTerminal();
    const now = fake.clock.now();
    fake.tickets.set('T-9', now - enteredMinutesAgo * MIN);
    if (paid !== undefined)
      fake.paidTickets.set('T-9', {
        standingMinor: paid.standingMinor,
        lastPaidAtMs: now - paid.paidMinutesAgo * MIN,
      });
    const actor = kiosk(fake);
    actor.send({ type: 'START' });
    actor.send({ type: 'ENTER_TICKET', ticket: 'T-9' });
    return { fake, actor };
  }

  it('says a ticket paid within the grace period is paid and opens the exit, nothing sent', async () => {
    const { fake, actor } = ticketed(95, { standingMinor: 600, paidMinutesAgo: 3 });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'approved',
      messageKey: 'kiosk.alreadyPaid',
      reason: 'ALREADY_PAID',
      amountMinor: 0,
    });
    expect(fake.sent).toEqual([]);
    actor.stop();
  });

  it('asks after the grace period for the whole stay less what stands paid, and the sale names the ticket', async () => {
    // 155 minutes: 6 started half hours, 9.00; 6.00 stand paid.
    const { fake, actor } = ticketed(155, { standingMinor: 600, paidMinutesAgo: 60 });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'confirm', amountMinor: 300 });
    actor.send({ type: 'CONFIRM' });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'approved', messageKey: 'kiosk.paid' });
    expect(fake.sent.map((r) => [r.service, r.amountMinor, r.ticket])).toEqual([['sale', 300, 'T-9']]);
    actor.stop();
  });

  it('neither charges nor counts paid a ticket whose payment is unresolved: it is being checked, no card taken', async () => {
    const fake = new FakeTerminal();
    fake.tickets.set('T-9', fake.clock.now() - 95 * MIN);
    fake.unresolvedTickets.add('T-9');
    const actor = kiosk(fake);
    actor.send({ type: 'START' });
    actor.send({ type: 'ENTER_TICKET', ticket: 'T-9' });
    await settle();
    const view = describeView(actor.getSnapshot());
    expect(view).toMatchObject({
      screen: 'error',
      messageKey: 'kiosk.paymentBeingChecked',
      reason: 'PAYMENT_BEING_CHECKED',
    });
    expect(view.actions).not.toContain('CONFIRM');
    actor.send({ type: 'CONFIRM' });
    await settle();
    expect(fake.sent).toEqual([]);
    actor.stop();
  });

  it('owes nothing, never less, when what stands paid covers the whole stay', async () => {
    const { fake, actor } = ticketed(155, { standingMinor: 2_000, paidMinutesAgo: 60 });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'approved',
      messageKey: 'kiosk.alreadyPaid',
      amountMinor: 0,
    });
    expect(fake.sent).toEqual([]);
    actor.stop();
  });

  it('charges a ticket never paid in full, its sale naming it; a lost ticket sale names none', async () => {
    const { fake, actor } = ticketed(95);
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'confirm', amountMinor: 600 });
    actor.send({ type: 'CONFIRM' });
    await settle();
    actor.send({ type: 'DONE' });
    actor.send({ type: 'START' });
    actor.send({ type: 'LOST_TICKET' });
    expect(describeView(actor.getSnapshot())).toMatchObject({
      messageKey: 'kiosk.lostTicketFee',
      amountMinor: 3_000,
    });
    actor.send({ type: 'CONFIRM' });
    await settle();
    expect(fake.sent.map((r) => [r.amountMinor, r.ticket])).toEqual([
      [600, 'T-9'],
      [3_000, undefined],
    ]);
    actor.stop();
  });
});
