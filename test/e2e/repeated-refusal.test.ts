import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOGUES } from '../../src/i18n/index.js';
import { launchBrowser, type LaunchedBrowser } from './browser.js';
import { MODEL_CONFIGS } from './journeys.js';
import { startTerminal, type RunningTerminal } from './terminal-process.js';

/**
 * A chip card swiped again and again on the real attended terminal, in a real browser, with accessibility mode on: each
 * refusal is said again (the platform's speech synthesis, replaced by a recorder) and read out again by the screen's
 * live region, although its words and its screen stay the same — a customer who cannot see the screen hears that
 * this try failed too.
 */

let terminal: RunningTerminal;
let launched: LaunchedBrowser;

beforeAll(async () => {
  terminal = await startTerminal({
    ...MODEL_CONFIGS.attended,
    // Swiped again a moment after each refusal, as a customer who has not understood would.
    reader: { sim: { card: 'chip-swiped-fallback', presentDelayMs: 700 } },
  });
  launched = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await launched?.close();
  await terminal?.stop();
});

interface Heard {
  spoken: string[];
  announced: string[];
}

// The root tsconfig has no DOM library: the page's shapes used here, in this module's scope only.
declare const window: { __heard: Heard };
declare const document: {
  readonly readyState: string;
  addEventListener(type: string, listener: () => void): void;
  querySelector(selector: string): { textContent: string | null } | null;
};
declare class MutationObserver {
  constructor(callback: () => void);
  observe(target: unknown, options: { childList: boolean; characterData: boolean; subtree: boolean }): void;
}

/**
 * Runs in the page before its scripts: a `speechSynthesis` that records what is said, and a recorder of every text
 * the screen's live region is given.
 */
function recordHeard(): void {
  const heard: Heard = { spoken: [], announced: [] };
  window.__heard = heard;
  Object.defineProperty(window, 'speechSynthesis', {
    value: {
      speak: (u: { text: string }) => void heard.spoken.push(u.text),
      cancel: () => undefined,
      getVoices: () => [],
    },
    configurable: true,
  });
  const watch = (): void => {
    const region = document.querySelector('[data-testid="screen-announcer"]');
    if (!region) return void setTimeout(watch, 10);
    new MutationObserver(() => {
      const text = region.textContent ?? '';
      if (text.length > 0) heard.announced.push(text);
    }).observe(region, { childList: true, characterData: true, subtree: true });
  };
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', watch);
  else watch();
}

describe('a card refused twice in the same words', () => {
  it('is said and announced again for each refusal', async () => {
    const context = await launched.browser.newContext({ viewport: { width: 800, height: 1280 } });
    try {
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);
      await page.addInitScript(recordHeard);
      expect((await page.goto(terminal.url))?.status()).toBe(200);
      await page.locator('[data-testid="customer"][data-screen="idle"]').waitFor();
      await page.getByTestId('accessibility-button').click();
      await page.locator('html.accessible').waitFor();
      await page.getByTestId('action-START').click();
      await page.locator('[data-testid="customer"][data-screen="enter-amount"]').waitFor();
      for (const digit of '850') await page.getByTestId(`amount-key-${digit}`).click();
      await page.getByTestId('action-ENTER_AMOUNT').click();
      await page.locator('[data-testid="customer"][data-screen="confirm"]').waitFor();
      await page.getByTestId('action-CONFIRM').click();

      const useChip = CATALOGUES.en_GB['result.useChip'];
      const heard = (): Promise<Heard> => page.evaluate(() => window.__heard);
      const count = async (): Promise<{ spoken: number; announced: number }> => {
        const h = await heard();
        return {
          spoken: h.spoken.filter((t) => t.includes(useChip)).length,
          announced: h.announced.filter((t) => t.includes(useChip)).length,
        };
      };
      // Three refusals at least, each said and read out: not the first one only.
      await expect
        .poll(async () => Math.min(...Object.values(await count())), { timeout: 20_000 })
        .toBeGreaterThanOrEqual(3);
      await page.getByTestId('action-CANCEL').click();
    } finally {
      await context.close();
    }
  });
});
