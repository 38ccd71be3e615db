import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { provideFlowEffects } from './provide.js';
import { FakeTerminal, settle, testSettings } from './testing/fake-terminal.js';
import { describeView } from './view.js';

const MIN = 60_000;
const WAIT_MS = 5 * MIN;

function kiosk(fake: FakeTerminal, offered = true) {
  fake.tickets.set('T-1', fake.clock.now() - 100 * MIN);
  const actor = createActor(provideFlowEffects.kiosk(fake), {
    input: {
      settings: testSettings(offered ? { payByPhone: { waitMs: WAIT_MS } } : {}),
      clock: fake.clock,
    },
    clock: fake.clock,
  });
  actor.start();
  return actor;
}

async function atConfirm(fake: FakeTerminal, offered = true) {
  const actor = kiosk(fake, offered);
  actor.send({ type: 'START' });
  actor.send({ type: 'ENTER_TICKET', ticket: 'T-1' });
  await settle();
  return actor;
}

describe('pay by phone at the pay station', () => {
  it('offers the phone beside the card only when configured', async () => {
    const off = await atConfirm(new FakeTerminal(), false);
    expect(describeView(off.getSnapshot()).actions).not.toContain('PAY_BY_LINK');
    const on = await atConfirm(new FakeTerminal());
    expect(describeView(on.getSnapshot())).toMatchObject({ screen: 'confirm' });
    expect(describeView(on.getSnapshot()).actions).toEqual(
      expect.arrayContaining(['CONFIRM', 'PAY_BY_LINK', 'CANCEL']),
    );
  });

  it('shows the link, and once it is paid the ticket is paid with a receipt of the link payment', async () => {
    const fake = new FakeTerminal();
    const actor = await atConfirm(fake);
    const fee = describeView(actor.getSnapshot()).amountMinor;
    actor.send({ type: 'PAY_BY_LINK' });
    await settle();
    const shown = describeView(actor.getSnapshot());
    expect(shown).toMatchObject({ screen: 'pay-by-phone', actions: ['CANCEL'] });
    expect(shown.link?.url).toContain('/pay/T-1');
    expect(shown.link?.purpose).toBe('fee');
    expect(fake.links[0]).toMatchObject({
      reference: 'T-1',
      amountMinor: fee,
      purpose: 'fee',
      waitMs: WAIT_MS,
    });
    fake.payLink();
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'approved', reason: 'PAID_BY_LINK' });
    expect(fake.receipts).toHaveLength(1);
    expect(fake.receipts[0]).toMatchObject({
      service: 'sale',
      amountMinor: fee,
      transactionId: fake.links[0]?.linkId,
      gatewayId: `pay-${fake.links[0]?.linkId}`,
    });
    expect(fake.receipts[0]?.lines).toContainEqual({ label: 'Paid by', value: 'Payment link' });
    // No card, no gateway request of the terminal's own: the customer paid on the hosted page.
    expect(fake.sent).toEqual([]);
  });

  it('closes the link on cancel and goes back to the choice', async () => {
    const fake = new FakeTerminal();
    const actor = await atConfirm(fake);
    actor.send({ type: 'PAY_BY_LINK' });
    await settle();
    actor.send({ type: 'CANCEL' });
    await settle();
    expect(fake.links[0]).toMatchObject({ state: 'closed', reason: 'cancelled' });
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'confirm',
      messageKey: 'payByPhone.notPaid',
    });
    // The card is still there as a choice.
    actor.send({ type: 'CONFIRM' });
    await settle();
    expect(fake.comments()).toEqual(['Parking Sale']);
  });

  it('while the cancel is unconfirmed, says the phone payment is being checked and takes no card; paid, the ticket is paid', async () => {
    const fake = new FakeTerminal();
    const actor = await atConfirm(fake);
    actor.send({ type: 'PAY_BY_LINK' });
    await settle();
    // The gateway has not confirmed the link INACTIVE: it may still be paid.
    fake.closeLink = ({ linkId }) => Promise.resolve({ kind: 'unconfirmed', linkId });
    actor.send({ type: 'CANCEL' });
    await settle();
    const checking = describeView(actor.getSnapshot());
    expect(checking).toMatchObject({ screen: 'processing', messageKey: 'payByPhone.checking' });
    expect(checking.actions).not.toContain('CONFIRM');
    // Nothing on the screen the customer could press to no effect: the check is not theirs to cancel.
    expect(checking.actions).toEqual([]);
    actor.send({ type: 'CONFIRM' });
    await settle();
    expect(fake.sent).toEqual([]);
    fake.payLink();
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'approved', reason: 'PAID_BY_LINK' });
    expect(fake.sent).toEqual([]);
  });

  it('a payment that came before the cancel still pays the ticket', async () => {
    const fake = new FakeTerminal();
    const actor = await atConfirm(fake);
    actor.send({ type: 'PAY_BY_LINK' });
    await settle();
    const link = fake.links[0]!;
    link.state = 'paid';
    actor.send({ type: 'CANCEL' });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'approved' });
  });

  it('a CANCEL while the link is being created closes it as soon as it exists', async () => {
    const fake = new FakeTerminal();
    const actor = await atConfirm(fake);
    actor.send({ type: 'PAY_BY_LINK' });
    actor.send({ type: 'CANCEL' });
    await settle();
    expect(fake.links[0]).toMatchObject({ state: 'closed', reason: 'cancelled' });
    expect(describeView(actor.getSnapshot()).screen).toBe('confirm');
  });

  it('the wait ends: closed by the terminal, or by the machine itself after the deadline', async () => {
    const fake = new FakeTerminal();
    const actor = await atConfirm(fake);
    actor.send({ type: 'PAY_BY_LINK' });
    await settle();
    fake.expireLink();
    await settle();
    expect(describeView(actor.getSnapshot()).screen).toBe('confirm');

    actor.send({ type: 'PAY_BY_LINK' });
    await settle();
    fake.clock.increment(WAIT_MS + MIN);
    await settle();
    expect(fake.links[1]).toMatchObject({ state: 'closed', reason: 'timeout' });
    expect(describeView(actor.getSnapshot()).screen).toBe('confirm');
  });

  it('paid before the link was shown (the payment notified before the create answered): the ticket is paid', async () => {
    for (const cancelled of [false, true]) {
      const fake = new FakeTerminal();
      fake.linkCreates.push('paid');
      const actor = await atConfirm(fake);
      // What the screen asks of the link once it shows it.
      const asked: string[] = [];
      const [awaitLink, closeLink] = [fake.awaitLink.bind(fake), fake.closeLink.bind(fake)];
      fake.awaitLink = (input, signal) => (asked.push('await'), awaitLink(input, signal));
      fake.closeLink = (input, signal) => (asked.push('close'), closeLink(input, signal));
      actor.send({ type: 'PAY_BY_LINK' });
      if (cancelled) actor.send({ type: 'CANCEL' });
      await settle();
      expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'approved', reason: 'PAID_BY_LINK' });
      // No link to scan was ever shown, waited on or closed: it had been paid (the host deactivates it, one use).
      expect(asked).toEqual([]);
      expect(fake.receipts).toHaveLength(1);
      expect(fake.receipts[0]).toMatchObject({
        transactionId: fake.links[0]?.linkId,
        gatewayId: `pay-${fake.links[0]?.linkId}`,
      });
    }
  });

  it('no link to show: back to the choice, told that the phone is not available now', async () => {
    const fake = new FakeTerminal();
    fake.linkCreates.push('LINK_UNAVAILABLE');
    const actor = await atConfirm(fake);
    actor.send({ type: 'PAY_BY_LINK' });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'confirm',
      messageKey: 'payByPhone.unavailable',
      reason: 'LINK_UNAVAILABLE',
    });
  });
});

