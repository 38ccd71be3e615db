import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { standalonePayments } from '../src/host/standalone-payments.js';
import { bareCommits, fsyncMicros, type BareCommits } from './journal.js';
import { bareExchange } from './gateway.js';
import { cannedGatewayProcess, sandboxProcess, type ServerProcess } from './server-process.js';
import { percentile, type Benchmark, type BenchResult } from './types.js';

/** An outcome that stops the run, with why (its reason, or its error's code and message). */
function describe(outcome: {
  kind: string;
  reason?: string;
  error?: { code?: string; message?: string };
}): string {
  const why = [outcome.reason, outcome.error?.code, outcome.error?.message].filter((x) => x !== undefined);
  return why.length > 0 ? `${outcome.kind} (${why.join(': ')})` : outcome.kind;
}

/** Sales made before the clock starts: the per-100 medians of sale and round trip settle after about 1,000. */
const WARM_UP_SALES = 1_000;

/**
 * `sale.cost`: what the terminal adds to one unattended sale — tag set, request building and validation, HTTP
 * signature, the durable journal writes before and after (synchronous=FULL) — measured around the HTTP round trip to
 * the sandbox in its own process, over at least 1,000 sales. The peer is the floor of the same run: the gateway round
 * trip alone (same request, prepared and signed, no tag set and no journal). The ratio peer/ours says how close a sale
 * comes to that floor. The peer's round trip is made between a bare SQLite insert and its outcome update, as a sale's
 * is between its two journal writes: their sum is a sale that keeps the money rules with nothing of the terminal's
 * around SQLite and the exchange (sqliteFloorMs, and its p99).
 */
