import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { tariffSchema } from '../config/index.js';
import { provideFlowEffects } from './provide.js';
import { cardAwaitedAgain, FakeTerminal, settle, testSettings } from './testing/fake-terminal.js';
import { describeView } from './view.js';
import type { FlowSettings } from './settings.js';
import { convertAtOfferRate } from './dcc.js';
import type { DccOfferSummary, ServiceRequest, SubmitOutcome } from './effects.js';

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

type MeterActor = ReturnType<typeof start>;

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

/**
 * A session of 60 minutes chosen (300 held) extended by 60 on a second pre-authorization (300), ended after 50
 * minutes: the first hold captured (300), the second reversed.
 */
async function twoHoldsEndedAfter50Minutes(fake: FakeTerminal, actor: MeterActor) {
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
    // Ended now: the screen shows the end of the stay, not the 240 minutes the hold covered.
    const session = describeView(actor.getSnapshot()).session;
    expect(session).toMatchObject({ endedAtMs: fake.clock.now() });
    expect(session?.paidUntilMs).toBeUndefined();
    expect(fake.receipts.map((r) => r.amountMinor)).toEqual([450]);
    actor.send({ type: 'DONE' });
    expect(fake.balanceProblems()).toEqual([]);
    expect(fake.netChargedMinor()).toBe(450);
  });

  it('states on the receipt of the capture the stay its fee was for (kiosk.md §3: the paid duration)', async () => {
    const fake = new FakeTerminal();
    const actor = await openSession(fake, 60);
    fake.clock.increment(90 * MIN);
    actor.send({ type: 'END_SESSION' });
    await settle();
    expect(fake.receipts.map((r) => r.lines)).toEqual([
      [
        { label: 'Parking', value: 'On-street meter' },
        { label: 'Stay', value: '90 min' },
      ],
    ]);
  });

  for (const [how, refusal] of [
    [
      'refused for now (PROCESSOR_UNAVAILABLE)',
      { kind: 'rejected', transactionId: 'C1', reason: 'PROCESSOR_UNAVAILABLE' },
    ],
    [
      'never sent (the gateway unreachable)',
      { kind: 'rejected', transactionId: 'C1', reason: 'GW_CONNECTION', notSent: true },
    ],
  ] as const) {
    it(`keeps the hold for the host to capture again when the capture is ${how}: no reversal`, async () => {
      class RefusedForNow extends FakeTerminal {
        override async submit(request: ServiceRequest, signal: AbortSignal): Promise<SubmitOutcome> {
          if (request.service !== 'capture') return super.submit(request, signal);
          this.refused.push(request);
          return { ...refusal };
        }
        readonly refused: ServiceRequest[] = [];
      }
      const fake = new RefusedForNow();
      const actor = await openSession(fake, 60);
      fake.clock.increment(90 * MIN);
      actor.send({ type: 'END_SESSION' });
      await settle();
      // Nothing releases the hold the fee is still to be captured from.
      expect(fake.sent.map((r) => r.service)).toEqual(['preauth']);
      // The capture says the fee is the session's for good: the host keeps a follow-up that captures it again.
      expect(fake.refused).toEqual([
        expect.objectContaining({ service: 'capture', amountMinor: 450, capturesFee: true }),
      ]);
      expect(describeView(actor.getSnapshot())).toMatchObject({
        screen: 'approved',
        reason: 'APPROVED',
        messageKey: 'meter.feeChargedLater',
        messageParams: { fee: { minor: 450, currency: 'GBP' } },
      });
      actor.send({ type: 'DONE' });
      // The hold stays, the host's to capture.
      const held = fake.openAuthorizations();
      expect(held).toHaveLength(1);
      expect(fake.balanceProblems(held)).toEqual([]);
    });
  }

  it('releases the hold when the capture is refused for good, the fee left unpaid', async () => {
    class RefusedForGood extends FakeTerminal {
      override async submit(request: ServiceRequest, signal: AbortSignal): Promise<SubmitOutcome> {
        if (request.service !== 'capture') return super.submit(request, signal);
        return { kind: 'rejected', transactionId: 'C1', reason: 'EXCEEDS_AUTH_AMOUNT' };
      }
    }
    const fake = new RefusedForGood();
    const actor = await openSession(fake, 60);
    fake.clock.increment(90 * MIN);
    actor.send({ type: 'END_SESSION' });
    await settle();
    expect(fake.sent.map((r) => [r.service, r.amountMinor])).toEqual([
      ['preauth', 1_200],
      ['reversal', 1_200],
    ]);
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'error', reason: 'SETTLEMENT_FAILED' });
    actor.send({ type: 'DONE' });
    expect(fake.balanceProblems()).toEqual([]);
  });

  it('shows and prints what the gateway captured when it answers a capture for less than asked', async () => {
    const fake = new FakeTerminal();
    const actor = await openSession(fake, 60);
    fake.partialMinor.capture = 300;
    fake.clock.increment(90 * MIN);
    actor.send({ type: 'END_SESSION' });
    await settle();
    // 450 asked of the 1200 held, 300 captured: the gateway reversed the rest itself, so nothing else is sent.
    expect(fake.sent.map((r) => [r.service, r.amountMinor])).toEqual([
      ['preauth', 1_200],
      ['capture', 450],
    ]);
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'approved', amountMinor: 300 });
    expect(fake.receipts.map((r) => r.amountMinor)).toEqual([300]);
    actor.send({ type: 'DONE' });
    expect(fake.balanceProblems()).toEqual([]);
    expect(fake.netChargedMinor()).toBe(300);
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

  it('ends with the hold to be released shortly when its reversal is left unknown (recovery reverses it)', async () => {
    const fake = new FakeTerminal().script('reversal', 'unknown');
    const actor = await openSession(fake, 60);
    fake.clock.increment(5 * MIN);
    actor.send({ type: 'END_SESSION' });
    await settle();
    expect(fake.sent.at(-1)).toMatchObject({ service: 'reversal', releases: true });
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'approved',
      messageKey: 'meter.holdReleasedLater',
    });
  });
  it('ends with the hold to be released shortly when its reversal never reached the gateway (the host sends it again)', async () => {
    class NeverLeft extends FakeTerminal {
      override async submit(request: ServiceRequest, signal: AbortSignal): Promise<SubmitOutcome> {
        if (request.service !== 'reversal') return super.submit(request, signal);
        this.neverLeft.push(request);
        return { kind: 'rejected', transactionId: 'not-sent', reason: 'GW_AUTH', notSent: true };
      }
      readonly neverLeft: ServiceRequest[] = [];
    }
    const fake = new NeverLeft();
    const actor = await openSession(fake, 60);
    fake.clock.increment(5 * MIN);
    actor.send({ type: 'END_SESSION' });
    await settle();
    expect(fake.neverLeft).toEqual([expect.objectContaining({ service: 'reversal', releases: true })]);
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'approved',
      reason: 'APPROVED',
      messageKey: 'meter.holdReleasedLater',
    });
  });
});