describe('pay by phone at the meter', () => {
  it('the price of the time chosen, paid by phone, starts the session; nothing is held or captured', async () => {
    const fake = new FakeTerminal();
    const actor = createActor(provideFlowEffects.meter(fake), {
      input: { settings: testSettings({ payByPhone: { waitMs: WAIT_MS } }), clock: fake.clock },
      clock: fake.clock,
    });
    actor.start();
    actor.send({ type: 'START' });
    actor.send({ type: 'CHOOSE_DURATION', minutes: 60 });
    actor.send({ type: 'PAY_BY_LINK' });
    await settle();
    expect(describeView(actor.getSnapshot()).screen).toBe('pay-by-phone');
    expect(fake.links[0]).toMatchObject({ amountMinor: 300, purpose: 'fee' });
    fake.payLink();
    await settle();
    const session = describeView(actor.getSnapshot());
    expect(session).toMatchObject({ screen: 'session', messageKey: 'payByPhone.sessionPaid' });
    expect(session.session?.paidUntilMs).toBe(fake.clock.now() + 60 * MIN);
    expect(fake.receipts).toHaveLength(1);
    actor.send({ type: 'END_SESSION' });
    await settle();
    expect(describeView(actor.getSnapshot()).screen).toBe('approved');
    expect(fake.sent).toEqual([]);
  });
});

