import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createReader, type CardRead } from '../devices/index.js';
import { parseConfig } from '../src/config/index.js';
import { createAuthenticator, createGatewayClient } from '../src/gateway/index.js';
import { CardStore } from '../src/host/card-store.js';
import { PaymentService } from '../src/host/payments.js';
import { SANDBOX_SHARED_SECRET } from '../src/host/terminal-host.js';
import {
  AuthorizationDataStore,
  JournaledSender,
  openJournal,
  SEAL_OVERHEAD_BYTES,
} from '../src/journal/index.js';
import { journalFollowOnStore } from '../src/host/follow-on-store.js';
import { gatewayTransmitter } from '../src/host/gateway-adapters.js';
import { silentLogger } from '../src/log/index.js';
import { bareCommitMicros, fsyncMicros } from './journal.js';
import { sandboxProcess } from './server-process.js';
import { percentile, type Benchmark, type BenchResult } from './types.js';

function copyRead(read: CardRead): CardRead {
  return { ...read, tlvs: read.tlvs.map((t) => ({ tag: t.tag, value: Uint8Array.from(t.value) })) };
}

/**
 * `sale.cost`: what the terminal adds to one unattended sale — tag set, request building and validation, HTTP
 * signature, the durable journal writes before and after (synchronous=FULL) — measured around the HTTP round trip to
 * the sandbox in its own process, over at least 1,000 sales. The peer is the floor of the same run: the gateway round trip
 * alone (same request, prepared and signed, no tag set and no journal). The ratio peer/ours says how close a sale
 * comes to that floor.
 */
const saleCost: Benchmark = {
  name: 'sale.cost',
  async run({ quick }): Promise<BenchResult[]> {
    const n = quick ? 60 : 1_000;
    const dir = mkdtempSync(join(tmpdir(), 'pt-bench-sale-'));
    const logger = silentLogger();
    const config = parseConfig({ journal: { path: join(dir, 'journal.db') } });
    // The sandbox in its own process, as the gateway is another machine: its CPU is not the terminal's.
    const sandbox = await sandboxProcess();
    const gateway = createGatewayClient({
      baseUrl: sandbox.url,
      merchantId: config.gateway.merchantId,
      auth: createAuthenticator(config.gateway.auth, config.gateway.merchantId, {
        defaultSharedSecret: SANDBOX_SHARED_SECRET,
      }),
      timeouts: config.gateway.timeouts,
      logger,
    });
    const key = Buffer.alloc(32, 5);
    const journal = openJournal(join(dir, 'journal.db'), { logger, key });
    const cards = new CardStore(Buffer.alloc(32, 7));
    const payments = new PaymentService({
      config,
      gateway,
      sender: new JournaledSender(journal, gatewayTransmitter(gateway)),
      journal,
      cards,
      logger,
      now: () => new Date(),
      followOns: journalFollowOnStore(new AuthorizationDataStore(journal, key), 'A'),
      health: { gatewayAnswered: () => undefined, gatewayUnreachable: () => undefined },
    });
    const reader = createReader(
      { ...config.reader, sim: { ...config.reader.sim, presentDelayMs: 0 } },
      { logger },
    );
    try {
      await reader.connect();
      const read = await reader.activate({
        amountMinor: 600,
        otherAmountMinor: 0,
        currencyNumeric: '826',
        countryNumeric: '826',
        transactionType: '00',
        timeoutSeconds: 30,
      });
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
      // What the host does when a flow lets go of the card (src/host/flow-effects.ts).
      const release = (cardRef: string): void => {
        cards.release(cardRef);
        payments.forgetCard(cardRef);
      };
      // Warm up both paths (JIT, keep-alive connection, SQLite page cache).
      for (let i = 0; i < 30; i++) {
        const held = cards.hold(copyRead(read));
        await payments.submit(sale(held.ref));
        release(held.ref);
      }
      const ours: number[] = [];
      let bodyBytes = 0;
      const peer: number[] = [];
      let oursCpuMicros = 0;
      const commitsBefore = journal.durableCommits;
      for (let i = 0; i < n; i++) {
        // Interleaved so that both see the same machine state.
        const held = cards.hold(copyRead(read));
        const cpu = process.cpuUsage();
        const t0 = performance.now();
        const record = await payments.submit(sale(held.ref));
        ours.push(performance.now() - t0);
        const used = process.cpuUsage(cpu);
        oursCpuMicros += used.user + used.system;
        if (record.outcome.kind !== 'approved') throw new Error(`sale ${i} was ${record.outcome.kind}`);
        const request = payments.toGatewayRequest(sale(held.ref));
        const prepared = gateway.prepare(request);
        bodyBytes = prepared.body.length;
        const t1 = performance.now();
        const outcome = await gateway.send(prepared);
        peer.push(performance.now() - t1);
        if (outcome.kind !== 'approved') throw new Error(`peer sale ${i} was ${outcome.kind}`);
        release(held.ref);
      }
      const durablePerSale = (journal.durableCommits - commitsBefore) / n;
      const median = percentile(ours, 50);
      const peerMedian = percentile(peer, 50);
      const dir2 = mkdtempSync(join(tmpdir(), 'pt-bench-fsync-'));
      let fsync: number;
      let commits: { insert: number; outcome: number };
      try {
        fsync = fsyncMicros(dir2, quick ? 50 : 300);
        commits = bareCommitMicros(dir2, quick ? 50 : 300, bodyBytes + SEAL_OVERHEAD_BYTES);
      } finally {
        rmSync(dir2, { recursive: true, force: true });
      }
      // The floor of a sale that keeps the money rules: its round trip and two durable writes (the entry before the
      // first byte, the outcome after the answer) — at best two disk syncs, and what SQLite's two commits of such rows
      // cost here.
      const floorMs = peerMedian + (2 * fsync) / 1000;
      const sqliteFloorMs = peerMedian + (commits.insert + commits.outcome) / 1000;
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
            sales: n,
            overheadMs: round(median - peerMedian),
            durableCommitsPerSale: round(durablePerSale),
            fsyncMicros: Math.round(fsync),
            floorMs: round(floorMs),
            sqliteEntryCommitMicros: Math.round(commits.insert),
            sqliteOutcomeCommitMicros: Math.round(commits.outcome),
            sqliteFloorMs: round(sqliteFloorMs),
            overheadOverSqliteFloorMs: round(median - sqliteFloorMs),
            cpuMicrosPerSale: Math.round(oursCpuMicros / n),
          },
        },
      ];
    } finally {
      await reader.close();
      await gateway.close();
      await sandbox.close();
      journal.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}

export const benchmarks: Benchmark[] = [saleCost];