describe('meter machine, pre-authorizing the chosen duration (tariff.meterAuthorization: chosen)', () => {
  it('adds no time when an increment is approved for less than the longer stay costs, and captures what was paid', async () => {
    // 60 minutes held (300); EXTEND by 30 asks 150 more; the answer's new total is 375: 75 of the 150.
    class ApprovedForLess extends FakeTerminal {
      override async submit(request: ServiceRequest, signal: AbortSignal): Promise<SubmitOutcome> {
        const outcome = await super.submit(request, signal);
        if (request.service !== 'incremental' || outcome.kind !== 'approved') return outcome;
        const auth = [...this.auths.values()].find((a) => a.authorizedMinor === 450);
        if (auth) auth.authorizedMinor = 375;
        return { ...outcome, authorizedMinor: 375 };
      }
    }
    const fake = new ApprovedForLess();
    const actor = await openSession(fake, 60, chosen());
    const paidUntil = describeView(actor.getSnapshot()).session?.paidUntilMs;
    actor.send({ type: 'EXTEND', minutes: 30 });
    await settle();
    const view = describeView(actor.getSnapshot());
    // The time shown as paid for is what the hold pays for; the hold is what the gateway approved.
    expect(view.session).toMatchObject({ heldMinor: 375, paidUntilMs: paidUntil });
    expect(actor.getSnapshot().context.message).toEqual({ key: 'meter.extensionNotApproved' });
    fake.clock.increment(55 * MIN);
    actor.send({ type: 'END_SESSION' });
    await settle();
    expect(fake.sent.map((r) => [r.comments, r.amountMinor])).toEqual([
      ['Parking Auth', 300],
      ['Parking Incremental Auth', 150],
      ['Parking Capture Less Than Auth', 300],
    ]);
  });

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
    // Ended now: the screen shows the end of the stay, not the 90 minutes paid for.
    const session = describeView(actor.getSnapshot()).session;
    expect(session).toMatchObject({ endedAtMs: fake.clock.now() });
    expect(session?.paidUntilMs).toBeUndefined();
    expect(fake.receipts.map((r) => r.amountMinor)).toEqual([450]);
    actor.send({ type: 'DONE' });
    expect(fake.balanceProblems()).toEqual([]);
    expect(fake.netChargedMinor()).toBe(450);
  });

  it('ends the session the customer ended while its extension was being answered, at the time they ended it', async () => {
    const fake = new FakeTerminal();
    const actor = await openSession(fake, 60, chosen());
    fake.clock.increment(45 * MIN);
    let answer!: () => void;
    fake.submitGate = new Promise<void>((resolve) => (answer = resolve));
    actor.send({ type: 'EXTEND', minutes: 30 });
    await settle();
    // The customer changes their mind and leaves, while the increment is still out.
    fake.clock.increment(3_000);
    const endedAtMs = fake.clock.now();
    expect(describeView(actor.getSnapshot()).actions).toContain('END_SESSION');
    actor.send({ type: 'END_SESSION' });
    await settle();
    // Asked once: no second button, and the stay is counted to the first press.
    expect(describeView(actor.getSnapshot()).actions).not.toContain('END_SESSION');
    fake.clock.increment(2_000);
    fake.submitGate = undefined;
    answer();
    await settle();
    // 45 minutes cost 2 units = 300, captured from the 450 now held; the gateway releases the rest.
    expect(fake.sent.map((r) => [r.comments, r.amountMinor])).toEqual([
      ['Parking Auth', 300],
      ['Parking Incremental Auth', 150],
      ['Parking Capture Less Than Auth', 300],
    ]);
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'approved', amountMinor: 300 });
    expect(describeView(actor.getSnapshot()).session).toMatchObject({ endedAtMs });
    actor.send({ type: 'DONE' });
    expect(fake.balanceProblems()).toEqual([]);
    expect(fake.netChargedMinor()).toBe(300);
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

  it('waits out a capture window longer than a timer can wait (30 days) and reverses at its end only', async () => {
    const fake = new FakeTerminal();
    const actor = await openSession(fake, 60, chosen({ captureWindowMs: 30 * 24 * 60 * MIN }));
    await settle();
    expect(describeView(actor.getSnapshot()).screen).toBe('session');
    fake.clock.increment(30 * 24 * 60 * MIN - MIN);
    await settle();
    expect(fake.sent).toHaveLength(1);
    expect(describeView(actor.getSnapshot()).screen).toBe('session');
    fake.clock.increment(MIN);
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
    await twoHoldsEndedAfter50Minutes(fake, actor);
  });

  it('names with each step of the settlement the holds reversed after it, whatever its outcome', async () => {
    const fake = new FakeTerminal();
    const actor = await openSession(fake, 60, chosen({ allowIncremental: false }));
    actor.send({ type: 'EXTEND', minutes: 30 });
    await settle();
    actor.send({ type: 'EXTEND', minutes: 30 });
    await settle();
    const holds = fake.sent.filter((r) => r.service === 'preauth');
    expect(holds.map((r) => r.amountMinor)).toEqual([300, 150, 150]);
    // 25 minutes cost 150: taken from the first hold; the other two are reversed after its capture.
    fake.clock.increment(25 * MIN);
    actor.send({ type: 'END_SESSION' });
    await settle();
    const released = (r: ServiceRequest) => (r.alsoReleases ?? []).map((h) => h.amountMinor);
    const settlement = fake.sent.slice(3);
    expect(settlement.map((r) => [r.comments, r.amountMinor, released(r)])).toEqual([
      ['Parking Capture Less Than Auth', 150, [150, 150]],
      ['REVERSAL', 150, [150]],
      ['REVERSAL', 150, []],
    ]);
    const [, second, third] = settlement;
    expect(settlement[0]?.alsoReleases?.map((h) => h.original.transactionId)).toEqual([
      second?.original?.transactionId,
      third?.original?.transactionId,
    ]);
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'approved', amountMinor: 150 });
  });

  it('names with each step of the settlement the holds captured after it, whatever its outcome', async () => {
    const fake = new FakeTerminal();
    const actor = await openSession(fake, 60, chosen({ allowIncremental: false }));
    actor.send({ type: 'EXTEND', minutes: 30 });
    await settle();
    actor.send({ type: 'EXTEND', minutes: 30 });
    await settle();
    // 80 minutes cost 450: 300 from the first hold, 150 from the second; the third is reversed.
    fake.clock.increment(80 * MIN);
    actor.send({ type: 'END_SESSION' });
    await settle();
    const captured = (r: ServiceRequest) => (r.alsoCaptures ?? []).map((h) => h.amountMinor);
    const released = (r: ServiceRequest) => (r.alsoReleases ?? []).map((h) => h.amountMinor);
    const settlement = fake.sent.slice(3);
    expect(settlement.map((r) => [r.comments, r.amountMinor, captured(r), released(r)])).toEqual([
      ['Parking Capture', 300, [150], [150]],
      ['Parking Capture', 150, [], [150]],
      ['REVERSAL', 150, [], []],
    ]);
    expect(settlement[0]?.alsoCaptures?.[0]).toEqual({
      original: settlement[1]?.original,
      amountMinor: 150,
      includeEmvTags: settlement[1]?.includeEmvTags,
    });
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'approved', amountMinor: 450 });
  });

  it('tells what was charged and that the other hold will be released when its reversal never reached the gateway', async () => {
    class NeverLeft extends FakeTerminal {
      override async submit(request: ServiceRequest, signal: AbortSignal): Promise<SubmitOutcome> {
        if (request.service !== 'reversal') return super.submit(request, signal);
        this.neverLeft.push(request);
        return { kind: 'rejected', transactionId: 'not-sent', reason: 'GW_CONNECTION', notSent: true };
      }
      readonly neverLeft: ServiceRequest[] = [];
    }
    const fake = new NeverLeft();
    const actor = await openSession(fake, 60, chosen({ allowIncremental: false }));
    actor.send({ type: 'EXTEND', minutes: 30 });
    await settle();
    // 25 minutes cost 150, captured from the first hold; the second hold's reversal never leaves.
    fake.clock.increment(25 * MIN);
    actor.send({ type: 'END_SESSION' });
    await settle();
    expect(fake.sent.slice(2).map((r) => `${r.service}:${r.amountMinor}`)).toEqual(['capture:150']);
    expect(fake.neverLeft.map((r) => `${r.service}:${r.amountMinor}`)).toEqual(['reversal:150']);
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'approved',
      reason: 'APPROVED',
      amountMinor: 150,
      messageKey: 'meter.chargedHoldReleasedLater',
      messageParams: { charged: { minor: 150, currency: 'GBP' } },
    });
  });

  it('counts a hold whose reversal finds it released already as released (the host released it first)', async () => {
    class ReleasedAlready extends FakeTerminal {
      override async submit(request: ServiceRequest, signal: AbortSignal): Promise<SubmitOutcome> {
        const outcome = await super.submit(request, signal);
        if (request.service !== 'reversal' || request.amountMinor !== 150) return outcome;
        return { kind: 'declined', transactionId: outcome.transactionId, reason: 'AUTH_ALREADY_REVERSED' };
      }
    }
    const fake = new ReleasedAlready();
    const actor = await openSession(fake, 60, chosen({ allowIncremental: false }));
    actor.send({ type: 'EXTEND', minutes: 30 });
    await settle();
    fake.clock.increment(25 * MIN);
    actor.send({ type: 'END_SESSION' });
    await settle();
    expect(fake.sent.at(-1)).toMatchObject({ service: 'reversal', amountMinor: 150 });
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'approved',
      amountMinor: 150,
      messageKey: 'meter.thankYou',
    });
  });

  it('ends the session the customer ended while its second pre-authorization awaited their card: nothing more held', async () => {
    const fake = new FakeTerminal();
    const actor = await openSession(fake, 60, chosen({ allowIncremental: false }));
    fake.clock.increment(50 * MIN);
    fake.reads.push('hang');
    actor.send({ type: 'EXTEND', minutes: 60 });
    await settle();
    actor.send({ type: 'END_SESSION' });
    await settle();
    // The extension is cancelled before a card was taken; 50 minutes cost 2 units = 300, the whole first hold.
    expect(fake.sent.map((r) => [r.comments, r.amountMinor])).toEqual([
      ['Parking Auth', 300],
      ['Parking Capture', 300],
    ]);
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'approved', amountMinor: 300 });
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

