import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getShortestPaths } from '@xstate/graph';
import type { AnyActorRef, AnyMachineSnapshot, AnyStateMachine, EventObject } from 'xstate';
import { parseConfig, type Config, type ConfigInput } from '../../src/config/index.js';
import { flowSettingsFromConfig, type FlowSettings } from '../../src/flows/settings.js';
import type { CardSummary, ServiceName } from '../../src/flows/effects.js';
import { resolutionFor } from '../../src/flows/services.js';
import type { TransactionRequest, TransactionResult } from '../../src/flows/transaction.js';
import { describeView, screenOf } from '../../src/flows/view.js';
import type { ParkingModel, TerminalSnapshot, UserEvent } from '../../src/host/api.js';
import type { Outcome } from '../../src/gateway/index.js';
import { localDateTime } from '../../src/host/local-time.js';
import { createTerminalHost, openTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { silentLogger } from '../../src/log/index.js';
import { startSandbox, type Fault, type Sandbox } from '../../src/sandbox/index.js';
import {
  amountTrigger,
  REVIEW_REASON,
  RISK_DECLINE_REASON,
  type TriggerOptions,
} from '../../src/sandbox/triggers.js';

/**
 * Model-based integration tests (issue 8, "Tests"): @xstate/graph walks each model machine of src/flows with the user
 * events and the transaction outcomes that the in-process sandbox can produce deterministically, and each generated
 * path is replayed on a real TerminalHost (simulated reader, embedded sandbox, journal in a temporary directory)
 * through `host.send` only. The outcome of every transaction of a path is realised on the real side by the sandbox's
 * amount triggers (the amounts follow from the same tariff), a scheduled fault (unknown outcome), or the simulator's
 * card profile (unsupported card, cancel while the card is awaited).
 */

/** Start of every parking clock, aligned on a minute so that tickets (minute precision) give exact stays. */
export const CLOCK_BASE_MS = Math.floor(Date.UTC(2030, 0, 15, 9, 0, 0) / 60_000) * 60_000;

/** A parking clock that only moves when a test moves it. */
export class ParkingClock {
  offsetMs = 0;
  now(): number {
    return CLOCK_BASE_MS + this.offsetMs;
  }
}

/** A user event of the graph: a `UserEvent` plus, for END_SESSION, the minutes since the session started. */
export type ModelEvent = UserEvent & { atMinutes?: number };

/** The card the abstract model reads (the host reads the simulator's). */
export const MODEL_CARD: CardSummary = {
  cardRef: 'model-card',
  entryMode: 'contact',
  cardType: '001',
  maskedPan: '476173******0119',
  fingerprint: 'model-fingerprint',
  fallback: false,
  chip: true,
};

export const DONE_TRANSACTION = 'xstate.done.actor.transaction';

export function isInternal(event: EventObject): boolean {
  return event.type.startsWith('xstate.');
}

/** The request of the transaction the snapshot is waiting on, if any. */
export function pendingRequest(snapshot: AnyMachineSnapshot): TransactionRequest | undefined {
  const child = (snapshot.children as Record<string, AnyActorRef | undefined>)['transaction'];
  const childSnapshot = child?.getSnapshot() as { context?: { request?: TransactionRequest } } | undefined;
  return childSnapshot?.context?.request;
}

/** What the sandbox's amount triggers allow per service (src/sandbox/payments.ts). */
function triggerOptions(service: ServiceName): TriggerOptions {
  switch (service) {
    case 'preauth':
    case 'sale':
      return { canDecline: true, canBePartial: true, canRiskDecline: true };
    case 'avr':
    case 'incremental':
    case 'credit':
      return { canDecline: true, canBePartial: false };
    case 'capture':
    case 'reversal':
    case 'timeout-reversal':
    case 'refund-capture':
    case 'refund-payment':
    case 'void-capture':
    case 'void-payment':
    case 'void-refund':
    case 'void-credit':
    case 'timeout-void':
      return { canDecline: false, canBePartial: false };
  }
}

export interface OutcomeOptions {
  /** States whose transaction may get an unknown outcome through a scheduled fault. */
  faultable: readonly string[];
  /** Authorized total of the hold an incremental authorization adds to (its answer carries the new total). */
  incrementBase?: (snapshot: AnyMachineSnapshot) => number;
}

/**
 * The outcomes of the pending transaction that the sandbox and the simulator can produce: the one the amount
 * selects, an unknown outcome (fault) where the test can place one, and — for a transaction that reads a card — a
 * card the terminal does not accept and a customer cancel while the card is awaited.
 */
export function transactionOutcomes(snapshot: AnyMachineSnapshot, options: OutcomeOptions): EventObject[] {
  const request = pendingRequest(snapshot);
  if (request === undefined) return [];
  const reading = request.read !== undefined;
  const card = reading ? { card: MODEL_CARD } : {};
  const outputs: TransactionResult[] = [];
  const trigger = amountTrigger(request.amountMinor, triggerOptions(request.service));
  switch (trigger.kind) {
    case 'approve':
      outputs.push({
        kind: 'approved',
        transactionId: 'model-tx',
        gatewayId: 'model-gw',
        authorizedMinor:
          request.service === 'incremental'
            ? (options.incrementBase?.(snapshot) ?? 0) + request.amountMinor
            : request.amountMinor,
        partial: false,
        ...card,
      });
      break;
    case 'decline':
      outputs.push({ kind: 'declined', transactionId: 'model-tx', reason: trigger.reason, ...card });
      break;
    case 'risk-decline':
      // The customer is told "declined"; the host, not the machine, reverses what the issuer holds.
      outputs.push({ kind: 'declined', transactionId: 'model-tx', reason: RISK_DECLINE_REASON, ...card });
      break;
    case 'review':
      // Held for review: "declined" too; the host reverses it before a review could accept and charge it.
      outputs.push({ kind: 'declined', transactionId: 'model-tx', reason: REVIEW_REASON, ...card });
      break;
    case 'partial':
      // Every model refuses a partial approval: the transaction reverses or voids it (acceptPartial false).
      outputs.push({ kind: 'declined', transactionId: 'model-tx', reason: 'PARTIAL_APPROVAL', ...card });
      break;
    case 'fault':
      // The test configurations keep every amount clear of the fault triggers.
      break;
  }
  if (options.faultable.includes(String(snapshot.value)))
    outputs.push({
      kind: 'unknown',
      transactionId: 'model-tx',
      // Resolved by a timeout reversal or void.
      resolved: resolutionFor(request.service) !== null,
      ...card,
    });
  if (reading) {
    outputs.push({ kind: 'card-error', code: 'CARD_NOT_SUPPORTED' });
    if (request.cancellable) outputs.push({ kind: 'cancelled', undone: true });
  }
  return outputs.map((output) => ({ type: DONE_TRANSACTION, output }) as EventObject);
}

/**
 * The machine as graph logic: delayed events (result screens) and bare actor events (which the default traversal
 * offers for every invoked actor) are not part of the model, and an event carrying `atMinutes` is taken that many
 * minutes after the start of the graph clock.
 */
function graphLogic(machine: AnyStateMachine, clock: ParkingClock, allowedErrors: readonly string[]) {
  const logic = Object.create(machine) as AnyStateMachine;
  const transition = machine.transition.bind(machine);
  (logic as { transition: typeof transition }).transition = (snapshot, event, scope) => {
    const e = event as EventObject & { output?: unknown; atMinutes?: number };
    if (e.type.startsWith('xstate.after.')) return snapshot;
    if (e.type.startsWith('xstate.done.actor.') && !('output' in e)) return snapshot;
    if (e.type.startsWith('xstate.error.actor.') && !allowedErrors.includes(e.type)) return snapshot;
    clock.offsetMs = e.atMinutes !== undefined ? e.atMinutes * 60_000 : 0;
    try {
      return transition(snapshot, event, scope);
    } finally {
      clock.offsetMs = 0;
    }
  };
  return logic;
}

/** An effect's outcome as the graph offers it: `xstate.done.actor.NAME` with `output`, or `xstate.error.actor.NAME`. */
export type ModelEffectEvent = EventObject & { output?: unknown; error?: unknown };

export interface GraphSpec {
  machine: AnyStateMachine;
  settings: FlowSettings;
  /** User events offered in every state (the machine keeps those it accepts). */
  userEvents: readonly ModelEvent[];
  /** Outputs of the model's other effects (ticket lookup, exit read, hold claim), per state. */
  effectEvents?: (snapshot: AnyMachineSnapshot, clock: ParkingClock) => ModelEffectEvent[];
  /** `xstate.error.actor.*` events the host can produce. */
  allowedErrors?: readonly string[];
  outcomes: OutcomeOptions;
  /** What tells two states apart beyond their value (why they were reached). */
  distinguish: (context: Record<string, unknown>) => unknown[];
}

export type ModelPath = ReturnType<typeof getShortestPaths<AnyStateMachine>>[number];

/** Shortest paths to every distinguishable state, ending in a state that waits on the user (no effect running). */
export function modelPaths(spec: GraphSpec): ModelPath[] {
  const clock = new ParkingClock();
  const logic = graphLogic(spec.machine, clock, spec.allowedErrors ?? []);
  const paths: ModelPath[] = getShortestPaths<AnyStateMachine>(logic, {
    input: { settings: spec.settings, clock },
    events: (snapshot: AnyMachineSnapshot) => [
      ...spec.userEvents.filter((e) => snapshot.can(e)),
      ...transactionOutcomes(snapshot, spec.outcomes),
      ...(spec.effectEvents?.(snapshot, clock) ?? []),
    ],
    // A state reached through an effect's outcome also keeps that outcome, so that every outcome of every effect
    // gets a path even where two outcomes lead to the same state (a cancel and a DONE both end in idle).
    serializeState: (snapshot: AnyMachineSnapshot, event: EventObject | undefined) =>
      JSON.stringify([
        snapshot.value,
        ...spec.distinguish(snapshot.context as Record<string, unknown>),
        // A state waiting on a transaction is as many states as there are requests it may be waiting on.
        pendingRequest(snapshot)?.service ?? null,
        pendingRequest(snapshot)?.amountMinor ?? null,
        event !== undefined && isInternal(event) ? describeEvent(event) : null,
      ]),
  } as never);
  return paths.filter((p) => !waitingOnEffect(p.state as AnyMachineSnapshot));
}

function waitingOnEffect(snapshot: AnyMachineSnapshot): boolean {
  return Object.keys(snapshot.children as object).length > 0;
}

/** The steps of a path: each user event with the internal events (effect outcomes) it leads to. */
export interface ReplayStep {
  event: ModelEvent;
  /** Each outcome with the abstract snapshot it was taken in (the transaction's request is in its child). */
  effects: { event: EventObject; before: AnyMachineSnapshot }[];
  /** The abstract snapshot once the step's effects are done. */
  after: AnyMachineSnapshot;
}

export function replaySteps(path: ModelPath): ReplayStep[] {
  const steps = path.steps as { event: EventObject; state: AnyMachineSnapshot }[];
  const out: ReplayStep[] = [];
  for (let i = 1; i < steps.length; i += 1) {
    const step = steps[i]!;
    if (isInternal(step.event)) continue;
    const effects: ReplayStep['effects'] = [];
    let j = i + 1;
    for (; j < steps.length && isInternal(steps[j]!.event); j += 1)
      effects.push({ event: steps[j]!.event, before: steps[j - 1]!.state });
    out.push({ event: step.event as ModelEvent, effects, after: steps[j - 1]!.state });
  }
  return out;
}

function describeEvent(event: EventObject): string {
  const e = event as EventObject & Record<string, unknown>;
  if (e.type === DONE_TRANSACTION) {
    const o = e['output'] as TransactionResult;
    const detail = o.kind === 'declined' ? `:${o.reason}` : o.kind === 'card-error' ? `:${o.code}` : '';
    return `${o.kind}${detail}`;
  }
  if (e.type.startsWith('xstate.done.actor.')) {
    const name = e.type.slice('xstate.done.actor.'.length);
    const o = e['output'] as Record<string, unknown> | null;
    if (o === null) return `${name}:none`;
    // The exit's claim: `claimHold` for a hold claimed, `claimHold:none` (or another kind) otherwise.
    if (name === 'claimHold' && typeof o === 'object' && o['kind'] !== 'claimed')
      return `${name}:${String(o['kind'])}`;
    // The entry's lookup of the card's stay: `stayAtEntry:none`, `stayAtEntry:open`.
    if (name === 'stayAtEntry' && typeof o === 'object') return `${name}:${String(o['kind'])}`;
    if (typeof o === 'object' && 'found' in o) return `${name}:${o['found'] ? 'found' : 'not-found'}`;
    return name;
  }
  if (e.type.startsWith('xstate.error.actor.')) return `${e.type.slice('xstate.error.actor.'.length)}:error`;
  const args = Object.entries(e)
    .filter(([k]) => k !== 'type')
    .map(([k, v]) => `${k}=${String(v)}`);
  return args.length > 0 ? `${e.type}(${args.join(',')})` : e.type;
}

/** "START > CHOOSE_DURATION(minutes=60) > CONFIRM > approved → session". */
export function pathName(path: ModelPath): string {
  const events = (path.steps as { event: EventObject }[]).slice(1).map((s) => describeEvent(s.event));
  return `${events.join(' > ')} → ${JSON.stringify((path.state as AnyMachineSnapshot).value)}`;
}

// ---- the real side ----

export interface ModelHost {
  host: TerminalHost;
  clock: ParkingClock;
  config: Config;
  close(): Promise<void>;
}

/** The configuration of the model tests: fast simulated reader, short resolution delays, the given overrides. */
export function modelConfig(model: ParkingModel, overrides: ConfigInput = {}): Config {
  return parseConfig({
    ...overrides,
    terminal: { ...overrides.terminal, model },
    reader: {
      ...overrides.reader,
      kind: 'sim',
      activateTimeoutSeconds: 5,
      sim: { card: 'n2-contact', presentDelayMs: 5, ...overrides.reader?.sim },
    },
    gateway: { ...overrides.gateway, kind: 'sandbox' },
    journal: { ...overrides.journal, timeoutReversalDelayMs: 50, resolutionRetryMs: 100 },
  });
}

/** A TerminalHost on the embedded sandbox with its own temporary directory and a parking clock at CLOCK_BASE_MS. */
export async function startModelHost(config: Config): Promise<ModelHost> {
  const cwd = mkdtempSync(join(tmpdir(), 'pt-models-'));
  const clock = new ParkingClock();
  const host = await createTerminalHost(config, { logger: silentLogger(), cwd, parkingClock: clock });
  // The reader connects in the background; the welcome screen comes once it is there.
  await waitForScreen(host, (s) => s.customer.screen === 'idle', 'idle');
  return {
    host,
    clock,
    config,
    close: async () => {
      await host.close();
      rmSync(cwd, { recursive: true, force: true });
    },
  };
}

/**
 * A lane of `config` started as the terminal starts (recovery first, `begin`), against a sandbox of its own that the
 * test may look at (its ledger, its faults), with its own temporary directory and a parking clock at CLOCK_BASE_MS;
 * `cleanups` gets what closes them, in the order to run them reversed.
 */
export async function startSandboxLane(
  config: Config,
  cleanups: (() => Promise<void> | void)[],
): Promise<{ host: TerminalHost; sandbox: Sandbox; clock: ParkingClock }> {
  const sandbox = await startSandbox({ logger: silentLogger() });
  cleanups.push(() => sandbox.close());
  const cwd = mkdtempSync(join(tmpdir(), 'pt-lane-'));
  cleanups.push(() => rmSync(cwd, { recursive: true, force: true }));
  const clock = new ParkingClock();
  const host = await openTerminalHost(config, {
    logger: silentLogger(),
    cwd,
    parkingClock: clock,
    gatewayUrlOverride: sandbox.url,
  });
  cleanups.push(() => host.close());
  await host.begin();
  await waitForScreen(host, (s) => s.customer.screen === 'idle', 'idle');
  return { host, sandbox, clock };
}

export async function sendEvent(host: TerminalHost, event: ModelEvent): Promise<void> {
  const { atMinutes: _at, ...userEvent } = event;
  const r = await host.send(userEvent);
  if (!r.ok) throw new Error(`${event.type} refused: ${r.error.code} ${r.error.message}`);
}

/** The meter's customer starts, chooses `minutes` and confirms them: the card is then read for the pre-authorization. */
export async function confirmMeterStay(host: TerminalHost, minutes: number): Promise<void> {
  await sendEvent(host, { type: 'START' });
  await sendEvent(host, { type: 'CHOOSE_DURATION', minutes });
  await waitForScreen(host, (s) => s.customer.screen === 'confirm', 'confirm');
  await sendEvent(host, { type: 'CONFIRM' });
}

export async function waitForScreen(
  host: TerminalHost,
  accept: (s: TerminalSnapshot) => boolean,
  what: string,
  timeoutMs = 15_000,
): Promise<TerminalSnapshot> {
  const deadline = Date.now() + timeoutMs;
  const seen: string[] = [];
  for (;;) {
    const r = await host.snapshot();
    if (r.ok && accept(r.value)) return r.value;
    const shown = r.ok ? `${r.value.customer.screen} "${r.value.customer.message}"` : '?';
    if (seen.at(-1) !== shown) seen.push(shown);
    if (Date.now() > deadline) {
      const c = r.ok ? r.value.customer : undefined;
      throw new Error(
        `waiting for ${what}: shown ${seen.join(' → ')}; now screen ${c?.screen} "${c?.message}", machine ${JSON.stringify(
          (host.actor?.getSnapshot() as AnyMachineSnapshot | undefined)?.value,
        )}`,
      );
    }
    await new Promise((res) => setTimeout(res, 5));
  }
}

/** Waits until the host shows what the abstract snapshot shows: same screen, same message, same machine state. */
export async function waitForModelState(host: TerminalHost, expected: AnyMachineSnapshot): Promise<void> {
  const screen = screenOf(expected);
  // The machine carries a catalogue key; the host shows its en_GB text, which describeView gives too.
  const message = describeView(expected).message;
  const value = JSON.stringify(expected.value);
  await waitForScreen(
    host,
    (s) =>
      s.customer.screen === screen &&
      (screen === 'enter-ticket' || s.customer.message === message) &&
      JSON.stringify((host.actor?.getSnapshot() as AnyMachineSnapshot).value) === value,
    `${screen} "${message}" (${value})`,
    // Every step's effects finish within a couple of seconds here (reads of ~0.1 s, resolution delays of 0.05 s).
    6_000,
  );
}

/** Where the request of a service goes, for a fault that hits it and nothing else of the same step. */
export function faultFor(service: ServiceName, parentGatewayId?: string): Fault {
  switch (service) {
    case 'avr':
    case 'preauth':
    case 'sale':
      return { kind: 'timeout-502', path: '/pts/v2/payments', method: 'POST' };
    case 'credit':
      return { kind: 'timeout-502', path: '/pts/v2/credits', method: 'POST' };
    case 'incremental':
      return { kind: 'timeout-502', path: `/pts/v2/payments/${parentGatewayId ?? ''}`, method: 'PATCH' };
    case 'capture':
      return { kind: 'timeout-502', path: `/${parentGatewayId ?? ''}/captures`, method: 'POST' };
    case 'reversal':
      return { kind: 'timeout-502', path: `/${parentGatewayId ?? ''}/reversals`, method: 'POST' };
    case 'timeout-reversal':
    case 'refund-capture':
    case 'refund-payment':
    case 'void-capture':
    case 'void-payment':
    case 'void-refund':
    case 'void-credit':
    case 'timeout-void':
      throw new RangeError(`no fault placement for ${service}`);
  }
}

/** Approved authorizations of the host's embedded sandbox that still hold funds, by gateway id, in creation order. */
export function openAuthorizations(host: TerminalHost): string[] {
  return sandboxOpenAuthorizations(host.sandbox!);
}

/** Approved authorizations of `sandbox` that still hold funds, by gateway id, in creation order. */
export function sandboxOpenAuthorizations(sandbox: Pick<Sandbox, 'consistency'>): string[] {
  return sandbox
    .consistency({ requireResolved: true })
    .problems.filter((p) => p.rule === 'OPEN_AUTHORIZATION')
    .map((p) => p.id ?? '');
}

/**
 * What the customer paid according to the ledger, minor units: effective captures and sales, minus effective
 * standalone credits. Voided and unanswered-then-voided transactions count for nothing.
 */
export function chargedInLedger(host: TerminalHost): number {
  let total = 0;
  for (const tx of host.sandbox!.ledger().transactions) {
    if (tx.voided) continue;
    if (tx.kind === 'capture' || tx.kind === 'sale') total += tx.amounts.captured - tx.amounts.refunded;
    // A standalone credit records the money it pays out as `refunded` (src/sandbox/payments.ts).
    if (tx.kind === 'credit') total -= tx.amounts.refunded;
  }
  return total;
}

/** What the model says the customer paid along a path: approved captures and sales, minus approved credits. */
export function chargedByModel(path: ModelPath): number {
  let total = 0;
  for (const step of replaySteps(path))
    for (const effect of step.effects) {
      if (effect.event.type !== DONE_TRANSACTION) continue;
      const output = (effect.event as unknown as { output: TransactionResult }).output;
      const request = pendingRequest(effect.before);
      if (request === undefined) continue;
      // A meter's capture of its fee whose outcome is unknown: recovery voids it (the hold left in place) or finds it
      // standing, and the host's follow-up captures what no capture took — the fee is taken once either way.
      if (output.kind === 'unknown' && request.service === 'capture' && request.capturesFee === true)
        total += request.amountMinor;
      if (output.kind !== 'approved') continue;
      if (request.service === 'capture' || request.service === 'sale') total += request.amountMinor;
      if (request.service === 'credit') total -= request.amountMinor;
    }
  return total;
}

/** Settings of the abstract model: exactly those the host derives from the same configuration. */
export function settingsOf(config: Config): FlowSettings {
  return flowSettingsFromConfig(config);
}

/** Profiles of the simulator that read a card the terminal accepts; the tests rotate through them. */
export const APPROVING_CARDS = [
  'n2-contact',
  'n1-contact',
  'n2-contactless',
  'n1-contactless',
  'n2-msd',
  'n1-no-5f34',
] as const;

export interface ReplayHooks {
  /** Profile of the simulator for a read that the path approves. */
  card: string;
  /** Gateway id of the authorization a follow-on of this abstract snapshot targets (fault placement). */
  parentOf?: (m: ModelHost, before: AnyMachineSnapshot, request: TransactionRequest) => string | undefined;
  /** Realises the step's non-transaction effects; may return the event to send instead of the abstract one. */
  prepare?: (m: ModelHost, step: ReplayStep) => ModelEvent | undefined;
}

/**
 * Replays a path on the host: before each user event, the outcomes the path gives its transactions are arranged
 * (card profile, scheduled fault), the event is sent with `host.send`, and the host must come to the state the model
 * reaches, showing the same screen and message.
 */
export async function replayPath(m: ModelHost, path: ModelPath, hooks: ReplayHooks): Promise<void> {
  const { host } = m;
  for (const step of replaySteps(path)) {
    let card: string | undefined;
    let cancelWhilePresenting = false;
    const faults: Fault[] = [];
    for (const effect of step.effects) {
      if (effect.event.type !== DONE_TRANSACTION) continue;
      const output = (effect.event as unknown as { output: TransactionResult }).output;
      const request = pendingRequest(effect.before);
      if (request === undefined) throw new Error('an outcome without a pending transaction');
      if (request.read !== undefined && card === undefined) {
        card =
          output.kind === 'card-error'
            ? 'unsupported-network'
            : output.kind === 'cancelled'
              ? 'no-card'
              : hooks.card;
        cancelWhilePresenting = output.kind === 'cancelled';
      }
      if (output.kind === 'unknown')
        faults.push(faultFor(request.service, hooks.parentOf?.(m, effect.before, request)));
    }
    // A step that leaves the model waiting on the reader is followed by the customer's CANCEL: no card comes.
    if (step.effects.length === 0 && waitingOnEffect(step.after)) card = 'no-card';
    if (card !== undefined) host.simulator!.setCard(card);
    if (faults.length > 0) host.sandbox!.scheduleFaults(faults);
    const event = hooks.prepare?.(m, step) ?? step.event;
    // The parking clock stands still except here, and the session started on it: `atMinutes` after its start is
    // that much later than now.
    if (event.atMinutes !== undefined) m.clock.offsetMs += event.atMinutes * 60_000;
    await sendEvent(host, event);
    if (cancelWhilePresenting) {
      await waitForScreen(host, (s) => s.customer.screen === 'present-card', 'present-card');
      await sendEvent(host, { type: 'CANCEL' });
    }
    await waitForModelState(host, step.after);
  }
}

/**
 * The money checks after a path, in two stages.
 * 1. Where the path ends: the ledger is consistent, nothing is in flight, the only open authorizations are those the
 *    terminal still owns (`owned`: see each test file), and the customer paid what the model says.
 * 2. Once the path is finished as a customer would finish it (`finish`: a running meter session ended, the cars
 *    inside driven out, the screens dismissed): `consistency({ requireResolved: true })` finds nothing at all — no
 *    authorization neither captured nor reversed, no unknown outcome left standing — and nothing is in flight.
 * Every path of every model goes through both: `finish` is not optional.
 */
export async function ledgerVerdict(
  m: ModelHost,
  path: ModelPath,
  owned: () => string[],
  finish: (m: ModelHost) => Promise<void>,
): Promise<{
  consistency: unknown[];
  inFlight: number;
  openNotOwned: string[];
  ownedNotOpen: string[];
  charged: { ledger: number; model: number };
  finished: { unresolved: unknown[]; inFlight: number };
}> {
  const { host } = m;
  const consistency = host.sandbox!.consistency().problems;
  await host.settle(15_000);
  const inFlight = host.journal.counts().inFlight;
  const open = openAuthorizations(host);
  const mine = owned();
  const charged = { ledger: chargedInLedger(host), model: chargedByModel(path) };
  await finish(m);
  await host.settle(15_000);
  return {
    consistency,
    inFlight,
    openNotOwned: open.filter((id) => !mine.includes(id)),
    ownedNotOpen: mine.filter((id) => !open.includes(id)),
    charged,
    finished: {
      unresolved: host.sandbox!.consistency({ requireResolved: true }).problems,
      inFlight: host.journal.counts().inFlight,
    },
  };
}

export const CLEAN_VERDICT = (model: number) => ({
  consistency: [],
  inFlight: 0,
  openNotOwned: [],
  ownedNotOpen: [],
  charged: { ledger: model, model },
  finished: { unresolved: [], inFlight: 0 },
});

/**
 * Brings the host back to a resting screen (idle, or an open meter session) the way a customer would: a result
 * screen is dismissed (DONE: approved, declined, error, a tap-and-go entry), a choice not paid for is cancelled
 * (CANCEL).
 */
export async function dismissScreens(m: ModelHost): Promise<TerminalSnapshot> {
  for (;;) {
    const shown = await waitForScreen(
      m.host,
      (s) => s.customer.actions.length > 0,
      'a screen that takes events',
    );
    const { screen, actions } = shown.customer;
    const next = actions.includes('DONE')
      ? 'DONE'
      : screen !== 'idle' && screen !== 'session' && actions.includes('CANCEL')
        ? 'CANCEL'
        : undefined;
    if (next === undefined) return shown;
    await sendEvent(m.host, { type: next });
    await waitForScreen(m.host, (s) => s.customer.screen !== screen, `past ${screen}`);
  }
}

/** Waits for the result screen of an END_SESSION or a TAP_EXIT: every ending of either offers DONE. */
async function waitForResult(m: ModelHost, what: string): Promise<void> {
  await waitForScreen(m.host, (s) => s.customer.actions.includes('DONE'), what);
}

/** A path needs no finishing beyond its screens (kiosk, attended: nothing stays held after a payment). */
export async function finishScreens(m: ModelHost): Promise<void> {
  await dismissScreens(m);
}

/**
 * Meter: a session the path left open is ended at once (within the grace period: its holds are reversed), then
 * the screens are dismissed.
 */
export async function finishMeterSession(m: ModelHost): Promise<void> {
  const shown = await dismissScreens(m);
  if (shown.customer.screen !== 'session') return;
  await sendEvent(m.host, { type: 'END_SESSION' });
  await waitForResult(m, 'the end of the session');
  await dismissScreens(m);
}

/**
 * Tap-and-go: every car still inside drives out, each tapping one of `cards` (the profiles the path's entries used)
 * until the gateway holds nothing open; a card with no entry is sent to the pay station, which holds nothing. Like
 * a customer, each card is tried again when its exit did not go through (at most three rounds).
 */
export async function driveCarsOut(m: ModelHost, cards: readonly string[]): Promise<void> {
  await dismissScreens(m);
  for (let round = 0; round < 3; round += 1)
    for (const card of cards) {
      if (openAuthorizations(m.host).length === 0) return;
      m.host.simulator!.setCard(card);
      await sendEvent(m.host, { type: 'TAP_EXIT' });
      await waitForResult(m, 'the exit');
      await dismissScreens(m);
      await m.host.settle(15_000);
    }
}

/** A kiosk ticket printed `minutes` ago on the parking clock, in the terminal's time zone (serial 0042). */
export function ticketPrinted(clock: ParkingClock, minutes: number, timeZone: string): string {
  return `${localDateTime(new Date(clock.now() - minutes * 60_000), timeZone).slice(0, 12)}0042`;
}

/** A kiosk ticket inserted: the screen after its lookup (the fee to confirm, or a paid exit). */
export async function insertTicket(host: TerminalHost, ticket: string): Promise<TerminalSnapshot> {
  await sendEvent(host, { type: 'START' });
  await sendEvent(host, { type: 'ENTER_TICKET', ticket });
  return waitForScreen(host, (s) => ['confirm', 'approved'].includes(s.customer.screen), 'fee or paid exit');
}

/** The gateway's answer refusing a request unprocessed (400 INVALID_REQUEST with `reason`): nothing moved. */
export function refusedUnprocessed(reason: string): Outcome {
  return {
    kind: 'rejected',
    reason,
    details: [],
    httpStatus: 400,
    body: { status: 'INVALID_REQUEST', reason },
  };
}
