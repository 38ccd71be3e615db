import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Config } from '../config/index.js';
import { staticKeyProvider } from '../journal/encryption.js';
import { openJournal, type SqliteJournal } from '../journal/journal.js';
import { OfflineQueue } from '../journal/offline-queue.js';
import { TimeoutRecovery, type ResolutionBuilder } from '../journal/recovery.js';
import { saleEntry } from '../journal/testing/entries.js';
import { JournaledSender, type OutgoingRequest, type Transmitter } from '../journal/sender.js';
import { createLogger, silentLogger, type Logger } from '../log/index.js';
import { BackgroundWork } from './background-work.js';
import type { OpenAuthorizations } from './open-authorizations.js';
import type { PaymentRouter } from './payment-router.js';

const open: SqliteJournal[] = [];
afterEach(() => {
  for (const j of open.splice(0)) j.close();
});

const builder: ResolutionBuilder = {
  timeoutReversal: (t) => ({
    service: 'timeout-reversal',
    method: 'POST',
    path: '/pts/v2/reversals',
    body: Buffer.from('{}'),
    comments: 'REVERSAL Timeout',
    referencedTransactionId: t.transactionId,
    amountMinor: t.amountMinor!,
    currency: t.currency!,
    moneyMoving: true,
  }),
  timeoutVoid: (t) => ({
    service: 'timeout-void',
    method: 'POST',
    path: '/pts/v2/voids',
    body: Buffer.from('{}'),
    comments: 'VOID Timeout',
    referencedTransactionId: t.transactionId,
    moneyMoving: true,
  }),
};

const turn = (): Promise<void> => new Promise((r) => setImmediate(r));
/** A turn of the event loop that lets a timer of a millisecond fire. */
const timerTurn = (): Promise<void> => new Promise((r) => setTimeout(r, 1));

/** The background work of a host, with recovery behind its router and no follow-ups. */
function backgroundWork(deps: {
  journal: SqliteJournal;
  offline: OfflineQueue;
  sender: JournaledSender;
  recovery: TimeoutRecovery;
  logger?: Logger;
  gatewaySeen?: (online: boolean, reason?: string, host?: string) => void;
}): { background: BackgroundWork; sweep: () => void } {
  const { recovery } = deps;
  const background = new BackgroundWork({
    ...deps,
    config: {
      journal: { resolutionRetryMs: 5_000 },
      offline: { forwardConcurrency: 4 },
    } as unknown as Config,
    router: {
      recoverInBackground: (id: number) => void recovery.recover(id).catch(() => undefined),
      forwardedOutcome: () => undefined,
    } as unknown as PaymentRouter,
    openAuthorizations: { runFollowUps: () => Promise.resolve() } as unknown as OpenAuthorizations,
    logger: deps.logger ?? silentLogger(),
    ready: () => true,
    gatewaySeen: deps.gatewaySeen ?? (() => undefined),
    changed: () => undefined,
  });
  // The periodic sweep, run when the test says (its timer is not started).
  const sweep = (): void => (background as unknown as { sweep(): void }).sweep();
  return { background, sweep };
}

/** The offline queue of `journal`, holding one stored chip sale (`off-1`, 10.00 GBP). */
function queueWithOnePayment(journal: SqliteJournal): OfflineQueue {
  const offline = new OfflineQueue(journal, {
    policy: 'prefer-online',
    limits: {
      maxTransactionMinor: 10_000,
      maxTotalMinorPerCurrency: 100_000,
      maxCount: 10,
      maxAgeHours: 24,
      maxCountPerCard: 2,
    },
    keyProvider: staticKeyProvider(Buffer.alloc(32, 7)),
  });
  offline.store({
    transactionId: 'off-1',
    service: 'sale',
    comments: 'Parking Sale',
    method: 'POST',
    path: '/pts/v2/payments',
    body: Buffer.from('{"sale":1}'),
    amountMinor: 1_000,
    currency: 'GBP',
    entryMode: 'contact',
    fingerprint: 'card-off-1',
  });
  return offline;
}

