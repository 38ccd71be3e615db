import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * `parking-terminal bench --quick --json` as a user runs it: every benchmark of the money path runs its harness to the
 * end (child-process sandbox and canned server included) and prints the shape tools read. Figures are not checked:
 * --quick makes them incomparable, and timing has no place in a test.
 */

const BIN = resolve(import.meta.dirname, '../../bin/parking-terminal.js');

interface Result {
  name: string;
  unit: string;
  ours: number;
  peer: string;
  peerValue: number;
  ratio: number;
  cpuMicrosPerOp?: number;
  limit?: { what: string; value: number; unit: string };
  extra?: Record<string, unknown>;
}

async function bench(only: string): Promise<Result[]> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [BIN, 'bench', '--quick', '--json', '--only', only],
    { timeout: 120_000, maxBuffer: 4 * 1024 * 1024 },
  );
  return (JSON.parse(stdout) as { results: Result[] }).results;
}

function wellFormed(r: Result): void {
  expect(r.name.length).toBeGreaterThan(0);
  expect(r.peer.length).toBeGreaterThan(0);
  for (const v of [r.ours, r.peerValue, r.ratio]) expect(Number.isFinite(v) && v > 0).toBe(true);
}

describe('parking-terminal bench', () => {
  it('measures a sale against its round trip, with both floors', async () => {
    const [sale] = await bench('sale.cost');
    expect(sale).toBeDefined();
    wellFormed(sale!);
    expect(sale!.limit?.unit).toBe('ms');
    expect(sale!.extra).toMatchObject({ durableCommitsPerSale: 2 });
    for (const k of [
      'p99',
      'fsyncMicros',
      'sqliteEntryCommitMicros',
      'sqliteOutcomeCommitMicros',
      'sqliteEntryCommitInALoopMicros',
      'sqliteOutcomeCommitInALoopMicros',
      'sqliteFloorMs',
      'sqliteFloorP99Ms',
      'bareExchangeP99Ms',
      'stallsPerSecond',
      'longestStallMs',
    ])
      expect(typeof sale!.extra?.[k]).toBe('number');
  }, 150_000);

  it('measures journal appends and queue forwarding against bare SQLite and bare sends', async () => {
    const results = await bench('journal');
    const append = results.find((r) => r.name === 'journal.append');
    expect(append).toBeDefined();
    wellFormed(append!);
    expect(append!.limit?.unit).toBe('ops/s');
    expect(typeof append!.extra?.fsyncMicros).toBe('number');
    expect(typeof append!.extra?.inFlight32Ratio).toBe('number');
    const lookups = results.find((r) => r.name === 'journal.lookups');
    expect(lookups).toBeDefined();
    wellFormed(lookups!);
    expect(lookups!.extra).toMatchObject({ entries: 20_000, peerEntries: 1_000, readsPerSet: 4 });
    const forward = (await bench('queue.forward'))[0];
    expect(forward?.name).toBe('queue.forward');
    wellFormed(forward!);
    expect(forward!.extra).toMatchObject({ payments: 200 });
    for (const k of [
      'commitsPerPayment',
      'withoutBackgroundWaitSeconds',
      'withoutBackgroundWaitCpuMicrosPerPayment',
      'withoutBackgroundWaitCommitsPerPayment',
      'journalOnlyCpuMicrosPerPayment',
      'journalOnlyCpuLimitPaymentsPerSec',
    ])
      expect(typeof forward!.extra?.[k]).toBe('number');
  }, 250_000);

  it('measures the gateway client against the SDK and the bare exchange of the same bytes', async () => {
    const [throughput] = await bench('gateway.throughput');
    expect(throughput?.name).toBe('gateway.throughput');
    wellFormed(throughput!);
    expect(typeof throughput!.extra?.bareExchangeCpuMicrosPerRequest).toBe('number');
    expect(throughput!.limit?.unit).toBe('req/s');
  }, 150_000);

  it('measures the gateway client against the SDK at the sandbox, each in its own process, one at a time and 16 in flight', async () => {
    const [authorize] = await bench('gateway.authorize');
    expect(authorize?.name).toBe('gateway.authorize');
    wellFormed(authorize!);
    for (const mode of ['sequential', 'concurrent'])
      for (const who of ['Ours', 'PeerQuietLogger']) {
        const cpu = authorize!.extra?.[`${mode}${who}CpuMicrosPerRequest`];
        expect(typeof cpu === 'number' && cpu > 0, `${mode}${who}CpuMicrosPerRequest`).toBe(true);
      }
    // The unmeasured rounds, while each JIT warms, reported apart.
    for (const key of ['warmUpOursCpuMicrosPerRequest', 'warmUpPeerQuietLoggerCpuMicrosPerRequest']) {
      const cpu = authorize!.extra?.[key];
      expect(typeof cpu === 'number' && cpu > 0, key).toBe(true);
    }
    // Read in the client processes: the headline CPU lies between the two modes' figures.
    const seq = authorize!.extra?.sequentialOursCpuMicrosPerRequest as number;
    const conc = authorize!.extra?.concurrentOursCpuMicrosPerRequest as number;
    expect(authorize!.cpuMicrosPerOp).toBeGreaterThanOrEqual(Math.min(seq, conc) - 1);
    expect(authorize!.cpuMicrosPerOp).toBeLessThanOrEqual(Math.max(seq, conc) + 1);
  }, 150_000);
});
