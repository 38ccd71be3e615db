import { fdatasync, fdatasyncSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createActor, SimulatedClock } from 'xstate';
import { createReader } from '../../devices/index.js';
import { parseConfig } from '../config/index.js';
import { provideFlowEffects, type SubmitOutcome, type TransactionResult } from '../flows/index.js';
import { testSettings } from '../flows/testing/fake-terminal.js';
import { createAuthenticator, createGatewayClient } from '../gateway/index.js';
import { classifyPaymentAnswer } from '../gateway/outcome.js';
import type { PreparedRequest } from '../gateway/services/types.js';
import {
  AuthorizationDataStore,
  FollowUpStore,
  HoldStore,
  JournaledSender,
  OfflineQueue,
  openJournal,
  staticKeyProvider,
  TimeoutRecovery,
  type OpenJournalOptions,
  type OutgoingRequest,
  type SqliteJournal,
  type TransmitOutcome,
} from '../journal/index.js';
import { silentLogger } from '../log/index.js';
import { CardStore } from './card-store.js';
import { createFlowEffects } from './flow-effects.js';
import { journalFollowOnStore } from './follow-on-store.js';
import { SANDBOX_SHARED_SECRET, toSendOutcome } from './gateway-adapters.js';
import { PaymentRouter } from './payment-router.js';
import { PaymentService } from './payments.js';
import { GatewayResolutionBuilder } from './resolver.js';

/**
 * A sale whose machine gave up waiting (its `submitTimeout`) while the request was out, and that the gateway approves
 * afterwards: the machine told the customer the outcome is unknown and resolves nothing itself (FlowEffects.submit), so
 * the host's journal recovery must undo the approval — once, by its timeout void, and after a crash too. The real
 * transaction machine on a simulated clock, the host's effects, router, payment service, journal, sender and recovery;
 * only the network is faked (the real classifier reads its answers), and each answer comes when the test says.
 */

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const SUBMIT_TIMEOUT_MS = 100_000;

function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * The gateway: holds the answer of the sale (or pre-authorization) until `approveSale`; answers its undo (a timeout
 * void, the void of an approved sale, the reversal of an approved pre-authorization) at once, or never (`voidHangs`).
 */
function lateGateway(options: { voidHangs: boolean; reversalRefused?: string }) {
  const sent: OutgoingRequest[] = [];
  const saleOut = deferred();
  const saleAnswer = deferred();
  const voidOut = deferred();
  const answer = (request: OutgoingRequest, body: unknown): TransmitOutcome =>
    toSendOutcome(
      classifyPaymentAnswer(request as unknown as PreparedRequest, 201, Buffer.from(JSON.stringify(body))),
    );
  return {
    sent,
    saleOut: saleOut.promise,
    voidOut: voidOut.promise,
    approveSale: () => saleAnswer.resolve(),
    transmitter: {
      async transmit(request: OutgoingRequest): Promise<TransmitOutcome> {
        sent.push(request);
        if (request.service === 'sale' || request.service === 'preauth') {
          saleOut.resolve();
          await saleAnswer.promise;
          return answer(request, {
            id: `G-${request.service.toUpperCase()}`,
            status: 'AUTHORIZED',
            orderInformation: { amountDetails: { authorizedAmount: '8.50', currency: 'GBP' } },
          });
        }
        if (request.service === 'timeout-void' || request.service === 'void-payment') {
          voidOut.resolve();
          if (options.voidHangs) return new Promise<TransmitOutcome>(() => undefined);
          return answer(request, { id: `G-VOID-${sent.length}`, status: 'VOIDED' });
        }
        if (request.service === 'reversal') {
          voidOut.resolve();
          if (options.reversalRefused !== undefined)
            return {
              kind: 'rejected',
              reason: options.reversalRefused,
              httpStatus: 400,
            };
          return answer(request, {
            id: `G-REVERSAL-${sent.length}`,
            status: 'REVERSED',
            reversalAmountDetails: { reversedAmount: '8.50', currency: 'GBP' },
          });
        }
        throw new Error(`unexpected ${request.service}`);
      },
    },
  };
}

const config = parseConfig({});
const defaultConfig = config;

