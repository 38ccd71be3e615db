import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import type { HoldClaim, HoldRecord, HoldResolution } from './effects.js';
import { provideFlowEffects } from './provide.js';
import { FakeTerminal, settle, testSettings } from './testing/fake-terminal.js';
import { cardReadingActor, describeView } from './view.js';

const MIN = 60_000;

function gate(fake: FakeTerminal) {
  const actor = createActor(provideFlowEffects.tapAndGo(fake), {
    input: { settings: testSettings(), clock: fake.clock },
    clock: fake.clock,
  });
  actor.start();
  return actor;
}

/** A car that entered at a gate of `fake` and stayed `ms`: the gate's actor, on its idle screen again. */
async function enteredAndStayed(fake: FakeTerminal, ms: number) {
  const actor = gate(fake);
  actor.send({ type: 'TAP_ENTRY' });
  await settle();
  actor.send({ type: 'DONE' });
  fake.clock.increment(ms);
  return actor;
}

/** A car entered at a gate of `fake`: its hold, as the gate stored it. */
async function enteredHold(fake: FakeTerminal): Promise<HoldRecord> {
  gate(fake).send({ type: 'TAP_ENTRY' });
  await settle();
  const hold = [...fake.holds.values()][0];
  if (hold === undefined) throw new Error('no hold');
  return hold;
}

/**
 * Runs the hold expiry machine of `hold` past its expiry (the maximum stay), a minute at a time for at most `minutes`
 * while it is active; returns the actor, settled.
 */
async function expireHold(
  fake: FakeTerminal,
  hold: HoldRecord,
  minutes: number,
  input: { refusedBefore?: number } = {},
) {
  const expiry = createActor(provideFlowEffects.holdExpiry(fake), {
    input: { settings: testSettings(), clock: fake.clock, hold, ...input },
    clock: fake.clock,
  });
  expiry.start();
  fake.clock.increment(24 * 60 * MIN);
  for (let i = 0; i < minutes && expiry.getSnapshot().status === 'active'; i += 1) {
    await settle();
    fake.clock.increment(MIN);
  }
  await settle();
  return expiry;
}

describe('tap-and-go machine', () => {
  it('verifies, holds and stores the hold at entry, then captures the fee at exit with the same card', async () => {
    const fake = new FakeTerminal();
    const actor = gate(fake);
    actor.send({ type: 'TAP_ENTRY' });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'session', amountMinor: 2_000 });
    expect([...fake.holds.values()][0]).toMatchObject({ fingerprint: 'fp-1', authorizedMinor: 2_000 });
    actor.send({ type: 'DONE' });
    fake.clock.increment(100 * MIN);
    actor.send({ type: 'TAP_EXIT' });
    await settle();
    expect(fake.sent.map((r) => [r.comments, r.amountMinor])).toEqual([
      ['Parking AVR', 0],
      ['Parking Auth', 2_000],
      ['Parking Capture Less Than Auth', 600],
    ]);
    expect(fake.closedHolds).toEqual([{ holdId: fake.sent[1]?.transactionId, resolution: 'captured' }]);
    // The hold is captured: the approved screen shows the stay, and no amount held on the card any more.
    const approved = describeView(actor.getSnapshot());
    expect(approved).toMatchObject({ screen: 'approved', amountMinor: 600 });
    expect(approved.session).toBeDefined();
    expect(approved.session?.heldMinor).toBeUndefined();
    actor.send({ type: 'DONE' });
    expect(fake.balanceProblems()).toEqual([]);
  });

  it('shows and prints what the gateway captured at exit when it answers the capture for less than asked', async () => {
    const fake = new FakeTerminal();
    const actor = gate(fake);
    actor.send({ type: 'TAP_ENTRY' });
    await settle();
    actor.send({ type: 'DONE' });
    fake.partialMinor.capture = 450;
    fake.clock.increment(100 * MIN);
    actor.send({ type: 'TAP_EXIT' });
    await settle();
    // 600 asked of the 2000 held, 450 captured: the gateway reversed the rest itself, so nothing else is sent.
    expect(fake.sent.map((r) => [r.service, r.amountMinor])).toEqual([
      ['avr', 0],
      ['preauth', 2_000],
      ['capture', 600],
    ]);
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'approved', amountMinor: 450 });
    expect(fake.receipts.map((r) => r.amountMinor)).toEqual([450]);
    actor.send({ type: 'DONE' });
    expect(fake.balanceProblems()).toEqual([]);
    expect(fake.netChargedMinor()).toBe(450);
  });

  it('asks for an incremental authorization when the fee exceeds the hold', async () => {
    const fake = new FakeTerminal();
    const actor = await enteredAndStayed(fake, 2 * 24 * 60 * MIN);
    actor.send({ type: 'TAP_EXIT' });
    await settle();
    expect(fake.comments().slice(-2)).toEqual(['Parking Incremental Auth', 'Parking Capture']);
    expect(fake.sent.at(-1)?.amountMinor).toBe(4_000);
  });

  it('refuses an exit by a card that has no open hold', async () => {
    const fake = new FakeTerminal();
    const actor = gate(fake);
    actor.send({ type: 'TAP_EXIT' });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'declined', reason: 'NO_ENTRY' });
    expect(fake.sent).toEqual([]);
  });

  it('reverses the hold when the stay is within the grace period', async () => {
    const fake = new FakeTerminal();
    const actor = await enteredAndStayed(fake, 5 * MIN);
    actor.send({ type: 'TAP_EXIT' });
    await settle();
    expect(fake.sent.at(-1)).toMatchObject({ comments: 'REVERSAL', amountMinor: 2_000 });
    actor.send({ type: 'DONE' });
    expect(fake.balanceProblems()).toEqual([]);
  });

  it('titles an exit that owes nothing "Nothing to pay", never "Approved": no payment was approved', async () => {
    const fake = new FakeTerminal();
    const actor = await enteredAndStayed(fake, 5 * MIN);
    actor.send({ type: 'TAP_EXIT' });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'approved',
      titleKey: 'screen.nothingDue.title',
      messageKey: 'tapAndGo.nothingDue',
      amountMinor: 0,
    });
    expect(fake.receipts).toEqual([]);
  });

  it.each(['declined', 'rejected', 'unknown'] as const)(
    'opens an exit that owes nothing whose hold release is %s: the hold goes back to its watch, nothing charged',
    async (kind) => {
      const fake = new FakeTerminal();
      const actor = await enteredAndStayed(fake, 5 * MIN);
      fake.script('reversal', kind);
      actor.send({ type: 'TAP_EXIT' });
      await settle();
      expect(describeView(actor.getSnapshot())).toMatchObject({
        screen: 'approved',
        titleKey: 'screen.nothingDue.title',
        messageKey: 'tapAndGo.nothingDue',
        amountMinor: 0,
      });
      // Its release is the expiry watch's now (recovery's first, when the reversal's outcome is unknown).
      expect(fake.closedHolds).toEqual([{ holdId: fake.sent[1]?.transactionId, resolution: 'returned' }]);
      expect(fake.sent.map((r) => r.service)).toEqual(['avr', 'preauth', 'reversal']);
      expect(fake.netChargedMinor()).toBe(0);
    },
  );
});

