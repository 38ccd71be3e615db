import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { writeReports } from './index.js';
import { HOSTILE_TEXT, sampleRunReport, withHostileText } from './sample-run.js';

const dirs: string[] = [];

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'certify-report-'));
  dirs.push(dir);
  return dir;
}

afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe('writeReports', () => {
  it('creates the directory and writes the JSON, JUnit and HTML reports and two files per case', async () => {
    const dir = join(await tempDir(), 'nested', 'report');
    const report = sampleRunReport();
    const { files, pdf } = await writeReports(report, dir, { pdf: 'never' });
    expect(pdf).toEqual({ written: false, reason: 'not asked for (pdf: never)' });
    const relative = files.map((f) => f.slice(dir.length + 1)).sort();
    expect(relative).toEqual(
      [
        'report.json',
        'junit.xml',
        'report.html',
        ...['PK-MTR-N2-CL-01', 'PK-KSK-N1-CT-02', 'PK-TAP-N2-SW-03'].flatMap((id) => [
          `cases/${id}.json`,
          `cases/${id}.capture.json`,
        ]),
      ].sort(),
    );
    expect(JSON.parse(await readFile(join(dir, 'report.json'), 'utf8'))).toEqual(report);
    expect(JSON.parse(await readFile(join(dir, 'cases', 'PK-KSK-N1-CT-02.json'), 'utf8'))).toEqual(
      report.cases[1],
    );
    const capture = JSON.parse(
      await readFile(join(dir, 'cases', 'PK-KSK-N1-CT-02.capture.json'), 'utf8'),
    ) as {
      format: string;
      case: string;
      messages: unknown[];
    };
    expect(capture).toMatchObject({ format: 'parking-terminal-capture/1', case: 'PK-KSK-N1-CT-02' });
    expect(capture.messages).toHaveLength(2);
  });

  it('keeps every file of a case with a hostile id inside cases/', async () => {
    const dir = await tempDir();
    const report = withHostileText(sampleRunReport());
    report.cases[0]!.id = '../../escaped';
    const { files } = await writeReports(report, dir, { pdf: 'never' });
    for (const f of files) expect(f.startsWith(dir)).toBe(true);
    expect(existsSync(join(dir, '..', 'escaped.json'))).toBe(false);
    const names = await readdir(join(dir, 'cases'));
    expect(names).toHaveLength(6);
    for (const n of names) expect(n).toMatch(/^case-00[1-3]-[0-9a-f]{8}(\.capture)?\.json$/);
    // The id itself is kept inside the files.
    const first = JSON.parse(await readFile(join(dir, 'cases', names.sort()[0]!), 'utf8')) as {
      case?: string;
      id?: string;
    };
    expect([first.case, first.id]).toContain('../../escaped');
    expect(HOSTILE_TEXT.length).toBeGreaterThan(0);
  });

  it('writes no full card number into any file', async () => {
    const dir = await tempDir();
    const report = sampleRunReport();
    report.cases[0]!.messages[0]!.body.note = '4111111111111111';
    report.cases[0]!.messages[0]!.response = { leaked: '5555 5555 5555 4444' };
    const { files } = await writeReports(report, dir, { pdf: 'never' });
    for (const f of files) {
      const text = (await readFile(f, 'utf8')).replace(/[\s-]/g, '');
      expect(text, f).not.toContain('4111111111111111');
      expect(text, f).not.toContain('5555555555554444');
    }
  });

  it('removes a report.pdf of an earlier run when it prints none now', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'report.pdf'), '%PDF-1.4 old run');
    await writeReports(sampleRunReport(), dir, { pdf: 'never' });
    expect(existsSync(join(dir, 'report.pdf'))).toBe(false);
  });
});