function gatewayClient() {
  const gateway = createGatewayClient({
    baseUrl: 'http://127.0.0.1:9',
    merchantId: config.gateway.merchantId,
    auth: createAuthenticator(config.gateway.auth, config.gateway.merchantId, {
      defaultSharedSecret: SANDBOX_SHARED_SECRET,
    }),
    timeouts: config.gateway.timeouts,
    logger: silentLogger(),
  });
  cleanups.push(() => gateway.close());
  return gateway;
}

function recoveryOf(journal: SqliteJournal, sender: JournaledSender) {
  return new TimeoutRecovery(
    journal,
    new GatewayResolutionBuilder(gatewayClient(), config, () => new Date()),
    sender,
    {
      timeoutReversalDelayMs: config.journal.timeoutReversalDelayMs,
      retryMs: 10,
    },
  );
}

/** The host's side of `submit`, wired as TerminalHost wires it, over a journal in `dir`. */
function host(
  dir: string,
  transmitter: { transmit(r: OutgoingRequest): Promise<TransmitOutcome> },
  config = defaultConfig,
  failpoint?: (name: string) => void,
  journalOptions: OpenJournalOptions = {},
) {
  const journal = openJournal(join(dir, 'journal.db'), journalOptions);
  const logger = silentLogger();
  const now = () => new Date();
  const cards = new CardStore(Buffer.alloc(32, 7));
  const sender = new JournaledSender(journal, transmitter, failpoint ? { failpoint } : {});
  /** What the operator's status bar is told of the gateway. */
  const health: string[] = [];
  const payments = new PaymentService({
    config,
    gateway: gatewayClient(),
    sender,
    journal,
    cards,
    logger,
    now,
    followOns: journalFollowOnStore(new AuthorizationDataStore(journal, Buffer.alloc(32, 5)), 'A'),
    health: {
      gatewayAnswered: () => health.push('answered'),
      gatewayUnreachable: (reason) => health.push(`unreachable ${reason}`),
    },
  });
  const recovery = recoveryOf(journal, sender);
  const holds = new HoldStore(journal);
  const followUps = new FollowUpStore(journal);
  const offline = new OfflineQueue(journal, {
    policy: config.offline.policy,
    limits: config.offline,
    keyProvider: staticKeyProvider(Buffer.alloc(32, 3)),
    now,
    logger,
  });
  const router = new PaymentRouter({
    config,
    journal,
    payments,
    recovery,
    offline,
    followUps,
    holds,
    cards,
    logger,
    now,
    authorizationReversed: () => undefined,
    reversalRefusedUnwaited: () => undefined,
    changed: () => undefined,
  });
  const submits: Promise<SubmitOutcome>[] = [];
  const unused = (): never => {
    throw new Error('not used by a sale without a card read');
  };
  const effects = createFlowEffects({
    config,
    reader: {} as never,
    cards,
    payments,
    dcc: {} as never,
    holds,
    holdWatch: unused,
    holdClosedToExit: unused,
    takingCards: () => true,
    submit: (request, signal) => {
      const submitted = router.submit(request, signal);
      submits.push(submitted);
      return submitted;
    },
    findTransaction: () => null,
    captureOf: () => null,
    receipt: () => undefined,
    feeNotComputable: () => undefined,
    entryRefused: () => undefined,
    stayOutstayed: () => undefined,
    outstayedStayLeft: unused,
    inOneCommit: unused,
    stayPaid: () => undefined,
    links: {} as never,
    waitFactor: () => 1,
    cardWaitSeconds: () => 60,
    printLink: () => undefined,
    altPayments: unused,
  });
  return { journal, sender, recovery, cards, effects, submits, health, offline, followUps };
}

async function cardRead() {
  const reader = createReader(
    { ...config.reader, sim: { ...config.reader.sim, presentDelayMs: 0 } },
    { logger: silentLogger(), timeZone: config.terminal.timezone },
  );
  await reader.connect();
  cleanups.push(() => reader.close());
  return reader.activate({
    amountMinor: 850,
    otherAmountMinor: 0,
    currencyNumeric: '826',
    countryNumeric: '826',
    transactionType: '00',
    timeoutSeconds: 30,
  });
}

/**
 * Runs the real transaction machine for an 8.50 sale with the host's effects: the sale goes out, the machine's
 * `submitTimeout` passes, then the gateway approves. Resolves with what the machine reported and the sale's entry.
 */