describe('pay by phone at the tap-and-go exit', () => {
  function gate(fake: FakeTerminal, overrides: Parameters<typeof testSettings>[0]) {
    const actor = createActor(provideFlowEffects.tapAndGo(fake), {
      input: { settings: testSettings(overrides), clock: fake.clock },
      clock: fake.clock,
    });
    actor.start();
    return actor;
  }

  it('asks card or phone; paid by phone, the entry hold is reversed in full and the exit opens', async () => {
    const fake = new FakeTerminal();
    const actor = gate(fake, { payByPhone: { waitMs: WAIT_MS } });
    actor.send({ type: 'TAP_ENTRY' });
    await settle();
    actor.send({ type: 'DONE' });
    fake.clock.increment(100 * MIN);
    actor.send({ type: 'TAP_EXIT' });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'confirm', amountMinor: 600 });
    expect(describeView(actor.getSnapshot()).actions).toEqual(
      expect.arrayContaining(['CONFIRM', 'PAY_BY_LINK', 'CANCEL']),
    );
    actor.send({ type: 'PAY_BY_LINK' });
    await settle();
    expect(describeView(actor.getSnapshot()).screen).toBe('pay-by-phone');
    // The link names the hold whose stay it pays: its payment pays that stay durably (the host's record).
    expect(fake.links[0]).toMatchObject({
      amountMinor: 600,
      reference: 'GATE20250106T080000',
      holdId: fake.sent.find((r) => r.comments === 'Parking Auth')?.transactionId,
    });
    fake.payLink();
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'approved', reason: 'PAID_BY_LINK' });
    expect(fake.sent.map((r) => [r.comments, r.amountMinor])).toEqual([
      ['Parking AVR', 0],
      ['Parking Auth', 2_000],
      ['REVERSAL', 2_000],
    ]);
    expect(fake.closedHolds.at(-1)?.resolution).toBe('reversed');
    actor.send({ type: 'DONE' });
    expect(fake.balanceProblems()).toEqual([]);
  });

  it('pay later: a declined capture releases the hold and leaves the fee as a printed payment link', async () => {
    const fake = new FakeTerminal();
    const actor = gate(fake, { payLater: { waitMs: 10 * MIN } });
    actor.send({ type: 'TAP_ENTRY' });
    await settle();
    actor.send({ type: 'DONE' });
    fake.clock.increment(100 * MIN);
    fake.script('capture', 'declined');
    actor.send({ type: 'TAP_EXIT' });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'pay-by-phone',
      messageKey: 'payLater.scan',
    });
    expect(fake.links[0]).toMatchObject({
      amountMinor: 600,
      purpose: 'pay-later',
      waitMs: 10 * MIN,
      holdId: expect.any(String) as string,
    });
    expect(fake.printedLinks).toEqual([fake.links[0]?.linkId]);
    // The hold is released in full first: the fee is owed through the link now.
    expect(fake.comments().slice(-2)).toEqual(['Parking Capture Less Than Auth', 'REVERSAL']);
    expect(fake.closedHolds.at(-1)?.resolution).toBe('reversed');
    // The customer leaves with the slip: the link stays active for its wait (the host watches it).
    actor.send({ type: 'DONE' });
    await settle();
    expect(describeView(actor.getSnapshot()).screen).toBe('idle');
    expect(fake.links[0]?.state).toBe('active');
  });
});

