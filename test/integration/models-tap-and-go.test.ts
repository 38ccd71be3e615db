import { afterAll, describe, expect, it } from 'vitest';
import type { AnyMachineSnapshot } from 'xstate';
import type { EntryStay, HoldClaim, HoldRecord } from '../../src/flows/effects.js';
import { tapAndGoMachine } from '../../src/flows/tap-and-go.js';
import {
  APPROVING_CARDS,
  CLEAN_VERDICT,
  CLOCK_BASE_MS,
  MODEL_CARD,
  chargedByModel,
  driveCarsOut,
  ledgerVerdict,
  modelConfig,
  modelPaths,
  openAuthorizations,
  pathName,
  replayPath,
  sendEvent,
  settingsOf,
  startModelHost,
  waitForScreen,
  type ModelEffectEvent,
  type ModelEvent,
  type ModelHost,
  type ParkingClock,
  type ReplayStep,
} from './models-harness.js';

/**
 * Tap-and-go (spec 001: Parking AVR, pre-authorization on entry, capture at exit with an incremental authorization
 * when the fee exceeds the hold): every shortest path of the tap-and-go machine, replayed on a real host against the
 * embedded sandbox. Each replay starts with a car already inside (a real entry with the n2-contact card, hold 5.98);
 * the exit happens after 5 minutes (grace: REVERSAL), 45 minutes (3.00: Capture Less Than Auth), 150 minutes (7.50:
 * increment of 1.52 approved, then Parking Capture) or 180 minutes (9.00: increment of 3.02 declined
 * INSUFFICIENT_FUND, then the hold is captured). A card with no entry (n1-contact) is sent to the pay station.
 */

const SEED_CARD = 'n2-contact';
const OTHER_CARD = 'n1-contact';
const STAYS = [5, 45, 150, 180] as const;

const config = modelConfig('tap-and-go', { tariff: { tapAndGoHoldMinor: 598 } });

const USER_EVENTS: ModelEvent[] = [
  { type: 'TAP_ENTRY' },
  { type: 'TAP_EXIT' },
  { type: 'CANCEL' },
  { type: 'DONE' },
];

function effects(snapshot: AnyMachineSnapshot, clock: ParkingClock): ModelEffectEvent[] {
  if (snapshot.matches('openingHold')) return [{ type: 'xstate.done.actor.openHold', output: undefined }];
  // The entry's card: another than the seeded car's, or the seeded car's own (its stay open: refused, one stay per card).
  if (snapshot.matches('entryChecking'))
    return [
      { type: 'xstate.done.actor.stayAtEntry', output: { kind: 'none' } satisfies EntryStay },
      {
        type: 'xstate.done.actor.stayAtEntry',
        output: { kind: 'open', holdId: 'model-hold', enteredAtMs: clock.now() } satisfies EntryStay,
      },
    ];
  if (snapshot.matches('exitReading'))
    return [
      { type: 'xstate.done.actor.readCard', output: MODEL_CARD },
      { type: 'xstate.error.actor.readCard', error: { code: 'READER_CARD_ERROR' } },
    ];
  if (snapshot.matches('claiming'))
    return [
      { type: 'xstate.done.actor.claimHold', output: { kind: 'none' } satisfies HoldClaim },
      ...STAYS.map((stay) => ({
        type: 'xstate.done.actor.claimHold',
        output: {
          kind: 'claimed',
          hold: {
            holdId: 'model-hold',
            fingerprint: MODEL_CARD.fingerprint,
            maskedPan: MODEL_CARD.maskedPan,
            gatewayId: 'model-gw',
            transactionId: 'model-tx',
            authorizedMinor: 598,
            currency: 'GBP',
            cardRef: MODEL_CARD.cardRef,
            includeEmvTags: true,
            enteredAtMs: clock.now() - stay * 60_000,
            expiresAtMs: clock.now() + 86_400_000,
          },
        } satisfies HoldClaim,
      })),
    ];
  return [];
}

const paths = modelPaths({
  machine: tapAndGoMachine,
  settings: settingsOf(config),
  userEvents: USER_EVENTS,
  effectEvents: effects,
  allowedErrors: ['xstate.error.actor.readCard'],
  // The entry's pre-authorization follows its AVR on the same path and method: a fault cannot single it out.
  outcomes: {
    faultable: ['entryVerifying', 'exitIncrementing', 'exitCapturing', 'exitReversing'],
    incrementBase: (s) => (s.context as { hold?: HoldRecord }).hold?.authorizedMinor ?? 0,
  },
  distinguish: (c) => [c['reason'], c['message'], c['feeMinor']],
});