/** The card reads the customer puts right by presenting the card again: the read, its reason, what the screen says. */
const READS_TO_PRESENT_AGAIN = [
  ['CARD_USE_CONTACT', 'CARD_USE_CONTACT', 'result.insertCard'],
  ['CARD_COLLISION', 'CARD_COLLISION', 'result.oneCard'],
  ['CARD_REMOVED', 'CARD_REMOVED', 'result.cardRemoved'],
  ['CARD_NOT_PRESENTED', 'CARD_NOT_PRESENTED', 'result.noCard'],
  ['tap-failed', 'TAP_FAILED', 'result.tapFailed'],
] as const;

/**
 * The card asked for again after a failed read or a decline on the meter's pre-authorization of 60 minutes (the
 * maximum stay held: 1200), its read never ending: the card prompt says what is held, nothing of the failed read.
 */
async function cardAskedForAgain(fake: FakeTerminal, actor: MeterActor) {
  const view = await cardAwaitedAgain(fake, actor);
  expect(view).toMatchObject({
    screen: 'present-card',
    messageKey: 'meter.confirmHoldMaximum',
    amountMinor: 1_200,
  });
  expect(view.reason).toBeUndefined();
  return view;
}

/**
 * The stay ended after 90 minutes on a hold of the maximum stay (1200) taken by the last of the pre-authorizations
 * `sent`: 450 captured from it, nothing left held.
 */
