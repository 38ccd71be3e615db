import { describe, expect, it } from 'vitest';
import { getShortestPaths } from '@xstate/graph';
import {
  createActor,
  type AnyActorRef,
  type AnyMachineSnapshot,
  type AnyStateMachine,
  type EventObject,
} from 'xstate';
import { attendedMachine } from './attended.js';
import { kioskMachine } from './kiosk.js';
import { meterMachine } from './meter.js';
import { provideFlowEffects } from './provide.js';
import { tapAndGoMachine } from './tap-and-go.js';
import { FakeTerminal, settle, testSettings } from './testing/fake-terminal.js';
import type { FlowSettings } from './settings.js';
import type { TransactionResult } from './transaction.js';
import type { FlowEvent } from './models.js';
import type { DccOfferSummary } from './effects.js';

/**
 * Model-based tests: @xstate/graph generates the shortest path to every state of each model machine, over the user
 * events and every kind of transaction outcome. Each path is then replayed on the real machine with fake effects
 * scripted to produce those outcomes; after each path the machine must be in the state the path predicts and the
 * fake's ledger must balance (no money rule broken, no hold left open unless the session owns it, no card read left
 * unreleased once idle). Then every path is finished as a customer would finish it — a running meter session ended,
 * every car inside driven out — and the ledger must hold nothing open at all: no authorization neither captured nor
 * reversed, no hold, no card read kept.
 */

type Kind = 'meter' | 'meterChosen' | 'meterDcc' | 'kiosk' | 'attended' | 'tapAndGo';

const MACHINES: Record<Kind, AnyStateMachine> = {
  meter: meterMachine,
  // The same machine pre-authorizing the chosen duration (tariff.meterAuthorization: chosen): extensions are
  // incremental authorizations.
  meterChosen: meterMachine,
  // The meter whose pre-authorizations are converted (DCC indicator 1), asking for the currency again at completion
  // (dcc.choiceAtCompletion): the card currency, the local currency (a sale, then the reversal) or a cancel.
  meterDcc: meterMachine,
  kiosk: kioskMachine,
  attended: attendedMachine,
  tapAndGo: tapAndGoMachine,
};

/** How long the seeded tap-and-go car has been inside. */
const STAY_MS = 45 * 60_000;

const DONE_TRANSACTION = 'xstate.done.actor.transaction';

const OUTCOMES: TransactionResult[] = [
  {
    kind: 'approved',
    transactionId: 'T',
    gatewayId: 'G',
    authorizedMinor: 300,
    partial: false,
    card: {
      cardRef: 'c',
      entryMode: 'contact',
      cardType: '001',
      maskedPan: '411111******1111',
      fingerprint: 'fp-1',
      fallback: false,
      chip: true,
    },
  },
  { kind: 'declined', transactionId: 'T', reason: 'GENERAL_DECLINE' },
  { kind: 'cancelled', undone: true },
  { kind: 'card-error', code: 'CARD_ERROR' },
  { kind: 'unknown', transactionId: 'T', resolved: true },
];

/** The offer every converted pre-authorization of `meterDcc` was made against (the fake fills the local side). */
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
  disclaimer: 'I have chosen to pay in the card currency.',
};

/**
 * The outcomes of `meterDcc`: an approval of a pre-authorization is a converted one, for the price of the maximum
 * stay the meter asks for (as the fake approves it), so that the model and the replay agree on what an extension needs.
 */
function outcomesOf(kind: Kind): TransactionResult[] {
  if (kind !== 'meterDcc') return OUTCOMES;
  return OUTCOMES.map((o) =>
    o.kind === 'approved' ? { ...o, authorizedMinor: 1_200, dcc: { indicator: '1', offer: OFFER } } : o,
  );
}

const METER_EVENTS: FlowEvent[] = [
  { type: 'START' },
  { type: 'CHOOSE_DURATION', minutes: 60 },
  { type: 'CONFIRM' },
  { type: 'EXTEND', minutes: 30 },
  { type: 'END_SESSION' },
  { type: 'CANCEL' },
  { type: 'DONE' },
];