describe('tap-and-go machine: a card read that failed, told as the pay station tells it', () => {
  // The one mapping from a reader error to the customer's message (failureText, src/flows/models.ts), at the exit's
  // own read as at the entry's reads in the transaction actor.
  const told = [
    ['CARD_COLLISION', 'result.oneCard'],
    ['CARD_REMOVED', 'result.cardRemoved'],
    ['CARD_NOT_PRESENTED', 'result.noCard'],
    ['CARD_UNSUPPORTED', 'result.cardNotSupported'],
    ['READER_DISCONNECTED', 'host.readerUnavailable'],
    ['READER_NOT_CONNECTED', 'host.readerUnavailable'],
    ['READER_UNAVAILABLE', 'host.readerUnavailable'],
    ['CARD_ERROR', 'result.cardUnreadable'],
  ] as const;

  /** Taps at `tap` while the reader answers `reads` in turn, and expects the error screen telling `told`. */
  async function tapRefused(
    fake: FakeTerminal,
    actor: ReturnType<typeof gate>,
    tap: 'TAP_ENTRY' | 'TAP_EXIT',
    reads: string[],
    told: { messageKey: string; reason: string },
  ): Promise<void> {
    fake.reads.push(...reads);
    actor.send({ type: tap });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'error', ...told });
  }

  /** A car that stayed 100 minutes is refused at the exit telling `told`: nothing sent, no hold touched. */
  async function refusedAtExit(
    fake: FakeTerminal,
    reads: string[],
    told: { messageKey: string; reason: string },
  ) {
    const actor = await enteredAndStayed(fake, 100 * MIN);
    const before = fake.sent.length;
    await tapRefused(fake, actor, 'TAP_EXIT', reads, told);
    expect(fake.sent.slice(before)).toEqual([]);
    expect(fake.closedHolds).toEqual([]);
    return { actor, before };
  }

  const tapAgain = { messageKey: 'result.tapFailedTapOnly', reason: 'TAP_FAILED' };
  const useAnotherCard = { messageKey: 'result.useAnotherCardTapOnly', reason: 'CARD_USE_CONTACT' };

  for (const [code, messageKey] of told) {
    it(`${code} at the exit: says ${messageKey}, nothing sent, no hold touched`, async () => {
      const fake = new FakeTerminal();
      await refusedAtExit(fake, [code], { messageKey, reason: code });
    });

    it(`${code} at the entry: says ${messageKey}, nothing sent`, async () => {
      const fake = new FakeTerminal();
      const actor = gate(fake);
      await tapRefused(fake, actor, 'TAP_ENTRY', [code], { messageKey, reason: code });
      expect(fake.sent).toEqual([]);
    });
  }

  // The gate's reader takes taps only: a tap that failed (usually a card moved away too soon) asks for the card tapped
  // again, never inserted (there is no slot to insert it in), and the next tap is read and paid.
  it('TAP_FAILED at the exit: asks for the card tapped again, never inserted, and the next tap pays', async () => {
    const fake = new FakeTerminal();
    const { actor, before } = await refusedAtExit(fake, ['tap-failed'], tapAgain);
    actor.send({ type: 'DONE' });
    actor.send({ type: 'TAP_EXIT' });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'approved' });
    expect(fake.sent.slice(before).map((r) => r.service)).toEqual(['capture']);
  });

  it('TAP_FAILED at the entry: asks for the card tapped again, never inserted, nothing sent', async () => {
    const fake = new FakeTerminal();
    const actor = gate(fake);
    await tapRefused(fake, actor, 'TAP_ENTRY', ['tap-failed'], tapAgain);
    expect(fake.sent).toEqual([]);
  });

  // A card that must be inserted (the reader's "go to contact interface", or an amount over its contactless limit) is
  // refused again when tapped again, and the gate's reader has no slot to insert it in: another card, or the operator.
  // The gate then asks for a card again.
  it('CARD_USE_CONTACT at the exit: asks for another card or the operator, never inserted, and takes a card again', async () => {
    const fake = new FakeTerminal();
    const { actor, before } = await refusedAtExit(fake, ['CARD_USE_CONTACT'], useAnotherCard);
    fake.clock.increment(testSettings().timing.resultScreenMs);
    await settle();
    const idle = describeView(actor.getSnapshot());
    expect(idle).toMatchObject({ screen: 'idle', messageKey: 'tapAndGo.tapCard' });
    expect(idle.actions).toEqual(expect.arrayContaining(['TAP_ENTRY', 'TAP_EXIT']));
    actor.send({ type: 'TAP_EXIT' });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'approved' });
    expect(fake.sent.slice(before).map((r) => r.service)).toEqual(['capture']);
  });

  it('CARD_USE_CONTACT at the entry: asks for another card or the operator, nothing sent, and the next card enters', async () => {
    const fake = new FakeTerminal();
    const actor = gate(fake);
    await tapRefused(fake, actor, 'TAP_ENTRY', ['CARD_USE_CONTACT'], useAnotherCard);
    expect(fake.sent).toEqual([]);
    actor.send({ type: 'DONE' });
    fake.card = { ...fake.card, maskedPan: '555555******4444', fingerprint: 'fp-2' };
    actor.send({ type: 'TAP_ENTRY' });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'session', reason: 'APPROVED' });
    expect(fake.sent.map((r) => r.service)).toEqual(['avr', 'preauth']);
  });

  it("CARD_USE_CONTACT at the entry's pre-authorization (its amount over the contactless limit): the same, no hold", async () => {
    const fake = new FakeTerminal();
    const actor = gate(fake);
    await tapRefused(fake, actor, 'TAP_ENTRY', ['card', 'CARD_USE_CONTACT'], useAnotherCard);
    expect(fake.sent.map((r) => r.service)).toEqual(['avr']);
    expect(fake.holds.size).toBe(0);
  });

  it('says no card was presented when none came within the read timeout at the exit', async () => {
    const fake = new FakeTerminal();
    const actor = gate(fake);
    fake.reads.push('hang');
    actor.send({ type: 'TAP_EXIT' });
    await settle();
    fake.clock.increment(testSettings().timing.readTimeoutMs);
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'error',
      messageKey: 'result.noCard',
      reason: 'READ_TIMEOUT',
    });
    expect(fake.sent).toEqual([]);
  });
});

