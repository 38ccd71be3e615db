import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOGUES, type SupportedLocale } from '../../src/i18n/index.js';
import { launchBrowser, type LaunchedBrowser } from './browser.js';
import { checkCustomerScreen, operatorFigures } from './customer-screen-checks.js';
import { CustomerWalk, MODEL_CONFIGS } from './journeys.js';
import { startTerminal, type RunningTerminal } from './terminal-process.js';

/**
 * EMV chip fallback on the real attended terminal, in a real browser: the simulated card's chip cannot be read, so the
 * card screen asks the customer to swipe it, in the customer's language and direction, with every check a customer
 * screen must pass (axe-core's WCAG AA, the document's language, no operator figure); the card is swiped and the
 * payment approved as a fallback.
 */

let terminal: RunningTerminal;
let launched: LaunchedBrowser;

beforeAll(async () => {
  terminal = await startTerminal({
    ...MODEL_CONFIGS.attended,
    // The cardholder takes a while to present the card again: the screen's request is read before the swipe comes.
    reader: { sim: { card: 'chip-fails-then-swiped', presentDelayMs: 1_500 } },
  });
  launched = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await launched?.close();
  await terminal?.stop();
});

describe('a chip that cannot be read', () => {
  for (const locale of ['en_GB', 'ar_AE'] as const satisfies readonly SupportedLocale[])
    it(`asks the customer to swipe the card (${locale}), then takes the swipe as a fallback`, async () => {
      const failures: string[] = [];
      const expected = {
        locale,
        accessible: false,
        operatorFigures: operatorFigures(terminal),
        terminalId: terminal.terminalId,
      };
      const walk = await CustomerWalk.open(launched.browser, terminal.url, {
        locale,
        accessible: false,
        visit: async (page, stop) => {
          failures.push(...(await checkCustomerScreen(page, stop, expected)));
        },
      });
      try {
        await walk.arrive();
        await walk.press('action-START');
        await walk.reach('enter-amount');
        for (const digit of '850') await walk.press(`amount-key-${digit}`);
        await walk.press('action-ENTER_AMOUNT');
        await walk.reach('confirm');
        await walk.press('action-CONFIRM');
        // "Present your card", held for this page until it has been looked at; then the chip fails.
        await walk.reach('present-card');
        const message = walk.page.getByTestId('customer-message');
        await expect
          .poll(() => message.textContent(), { timeout: 20_000 })
          .toBe(CATALOGUES[locale]['result.swipeCard']);
        failures.push(
          ...(await checkCustomerScreen(
            walk.page,
            { screen: 'present-card', step: 'swipe-the-card' },
            expected,
          )),
        );
        await walk.reach('approved');
        await walk.press('action-DONE');
        await walk.reach('idle', 'idle', false);
      } finally {
        await walk.close();
      }
      expect(failures).toEqual([]);
    });
});
