/**
 * `certify run` through the command line: a subset of the shipped pack (every model, both networks, each entry mode,
 * the MLV amounts, every kind of timeout chain and DCC) against the embedded sandbox, then the same cases against an
 * independent test host — the sandbox run as its own process and given by URL — whose ledger must show no refused
 * request and nothing left open.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunTally } from '../../certification/results.js';
import { main } from '../../src/cli/main.js';

const CASES = [
  'PK-ATT-N1-CT-01',
  'PK-ATT-N2-CL-01',
  'PK-ATT-N1-SW-01',
  'PK-ATT-N2-FB-01',
  'PK-ATT-N2-KY-01',
  'PK-ATT-N1-CT-02',
  'PK-ATT-N2-CT-04',
  'PK-ATT-N2-CT-06',
  'PK-ATT-N1-CT-07',
  'PK-ATT-N2-CT-10',
  'PK-ATT-N1-CT-11',
  'PK-ATT-N1-CL-02',
  'PK-KSK-N1-CL-01',
  'PK-KSK-N2-SW-01',
  'PK-KSK-N1-CT-03',
  'PK-MTR-N2-CL-03',
  'PK-MTR-N1-CT-04',
  'PK-MTR-N2-CT-05',
  'PK-MTR-N1-CT-06',
  'PK-MTR-N2-CT-07',
  'PK-MTR-N1-CT-08',
  'PK-MTR-N2-CT-11',
  'PK-TAG-N1-CL-01',
  'PK-TAG-N2-CT-02',
  'PK-TAG-N1-CT-03',
  'PK-TAG-N2-CT-03',
  'PK-ATT-N2-CT-15',
  'PK-MTR-N2-CT-10',
];

const dir = mkdtempSync(join(tmpdir(), 'pt-certify-run-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(
  args: string[],
): Promise<{ code: number; json: Record<string, unknown>; progress: string }> {
  let out = '';
  let err = '';
  const sink = (onChunk: (s: string) => void): Writable =>
    new Writable({
      write(chunk: Buffer, _enc, cb) {
        onChunk(chunk.toString());
        cb();
      },
    });
  const code = await main(args, {
    stdout: sink((s) => (out += s)),
    stderr: sink((s) => (err += s)),
    signal: new AbortController().signal,
    cwd: dir,
  });
  return { code, json: JSON.parse(out) as Record<string, unknown>, progress: err };
}

type Summary = RunTally;

describe('certify run against the embedded sandbox', () => {
  it('passes the subset, a progress line per case, the keyed case skipped with its reason', async () => {
    const reportDir = join(dir, 'report');
    const r = await cli(['certify', 'run', '--case', CASES.join(','), '--report', reportDir]);
    const summary = r.json.summary as Summary;
    expect(r.json.failed).toEqual([]);
    expect(r.code).toBe(0);
    expect(summary).toMatchObject({ cases: CASES.length, failed: 0, skipped: 1, errorFindings: 0 });
    expect(summary.passed).toBe(CASES.length - 1);
    expect(summary.messages).toBeGreaterThan(CASES.length);
    const skipped = r.json.skipped as Array<{ id: string; reason: string }>;
    expect(skipped.map((c) => c.id)).toEqual(['PK-ATT-N2-KY-01']);
    expect(skipped[0]?.reason).toContain('keyed');
    const lines = r.progress.trim().split('\n');
    expect(lines).toHaveLength(CASES.length);
    expect(lines[0]).toMatch(new RegExp(`^\\[1/${CASES.length}\\] PK-ATT-N1-CT-01 passed \\d+\\.\\d s$`));

    // The reports and the evidence: a capture file of the run is a session `certify check` accepts and passes.
    expect(r.json.report).toMatchObject({ dir: reportDir });
    const report = JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as {
      summary: Summary;
      timeoutReversalDelayMs: number[];
    };
    expect(report.summary).toEqual(summary);
    // The embedded sandbox's shortened wait before a timeout reversal, stated where the analyst reads the run.
    expect(report.timeoutReversalDelayMs).toEqual([500]);
    const junit = readFileSync(join(reportDir, 'junit.xml'), 'utf8');
    expect(junit).toContain(`tests="${CASES.length}"`);
    expect(junit).toContain('failures="0"');
    expect(junit).toContain('<property name="journal.timeoutReversalDelayMs" value="500"/>');
    const html = readFileSync(join(reportDir, 'report.html'), 'utf8');
    expect(html).toContain('0.5 s after the original');
    for (const id of CASES) expect(html).toContain(id);
    expect(html).not.toMatch(/4761739001010119|5413339000001513/);
    const bundle = JSON.parse(readFileSync(join(reportDir, 'cases', 'PK-ATT-N2-CT-06.json'), 'utf8')) as {
      messages: Array<{ service: string; body: { pointOfSaleInformation?: { trackData?: string } } }>;
      transactionIds: string[];
    };
    expect(bundle.messages.map((m) => m.service)).toEqual(['sale', 'refund-payment', 'void-refund']);
    expect(new Set(bundle.transactionIds).size).toBeGreaterThanOrEqual(2);
    const checked = await cli(['certify', 'check', join(reportDir, 'cases', 'PK-ATT-N2-CT-06.capture.json')]);
    expect(checked.code).toBe(0);
    expect(checked.json).toMatchObject({ ok: true });
  }, 120_000);

  it('credits and refunds with the PIN its own terminal generated, whatever PIN file --config names', async () => {
    const pinFile = join(dir, 'operator.pin');
    writeFileSync(pinFile, '4321\n');
    chmodSync(pinFile, 0o600);
    writeFileSync(join(dir, 'pin-config.json'), JSON.stringify({ terminal: { operatorPinFile: pinFile } }));
    const r = await cli([
      'certify',
      'run',
      '--case',
      'PK-ATT-N1-CT-08,PK-ATT-N2-CT-06',
      '--config',
      'pin-config.json',
    ]);
    expect(r.json.failed).toEqual([]);
    expect(r.json.summary).toMatchObject({ cases: 2, passed: 2 });
  }, 60_000);

  it('refuses a bad pack, an unknown case and a bad gateway with exit 2', async () => {
    expect((await cli(['certify', 'run', '--case', 'PK-NOPE-01'])).code).toBe(2);
    expect((await cli(['certify', 'run', '--gateway', 'ftp://x'])).code).toBe(2);
    const missing = await cli(['certify', 'run', join(dir, 'missing.yaml')]);
    expect(missing.code).toBe(2);
    expect(missing.json).toMatchObject({ error: { code: 'PACK_UNREADABLE' } });
  });
});

describe('certify run against an independent test host given by --gateway URL', () => {
  let sandbox: ChildProcess;
  let url = '';

  beforeAll(async () => {
    sandbox = spawn(process.execPath, ['bin/parking-terminal.js', 'sandbox', '--port', '0'], {
      cwd: join(import.meta.dirname, '../..'),
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const lines = createInterface({ input: sandbox.stdout! });
    url = await new Promise<string>((resolve, reject) => {
      lines.once('line', resolve);
      sandbox.once('exit', (code) => reject(new Error(`sandbox exited ${code}`)));
    });
  }, 30_000);

  afterAll(() => {
    sandbox.kill('SIGTERM');
  });

  it('sends the same messages, which the host neither refuses nor leaves open', async () => {
    const picked = [
      'PK-ATT-N2-CT-01',
      'PK-ATT-N2-CT-06',
      'PK-MTR-N1-CL-03',
      'PK-TAG-N2-CL-01',
      'PK-MTR-N2-CT-05',
    ];
    // The configuration's own delay applies against a URL: this host is a sandbox, which does not need the 60 s.
    writeFileSync(
      join(dir, 'short-delay.json'),
      JSON.stringify({ journal: { timeoutReversalDelayMs: 700 } }),
    );
    const reportDir = join(dir, 'url-report');
    const r = await cli([
      'certify',
      'run',
      '--gateway',
      url,
      '--config',
      'short-delay.json',
      '--report',
      reportDir,
      '--case',
      picked.join(','),
    ]);
    expect(r.json.failed).toEqual([]);
    expect(r.code).toBe(0);
    // The host answers /__sandbox/faults, so even the timeout case runs.
    expect(r.json.summary).toMatchObject({ cases: 5, passed: 5, skipped: 0, errorFindings: 0 });
    const ledger = (await (await fetch(`${url}/__sandbox/ledger`)).json()) as {
      transactions: unknown[];
      unmatchedRequests: Array<{ httpStatus?: number; status?: number }>;
    };
    expect(ledger.transactions.length).toBeGreaterThanOrEqual(10);
    expect(ledger.unmatchedRequests).toEqual([]);
    const consistency = (await (await fetch(`${url}/__sandbox/consistency?requireResolved=1`)).json()) as {
      ok: boolean;
      problems: unknown[];
    };
    expect(consistency.problems).toEqual([]);
    const report = JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as {
      timeoutReversalDelayMs: number[];
    };
    expect(report.timeoutReversalDelayMs).toEqual([700]);
  }, 120_000);

  it("waits the configuration's timeout reversal delay, 60 s by default, and the reports state it", async () => {
    const reportDir = join(dir, 'url-default-report');
    const r = await cli([
      'certify',
      'run',
      '--gateway',
      url,
      '--case',
      'PK-ATT-N2-CT-01',
      '--report',
      reportDir,
    ]);
    expect(r.json.failed).toEqual([]);
    const report = JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as {
      timeoutReversalDelayMs: number[];
      cases: Array<{ timeoutReversalDelayMs?: number }>;
    };
    expect(report.timeoutReversalDelayMs).toEqual([60_000]);
    expect(report.cases[0]?.timeoutReversalDelayMs).toBe(60_000);
    const bundle = JSON.parse(readFileSync(join(reportDir, 'cases', 'PK-ATT-N2-CT-01.json'), 'utf8')) as {
      timeoutReversalDelayMs?: number;
    };
    expect(bundle.timeoutReversalDelayMs).toBe(60_000);
    expect(readFileSync(join(reportDir, 'junit.xml'), 'utf8')).toContain(
      '<property name="journal.timeoutReversalDelayMs" value="60000"/>',
    );
    expect(readFileSync(join(reportDir, 'report.html'), 'utf8')).toContain('60 s after the original');
  }, 60_000);
});
