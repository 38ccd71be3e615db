/**
 * `sandbox.throughput`: card-present authorizations per second that the sandbox gateway answers to 50 concurrent
 * clients (each request HTTP-signed, verified, validated against the EMV table and committed to the in-memory
 * ledger). Peer, measured in the same run with the same client and the same signed requests: a bare node:http
 * server that reads the body and answers a canned 201. The ratio (ours / peer) says how much of the raw HTTP
 * capacity the gateway's work costs; the sandbox must never be the bottleneck of the terminal's own benchmarks.
 *
 * Both servers run in their own process, as the sandbox does under `bench gateway.authorize`, so that the clients'
 * signing is not charged to them and each one's CPU time per request can be read from /proc (Linux; the figures are
 * left out elsewhere): `sandboxCpuMicrosPerRequest` is what one authorization costs the sandbox, the figure that
 * decides whether it can keep up with a client.
 */
import { Pool } from 'undici';
import { DEMO_MERCHANT } from '../src/sandbox/index.js';
import { signRequest } from '../src/sandbox/request-signer.js';
import { samplePayment } from '../src/sandbox/sample-requests.js';
import { commandPath, serverProcess, type ServerProcess } from './server-process.js';
import { ratioOf, type Benchmark, type BenchOptions, type BenchResult } from './types.js';

const CONCURRENCY = 50;

/** The peer: node:http reading the body and answering a fixed 201 JSON; prints its URL first. */
const CANNED_SERVER = `
const { createServer } = require('node:http');
const canned = JSON.stringify({ id: '0'.repeat(22), status: 'AUTHORIZED' });
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(201, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(canned) });
    res.end(canned);
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write('http://127.0.0.1:' + server.address().port + '\\n'));
process.on('SIGTERM', () => process.exit(0));
`;

async function drive(
  server: ServerProcess,
  total: number,
  runTag: string,
): Promise<{ perSecond: number; failures: number; cpuMicrosPerRequest: number | undefined }> {
  const host = new URL(server.url).host;
  const pool = new Pool(server.url, { connections: CONCURRENCY, pipelining: 1 });
  let next = 0;
  let failures = 0;
  const cpuBefore = server.cpuMicros();
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
  const cpuAfter = server.cpuMicros();
  await pool.close();
  return {
    perSecond: total / seconds,
    failures,
    cpuMicrosPerRequest:
      cpuBefore !== undefined && cpuAfter !== undefined ? (cpuAfter - cpuBefore) / total : undefined,
  };
}

async function ledgerConsistent(url: string): Promise<boolean> {
  const res = await fetch(`${url}/__sandbox/consistency`);
  const body = (await res.json()) as { ok?: unknown };
  return body.ok === true;
}

async function throughput(options: BenchOptions): Promise<BenchResult[]> {
  const total = options.quick ? 200 : 6000;
  const bin = commandPath();
  const sandbox = await serverProcess([bin, 'sandbox', '--port', '0']);
  const peer = await serverProcess(['-e', CANNED_SERVER]).catch(async (e: unknown) => {
    await sandbox.close();
    throw e;
  });
  try {
    // Warm both paths (JIT, connections) before measuring; the sandbox's code reaches its steady cost only after a
    // few thousand authorizations.
    await drive(sandbox, Math.min(4000, total), 'warm');
    await drive(peer, Math.min(1000, total), 'warm');
    const ours = await drive(sandbox, total, 'run');
    const theirs = await drive(peer, total, 'run');
    const consistent = await ledgerConsistent(sandbox.url);
    return [
      {
        name: 'sandbox.throughput',
        unit: 'req/s',
        ours: Math.round(ours.perSecond),
        peer: 'node:http canned 201',
        peerValue: Math.round(theirs.perSecond),
        ratio: ratioOf(ours.perSecond, theirs.perSecond, true),
        // The servers' CPU per request (read from /proc), where it can be read.
        ...(ours.cpuMicrosPerRequest !== undefined
          ? { cpuMicrosPerOp: Math.round(ours.cpuMicrosPerRequest) }
          : {}),
        ...(theirs.cpuMicrosPerRequest !== undefined
          ? { peerCpuMicrosPerOp: Math.round(theirs.cpuMicrosPerRequest) }
          : {}),
        extra: {
          clients: CONCURRENCY,
          requests: total,
          failures: ours.failures,
          ledgerConsistent: String(consistent),
          servers: 'child processes',
          ...(ours.cpuMicrosPerRequest !== undefined
            ? { sandboxCpuMicrosPerRequest: Math.round(ours.cpuMicrosPerRequest) }
            : {}),
          ...(theirs.cpuMicrosPerRequest !== undefined
            ? { peerCpuMicrosPerRequest: Math.round(theirs.cpuMicrosPerRequest) }
            : {}),
        },
      },
    ];
  } finally {
    await peer.close();
    await sandbox.close();
  }
}

export const benchmarks: Benchmark[] = [
  {
    name: 'sandbox.throughput',
    description:
      'authorizations per second the sandbox answers to 50 concurrent clients; peer: node:http answering a canned ' +
      '201. Limited by the sandbox’s verification, validation and ledger.',
    run: throughput,
  },
];