describe('tap-and-go machine: more time at the exit', () => {
  it('reads again on READ_AGAIN (the customer asked for more time): the waiting read is aborted, the fee charged once', async () => {
    const fake = new FakeTerminal();
    const actor = await enteredAndStayed(fake, 100 * MIN);
    const before = fake.sent.length;
    fake.reads.push('hang');
    actor.send({ type: 'TAP_EXIT' });
    await settle();
    expect(describeView(actor.getSnapshot()).screen).toBe('present-card');
    const reading = cardReadingActor(actor);
    expect(reading).toBe(actor);
    reading?.send({ type: 'READ_AGAIN' });
    await settle();
    expect(describeView(actor.getSnapshot()).screen).toBe('approved');
    expect(fake.comments().slice(before)).toEqual(['Parking Capture Less Than Auth']);
    actor.send({ type: 'DONE' });
    expect(fake.balanceProblems()).toEqual([]);
  });
});

describe('tap-and-go machine: an exit the machine cannot or need not charge', () => {
  it('states on the receipt of a paid exit the stay its fee was for (kiosk.md §3: the paid duration)', async () => {
    const fake = new FakeTerminal();
    const actor = await enteredAndStayed(fake, 100 * MIN);
    actor.send({ type: 'TAP_EXIT' });
    await settle();
    expect(fake.receipts.map((r) => r.lines)).toEqual([
      [
        { label: 'Parking', value: 'Tap-and-go' },
        { label: 'Stay', value: '100 min' },
      ],
    ]);
  });

  const hold: HoldRecord = {
    holdId: 'tx-auth-1',
    fingerprint: 'fp-1',
    maskedPan: '476173******0119',
    gatewayId: 'G-AUTH-1',
    transactionId: 'tx-auth-1',
    authorizedMinor: 2_000,
    currency: 'GBP',
    cardRef: 'card-entry',
    includeEmvTags: true,
    enteredAtMs: 0,
    expiresAtMs: 24 * 60 * MIN,
  };

  it("shows an exit already paid with the amount captured for the stay, and issues that capture's receipt", async () => {
    const fake = new FakeTerminal();
    const actor = gate(fake);
    const capturedAtMs = fake.clock.now() - 3 * MIN;
    fake.claimHold = () =>
      Promise.resolve({
        kind: 'captured',
        hold,
        capturedAtMs,
        capture: {
          transactionId: 'tx-capture-1',
          gatewayId: 'G-CAPTURE-1',
          service: 'capture',
          amountMinor: 600,
          currency: 'GBP',
          refundedMinor: 0,
          voided: false,
          voidPending: false,
          voidable: true,
          authorization: {
            gatewayId: hold.gatewayId,
            transactionId: hold.transactionId,
            authorizedMinor: 2_000,
          },
        },
      });
    actor.send({ type: 'TAP_EXIT' });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'approved',
      messageKey: 'tapAndGo.exitPaid',
      reason: 'ALREADY_PAID',
      amountMinor: 600,
      maskedPan: '476173******0119',
    });
    // The receipt of a paid exit, for the capture that paid it (nothing is charged again).
    expect(fake.receipts).toEqual([
      {
        service: 'capture',
        comments: 'Parking Capture Less Than Auth',
        amountMinor: 600,
        currency: 'GBP',
        maskedPan: '476173******0119',
        transactionId: 'tx-capture-1',
        gatewayId: 'G-CAPTURE-1',
        atMs: capturedAtMs,
        // The stay to the capture that paid it: the fee ran to the exit that made it, moments before.
        lines: [
          { label: 'Parking', value: 'Tap-and-go' },
          { label: 'Stay', value: `${Math.ceil((capturedAtMs - hold.enteredAtMs) / MIN)} min` },
        ],
      },
    ]);
    expect(fake.sent).toEqual([]);
  });

  it('never charges a stay paid by phone: a hold claimed so is released in full, and the exit opens as paid', async () => {
    const fake = new FakeTerminal();
    const entered = await enteredHold(fake);
    const actor = gate(fake);
    fake.clock.increment(100 * MIN);
    const before = fake.sent.length;
    fake.claimHold = () =>
      Promise.resolve({ kind: 'paid-by-link', hold: entered, claimed: true, amountMinor: 600 });
    actor.send({ type: 'TAP_EXIT' });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'approved',
      messageKey: 'tapAndGo.exitPaid',
      reason: 'PAID_BY_LINK',
      amountMinor: 600,
    });
    expect(fake.sent.slice(before).map((r) => [r.comments, r.amountMinor])).toEqual([['REVERSAL', 2_000]]);
    expect(fake.closedHolds.at(-1)).toEqual({ holdId: entered.holdId, resolution: 'reversed' });
    actor.send({ type: 'DONE' });
    expect(fake.balanceProblems()).toEqual([]);
  });

  it('opens as paid, sending nothing, a stay paid by phone whose hold someone else releases', async () => {
    const fake = new FakeTerminal();
    const actor = gate(fake);
    fake.claimHold = () => Promise.resolve({ kind: 'paid-by-link', hold, claimed: false, amountMinor: 600 });
    actor.send({ type: 'TAP_EXIT' });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'approved',
      messageKey: 'tapAndGo.exitPaid',
      reason: 'PAID_BY_LINK',
      amountMinor: 600,
      maskedPan: '476173******0119',
    });
    expect(fake.sent).toEqual([]);
    expect(fake.closedHolds).toEqual([]);
  });

  it('sends a card whose hold someone else is settling to the operator with a message of its own', async () => {
    const fake = new FakeTerminal();
    const actor = gate(fake);
    fake.claimHold = () => Promise.resolve({ kind: 'settling', holdId: hold.holdId });
    actor.send({ type: 'TAP_EXIT' });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'error',
      reason: 'HOLD_BEING_SETTLED',
      messageKey: 'tapAndGo.holdBeingSettled',
    });
    expect(fake.sent).toEqual([]);
  });

  it('tells a card whose payment by phone a restart left in doubt that it is being checked, charging nothing', async () => {
    const fake = new FakeTerminal();
    const actor = gate(fake);
    fake.claimHold = () =>
      Promise.resolve({ kind: 'settling', holdId: hold.holdId, phonePaymentInDoubt: 'PT1_GATE-L1' });
    actor.send({ type: 'TAP_EXIT' });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'error',
      reason: 'HOLD_BEING_SETTLED',
      messageKey: 'tapAndGo.phonePaymentBeingChecked',
    });
    expect(fake.sent).toEqual([]);
    expect(fake.closedHolds).toEqual([]);
  });
});

