import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type * as Browser from './browser.js';

vi.mock('./browser.js', async (importOriginal) => {
  const actual = await importOriginal<typeof Browser>();
  return {
    ...actual,
    launchChromium: () =>
      Promise.reject(
        new actual.ChromiumUnavailableError(
          'no Chromium: neither @sparticuz/chromium nor /usr/bin/chromium is installed',
        ),
      ),
  };
});

const { printReportPdf } = await import('./pdf.js');
const { writeReports } = await import('./index.js');
const { sampleRunReport } = await import('./sample-run.js');

describe('printReportPdf without a browser', () => {
  it('says why no PDF was written and throws nothing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'certify-pdf-'));
    try {
      const { files, pdf } = await writeReports(sampleRunReport(), dir);
      expect(pdf).toEqual({
        written: false,
        reason: 'no Chromium: neither @sparticuz/chromium nor /usr/bin/chromium is installed',
      });
      expect(files.some((f) => f.endsWith('.pdf'))).toBe(false);
      expect(existsSync(join(dir, 'report.pdf'))).toBe(false);
      expect(await printReportPdf(join(dir, 'report.html'), join(dir, 'x.pdf'))).toMatchObject({
        written: false,
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