describe('background work', () => {
  it("tells the terminal's status that the gateway is unreachable when forwarding finds it so, though nothing left", async () => {
    const journal = openJournal(':memory:');
    open.push(journal);
    const offline = queueWithOnePayment(journal);
    // The network is down: no connection opens, so nothing is claimed or sent.
    let up = false;
    const sender = new JournaledSender(journal, {
      transmit: () => Promise.resolve({ kind: 'approved', status: 'AUTHORIZED', gatewayId: 'g1' }),
      reachable: () =>
        Promise.resolve(up ? { reachable: true } : { reachable: false, host: 'gateway 127.0.0.1:9' }),
    });
    const recovery = new TimeoutRecovery(journal, builder, sender, {
      timeoutReversalDelayMs: 60_000,
      retryMs: 1_000,
    });
    const seen: [boolean, string | undefined, string | undefined][] = [];
    const { background } = backgroundWork({
      journal,
      offline,
      sender,
      recovery,
      gatewaySeen: (online, reason, host) => seen.push([online, reason, host]),
    });
    expect(await background.forward()).toMatchObject({ forwarded: 0, remaining: 1 });
    // The status names the host that did not open.
    expect(seen).toEqual([[false, 'GW_CONNECTION', 'gateway 127.0.0.1:9']]);
    up = true;
    expect(await background.forward()).toMatchObject({ forwarded: 1, remaining: 0 });
    expect(seen).toEqual([
      [false, 'GW_CONNECTION', 'gateway 127.0.0.1:9'],
      [true, undefined, undefined],
    ]);
  });

  /**
   * A claimed offline forward is committed (visible, marked sent) while that commit's log is synced on the thread
   * pool (another request's outcome is expected) and the event loop turns: a sweep then must find it owned, or it
   * hands it to recovery, whose timeout void of the sale races the forward that sends it anyway.
   */
  it('never hands recovery an offline forward whose claim is committed but not yet sent', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'background-work-'));
    // The thread pool's log sync is held until the test lets it go (a slow disk: a few ms in real life).
    let releaseSync: (() => void) | undefined;
    const journal = openJournal(join(dir, 'journal.db'), {
      logSync: {
        background: (_fd, done) => {
          releaseSync = () => done(null);
        },
        inline: () => undefined,
      },
    });
    open.push(journal);
    const offline = queueWithOnePayment(journal);
    const sent: string[] = [];
    const transmitter: Transmitter = {
      transmit(r: OutgoingRequest) {
        sent.push(`${r.service}:${r.transactionId ?? r.referencedTransactionId}`);
        return Promise.resolve(
          r.service === 'timeout-void'
            ? { kind: 'approved', status: 'VOIDED', gatewayId: 'v1' }
            : { kind: 'approved', status: 'AUTHORIZED', gatewayId: 'g1', authorizedMinor: 1_000 },
        );
      },
    };
    const sender = new JournaledSender(journal, transmitter);
    const recovery = new TimeoutRecovery(journal, builder, sender, {
      timeoutReversalDelayMs: 60_000,
      retryMs: 1_000,
    });
    const { background, sweep } = backgroundWork({ journal, offline, sender, recovery });

    // Another request of the terminal is out (a live payment, another forward): its outcome's write is expected.
    const otherRequestAnswered = journal.expectWrite();
    const forwarding = background.forward();
    // The claim is committed (a forward's write may wait a millisecond for others: groupCommit.backgroundWaitMs); its
    // log sync is on the thread pool; the event loop turns (timers run: the sweep).
    for (let i = 0; i < 50 && !releaseSync; i++) await timerTurn();
    expect(releaseSync).toBeDefined();
    expect(journal.findByTransactionId('off-1')?.state).toBe('sent');
    sweep();
    otherRequestAnswered();
    // The sync finishes: the forward goes out, and so would whatever the sweep started.
    for (let i = 0; i < 200; i++) {
      const r = releaseSync;
      releaseSync = undefined;
      r?.();
      await (i % 10 === 0 ? timerTurn() : turn());
    }
    await forwarding;
    await sender.drain();

    // One request for this payment: the forward. No timeout void of a payment whose forward is on its way.
    expect(sent).toEqual(['sale:off-1']);
    expect(offline.findByTransactionId('off-1')?.state).toBe('approved');
    expect(journal.inFlight()).toEqual([]);
  });

  /**
   * While the gateway is down (every timeout void answered 502), recovery retries an entry on its own schedule, each
   * attempt a journal entry left unknown. Were the sweep to take each such attempt as an entry of its own, each would
   * start a run whose attempts the next sweep took again: the timeout voids for one sale would double every round.
   */
  it('leaves the attempts of a recovery run to that run: one timeout void per retry while the gateway is down', async () => {
    const journal = openJournal(':memory:');
    open.push(journal);
    // The sale whose answer was lost.
    const sale = journal.begin(saleEntry('sale-1'));
    journal.recordOutcome(sale.id, { state: 'unknown', httpStatus: 502, reason: 'GW_SERVER' });
    let voids = 0;
    const sender = new JournaledSender(journal, {
      transmit() {
        voids += 1;
        return Promise.resolve({ kind: 'unknown', httpStatus: 502, error: { code: 'GW_SERVER' } });
      },
    });
    // Recovery's waits between attempts end when the test says so (one retry period per round).
    let waiting: (() => void)[] = [];
    const recovery = new TimeoutRecovery(journal, builder, sender, {
      timeoutReversalDelayMs: 60_000,
      retryMs: 5_000,
      sleep: () => new Promise<void>((r) => waiting.push(r)),
    });
    const offline = new OfflineQueue(journal, {
      policy: 'online-only',
      limits: {
        maxTransactionMinor: 0,
        maxTotalMinorPerCurrency: 0,
        maxCount: 0,
        maxAgeHours: 0,
        maxCountPerCard: 0,
      },
      keyProvider: staticKeyProvider(Buffer.alloc(32, 1)),
    });
    const { sweep } = backgroundWork({ journal, offline, sender, recovery });

    void recovery.recover(sale.id).catch(() => undefined);
    for (let i = 0; i < 20; i++) await turn();
    const rounds = 6;
    for (let round = 0; round < rounds; round++) {
      sweep();
      for (let i = 0; i < 20; i++) await turn();
      const w = waiting;
      waiting = [];
      for (const r of w) r();
      for (let i = 0; i < 20; i++) await turn();
    }
    // Recovery alone: its first attempt and one per retry period.
    expect(voids).toBeLessThanOrEqual(rounds + 1);
    expect(journal.resolutionAttempts(sale.id)).toHaveLength(voids);
    expect(journal.inFlight().filter((e) => e.resolvesEntryId === undefined)).toEqual([
      expect.objectContaining({ id: sale.id }),
    ]);
  });

  it('logs a forwarding run that fails (a claim the journal refuses) and stays in service: no unhandled rejection', async () => {
    const journal = openJournal(':memory:');
    open.push(journal);
    const offline = new OfflineQueue(journal, {
      policy: 'prefer-online',
      limits: {
        maxTransactionMinor: 5_000,
        maxTotalMinorPerCurrency: 10_000,
        maxCount: 5,
        maxAgeHours: 24,
        maxCountPerCard: 2,
      },
      keyProvider: staticKeyProvider(Buffer.alloc(32, 3)),
    });
    const stored = offline.store({
      transactionId: 'OFF-CLAIM-FAILS',
      service: 'sale',
      comments: 'Parking Sale',
      method: 'POST',
      path: '/pts/v2/payments',
      body: Buffer.from('{}'),
      amountMinor: 500,
      currency: 'GBP',
      entryMode: 'contact',
      fingerprint: 'card-claim-fails',
    });
    // Its transactionId is journaled already (a damaged file, say): every claim of it fails.
    journal.begin(saleEntry('OFF-CLAIM-FAILS'));
    const transmitter: Transmitter = { transmit: () => Promise.reject(new Error('nothing is sent')) };
    const sender = new JournaledSender(journal, transmitter);
    const recovery = new TimeoutRecovery(journal, builder, sender, {
      timeoutReversalDelayMs: 0,
      retryMs: 5_000,
    });
    const lines: { level: number; msg: string; err?: { code?: string } }[] = [];
    const logger = createLogger({
      destination: { write: (line: string) => void lines.push(JSON.parse(line) as (typeof lines)[number]) },
    });
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const { sweep } = backgroundWork({ journal, offline, sender, recovery, logger });
      sweep();
      for (let i = 0; i < 20; i++) await turn();
      expect(unhandled).toEqual([]);
      expect(lines.filter((l) => l.level >= 50).map((l) => [l.msg, l.err?.code])).toEqual([
        ['stored payments could not be forwarded: they stay stored', 'JOURNAL_DUPLICATE'],
      ]);
      expect(offline.get(stored.id)?.state).toBe('stored');
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
