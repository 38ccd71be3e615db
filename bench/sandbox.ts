/**
 * `sandbox.throughput`: card-present authorizations per second that the sandbox gateway answers to 50 concurrent
 * clients (each request HTTP-signed, verified, validated against the EMV table and committed to the in-memory
 * ledger). Peer, measured in the same run with the same client and the same signed requests: a bare node:http
 * server that reads the body and answers a canned 201. The ratio (ours / peer) says how much of the raw HTTP
 * capacity the gateway's work costs; the sandbox must never be the bottleneck of the terminal's own benchmarks.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { silentLogger } from '../src/log/index.js';
import { DEMO_MERCHANT, startSandbox } from '../src/sandbox/index.js';
import { signRequest } from '../src/sandbox/request-signer.js';
import { samplePayment } from '../src/sandbox/sample-requests.js';
import { ratioOf, type Benchmark, type BenchOptions, type BenchResult } from './types.js';

const CONCURRENCY = 50;

/** Sends `total` signed authorizations from `CONCURRENCY` clients; returns requests per second. */
async function drive(
  baseUrl: string,
  total: number,
  runTag: string,
): Promise<{ perSecond: number; failures: number }> {
  const host = new URL(baseUrl).host;
  const pool = new Pool(baseUrl, { connections: CONCURRENCY, pipelining: 1 });
  let next = 0;
  let failures = 0;
  const started = process.hrtime.bigint();
  const client = async (): Promise<void> => {
    for (;;) {
      const i = next++;
      if (i >= total) return;
      // Amount 12.50: an ordinary parking fee, so the sandbox approves (no trigger).
      const body = JSON.stringify(samplePayment({ amountMinor: 1250, transactionId: `${runTag}-${i}` }));
      const headers = signRequest({
        method: 'POST',
        path: '/pts/v2/payments',
        host,
        body,
        merchant: DEMO_MERCHANT,
      });
      const res = await pool.request({
        method: 'POST',
        path: '/pts/v2/payments',
        headers: { ...headers, 'content-type': 'application/json' },
        body,
      });
      await res.body.text();
      if (res.statusCode !== 201) failures++;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, client));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await pool.close();
  return { perSecond: total / seconds, failures };
}

/** The peer: node:http reading the body and answering a fixed 201 JSON. */
async function cannedServer(): Promise<{ url: string; close: () => Promise<void> }> {
  const canned = JSON.stringify({ id: '0'.repeat(22), status: 'AUTHORIZED' });
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(201, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(canned) });
      res.end(canned);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function throughput(options: BenchOptions): Promise<BenchResult[]> {
  const total = options.quick ? 200 : 6000;
  const sandbox = await startSandbox({ logger: silentLogger() });
  const peer = await cannedServer();
  try {
    // Warm both paths (JIT, connections) before measuring.
    await drive(sandbox.url, Math.min(200, total), 'warm');
    await drive(peer.url, Math.min(200, total), 'warm');
    const ours = await drive(sandbox.url, total, 'run');
    const theirs = await drive(peer.url, total, 'run');
    const consistent = sandbox.consistency().ok;
    return [
      {
        name: 'sandbox.throughput',
        unit: 'req/s',
        ours: Math.round(ours.perSecond),
        peer: 'node:http canned 201',
        peerValue: Math.round(theirs.perSecond),
        ratio: ratioOf(ours.perSecond, theirs.perSecond, true),
        extra: {
          clients: CONCURRENCY,
          requests: total,
          failures: ours.failures,
          ledgerConsistent: String(consistent),
        },
      },
    ];
  } finally {
    await peer.close();
    await sandbox.close();
  }
}

export const benchmarks: Benchmark[] = [{ name: 'sandbox.throughput', run: throughput }];