const USER_EVENTS: Record<Kind, FlowEvent[]> = {
  meter: METER_EVENTS,
  meterChosen: METER_EVENTS,
  meterDcc: [
    ...METER_EVENTS,
    { type: 'CHOOSE_CURRENCY', currency: 'USD' },
    { type: 'CHOOSE_CURRENCY', currency: 'GBP' },
  ],
  kiosk: [
    { type: 'START' },
    { type: 'ENTER_TICKET', ticket: 'T1' },
    { type: 'LOST_TICKET' },
    { type: 'CONFIRM' },
    { type: 'CANCEL' },
    { type: 'DONE' },
  ],
  attended: [
    { type: 'START' },
    { type: 'CREDIT' },
    { type: 'ENTER_AMOUNT', minor: 1_250 },
    { type: 'CONFIRM' },
    { type: 'CANCEL' },
    { type: 'DONE' },
  ],
  tapAndGo: [{ type: 'TAP_ENTRY' }, { type: 'TAP_EXIT' }, { type: 'CANCEL' }, { type: 'DONE' }],
};

function extraEvents(kind: Kind): EventObject[] {
  switch (kind) {
    case 'kiosk':
      return [
        { type: 'xstate.done.actor.lookupTicket', output: { found: true, ticket: 'T1', enteredAtMs: 0 } },
        { type: 'xstate.done.actor.lookupTicket', output: { found: false, ticket: 'T1' } },
      ] as unknown as EventObject[];
    case 'tapAndGo':
      return [
        { type: 'xstate.done.actor.openHold', output: undefined },
        // The entry's card: not inside (another card than the seeded car's), or the seeded car's card (its stay open).
        { type: 'xstate.done.actor.stayAtEntry', output: { kind: 'none' } },
        { type: 'xstate.done.actor.stayAtEntry', output: { kind: 'open', holdId: 'h', enteredAtMs: 0 } },
        {
          type: 'xstate.done.actor.readCard',
          output: {
            cardRef: 'c',
            entryMode: 'contact',
            cardType: '001',
            maskedPan: 'x',
            fingerprint: 'fp-1',
            fallback: false,
            chip: true,
          },
        },
        {
          type: 'xstate.done.actor.claimHold',
          output: {
            kind: 'claimed',
            hold: {
              holdId: 'h',
              authorizedMinor: 2_000,
              currency: 'GBP',
              enteredAtMs: new FakeTerminal().clock.now() - STAY_MS,
            },
          },
        },
      ] as unknown as EventObject[];
    case 'meter':
    case 'meterChosen':
    case 'meterDcc':
    case 'attended':
      return [];
  }
}

/** States that wait on an effect: the fake answers at once, so a path cannot end in one on the live machine. */
const WAITING: Record<Kind, string[]> = {
  meter: ['authorizing', 'incrementing', 'reauthorizing', 'capturing', 'reversing'],
  meterChosen: ['authorizing', 'incrementing', 'reauthorizing', 'capturing', 'reversing'],
  meterDcc: ['authorizing', 'incrementing', 'reauthorizing', 'capturing', 'reversing', 'payingFeeLocally'],
  kiosk: ['lookingUp', 'paying'],
  attended: ['paying'],
  tapAndGo: [
    'entryVerifying',
    'entryChecking',
    'entryHolding',
    'openingHold',
    'entryReleasing',
    'exitReading',
    'claiming',
    'exitIncrementing',
    'exitCapturing',
    'exitReleasing',
    'exitReleasingUnpriced',
    'exitReversing',
  ],
};

/** States whose transaction reads a card. */
const READING: Record<Kind, string[]> = {
  meter: ['authorizing', 'reauthorizing'],
  meterChosen: ['authorizing', 'reauthorizing'],
  meterDcc: ['authorizing', 'reauthorizing', 'payingFeeLocally'],
  kiosk: ['paying'],
  attended: ['paying'],
  tapAndGo: ['entryVerifying'],
};

function settingsFor(kind: Kind): FlowSettings {
  const settings = testSettings(kind === 'attended' ? { catLevel: 6 } : {});
  if (kind === 'meterChosen')
    return { ...settings, tariff: { ...settings.tariff, meterAuthorization: 'chosen' } };
  if (kind === 'meterDcc')
    return { ...settings, dcc: { enabled: true, processorFamily: 'A', choiceAtCompletion: true } };
  return settings;
}