const saleCost: Benchmark = {
  name: 'sale.cost',
  description:
    'median ms of one unattended sale (tag set, request, signature, the durable journal write before sending and the ' +
    'one after, the HTTP round trip to the sandbox in its own process), p99 in extra; peer: the same round trip alone. ' +
    'Limit: the round trip plus two fdatasync on this disk; sqliteFloorMs: the round trip made between SQLite’s own ' +
    'two commits of such rows, as a sale makes it, once the write-ahead log is reused as the journal’s is ' +
    '(overheadOverSqliteFloorMs: what the terminal adds beyond them; sqliteFloorP99Ms the p99 of that sum). ' +
    'Limit of the p99: ' +
    'bareExchangeP99Ms, the p99 of the sale’s bytes over a raw keep-alive socket to a canned server in its own ' +
    'process (interleaved with the sales), the tail of one local exchange on this machine; stallsPerSecond and ' +
    'longestStallMs: how often, and for how long at most, a thread that only reads the clock for 2 s loses its CPU ' +
    'for more than 0.2 ms here. Measured after 1,000 unmeasured sales (the JIT of this process and the ' +
    'sandbox’s settle).',
  async run({ quick }): Promise<BenchResult[]> {
    const n = quick ? 60 : 1_000;
    const dir = mkdtempSync(join(tmpdir(), 'pt-bench-sale-'));
    // The sandbox in its own process, as the gateway is another machine: its CPU is not the terminal's.
    const sandbox = await sandboxProcess();
    const service = await standalonePayments({ gatewayUrl: sandbox.url, dir }).catch(async (e: unknown) => {
      await sandbox.close();
      throw e;
    });
    const { payments, cards, gateway, journal, release } = service;
    // The tail of the machine itself: the sale's bytes over a raw keep-alive socket to a server answering a canned
    // approval from its own process, read only as far as HTTP framing needs: a sale's p99 cannot be below its p99.
    let canned: ServerProcess | undefined;
    let bare: { one: () => Promise<void>; close: () => void } | undefined;
    // SQLite's own two commits of a sale, on the same disk, made around the peer's round trip.
    const commitsDir = mkdtempSync(join(tmpdir(), 'pt-bench-commits-'));
    let commits: BareCommits | undefined;
    try {
      canned = await cannedGatewayProcess();
      const sale = (cardRef: string) =>
        ({
          service: 'sale',
          comments: 'Parking Sale',
          amountMinor: 600,
          currency: 'GBP',
          catLevel: 2,
          cardRef,
          includeEmvTags: false,
        }) as const;
      {
        const held = cards.hold(await service.readCard(600));
        const prepared = gateway.prepare(payments.toGatewayRequest(sale(held.ref)));
        release(held.ref);
        bare = await bareExchange(
          canned.url,
          1,
          { 'content-type': 'application/json;charset=utf-8' },
          prepared.body,
        );
        commits = bareCommits(commitsDir, prepared.body.length);
      }
      const sqliteCommits = commits;
      // Warm up every path, as in the measured loop: the JIT of this process and of the sandbox's (both reach their
      // steady cost only after several hundred sales), the keep-alive connections, SQLite's page cache.
      for (let i = 0; i < (quick ? 30 : WARM_UP_SALES); i++) {
        const held = cards.hold(await service.readCard(600));
        await payments.submit(sale(held.ref));
        const { id } = sqliteCommits.insert();
        await gateway.send(gateway.prepare(payments.toGatewayRequest(sale(held.ref))));
        sqliteCommits.outcome(id);
        release(held.ref);
        await bare.one();
      }
      const ours: number[] = [];
      const peer: number[] = [];
      const entryCommits: number[] = [];
      const outcomeCommits: number[] = [];
      // Per sale: SQLite's entry commit, the peer's round trip and SQLite's outcome commit, in that order.
      const sqliteSales: number[] = [];
      const bareTrips: number[] = [];
      let oursCpuMicros = 0;
      const commitsBefore = journal.durableCommits;
      for (let i = 0; i < n; i++) {
        // Interleaved so that both see the same machine state.
        const held = cards.hold(await service.readCard(600));
        const cpu = process.cpuUsage();
        const t0 = performance.now();
        const record = await payments.submit(sale(held.ref));
        ours.push(performance.now() - t0);
        const used = process.cpuUsage(cpu);
        oursCpuMicros += used.user + used.system;
        if (record.outcome.kind !== 'approved') throw new Error(`sale ${i} was ${describe(record.outcome)}`);
        const request = payments.toGatewayRequest(sale(held.ref));
        const prepared = gateway.prepare(request);
        const entry = sqliteCommits.insert();
        const t1 = performance.now();
        const outcome = await gateway.send(prepared);
        const trip = performance.now() - t1;
        const outcomeMicros = sqliteCommits.outcome(entry.id);
        peer.push(trip);
        entryCommits.push(entry.micros);
        outcomeCommits.push(outcomeMicros);
        sqliteSales.push(trip + (entry.micros + outcomeMicros) / 1000);
        if (outcome.kind !== 'approved') throw new Error(`peer sale ${i} was ${describe(outcome)}`);
        release(held.ref);
        const t2 = performance.now();
        await bare.one();
        bareTrips.push(performance.now() - t2);
      }
      const durablePerSale = (journal.durableCommits - commitsBefore) / n;
      const stalls = stallProbe(quick ? 200 : 2_000);
      const median = percentile(ours, 50);
      const peerMedian = percentile(peer, 50);
      // The same two commits in a tight loop, for comparison: each right after the other, with no other work between.
      const loop = { insert: [] as number[], outcome: [] as number[] };
      for (let i = 0; i < (quick ? 50 : 300); i++) {
        const entry = sqliteCommits.insert();
        loop.insert.push(entry.micros);
        loop.outcome.push(sqliteCommits.outcome(entry.id));
      }
      const fsync = fsyncMicros(commitsDir, quick ? 50 : 300);
      // The floor of a sale that keeps the money rules: its round trip and two durable writes (the entry before the
      // first byte, the outcome after the answer) — at best two disk syncs, and what SQLite's two commits of such rows
      // cost here when made around the round trip, as a sale makes them.
      const floorMs = peerMedian + (2 * fsync) / 1000;
      const sqliteFloorMs = percentile(sqliteSales, 50);
      return [
        {
          name: 'sale.cost',
          unit: 'ms',
          ours: round(median),
          peer: 'gateway round trip alone (no tag set, no journal)',
          peerValue: round(peerMedian),
          ratio: round(peerMedian / median),
          cpuMicrosPerOp: Math.round(oursCpuMicros / n),
          limit: {
            what: 'round trip + 2 fdatasync (entry before sending, outcome after)',
            value: round(floorMs),
            unit: 'ms',
          },
          extra: {
            p99: round(percentile(ours, 99)),
            peerP99: round(percentile(peer, 99)),
            bareExchangeMs: round(percentile(bareTrips, 50)),
            bareExchangeP99Ms: round(percentile(bareTrips, 99)),
            stallsPerSecond: Math.round(stalls.perSecond * 10) / 10,
            longestStallMs: round(stalls.longestMs),
            sales: n,
            overheadMs: round(median - peerMedian),
            durableCommitsPerSale: round(durablePerSale),
            fsyncMicros: Math.round(fsync),
            floorMs: round(floorMs),
            sqliteEntryCommitMicros: Math.round(percentile(entryCommits, 50)),
            sqliteOutcomeCommitMicros: Math.round(percentile(outcomeCommits, 50)),
            sqliteEntryCommitInALoopMicros: Math.round(percentile(loop.insert, 50)),
            sqliteOutcomeCommitInALoopMicros: Math.round(percentile(loop.outcome, 50)),
            sqliteFloorMs: round(sqliteFloorMs),
            sqliteFloorP99Ms: round(percentile(sqliteSales, 99)),
            overheadOverSqliteFloorMs: round(median - sqliteFloorMs),
            cpuMicrosPerSale: Math.round(oursCpuMicros / n),
          },
        },
      ];
    } finally {
      commits?.close();
      rmSync(commitsDir, { recursive: true, force: true });
      bare?.close();
      await canned?.close();
      await service.close();
      await sandbox.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

/**
 * The machine's own stalls: a thread that only reads the clock for `ms` milliseconds, and every gap of more than
 * 0.2 ms between two reads (the thread lost its CPU to the host or the kernel). A sale that crosses two processes
 * and lasts about a millisecond is hit by such stalls in proportion to their rate: they set the floor of its p99.
 */
function stallProbe(ms: number): { perSecond: number; longestMs: number } {
  let count = 0;
  let longest = 0;
  let last = performance.now();
  const end = last + ms;
  for (;;) {
    const t = performance.now();
    const gap = t - last;
    if (gap > 0.2) {
      count++;
      longest = Math.max(longest, gap);
    }
    last = t;
    if (t > end) break;
  }
  return { perSecond: (count * 1000) / ms, longestMs: longest };
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}

export const benchmarks: Benchmark[] = [saleCost];
