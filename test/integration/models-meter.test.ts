import { afterAll, describe, expect, it } from 'vitest';
import type { AnyMachineSnapshot } from 'xstate';
import type { ConfigInput } from '../../src/config/index.js';
import { meterMachine, type MeterHold } from '../../src/flows/meter.js';
import type { TransactionRequest } from '../../src/flows/transaction.js';
import {
  APPROVING_CARDS,
  CLEAN_VERDICT,
  chargedByModel,
  ledgerVerdict,
  modelConfig,
  modelPaths,
  pathName,
  replayPath,
  settingsOf,
  startModelHost,
  type ModelEvent,
  type ModelHost,
  type ModelPath,
} from './models-harness.js';

/**
 * On-street meter (spec 001: Parking Auth for the chosen stay, Parking Incremental Auth — or a new pre-authorization
 * — on extension, Parking Capture / Parking Capture Less Than Auth or REVERSAL at the end): every shortest path of
 * the meter machine, replayed on a real host against the embedded sandbox, with incremental authorizations allowed
 * and, in a second configuration, not allowed.
 *
 * The tariff makes the sandbox's amount triggers meaningful: 60 minutes cost 3.00 (approved), 120 minutes 5.21 (a
 * partial approval, which the meter reverses), 240 minutes the daily maximum 7.02 (declined, INSUFFICIENT_FUND). From
 * a 60-minute session an extension of 30 minutes adds 1.50 (approved) and one of 180 minutes adds 4.02 (declined).
 * The session ends after 5 minutes (grace: REVERSAL), 25 minutes (1.50: Capture Less Than Auth) or 75 minutes (4.50,
 * capped at what is held).
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

const USER_EVENTS: ModelEvent[] = [
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

function meterPaths(config: ReturnType<typeof modelConfig>): ModelPath[] {
  return modelPaths({
    machine: meterMachine,
    settings: settingsOf(config),
    userEvents: USER_EVENTS,
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

const variants = [
  { name: 'incremental authorizations allowed', config: modelConfig('meter', { tariff: TARIFF }) },
  {
    name: 'no incremental authorizations (a new pre-authorization per extension)',
    config: modelConfig('meter', { tariff: { ...TARIFF, allowIncremental: false } }),
  },
];

describe('meter model: generated paths replayed against the sandbox', () => {
  const closing: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const close of closing) await close();
  });

  for (const variant of variants) {
    const all = meterPaths(variant.config);
    // The second configuration only adds the paths through a second pre-authorization.
    const paths =
      variant === variants[0]
        ? all
        : all.filter((p) =>
            (p.steps as { state: AnyMachineSnapshot }[]).some((s) => s.state.matches('reauthorizing')),
          );

    describe(variant.name, () => {
      it('generates paths through every kind of transaction outcome', () => {
        const names = paths.map(pathName);
        expect(names.some((n) => n.includes('> approved > END_SESSION(atMinutes=75) > approved'))).toBe(true);
        expect(names.some((n) => n.includes('> unknown'))).toBe(true);
        expect(names.some((n) => n.includes('declined:INSUFFICIENT_FUND'))).toBe(true);
        if (variant === variants[0]) {
          expect(names.some((n) => n.includes('declined:PARTIAL_APPROVAL'))).toBe(true);
          expect(names.some((n) => n.includes('> cancelled'))).toBe(true);
          expect(names.some((n) => n.includes('card-error:CARD_NOT_SUPPORTED'))).toBe(true);
        }
      });

      paths.forEach((path, index) => {
        it(`replays ${pathName(path)}`, async () => {
          const m = await startModelHost(variant.config);
          closing.push(m.close);
          await replayPath(m, path, {
            card: APPROVING_CARDS[index % APPROVING_CARDS.length]!,
            parentOf: realHold,
          });
          const verdict = await ledgerVerdict(m, path, () => sessionHolds(m));
          expect(verdict).toEqual(CLEAN_VERDICT(chargedByModel(path)));
          await m.close();
        });
      });
    });
  }
});