/**
 * The parking clock the model reads. `meterDcc` needs a fee at the end of every session (the choice is only asked
 * for a fee): its clock moves 20 minutes, beyond the grace period, each time the meter reads it.
 */
function parkingClock(kind: Kind, fake: FakeTerminal): { now(): number } {
  if (kind !== 'meterDcc') return fake.clock;
  let t = fake.clock.now();
  return { now: () => (t += 20 * 60_000) };
}

/** The service of the transaction the snapshot waits on, if any. */
function pendingService(snapshot: AnyMachineSnapshot): string | undefined {
  const child = (snapshot.children as Record<string, AnyActorRef | undefined>)['transaction'];
  return (child?.getSnapshot() as { context?: { request?: { service?: string } } } | undefined)?.context
    ?.request?.service;
}

/** Whether the gateway can give this outcome to the transaction the snapshot waits on. */
function possibleOutcome(kind: Kind, snapshot: AnyMachineSnapshot, outcome: TransactionResult): boolean {
  // A cancel or a card error can only end a transaction that reads a card; follow-ons get the gateway outcomes only.
  if (
    (outcome.kind === 'cancelled' || outcome.kind === 'card-error') &&
    !READING[kind].includes(String(snapshot.value))
  )
    return false;
  // A reversal is answered REVERSED or refused (4xx), never declined (reference/gateway.md, statuses per service).
  if (outcome.kind === 'declined' && pendingService(snapshot) === 'reversal') return false;
  return true;
}

function pathsOf(kind: Kind) {
  const fake = new FakeTerminal();
  const events = (snapshot: AnyMachineSnapshot) => [
    ...USER_EVENTS[kind],
    ...outcomesOf(kind)
      .filter((o) => possibleOutcome(kind, snapshot, o))
      .map((output) => ({
        type: DONE_TRANSACTION,
        output,
      })),
    ...extraEvents(kind),
  ];
  return getShortestPaths(MACHINES[kind], {
    input: { settings: settingsFor(kind), clock: parkingClock(kind, fake) },
    events,
    // Distinguish states by why they were reached, so that every outcome into a state gets its own path.
    serializeState: (snapshot: AnyMachineSnapshot) => {
      const c = snapshot.context as {
        reason?: string;
        paidMinutes?: number;
        holds?: unknown[];
        mode?: string;
        uncollectedMinor?: number;
      };
      // meterDcc: a fee not collected at completion is its own way to the same state.
      return JSON.stringify([
        snapshot.value,
        c.reason,
        c.paidMinutes,
        c.holds?.length,
        c.mode,
        c.uncollectedMinor ?? 0,
      ]);
    },
  } as never);
}

/** Scripts the fake so that the next transaction ends with this outcome. */
function scriptOutcome(fake: FakeTerminal, outcome: TransactionResult): void {
  switch (outcome.kind) {
    case 'approved':
      fake.nextKinds.push('approved');
      return;
    case 'rejected':
      return;
    case 'declined':
    case 'unknown':
      fake.nextKinds.push(outcome.kind);
      return;
    case 'cancelled':
      fake.reads.push('hang');
      return;
    case 'card-error':
      // The chip cannot be read, and neither can the card when the customer is asked for its stripe after that.
      fake.reads.push('CARD_ERROR', 'CARD_ERROR');
      return;
  }
}

/** The transaction waits on its own currency choice (an offer on screen). */
function offerShown(actor: AnyActorRef): boolean {
  const children = (actor.getSnapshot() as AnyMachineSnapshot).children as Record<
    string,
    AnyActorRef | undefined
  >;
  const child = children['transaction']?.getSnapshot() as { value?: unknown } | undefined;
  return child?.value === 'choosingCurrency';
}

function awaitingResolution(actor: AnyActorRef): boolean {
  const children = (actor.getSnapshot() as AnyMachineSnapshot).children as Record<
    string,
    AnyActorRef | undefined
  >;
  const child = children['transaction']?.getSnapshot() as { value?: unknown } | undefined;
  return child?.value === 'awaitingResolution';
}

