import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { provideFlowEffects } from './provide.js';
import { FakeTerminal, settle, testSettings } from './testing/fake-terminal.js';
import { describeView } from './view.js';
import type { FlowSettings } from './settings.js';

const MIN = 60_000;

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

describe('meter machine', () => {
  it('pre-authorizes 60 minutes, extends by 30 with an incremental and captures the fee of a 75-minute stay', async () => {
    const fake = new FakeTerminal();
    const actor = await openSession(fake, 60);
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

  it('captures less than authorized when the stay was shorter than paid for', async () => {
    const fake = new FakeTerminal();
    const actor = await openSession(fake, 90);
    fake.clock.increment(55 * MIN);
    actor.send({ type: 'END_SESSION' });
    await settle();
    expect(fake.sent.at(-1)).toMatchObject({ comments: 'Parking Capture Less Than Auth', amountMinor: 300 });
    actor.send({ type: 'DONE' });
    expect(fake.balanceProblems()).toEqual([]);
  });

  it('reverses the authorized amount when nothing is owed (stay within the grace period)', async () => {
    const fake = new FakeTerminal();
    const actor = await openSession(fake, 60);
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
    const actor = await openSession(fake, 60, testSettings({ captureWindowMs: 120 * MIN }));
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
    const actor = await openSession(fake, 60, testSettings({ allowIncremental: false }));
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
