import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { CATALOGUES } from '../../src/i18n/index.js';
import { focusedTestId } from './accessibility-scripts.js';
import { launchBrowser, type LaunchedBrowser } from './browser.js';
import { MODEL_CONFIGS } from './journeys.js';
import { startTerminal, type RunningTerminal } from './terminal-process.js';

/**
 * What the page formats itself — the seconds left of "Do you need more time?" — in the customer's language, on the
 * real terminal: the terminal's own when nobody chose, the chosen one after a choice, and with `terminal.locale` in
 * the `de_DE` form configuration allows (not a tag `Intl` takes as it is).
 */

let terminal: RunningTerminal;
let launched: LaunchedBrowser;

beforeAll(async () => {
  const kiosk = MODEL_CONFIGS.kiosk;
  terminal = await startTerminal({
    ...kiosk,
    terminal: { ...kiosk.terminal, locale: 'de_DE' },
    customer: { inactivitySeconds: 10 },
  });
  launched = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await launched?.close();
  await terminal?.stop();
});

/** Every text the countdown may show in `catalogue`'s language, its seconds formatted by the page's own Intl. */
function countdownTexts(page: Page, catalogue: 'de_DE' | 'ar_AE'): Promise<string[]> {
  const template = CATALOGUES[catalogue]['label.moreTime.remaining'] ?? '';
  expect(template).toContain('{time}');
  const tag = catalogue.replace('_', '-');
  return page.evaluate(
    ({ template, tag }) =>
      Array.from({ length: 41 }, (_, n) =>
        template.replace(
          '{time}',
          new Intl.NumberFormat(tag, { style: 'unit', unit: 'second', unitDisplay: 'long' }).format(n),
        ),
      ),
    { template, tag },
  );
}

/** A fresh page of the kiosk's screen at its 800×1280 size, on the terminal's idle screen, for `body`. */
async function onIdleScreen(body: (page: Page) => Promise<void>): Promise<void> {
  const context = await launched.browser.newContext({ viewport: { width: 800, height: 1280 } });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  try {
    expect((await page.goto(terminal.url))?.status()).toBe(200);
    await page.locator('[data-testid="customer"][data-screen="idle"]').waitFor();
    await body(page);
  } finally {
    await context.close();
  }
}

async function askedOnTicketScreen(page: Page): Promise<string> {
  await page.getByTestId('action-START').click();
  await page.locator('[data-testid="customer"][data-screen="enter-ticket"]').waitFor();
  // The terminal's limit is 10 s: the question comes by itself.
  const countdown = page.getByTestId('more-time-countdown');
  await countdown.waitFor({ timeout: 20_000 });
  const text = (await countdown.textContent()) ?? '';
  await page.getByTestId('more-time-no').click();
  await page.locator('[data-testid="customer"][data-screen="idle"]').waitFor();
  return text;
}

describe('the seconds left, in the customer language', () => {
  it('in the terminal language (configured as de_DE), then in Arabic once the customer chooses it', async () => {
    await onIdleScreen(async (page) => {
      expect(await askedOnTicketScreen(page)).toBeOneOf(await countdownTexts(page, 'de_DE'));

      await page.getByTestId('language-button').click();
      await page.getByTestId('language-ar_AE').click();
      await page.locator('html[lang="ar-AE"][dir="rtl"]').waitFor();
      expect(await askedOnTicketScreen(page)).toBeOneOf(await countdownTexts(page, 'ar_AE'));
    });
  }, 90_000);
});

describe('choosing a language by keys alone', () => {
  it('keeps focus on the language button once the screen is in the chosen language', async () => {
    await onIdleScreen(async (page) => {
      await page.getByTestId('language-button').focus();
      await page.keyboard.press('Enter');
      await page.getByTestId('language-list').waitFor();
      await page.getByTestId('language-ar_AE').focus();
      await page.keyboard.press('Enter');
      await page.locator('html[lang="ar-AE"][dir="rtl"]').waitFor();
      await page.locator('[data-testid="customer-slot"]:not([aria-busy])').waitFor();
      // Focus is where the customer left it, not thrown back to the top of the page: the next Tab goes on from here.
      expect(await page.evaluate(focusedTestId)).toBe('language-button');
      expect(await page.getByTestId('language-button').getAttribute('aria-expanded')).toBe('false');
    });
  }, 60_000);
});