/**
 * The holds as the journal's store answers an exit (HoldStore.claimAtExit): a card whose last hold was captured, and
 * that has no open hold, is `captured` while the capture is no older than the `recentCaptureMs` the exit asks for.
 */
class CapturesRemembered extends FakeTerminal {
  private readonly captured = new Map<string, { hold: HoldRecord; atMs: number }>();

  override closeHold(input: { hold: HoldRecord; resolution: HoldResolution }): void {
    super.closeHold(input);
    if (input.resolution === 'captured')
      this.captured.set(input.hold.fingerprint, { hold: input.hold, atMs: this.clock.now() });
  }

  override claimHold(input: { fingerprint: string; recentCaptureMs: number }): Promise<HoldClaim> {
    const open = [...this.holds.values()].some((h) => h.fingerprint === input.fingerprint);
    const last = this.captured.get(input.fingerprint);
    if (open || last === undefined) return super.claimHold(input);
    return Promise.resolve(
      this.clock.now() - last.atMs <= input.recentCaptureMs
        ? { kind: 'captured', hold: last.hold, capturedAtMs: last.atMs }
        : { kind: 'none' },
    );
  }
}

describe('tap-and-go machine: a card whose exit was paid, tapped at the exit again', () => {
  /** Card fp-1 entered and left paid; card fp-2 entered since. The gate, idle again. */
  async function paidExitThenAnotherCardIn(fake: CapturesRemembered) {
    const actor = await enteredAndStayed(fake, 100 * MIN);
    actor.send({ type: 'TAP_EXIT' });
    await settle();
    expect(describeView(actor.getSnapshot()).screen).toBe('approved');
    actor.send({ type: 'DONE' });
    fake.card = { ...fake.card, fingerprint: 'fp-2', maskedPan: '555555******4444' };
    actor.send({ type: 'TAP_ENTRY' });
    await settle();
    actor.send({ type: 'DONE' });
    fake.card = { ...fake.card, fingerprint: 'fp-1', maskedPan: '411111******1111' };
    return actor;
  }

  it('opens again, charging nothing, while the driver may still be leaving (a restart kept the gate shut)', async () => {
    const fake = new CapturesRemembered();
    const actor = await paidExitThenAnotherCardIn(fake);
    fake.clock.increment(2 * MIN);
    const before = fake.sent.length;
    actor.send({ type: 'TAP_EXIT' });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'approved', reason: 'ALREADY_PAID' });
    expect(fake.sent.slice(before)).toEqual([]);
  });

  it('lets no other car out hours later: the stay of a car that entered with another card is not paid by it', async () => {
    const fake = new CapturesRemembered();
    const actor = await paidExitThenAnotherCardIn(fake);
    // The car that entered with fp-2 tries to leave three hours later with the card that paid its own exit before.
    fake.clock.increment(3 * 60 * MIN);
    actor.send({ type: 'TAP_EXIT' });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'declined', reason: 'NO_ENTRY' });
    // The other card's stay is still open: its own exit pays it.
    expect([...fake.holds.values()].map((h) => h.fingerprint)).toEqual(['fp-2']);
  });
});