describe('pay later in accessibility mode', () => {
  it('keeps the slip’s QR code and address on screen longer, by the customer’s factor', async () => {
    for (const factor of [1, 2]) {
      const fake = new FakeTerminal();
      const effects = Object.assign(fake, { waitFactor: () => factor });
      const actor = createActor(provideFlowEffects.tapAndGo(effects), {
        input: { settings: testSettings({ payLater: { waitMs: 10 * MIN } }), clock: fake.clock },
        clock: fake.clock,
      });
      actor.start();
      actor.send({ type: 'TAP_ENTRY' });
      await settle();
      actor.send({ type: 'DONE' });
      fake.clock.increment(100 * MIN);
      fake.script('capture', 'declined');
      actor.send({ type: 'TAP_EXIT' });
      await settle();
      expect(describeView(actor.getSnapshot()).screen).toBe('pay-by-phone');
      const shown = testSettings().timing.resultScreenMs * 3;
      fake.clock.increment(shown * factor - 1);
      await settle();
      expect(describeView(actor.getSnapshot()).screen, `factor ${factor}`).toBe('pay-by-phone');
      fake.clock.increment(1);
      await settle();
      expect(describeView(actor.getSnapshot()).screen, `factor ${factor}`).not.toBe('pay-by-phone');
      actor.stop();
    }
  });
});

describe('pay later at the meter', () => {
  it('a declined capture at the end of the session is owed as a printed payment link', async () => {
    const fake = new FakeTerminal();
    const actor = createActor(provideFlowEffects.meter(fake), {
      input: { settings: testSettings({ payLater: { waitMs: 10 * MIN } }), clock: fake.clock },
      clock: fake.clock,
    });
    actor.start();
    actor.send({ type: 'START' });
    actor.send({ type: 'CHOOSE_DURATION', minutes: 60 });
    actor.send({ type: 'CONFIRM' });
    await settle();
    fake.clock.increment(50 * MIN);
    fake.script('capture', 'declined');
    actor.send({ type: 'END_SESSION' });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'pay-by-phone', amountMinor: 300 });
    expect(fake.links[0]).toMatchObject({ purpose: 'pay-later', amountMinor: 300 });
    expect(fake.printedLinks).toHaveLength(1);
    // The hold was released after the declined capture (nothing left on the card).
    expect(fake.comments()).toContain('REVERSAL');
    fake.payLink();
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'approved', reason: 'PAID_BY_LINK' });
    actor.send({ type: 'DONE' });
    expect(fake.balanceProblems()).toEqual([]);
  });
});

describe('pay by phone after a declined card', () => {
  it('the pay station offers the phone on the declined screen too', async () => {
    const fake = new FakeTerminal();
    const actor = await atConfirm(fake);
    fake.script('sale', 'declined');
    actor.send({ type: 'CONFIRM' });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'declined' });
    expect(describeView(actor.getSnapshot()).actions).toContain('PAY_BY_LINK');
    actor.send({ type: 'PAY_BY_LINK' });
    await settle();
    expect(describeView(actor.getSnapshot()).screen).toBe('pay-by-phone');
    fake.payLink();
    await settle();
    expect(describeView(actor.getSnapshot()).screen).toBe('approved');
  });
});
