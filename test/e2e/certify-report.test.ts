import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { screenshotReport, writeReports, type WrittenReports } from '../../certification/report/index.js';
import { HOSTILE_TEXT, sampleRunReport, withHostileText } from '../../certification/report/sample-run.js';
import { launchBrowser, type LaunchedBrowser } from './browser.js';

/**
 * The certification reports (issue 12, "Reports") as their readers get them: report.html opened in a real headless
 * Chromium from the file system, as the analyst opens it and as it is printed; junit.xml read by the browser's XML
 * parser, as strict as a CI server's; report.pdf as printed by the same browser.
 */

// The root tsconfig has no DOM library (src/ is Node code): the few shapes used inside the page are declared here.
interface XmlElement {
  getAttribute(name: string): string | null;
  getElementsByTagName(name: string): { length: number; item(i: number): XmlElement | null };
}
declare class DOMParser {
  parseFromString(text: string, type: 'application/xml'): XmlElement;
}
declare const location: { hash: string };
declare const window: { scrollY: number; innerHeight: number };
declare const document: { documentElement: { scrollHeight: number } };
declare function getComputedStyle(el: unknown): { breakBefore: string; display: string; visibility: string };

const IDS = ['PK-MTR-N2-CL-01', 'PK-KSK-N1-CT-02', 'PK-TAP-N2-SW-03'];

let launched: LaunchedBrowser;
let root: string;
let sampleDir: string;
let hostileDir: string;
let written: WrittenReports;
const pages: Page[] = [];

beforeAll(async () => {
  launched = await launchBrowser();
  root = await mkdtemp(join(tmpdir(), 'certify-report-e2e-'));
  sampleDir = join(root, 'sample');
  hostileDir = join(root, 'hostile');
  written = await writeReports(sampleRunReport(), sampleDir);
  await writeReports(withHostileText(sampleRunReport()), hostileDir, { pdf: 'never' });
});

