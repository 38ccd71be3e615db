import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { axeLoaded, runAxe, type AxeFinding } from './accessibility-scripts.js';

/**
 * axe-core in a page under test. The bridge's CSP (script-src 'self') refuses an injected <script>, and the tests must
 * not weaken it: axe's source is evaluated through the DevTools protocol, which the page's CSP does not govern.
 */

/** axe-core's tags for WCAG 2.0, 2.1 and 2.2, levels A and AA. */
export const WCAG_AA = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22a', 'wcag22aa'];

/** WCAG 1.4.6 (AAA): text contrast of 7:1, the bar for accessibility mode. */
export const ENHANCED_CONTRAST = ['color-contrast-enhanced'];

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

async function loadAxe(page: Page): Promise<void> {
  if (await page.evaluate(axeLoaded)) return;
  await page.evaluate(axeSource);
  if (!(await page.evaluate(axeLoaded))) throw new Error('axe-core did not load in the page');
}

function describeFindings(findings: AxeFinding[]): string {
  return findings.map((f) => `${f.id} (${f.impact}) at ${f.target}: ${f.summary}`).join('\n');
}

/**
 * Runs axe-core on the page as it is now, by WCAG tags or by rule ids, and returns one readable failure ("where:" and
 * each violation's rule, impact, element and fix) or nothing.
 */
export async function audit(
  page: Page,
  where: string,
  request: { kind: 'tag' | 'rule'; values: string[] },
): Promise<string[]> {
  await loadAxe(page);
  const findings = await page.evaluate(runAxe, request);
  return findings.length === 0 ? [] : [`${where}:\n${describeFindings(findings)}`];
}