async function saleApprovedAfterTheMachineGaveUp(options: { voidHangs: boolean }) {
  const dir = mkdtempSync(join(tmpdir(), 'pt-late-approval-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const gateway = lateGateway(options);
  const terminal = host(dir, gateway.transmitter);
  cleanups.push(() => terminal.journal.close());
  const card = terminal.cards.hold(await cardRead());
  const clock = new SimulatedClock();
  const { actor, reported } = saleMachine(terminal, card.ref, clock);
  actor.start();
  await gateway.saleOut;
  // The machine's backstop passes while the sale is out (its journal write or the token path took that long).
  clock.increment(SUBMIT_TIMEOUT_MS);
  const result = await reported;
  gateway.approveSale();
  await terminal.submits[0];
  const saleTx = gateway.sent[0]?.transactionId ?? '';
  const entry = terminal.journal.findByTransactionId(saleTx);
  if (!entry) throw new Error('the sale was not journaled');
  return { dir, gateway, terminal, result, saleTx, entryId: entry.id };
}

/**
 * The transaction machine of an 8.50 sale (or pre-authorization) of the card read `cardRef` on `terminal`, and its
 * report when it ends.
 */
function saleMachine(
  terminal: ReturnType<typeof host>,
  cardRef: string,
  clock: SimulatedClock,
  service: 'sale' | 'preauth' = 'sale',
) {
  const actor = createActor(provideFlowEffects.transaction(terminal.effects), {
    input: {
      settings: testSettings({ timing: { ...testSettings().timing, submitTimeoutMs: SUBMIT_TIMEOUT_MS } }),
      request: {
        service,
        comments: service === 'sale' ? 'Parking Sale' : 'Parking Auth',
        amountMinor: 850,
        cardRef,
        includeEmvTags: false,
        acceptPartial: false,
        cancellable: true,
      },
    },
    clock,
  });
  const reported = new Promise<TransactionResult>((resolve) =>
    actor.subscribe({ complete: () => resolve(actor.getSnapshot().output as TransactionResult) }),
  );
  return { actor, reported };
}

describe('a sale approved after the machine stopped waiting for it', () => {
  it('is voided by recovery, once, and the customer was told it is being checked', async () => {
    const { gateway, terminal, result, saleTx, entryId } = await saleApprovedAfterTheMachineGaveUp({
      voidHangs: false,
    });

    // The customer: no answer in time, the payment is being checked (nothing resolved by the machine).
    expect(result).toMatchObject({ kind: 'unknown', resolved: false });
    const item = await terminal.recovery.recover(entryId);
    await terminal.sender.drain();

    // Nobody is left to use or undo the late approval: recovery voids it by the sale's own rule, exactly once.
    expect(item).toMatchObject({ resolution: 'timeout-void', needsOperator: false });
    expect(gateway.sent.map((r) => `${r.service}:${r.referencedTransactionId ?? r.transactionId}`)).toEqual([
      `sale:${saleTx}`,
      `timeout-void:${saleTx}`,
    ]);
    expect(terminal.journal.get(entryId)).toMatchObject({
      state: 'resolved',
      resolution: 'timeout-void',
      gatewayId: 'G-SALE',
      status: 'AUTHORIZED',
    });
    expect(terminal.journal.inFlight()).toEqual([]);
    // The gateway answered: the operator's status bar does not show it unreachable.
    expect(terminal.health).toEqual(['answered']);
    // Nothing more to do: a sweep finds no root, and the entry's recovery is over.
    expect(terminal.recovery.rootsInFlight()).toEqual([]);
  });

  it('is still voided when the terminal stops before the void is answered: the journal left it in flight', async () => {
    const { dir, gateway, terminal, saleTx, entryId } = await saleApprovedAfterTheMachineGaveUp({
      voidHangs: true,
    });
    // The void goes out and its answer never comes: the process dies there (or recovery has not started yet).
    await Promise.race([gateway.voidOut, terminal.recovery.recover(entryId)]);
    terminal.journal.close();

    // The next start: recovery before the first card, from the journal alone.
    const restarted = lateGateway({ voidHangs: false });
    const journal = openJournal(join(dir, 'journal.db'));
    cleanups.push(() => journal.close());
    expect(journal.get(entryId)).toMatchObject({ state: 'unknown', gatewayId: 'G-SALE' });
    const report = await recoveryOf(
      journal,
      new JournaledSender(journal, restarted.transmitter),
    ).recoverAll();

    expect(report.resolved.map((i) => [i.entryId, i.resolution])).toEqual([[entryId, 'timeout-void']]);
    expect(restarted.sent.map((r) => `${r.service}:${r.referencedTransactionId}`)).toEqual([
      `timeout-void:${saleTx}`,
    ]);
    expect(journal.get(entryId)).toMatchObject({ state: 'resolved', resolution: 'timeout-void' });
    expect(journal.inFlight()).toEqual([]);
  });
});

describe('a sale whose connection fails after the machine stopped waiting for it', () => {
  it('is not stored offline: nobody waits for it, and a forward would charge a customer told nothing was taken', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pt-late-offline-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const sent: OutgoingRequest[] = [];
    const saleOut = deferred();
    const connectionFails = deferred();
    const transmitter = {
      async transmit(request: OutgoingRequest): Promise<TransmitOutcome> {
        sent.push(request);
        saleOut.resolve();
        // The token path or the connect hangs past the machine's backstop, then the gateway proves unreachable.
        await connectionFails.promise;
        return { kind: 'not-sent', reason: 'GW_CONNECTION' };
      },
    };
    const terminal = host(dir, transmitter, parseConfig({ offline: { policy: 'prefer-online' } }));
    cleanups.push(() => terminal.journal.close());
    const card = terminal.cards.hold(await cardRead());
    const clock = new SimulatedClock();
    const { actor, reported } = saleMachine(terminal, card.ref, clock);
    actor.start();
    await saleOut.promise;
    clock.increment(SUBMIT_TIMEOUT_MS);
    const result = await reported;
    connectionFails.resolve();
    const outcome = await terminal.submits[0];

    // The customer was not told the sale was taken.
    expect(result.kind).not.toBe('approved');
    // Nothing waits in the offline queue to be forwarded (and charged) later.
    expect(outcome).not.toMatchObject({ reason: 'OFFLINE_STORED' });
    expect(terminal.offline.list()).toEqual([]);
  });
});

describe('a sale approved just before the machine stops waiting, while its outcome is being journaled', () => {
  it('does not stand unanswered: nobody told the customer it was paid, and nobody undoes it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pt-late-commit-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const gateway = lateGateway({ voidHangs: false });
    const clock = new SimulatedClock();
    // The machine's backstop passes once the approval is in hand, while its outcome's commit (a disk sync on the
    // thread pool, the group commit's wait) is under way: a graceful stop there is the same.
    const terminal = host(dir, gateway.transmitter, defaultConfig, (name) => {
      if (name === 'gateway.answered') clock.increment(SUBMIT_TIMEOUT_MS);
    });
    cleanups.push(() => terminal.journal.close());
    const card = terminal.cards.hold(await cardRead());
    const { actor, reported } = saleMachine(terminal, card.ref, clock);
    actor.start();
    await gateway.saleOut;
    gateway.approveSale();
    const result = await reported;
    await terminal.submits[0];
    await terminal.sender.drain();
    const entry = terminal.journal.findByTransactionId(gateway.sent[0]?.transactionId ?? '');

    // The customer was told the payment is being checked, not that it was taken.
    expect(result).toMatchObject({ kind: 'unknown', resolved: false });
    // So the approval must be recovery's to undo (in flight, or undone already), not left standing as approved.
    expect(entry?.state).not.toBe('approved');
  });
});