describe('tap-and-go machine: a hold authorized in another currency than the configured one', () => {
  it('charges no fee priced in the configured currency: the hold is released in its own currency, for the operator', async () => {
    const fake = new FakeTerminal();
    // Entered while the terminal's currency was GBP; the configuration (and its tariff) says EUR at the exit.
    const hold = await enteredHold(fake);
    expect(hold.currency).toBe('GBP');
    const entrySent = fake.sent.length;
    const exit = createActor(provideFlowEffects.tapAndGo(fake), {
      input: { settings: testSettings({ currency: 'EUR' }), clock: fake.clock },
      clock: fake.clock,
    });
    exit.start();
    fake.clock.increment(3 * 60 * MIN);
    exit.send({ type: 'TAP_EXIT' });
    await settle();
    expect(
      fake.sent
        .slice(entrySent)
        .map((r) => ({ service: r.service, amountMinor: r.amountMinor, currency: r.currency, kind: r.kind })),
    ).toEqual([{ service: 'reversal', amountMinor: 2_000, currency: 'GBP', kind: 'approved' }]);
    expect(describeView(exit.getSnapshot())).toMatchObject({
      screen: 'error',
      reason: 'FEE_NOT_COMPUTABLE',
      messageKey: 'tapAndGo.holdBeingSettled',
    });
    expect(fake.closedHolds).toEqual([{ holdId: hold.holdId, resolution: 'reversed' }]);
    expect(fake.receipts).toEqual([]);
    // The fee the tariff asks for 3 hours, in the configured currency: uncollected, recorded for the operator.
    expect(fake.unpricedFees).toEqual([{ holdId: hold.holdId, feeMinor: 900, feeCurrency: 'EUR' }]);
    expect(fake.violations).toEqual([]);
  });
});