afterAll(async () => {
  await launched?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

afterEach(async () => {
  for (const page of pages.splice(0)) await page.context().close();
});

/** Opens a report from the file system; `dialogs` counts alert/confirm/prompt, which only a script could open. */
async function openReport(dir: string): Promise<{ page: Page; dialogs: string[]; errors: string[] }> {
  const context = await launched.browser.newContext({ viewport: { width: 1000, height: 800 } });
  const page = await context.newPage();
  pages.push(page);
  const dialogs: string[] = [];
  const errors: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('request', (r) => {
    if (!r.url().startsWith('file:')) errors.push(`fetched ${r.url()}`);
  });
  await page.goto(pathToFileURL(join(dir, 'report.html')).href);
  return { page, dialogs, errors };
}

async function parseJunit(
  page: Page,
  xml: string,
): Promise<{
  errors: number;
  suites: number;
  attrs: Record<string, string | null>;
  names: (string | null)[];
}> {
  return page.evaluate((text) => {
    const doc = new DOMParser().parseFromString(text, 'application/xml');
    const suite = doc.getElementsByTagName('testsuite').item(0);
    const cases = doc.getElementsByTagName('testcase');
    const names: (string | null)[] = [];
    for (let i = 0; i < cases.length; i++) names.push(cases.item(i)?.getAttribute('name') ?? null);
    const attrs: Record<string, string | null> = {};
    for (const a of ['tests', 'failures', 'errors', 'skipped', 'timestamp'])
      attrs[a] = suite?.getAttribute(a) ?? null;
    return {
      errors: doc.getElementsByTagName('parsererror').length,
      suites: doc.getElementsByTagName('testsuite').length,
      attrs,
      names,
    };
  }, xml);
}

describe('the certification report in a real browser', () => {
  it('shows the summary counts and a visible section for every case', async () => {
    const { page, errors } = await openReport(sampleDir);
    expect(await page.title()).toBe('Certification report: Parking core pack');
    expect(await page.locator('html').getAttribute('lang')).toBe('en');
    const counts = await page.locator('table.counts tbody td').allTextContents();
    expect(counts).toEqual(['3', '1', '1', '1', '4', '1', '2']);
    for (const id of IDS) {
      const section = page.locator(`section#case-${id}`);
      expect(await section.isVisible()).toBe(true);
      expect(await section.locator('h2').textContent()).toContain(id);
    }
    expect(await page.locator('#case-PK-KSK-N1-CT-02 .verdict').textContent()).toBe('FAILED');
    expect(await page.locator('#case-PK-KSK-N1-CT-02 table').nth(1).textContent()).toContain(
      'IC-REVERSAL-TAGS',
    );
    expect(errors).toEqual([]);
  });

  it('has no script element and runs nothing, even when every value is hostile', async () => {
    for (const dir of [sampleDir, hostileDir]) {
      const { page, dialogs, errors } = await openReport(dir);
      expect(await page.locator('script').count()).toBe(0);
      expect(dialogs).toEqual([]);
      expect(errors).toEqual([]);
    }
    const { page } = await openReport(hostileDir);
    // The hostile text is there, as text the analyst can read.
    expect(await page.getByText('<script>alert("pwn")</script>', { exact: false }).count()).toBeGreaterThan(
      10,
    );
    expect(await page.locator('pre').first().textContent()).toContain('<script>alert(\\"pwn\\")</script>');
  });

  it('takes the analyst from each row of the summary table to the case section', async () => {
    const { page } = await openReport(sampleDir);
    for (const id of IDS) {
      await page.locator('#summary table').nth(1).getByRole('link', { name: id, exact: true }).click();
      await page.waitForFunction((hash) => location.hash === hash, `#case-${id}`);
      const box = await page.locator(`section#case-${id}`).boundingBox();
      // At the top of the viewport, or as near as the end of the page lets it scroll.
      expect(box).not.toBeNull();
      expect(box!.y).toBeGreaterThanOrEqual(-1);
      expect(box!.y).toBeLessThan(800);
      const scroll = await page.evaluate(() => ({
        y: window.scrollY,
        max: document.documentElement.scrollHeight - window.innerHeight,
      }));
      if (box!.y > 1) expect(scroll.y).toBeGreaterThanOrEqual(scroll.max - 1);
    }
  });

  it('keeps every section visible in print media, each starting a new page', async () => {
    const { page } = await openReport(sampleDir);
    await page.emulateMedia({ media: 'print' });
    expect(await page.locator('#summary').isVisible()).toBe(true);
    for (const id of IDS) {
      const section = page.locator(`section#case-${id}`);
      expect(await section.isVisible()).toBe(true);
      const style = await section.evaluate((el) => {
        const s = getComputedStyle(el);
        return { breakBefore: s.breakBefore, display: s.display, visibility: s.visibility };
      });
      expect(style).toEqual({ breakBefore: 'page', display: 'block', visibility: 'visible' });
    }
  });

  it('writes junit.xml that the browser parses without error, with the counts of the run', async () => {
    const { page } = await openReport(sampleDir);
    const result = await parseJunit(page, await readFile(join(sampleDir, 'junit.xml'), 'utf8'));
    expect(result).toEqual({
      errors: 0,
      suites: 1,
      attrs: { tests: '3', failures: '1', errors: '0', skipped: '1', timestamp: '2025-03-01T09:30:00' },
      names: sampleRunReport().cases.map((c) => `${c.id} ${c.title}`),
    });
  });

  it('escapes hostile values in junit.xml so that they parse back as the same text', async () => {
    const { page } = await openReport(hostileDir);
    const result = await parseJunit(page, await readFile(join(hostileDir, 'junit.xml'), 'utf8'));
    expect(result.errors).toBe(0);
    expect(result.attrs.tests).toBe('3');
    // The text comes back exactly, minus the control characters XML 1.0 cannot carry.
    const readable = HOSTILE_TEXT.replaceAll('\u0001', '').replaceAll('\u001B', '');
    expect(result.names[0]).toBe(`${IDS[0]}${readable} ${sampleRunReport().cases[0]!.title}${readable}`);
  });

  it('prints report.pdf as an A4 document of several pages', async () => {
    expect(written.pdf).toEqual({ written: true, file: join(sampleDir, 'report.pdf') });
    expect(written.files).toContain(join(sampleDir, 'report.pdf'));
    const pdf = await readFile(join(sampleDir, 'report.pdf'));
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(pdf.length).toBeGreaterThan(8 * 1024);
  });

  it('takes a screenshot of the report for the README', async () => {
    const png = join(root, 'report.png');
    await screenshotReport(join(sampleDir, 'report.html'), png);
    const bytes = await readFile(png);
    expect(bytes.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
    expect(bytes.length).toBeGreaterThan(10 * 1024);
  });
});
