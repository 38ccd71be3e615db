import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeDirectory } from '../../src/config/durable-file.js';
import type { RunReport } from '../results.js';
import { captureFile, caseFileNames } from './evidence.js';
import { renderHtml } from './html.js';
import { renderJunit } from './junit.js';
import { printReportPdf, type PdfResult } from './pdf.js';
import { scrubCardNumbersDeep } from './scrub.js';

/**
 * The reports of `parking-terminal certify run --report DIR` (issue 12, "Reports"): written from a {@link RunReport}
 * alone, card data already masked by the runner and checked once more here (no full card number reaches a file).
 *
 * DIR/
 *   report.json                 the RunReport
 *   junit.xml                   for CI
 *   report.html                 for the acquirer's analyst, printable, self-contained
 *   report.pdf                  report.html printed to A4, where a headless Chromium is available
 *   cases/<ID>.json             each case's evidence bundle (its CaseResult)
 *   cases/<ID>.capture.json     each case's session, the format `certify check FILE` reads
 */

export { captureFile, caseFileNames, type CaptureFile, type CaptureMessage } from './evidence.js';
export { renderHtml } from './html.js';
export { renderJunit } from './junit.js';
export { printReportPdf, screenshotReport, type PdfResult } from './pdf.js';

export interface WriteReportsOptions {
  /** `auto` (default): print report.pdf when a headless Chromium is available; `never`: no PDF. */
  pdf?: 'auto' | 'never';
}

export interface WrittenReports {
  /** Every file written, absolute or relative as `dir` was given, report.pdf included when written. */
  files: string[];
  pdf: PdfResult;
}

function json(value: unknown): string {
  return `${JSON.stringify(scrubCardNumbersDeep(value), null, 2)}\n`;
}

/**
 * Writes every report of a run into `dir` (created with its parents). Files of an earlier run in the same directory
 * are overwritten (an earlier report.pdf is removed when none is printed now), other files left alone. A missing browser only means no PDF (`pdf.written` false, with the reason).
 *
 * @throws the file system's error when `dir` cannot be created or written.
 */
export async function writeReports(
  report: RunReport,
  dir: string,
  options: WriteReportsOptions = {},
): Promise<WrittenReports> {
  const casesDir = join(dir, 'cases');
  // Not fs.mkdir's recursive form, which never calls back for a directory under /proc (src/config/durable-file.ts).
  makeDirectory(casesDir);
  const files: string[] = [];
  const write = async (file: string, content: string): Promise<void> => {
    await writeFile(file, content, 'utf8');
    files.push(file);
  };

  const names = caseFileNames(report.cases);
  await write(join(dir, 'report.json'), json(report));
  await write(join(dir, 'junit.xml'), renderJunit(report));
  const html = join(dir, 'report.html');
  await write(html, renderHtml(report, names));
  for (const [i, result] of report.cases.entries()) {
    const name = names[i] ?? String(i);
    await write(join(casesDir, `${name}.json`), json(result));
    await write(join(casesDir, `${name}.capture.json`), json(captureFile(result)));
  }

  const pdfFile = join(dir, 'report.pdf');
  const pdf: PdfResult =
    options.pdf === 'never'
      ? { written: false, reason: 'not asked for (pdf: never)' }
      : await printReportPdf(html, pdfFile);
  if (pdf.written) files.push(pdf.file);
  // A PDF left by an earlier run into the same directory would show another run's results.
  else await rm(pdfFile, { force: true });
  return { files, pdf };
}
