import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createAuthenticator, createGatewayClient, type GatewayClient } from '../src/gateway/index.js';
import {
  authorizedTotalOf,
  JournaledSender,
  NOT_SENT,
  openJournal,
  OfflineQueue,
  staticKeyProvider,
  type BeginEntry,
  type GroupCommitOptions,
  type SqliteJournal,
} from '../src/journal/index.js';
import { DEMO_MERCHANT } from '../src/sandbox/index.js';
import { samplePayment } from '../src/sandbox/sample-requests.js';
import { gatewayTransmitter } from '../src/host/gateway-adapters.js';
import { sandboxProcess } from './server-process.js';
import { percentile, ratioOf, type Benchmark } from './types.js';

/** A request body of realistic size (a contactless sale with EMV tags and track data). */
function sampleBody(transactionId: string): Buffer {
  return Buffer.from(
    JSON.stringify(samplePayment({ amountMinor: 1000, currency: 'GBP', transactionId, sale: true })),
  );
}

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'bench-journal-'));
}

/**
 * The entry of a pre-authorization, as the journaled sender builds one: a literal of every field. (Spread from a
 * shared template, each entry would get a shape of its own, and the journal would pay for reading it.)
 */
function preauthEntry(transactionId: string, body: Buffer): BeginEntry {
  return {
    transactionId,
    referencedTransactionId: undefined,
    service: 'preauth',
    comments: 'Parking Authorization',
    method: 'POST',
    path: '/pts/v2/payments',
    body,
    amountMinor: 1000,
    currency: 'GBP',
    flowId: undefined,
    parentGatewayId: undefined,
    maskedPan: '411111******1111',
    moneyMoving: true,
    resolvesEntryId: undefined,
  };
}

/**
 * The physical limit of a durable commit on this disk: the latency of one `fdatasync` after a 4 KiB write, in
 * microseconds (the median of `n`). A commit with synchronous=FULL in WAL mode costs at least one such sync, so no
 * caller that waits for its own commit can do better than 1e6 / fsyncMicros commits per second.
 */
export function fsyncMicros(dir: string, n: number): number {
  const path = join(dir, 'fsync-probe');
  const fd = openSync(path, 'w');
  const page = Buffer.alloc(4096, 1);
  const samples: number[] = [];
  try {
    for (let i = 0; i < n; i++) {
      writeSync(fd, page, 0, page.length, (i % 8) * page.length);
      const t = performance.now();
      fdatasyncSync(fd);
      samples.push((performance.now() - t) * 1000);
    }
  } finally {
    closeSync(fd);
  }
  return percentile(samples, 50);
}

/**
 * The table the bare-SQLite peers write: the journal's columns and key (the journal keeps a request's length, not its
 * bytes), one unique index, no checks.
 */
const BARE_TABLE = `CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT, transaction_id TEXT UNIQUE, service TEXT,
  comments TEXT, method TEXT, path TEXT, body_length INTEGER, amount_minor INTEGER, currency TEXT, masked_pan TEXT,
  money_moving INTEGER, state TEXT, gateway_id TEXT, created_at INTEGER)`;

/** {@link bareCommits} warms up until the log's size has held for `STEADY_PAIRS` pairs, or for `MAX_WARM_PAIRS`. */
const STEADY_PAIRS = 100;
const MAX_WARM_PAIRS = 5_000;

/** The two durable writes of a sale as SQLite alone makes them, each timed: see {@link bareCommits}. */
export interface BareCommits {
  /** Inserts a row of the journal's columns in its own durable commit; its id and the commit's µs. */
  insert(): { id: number | bigint; micros: number };
  /** Updates row `id` with an outcome in its own durable commit; the commit's µs. */
  outcome(id: number | bigint): number;
  close(): void;
}

