import { describe, expect, it } from 'vitest';
import { createActor, type AnyActorRef, type AnyMachineSnapshot } from 'xstate';
import { provideFlowEffects } from './provide.js';
import { FakeTerminal, settle, testSettings } from './testing/fake-terminal.js';
import type { FlowSettings } from './settings.js';
import type { OperatorCommand } from './operator.js';
import { describeView } from './view.js';

/** One test per row of spec 001's comments table, each driving the model that emits the value. */

const MIN = 60_000;

function model(
  kind: 'meter' | 'kiosk' | 'attended' | 'tapAndGo',
  fake: FakeTerminal,
  settings: FlowSettings = testSettings(),
): AnyActorRef {
  const machine = provideFlowEffects[kind](fake);
  const actor = createActor(machine, {
    input: { settings, clock: fake.clock },
    clock: fake.clock,
  }) as AnyActorRef;
  actor.start();
  return actor;
}

async function meterSession(fake: FakeTerminal, settings?: FlowSettings): Promise<AnyActorRef> {
  const actor = model('meter', fake, settings);
  actor.send({ type: 'START' });
  actor.send({ type: 'CHOOSE_DURATION', minutes: 60 });
  actor.send({ type: 'CONFIRM' });
  await settle();
  return actor;
}

async function kioskSale(fake: FakeTerminal): Promise<AnyActorRef> {
  fake.tickets.set('T100', fake.clock.now());
  fake.clock.increment(95 * MIN);
  const actor = model('kiosk', fake);
  actor.send({ type: 'START' });
  actor.send({ type: 'ENTER_TICKET', ticket: 'T100' });
  await settle();
  actor.send({ type: 'CONFIRM' });
  await settle();
  return actor;
}

