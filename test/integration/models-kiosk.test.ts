import { afterAll, describe, expect, it } from 'vitest';
import type { AnyMachineSnapshot } from 'xstate';
import { kioskMachine } from '../../src/flows/kiosk.js';
import { localDateTime } from '../../src/host/local-time.js';
import {
  APPROVING_CARDS,
  CLEAN_VERDICT,
  CLOCK_BASE_MS,
  chargedByModel,
  finishScreens,
  ledgerVerdict,
  modelConfig,
  modelPaths,
  pathName,
  replayPath,
  settingsOf,
  startModelHost,
  type ModelEffectEvent,
  type ModelEvent,
  type ModelHost,
  type ParkingClock,
  type ReplayStep,
} from './models-harness.js';

/**
 * Pay station (spec 001: ticket or plate → fee from the tariff → Parking Sale, catLevel 2): every shortest path of the
 * kiosk machine, replayed on a real host against the embedded sandbox. The tickets give stays of 5 minutes (within
 * the grace period: nothing to pay), 95 minutes (6.00: approved) and 8 hours (capped at the daily maximum 20.21: a
 * partial approval, which the kiosk voids); the lost-ticket fee 30.02 is declined (INSUFFICIENT_FUND).
 */

const config = modelConfig('kiosk', {
  tariff: { dailyCapMinor: 2_021, lostTicketFeeMinor: 3_002, graceMinutes: 10 },
});

const STAYS = [5, 95, 480] as const;

const USER_EVENTS: ModelEvent[] = [
  { type: 'START' },
  { type: 'ENTER_TICKET', ticket: 'T1' },
  { type: 'LOST_TICKET' },
  { type: 'CONFIRM' },
  { type: 'CANCEL' },
  { type: 'DONE' },
];

function lookups(snapshot: AnyMachineSnapshot, clock: ParkingClock): ModelEffectEvent[] {
  if (!snapshot.matches('lookingUp')) return [];
  return [
    ...STAYS.map((stay) => ({
      type: 'xstate.done.actor.lookupTicket',
      output: { found: true, ticket: 'T1', enteredAtMs: clock.now() - stay * 60_000 },
    })),
    { type: 'xstate.done.actor.lookupTicket', output: { found: false, ticket: 'T1' } },
  ];
}

/** The ticket the host is given: one printed the path's stay ago on the parking clock, or one it cannot read. */
function ticketFor(m: ModelHost, step: ReplayStep): ModelEvent | undefined {
  if (step.event.type !== 'ENTER_TICKET') return undefined;
  const lookup = step.effects.find((e) => e.event.type === 'xstate.done.actor.lookupTicket')?.event as
    { output: { found: boolean; enteredAtMs?: number } } | undefined;
  if (lookup === undefined || !lookup.output.found) return { type: 'ENTER_TICKET', ticket: 'UNKNOWN-TICKET' };
  // The graph's clock stands at CLOCK_BASE_MS; the host's at CLOCK_BASE_MS plus whatever the path moved it.
  const stayMs = CLOCK_BASE_MS - (lookup.output.enteredAtMs ?? 0);
  const entered = new Date(m.clock.now() - stayMs);
  return {
    type: 'ENTER_TICKET',
    ticket: `${localDateTime(entered, m.config.terminal.timezone).slice(0, 12)}0001`,
  };
}

const paths = modelPaths({
  machine: kioskMachine,
  settings: settingsOf(config),
  userEvents: USER_EVENTS,
  effectEvents: lookups,
  outcomes: { faultable: ['paying'] },
  distinguish: (c) => [c['reason'], c['amountMinor']],
});

describe('kiosk model: generated paths replayed against the sandbox', () => {
  const closing: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const close of closing) await close();
  });

  it('generates paths through every kind of transaction outcome and ticket lookup', () => {
    const names = paths.map(pathName);
    for (const outcome of [
      '> approved',
      '> declined:INSUFFICIENT_FUND',
      '> declined:PARTIAL_APPROVAL',
      '> unknown',
      '> card-error:CARD_NOT_SUPPORTED',
      '> cancelled',
      'lookupTicket:not-found',
    ])
      expect(
        names.some((n) => n.includes(outcome)),
        outcome,
      ).toBe(true);
    expect(names.some((n) => n.endsWith('"paid"') && !n.includes('CONFIRM'))).toBe(true);
  });

  paths.forEach((path, index) => {
    it(`replays ${pathName(path)}`, async () => {
      const m = await startModelHost(config);
      closing.push(m.close);
      await replayPath(m, path, {
        card: APPROVING_CARDS[index % APPROVING_CARDS.length]!,
        prepare: ticketFor,
      });
      const verdict = await ledgerVerdict(m, path, () => [], finishScreens);
      expect(verdict).toEqual(CLEAN_VERDICT(chargedByModel(path)));
      await m.close();
    });
  });
});
