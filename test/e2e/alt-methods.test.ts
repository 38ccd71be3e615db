import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigInput } from '../../src/config/index.js';
import { audit, WCAG_AA } from './axe.js';
import { launchBrowser, type LaunchedBrowser } from './browser.js';
import { CustomerWalk } from './journeys.js';
import { scanQr } from './qr-scan.js';
import { startTerminal, ticketFor, type RunningTerminal } from './terminal-process.js';

/**
 * Issue 14 item 5 on the real terminal (`parking-terminal start --headless` with the euro pay station of
 * docs/examples/pay-station-eur.yaml), in a real browser: the customer chooses an alternative method beside the card,
 * types the e-mail address on the on-screen keyboard (a wrong one is refused with its problem), the first name on it
 * too and the last name on a physical keyboard, and the pending screen shows the payment page as a QR code; the test
 * scans it from a screenshot as a phone would, opens it in another page (the phone) and completes the payment there.
 * The sale stays pending in the terminal's journal, its status check due one interval later (`altpay list`).
 */

const BIN = resolve(import.meta.dirname, '../../bin/parking-terminal.js');
const EXAMPLE = resolve(import.meta.dirname, '../../docs/examples/pay-station-eur.yaml');
const run = promisify(execFile);

let terminal: RunningTerminal;
let launched: LaunchedBrowser;

beforeAll(async () => {
  const example = parseYaml(await readFile(EXAMPLE, 'utf8')) as ConfigInput;
  const config: ConfigInput = { ...example, terminal: { ...example.terminal, id: 'PTALT001' } };
  [terminal, launched] = await Promise.all([startTerminal(config), launchBrowser()]);
}, 120_000);

afterAll(async () => {
  await launched?.close();
  await terminal?.stop();
});

/** Types `text` on the on-screen keyboard, Shift for capitals. */
async function typeOnScreen(walk: CustomerWalk, text: string): Promise<void> {
  for (const ch of text) {
    const upper = ch !== ch.toLowerCase();
    if (upper) await walk.page.getByTestId('alt-key-shift').click();
    await walk.page.getByTestId(`alt-key-${ch.toLowerCase()}`).click();
    if (upper) await walk.page.getByTestId('alt-key-shift').click();
  }
}

/** The terminal's alternative-method sales, through the operator's command (read-only beside the terminal). */
async function altSales(): Promise<{ id: number; state: string; nextCheckAt?: string; code: string }[]> {
  const { stdout } = await run(process.execPath, [BIN, 'altpay', 'list', '--config', 'config.json'], {
    cwd: terminal.cwd,
    env: { ...process.env, NODE_ENV: 'test' },
  });
  return (JSON.parse(stdout) as { sales: { id: number; state: string; code: string }[] }).sales;
}

describe('alternative methods at the pay station (issue 14 item 5)', () => {
  it('types the details on the on-screen keyboard, scans the pending sale’s QR code and pays on its page', async () => {
    const walk = await CustomerWalk.open(launched.browser, terminal.url, {
      locale: 'en_GB',
      accessible: false,
      visit: async () => {},
    });
    try {
      await walk.arrive();
      await walk.press('action-START');
      await walk.reach('enter-ticket');
      const ticket = ticketFor(130, 'Europe/Madrid');
      await walk.page.getByTestId('ticket-input').fill(ticket);
      await walk.press('action-ENTER_TICKET');
      await walk.reach('confirm');
      expect(await walk.page.getByTestId('alt-method-1').textContent()).toBe('Bank transfer');
      expect(await walk.page.getByTestId('alt-method-3').textContent()).toBe('Online banking');
      await walk.press('alt-method-1');
      await walk.reach('alt-details');
      expect(await audit(walk.page, 'alt-details', { kind: 'tag', values: WCAG_AA })).toEqual([]);

      // A wrong e-mail address is refused, with its problem on the screen.
      await typeOnScreen(walk, 'ana.example');
      await walk.press('action-ALT_FIELD');
      await expect
        .poll(() => walk.page.getByTestId('alt-problem').textContent())
        .toBe('This is not an e-mail address.');
      expect(await walk.page.getByTestId('alt-input').inputValue()).toBe('ana.example');
      await walk.page.getByTestId('alt-key-clear').click();
      await typeOnScreen(walk, 'ana@example.com');
      await walk.press('action-ALT_FIELD');
      await expect
        .poll(() => walk.page.getByTestId('alt-step').textContent())
        .toBe('Bank transfer · Step 2 of 3');
      expect(await walk.page.getByTestId('alt-input').inputValue()).toBe('');
      await typeOnScreen(walk, 'Ana');
      await walk.press('action-ALT_FIELD');
      await expect
        .poll(() => walk.page.getByTestId('alt-step').textContent())
        .toBe('Bank transfer · Step 3 of 3');
      // The last name on a physical keyboard, Enter to go on.
      await walk.page.locator('[data-testid="customer-slot"]:not([aria-busy])').waitFor();
      await walk.page.getByTestId('alt-input').focus();
      await walk.page.keyboard.type('Ruiz');
      await walk.page.keyboard.press('Enter');
      await walk.reach('alt-pending');
      expect(await audit(walk.page, 'alt-pending', { kind: 'tag', values: WCAG_AA })).toEqual([]);
      expect(await walk.page.getByTestId('alt-reference').textContent()).toBe(`Reference: ${ticket}`);

      // The phone scans the code: the address printed under it, the sandbox's page of the sale.
      const url = await scanQr(walk.page, 'alt-pending-qr');
      expect(await walk.page.getByTestId('alt-pending-url').textContent()).toBe(url);
      expect(url.startsWith(`${terminal.sandboxUrl}/ap/`)).toBe(true);
      const phone = await launched.browser.newContext({ viewport: { width: 390, height: 844 } });
      try {
        const page = await phone.newPage();
        await page.goto(url);
        await page.locator('#pay').click();
        await expect
          .poll(() => page.locator('#result').textContent(), { timeout: 10_000 })
          .toMatch(/^Payment /);
      } finally {
        await phone.close();
      }

      // The customer may leave; the sale waits in the journal for its status check, one interval later.
      await walk.press('action-DONE');
      await walk.reach('idle', 'idle', false);
      const [sale] = await altSales();
      expect(sale).toMatchObject({ state: 'PENDING', code: ticket });
      expect(Date.parse(sale?.nextCheckAt ?? '') - Date.now()).toBeGreaterThan(59 * 60_000);
    } finally {
      await walk.close();
    }
  }, 120_000);
});
