import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { CATALOGUES } from '../../src/i18n/index.js';
import { launchBrowser, type LaunchedBrowser } from './browser.js';
import { MODEL_CONFIGS } from './journeys.js';
import { direction } from './page-scripts.js';
import { startTerminal, type RunningTerminal } from './terminal-process.js';

/**
 * A press that reaches the real terminal after it has left the screen the press was made on (a second screen that has
 * not yet been told, as a slow network or a double tap leaves it): the terminal refuses it, and that screen explains
 * why in the customer's language and direction, keeps its place, and never shows the developer's message.
 */

let terminal: RunningTerminal;
let launched: LaunchedBrowser;

beforeAll(async () => {
  terminal = await startTerminal(MODEL_CONFIGS.kiosk);
  launched = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await launched?.close();
  await terminal?.stop();
});

/**
 * The terminal's screen in a new browser context. `hold()` stops the terminal's pushed screens from reaching it
 * (answers to its own requests still do), so that it stays on what it shows while the terminal moves on.
 */
async function openScreen(): Promise<{ page: Page; hold: () => void; close: () => Promise<void> }> {
  const context = await launched.browser.newContext({ viewport: { width: 1080, height: 1920 } });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  let held = false;
  await page.routeWebSocket(/.*/, (ws) => {
    const server = ws.connectToServer();
    ws.onMessage((m) => server.send(m));
    server.onMessage((m) => {
      const answer = 'id' in (JSON.parse(typeof m === 'string' ? m : m.toString('utf8')) as object);
      if (!held || answer) ws.send(m);
    });
  });
  expect((await page.goto(terminal.url))?.status()).toBe(200);
  await page.locator('[data-testid="customer"][data-screen="idle"]').waitFor();
  return {
    page,
    hold: () => {
      held = true;
    },
    close: () => context.close(),
  };
}

describe('a press the terminal refuses', () => {
  it('is explained in Arabic, right to left, on the screen it was made on', async () => {
    const customer = await openScreen();
    const stale = await openScreen();
    try {
      await customer.page.getByTestId('language-button').click();
      await customer.page.getByTestId('language-ar_AE').click();
      await stale.page.locator('html[lang="ar-AE"][dir="rtl"]').waitFor();
      await stale.page.locator('[data-testid="customer-slot"]:not([aria-busy])').waitFor();
      stale.hold();
      await customer.page.getByTestId('action-START').click();
      await customer.page.locator('[data-testid="customer"][data-screen="enter-ticket"]').waitFor();

      // Pressed on the welcome screen the terminal has left.
      await stale.page.getByTestId('action-START').click();
      const banner = stale.page.getByTestId('problem');
      await expect.poll(() => banner.textContent()).toBe(CATALOGUES.ar_AE['label.refused.NOT_ALLOWED_NOW']);
      expect(await banner.getAttribute('data-code')).toBe('NOT_ALLOWED_NOW');
      expect(await banner.evaluate(direction)).toBe('rtl');
      expect(await stale.page.locator('[data-testid="customer"]').getAttribute('data-screen')).toBe('idle');
      const text = await stale.page.locator('body').innerText();
      expect(text).not.toContain('START');
      expect(text).not.toContain('not possible on this screen');
    } finally {
      await customer.page.getByTestId('action-CANCEL').click();
      await customer.page.locator('[data-testid="customer"][data-screen="idle"]').waitFor();
      await customer.close();
      await stale.close();
    }
  });
});
