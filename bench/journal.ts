import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createAuthenticator, createGatewayClient, type GatewayClient } from '../src/gateway/index.js';
import { JournaledSender, openJournal, OfflineQueue, staticKeyProvider } from '../src/journal/index.js';
import { DEMO_MERCHANT, startSandbox } from '../src/sandbox/index.js';
import { samplePayment } from '../src/sandbox/sample-requests.js';
import { gatewayTransmitter } from '../src/host/gateway-adapters.js';
import { ratioOf, type Benchmark } from './types.js';

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
 * Durable appends: Journal.begin (validation, AES-256-GCM, FULL sync) against the peer, a bare better-sqlite3 insert of
 * the same columns with the same durability (WAL, synchronous=FULL, one commit per row). The disk is shared, so the
 * two sides run in alternating chunks and each side's time is summed: both see the same conditions.
 */
function appendRates(n: number, body: Buffer): { ours: number; peer: number } {
  const dir = tempDir();
  const journal = openJournal(join(dir, 'j.db'), { key: Buffer.alloc(32, 1) });
  const db = new Database(join(dir, 'bare.db'));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec(`CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT, transaction_id TEXT UNIQUE, service TEXT,
      comments TEXT, method TEXT, path TEXT, body BLOB, body_length INTEGER, amount_minor INTEGER, currency TEXT,
      masked_pan TEXT, money_moving INTEGER, state TEXT, created_at INTEGER)`);
    const insert =
      db.prepare(`INSERT INTO t (transaction_id, service, comments, method, path, body, body_length,
      amount_minor, currency, masked_pan, money_moving, state, created_at)
      VALUES (?, 'preauth', 'Parking Authorization', 'POST', '/pts/v2/payments', ?, ?, 1000, 'GBP', '411111******1111',
      1, 'pending', ?)`);
    const chunk = 50;
    let oursMs = 0;
    let peerMs = 0;
    for (let done = 0; done < n; done += chunk) {
      let t = performance.now();
      for (let i = done; i < done + chunk; i++)
        journal.begin({
          transactionId: `T${i}`,
          service: 'preauth',
          comments: 'Parking Authorization',
          method: 'POST',
          path: '/pts/v2/payments',
          body,
          amountMinor: 1000,
          currency: 'GBP',
          maskedPan: '411111******1111',
          moneyMoving: true,
        });
      oursMs += performance.now() - t;
      t = performance.now();
      for (let i = done; i < done + chunk; i++) insert.run(`T${i}`, body, body.length, Date.now());
      peerMs += performance.now() - t;
    }
    const total = Math.ceil(n / chunk) * chunk;
    return { ours: total / (oursMs / 1000), peer: total / (peerMs / 1000) };
  } finally {
    journal.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const append: Benchmark = {
  name: 'journal.append',
  run({ quick }) {
    const n = quick ? 200 : 2_000;
    const body = sampleBody('T0');
    const { ours: o, peer: p } = appendRates(n, body);
    return Promise.resolve([
      {
        name: 'journal.append',
        unit: 'ops/s',
        ours: o,
        peer: 'better-sqlite3 bare insert (WAL, synchronous=FULL)',
        peerValue: p,
        ratio: ratioOf(o, p, true),
        extra: { appends: n },
      },
    ]);
  },
};

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

const forward: Benchmark = {
  name: 'queue.forward',
  async run({ quick }) {
    const n = quick ? 200 : 10_000;
    const concurrency = 32;
    const sandbox = await startSandbox({ port: 0 });
    const dir = tempDir();
    try {
      // Ours: n payments stored offline (encrypted), then forwarded through the queue — each one journaled,
      // marked sent, sent, and its outcome and wipe committed durably.
      const journal = openJournal(join(dir, 'q.db'), { key: Buffer.alloc(32, 2) });
      const limits = {
        maxTransactionMinor: 5_000,
        maxTotalMinorPerCurrency: n * 1_000,
        maxCount: n,
        maxAgeHours: 24,
      };
      const queue = new OfflineQueue(journal, {
        policy: 'prefer-online',
        limits,
        keyProvider: staticKeyProvider(Buffer.alloc(32, 3)),
      });
      // Setup, not measured: stored in one transaction to keep the run short.
      journal.atomically(true, () => {
        for (let i = 0; i < n; i++) {
          const transactionId = `Q${Date.now()}${i}`;
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
          });
        }
      });
      const gateway = gatewayFor(sandbox.url);
      const start = performance.now();
      const report = await queue.forwardPending(new JournaledSender(journal, gatewayTransmitter(gateway)), {
        concurrency,
      });
      const ours = (performance.now() - start) / 1000;
      journal.close();
      if (report.approved !== n) throw new Error(`queue.forward: ${report.approved} of ${n} approved`);

      // Peer: the same payments sent by the gateway client alone (no journal, no queue), same concurrency.
      const bodies = Array.from({ length: n }, (_, i) => {
        const transactionId = `P${Date.now()}${i}`;
        return { transactionId, body: sampleBody(transactionId) };
      });
      const send = gatewayTransmitter(gateway);
      let next = 0;
      const peerStart = performance.now();
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
      const peer = (performance.now() - peerStart) / 1000;
      await gateway.close();
      return [
        {
          name: 'queue.forward',
          unit: 's',
          ours,
          peer: 'gateway client sending the same payments without journal or queue',
          peerValue: peer,
          ratio: ratioOf(ours, peer, false),
          extra: { payments: n, 'payments/s': n / ours, concurrency },
        },
      ];
    } finally {
      await sandbox.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

export const benchmarks: Benchmark[] = [append, forward];
