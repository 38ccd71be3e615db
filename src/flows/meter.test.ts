import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { tariffSchema } from '../config/index.js';
import { provideFlowEffects } from './provide.js';
import { FakeTerminal, settle, testSettings } from './testing/fake-terminal.js';
import { describeView } from './view.js';
import type { FlowSettings } from './settings.js';

const MIN = 60_000;

/**
 * The test tariff (150 per started 30 minutes, maximum stay 240 minutes, daily cap 20.00) with the meter
 * pre-authorizing as given: the maximum stay costs 8 × 150 = 1200.
 */
function meterSettings(
  meterAuthorization: 'maximum' | 'chosen',
  overrides: Partial<FlowSettings> = {},
  tariff: Record<string, unknown> = {},
): FlowSettings {
  const base = testSettings(overrides);
  return { ...base, tariff: tariffSchema.parse({ ...base.tariff, ...tariff, meterAuthorization }) };
}

const chosen = (overrides: Partial<FlowSettings> = {}) => meterSettings('chosen', overrides);

function start(fake: FakeTerminal, settings: FlowSettings = testSettings()) {
  const actor = createActor(provideFlowEffects.meter(fake), {
    input: { settings, clock: fake.clock },
    clock: fake.clock,
  });
  actor.start();
  return actor;
}

async function openSession(fake: FakeTerminal, minutes: number, settings?: FlowSettings) {
  const actor = start(fake, settings);
  actor.send({ type: 'START' });
  actor.send({ type: 'CHOOSE_DURATION', minutes });
  actor.send({ type: 'CONFIRM' });
  await settle();
  return actor;
}

describe('meter machine, pre-authorizing the maximum stay (tariff.meterAuthorization: maximum)', () => {
  it('is the default of the configuration', () => {
    expect(testSettings().tariff.meterAuthorization).toBe('maximum');
  });

  it('pre-authorizes the maximum and captures an overstay at its real price (60 minutes chosen, 90 parked)', async () => {
    const fake = new FakeTerminal();
    const actor = await openSession(fake, 60);
    fake.clock.increment(90 * MIN);
    actor.send({ type: 'END_SESSION' });
    await settle();
    // 240 minutes cost 8 × 150 = 1200 (held); 90 minutes cost 3 × 150 = 450 (captured; the gateway reverses 750).
    expect(fake.sent.map((r) => [r.service, r.comments, r.amountMinor])).toEqual([
      ['preauth', 'Parking Auth', 1_200],
      ['capture', 'Parking Capture Less Than Auth', 450],
    ]);
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'approved', amountMinor: 450 });
    expect(fake.receipts.map((r) => r.amountMinor)).toEqual([450]);
    actor.send({ type: 'DONE' });
    expect(fake.balanceProblems()).toEqual([]);
    expect(fake.netChargedMinor()).toBe(450);
  });

  it('shows what is held and what the chosen time costs before the card is presented, and in the session', async () => {
    const fake = new FakeTerminal();
    const actor = start(fake);
    actor.send({ type: 'START' });
    actor.send({ type: 'CHOOSE_DURATION', minutes: 60 });
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'confirm',
      amountMinor: 1_200,
      message:
        'Park for 60 minutes: £3.00. £12.00 (the longest stay, 240 minutes) will be held on your card: you pay ' +
        'only for the time you park, the rest is released',
    });
    actor.send({ type: 'CONFIRM' });
    await settle();
    const view = describeView(actor.getSnapshot());
    expect(view).toMatchObject({
      screen: 'session',
      amountMinor: 1_200,
      session: { heldMinor: 1_200, paidUntilMs: fake.clock.now() + 60 * MIN },
      message:
        'Parking session open: £12.00 held on your card; 60 minutes cost £3.00, you pay for the time you park',
    });
  });

  it('extends within the maximum without any authorization and captures the fee of the actual stay', async () => {
    const fake = new FakeTerminal();
    const actor = await openSession(fake, 60);
    actor.send({ type: 'EXTEND', minutes: 30 });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'session',
      message:
        'Extended by 30 minutes: £12.00 held on your card; 90 minutes cost £4.50, you pay for the time you park',
    });
    fake.clock.increment(75 * MIN);
    actor.send({ type: 'END_SESSION' });
    await settle();
    expect(fake.sent.map((r) => [r.comments, r.amountMinor])).toEqual([
      ['Parking Auth', 1_200],
      ['Parking Capture Less Than Auth', 450],
    ]);
    actor.send({ type: 'DONE' });
    expect(fake.balanceProblems()).toEqual([]);
  });

  it('never extends beyond the maximum stay, and offers the time left up to it', async () => {
    const fake = new FakeTerminal();
    const actor = await openSession(fake, 200);
    const view = describeView(actor.getSnapshot());
    expect(view.actions).toContain('EXTEND');
    // 40 minutes are left: 30 and the 40 up to the maximum, each adding 150 (200 minutes are 7 started units of 30,
    // 230 and 240 minutes are 8).
    expect(view.durations).toEqual([
      { minutes: 30, amountMinor: 150 },
      { minutes: 40, amountMinor: 150 },
    ]);
    actor.send({ type: 'EXTEND', minutes: 41 });
    expect(describeView(actor.getSnapshot()).session?.paidUntilMs).toBe(fake.clock.now() + 200 * MIN);
    actor.send({ type: 'EXTEND', minutes: 40 });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'session',
      actions: ['END_SESSION'],
      session: { paidUntilMs: fake.clock.now() + 240 * MIN },
    });
    expect(fake.sent).toHaveLength(1);
  });

  it('captures no more than is held when the stay outlasts the maximum', async () => {
    const fake = new FakeTerminal();
    const actor = await openSession(fake, 60);
    fake.clock.increment(300 * MIN);
    actor.send({ type: 'END_SESSION' });
    await settle();
    expect(fake.sent.at(-1)).toMatchObject({ comments: 'Parking Capture', amountMinor: 1_200 });
    actor.send({ type: 'DONE' });
    expect(fake.balanceProblems()).toEqual([]);
  });

  it('holds the maximum stay at the daily cap, as the tariff prices it', async () => {
    const fake = new FakeTerminal();
    // 720 minutes at 150 per 30 would cost 3600: the daily cap makes it 2000.
    const settings = meterSettings('maximum', {}, { maxStayMinutes: 720 });
    const actor = await openSession(fake, 30, settings);
    expect(fake.sent[0]).toMatchObject({ comments: 'Parking Auth', amountMinor: 2_000 });
    fake.clock.increment(30 * MIN);
    actor.send({ type: 'END_SESSION' });
    await settle();
    expect(fake.sent.at(-1)).toMatchObject({ comments: 'Parking Capture Less Than Auth', amountMinor: 150 });
  });

  it('reverses the held maximum when nothing is owed (stay within the grace period)', async () => {
    const fake = new FakeTerminal();
    const actor = await openSession(fake, 60);
    fake.clock.increment(5 * MIN);
    actor.send({ type: 'END_SESSION' });
    await settle();
    expect(fake.sent.at(-1)).toMatchObject({ service: 'reversal', comments: 'REVERSAL', amountMinor: 1_200 });
    actor.send({ type: 'DONE' });
    expect(fake.balanceProblems()).toEqual([]);
  });
});

