import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { provideFlowEffects } from './provide.js';
import { FakeTerminal, settle, testSettings } from './testing/fake-terminal.js';
import { describeView } from './view.js';

const MIN = 60_000;
const BANK = { profile: 1, label: 'Bank transfer', fields: ['email', 'firstName', 'lastName'] as const };
const NL = {
  profile: 3,
  label: 'iBank',
  fields: ['email', 'firstName', 'lastName', 'address1', 'phoneNumber'] as const,
};

async function atConfirm(fake: FakeTerminal, offered = true) {
  fake.tickets.set('T-1', fake.clock.now() - 100 * MIN);
  const actor = createActor(provideFlowEffects.kiosk(fake), {
    input: { settings: testSettings(offered ? { altMethods: [BANK, NL] } : {}), clock: fake.clock },
    clock: fake.clock,
  });
  actor.start();
  actor.send({ type: 'START' });
  actor.send({ type: 'ENTER_TICKET', ticket: 'T-1' });
  await settle();
  return actor;
}

describe('alternative methods at the pay station', () => {
  it('offers each configured method beside the card, by its label', async () => {
    const off = await atConfirm(new FakeTerminal(), false);
    expect(describeView(off.getSnapshot()).actions).not.toContain('ALT_METHOD');
    expect(describeView(off.getSnapshot()).altMethods).toBeUndefined();
    const on = await atConfirm(new FakeTerminal());
    const view = describeView(on.getSnapshot());
    expect(view.actions).toEqual(expect.arrayContaining(['CONFIRM', 'ALT_METHOD', 'CANCEL']));
    expect(view.altMethods).toEqual([
      { profile: 1, label: 'Bank transfer' },
      { profile: 3, label: 'iBank' },
    ]);
  });

  it('refuses a method that is not configured', async () => {
    const actor = await atConfirm(new FakeTerminal());
    actor.send({ type: 'ALT_METHOD', profile: 5 });
    expect(describeView(actor.getSnapshot()).screen).toBe('confirm');
  });

  it('asks for each field, refuses an invalid value with its problem, then leaves the sale pending', async () => {
    const fake = new FakeTerminal();
    const actor = await atConfirm(fake);
    const fee = describeView(actor.getSnapshot()).amountMinor;
    actor.send({ type: 'ALT_METHOD', profile: 1 });
    let view = describeView(actor.getSnapshot());
    expect(view).toMatchObject({
      screen: 'alt-details',
      messageKey: 'alt.field.email',
      altField: { label: 'Bank transfer', field: 'email', step: 1, steps: 3 },
    });
    expect(view.actions).toEqual(expect.arrayContaining(['ALT_FIELD', 'CANCEL']));
    actor.send({ type: 'ALT_FIELD', value: 'not an address' });
    view = describeView(actor.getSnapshot());
    expect(view).toMatchObject({
      messageKey: 'alt.field.email',
      altField: { field: 'email', problem: 'not-an-email' },
    });
    actor.send({ type: 'ALT_FIELD', value: ' driver@example.com ' });
    expect(describeView(actor.getSnapshot()).altField).toEqual({
      label: 'Bank transfer',
      field: 'firstName',
      step: 2,
      steps: 3,
    });
    // A card number typed into a name never travels.
    actor.send({ type: 'ALT_FIELD', value: '4111 1111 1111 1111' });
    expect(describeView(actor.getSnapshot()).altField?.problem).toBe('not-a-name');
    actor.send({ type: 'ALT_FIELD', value: 'Alex' });
    actor.send({ type: 'ALT_FIELD', value: '' });
    expect(describeView(actor.getSnapshot()).altField).toMatchObject({
      field: 'lastName',
      problem: 'required',
    });
    expect(fake.altSales).toHaveLength(0);
    actor.send({ type: 'ALT_FIELD', value: "O'Driver" });
    await settle();
    expect(fake.altSales).toEqual([
      {
        profile: 1,
        reference: 'T-1',
        amountMinor: fee,
        currency: 'GBP',
        customer: { email: 'driver@example.com', firstName: 'Alex', lastName: "O'Driver" },
      },
    ]);
    view = describeView(actor.getSnapshot());
    expect(view).toMatchObject({
      screen: 'alt-pending',
      reason: 'PAYMENT_PENDING',
      messageKey: 'alt.pending',
      messageParams: { method: 'Bank transfer' },
      altSale: {
        saleId: 1,
        label: 'Bank transfer',
        paymentUrl: 'https://pay.example/ap/1',
        reference: 'T-1',
      },
    });
    expect(view.actions).toContain('DONE');
    // The customer's details are not kept once the sale is sent.
    expect((actor.getSnapshot().context as { altEntry?: unknown }).altEntry).toBeUndefined();
    actor.send({ type: 'DONE' });
    expect(describeView(actor.getSnapshot()).screen).toBe('idle');
  });

  it('numbers each value refused, so that the same problem again is a new event; the same state again is not', async () => {
    const actor = await atConfirm(new FakeTerminal());
    actor.send({ type: 'ALT_METHOD', profile: 1 });
    expect(describeView(actor.getSnapshot()).altField?.problemEvent).toBeUndefined();
    actor.send({ type: 'ALT_FIELD', value: 'not an address' });
    const first = describeView(actor.getSnapshot());
    expect(first.altField).toMatchObject({ field: 'email', problem: 'not-an-email', problemEvent: 1 });
    // The same state described again (a refreshed snapshot): the same event.
    expect(describeView(actor.getSnapshot())).toEqual(first);
    // The same wrong value typed again: refused again in the same words, as a new event.
    actor.send({ type: 'ALT_FIELD', value: 'not an address' });
    expect(describeView(actor.getSnapshot())).toEqual({
      ...first,
      altField: { ...first.altField, problemEvent: 2 },
    });
    // The next field asks afresh: no problem, no event; its own refusal is a new one.
    actor.send({ type: 'ALT_FIELD', value: 'driver@example.com' });
    expect(describeView(actor.getSnapshot()).altField).toEqual({
      label: 'Bank transfer',
      field: 'firstName',
      step: 2,
      steps: 3,
    });
    actor.send({ type: 'ALT_FIELD', value: '' });
    expect(describeView(actor.getSnapshot()).altField).toMatchObject({
      problem: 'required',
      problemEvent: 3,
    });
  });

  it('asks profile 3 for the address and the phone number too', async () => {
    const fake = new FakeTerminal();
    const actor = await atConfirm(fake);
    actor.send({ type: 'ALT_METHOD', profile: 3 });
    for (const value of ['a@b.nl', 'Anna', 'de Vries', 'Stationsplein 1'])
      actor.send({ type: 'ALT_FIELD', value });
    expect(describeView(actor.getSnapshot()).altField).toMatchObject({
      field: 'phoneNumber',
      step: 5,
      steps: 5,
    });
    actor.send({ type: 'ALT_FIELD', value: 'call me' });
    expect(describeView(actor.getSnapshot()).altField?.problem).toBe('not-a-phone-number');
    actor.send({ type: 'ALT_FIELD', value: '+31 20 555 0100' });
    await settle();
    expect(fake.altSales[0]?.customer).toMatchObject({
      address1: 'Stationsplein 1',
      phoneNumber: '+31 20 555 0100',
    });
    expect(describeView(actor.getSnapshot()).screen).toBe('alt-pending');
  });

  it('goes back to the choice and forgets the details on Cancel', async () => {
    const fake = new FakeTerminal();
    const actor = await atConfirm(fake);
    actor.send({ type: 'ALT_METHOD', profile: 1 });
    actor.send({ type: 'ALT_FIELD', value: 'driver@example.com' });
    actor.send({ type: 'CANCEL' });
    const view = describeView(actor.getSnapshot());
    expect(view).toMatchObject({ screen: 'confirm', messageKey: 'kiosk.parkingFee' });
    expect((actor.getSnapshot().context as { altEntry?: unknown }).altEntry).toBeUndefined();
    expect(fake.altSales).toHaveLength(0);
  });

  it('returns to the choice with the reason when the sale is not pending', async () => {
    const fake = new FakeTerminal();
    fake.altAnswers.push('FAILED');
    const actor = await atConfirm(fake);
    actor.send({ type: 'ALT_METHOD', profile: 1 });
    for (const value of ['a@b.es', 'Ana', 'Ruiz']) actor.send({ type: 'ALT_FIELD', value });
    await settle();
    expect(describeView(actor.getSnapshot())).toMatchObject({
      screen: 'confirm',
      messageKey: 'alt.failed',
      reason: 'FAILED',
    });
    expect(describeView(actor.getSnapshot()).actions).toContain('CONFIRM');
  });

  it('leaves the pending screen by itself after a while', async () => {
    const fake = new FakeTerminal();
    const actor = await atConfirm(fake);
    actor.send({ type: 'ALT_METHOD', profile: 1 });
    for (const value of ['a@b.es', 'Ana', 'Ruiz']) actor.send({ type: 'ALT_FIELD', value });
    await settle();
    expect(describeView(actor.getSnapshot()).screen).toBe('alt-pending');
    fake.clock.increment(10 * MIN);
    expect(describeView(actor.getSnapshot()).screen).toBe('idle');
  });
});
