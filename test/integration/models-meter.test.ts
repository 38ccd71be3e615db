import { afterAll, describe, expect, it } from 'vitest';
import type { AnyMachineSnapshot } from 'xstate';
import type { ConfigInput } from '../../src/config/index.js';
import { meterMachine, type MeterHold } from '../../src/flows/meter.js';
import type { TransactionRequest } from '../../src/flows/transaction.js';
import {
  APPROVING_CARDS,
  CLEAN_VERDICT,
  chargedByModel,
  chargedInLedger,
  finishMeterSession,
  ledgerVerdict,
  modelConfig,
  modelPaths,
  pathName,
  replayPath,
  sendEvent,
  settingsOf,
  startModelHost,
  waitForScreen,
  type ModelEvent,
  type ModelHost,
  type ModelPath,
} from './models-harness.js';

/**
 * On-street meter: every shortest path of the meter machine, replayed on a real host against the embedded sandbox,
 * in each way the meter pre-authorizes (tariff.meterAuthorization).
 *
 * `maximum` (spec 001: pre-authorize the maximum time, capture the actual, reverse the unused): the tariff of the
 * default configuration, 1.50 per started 30 minutes up to 240 minutes, so every session holds 12.00 (approved); an
 * extension within the maximum sends nothing; the session ends after 5 minutes (grace: REVERSAL of 12.00), 25 minutes
 * (1.50), 75 or 90 minutes (4.50) — each a Parking Capture Less Than Auth, an overstay at its real price. With the
 * tariff below, whose maximum stay costs 7.02, every pre-authorization is declined (INSUFFICIENT_FUND).
 *
 * `chosen` (fixed-time markets: Parking Auth for the chosen stay, Parking Incremental Auth — or a new
 * pre-authorization — on extension), with incremental authorizations allowed and, in a second configuration, not
 * allowed. The tariff makes the sandbox's amount triggers meaningful: 60 minutes cost 3.00 (approved), 120 minutes
 * 5.21 (a partial approval, which the meter reverses), 240 minutes the daily maximum 7.02 (declined,
 * INSUFFICIENT_FUND). From a 60-minute session an extension of 30 minutes adds 1.50 (approved) and one of 180 minutes
 * adds 4.02 (declined). The session ends after 5 minutes (grace: REVERSAL), 25 minutes (1.50: Capture Less Than
 * Auth) or 75 minutes (4.50, capped at what is held).
 *
 * Every path ends with the session it left open ended (finishMeterSession) and nothing left open in the ledger.
 */

const TARIFF: NonNullable<ConfigInput['tariff']> = {
  periods: [
    { minutes: 90, priceMinor: 150, unitMinutes: 30 },
    { minutes: 1_350, priceMinor: 71, unitMinutes: 30 },
  ],
  graceMinutes: 10,
  maxStayMinutes: 240,
  dailyCapMinor: 702,
};

const CHOSEN_EVENTS: ModelEvent[] = [
  { type: 'START' },
  { type: 'CHOOSE_DURATION', minutes: 60 },
  { type: 'CHOOSE_DURATION', minutes: 120 },
  { type: 'CHOOSE_DURATION', minutes: 240 },
  { type: 'CONFIRM' },
  { type: 'EXTEND', minutes: 30 },
  { type: 'EXTEND', minutes: 180 },
  { type: 'END_SESSION', atMinutes: 5 },
  { type: 'END_SESSION', atMinutes: 25 },
  { type: 'END_SESSION', atMinutes: 75 },
  { type: 'CANCEL' },
  { type: 'DONE' },
];

const holdsOf = (snapshot: AnyMachineSnapshot): MeterHold[] =>
  (snapshot.context as { holds: MeterHold[] }).holds;

/** The maximum is held whatever the duration: one duration, and an overstay of the 60 minutes chosen. */
const MAXIMUM_EVENTS: ModelEvent[] = [
  { type: 'START' },
  { type: 'CHOOSE_DURATION', minutes: 60 },
  { type: 'CONFIRM' },
  { type: 'EXTEND', minutes: 30 },
  { type: 'END_SESSION', atMinutes: 5 },
  { type: 'END_SESSION', atMinutes: 25 },
  { type: 'END_SESSION', atMinutes: 90 },
  { type: 'CANCEL' },
  { type: 'DONE' },
];

function meterPaths(config: ReturnType<typeof modelConfig>, userEvents: ModelEvent[]): ModelPath[] {
  return modelPaths({
    machine: meterMachine,
    settings: settingsOf(config),
    userEvents,
    outcomes: {
      faultable: ['authorizing', 'incrementing', 'reauthorizing', 'capturing', 'reversing'],
      incrementBase: (s) => holdsOf(s).at(-1)?.authorizedMinor ?? 0,
    },
    // Bounded: the message shown, the amount only before the session (which duration), then "extended or not", "one hold or more",
    // "a settlement failed or not", the fee and what was captured — every further extension would otherwise be a new state of its own.
    distinguish: (c) => [
      c['reason'],
      c['message'],
      c['paidMinutes'] === 0 ? c['amountMinor'] : null,
      Math.min(c['paidMinutes'] as number, 61),
      Math.min((c['holds'] as unknown[]).length, 2),
      Math.min(c['settleFailures'] as number, 1),
      c['feeMinor'],
      c['capturedMinor'],
    ],
  });
}

/** The real session's hold that a follow-on of the abstract snapshot acts on (same position). */
function realHold(m: ModelHost, before: AnyMachineSnapshot, request: TransactionRequest): string | undefined {
  const real = holdsOf(m.host.actor!.getSnapshot() as AnyMachineSnapshot);
  const index =
    request.service === 'incremental'
      ? real.length - 1
      : (before.context as { settleIndex: number }).settleIndex;
  return real[index]?.gatewayId;
}