describe('tap-and-go machine: one stay per card (anti-passback)', () => {
  /** A gate of `fake` with `overrides` of the test settings. */
  function gateWith(fake: FakeTerminal, overrides: Parameters<typeof testSettings>[0]) {
    const actor = createActor(provideFlowEffects.tapAndGo(fake), {
      input: { settings: testSettings(overrides), clock: fake.clock },
      clock: fake.clock,
    });
    actor.start();
    return actor;
  }

  it('refuses a second entry of a card whose stay is open: only the AVR is sent, no hold, the gate stays shut', async () => {
    const fake = new FakeTerminal();
    const actor = await enteredAndStayed(fake, 30 * MIN);
    const [first] = [...fake.holds.values()];
    if (first === undefined) throw new Error('no hold');
    const entrySent = fake.sent.length;
    actor.send({ type: 'TAP_ENTRY' });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'declined',
      reason: 'CARD_ALREADY_INSIDE',
      messageKey: 'tapAndGo.cardInside',
    });
    // The zero-amount verification read the card; nothing after it: no pre-authorization, no second hold.
    expect(fake.sent.slice(entrySent).map((r) => [r.service, r.amountMinor])).toEqual([['avr', 0]]);
    expect([...fake.holds.keys()]).toEqual([first.holdId]);
    expect(fake.refusedEntries).toEqual([
      { reason: 'CARD_ALREADY_INSIDE', holdId: first.holdId, transactionId: fake.sent.at(-1)?.transactionId },
    ]);
    // The first car's hold is untouched; the second card read is released once the screen goes.
    expect(fake.closedHolds).toEqual([]);
    actor.send({ type: 'DONE' });
    expect(describeView(actor.getSnapshot()).screen).toBe('idle');
    expect(fake.balanceProblems()).toEqual([]);
  });

  it('places no hold on a card other than the one verified: a card inside cannot slip in at the second read', async () => {
    const fake = new FakeTerminal();
    const actor = await enteredAndStayed(fake, 30 * MIN);
    const entrySent = fake.sent.length;
    // The AVR reads another card (not inside); the pre-authorization's read, the card inside.
    const reads = ['fp-2', 'fp-1'];
    const read = fake.readCard.bind(fake);
    fake.readCard = async (input, signal) => ({
      ...(await read(input, signal)),
      fingerprint: reads.shift() ?? 'fp-1',
    });
    actor.send({ type: 'TAP_ENTRY' });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'declined',
      reason: 'CARD_CHANGED',
      messageKey: 'tapAndGo.sameCard',
    });
    expect(fake.sent.slice(entrySent).map((r) => r.service)).toEqual(['avr']);
    expect(fake.holds.size).toBe(1);
    actor.send({ type: 'DONE' });
    // Both reads of the refused entry are released.
    expect(fake.balanceProblems()).toEqual([]);
  });

  it('lets the card enter again once its stay is closed by its exit', async () => {
    const fake = new FakeTerminal();
    const actor = await enteredAndStayed(fake, 100 * MIN);
    actor.send({ type: 'TAP_EXIT' });
    await settle();
    expect(describeView(actor.getSnapshot()).screen).toBe('approved');
    actor.send({ type: 'DONE' });
    actor.send({ type: 'TAP_ENTRY' });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'session', reason: 'APPROVED' });
    expect(fake.holds.size).toBe(1);
    expect(fake.refusedEntries).toEqual([]);
  });

  it('lets a card in whose open hold someone else is settling (the expiry watch, an unresolved reversal)', async () => {
    const fake = new FakeTerminal();
    await enteredHold(fake);
    fake.stayAtEntry = () => Promise.resolve({ kind: 'settling', holdId: 'held-by-the-watch' });
    const actor = gate(fake);
    actor.send({ type: 'TAP_ENTRY' });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'session', reason: 'APPROVED' });
    expect(fake.refusedEntries).toEqual([]);
  });

  it('with tapAndGoOneStayPerCard off, a card enters again as before: no lookup, a second hold', async () => {
    const fake = new FakeTerminal();
    await enteredHold(fake);
    fake.stayAtEntry = () => Promise.reject(new Error('the entry must not look the card up'));
    const actor = gateWith(fake, { tapAndGoOneStayPerCard: false });
    actor.send({ type: 'TAP_ENTRY' });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'session', reason: 'APPROVED' });
    expect(fake.sent.map((r) => r.service)).toEqual(['avr', 'preauth', 'avr', 'preauth']);
    expect(fake.holds.size).toBe(2);
  });

  it('opens no gate and places no hold when the card cannot be looked up', async () => {
    const fake = new FakeTerminal();
    fake.stayAtEntry = () => Promise.reject(new Error('the journal is closed'));
    const actor = gate(fake);
    actor.send({ type: 'TAP_ENTRY' });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'error',
      reason: 'HOLD_LOOKUP_FAILED',
      messageKey: 'tapAndGo.entryLookupFailed',
    });
    expect(fake.sent.map((r) => r.service)).toEqual(['avr']);
    expect(fake.holds.size).toBe(0);
  });
});