async function endedAfter90Minutes(fake: FakeTerminal, actor: MeterActor, sent: Array<[string, number]>) {
  fake.clock.increment(90 * MIN);
  actor.send({ type: 'END_SESSION' });
  await settle();
  expect(fake.sent.map((r) => [r.service, r.amountMinor])).toEqual([...sent, ['capture', 450]]);
  actor.send({ type: 'DONE' });
  expect(fake.balanceProblems()).toEqual([]);
  expect(fake.openAuthorizations()).toEqual([]);
  expect(fake.netChargedMinor()).toBe(450);
}

describe('meter machine: a card the reader asks to present again', () => {
  /** The pre-authorization of 60 minutes (the maximum stay held: 1200) confirmed, its card read failed as `read`. */
  async function readFailed(fake: FakeTerminal, read: string) {
    fake.reads.push(read);
    return openSession(fake, 60);
  }

  /** The card presented again on the error screen (pressed twice: one pre-authorization), then the stay ended. */
  async function presentedAgainAndEnded(fake: FakeTerminal, actor: MeterActor) {
    actor.send({ type: 'CONFIRM' });
    actor.send({ type: 'CONFIRM' });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'session', reason: 'APPROVED' });
    expect(fake.sent.map((r) => [r.service, r.comments, r.amountMinor])).toEqual([
      ['preauth', 'Parking Auth', 1_200],
    ]);
    await endedAfter90Minutes(fake, actor, [['preauth', 1_200]]);
  }

  for (const [read, reason, messageKey] of READS_TO_PRESENT_AGAIN) {
    it(`${reason}: says what to do and takes the card again, nothing sent for the failed read, one hold`, async () => {
      const fake = new FakeTerminal();
      const actor = await readFailed(fake, read);
      const view = describeView(actor.getSnapshot());
      expect(view).toMatchObject({ screen: 'error', messageKey, reason });
      expect(view.actions).toContain('CONFIRM');
      expect(fake.sent).toEqual([]);
      await presentedAgainAndEnded(fake, actor);
    });
  }

  it('says no card was presented when none came in time, and takes one again, nothing sent in between', async () => {
    const fake = new FakeTerminal();
    const actor = await readFailed(fake, 'hang');
    fake.clock.increment(65_000);
    await settle();
    const view = describeView(actor.getSnapshot());
    expect(view).toMatchObject({ screen: 'error', messageKey: 'result.noCard', reason: 'READ_TIMEOUT' });
    expect(view.actions).toContain('CONFIRM');
    expect(fake.sent).toEqual([]);
    await presentedAgainAndEnded(fake, actor);
  });

  it('asks for the card again with what is held, and nothing of the failed read on the screen', async () => {
    const fake = new FakeTerminal();
    const actor = await readFailed(fake, 'CARD_REMOVED');
    await cardAskedForAgain(fake, actor);
    expect(fake.sent).toEqual([]);
    actor.stop();
  });

  for (const code of ['CARD_UNSUPPORTED', 'READER_DISCONNECTED', 'CARD_ERROR']) {
    it(`${code}: offers no card again (presenting it again cannot put it right), nothing sent`, async () => {
      const fake = new FakeTerminal();
      const actor = await readFailed(fake, code);
      const view = describeView(actor.getSnapshot());
      expect(view).toMatchObject({ screen: 'error', reason: code });
      expect(view.actions).not.toContain('CONFIRM');
      actor.send({ type: 'CONFIRM' });
      await settle();
      expect(describeView(actor.getSnapshot()).screen).toBe('error');
      expect(fake.sent).toEqual([]);
    });
  }

  it('offers no card again after a pre-authorization whose outcome is being checked', async () => {
    const fake = new FakeTerminal();
    fake.submitHangs = true;
    const actor = await openSession(fake, 60);
    fake.clock.increment(100_000);
    await settle();
    const view = describeView(actor.getSnapshot());
    expect(view.screen).toBe('error');
    expect(view.actions).not.toContain('CONFIRM');
    actor.stop();
  });
});

