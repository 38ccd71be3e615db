import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { accessibleDocument } from './accessibility-scripts.js';
import { audit, ENHANCED_CONTRAST, WCAG_AA } from './axe.js';
import { launchBrowser, type LaunchedBrowser } from './browser.js';
import { installWatchers } from './page-scripts.js';
import { startTerminal, ticketFor, type RunningTerminal } from './terminal-process.js';

/**
 * axe-core on the screens of the real terminal (`parking-terminal start --headless`: host, catalogues, simulated
 * reader, embedded sandbox) in a real browser, in the customer's own language: German in the normal mode, Arabic
 * (right to left) in accessibility mode. The fake terminal's walk (accessibility.test.ts) reaches every screen; this
 * one checks the real words, labels and layout direction, with the keys alone.
 */

let terminal: RunningTerminal;
let launched: LaunchedBrowser;
let url: string;

beforeAll(async () => {
  terminal = await startTerminal({}, { prefix: 'pt-a11y-' });
  url = terminal.url;
  launched = await launchBrowser();
});

afterAll(async () => {
  await launched?.close();
  await terminal?.stop();
});

async function onScreen(page: Page, screen: string): Promise<void> {
  await page.locator(`[data-testid="customer"][data-screen="${screen}"]`).waitFor();
}

/**
 * Sells parking in `locale`, optionally in accessibility mode, auditing each screen the customer stops at. The
 * language and the mode are chosen on the welcome screen, by keys, as a customer would.
 */
async function auditSale(locale: string, accessible: boolean): Promise<{ failures: string[]; dir: string }> {
  const context = await launched.browser.newContext({ viewport: { width: 800, height: 1280 } });
  const page = await context.newPage();
  page.setDefaultTimeout(30_000);
  await page.addInitScript(installWatchers);
  expect((await page.goto(url))?.status()).toBe(200);
  await onScreen(page, 'idle');
  await page.getByTestId('language-button').press('Enter');
  await page.getByTestId(`language-${locale}`).press('Enter');
  await page.locator(`html[lang="${locale.replace('_', '-')}"]`).waitFor();
  if (accessible) {
    await page.getByTestId('accessibility-button').press('Enter');
    await page.locator('[data-testid="accessibility-button"][aria-pressed="true"]').waitFor();
  }
  const failures: string[] = [];
  const check = async (where: string): Promise<void> => {
    expect(await page.evaluate(accessibleDocument)).toBe(accessible);
    failures.push(...(await audit(page, `${locale} ${where}`, { kind: 'tag', values: WCAG_AA })));
    if (accessible)
      failures.push(
        ...(await audit(page, `${locale} ${where}`, { kind: 'rule', values: ENHANCED_CONTRAST })),
      );
  };
  await check('idle');
  await page.getByTestId('action-START').press('Enter');
  await onScreen(page, 'enter-ticket');
  await check('enter-ticket');
  await page.getByTestId('ticket-input').fill(ticketFor(130, 'Europe/London'));
  await page.getByTestId('action-ENTER_TICKET').press('Enter');
  await onScreen(page, 'confirm');
  await check('confirm');
  await page.getByTestId('action-CONFIRM').press('Enter');
  const done = page.locator(
    ['approved', 'declined', 'error', 'choose-currency']
      .map((s) => `[data-testid="customer"][data-screen="${s}"]`)
      .join(', '),
  );
  await done.first().waitFor();
  if ((await page.getByTestId('customer').getAttribute('data-screen')) === 'choose-currency') {
    await check('choose-currency');
    await page.locator('[data-testid^="dcc-option-"]').first().press('Enter');
    await onScreen(page, 'approved');
  }
  expect(await page.getByTestId('customer').getAttribute('data-screen')).toBe('approved');
  await check('approved');
  const dir = (await page.locator('html').getAttribute('dir')) ?? '';
  // Done by the keypad's Enter: the terminal is back on its welcome screen for the next customer.
  await page.keyboard.press('Enter');
  await onScreen(page, 'idle');
  await context.close();
  return { failures, dir };
}

describe('accessibility of the real terminal in the customer language', () => {
  it('finds no WCAG 2.2 A or AA violation on a German sale in normal mode', async () => {
    const { failures, dir } = await auditSale('de_DE', false);
    expect(dir).toBe('ltr');
    expect(failures.join('\n\n')).toBe('');
  });

  it('finds no violation, and 7:1 text contrast, on an Arabic sale (right to left) in accessibility mode', async () => {
    const { failures, dir } = await auditSale('ar_AE', true);
    expect(dir).toBe('rtl');
    expect(failures.join('\n\n')).toBe('');
  });
});