async function attended(fake: FakeTerminal, credit = false): Promise<AnyActorRef> {
  const actor = model('attended', fake, testSettings({ catLevel: 6 }));
  actor.send({ type: credit ? 'CREDIT' : 'START' });
  actor.send({ type: 'ENTER_AMOUNT', minor: 1_250 });
  actor.send({ type: 'CONFIRM' });
  await settle();
  return actor;
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

function txnOf(fake: FakeTerminal, comments: string): string {
  const found = fake.sent.find((r) => r.comments === comments);
  if (found === undefined) throw new Error(`no ${comments} sent`);
  return found.transactionId;
}

describe('spec 001 comments values, each emitted by a model', () => {
  it('Parking AVR: tap-and-go entry verifies the account with a zero amount', async () => {
    const fake = new FakeTerminal();
    const actor = model('tapAndGo', fake);
    actor.send({ type: 'TAP_ENTRY' });
    await settle();
    expect(fake.sent[0]).toMatchObject({ service: 'avr', comments: 'Parking AVR', amountMinor: 0 });
  });

  it('Parking Auth: the meter pre-authorizes the chosen stay (required-field list spelling)', async () => {
    const fake = new FakeTerminal();
    await meterSession(fake);
    expect(fake.sent[0]).toMatchObject({ service: 'preauth', comments: 'Parking Auth' });
  });

  it('Parking Authorization: the comments-table spelling when configured', async () => {
    const fake = new FakeTerminal();
    await meterSession(fake, testSettings({ preauthComments: 'Parking Authorization' }));
    expect(fake.sent[0]).toMatchObject({ comments: 'Parking Authorization' });
  });

  it('Parking Incremental Auth: the meter extends a session (fixed-time market: the chosen duration is held)', async () => {
    const fake = new FakeTerminal();
    const settings = testSettings();
    const actor = await meterSession(fake, {
      ...settings,
      tariff: { ...settings.tariff, meterAuthorization: 'chosen' },
    });
    actor.send({ type: 'EXTEND', minutes: 30 });
    await settle();
    expect(fake.sent[1]).toMatchObject({ comments: 'Parking Incremental Auth', amountMinor: 150 });
  });

  it('REVERSAL: the meter reverses the authorized amount when nothing is owed', async () => {
    const fake = new FakeTerminal();
    const actor = await meterSession(fake);
    actor.send({ type: 'END_SESSION' });
    await settle();
    // The price of the maximum stay (240 minutes) was held: the authorized amount is reversed (spec 001).
    expect(fake.sent[1]).toMatchObject({ comments: 'REVERSAL', amountMinor: 1_200 });
  });

  it('REVERSAL Timeout: the meter resolves an unanswered pre-authorization by its transactionId', async () => {
    const fake = new FakeTerminal().script('preauth', 'unknown');
    await meterSession(fake);
    fake.clock.increment(60_000);
    await settle();
    expect(fake.sent[1]).toMatchObject({
      comments: 'REVERSAL Timeout',
      original: { transactionId: fake.sent[0]?.transactionId },
    });
  });

  it('Parking Capture: tap-and-go captures the fee at the exit', async () => {
    const fake = new FakeTerminal();
    const actor = model('tapAndGo', fake);
    actor.send({ type: 'TAP_ENTRY' });
    await settle();
    actor.send({ type: 'DONE' });
    fake.clock.increment(3 * 24 * 60 * MIN);
    actor.send({ type: 'TAP_EXIT' });
    await settle();
    // 3 days at the 2 000 daily cap: 6 000 > hold 2 000 → incremental of 4 000, then capture of the full total.
    expect(fake.sent.at(-1)).toMatchObject({ comments: 'Parking Capture', amountMinor: 6_000 });
  });

  it('Parking Capture Less Than Auth: the meter captures a shorter stay', async () => {
    const fake = new FakeTerminal();
    const actor = await meterSession(fake);
    fake.clock.increment(25 * MIN);
    actor.send({ type: 'END_SESSION' });
    await settle();
    expect(fake.sent[1]).toMatchObject({ comments: 'Parking Capture Less Than Auth', amountMinor: 150 });
  });

  it('Parking Sale: the kiosk sells the fee with catLevel 2', async () => {
    const fake = new FakeTerminal();
    await kioskSale(fake);
    expect(fake.sent[0]).toMatchObject({ comments: 'Parking Sale', catLevel: 2, amountMinor: 600 });
  });

  it('REFUND Capture: operator mode refunds a meter capture', async () => {
    const fake = new FakeTerminal();
    const actor = await meterSession(fake);
    fake.clock.increment(45 * MIN);
    actor.send({ type: 'END_SESSION' });
    await settle();
    const result = await operator(fake, {
      type: 'refund',
      transactionId: txnOf(fake, 'Parking Capture Less Than Auth'),
      amountMinor: 100,
    });
    expect(result).toMatchObject({ outcome: 'approved', service: 'refund-capture' });
    expect(fake.sent.at(-1)).toMatchObject({ comments: 'REFUND Capture', amountMinor: 100 });
  });

  it('REFUND Payment: operator mode refunds a kiosk sale', async () => {
    const fake = new FakeTerminal();
    await kioskSale(fake);
    const result = await operator(fake, { type: 'refund', transactionId: txnOf(fake, 'Parking Sale') });
    expect(result).toMatchObject({ outcome: 'approved' });
    expect(fake.sent.at(-1)).toMatchObject({ comments: 'REFUND Payment', amountMinor: 600 });
  });

  it('Parking Standalone Credit: the attended terminal credits a card with no prior transaction', async () => {
    const fake = new FakeTerminal();
    await attended(fake, true);
    expect(fake.sent[0]).toMatchObject({
      service: 'credit',
      comments: 'Parking Standalone Credit',
      catLevel: 6,
    });
    expect(fake.sent[0]?.original).toBeUndefined();
  });

  it('VOID Capture: operator mode voids a capture and then releases its hold', async () => {
    const fake = new FakeTerminal();
    const actor = await meterSession(fake);
    fake.clock.increment(45 * MIN);
    actor.send({ type: 'END_SESSION' });
    await settle();
    actor.send({ type: 'DONE' });
    await operator(fake, { type: 'void', transactionId: txnOf(fake, 'Parking Capture Less Than Auth') });
    expect(fake.comments().slice(-2)).toEqual(['VOID Capture', 'REVERSAL']);
    expect(fake.balanceProblems()).toEqual([]);
  });

  it('VOID Payment: operator mode voids a kiosk sale before the cut-off', async () => {
    const fake = new FakeTerminal();
    await kioskSale(fake);
    await operator(fake, { type: 'void', transactionId: txnOf(fake, 'Parking Sale') });
    expect(fake.sent.at(-1)).toMatchObject({ comments: 'VOID Payment' });
    expect(fake.netChargedMinor()).toBe(0);
  });

  it('VOID Refund: operator mode voids a refund', async () => {
    const fake = new FakeTerminal();
    await kioskSale(fake);
    await operator(fake, { type: 'refund', transactionId: txnOf(fake, 'Parking Sale'), amountMinor: 100 });
    await operator(fake, { type: 'void', transactionId: txnOf(fake, 'REFUND Payment') });
    expect(fake.sent.at(-1)).toMatchObject({ comments: 'VOID Refund' });
    expect(fake.netChargedMinor()).toBe(600);
  });

  it('VOID Credit: operator mode voids a standalone credit', async () => {
    const fake = new FakeTerminal();
    await attended(fake, true);
    await operator(fake, { type: 'void', transactionId: txnOf(fake, 'Parking Standalone Credit') });
    expect(fake.sent.at(-1)).toMatchObject({ comments: 'VOID Credit' });
  });

  it('VOID Timeout: the kiosk resolves an unanswered sale by its transactionId', async () => {
    const fake = new FakeTerminal().script('sale', 'unknown');
    const actor = await kioskSale(fake);
    expect(fake.sent[1]).toMatchObject({
      comments: 'VOID Timeout',
      original: { transactionId: fake.sent[0]?.transactionId },
    });
    expect(describeView(actor.getSnapshot() as AnyMachineSnapshot)).toMatchObject({
      screen: 'error',
      reason: 'TIMEOUT_RESOLVED',
    });
  });
});

describe('operator mode: a refund or void whose answer was lost', () => {
  it('says its outcome is being finished, not that it was not completed: recovery finishes a void', async () => {
    const fake = new FakeTerminal();
    await kioskSale(fake);
    fake.script('void-payment', 'unknown');
    const result = await operator(fake, { type: 'void', transactionId: txnOf(fake, 'Parking Sale') });
    expect(result).toMatchObject({ outcome: 'unknown', code: 'UNKNOWN' });
    expect(result?.message).toBe(
      'The answer to the void was lost: the terminal finishes it; see the transaction list',
    );
  });

  it('says a refund undone by its timeout void was not completed', async () => {
    const fake = new FakeTerminal();
    await kioskSale(fake);
    fake.script('refund-payment', 'unknown');
    const result = await operator(fake, {
      type: 'refund',
      transactionId: txnOf(fake, 'Parking Sale'),
      amountMinor: 100,
    });
    expect(result).toMatchObject({ outcome: 'cancelled', code: 'TIMEOUT_RESOLVED' });
    expect(result?.message).toBe(
      'The answer to the refund was lost and the terminal cancelled it: nothing was refunded; refund again',
    );
    expect(fake.comments().slice(-2)).toEqual(['REFUND Payment', 'VOID Timeout']);
  });
});