/**
 * Runs the real transaction machine for an 8.50 sale whose machine stops waiting (its `submitTimeout`; a graceful stop
 * is the same) only once the approval's outcome is written: `sync` while the disk sync of the commit that holds it is
 * under way (another request is out, so the log is synced on the thread pool), `recorded` once that commit returned,
 * before the host's side of `submit` resumes. Resolves once the sale's submit settled, with what the machine reported.
 */
async function saleAbandonedAfterItsOutcomeWrite(
  abortAt: 'sync' | 'recorded',
  options: { voidHangs: boolean; reversalRefused?: string },
  service: 'sale' | 'preauth' = 'sale',
) {
  const dir = mkdtempSync(join(tmpdir(), 'pt-late-commit-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const gateway = lateGateway(options);
  const clock = new SimulatedClock();
  let armed = false;
  const backstop = (): void => {
    if (!armed) return;
    armed = false;
    clock.increment(SUBMIT_TIMEOUT_MS);
  };
  const terminal = host(
    dir,
    gateway.transmitter,
    defaultConfig,
    (name) => {
      if (abortAt === 'recorded' && name === 'journal.outcome') backstop();
    },
    {
      logSync: {
        background: (fd, done) => {
          // The outcome's write is made and its commit is not on disk yet: the machine's wait ends here.
          if (abortAt === 'sync') backstop();
          fdatasync(fd, done);
        },
        inline: fdatasyncSync,
      },
    },
  );
  cleanups.push(() => terminal.journal.close());
  const card = terminal.cards.hold(await cardRead());
  const { actor, reported } = saleMachine(terminal, card.ref, clock, service);
  actor.start();
  await gateway.saleOut;
  // Another request is out whose answer will be journaled: the sale's outcome is synced on the thread pool.
  const another = terminal.journal.expectWrite();
  armed = true;
  gateway.approveSale();
  const result = await reported;
  const submitted = await terminal.submits[0];
  another();
  const saleTx = gateway.sent[0]?.transactionId ?? '';
  const entry = terminal.journal.findByTransactionId(saleTx);
  if (!entry) throw new Error('the sale was not journaled');
  return { dir, gateway, terminal, result, submitted, saleTx, entryId: entry.id };
}

describe('a sale approved and journaled approved, when its machine stops waiting before it hears so', () => {
  for (const abortAt of ['sync', 'recorded'] as const) {
    it(`is voided by the host, once (machine stopped ${abortAt === 'sync' ? "during the outcome's disk sync" : 'after the commit, before the host resumed'})`, async () => {
      const { gateway, terminal, result, saleTx, entryId } = await saleAbandonedAfterItsOutcomeWrite(
        abortAt,
        {
          voidHangs: false,
        },
      );
      await terminal.sender.drain();

      // The customer was told the payment is being checked, not that it was taken.
      expect(result).toMatchObject({ kind: 'unknown', resolved: false });
      // The journal keeps the approval as it was committed (a final entry never returns in flight) …
      expect(terminal.journal.get(entryId)).toMatchObject({ state: 'approved', gatewayId: 'G-SALE' });
      // … and the sale does not stand: the host voids it, by the sale's own undo, exactly once, journaled first.
      expect(gateway.sent.map((r) => r.service)).toEqual(['sale', 'void-payment']);
      expect(terminal.journal.referencing(saleTx)).toMatchObject([
        { service: 'void-payment', state: 'approved', parentGatewayId: 'G-SALE' },
      ]);
      expect(terminal.journal.inFlight()).toEqual([]);
      expect(terminal.recovery.rootsInFlight()).toEqual([]);
    });
  }

  it('as a pre-authorization, is reversed by the host, once, with the tags of its card read', async () => {
    const { gateway, terminal, result, saleTx } = await saleAbandonedAfterItsOutcomeWrite(
      'sync',
      { voidHangs: false },
      'preauth',
    );
    await terminal.sender.drain();

    expect(result).toMatchObject({ kind: 'unknown', resolved: false });
    expect(gateway.sent.map((r) => r.service)).toEqual(['preauth', 'reversal']);
    // gateway.md §7: a reversal of an EMV authorization carries its tags.
    const tags = (r?: OutgoingRequest): unknown =>
      (JSON.parse(r?.body.toString() ?? '{}') as { pointOfSaleInformation?: { emv?: { tags?: string } } })
        .pointOfSaleInformation?.emv?.tags;
    expect(tags(gateway.sent[1])).toBe(tags(gateway.sent[0]));
    expect(tags(gateway.sent[1])).toEqual(expect.any(String));
    expect(terminal.journal.referencing(saleTx)).toMatchObject([
      { service: 'reversal', state: 'approved', parentGatewayId: 'G-PREAUTH' },
    ]);
    expect(terminal.journal.unsettledAuthorizations()).toEqual([]);
    expect(terminal.journal.inFlight()).toEqual([]);
  });

  it('as a pre-authorization whose reversal is refused for now, leaves the host a follow-up that sends it again', async () => {
    const { gateway, terminal, saleTx } = await saleAbandonedAfterItsOutcomeWrite(
      'sync',
      { voidHangs: false, reversalRefused: 'PROCESSOR_UNAVAILABLE' },
      'preauth',
    );
    await terminal.sender.drain();

    expect(gateway.sent.map((r) => r.service)).toEqual(['preauth', 'reversal']);
    expect(terminal.journal.referencing(saleTx)).toMatchObject([
      { service: 'reversal', state: 'rejected', reason: 'PROCESSOR_UNAVAILABLE' },
    ]);
    // The authorization still holds the customer's funds: the host's follow-ups reverse it again later.
    expect(terminal.followUps.open()).toMatchObject([
      {
        kind: 'reverse-authorization',
        authorizationTransactionId: saleTx,
        gatewayId: 'G-PREAUTH',
        includeEmvTags: true,
      },
    ]);
  });

  it('is voided once after a crash while its void is out: recovery completes the void, nothing is sent twice', async () => {
    const { dir, gateway, saleTx, terminal } = await saleAbandonedAfterItsOutcomeWrite('sync', {
      voidHangs: true,
    });
    // The void is journaled and out; its answer never comes: the process dies there (with no void at all, the
    // sender has nothing left to drain).
    await Promise.race([gateway.voidOut, terminal.sender.drain()]);
    terminal.journal.close();

    // The next start: recovery before the first card, from the journal alone.
    const restarted = lateGateway({ voidHangs: false });
    const journal = openJournal(join(dir, 'journal.db'));
    cleanups.push(() => journal.close());
    const undo = journal.referencing(saleTx);
    expect(undo).toMatchObject([{ service: 'void-payment', state: 'pending' }]);
    const report = await recoveryOf(
      journal,
      new JournaledSender(journal, restarted.transmitter),
    ).recoverAll();

    // The void's own recovery plan: a timeout void of the sale, keyed by its transactionId; no second void-payment.
    expect(report.resolved.map((i) => [i.entryId, i.resolution])).toEqual([[undo[0]?.id, 'timeout-void']]);
    expect(restarted.sent.map((r) => `${r.service}:${r.referencedTransactionId}`)).toEqual([
      `timeout-void:${saleTx}`,
    ]);
    expect(journal.inFlight()).toEqual([]);
  });
});

describe('the undo of a sale the customer cancelled, when the machine stops before the undo leaves', () => {
  it('still goes out: left unsent, the sale stands approved with nobody to undo it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pt-undo-stop-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const sent: OutgoingRequest[] = [];
    const saleOut = deferred();
    const saleAnswer = deferred();
    const answer = (request: OutgoingRequest, body: unknown): TransmitOutcome =>
      toSendOutcome(
        classifyPaymentAnswer(request as unknown as PreparedRequest, 201, Buffer.from(JSON.stringify(body))),
      );
    const transmitter = {
      async transmit(request: OutgoingRequest): Promise<TransmitOutcome> {
        sent.push(request);
        if (request.service === 'sale' || request.service === 'preauth') {
          saleOut.resolve();
          await saleAnswer.promise;
          return answer(request, {
            id: `G-${request.service.toUpperCase()}`,
            status: 'AUTHORIZED',
            orderInformation: { amountDetails: { authorizedAmount: '8.50', currency: 'GBP' } },
          });
        }
        return answer(request, { id: `G-${request.service}`, status: 'VOIDED' });
      },
    };
    let begun = 0;
    let stop = (): void => undefined;
    // The terminal stops (a graceful stop) once the undo's entry is durably begun, before its first byte.
    const terminal = host(dir, transmitter, defaultConfig, (name) => {
      if (name === 'journal.begin' && ++begun === 2) stop();
    });
    cleanups.push(() => terminal.journal.close());
    const card = terminal.cards.hold(await cardRead());
    const { actor } = saleMachine(terminal, card.ref, new SimulatedClock());
    stop = () => actor.stop();
    actor.start();
    await saleOut.promise;
    // The customer cancels while the sale is out; it is approved: the machine undoes it with a void.
    actor.send({ type: 'CANCEL' });
    saleAnswer.resolve();
    await terminal.submits[0];
    while (terminal.submits.length < 2) await new Promise<void>((r) => setImmediate(r));
    await terminal.submits[1];
    await terminal.sender.drain();

    const sale = terminal.journal.findByTransactionId(sent[0]?.transactionId ?? '');
    expect(sale?.state).toBe('approved');
    // The customer cancelled and was never charged as far as anyone told them: the undo must reach the gateway.
    expect(sent.map((r) => r.service)).toEqual(['sale', 'void-payment']);
  });
});