/** Authorizations the terminal still owns: those of an open session. */
function sessionHolds(m: ModelHost): string[] {
  const snapshot = m.host.actor!.getSnapshot() as AnyMachineSnapshot;
  return snapshot.matches('session') ? holdsOf(snapshot).map((h) => h.gatewayId) : [];
}

const MAXIMUM = modelConfig('meter');

interface Variant {
  name: string;
  config: ReturnType<typeof modelConfig>;
  events: ModelEvent[];
  /** Outcomes the variant's paths must include. */
  expected: string[];
  /** Only the paths this variant adds to the others. */
  only?: (path: ModelPath) => boolean;
}

const variants: Variant[] = [
  {
    name: 'maximum pre-authorized (the default)',
    config: MAXIMUM,
    events: MAXIMUM_EVENTS,
    expected: [
      'CONFIRM > approved > END_SESSION(atMinutes=90) > approved',
      'EXTEND(minutes=30) > END_SESSION',
      '> unknown',
      '> cancelled',
      'card-error:CARD_NOT_SUPPORTED',
    ],
  },
  {
    name: 'maximum pre-authorized and declined',
    config: modelConfig('meter', { tariff: TARIFF }),
    events: MAXIMUM_EVENTS,
    expected: ['CONFIRM > declined:INSUFFICIENT_FUND'],
    only: (p) => pathName(p).includes('declined'),
  },
  {
    name: 'chosen duration pre-authorized, incremental authorizations allowed',
    config: modelConfig('meter', { tariff: { ...TARIFF, meterAuthorization: 'chosen' } }),
    events: CHOSEN_EVENTS,
    expected: [
      '> approved > END_SESSION(atMinutes=75) > approved',
      '> unknown',
      'declined:INSUFFICIENT_FUND',
      'declined:PARTIAL_APPROVAL',
      '> cancelled',
      'card-error:CARD_NOT_SUPPORTED',
    ],
  },
  {
    name: 'chosen duration pre-authorized, no incremental authorizations (a new pre-authorization per extension)',
    config: modelConfig('meter', {
      tariff: { ...TARIFF, meterAuthorization: 'chosen', allowIncremental: false },
    }),
    events: CHOSEN_EVENTS,
    expected: [
      '> approved > END_SESSION(atMinutes=75) > approved',
      '> unknown',
      'declined:INSUFFICIENT_FUND',
    ],
    // The second configuration only adds the paths through a second pre-authorization.
    only: (p) => (p.steps as { state: AnyMachineSnapshot }[]).some((s) => s.state.matches('reauthorizing')),
  },
];

describe('meter model: generated paths replayed against the sandbox', () => {
  const closing: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const close of closing) await close();
  });

  it('pre-authorizes the maximum and captures a 60-minute session parked for 90 minutes at the 90-minute price', async () => {
    const m = await startModelHost(MAXIMUM);
    closing.push(m.close);
    await sendEvent(m.host, { type: 'START' });
    await sendEvent(m.host, { type: 'CHOOSE_DURATION', minutes: 60 });
    const confirm = await waitForScreen(m.host, (s) => s.customer.screen === 'confirm', 'confirm');
    expect(confirm.customer.amount?.minor).toBe(1_200);
    expect(confirm.customer.message).toContain('£12.00 (the longest stay, 240 minutes) will be held');
    await sendEvent(m.host, { type: 'CONFIRM' });
    const session = await waitForScreen(m.host, (s) => s.customer.screen === 'session', 'session');
    expect(session.customer.session?.held?.minor).toBe(1_200);
    m.clock.offsetMs += 90 * 60_000;
    await sendEvent(m.host, { type: 'END_SESSION' });
    const end = await waitForScreen(m.host, (s) => s.customer.screen === 'approved', 'approved');
    expect(end.customer.amount?.minor).toBe(450);
    await m.host.settle(15_000);
    const ledger = m.host.sandbox!.ledger().transactions.map((t) => ({
      kind: t.kind,
      comments: t.comments,
      authorized: t.amounts.authorized,
      captured: t.amounts.captured,
    }));
    expect(ledger).toEqual([
      expect.objectContaining({
        kind: 'authorization',
        comments: 'Parking Auth',
        authorized: 1_200,
        captured: 450,
      }),
      expect.objectContaining({ kind: 'capture', comments: 'Parking Capture Less Than Auth', captured: 450 }),
    ]);
    expect(chargedInLedger(m.host)).toBe(450);
    expect(m.host.sandbox!.consistency({ requireResolved: true }).problems).toEqual([]);
    await m.close();
  });

  for (const variant of variants) {
    const all = meterPaths(variant.config, variant.events);
    const paths = variant.only !== undefined ? all.filter(variant.only) : all;

    describe(variant.name, () => {
      it('generates paths through every kind of transaction outcome', () => {
        const names = paths.map(pathName);
        for (const part of variant.expected)
          expect(
            names.some((n) => n.includes(part)),
            part,
          ).toBe(true);
      });

      paths.forEach((path, index) => {
        it(`replays ${pathName(path)}`, async () => {
          const m = await startModelHost(variant.config);
          closing.push(m.close);
          await replayPath(m, path, {
            card: APPROVING_CARDS[index % APPROVING_CARDS.length]!,
            parentOf: realHold,
          });
          const verdict = await ledgerVerdict(m, path, () => sessionHolds(m), finishMeterSession);
          expect(verdict).toEqual(CLEAN_VERDICT(chargedByModel(path)));
          await m.close();
        });
      });
    });
  }
});