describe('meter machine: another card after a declined pre-authorization', () => {
  const PHONE = testSettings({ payByPhone: { waitMs: 300_000 } });

  /** The pre-authorization of 60 minutes (the maximum stay held: 1200) declined on the first card. */
  async function declined(fake: FakeTerminal, settings?: FlowSettings) {
    const actor = await openSession(fake, 60, settings);
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'declined',
      maskedPan: '411111******1111',
    });
    // A declined pre-authorization holds nothing.
    expect(fake.openAuthorizations()).toEqual([]);
    return actor;
  }

  it('takes another card: one new pre-authorization with a transactionId of its own, then the stay settled', async () => {
    const fake = new FakeTerminal().script('preauth', 'declined');
    const actor = await declined(fake);
    expect(describeView(actor.getSnapshot()).actions).toContain('CONFIRM');
    fake.card = { ...fake.card, maskedPan: '555555******4444', fingerprint: 'fp-2' };
    // Pressed twice: the second press while the card is read and sent is not taken.
    actor.send({ type: 'CONFIRM' });
    actor.send({ type: 'CONFIRM' });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'session',
      reason: 'APPROVED',
      maskedPan: '555555******4444',
      session: { heldMinor: 1_200 },
    });
    expect(fake.sent.map((r) => [r.service, r.amountMinor, r.kind])).toEqual([
      ['preauth', 1_200, 'declined'],
      ['preauth', 1_200, 'approved'],
    ]);
    expect(new Set(fake.sent.map((r) => r.transactionId)).size).toBe(2);
    await endedAfter90Minutes(fake, actor, [
      ['preauth', 1_200],
      ['preauth', 1_200],
    ]);
    // Captured from the new card's hold.
    expect(fake.sent[2]?.original?.transactionId).toBe(fake.sent[1]?.transactionId);
  });

  it('asks for the next card with what is held, and nothing of the declined card on the screen', async () => {
    const fake = new FakeTerminal().script('preauth', 'declined');
    const actor = await declined(fake);
    const view = await cardAskedForAgain(fake, actor);
    expect(view.maskedPan).toBeUndefined();
    expect(fake.sent).toHaveLength(1);
    actor.stop();
  });

  it('takes another card after a partial approval it undid (nothing held), as after any decline', async () => {
    const fake = new FakeTerminal();
    fake.partialMinor.preauth = 800;
    const actor = await declined(fake);
    // spec 001: the meter holds the maximum stay or nothing; the 800 approved was reversed at once.
    expect(describeView(actor.getSnapshot())).toMatchObject({
      messageKey: 'result.partialApproval',
      reason: 'PARTIAL_APPROVAL',
    });
    expect(fake.sent.map((r) => [r.service, r.amountMinor])).toEqual([
      ['preauth', 1_200],
      ['reversal', 800],
    ]);
    expect(describeView(actor.getSnapshot()).actions).toContain('CONFIRM');
    delete fake.partialMinor.preauth;
    actor.send({ type: 'CONFIRM' });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'session',
      session: { heldMinor: 1_200 },
    });
    expect(fake.sent.map((r) => [r.service, r.amountMinor])).toEqual([
      ['preauth', 1_200],
      ['reversal', 800],
      ['preauth', 1_200],
    ]);
    fake.clock.increment(5 * MIN);
    actor.send({ type: 'END_SESSION' });
    await settle();
    actor.send({ type: 'DONE' });
    expect(fake.balanceProblems()).toEqual([]);
    expect(fake.openAuthorizations()).toEqual([]);
    expect(fake.netChargedMinor()).toBe(0);
  });

  it('offers no other card when a partial approval could not be undone (it stands: the operator settles it)', async () => {
    const fake = new FakeTerminal().script('reversal', 'declined');
    fake.partialMinor.preauth = 800;
    const actor = await openSession(fake, 60);
    const view = describeView(actor.getSnapshot());
    expect(view).toMatchObject({ screen: 'error', messageKey: 'result.partialNotUndone' });
    expect(view.actions).not.toContain('CONFIRM');
    actor.send({ type: 'CONFIRM' });
    await settle();
    expect(fake.sent.map((r) => r.service)).toEqual(['preauth', 'reversal']);
    actor.stop();
  });

  it('offers the phone on the declined screen where the meter offers it, without the declined card', async () => {
    const fake = new FakeTerminal().script('preauth', 'declined');
    const actor = await declined(fake, PHONE);
    expect(describeView(actor.getSnapshot()).actions).toEqual(
      expect.arrayContaining(['CONFIRM', 'PAY_BY_LINK']),
    );
    actor.send({ type: 'PAY_BY_LINK' });
    await settle();
    const scan = describeView(actor.getSnapshot());
    expect(scan.screen).toBe('pay-by-phone');
    expect(scan.maskedPan).toBeUndefined();
    expect(scan.reason).toBeUndefined();
    // The price of the time chosen (60 minutes: 300), nothing held on a card.
    expect(fake.links[0]).toMatchObject({ amountMinor: 300, purpose: 'fee' });
    fake.payLink();
    await settle();
    const paid = describeView(actor.getSnapshot());
    expect(paid).toMatchObject({ screen: 'session', reason: 'PAID_BY_LINK' });
    // The card shown was declined and holds nothing: the session is the phone's.
    expect(paid.maskedPan).toBeUndefined();
    expect(fake.sent.map((r) => r.service)).toEqual(['preauth']);
    expect(fake.openAuthorizations()).toEqual([]);
    actor.stop();
  });

  it('offers no phone on the declined screen where the meter does not offer it', async () => {
    const fake = new FakeTerminal().script('preauth', 'declined');
    const actor = await declined(fake);
    expect(describeView(actor.getSnapshot()).actions).not.toContain('PAY_BY_LINK');
    actor.stop();
  });
});