/** The exit: the seeded card after the path's stay, a card without an entry, or a card the reader cannot read. */
function exitCard(m: ModelHost, step: ReplayStep): undefined {
  if (step.event.type !== 'TAP_EXIT') return undefined;
  const find = (type: string) =>
    step.effects.find((e) => e.event.type === type)?.event as { output?: HoldClaim } | undefined;
  if (find('xstate.error.actor.readCard') !== undefined) m.host.simulator!.setCard('expired');
  const claim = find('xstate.done.actor.claimHold');
  if (claim === undefined) return undefined;
  if (claim.output?.kind !== 'claimed') {
    m.host.simulator!.setCard(OTHER_CARD);
    return undefined;
  }
  m.host.simulator!.setCard(SEED_CARD);
  m.clock.offsetMs = CLOCK_BASE_MS - claim.output.hold.enteredAtMs;
  return undefined;
}

/**
 * The entry: the card of the path (never the seeded car's) when the path finds no stay open for it, the seeded car's
 * card when it finds that car's stay open (the entry is refused: one stay per card).
 */
function entryCard(m: ModelHost, step: ReplayStep): undefined {
  if (step.event.type !== 'TAP_ENTRY') return undefined;
  const stay = step.effects.find((e) => e.event.type === 'xstate.done.actor.stayAtEntry')?.event as
    { output?: EntryStay } | undefined;
  if (stay?.output?.kind === 'open') m.host.simulator!.setCard(SEED_CARD);
  return undefined;
}

/** A car already inside: a real entry at the start of the parking clock. */
async function seedEntry(m: ModelHost): Promise<void> {
  m.host.simulator!.setCard(SEED_CARD);
  await sendEvent(m.host, { type: 'TAP_ENTRY' });
  await waitForScreen(m.host, (s) => s.customer.screen === 'session', 'the seeded entry');
  await sendEvent(m.host, { type: 'DONE' });
  await waitForScreen(m.host, (s) => s.customer.screen === 'idle', 'idle after the seeded entry');
}

/** Authorizations the terminal still owns: the holds of cars inside. */
function openHolds(m: ModelHost): string[] {
  return m.host.holds.unclaimed().map((h) => h.gatewayId);
}

describe('tap-and-go model: generated paths replayed against the sandbox', () => {
  const closing: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const close of closing) await close();
  });

  it('generates paths through every exit and every kind of transaction outcome', () => {
    const names = paths.map(pathName);
    for (const part of [
      'claimHold > approved > approved', // increment, then capture
      'claimHold > declined:INSUFFICIENT_FUND > approved',
      'claimHold:none',
      'readCard:error',
      'TAP_ENTRY > approved > stayAtEntry:none > approved > openHold',
      'TAP_ENTRY > approved > stayAtEntry:open',
      'TAP_ENTRY > unknown',
      'TAP_ENTRY > card-error:CARD_NOT_SUPPORTED',
      'TAP_ENTRY > cancelled',
      'claimHold > unknown',
    ])
      expect(
        names.some((n) => n.includes(part)),
        part,
      ).toBe(true);
  });

  paths.forEach((path, index) => {
    it(`replays ${pathName(path)}`, async () => {
      const m = await startModelHost(config);
      closing.push(m.close);
      await seedEntry(m);
      expect(openAuthorizations(m.host)).toHaveLength(1);
      // A new entry's card is never the seeded car's (the n2 profiles all read its PAN): that card is inside, and its
      // entry refused (one stay per card). The n1 profile of the same read stands in for it.
      const card = APPROVING_CARDS[index % APPROVING_CARDS.length]!.replace(/^n2-/, 'n1-');
      await replayPath(m, path, {
        card,
        prepare: (host, step) => entryCard(host, step) ?? exitCard(host, step),
        parentOf: () => openHolds(m)[0],
      });
      const verdict = await ledgerVerdict(
        m,
        path,
        () => openHolds(m),
        (done) => driveCarsOut(done, [SEED_CARD, card]),
      );
      expect(verdict).toEqual(CLEAN_VERDICT(chargedByModel(path)));
      await m.close();
    });
  });
});