/**
 * What the two durable writes of a sale cost SQLite itself on this disk: a row of the journal's columns inserted in its
 * own commit, then updated with an outcome in another, with WAL and synchronous=FULL. Each is one fsync plus the WAL
 * frames of the pages it changes, the locks and SQLite's own work: the floor of any journal that keeps the money
 * rules with SQLite here. The sale benchmark makes the two around its peer's round trip, as a sale makes its own: a
 * commit that follows other work or a wait costs more here than one of a tight loop of commits (the benchmark reports
 * both), so a floor measured in a loop alone would be too low.
 *
 * Returned in the steady state of the journal it is compared with: unmeasured pairs first, until the write-ahead log
 * has been checkpointed and is being reused (its file stops growing). While the log file still grows, each commit's
 * `fdatasync` also writes the file's new size: here that costs two to three times as much as a commit into reused
 * blocks, and a floor measured then would be that much too high.
 */
export function bareCommits(dir: string, bodyBytes: number): BareCommits {
  const db = new Database(join(dir, 'bare-commit.db'));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec(BARE_TABLE);
    const insert = db.prepare(`INSERT INTO t (transaction_id, service, comments, method, path, body_length,
      amount_minor, currency, masked_pan, money_moving, state, created_at)
      VALUES (?, 'sale', 'Parking Sale', 'POST', '/pts/v2/payments', ?, 600, 'GBP', '476173******0119', 1, 'pending', ?)`);
    const outcome = db.prepare(`UPDATE t SET state = 'approved', gateway_id = ? WHERE id = ?`);
    let next = 0;
    const commits: BareCommits = {
      insert: () => {
        const t = performance.now();
        const id = insert.run(`C${next++}`, bodyBytes, Date.now()).lastInsertRowid;
        return { id, micros: (performance.now() - t) * 1000 };
      },
      outcome: (id) => {
        const t = performance.now();
        outcome.run(`G${String(id)}`, id);
        return (performance.now() - t) * 1000;
      },
      close: () => db.close(),
    };
    const walSize = (): number => statSync(join(dir, 'bare-commit.db-wal')).size;
    // Until the log's size has not moved for STEADY_PAIRS pairs (at most MAX_WARM_PAIRS).
    for (let size = -1, same = 0, pairs = 0; same < STEADY_PAIRS && pairs < MAX_WARM_PAIRS; pairs++) {
      commits.outcome(commits.insert().id);
      const now = walSize();
      same = now === size ? same + 1 : 0;
      size = now;
    }
    return commits;
  } catch (e) {
    db.close();
    throw e;
  }
}

/** Appends per second and CPU µs per append of each side, for `inFlight` appends waiting at once. */
interface AppendRates {
  ours: number;
  peer: number;
  oursCpuMicros: number;
  peerCpuMicros: number;
  oursCommits: number;
}

/**
 * Durable appends with `inFlight` callers each waiting for its own write: ours through the journal's group commit
 * (`Journal.beginDurably`: validation, one BEGIN IMMEDIATE … COMMIT with synchronous=FULL shared by the writes queued
 * together). The peer is a bare better-sqlite3 insert of the same row (the journal's columns; a request's length, not
 * its bytes) with the same durability (WAL, synchronous=FULL) at its best for that load: one autocommit per row
 * alone, `inFlight` rows per transaction when that many arrive together. The disk is shared, so the two sides run in
 * alternating chunks and each side's time is summed: both see the same conditions.
 */