describe('meter machine: an extension whose card read the customer can put right', () => {
  /** A session of 60 minutes holding 300 (chosen), extended by 60 with a second pre-authorization whose read fails. */
  async function extensionReadFailed(fake: FakeTerminal, read: string) {
    const actor = await openSession(fake, 60, chosen({ allowIncremental: false }));
    const before = describeView(actor.getSnapshot()).session;
    fake.reads.push(read);
    actor.send({ type: 'EXTEND', minutes: 60 });
    await settle();
    return { actor, before };
  }

  /** The hold untouched and the extension asked for again: one more pre-authorization, then the stay settled. */
  async function extendedAgainAndEnded(
    fake: FakeTerminal,
    actor: MeterActor,
    before: ReturnType<typeof describeView>['session'],
  ) {
    const view = describeView(actor.getSnapshot());
    expect(view.session).toEqual(before);
    expect(view.actions).toContain('EXTEND');
    expect(fake.sent.map((r) => [r.comments, r.amountMinor])).toEqual([['Parking Auth', 300]]);
    expect(fake.openAuthorizations()).toHaveLength(1);
    actor.send({ type: 'EXTEND', minutes: 60 });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'session',
      reason: 'APPROVED',
      messageKey: 'meter.extended',
      session: { heldMinor: 600 },
    });
    await twoHoldsEndedAfter50Minutes(fake, actor);
    expect(fake.openAuthorizations()).toEqual([]);
  }

  for (const [read, reason, messageKey] of READS_TO_PRESENT_AGAIN) {
    it(`${reason}: the session says what went wrong, the hold untouched, and extends again`, async () => {
      const fake = new FakeTerminal();
      const { actor, before } = await extensionReadFailed(fake, read);
      expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'session', messageKey, reason });
      await extendedAgainAndEnded(fake, actor, before);
    });
  }

  it('says no card was presented when none came in time, the hold untouched, and extends again', async () => {
    const fake = new FakeTerminal();
    const { actor, before } = await extensionReadFailed(fake, 'hang');
    fake.clock.increment(65_000);
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'session',
      messageKey: 'result.noCard',
      reason: 'READ_TIMEOUT',
    });
    await extendedAgainAndEnded(fake, actor, before);
  });

  it('still says the extension was not approved when its pre-authorization is declined', async () => {
    const fake = new FakeTerminal();
    const actor = await openSession(fake, 60, chosen({ allowIncremental: false }));
    fake.script('preauth', 'declined');
    actor.send({ type: 'EXTEND', minutes: 60 });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'session',
      messageKey: 'meter.extensionNotApproved',
      reason: 'GENERAL_DECLINE',
      session: { heldMinor: 300 },
    });
    actor.stop();
  });
});

/** An offer for the meter's hold (the fake fills in the local side: the maximum stay, 1200). */
const OFFER: DccOfferSummary = {
  offerId: 'offer-1',
  reconciliationId: 'rec-1',
  localAmountMinor: 1_200,
  localCurrency: 'GBP',
  billingAmountMinor: 1_598,
  billingCurrency: 'USD',
  exchangeRate: '1.331838',
  exchangeRateInverted: false,
  marginRate: '3.5',
  exchangeRateTimeStamp: '20250106080000',
  expiresAtUtc: '2025-01-06T08:10:00Z',
  disclaimer: 'I have chosen to pay in the card currency. The conversion is provided by the merchant.',
};

const ASK_AGAIN = testSettings({ dcc: { enabled: true, processorFamily: 'A', choiceAtCompletion: true } });

/** A session whose 1200 hold was converted to USD at the pre-authorization, ended after 90 minutes (fee 450). */
async function convertedSessionEnded(fake: FakeTerminal, settings: FlowSettings = ASK_AGAIN) {
  fake.offers.push(OFFER);
  const actor = await openSession(fake, 60, settings);
  expect(describeView(actor.getSnapshot()).screen).toBe('choose-currency');
  actor.send({ type: 'CHOOSE_CURRENCY', currency: 'USD' });
  await settle();
  expect(describeView(actor.getSnapshot()).screen).toBe('session');
  fake.clock.increment(90 * MIN);
  actor.send({ type: 'END_SESSION' });
  await settle();
  return actor;
}

