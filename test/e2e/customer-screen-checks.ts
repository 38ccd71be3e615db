import type { Page } from 'playwright-core';
import { CATALOGUES, type SupportedLocale } from '../../src/i18n/index.js';
import { TITLE_KEYS } from '../../src/host/flow-runtime.js';
import type { Screen } from '../../src/host/api.js';
import { accessibleDocument, languageOfTestId } from './accessibility-scripts.js';
import { audit, ENHANCED_CONTRAST, WCAG_AA } from './axe.js';
import type { Stop } from './journeys.js';
import { laidOutValues, overflowingButtons } from './layout-scripts.js';

/**
 * What every customer screen of the real terminal must be, checked where a journey stops: no WCAG 2.x A or AA
 * violation (and 7:1 text contrast in accessibility mode), the document in the customer's language and direction,
 * the screen's title from that language's catalogue, no operator figure anywhere in the text a customer can read
 * (issue 13: the customer's screen is the customer's), no word clipped by or spilling out of its button, and every
 * left-to-right value (card number, rate, reference, amount, the gateway's disclaimer) drawn left to right in a
 * right-to-left screen.
 */

export interface CustomerScreenExpectations {
  locale: SupportedLocale;
  accessible: boolean;
  /** Texts only the operator may see: status bar labels, the PIN, the sandbox's address. */
  operatorFigures: string[];
  /**
   * The terminal id: the operator's figure everywhere but on the receipt, where card rules want it (the terminal that
   * took the payment).
   */
  terminalId: string;
}

/** The operator's figures of a terminal: the status bar's labels and words (renderer/src/status-bar.ts), the PIN. */
export function operatorFigures(terminal: { pin: string; sandboxUrl: string }): string[] {
  return [
    'Reader:',
    'Gateway:',
    'Offline queue',
    'queue',
    'Recovery:',
    'Printer:',
    'Journal',
    'in flight',
    'sandbox',
    terminal.pin,
    new URL(terminal.sandboxUrl).host,
  ];
}

/** Every way the screen at `stop` falls short, one readable line (or axe report) each; empty when none. */
export async function checkCustomerScreen(
  page: Page,
  stop: Stop,
  expected: CustomerScreenExpectations,
): Promise<string[]> {
  const where = `${expected.locale}${expected.accessible ? ' (accessibility mode)' : ''} ${stop.step}`;
  const failures: string[] = [];
  failures.push(...(await audit(page, where, { kind: 'tag', values: WCAG_AA })));
  if (expected.accessible)
    failures.push(...(await audit(page, where, { kind: 'rule', values: ENHANCED_CONTRAST })));
  if ((await page.evaluate(accessibleDocument)) !== expected.accessible)
    failures.push(`${where}: accessibility mode is not ${expected.accessible ? 'on' : 'off'}`);

  const html = page.locator('html');
  const lang = await html.getAttribute('lang');
  const dir = await html.getAttribute('dir');
  const wantedDir = expected.locale === 'ar_AE' ? 'rtl' : 'ltr';
  if (lang !== expected.locale.replace('_', '-')) failures.push(`${where}: lang="${lang}"`);
  if (dir !== wantedDir) failures.push(`${where}: dir="${dir}", not "${wantedDir}"`);
  // No element between the document and the screen's texts gives them another language.
  const read = await page.evaluate(languageOfTestId, 'customer-title');
  if (read !== expected.locale.replace('_', '-'))
    failures.push(`${where}: the title is read as lang="${read}"`);

  const title = (await page.getByTestId('customer-title').textContent()) ?? '';
  const catalogued = CATALOGUES[expected.locale][TITLE_KEYS[stop.screen as Screen]];
  if (title !== catalogued) failures.push(`${where}: title "${title}", not "${catalogued}"`);

  // What a customer can read: the rendered text of the whole page (the closed operator panel renders none).
  const text = await page.locator('body').innerText();
  for (const figure of expected.operatorFigures)
    if (text.includes(figure)) failures.push(`${where}: the customer screen shows "${figure}"`);
  const receipt = page.getByTestId('receipt');
  const receiptText = (await receipt.count()) > 0 ? await receipt.innerText() : '';
  if (text.replace(receiptText, '').includes(expected.terminalId))
    failures.push(`${where}: the terminal id ${expected.terminalId} is on the screen outside the receipt`);
  if ((await page.getByTestId('status-bar').count()) > 0)
    failures.push(`${where}: the status bar is on the customer screen`);

  // No word clipped by, or spilling out of, its button (German on a keypad key, large text beside the speech keys).
  for (const overflow of await page.evaluate(overflowingButtons))
    failures.push(`${where}: text overflows its button: ${overflow}`);

  failures.push(...(await isolatedValueFailures(page, stop, where, wantedDir)));
  return failures;
}

/**
 * Card numbers, rates, references, ids, URLs, amounts and the gateway's disclaimer (the values renderer/src/bidi.ts
 * isolates) are drawn left to right inside right-to-left text: the first character of the value left of its last,
 * its text as sent. On a right-to-left screen that shows a card (every approved screen does), the masked card number
 * must be among them: a check that finds no value proves nothing.
 */
async function isolatedValueFailures(
  page: Page,
  stop: Stop,
  where: string,
  direction: 'ltr' | 'rtl',
): Promise<string[]> {
  const failures: string[] = [];
  const values = await page.evaluate(laidOutValues);
  for (const v of values) {
    if (v.unicodeBidi !== 'isolate')
      failures.push(`${where}: "${v.text}" is not isolated (unicode-bidi: ${v.unicodeBidi})`);
    if (v.dir !== 'ltr') continue;
    if (v.direction !== 'ltr') failures.push(`${where}: "${v.text}" runs ${v.direction}, not ltr`);
    if (v.visualOrder === 'rtl') failures.push(`${where}: "${v.text}" is drawn right to left`);
  }
  if (direction === 'rtl' && stop.screen === 'approved') {
    const pan = values.find((v) => v.testid === 'masked-pan-number');
    if (!pan) failures.push(`${where}: no isolated masked card number on the screen`);
    else {
      if (!/^\d{6}\*+\d{4}$/.test(pan.text))
        failures.push(`${where}: the masked card number reads "${pan.text}", not BIN, stars, last four`);
      if (pan.direction !== 'ltr' || pan.visualOrder !== 'ltr')
        failures.push(`${where}: the masked card number "${pan.text}" is not drawn left to right`);
    }
  }
  return failures;
}