async function appendRates(n: number, inFlight: number, body: Buffer): Promise<AppendRates> {
  const dir = tempDir();
  const journal = openJournal(join(dir, 'j.db'));
  const db = new Database(join(dir, 'bare.db'));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec(BARE_TABLE);
    const insert = db.prepare(`INSERT INTO t (transaction_id, service, comments, method, path, body_length,
      amount_minor, currency, masked_pan, money_moving, state, created_at)
      VALUES (?, 'preauth', 'Parking Authorization', 'POST', '/pts/v2/payments', ?, 1000, 'GBP', '411111******1111',
      1, 'pending', ?)`);
    const insertMany = db.transaction((from: number, count: number) => {
      for (let i = from; i < from + count; i++) insert.run(`T${i}`, body.length, Date.now());
    });
    const chunk = Math.max(50, inFlight * 4);
    let oursMs = 0;
    let peerMs = 0;
    let oursCpu = 0;
    let peerCpu = 0;
    // Unmeasured chunks first, taking turns as the measured ones do: the JIT of each writer settles.
    const warm = chunk * Math.ceil(Math.min(n, 500) / chunk);
    let commitsBefore = journal.durableCommits;
    for (let done = 0; done < warm + n; done += chunk) {
      if (done === warm) {
        oursMs = peerMs = oursCpu = peerCpu = 0;
        commitsBefore = journal.durableCommits;
      }
      let cpu = process.cpuUsage();
      let t = performance.now();
      let next = done;
      const worker = async (): Promise<void> => {
        while (next < done + chunk) {
          const i = next++;
          await journal.beginDurably(preauthEntry(`T${i}`, body));
        }
      };
      await Promise.all(Array.from({ length: inFlight }, worker));
      oursMs += performance.now() - t;
      let used = process.cpuUsage(cpu);
      oursCpu += used.user + used.system;
      cpu = process.cpuUsage();
      t = performance.now();
      if (inFlight === 1)
        for (let i = done; i < done + chunk; i++) insert.run(`T${i}`, body.length, Date.now());
      else
        for (let i = done; i < done + chunk; i += inFlight)
          insertMany(i, Math.min(inFlight, done + chunk - i));
      peerMs += performance.now() - t;
      used = process.cpuUsage(cpu);
      peerCpu += used.user + used.system;
    }
    const total = Math.ceil(n / chunk) * chunk;
    return {
      ours: total / (oursMs / 1000),
      peer: total / (peerMs / 1000),
      oursCpuMicros: oursCpu / total,
      peerCpuMicros: peerCpu / total,
      oursCommits: journal.durableCommits - commitsBefore,
    };
  } finally {
    journal.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const IN_FLIGHT = [1, 4, 16, 32] as const;

const append: Benchmark = {
  name: 'journal.append',
  description:
    'durable journal appends per second with 1 caller waiting for its own write (headline), and with 4, 16 and 32 in ' +
    'flight sharing group commits; peer: a bare better-sqlite3 insert of the same row (the journal\u2019s columns: ' +
    'a request\u2019s length, not its bytes) with the same durability (WAL, synchronous=FULL) at its best for the ' +
    'load (one commit per row alone, as many rows per transaction as arrive together). Limited by the disk: one ' +
    'fdatasync per commit (fsyncMicros, measured here), so 1e6/fsyncMicros commits per second is the limit ' +
    '(limitOpsPerSec; with N in flight, N times that).',
  async run({ quick }) {
    const n = quick ? 200 : 2_000;
    const body = sampleBody('T0');
    const dir = tempDir();
    let fsync: number;
    try {
      fsync = fsyncMicros(dir, quick ? 50 : 300);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const rates = new Map<number, AppendRates>();
    for (const k of IN_FLIGHT) rates.set(k, await appendRates(k === 1 ? n : n * 2, k, body));
    const one = rates.get(1)!;
    const limit = 1e6 / fsync;
    const extra: Record<string, number | string> = {
      appends: n,
      fsyncMicros: Math.round(fsync),
      limitOpsPerSec: Math.round(limit),
      ofLimit: round2(one.ours / limit),
      oursCpuMicrosPerOp: Math.round(one.oursCpuMicros),
      peerCpuMicrosPerOp: Math.round(one.peerCpuMicros),
    };
    for (const k of IN_FLIGHT.slice(1)) {
      const r = rates.get(k)!;
      extra[`inFlight${k}OpsPerSec`] = Math.round(r.ours);
      extra[`inFlight${k}PeerOpsPerSec`] = Math.round(r.peer);
      extra[`inFlight${k}Ratio`] = ratioOf(r.ours, r.peer, true);
      extra[`inFlight${k}CommitsPerOp`] = round2(r.oursCommits / (k === 1 ? n : n * 2));
      extra[`inFlight${k}CpuMicrosPerOp`] = Math.round(r.oursCpuMicros);
      extra[`inFlight${k}LimitOpsPerSec`] = Math.round(limit * k);
    }
    return [
      {
        name: 'journal.append',
        unit: 'ops/s',
        ours: one.ours,
        peer: 'better-sqlite3 bare insert (WAL, synchronous=FULL)',
        peerValue: one.peer,
        ratio: ratioOf(one.ours, one.peer, true),
        cpuMicrosPerOp: Math.round(one.oursCpuMicros),
        peerCpuMicrosPerOp: Math.round(one.peerCpuMicros),
        limit: { what: 'one fdatasync per commit on this disk', value: Math.round(limit), unit: 'ops/s' },
        extra,
      },
    ];
  },
};

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

function gatewayFor(url: string): GatewayClient {
  return createGatewayClient({
    baseUrl: url,
    merchantId: DEMO_MERCHANT.merchantId,
    auth: createAuthenticator(
      { method: 'http-signature', keyId: DEMO_MERCHANT.keyId, jwtAlgorithm: 'RS256' },
      DEMO_MERCHANT.merchantId,
      { defaultSharedSecret: DEMO_MERCHANT.sharedSecret },
    ),
    timeouts: { connectMs: 5_000, headersMs: 30_000, bodyMs: 30_000 },
  });
}

/** Payments of the journal-only pass of `queue.forward` (stored in the same queue, within its limits). */
const JOURNAL_ONLY_MAX = 5_000;

const forward: Benchmark = {
  name: 'queue.forward',
  description:
    'seconds to forward 10,000 stored payments (32 in flight) through the queue and the journaled sender, each ' +
    'claimed (journaled and marked sent in one durable commit just before its send), sent once and completed ' +
    'durably; peer: the same sends by the gateway client without journal or queue, against the same sandbox in its ' +
    'own process. The sides take turns in five chunks of 2,000 (each going first in every other one) after two ' +
    'unmeasured turns of 1,000 each, and each side\u2019s time is summed. Limited by the pages the two durable ' +
    'steps of each forward write (its journal entry and stored payment, their indexes, the wipe of the stored ' +
    'payment\u2019s encrypted body, its one copy), shared by group commit (commitsPerPayment), and by the round ' +
    'trips. withoutBackgroundWait\u2026: the same forwards, taking turns with ours, with ' +
    'journal.groupCommit.backgroundWaitMs 0. journalOnlyCpuMicrosPerPayment: 5,000 more forwarded through the same ' +
    'queue and journal but ' +
    'answered in this process without HTTP, the journal\u2019s share of ours alone (journalOnlyCpuLimitPaymentsPerSec: ' +
    '1e6 / that, what the journal alone could forward on one core).',
  async run({ quick }) {
    const n = quick ? 200 : 10_000;
    const concurrency = 32;
    // The host's speed drifts during a run: the two sides take turns, in chunks, after one unmeasured warm-up chunk of
    // each (the JIT of the client, the journal and the sandbox), and each side's time is summed.
    const rounds = quick ? 1 : 5;
    const chunk = n / rounds;
    // Warm-up: unmeasured rounds taking turns, 2,000 payments each side in all (the sandbox's JIT settles only after
    // about a thousand requests).
    const warmUp = quick ? 50 : 1_000;
    const warmRounds = quick ? 1 : 2;
    // The sandbox in its own process, as the gateway is another machine: its CPU is not the terminal's.
    const sandbox = await sandboxProcess();
    const dir = tempDir();
    try {
      // Ours: payments stored offline (encrypted), then forwarded through the queue — each one claimed (journaled
      // and marked sent in one durable commit), sent, and its outcome and wipe committed durably. The same again with
      // journal.groupCommit.backgroundWaitMs 0 (each commit of forwards starting at the next turn of the event loop,
      // as a sale's does), to show what the wait of background writes buys.
      const limits = {
        maxTransactionMinor: 5_000,
        maxTotalMinorPerCurrency: (n + warmUp * warmRounds + JOURNAL_ONLY_MAX) * 1_000,
        maxCount: n + warmUp * warmRounds + JOURNAL_ONLY_MAX,
        maxAgeHours: 24,
        // Each payment of a card of its own.
        maxCountPerCard: 1,
      };
      const gateway = gatewayFor(sandbox.url);
      const send = gatewayTransmitter(gateway);
      let stored = 0;
      let sent = 0;
      const forwarder = (file: string, groupCommit?: Partial<GroupCommitOptions>) => {
        const journal = openJournal(join(dir, file), groupCommit ? { groupCommit } : {});
        const queue = new OfflineQueue(journal, {
          policy: 'prefer-online',
          limits,
          keyProvider: staticKeyProvider(Buffer.alloc(32, 3)),
        });
        const sender = new JournaledSender(journal, gatewayTransmitter(gateway));
        return {
          journal,
          queue,
          /** Setup, not measured: `count` payments stored in one transaction to keep the run short. */
          store: (count: number): void =>
            journal.atomically(true, () => {
              for (let i = 0; i < count; i++) {
                const transactionId = `Q${Date.now()}${stored++}`;
                queue.store({
                  transactionId,
                  service: 'sale',
                  comments: 'Parking Sale',
                  method: 'POST',
                  path: '/pts/v2/payments',
                  body: sampleBody(transactionId),
                  amountMinor: 1_000,
                  currency: 'GBP',
                  entryMode: 'contactless',
                  fingerprint: `card-${transactionId}`,
                });
              }
            }),
          forwardStored: async (count: number): Promise<void> => {
            const report = await queue.forwardPending(sender, { concurrency });
            if (report.approved !== count)
              throw new Error(`queue.forward: ${report.approved} of ${count} approved`);
          },
        };
      };
      const main = forwarder('q.db');
      const noWait = forwarder('q0.db', { backgroundWaitMs: 0 });
      const { journal, queue } = main;
      // Peer: the same payments sent by the gateway client alone (no journal, no queue), same concurrency; their
      // bodies are built before the clock starts, as ours are stored before it.
      const bodiesFor = (count: number): { transactionId: string; body: Buffer }[] =>
        Array.from({ length: count }, () => {
          const transactionId = `P${Date.now()}${sent++}`;
          return { transactionId, body: sampleBody(transactionId) };
        });
      const sendAlone = async (bodies: { transactionId: string; body: Buffer }[]): Promise<void> => {
        let next = 0;
        await Promise.all(
          Array.from({ length: concurrency }, async () => {
            while (next < bodies.length) {
              const b = bodies[next++]!;
              await send.transmit({
                ...b,
                service: 'sale',
                comments: 'Parking Sale',
                method: 'POST',
                path: '/pts/v2/payments',
                amountMinor: 1_000,
                currency: 'GBP',
                moneyMoving: true,
              });
            }
          }),
        );
      };
      for (let w = 0; w < warmRounds; w++) {
        for (const side of [main, noWait]) {
          side.store(warmUp);
          await side.forwardStored(warmUp);
        }
        await sendAlone(bodiesFor(warmUp));
      }
      // Wall ms and CPU µs summed over each side's turns.
      const spent = { ours: { ms: 0, cpu: 0 }, noWait: { ms: 0, cpu: 0 }, peer: { ms: 0, cpu: 0 } };
      const timedTurn = async (side: keyof typeof spent, work: () => Promise<void>): Promise<void> => {
        const cpu = process.cpuUsage();
        const t = performance.now();
        await work();
        spent[side].ms += performance.now() - t;
        const used = process.cpuUsage(cpu);
        spent[side].cpu += used.user + used.system;
      };
      const commitsBefore = journal.durableCommits;
      const noWaitCommitsBefore = noWait.journal.durableCommits;
      for (let r = 0; r < rounds; r++) {
        main.store(chunk);
        noWait.store(chunk);
        const bodies = bodiesFor(chunk);
        const oursTurn = (): Promise<void> => timedTurn('ours', () => main.forwardStored(chunk));
        const noWaitTurn = (): Promise<void> => timedTurn('noWait', () => noWait.forwardStored(chunk));
        const peerTurn = (): Promise<void> => timedTurn('peer', () => sendAlone(bodies));
        // Ours and the peer each go first in every other round.
        for (const turn of r % 2 === 0 ? [oursTurn, noWaitTurn, peerTurn] : [peerTurn, noWaitTurn, oursTurn])
          await turn();
      }
      const ours = spent.ours.ms / 1000;
      const peer = spent.peer.ms / 1000;
      const commitsPerPayment = (journal.durableCommits - commitsBefore) / n;
      const noWaitCommitsPerPayment = (noWait.journal.durableCommits - noWaitCommitsBefore) / n;
      noWait.journal.close();
      // The journal's share alone: the same forwards through the same queue and journaled sender, answered in this
      // process at the next turn of the event loop (a canned approval, no HTTP), so that ours' CPU splits into the
      // client's (about the peer's) and the journal's, and the journal's own ceiling in payments per second shows.
      const journalOnly = await (async () => {
        const count = quick ? 100 : JOURNAL_ONLY_MAX;
        let answered = 0;
        const canned = new JournaledSender(journal, {
          transmit: () =>
            new Promise((resolve) =>
              setImmediate(() =>
                resolve({
                  kind: 'approved',
                  gatewayId: String(7_000_000_000_000_000_000_000 + answered++),
                  status: 'AUTHORIZED',
                  httpStatus: 201,
                }),
              ),
            ),
        });
        main.store(count);
        const cpu = process.cpuUsage();
        const report = await queue.forwardPending(canned, { concurrency });
        const used = process.cpuUsage(cpu);
        if (report.approved !== count)
          throw new Error(`queue.forward (journal alone): ${report.approved} of ${count} approved`);
        return { cpuMicros: (used.user + used.system) / count };
      })();
      journal.close();
      await gateway.close();
      return [
        {
          name: 'queue.forward',
          unit: 's',
          ours,
          peer: 'gateway client sending the same payments without journal or queue',
          peerValue: peer,
          ratio: ratioOf(ours, peer, false),
          cpuMicrosPerOp: Math.round(spent.ours.cpu / n),
          peerCpuMicrosPerOp: Math.round(spent.peer.cpu / n),
          extra: {
            payments: n,
            'payments/s': n / ours,
            concurrency,
            rounds,
            // Durable commits (one disk sync each) per forwarded payment: a forward needs two durable steps (the claim,
            // which is its begin and mark, and the outcome); the group commit shares each sync among the forwards in
            // flight.
            commitsPerPayment: round2(commitsPerPayment),
            // The same forwards with journal.groupCommit.backgroundWaitMs 0, in the same run, taking turns.
            withoutBackgroundWaitSeconds: spent.noWait.ms / 1000,
            withoutBackgroundWaitCpuMicrosPerPayment: Math.round(spent.noWait.cpu / n),
            withoutBackgroundWaitCommitsPerPayment: round2(noWaitCommitsPerPayment),
            journalOnlyCpuMicrosPerPayment: Math.round(journalOnly.cpuMicros),
            journalOnlyCpuLimitPaymentsPerSec: Math.round(1e6 / journalOnly.cpuMicros),
          },
        },
      ];
    } finally {
      await sandbox.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

/**
 * Writes `count` entries as a terminal's years of service leave them, in transactions of 10,000 (setup, not measured):
 * approved sales; every 50th an approved pre-authorization with an approved incremental one; every 1,000th a sale
 * resolved as never sent. Returns the transactionIds of the first sale and of the first pre-authorization.
 */
function fillJournal(journal: SqliteJournal, count: number): { firstSale: string; firstAuth: string } {
  const body = Buffer.from('{}');
  const approved = (e: { id: number }, gatewayId: string, authorizedMinor?: number): void =>
    journal.recordOutcome(e.id, { state: 'approved', gatewayId, status: 'AUTHORIZED', authorizedMinor });
  for (let from = 0; from < count; from += 10_000)
    journal.atomically(false, () => {
      for (let i = from; i < Math.min(count, from + 10_000); i++) {
        const sale: BeginEntry = {
          ...preauthEntry(`S${i}`, body),
          service: 'sale',
          comments: 'Parking Sale',
        };
        if (i % 1_000 === 999) journal.resolve(journal.begin(sale).id, NOT_SENT);
        else if (i % 50 === 1) {
          approved(journal.begin(preauthEntry(`A${i}`, body)), `GA${i}`, 1_000);
          const increment = journal.begin({
            ...preauthEntry(`I${i}`, body),
            service: 'incremental',
            comments: 'Parking Extension',
            path: `/pts/v2/payments/GA${i}`,
            method: 'PATCH',
            parentGatewayId: `GA${i}`,
            referencedTransactionId: `A${i}`,
          });
          approved(increment, `GI${i}`, 2_000);
          i += 1;
        } else approved(journal.begin(sale), `GS${i}`);
      }
    });
  return { firstSale: 'S0', firstAuth: 'A1' };
}

/**
 * The reads a terminal makes of its journal per payment and per operator snapshot, at a year's size against a new
 * journal's. Each set: the counts of the status bar (every snapshot), a transactionId that is not there (every
 * payment stored offline), the oldest sale by its transactionId (a refund or void of it), and the authorized total of
 * the oldest pre-authorization (its original and its increments: a capture or an extension).
 */
const lookups: Benchmark = {
  name: 'journal.lookups',
  description:
    'µs per set of the journal reads of a payment and an operator snapshot (the status counts, a transactionId that ' +
    'is not there, the oldest sale by its transactionId, the authorized total of the oldest pre-authorization with ' +
    'its increments) on a journal of 200,000 entries, about a busy pay station\u2019s year; peer: the same reads on a ' +
    'journal of 1,000 entries. Each read is an index search (SQLite\u2019s B-tree depth grows with the log of the ' +
    'entries): a ratio near 1 says no read grows with the journal.',
  run({ quick }) {
    const large = quick ? 20_000 : 200_000;
    const small = 1_000;
    const dir = tempDir();
    const journals = [openJournal(join(dir, 'large.db')), openJournal(join(dir, 'small.db'))] as const;
    try {
      const t = performance.now();
      const ids = fillJournal(journals[0], large);
      const fillSeconds = (performance.now() - t) / 1000;
      fillJournal(journals[1], small);
      const set = (j: SqliteJournal): void => {
        j.counts();
        if (j.findByTransactionId('NOT-THERE') !== undefined)
          throw new Error('journal.lookups: found a ghost');
        if (j.findByTransactionId(ids.firstSale)?.state !== 'approved')
          throw new Error('journal.lookups: the oldest sale is missing');
        if (authorizedTotalOf(j, ids.firstAuth)?.minor !== 2_000)
          throw new Error('journal.lookups: wrong authorized total');
      };
      // About 0.1 s per round on the large journal, at most 500 sets: a read that grew with the journal (before each
      // read was an index search, a set took 250 ms at 200,000 entries here) keeps the run short.
      const probe = performance.now();
      set(journals[0]);
      const setMs = performance.now() - probe;
      const perRound = Math.max(3, Math.min(quick ? 50 : 500, Math.floor(100 / setMs)));
      const rounds = quick ? 3 : 15;
      const samples: [number[], number[]] = [[], []];
      const cpu: [number, number] = [0, 0];
      for (let r = 0; r < rounds + 2; r++)
        for (const side of [0, 1] as const) {
          const c = process.cpuUsage();
          const t0 = performance.now();
          for (let i = 0; i < perRound; i++) set(journals[side]);
          const used = process.cpuUsage(c);
          // Two unmeasured rounds of each first (the JIT, the page cache).
          if (r < 2) continue;
          samples[side].push(((performance.now() - t0) * 1000) / perRound);
          cpu[side] += (used.user + used.system) / perRound;
        }
      const ours = percentile(samples[0], 50);
      const peer = percentile(samples[1], 50);
      return Promise.resolve([
        {
          name: 'journal.lookups',
          unit: 'µs',
          ours,
          peer: `the same reads on a journal of ${small.toLocaleString('en')} entries`,
          peerValue: peer,
          ratio: ratioOf(ours, peer, false),
          cpuMicrosPerOp: Math.round(cpu[0] / rounds),
          peerCpuMicrosPerOp: Math.round(cpu[1] / rounds),
          extra: {
            entries: journals[0].counts().entries,
            peerEntries: journals[1].counts().entries,
            readsPerSet: 4,
            fillSeconds: Math.round(fillSeconds * 10) / 10,
          },
        },
      ]);
    } finally {
      for (const j of journals) j.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

export const benchmarks: Benchmark[] = [append, lookups, forward];
