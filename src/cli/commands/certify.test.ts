import { execFileSync, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunReport } from '../../../certification/results.js';
import { main } from '../main.js';
import { DEFAULT_PACK, MAX_SESSION_BYTES, shippedPackPath } from './certify.js';

const dir = mkdtempSync(join(tmpdir(), 'pt-certify-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function run(args: string[]): Promise<{ code: number; json: unknown }> {
  let out = '';
  const stdout = new Writable({
    write(chunk: Buffer, _enc, cb) {
      out += chunk.toString();
      cb();
    },
  });
  // Progress lines of certify run: not the JSON document.
  const stderr = new Writable({ write: (_chunk, _enc, cb) => cb() });
  const code = await main(args, {
    stdout,
    stderr,
    signal: new AbortController().signal,
    cwd: dir,
  });
  return { code, json: JSON.parse(out) };
}

function file(name: string, content: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

/** A timeout void that names an original of the session: compliant. */
const sale = {
  method: 'POST',
  path: '/pts/v2/payments',
  body: {
    clientReferenceInformation: { code: 'C1', comments: 'Parking Sale', transactionId: 'T1' },
    orderInformation: { amountDetails: { totalAmount: '6.00', currency: 'GBP' } },
    processingInformation: { capture: true },
  },
};
const timeoutVoid = {
  method: 'POST',
  path: '/pts/v2/voids',
  body: { clientReferenceInformation: { comments: 'VOID Timeout', transactionId: 'T1' } },
};

describe('parking-terminal certify check', () => {
  it('exits 0 with ok true when no finding is an error', async () => {
    const clean = await run([
      'certify',
      'check',
      file('void.json', [
        {
          ...timeoutVoid,
          body: { clientReferenceInformation: { comments: 'VOID Capture' } },
          path: '/pts/v2/captures/1/voids',
        },
      ]),
    ]);
    expect(clean.code).toBe(0);
    expect(clean.json).toEqual({ ok: true, messages: [{ index: 0, service: 'void-capture', findings: [] }] });
  });

  it('exits 1 and names rule and field when a finding is an error', async () => {
    const { code, json } = await run(['certify', 'check', file('bad.json', [sale, timeoutVoid])]);
    expect(code).toBe(1);
    const doc = json as {
      ok: boolean;
      messages: Array<{ service: string; findings: Array<{ rule: string; field: string }> }>;
    };
    expect(doc.ok).toBe(false);
    expect(doc.messages.map((m) => m.service)).toEqual(['sale', 'timeout-void']);
    expect(doc.messages[0]?.findings).toContainEqual(
      expect.objectContaining({
        rule: 'DE-REQUIRED-FIELD',
        field: 'merchantInformation.transactionLocalDateTime',
      }),
    );
    expect(doc.messages[1]?.findings).toEqual([]);
  });

  it('refuses a file too large to be a session before reading it, with a stable code', async () => {
    const huge = join(dir, 'huge.json');
    writeFileSync(huge, '');
    truncateSync(huge, MAX_SESSION_BYTES + 1);
    expect(await run(['certify', 'check', huge])).toMatchObject({
      code: 2,
      json: { error: { code: 'FILE_TOO_LARGE' } },
    });
  });

  it('refuses what is not a regular file (a pipe would block, a device never end)', async () => {
    const fifo = join(dir, 'session.fifo');
    execFileSync('mkfifo', [fifo]);
    // A writer, so that a reader that opens the pipe is not blocked for ever.
    const writer = spawn('sh', ['-c', `printf '[]' > '${fifo}'`], { stdio: 'ignore' });
    try {
      expect(await run(['certify', 'check', fifo])).toMatchObject({
        code: 2,
        json: { error: { code: 'NOT_A_FILE' } },
      });
    } finally {
      writer.kill();
    }
  });

  it('exits 2 on bad input with a stable code', async () => {
    expect(await run(['certify', 'check', file('obj.json', { method: 'POST' })])).toMatchObject({
      code: 2,
      json: { error: { code: 'SESSION_NOT_ARRAY' } },
    });
    expect(
      await run([
        'certify',
        'check',
        file('body.json', [{ method: 'POST', path: '/pts/v2/credits', body: 'x' }]),
      ]),
    ).toMatchObject({
      code: 2,
      json: { error: { code: 'MESSAGE_BAD_BODY', index: 0 } },
    });
    expect(await run(['certify', 'check', file('junk.json', '[{')])).toMatchObject({
      code: 2,
      json: { error: { code: 'BAD_JSON' } },
    });
    expect(await run(['certify', 'check', join(dir, 'missing.json')])).toMatchObject({
      code: 2,
      json: { error: { code: 'FILE_UNREADABLE' } },
    });
    expect(await run(['certify', 'check'])).toMatchObject({
      code: 2,
      json: { error: { code: 'BAD_ARGUMENTS' } },
    });
    expect(await run(['certify', 'frobnicate'])).toMatchObject({
      code: 2,
      json: { error: { code: 'BAD_ARGUMENTS' } },
    });
  });

  it('reads a session file saved with a byte order mark', async () => {
    const r = await run(['certify', 'check', file('bom.json', `\uFEFF${JSON.stringify([sale])}`)]);
    expect(r.json).not.toMatchObject({ error: { code: 'BAD_JSON' } });
    expect(r.code).not.toBe(2);
  });

  it('prints a card number that a finding quotes masked', async () => {
    const pan = '4111111111111111';
    const r = await run([
      'certify',
      'check',
      file('pan.json', [
        {
          ...sale,
          body: {
            ...sale.body,
            pointOfSaleInformation: { entryMode: pan, emv: { tags: '9F0206000000000600' } },
          },
        },
      ]),
    ]);
    expect(r.code).toBe(1);
    expect(JSON.stringify(r.json)).toContain('411111******1111');
    expect(JSON.stringify(r.json)).not.toContain(pan);
  });

  it('refuses a session in which nothing was checked, never answering ok', async () => {
    expect(await run(['certify', 'check', file('empty.json', [])])).toMatchObject({
      code: 2,
      json: { error: { code: 'SESSION_EMPTY' } },
    });
    // The capture file of a skipped case holds no messages.
    expect(
      await run([
        'certify',
        'check',
        file('skipped.capture.json', { format: 'parking-terminal-capture/1', case: 'X', messages: [] }),
      ]),
    ).toMatchObject({ code: 2, json: { error: { code: 'SESSION_EMPTY' } } });
    expect(
      await run([
        'certify',
        'check',
        file('unjudged.json', [{ method: 'POST', path: '/nowhere', body: {} }]),
      ]),
    ).toMatchObject({ code: 2, json: { error: { code: 'SESSION_NOT_JUDGED' } } });
  });

  it('refuses a --gateway URL with a user name or password, which the report would carry', async () => {
    for (const url of ['https://user:secret@gateway.example', 'https://user@gateway.example']) {
      const r = await run(['certify', 'run', '--gateway', url]);
      expect(r).toMatchObject({ code: 2, json: { error: { code: 'BAD_ARGUMENTS' } } });
      expect(JSON.stringify(r)).not.toContain('secret');
    }
  });
});

describe('parking-terminal certify run', () => {
  it('refuses a report directory it cannot write before it runs a case', async () => {
    let progress = '';
    let out = '';
    const code = await main(
      ['certify', 'run', '--case', 'PK-ATT-N1-CT-01', '--report', join(file('plain-file', 'x'), 'report')],
      {
        stdout: new Writable({
          write(chunk: Buffer, _enc, cb) {
            out += chunk.toString();
            cb();
          },
        }),
        stderr: new Writable({
          write(chunk: Buffer, _enc, cb) {
            progress += chunk.toString();
            cb();
          },
        }),
        signal: new AbortController().signal,
        cwd: dir,
      },
    );
    expect(code).toBe(2);
    expect(JSON.parse(out)).toMatchObject({ error: { code: 'REPORT_UNWRITABLE' } });
    // Nothing was played: a whole pack is not run to lose its results at the end.
    expect(progress).toBe('');
  });
});

describe('parking-terminal certify run: reports that cannot be written after the run', () => {
  it('refuses with REPORT_UNWRITABLE and still gives what the run found', async () => {
    const reportDir = join(dir, 'blocked-report');
    // A directory where the case's evidence file goes: the report directory is writable, that file is not.
    mkdirSync(join(reportDir, 'cases', 'PK-ATT-N1-CT-01.json'), { recursive: true });
    const r = await run(['certify', 'run', '--case', 'PK-ATT-N1-CT-01', '--report', reportDir]);
    expect(r).toMatchObject({
      code: 2,
      json: {
        error: {
          code: 'REPORT_UNWRITABLE',
          outcome: 'passed',
          summary: { cases: 1, passed: 1 },
          failed: [],
        },
      },
    });
  });
});

describe('parking-terminal certify run: nothing checked', () => {
  it('refuses a --case that names no case instead of running the whole pack', async () => {
    for (const ids of [',', '']) {
      const r = await run(['certify', 'run', '--case', ids, '--gateway', 'http://127.0.0.1:9']);
      expect(r).toMatchObject({ code: 2, json: { error: { code: 'BAD_ARGUMENTS' } } });
    }
  });

  it('refuses a run whose every case was skipped, after writing the reports that say why', async () => {
    const pack = file(
      'skipped.yaml',
      `pack: skipped
title: Every case skipped
version: '1'
cases:
  - id: SK-01
    title: A case this terminal cannot run
    model: meter
    attended: false
    card: n1-swipe
    notApplicable: the meter has no magnetic stripe reader
    steps:
      - do: park
        minutes: 60
        expect: []
`,
    );
    const reportDir = join(dir, 'skipped-report');
    const r = await run(['certify', 'run', pack, '--report', reportDir]);
    expect(r).toMatchObject({
      code: 2,
      json: {
        error: {
          code: 'NOTHING_CHECKED',
          skipped: [{ id: 'SK-01', reason: 'the meter has no magnetic stripe reader' }],
        },
      },
    });
    expect(existsSync(join(reportDir, 'report.html'))).toBe(true);
  });
});

describe('parking-terminal certify run: stopped', () => {
  it('stops after the case being played on SIGINT, writes the reports and ends with RUN_STOPPED', async () => {
    const controller = new AbortController();
    let out = '';
    const reportDir = join(dir, 'stopped-report');
    const code = await main(
      ['certify', 'run', '--case', 'PK-ATT-N1-CT-01,PK-ATT-N2-CL-01', '--report', reportDir],
      {
        stdout: new Writable({
          write(chunk: Buffer, _enc, cb) {
            out += chunk.toString();
            cb();
          },
        }),
        // The first case's progress line: the signal comes while the run is under way.
        stderr: new Writable({
          write(chunk: Buffer, _enc, cb) {
            if (chunk.toString().startsWith('[1/2]')) controller.abort();
            cb();
          },
        }),
        signal: controller.signal,
        cwd: dir,
      },
    );
    expect(code).toBe(2);
    expect(JSON.parse(out)).toMatchObject({
      error: { code: 'RUN_STOPPED', summary: { cases: 2, passed: 1, skipped: 1 } },
    });
    const report = JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as RunReport;
    expect(report).toMatchObject({ stopped: true, outcome: 'stopped' });
    expect(report.cases[1]).toMatchObject({
      id: 'PK-ATT-N2-CL-01',
      verdict: 'skipped',
      skipReason: 'the run was stopped before this case',
    });
  });
});

describe('the shipped pack', () => {
  const root = fileURLToPath(new URL('../../..', import.meta.url));
  const pack = join(root, 'certification', 'scripts', 'parking.yaml');

  it('is found from the sources', () => {
    expect(DEFAULT_PACK).toBe(pack);
    expect(shippedPackPath(pathToFileURL(join(root, 'src/cli/commands/certify.ts')))).toBe(pack);
  });

  it('is found from the compiled command of npm run build (dist/src/cli/commands), which copies no YAML', () => {
    expect(shippedPackPath(pathToFileURL(join(root, 'dist/src/cli/commands/certify.js')))).toBe(pack);
  });
});