describe('tap-and-go machine: a hold the host cannot store at entry', () => {
  it('releases the authorization with a releasing reversal: a refusal for now becomes the host’s follow-up', async () => {
    const fake = new FakeTerminal();
    fake.openHold = () => Promise.reject(new Error('the journal refused the hold'));
    const actor = gate(fake);
    actor.send({ type: 'TAP_ENTRY' });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'error' });
    const reversals = fake.sent.filter((r) => r.service === 'reversal');
    expect(reversals.map((r) => ({ amountMinor: r.amountMinor, releases: r.releases }))).toEqual([
      { amountMinor: 2_000, releases: true },
    ]);
  });
});

describe('hold expiry machine', () => {
  it('reverses a hold that never exits once the maximum stay has passed', async () => {
    const fake = new FakeTerminal();
    const hold = await enteredHold(fake);
    const expiry = createActor(provideFlowEffects.holdExpiry(fake), {
      input: { settings: testSettings(), clock: fake.clock, hold },
      clock: fake.clock,
    });
    expiry.start();
    fake.clock.increment(24 * 60 * MIN - 1);
    await settle();
    expect(fake.sent).toHaveLength(2);
    fake.clock.increment(1);
    await settle();
    expect(fake.sent.at(-1)).toMatchObject({ comments: 'REVERSAL', amountMinor: 2_000 });
    expect(expiry.getSnapshot().output).toMatchObject({ holdId: hold.holdId, outcome: 'reversed' });
  });
});

describe('hold expiry machine: a hold authorized in another currency than the configured one', () => {
  it('reverses it in its own currency', async () => {
    const fake = new FakeTerminal();
    const hold = await enteredHold(fake);
    expect(hold.currency).toBe('GBP');
    const expiry = createActor(provideFlowEffects.holdExpiry(fake), {
      input: { settings: testSettings({ currency: 'EUR' }), clock: fake.clock, hold },
      clock: fake.clock,
    });
    expiry.start();
    fake.clock.increment(24 * 60 * MIN);
    await settle();
    expect(fake.sent.at(-1)).toMatchObject({ service: 'reversal', amountMinor: 2_000, currency: 'GBP' });
    expect(expiry.getSnapshot().output).toMatchObject({ holdId: hold.holdId, outcome: 'reversed' });
  });
});

describe('hold expiry machine: a reversal whose outcome stays unknown', () => {
  it('sends no second reversal: the first is left to recovery, and the hold handed back as unknown', async () => {
    const fake = new FakeTerminal();
    const hold = await enteredHold(fake);
    fake.script('reversal', 'unknown', 'unknown', 'unknown');
    fake.script('timeout-reversal', ...Array.from({ length: 20 }, () => 'unknown' as const));
    const expiry = await expireHold(fake, hold, 40);
    // A second REVERSAL before the first is resolved would be a resend without a resolution (DESIGN.md rule 2).
    expect(fake.sent.filter((r) => r.service === 'reversal').map((r) => r.kind)).toEqual(['unknown']);
    expect(expiry.getSnapshot().output).toMatchObject({ outcome: 'failed', lastKind: 'unknown' });
  });
});

describe('hold expiry machine: a reversal refused because nothing is held any more', () => {
  it.each(['AUTH_ALREADY_REVERSED', 'TRANSACTION_ALREADY_REVERSED_OR_SETTLED'])(
    'ends released after one reversal refused %s: no second reversal, nothing for the operator',
    async (reason) => {
      const fake = new FakeTerminal();
      const hold = await enteredHold(fake);
      const submit = fake.submit.bind(fake);
      const reversals: string[] = [];
      fake.submit = (request, signal) => {
        if (request.service !== 'reversal') return submit(request, signal);
        reversals.push(request.original?.transactionId ?? '');
        return Promise.resolve({ kind: 'rejected', transactionId: `R${reversals.length}`, reason });
      };
      const expiry = await expireHold(fake, hold, 10);
      expect(reversals).toEqual([hold.transactionId]);
      expect(expiry.getSnapshot().output).toMatchObject({ holdId: hold.holdId, outcome: 'released', reason });
    },
  );
});

describe('hold expiry machine: a reversal refused because the processor is unavailable', () => {
  it('ends `later` after that one reversal, whatever the attempts left: the host tries again after a wait', async () => {
    const fake = new FakeTerminal();
    const hold = await enteredHold(fake);
    const submit = fake.submit.bind(fake);
    let reversals = 0;
    fake.submit = (request, signal) => {
      if (request.service !== 'reversal') return submit(request, signal);
      reversals += 1;
      return Promise.resolve({
        kind: 'rejected',
        transactionId: `R${reversals}`,
        reason: 'PROCESSOR_UNAVAILABLE',
      });
    };
    const expiry = await expireHold(fake, hold, 10);
    expect({ reversals, output: expiry.getSnapshot().output }).toEqual({
      reversals: 1,
      output: {
        holdId: hold.holdId,
        outcome: 'later',
        transactionId: 'R1',
        lastKind: 'rejected',
        reason: 'PROCESSOR_UNAVAILABLE',
      },
    });
  });
});