const summary = (fake: FakeTerminal) =>
  fake.sent.map((r) => [r.service, r.amountMinor, r.currency, r.dcc?.indicator ?? null]);

describe('meter machine: the currency choice again at completion (dcc.choiceAtCompletion)', () => {
  it('shows the fee in both currencies at the authorization rate, with its rate, markup and disclaimer', async () => {
    const fake = new FakeTerminal();
    const actor = await convertedSessionEnded(fake);
    const view = describeView(actor.getSnapshot());
    expect(view).toMatchObject({
      screen: 'choose-currency',
      amountMinor: 450,
      message: 'Choose the currency of your parking fee',
      actions: ['CHOOSE_CURRENCY', 'CANCEL'],
    });
    // The card amount is the one the capture carries: the fee at the authorization's rate (spec 001).
    expect(view.dcc).toEqual({
      ...OFFER,
      localAmountMinor: 450,
      billingAmountMinor: convertAtOfferRate(450, OFFER),
    });
    expect(view.dcc?.billingAmountMinor).toBe(599);
    // Nothing is sent while the customer chooses.
    expect(summary(fake)).toEqual([['preauth', 1_200, 'GBP', '1']]);
  });

  it('gives the choice no time limit of its own: the host times it as every input screen, with its question first', async () => {
    // A customer listening to the rate, markup and disclaimer in accessibility mode, or who answered "Do you need
    // more time?" with yes, is never cut off by the machine: only the host's time limit ends the choice (a CANCEL).
    const fake = new FakeTerminal();
    const actor = await convertedSessionEnded(fake);
    fake.clock.increment(10 * MIN);
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'choose-currency',
      amountMinor: 450,
      actions: ['CHOOSE_CURRENCY', 'CANCEL'],
    });
    expect(summary(fake)).toEqual([['preauth', 1_200, 'GBP', '1']]);
  });

  it('captures in the card currency at the authorization rate when the card currency is chosen', async () => {
    const fake = new FakeTerminal();
    const actor = await convertedSessionEnded(fake);
    actor.send({ type: 'CHOOSE_CURRENCY', currency: 'USD' });
    await settle();
    expect(summary(fake)).toEqual([
      ['preauth', 1_200, 'GBP', '1'],
      ['capture', 450, 'GBP', '1'],
    ]);
    // The capture repeats the authorization's terms: the host converts at that offer's rate.
    expect(fake.sent[1]?.dcc).toEqual({ indicator: '1', offer: OFFER });
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'approved', amountMinor: 450 });
    expect(fake.receipts.map((r) => r.lines.find((l) => l.label === 'Paid in card currency')?.value)).toEqual(
      ['5.99 USD'],
    );
    actor.send({ type: 'DONE' });
    expect(fake.balanceProblems()).toEqual([]);
    expect(fake.netChargedMinor()).toBe(450);
  });

  it('asks for the card again with the fee in the local currency on the card prompt, and no new offer', async () => {
    const fake = new FakeTerminal();
    const actor = await convertedSessionEnded(fake);
    fake.reads.push('hang');
    actor.send({ type: 'CHOOSE_CURRENCY', currency: 'GBP' });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'present-card',
      amountMinor: 450,
      message: 'Present your card to pay the parking fee of £4.50',
      actions: ['CANCEL'],
    });
    expect(fake.sent).toHaveLength(1);
    expect(fake.offerRequests).toHaveLength(1);
  });

  for (const [how, decline] of [
    ['chooses the local currency', (a: MeterActor) => a.send({ type: 'CHOOSE_CURRENCY', currency: 'GBP' })],
    // Also what the host sends when nobody answers "Do you need more time?" on the choice.
    ['cancels the choice', (a: MeterActor) => a.send({ type: 'CANCEL' })],
  ] as const)
    it(`never converts when the customer ${how}: a local sale, then the converted hold reversed in full`, async () => {
      const fake = new FakeTerminal();
      const actor = await convertedSessionEnded(fake);
      decline(actor);
      await settle();
      expect(summary(fake)).toEqual([
        ['preauth', 1_200, 'GBP', '1'],
        ['sale', 450, 'GBP', '3'],
        ['reversal', 1_200, 'GBP', '1'],
      ]);
      // No new offer for the sale; the reversal carries the authorization's conversion terms.
      expect(fake.offerRequests).toHaveLength(1);
      expect(fake.sent[1]).toMatchObject({ comments: 'Parking Sale', dcc: { indicator: '3' } });
      expect(fake.sent[2]).toMatchObject({ comments: 'REVERSAL', dcc: { indicator: '1', offer: OFFER } });
      expect(describeView(actor.getSnapshot())).toMatchObject({
        screen: 'approved',
        amountMinor: 450,
        message: 'Thank you',
      });
      // The receipt is the sale's, in the local currency: no conversion lines.
      expect(fake.receipts).toHaveLength(1);
      expect(fake.receipts[0]).toMatchObject({ service: 'sale', amountMinor: 450, currency: 'GBP' });
      expect(fake.receipts[0]?.lines.map((l) => l.label)).toEqual(['Parking', 'Stay']);
      actor.send({ type: 'DONE' });
      expect(fake.balanceProblems()).toEqual([]);
      expect(fake.openAuthorizations()).toEqual([]);
      expect(fake.netChargedMinor()).toBe(450);
    });

  for (const [how, act] of [
    [
      'cancels at the card prompt',
      async (a: MeterActor, f: FakeTerminal) => {
        f.reads.push('hang');
        a.send({ type: 'CHOOSE_CURRENCY', currency: 'GBP' });
        await settle();
        a.send({ type: 'CANCEL' });
      },
    ],
    [
      'walks away (the host cancels the unanswered choice, then the card read times out)',
      async (a: MeterActor, f: FakeTerminal) => {
        f.reads.push('hang');
        a.send({ type: 'CANCEL' });
        await settle();
        f.clock.increment(65_000);
      },
    ],
    [
      'takes the card away at the card prompt',
      (a: MeterActor, f: FakeTerminal) => {
        f.reads.push('CARD_REMOVED');
        a.send({ type: 'CHOOSE_CURRENCY', currency: 'GBP' });
        return Promise.resolve();
      },
    ],
    [
      'presents a card that cannot be read',
      (a: MeterActor, f: FakeTerminal) => {
        // Neither its chip nor, asked for after that, its stripe.
        f.reads.push('CARD_ERROR', 'CARD_ERROR');
        a.send({ type: 'CHOOSE_CURRENCY', currency: 'GBP' });
        return Promise.resolve();
      },
    ],
  ] as const)
    it(`releases the converted hold and records the fee as not collected when the customer ${how}`, async () => {
      const fake = new FakeTerminal();
      const actor = await convertedSessionEnded(fake);
      await act(actor, fake);
      await settle();
      // Never a capture in the card currency the customer did not choose at completion.
      expect(summary(fake)).toEqual([
        ['preauth', 1_200, 'GBP', '1'],
        ['reversal', 1_200, 'GBP', '1'],
      ]);
      const view = describeView(actor.getSnapshot());
      expect(view).toMatchObject({
        screen: 'error',
        reason: 'FEE_NOT_COLLECTED',
        amountMinor: 450,
        message: 'The parking fee was not paid. The amount held on your card has been released',
      });
      // The end of a session: the card is never asked for again here (that would be a new pre-authorization).
      expect(view.actions).not.toContain('CONFIRM');
      expect(fake.receipts).toEqual([]);
      actor.send({ type: 'DONE' });
      expect(fake.balanceProblems()).toEqual([]);
      expect(fake.openAuthorizations()).toEqual([]);
      expect(fake.netChargedMinor()).toBe(0);
    });

  it('releases the hold when the local sale is declined, and when its outcome is unknown after voiding it', async () => {
    for (const kind of ['declined', 'unknown'] as const) {
      const fake = new FakeTerminal();
      const actor = await convertedSessionEnded(fake);
      fake.script('sale', kind);
      actor.send({ type: 'CHOOSE_CURRENCY', currency: 'GBP' });
      await settle();
      expect(summary(fake)).toEqual([
        ['preauth', 1_200, 'GBP', '1'],
        ['sale', 450, 'GBP', '3'],
        ...(kind === 'unknown' ? [['timeout-void', 450, 'GBP', null]] : []),
        ['reversal', 1_200, 'GBP', '1'],
      ]);
      expect(describeView(actor.getSnapshot()).reason).toBe('FEE_NOT_COLLECTED');
      actor.send({ type: 'DONE' });
      expect(fake.balanceProblems()).toEqual([]);
      expect(fake.netChargedMinor()).toBe(0);
    }
  });

  it('ignores a currency that is not one of the two shown', async () => {
    const fake = new FakeTerminal();
    const actor = await convertedSessionEnded(fake);
    actor.send({ type: 'CHOOSE_CURRENCY', currency: 'EUR' });
    await settle();
    expect(describeView(actor.getSnapshot()).screen).toBe('choose-currency');
    expect(fake.sent).toHaveLength(1);
  });

  it('asks nothing when the option is off, the hold was not converted, or nothing is owed', async () => {
    // The option off (the default): the converted capture as before.
    const off = new FakeTerminal();
    await convertedSessionEnded(off, testSettings({ dcc: { enabled: true, processorFamily: 'A' } }));
    expect(summary(off).map((r) => r[0])).toEqual(['preauth', 'capture']);
    // The customer chose the local currency at the pre-authorization: nothing to choose again.
    const local = new FakeTerminal();
    local.offers.push(OFFER);
    const actor = await openSession(local, 60, ASK_AGAIN);
    actor.send({ type: 'CHOOSE_CURRENCY', currency: 'GBP' });
    await settle();
    local.clock.increment(90 * MIN);
    actor.send({ type: 'END_SESSION' });
    await settle();
    expect(summary(local)).toEqual([
      ['preauth', 1_200, 'GBP', '3'],
      ['capture', 450, 'GBP', null],
    ]);
    // Ended within the grace period: no fee, the converted hold is reversed without asking.
    const free = new FakeTerminal();
    free.offers.push(OFFER);
    const freeActor = await openSession(free, 60, ASK_AGAIN);
    freeActor.send({ type: 'CHOOSE_CURRENCY', currency: 'USD' });
    await settle();
    free.clock.increment(5 * MIN);
    freeActor.send({ type: 'END_SESSION' });
    await settle();
    expect(summary(free)).toEqual([
      ['preauth', 1_200, 'GBP', '1'],
      ['reversal', 1_200, 'GBP', '1'],
    ]);
    expect(describeView(freeActor.getSnapshot()).screen).toBe('approved');
  });
});
