import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { audit, WCAG_AA } from './axe.js';
import { launchBrowser, type LaunchedBrowser } from './browser.js';
import { CustomerWalk } from './journeys.js';
import { scanQr } from './qr-scan.js';
import { startTerminal, ticketFor, type RunningTerminal } from './terminal-process.js';

/**
 * Issue 14, "Done when" (pay by phone): on the real terminal (`parking-terminal start --headless` with a kiosk
 * configuration: host, catalogues, embedded sandbox and its notifications), in a real browser, a customer chooses
 * pay by phone; the test scans the QR code on the screen as a phone would — a screenshot of it decoded with a QR
 * library, never the DOM's URL — opens the address in another browser page (the phone), pays there with a test card
 * through the hosted page's form, and the pay station shows the ticket paid with the receipt of the link payment.
 * Then the link is INACTIVE at the gateway (`parking-terminal links show ID`).
 */

const BIN = resolve(import.meta.dirname, '../../bin/parking-terminal.js');
const run = promisify(execFile);

const CONFIG = {
  terminal: { model: 'kiosk' as const, id: 'PTPHONE1', timezone: 'Europe/London', locale: 'en-GB' },
};

let terminal: RunningTerminal;
let launched: LaunchedBrowser;

beforeAll(async () => {
  [terminal, launched] = await Promise.all([startTerminal(CONFIG), launchBrowser()]);
}, 120_000);

afterAll(async () => {
  await launched?.close();
  await terminal?.stop();
});

/** The gateway's record of a payment link, through the operator's command. */
async function linkAtGateway(id: string): Promise<{ status: string }> {
  const cwd = await mkdtemp(join(tmpdir(), 'pt-links-show-'));
  try {
    const { stdout } = await run(
      process.execPath,
      [BIN, 'links', 'show', id, '--gateway', terminal.sandboxUrl],
      { cwd, env: { ...process.env, NODE_ENV: 'test' } },
    );
    return (JSON.parse(stdout) as { link: { status: string } }).link;
  } finally {
    await rm(cwd, { recursive: true, force: true });
  }
}

describe('pay by phone at the pay station (issue 14)', () => {
  it('scans the QR code, pays on the hosted page, and the kiosk shows the ticket paid; the link is inactive', async () => {
    const walk = await CustomerWalk.open(launched.browser, terminal.url, {
      locale: 'en_GB',
      accessible: false,
      visit: async () => {},
    });
    try {
      await walk.arrive();
      await walk.press('action-START');
      await walk.reach('enter-ticket');
      await walk.page.getByTestId('ticket-input').fill(ticketFor(130, 'Europe/London'));
      await walk.press('action-ENTER_TICKET');
      await walk.reach('confirm');
      const fee = (await walk.page.getByTestId('customer-amount').textContent()) ?? '';
      await walk.press('action-PAY_BY_LINK');
      await walk.reach('pay-by-phone');

      // The screen: no WCAG A/AA violation; the QR code at least 4 CSS px per module and about 4–5 cm.
      expect(await audit(walk.page, 'pay-by-phone', { kind: 'tag', values: WCAG_AA })).toEqual([]);
      const box = await walk.page.getByTestId('pay-by-phone-qr').boundingBox();
      expect(box?.width).toBeGreaterThanOrEqual(150);
      expect(box?.width).toBeLessThanOrEqual(200);

      // The phone scans the code: the address is the one printed under it, the sandbox's hosted page.
      const url = await scanQr(walk.page, 'pay-by-phone-qr');
      expect(await walk.page.getByTestId('pay-by-phone-url').textContent()).toBe(url);
      expect(url.startsWith(`${terminal.sandboxUrl}/pay/`)).toBe(true);
      const linkId = decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '');
      expect(await linkAtGateway(linkId)).toMatchObject({ status: 'ACTIVE' });

      // …and pays there with a test card, through the page's own form.
      const phone = await launched.browser.newContext({ viewport: { width: 390, height: 844 } });
      try {
        const page = await phone.newPage();
        await page.goto(url);
        await page.locator('#cardNumber').fill('4111 1111 1111 1111');
        await page.locator('#expiry').fill('12/30');
        await page.locator('#securityCode').fill('123');
        await page.locator('#pay').click();
        await expect
          .poll(() => page.locator('#result').textContent(), { timeout: 10_000 })
          .toBe('Payment approved');
      } finally {
        await phone.close();
      }

      // The pay station learns it from the signed notification: the ticket is paid, the receipt is the link payment.
      await walk.reach('approved');
      const receipt = (await walk.page.getByTestId('receipt').textContent()) ?? '';
      expect(receipt).toContain('Payment link');
      expect(receipt).toContain(linkId);
      expect(receipt).toContain(fee);

      // One use: the link is INACTIVE at the gateway.
      await expect
        .poll(async () => (await linkAtGateway(linkId)).status, { timeout: 15_000 })
        .toBe('INACTIVE');
      await walk.press('action-DONE');
      await walk.reach('idle', 'idle', false);
    } finally {
      await walk.close();
    }
  }, 90_000);

  it('in accessibility mode the address is on the screen as text, left to right in Arabic too', async () => {
    const walk = await CustomerWalk.open(launched.browser, terminal.url, {
      locale: 'ar_AE',
      accessible: true,
      visit: async () => {},
    });
    try {
      await walk.arrive();
      await walk.press('action-START');
      await walk.reach('enter-ticket');
      await walk.page.getByTestId('ticket-input').fill(ticketFor(40, 'Europe/London'));
      await walk.press('action-ENTER_TICKET');
      await walk.reach('confirm');
      await walk.press('action-PAY_BY_LINK');
      await walk.reach('pay-by-phone');
      expect(await walk.page.locator('html').getAttribute('dir')).toBe('rtl');
      const url = walk.page.getByTestId('pay-by-phone-url');
      expect(await url.getAttribute('dir')).toBe('ltr');
      expect(await scanQr(walk.page, 'pay-by-phone-qr')).toBe(await url.textContent());
      expect(await audit(walk.page, 'pay-by-phone ar_AE', { kind: 'tag', values: WCAG_AA })).toEqual([]);
      // Cancel: back to the choice between card and phone.
      await walk.press('action-CANCEL');
      await walk.reach('confirm');
      await walk.press('action-CANCEL');
      await walk.reach('idle', 'idle', false);
    } finally {
      await walk.close();
    }
  }, 90_000);
});