async function replay(kind: Kind, steps: { event: EventObject }[]) {
  const fake = new FakeTerminal();
  const settings = settingsFor(kind);
  if (kind === 'tapAndGo') {
    // A car already inside: its hold is open in the ledger and in the hold store.
    const outcome = await fake.submit(
      {
        service: 'preauth',
        comments: 'Parking Auth',
        amountMinor: 2_000,
        currency: 'GBP',
        catLevel: 2,
        cardRef: 'seed',
        includeEmvTags: false,
      },
      new AbortController().signal,
    );
    await fake.openHold({
      holdId: outcome.transactionId,
      fingerprint: 'fp-1',
      maskedPan: 'x',
      gatewayId: outcome.gatewayId ?? '',
      transactionId: outcome.transactionId,
      authorizedMinor: 2_000,
      currency: 'GBP',
      cardRef: 'seed',
      includeEmvTags: true,
      enteredAtMs: fake.clock.now(),
      expiresAtMs: fake.clock.now() + settings.tapAndGoMaxStayMs,
    });
    fake.clock.increment(STAY_MS);
  }
  if (kind === 'kiosk') fake.tickets.set('T1', fake.clock.now() - 95 * 60_000);
  const machine = (
    kind === 'meterChosen' || kind === 'meterDcc' ? provideFlowEffects.meter : provideFlowEffects[kind]
  )(fake);
  const actor = createActor(machine, {
    // The parking clock may jump over stays; offers' expiries are read on the terminal's own clock, as in the host.
    input: { settings, clock: parkingClock(kind, fake), wallClock: fake.clock },
    clock: fake.clock,
  }) as AnyActorRef;
  actor.start();
  const rest = steps.slice(1).map((s) => s.event);
  for (let i = 0; i < rest.length; i += 1) {
    const event = rest[i] as EventObject;
    if (event.type.startsWith('xstate.done.actor.')) continue;
    // Look ahead: the effects answer the transactions this event starts (up to the next user event) the way the
    // path says.
    const next = rest[i + 1];
    const following: TransactionResult[] = [];
    for (
      let j = i + 1;
      j < rest.length && (rest[j] as EventObject).type.startsWith('xstate.done.actor.');
      j += 1
    ) {
      const e = rest[j] as EventObject;
      if (e.type === DONE_TRANSACTION) following.push((e as unknown as { output: TransactionResult }).output);
    }
    for (const outcome of following) scriptOutcome(fake, outcome);
    // A converted approval: the gateway offers, and the customer chooses the card's currency on the offer screen.
    const converted = following.some((o) => o.kind === 'approved' && o.dcc?.indicator === '1');
    if (converted) fake.offers.push(OFFER);
    const cancelAfter = following[0]?.kind === 'cancelled';
    const unknown = following.some((o) => o.kind === 'unknown');
    // The tap-and-go entry's card: the seeded car's (fp-1, inside) when the path finds its stay open, else another.
    let stayOpen = false;
    for (let j = i + 1; j < rest.length && rest[j]!.type.startsWith('xstate.done.actor.'); j += 1)
      if (rest[j]!.type === 'xstate.done.actor.stayAtEntry')
        stayOpen = (rest[j] as unknown as { output: { kind: string } }).output.kind === 'open';
    if (kind === 'tapAndGo' && event.type === 'TAP_ENTRY')
      fake.card = { ...fake.card, fingerprint: stayOpen ? 'fp-1' : 'fp-2' };
    if (next?.type === 'xstate.done.actor.lookupTicket') {
      const found = (next as unknown as { output: { found: boolean } }).output.found;
      if (!found) fake.tickets.delete('T1');
    }
    actor.send(event);
    await settle();
    if (converted && offerShown(actor)) {
      actor.send({ type: 'CHOOSE_CURRENCY', currency: OFFER.billingCurrency });
      await settle();
    }
    fake.offers.length = 0;
    if (cancelAfter) {
      actor.send({ type: 'CANCEL' });
      await settle();
    }
    if (unknown && awaitingResolution(actor)) {
      fake.clock.increment(settings.timing.timeoutReversalDelayMs);
      await settle();
    }
    fake.nextKinds.length = 0;
    // Outcomes scripted for an original that this path did not use must not leak into the next step.
    for (const key of Object.keys(fake.outcomes)) delete fake.outcomes[key as keyof typeof fake.outcomes];
    fake.reads.length = 0;
    fake.card = { ...fake.card, fingerprint: 'fp-1' };
  }
  return { fake, actor, snapshot: actor.getSnapshot() as AnyMachineSnapshot };
}