describe('meter machine, pre-authorizing the chosen duration (tariff.meterAuthorization: chosen)', () => {
  it('pre-authorizes 60 minutes, extends by 30 with an incremental and captures the fee of a 75-minute stay', async () => {
    const fake = new FakeTerminal();
    const actor = await openSession(fake, 60, chosen());
    expect(describeView(actor.getSnapshot()).screen).toBe('session');
    actor.send({ type: 'EXTEND', minutes: 30 });
    await settle();
    fake.clock.increment(75 * MIN);
    actor.send({ type: 'END_SESSION' });
    await settle();
    // 150 per started 30 minutes: 60 min = 300, 90 min = 450; a 75-minute stay costs 3 units = 450.
    expect(fake.sent.map((r) => [r.comments, r.amountMinor])).toEqual([
      ['Parking Auth', 300],
      ['Parking Incremental Auth', 150],
      ['Parking Capture', 450],
    ]);
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'approved', amountMinor: 450 });
    expect(fake.receipts.map((r) => r.amountMinor)).toEqual([450]);
    actor.send({ type: 'DONE' });
    expect(fake.balanceProblems()).toEqual([]);
    expect(fake.netChargedMinor()).toBe(450);
  });

  it('captures an overstay at the price of the time bought, never more than authorized', async () => {
    const fake = new FakeTerminal();
    const actor = await openSession(fake, 60, chosen());
    expect(describeView(actor.getSnapshot()).message).toBe('Parking session open');
    fake.clock.increment(90 * MIN);
    actor.send({ type: 'END_SESSION' });
    await settle();
    expect(fake.sent.map((r) => [r.comments, r.amountMinor])).toEqual([
      ['Parking Auth', 300],
      ['Parking Capture', 300],
    ]);
  });

  it('captures less than authorized when the stay was shorter than paid for', async () => {
    const fake = new FakeTerminal();
    const actor = await openSession(fake, 90, chosen());
    fake.clock.increment(55 * MIN);
    actor.send({ type: 'END_SESSION' });
    await settle();
    expect(fake.sent.at(-1)).toMatchObject({ comments: 'Parking Capture Less Than Auth', amountMinor: 300 });
    actor.send({ type: 'DONE' });
    expect(fake.balanceProblems()).toEqual([]);
  });

  it('reverses the authorized amount when nothing is owed (stay within the grace period)', async () => {
    const fake = new FakeTerminal();
    const actor = await openSession(fake, 60, chosen());
    fake.clock.increment(5 * MIN);
    actor.send({ type: 'END_SESSION' });
    await settle();
    expect(fake.sent.at(-1)).toMatchObject({ service: 'reversal', comments: 'REVERSAL', amountMinor: 300 });
    expect(describeView(actor.getSnapshot()).screen).toBe('approved');
    actor.send({ type: 'DONE' });
    expect(fake.balanceProblems()).toEqual([]);
  });

  it('reverses an authorization left uncaptured for the capture window automatically', async () => {
    const fake = new FakeTerminal();
    const actor = await openSession(fake, 60, chosen({ captureWindowMs: 120 * MIN }));
    fake.clock.increment(119 * MIN);
    await settle();
    expect(fake.sent).toHaveLength(1);
    fake.clock.increment(1 * MIN);
    await settle();
    expect(fake.sent.at(-1)).toMatchObject({ comments: 'REVERSAL', amountMinor: 300 });
    expect(describeView(actor.getSnapshot()).screen).toBe('idle');
    expect(fake.balanceProblems()).toEqual([]);
  });

  it('extends with a second pre-authorization when incrementals are not allowed, and settles both holds', async () => {
    const fake = new FakeTerminal();
    const actor = await openSession(fake, 60, chosen({ allowIncremental: false }));
    actor.send({ type: 'EXTEND', minutes: 60 });
    await settle();
    fake.clock.increment(50 * MIN);
    actor.send({ type: 'END_SESSION' });
    await settle();
    expect(fake.sent.map((r) => [r.comments, r.amountMinor])).toEqual([
      ['Parking Auth', 300],
      ['Parking Auth', 300],
      ['Parking Capture', 300],
      ['REVERSAL', 300],
    ]);
    actor.send({ type: 'DONE' });
    expect(fake.balanceProblems()).toEqual([]);
  });

  it('sends the EMV tags with the capture after an EMV contact pre-authorization only', async () => {
    for (const entryMode of ['contact', 'contactless'] as const) {
      const fake = new FakeTerminal();
      fake.card = { ...fake.card, entryMode };
      const actor = await openSession(fake, 60);
      fake.clock.increment(40 * MIN);
      actor.send({ type: 'END_SESSION' });
      await settle();
      expect(fake.sent.at(-1)).toMatchObject({ service: 'capture', includeEmvTags: entryMode === 'contact' });
    }
  });

  it('refuses a duration above the maximum stay and an extension beyond it', async () => {
    const fake = new FakeTerminal();
    const actor = start(fake);
    actor.send({ type: 'START' });
    actor.send({ type: 'CHOOSE_DURATION', minutes: 241 });
    expect(describeView(actor.getSnapshot()).screen).toBe('choose-duration');
    actor.send({ type: 'CHOOSE_DURATION', minutes: 240 });
    actor.send({ type: 'CONFIRM' });
    await settle();
    expect(describeView(actor.getSnapshot()).actions).toEqual(['END_SESSION']);
    actor.send({ type: 'EXTEND', minutes: 30 });
    expect(fake.sent).toHaveLength(1);
  });

  it('shows the declined screen and keeps no hold when the pre-authorization is declined', async () => {
    const fake = new FakeTerminal().script('preauth', 'declined');
    const actor = await openSession(fake, 60);
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'declined',
      reason: 'GENERAL_DECLINE',
    });
    fake.clock.increment(10_000);
    expect(describeView(actor.getSnapshot()).screen).toBe('idle');
    expect(fake.balanceProblems()).toEqual([]);
  });

  it('offers durations with their prices on the duration screen', () => {
    const fake = new FakeTerminal();
    const actor = start(fake);
    actor.send({ type: 'START' });
    const view = describeView(actor.getSnapshot());
    expect(view.screen).toBe('choose-duration');
    expect(view.durations?.[0]).toEqual({ minutes: 30, amountMinor: 150 });
    expect(view.actions).toEqual(['CHOOSE_DURATION', 'CANCEL']);
  });
});