describe('hold expiry machine: reversals of the hold refused before', () => {
  it('counts them against its attempts: after a refusal in an earlier run, two more at most', async () => {
    const fake = new FakeTerminal();
    const hold = await enteredHold(fake);
    fake.script('reversal', 'declined', 'declined', 'declined', 'declined');
    const expiry = await expireHold(fake, hold, 10, { refusedBefore: 1 });
    expect(testSettings().timing.maxResolutionAttempts).toBe(3);
    expect(fake.sent.filter((r) => r.service === 'reversal')).toHaveLength(2);
    expect(expiry.getSnapshot().output).toMatchObject({ outcome: 'failed', lastKind: 'declined' });
  });
});

describe('operator machine', () => {
  async function operate(fake: FakeTerminal, transactionId: string, amountMinor?: number) {
    const actor = createActor(provideFlowEffects.operator(fake), {
      input: {
        settings: testSettings(),
        clock: fake.clock,
        command: { type: 'refund', transactionId, ...(amountMinor !== undefined ? { amountMinor } : {}) },
      },
      clock: fake.clock,
    });
    actor.start();
    await settle();
    return actor.getSnapshot().output;
  }

  it('refuses a refund above what is left of the sale, and an unknown transaction', async () => {
    const fake = new FakeTerminal();
    const sale = await fake.submit(
      {
        service: 'sale',
        comments: 'Parking Sale',
        amountMinor: 500,
        currency: 'GBP',
        catLevel: 2,
        cardRef: 'c',
        includeEmvTags: false,
      },
      new AbortController().signal,
    );
    expect(await operate(fake, sale.transactionId, 501)).toMatchObject({
      outcome: 'not-allowed',
      code: 'REFUND_EXCEEDS_CAPTURED',
    });
    expect(await operate(fake, 'nope')).toMatchObject({ outcome: 'not-found' });
    expect(fake.sent).toHaveLength(1);
  });
});

/** A gate whose card's last stay outlasted its hold (released at the maximum stay): its exit finds it `outstayed`. */
class StayOutstayed extends FakeTerminal {
  outstayed: HoldRecord | undefined;

  override claimHold(input: { fingerprint: string; recentCaptureMs: number }): Promise<HoldClaim> {
    if (this.outstayed?.fingerprint === input.fingerprint)
      return Promise.resolve({ kind: 'outstayed', hold: this.outstayed });
    return super.claimHold(input);
  }
}

describe('tap-and-go: the exit of a stay that outlasted its hold', () => {
  async function outstayed(fake: StayOutstayed, over: Partial<HoldRecord> = {}) {
    const hold = await enteredHold(fake);
    // Its expiry watch released it at the maximum stay; the car is still inside, 25 hours after its entry.
    fake.holds.delete(hold.holdId);
    fake.outstayed = { ...hold, ...over };
    fake.clock.increment(25 * 60 * MIN);
    const actor = gate(fake);
    actor.send({ type: 'TAP_EXIT' });
    await settle();
    return { actor, hold: fake.outstayed };
  }

  it('charges the fee of the whole stay by a sale on the card presented, naming the stay, and tells the operator', async () => {
    const fake = new StayOutstayed();
    const { actor, hold } = await outstayed(fake);
    const sale = fake.sent.at(-1);
    expect(sale).toMatchObject({
      service: 'sale',
      comments: 'Parking Sale',
      ticket: hold.holdId,
      kind: 'approved',
    });
    expect(sale?.amountMinor).toBeGreaterThan(0);
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'approved', reason: 'OVERSTAY_SALE' });
    expect(fake.outstayedStays).toEqual([
      { hold, feeMinor: sale?.amountMinor, sold: true, transactionId: sale?.transactionId },
    ]);
    // No follow-on of the released hold is sent.
    expect(fake.sent.filter((r) => r.original?.transactionId === hold.transactionId)).toEqual([]);
    // The card reads of the exit and of its sale are wiped once the gate is idle again (no hold keeps them).
    actor.send({ type: 'DONE' });
    await settle();
    const exitReads = fake.issuedCards.slice(-2);
    expect(exitReads.filter((ref) => !fake.released.has(ref))).toEqual([]);
  });

  it('keeps the gate shut when the sale is declined, and tells the operator', async () => {
    const fake = new StayOutstayed();
    fake.outcomes.sale = ['declined'];
    const { actor, hold } = await outstayed(fake);
    expect(describeView(actor.getSnapshot())).toMatchObject({ screen: 'declined' });
    expect(fake.outstayedStays).toMatchObject([{ hold, sold: false, reason: 'GENERAL_DECLINE' }]);
  });

  it('charges nothing for a stay held in another currency than the tariff’s: the fee is the operator’s', async () => {
    const fake = new StayOutstayed();
    const { actor, hold } = await outstayed(fake, { currency: 'EUR' });
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'error',
      reason: 'FEE_NOT_COMPUTABLE',
    });
    expect(fake.sent.filter((r) => r.service === 'sale')).toEqual([]);
    expect(fake.unpricedFees.map((f) => f.holdId)).toEqual([hold.holdId]);
  });
});