/**
 * Finishes what the path left running, the way a customer would: a result screen is dismissed, a choice not paid
 * for is cancelled, a meter session is
 * ended (its holds captured or reversed), every car still inside taps out (its hold captured or reversed). The
 * effects answer as they do by default (approved), the parking clock stands where the path left it.
 */
async function finish(kind: Kind, fake: FakeTerminal, actor: AnyActorRef): Promise<void> {
  const snapshot = () => actor.getSnapshot() as AnyMachineSnapshot;
  // A result screen is dismissed; a choice not yet paid for (duration, ticket, amount, confirm) is cancelled.
  const dismiss = async () => {
    for (const type of ['DONE', 'CANCEL'] as const)
      if (snapshot().can({ type })) {
        actor.send({ type });
        await settle();
        return;
      }
  };
  await dismiss();
  // A currency choice at completion dismissed with CANCEL goes on to a result screen: dismiss that too.
  await dismiss();
  if (snapshot().matches('session')) {
    actor.send({ type: 'END_SESSION' });
    await settle();
    await dismiss();
    await dismiss();
  }
  if (kind === 'tapAndGo') {
    // One exit per car inside, each with the card it entered with.
    for (let cars = fake.holds.size; cars > 0; cars -= 1) {
      const [inside] = [...fake.holds.values()];
      if (inside !== undefined) fake.card = { ...fake.card, fingerprint: inside.fingerprint };
      actor.send({ type: 'TAP_EXIT' });
      await settle();
      await dismiss();
    }
  }
}

function owned(snapshot: AnyMachineSnapshot): { holds: string[]; cards: string[] } {
  const context = snapshot.context as {
    holds?: { gatewayId: string; cardRef: string }[];
    cardRefs?: string[];
  };
  const holds = context.holds ?? [];
  const idle = snapshot.matches('idle');
  return {
    holds: holds.map((h) => h.gatewayId),
    cards: [...holds.map((h) => h.cardRef), ...(idle ? [] : (context.cardRefs ?? []))],
  };
}

describe('model-based paths through each model machine', () => {
  for (const kind of Object.keys(MACHINES) as Kind[]) {
    it(`${kind}: every generated path ends where the model says and leaves a balanced ledger`, async () => {
      const paths = pathsOf(kind);
      expect(paths.length).toBeGreaterThan(5);
      if (kind === 'meterDcc') {
        // The choice at completion and each of its ways on are among the generated paths.
        const reached = new Set(paths.map((p) => String(p.state.value)));
        expect([...reached]).toEqual(expect.arrayContaining(['choosingFeeCurrency', 'payingFeeLocally']));
        const reasons = new Set(paths.map((p) => (p.state.context as { reason?: string }).reason));
        expect([...reasons]).toContain('FEE_NOT_COLLECTED');
      }
      if (kind === 'tapAndGo') {
        // The entry of a card whose stay is open (anti-passback) is among them.
        const reasons = new Set(paths.map((p) => (p.state.context as { reason?: string }).reason));
        expect([...reasons]).toContain('CARD_ALREADY_INSIDE');
      }
      const ending = paths.filter((p) => !WAITING[kind].includes(String(p.state.value)));
      expect(ending.length).toBeGreaterThan(3);
      for (const path of ending) {
        const { fake, actor, snapshot } = await replay(kind, path.steps as { event: EventObject }[]);
        const label = `${kind}: ${path.steps.map((s) => (s.event as EventObject).type).join(' > ')}`;
        expect(snapshot.value, label).toEqual(path.state.value);
        const own = owned(snapshot);
        expect(fake.balanceProblems(own.holds, own.cards), label).toEqual([]);
        // Every path ends resolved: nothing open once the customer has finished.
        await finish(kind, fake, actor);
        expect(
          {
            state: (actor.getSnapshot() as AnyMachineSnapshot).value as unknown,
            open: fake.openAuthorizations(),
            holds: [...fake.holds.keys()],
            problems: fake.balanceProblems(),
          },
          label,
        ).toEqual({ state: 'idle', open: [], holds: [], problems: [] });
      }
    });
  }
});
