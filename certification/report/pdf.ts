import { writeFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import { ChromiumUnavailableError, launchChromium } from './browser.js';

/** How long a launch or a page operation may take before the PDF is given up (a run must not hang on a browser). */
const BROWSER_TIMEOUT_MS = 60_000;

export type PdfResult = { written: true; file: string } | { written: false; reason: string };

async function withReportPage<T>(htmlFile: string, use: (page: Page) => Promise<T>): Promise<T> {
  const launched = await launchChromium([], { timeoutMs: BROWSER_TIMEOUT_MS });
  try {
    // A fresh context per report: nothing from an earlier page, and the network off (the report needs none).
    const context = await launched.browser.newContext({ offline: true, javaScriptEnabled: false });
    const page = await context.newPage();
    page.setDefaultTimeout(BROWSER_TIMEOUT_MS);
    await page.goto(pathToFileURL(htmlFile).href, { waitUntil: 'load' });
    return await use(page);
  } finally {
    await launched.close();
  }
}

/**
 * Prints the HTML report to an A4 PDF with its print stylesheet. Never throws: without a browser, or when printing
 * fails, the answer says why and no file is written.
 */
export async function printReportPdf(htmlFile: string, pdfFile: string): Promise<PdfResult> {
  try {
    const pdf = await withReportPage(htmlFile, (page) =>
      page.pdf({ format: 'A4', printBackground: true, preferCSSPageSize: true }),
    );
    await writeFile(pdfFile, pdf);
    return { written: true, file: pdfFile };
  } catch (e) {
    const reason =
      e instanceof ChromiumUnavailableError
        ? e.message
        : `printing failed: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`;
    return { written: false, reason };
  }
}

/**
 * A PNG of the top of the HTML report (the summary), for the README.
 *
 * @param options.width viewport width in CSS pixels (default 1000); `fullPage` captures the whole report.
 * @throws ChromiumUnavailableError when no browser can be started.
 */
export async function screenshotReport(
  htmlFile: string,
  pngFile: string,
  options: { width?: number; height?: number; fullPage?: boolean } = {},
): Promise<void> {
  await withReportPage(htmlFile, async (page) => {
    await page.setViewportSize({ width: options.width ?? 1000, height: options.height ?? 1100 });
    await page.screenshot({ path: pngFile, fullPage: options.fullPage ?? false });
  });
}
