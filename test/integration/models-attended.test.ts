import { afterAll, describe, expect, it } from 'vitest';
import { attendedMachine } from '../../src/flows/attended.js';
import {
  APPROVING_CARDS,
  CLEAN_VERDICT,
  chargedByModel,
  finishScreens,
  ledgerVerdict,
  modelConfig,
  modelPaths,
  pathName,
  replayPath,
  settingsOf,
  startModelHost,
  type ModelEvent,
  type ModelHost,
  type ReplayStep,
} from './models-harness.js';

/**
 * Attended mobile (spec 001: sale with catLevel 6, standalone credit): every shortest path of the attended machine
 * over the attendant's events, with amounts the sandbox approves (12.50), declines (12.02: INSUFFICIENT_FUND) and
 * approves in part (12.21: the sale is voided), replayed on a real host against the embedded sandbox.
 */

const config = modelConfig('attended');

const USER_EVENTS: ModelEvent[] = [
  { type: 'START' },
  // The PIN of the host the path is replayed on is put in by `withOperatorPin`.
  { type: 'CREDIT', pin: '' },
  { type: 'ENTER_AMOUNT', minor: 1_250 },
  { type: 'ENTER_AMOUNT', minor: 1_202 },
  { type: 'ENTER_AMOUNT', minor: 1_221 },
  { type: 'CONFIRM' },
  { type: 'CANCEL' },
  { type: 'DONE' },
];

/** A standalone credit needs the operator PIN: the host's, generated at its start. */
function withOperatorPin(m: ModelHost, step: ReplayStep): ModelEvent | undefined {
  return step.event.type === 'CREDIT'
    ? { type: 'CREDIT', pin: m.host.generatedOperatorPin ?? '' }
    : undefined;
}

const paths = modelPaths({
  machine: attendedMachine,
  settings: settingsOf(config),
  userEvents: USER_EVENTS,
  outcomes: { faultable: ['paying'] },
  distinguish: (c) => [c['reason'], c['mode'], c['amountMinor']],
});

describe('attended model: generated paths replayed against the sandbox', () => {
  const closing: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const close of closing) await close();
  });

  it('generates paths through every kind of transaction outcome', () => {
    const names = paths.map(pathName);
    for (const outcome of [
      'approved',
      'declined:INSUFFICIENT_FUND',
      'declined:PARTIAL_APPROVAL',
      'unknown',
      'card-error:CARD_NOT_SUPPORTED',
      'cancelled',
    ])
      expect(
        names.some((n) => n.includes(`> ${outcome}`)),
        outcome,
      ).toBe(true);
    expect(names.some((n) => n.startsWith('CREDIT'))).toBe(true);
  });

  paths.forEach((path, index) => {
    it(`replays ${pathName(path)}`, async () => {
      const m = await startModelHost(config);
      closing.push(m.close);
      await replayPath(m, path, {
        card: APPROVING_CARDS[index % APPROVING_CARDS.length]!,
        prepare: withOperatorPin,
      });
      const verdict = await ledgerVerdict(m, path, () => [], finishScreens);
      expect(verdict).toEqual(CLEAN_VERDICT(chargedByModel(path)));
      await m.close();
    });
  });
});

describe('attended: a standalone credit needs the operator PIN', () => {
  const closing: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const close of closing) await close();
  });

  it('refuses a credit without the right PIN, counting it towards the lockout operator mode shares', async () => {
    const m = await startModelHost(config);
    closing.push(m.close);
    const { host } = m;
    const pin = host.generatedOperatorPin ?? '';
    const wrong = pin === '000000' ? '111111' : '000000';
    expect(await host.send({ type: 'CREDIT', pin: wrong })).toMatchObject({
      ok: false,
      error: { code: 'OPERATOR_PIN' },
    });
    expect(await host.snapshot()).toMatchObject({ value: { customer: { screen: 'idle' } } });
    for (let i = 0; i < 3; i++) await host.send({ type: 'CREDIT', pin: wrong });
    // The fifth wrong PIN, in operator mode, locks both.
    const fifth = await host.operator({ pin: wrong, action: { type: 'status' } });
    expect(fifth).toMatchObject({ ok: false, error: { code: 'OPERATOR_PIN' } });
    const until = fifth.ok ? undefined : fifth.error.lockedUntil;
    expect(until).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(await host.send({ type: 'CREDIT', pin })).toMatchObject({
      ok: false,
      error: { code: 'OPERATOR_LOCKED', lockedUntil: until },
    });
    const audit = await host.operator({ pin, action: { type: 'audit' } });
    expect(audit).toMatchObject({ ok: false, error: { code: 'OPERATOR_LOCKED' } });
    expect(host.journal.list({ limit: 10 })).toEqual([]);
    await m.close();
  });

  it('asks for the amount once the PIN is right, then for the card, and records the credit in the audit log', async () => {
    const m = await startModelHost(config);
    closing.push(m.close);
    const { host } = m;
    const pin = host.generatedOperatorPin ?? '';
    const started = await host.send({ type: 'CREDIT', pin });
    expect(started).toMatchObject({
      ok: true,
      value: { customer: { screen: 'enter-amount', message: 'Enter the amount to credit' } },
    });
    const audit = await host.operator({ pin, action: { type: 'audit' } });
    const actions = audit.ok && audit.value.type === 'audit' ? audit.value.records.map((r) => r.action) : [];
    expect(actions.filter((a) => a !== 'configuration-change')).toEqual(['sign-in', 'credit']);
    expect(JSON.stringify(audit)).not.toContain(`"${pin}"`);
    await m.close();
  });

  it('offers no credit and takes none, not even with the PIN, when attended.standaloneCredit is false', async () => {
    const m = await startModelHost(modelConfig('attended', { attended: { standaloneCredit: false } }));
    closing.push(m.close);
    const { host } = m;
    const idle = await host.snapshot();
    expect(idle.ok && idle.value.customer.actions).toEqual(['START']);
    expect(await host.send({ type: 'CREDIT', pin: host.generatedOperatorPin ?? '' })).toMatchObject({
      ok: false,
      error: { code: 'NOT_ALLOWED_NOW' },
    });
    const audit = await host.operator({ pin: host.generatedOperatorPin ?? '', action: { type: 'audit' } });
    const actions = audit.ok && audit.value.type === 'audit' ? audit.value.records.map((r) => r.action) : [];
    expect(actions).not.toContain('credit');
    await m.close();
  });
});
