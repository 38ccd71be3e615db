import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import type { CustomerView, OfflineDeclineSummary } from '../../src/host/api.js';
import { buildRenderer } from '../../src/host/bridge/build-renderer.js';
import { startBridge, type Bridge } from '../../src/host/bridge/server.js';
import { focusedTestId, markDrawnBefore } from './accessibility-scripts.js';
import { audit, WCAG_AA } from './axe.js';
import { sidewaysScroll } from './layout-scripts.js';
import { launchBrowser, type LaunchedBrowser } from './browser.js';
import { FAKE_PIN, FakeTerminal } from './fake-terminal.js';

/**
 * The operator panel's payment links and phone / alternative-method sales in a real headless Chromium, through the
 * real bridge, against the FakeTerminal's operator (twelve links, eight of them this terminal's; a pending, a settled,
 * a failed and an abandoned sale): paging, a deactivation, a partial refund and a refused one, by keyboard where an
 * operator would use it, and axe-core on the panel with both sections shown.
 */

let staticDir: string;
let launched: LaunchedBrowser;
const open: { bridge: Bridge; fake: FakeTerminal }[] = [];

beforeAll(async () => {
  staticDir = await buildRenderer();
  launched = await launchBrowser();
});

afterAll(async () => {
  await launched?.close();
});

afterEach(async () => {
  for (const { bridge, fake } of open.splice(0)) {
    fake.dispose();
    await bridge.close();
  }
});

async function signedIn(
  prepare: (fake: FakeTerminal) => void = () => undefined,
  viewport = { width: 1280, height: 1600 },
  options: { clock?: boolean } = {},
): Promise<{ page: Page; fake: FakeTerminal; problems: string[] }> {
  const fake = new FakeTerminal();
  prepare(fake);
  const bridge = await startBridge(fake, { port: 0, staticDir });
  open.push({ bridge, fake });
  const context = await launched.browser.newContext({ viewport });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  // The page's timers (the status refresh every 2 s) on a clock the test runs.
  if (options.clock === true) await page.clock.install();
  await page.goto(bridge.url);
  await page.locator('[data-testid="customer"][data-screen="idle"]').waitFor();
  await page.keyboard.press('Control+Alt+O');
  await page.getByTestId('operator-pin').fill(FAKE_PIN);
  await page.keyboard.press('Enter');
  await page.getByTestId('operator-links-load').waitFor();
  return { page, fake, problems };
}

const text = (page: Page, testid: string): Promise<string | null> => page.getByTestId(testid).textContent();

describe('operator panel: payment links and alternative payments', () => {
  it('keeps focus on the control the operator is on when the status refresh draws the panel again', async () => {
    const { page, problems } = await signedIn();
    await page.getByTestId('operator-links-load').focus();
    // Mark the button the operator is on; the refresh (every 2 s) replaces the panel's elements with new ones.
    await page.getByTestId('operator-links-load').evaluate(markDrawnBefore);
    await expect
      .poll(() => page.locator('[data-testid="operator-links-load"][data-drawn="before"]').count(), {
        timeout: 10_000,
      })
      .toBe(0);
    expect(await page.evaluate(focusedTestId)).toBe('operator-links-load');
    await page.keyboard.press('Enter');
    await page.getByTestId('operator-links').waitFor();
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('pages through the links and deactivates one of the terminal', async () => {
    const { page, fake, problems } = await signedIn();
    await page.getByTestId('operator-links-load').focus();
    await page.keyboard.press('Enter');
    await page.getByTestId('operator-links').waitFor();
    expect(await text(page, 'operator-links-range')).toBe('Links 1–10 of 12');
    expect(await page.locator('[data-testid="operator-links"] tbody tr').count()).toBe(10);
    expect(await page.getByTestId('operator-links-previous').isDisabled()).toBe(true);

    await page.getByTestId('operator-links-next').click();
    await expect.poll(() => text(page, 'operator-links-range')).toBe('Links 11–12 of 12');
    // Links of another terminal of the merchant are listed, never offered for a change.
    expect(await text(page, 'link-terminal-PARK-12')).toBe('another terminal');
    expect(await page.locator('[data-testid="link-PARK-12"] button').count()).toBe(0);
    expect(await page.getByTestId('operator-links-next').isDisabled()).toBe(true);
    await page.getByTestId('operator-links-previous').click();
    await expect.poll(() => text(page, 'operator-links-range')).toBe('Links 1–10 of 12');

    expect(await text(page, 'link-status-PARK-01')).toBe('ACTIVE');
    await page.getByTestId('link-deactivate-PARK-01').focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => text(page, 'link-status-PARK-01')).toBe('INACTIVE');
    expect(await text(page, 'operator-result')).toContain('Link PARK-01 deactivated');
    expect(await text(page, 'link-terminal-PARK-01')).toBe('deactivated');
    expect(await page.getByTestId('link-reactivate-PARK-01').isVisible()).toBe(true);
    expect(fake.payments.links[0]?.status).toBe('INACTIVE');

    const asked = fake.operatorRequests.filter((r) => r.action.type.startsWith('link'));
    expect(asked.map((r) => [r.pin, r.action])).toEqual([
      [FAKE_PIN, { type: 'links', offset: 0, limit: 10 }],
      [FAKE_PIN, { type: 'links', offset: 10, limit: 10 }],
      [FAKE_PIN, { type: 'links', offset: 0, limit: 10 }],
      [FAKE_PIN, { type: 'link-deactivate', linkId: 'PARK-01' }],
      [FAKE_PIN, { type: 'links', offset: 0, limit: 10 }],
    ]);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('lists the alternative-method sales, refunds part of a settled one and shows a refusal; axe finds nothing', async () => {
    const { page, fake, problems } = await signedIn();
    await page.getByTestId('operator-alt-load').click();
    await page.getByTestId('operator-alt-sales').waitFor();
    expect(await text(page, 'alt-status-1')).toBe('pending');
    expect(await text(page, 'alt-status-2')).toBe('settled');
    expect(await text(page, 'alt-status-3')).toBe('failed');
    expect(await text(page, 'alt-status-4')).toBe('abandoned');
    expect(await text(page, 'alt-refundable-2')).toBe('€12.50');
    // Only the settled sale can be refunded.
    expect(await page.locator('[data-testid^="alt-refund-amount-"]').count()).toBe(1);

    // By keyboard: the amount, Enter to ask, then the confirmation.
    await page.getByTestId('alt-refund-amount-2').fill('5.00');
    await page.getByTestId('alt-refund-amount-2').press('Enter');
    await page.getByTestId('operator-alt-confirm').waitFor();
    expect(await text(page, 'operator-alt-confirm')).toContain('5.00 EUR of sale 2');
    await page.getByTestId('confirm-alt-refund').focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => text(page, 'alt-refundable-2')).toBe('€7.50');
    expect(await text(page, 'alt-refunded-2')).toBe('€5.00');
    expect(await text(page, 'operator-result')).toContain('Refund of €5.00 of sale 2: accepted');

    await page.getByTestId('alt-refund-amount-2').fill('8.00');
    await page.getByTestId('alt-refund-2').click();
    await page.getByTestId('confirm-alt-refund').click();
    await expect.poll(() => text(page, 'operator-result')).toContain('ALT_REFUND_ABOVE_SETTLED');
    expect(await text(page, 'alt-refundable-2')).toBe('€7.50');

    const refunds = fake.operatorRequests.flatMap((r) =>
      r.action.type === 'alt-refund' ? [{ pin: r.pin, ...r.action }] : [],
    );
    expect(refunds.map(({ requestId: _id, ...r }) => r)).toEqual([
      { pin: FAKE_PIN, type: 'alt-refund', saleId: 2, amountMinor: 500 },
      { pin: FAKE_PIN, type: 'alt-refund', saleId: 2, amountMinor: 800 },
    ]);
    // Each refund the operator armed is named apart: the terminal carries each out once, and both.
    const [first, second] = refunds.map((r) => r.requestId);
    expect(first).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    expect(second).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    expect(first).not.toBe(second);

    // Both sections shown at once, for the accessibility check.
    await page.getByTestId('operator-links-load').click();
    await page.getByTestId('operator-links').waitFor();
    expect(
      await audit(page, 'operator panel with payment links and sales', { kind: 'tag', values: WCAG_AA }),
    ).toEqual([]);
    const panel = await page.getByTestId('operator-panel').innerText();
    expect(panel).not.toMatch(/@|https?:\/\/g\.example/);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

/** A stored payment forwarded and not collected in full, as the terminal lists it. */
const declined = (transactionId: string, minor: number, reason: string): OfflineDeclineSummary => ({
  transactionId,
  amount: { minor, currency: 'EUR', text: `€${(minor / 100).toFixed(2)}` },
  maskedPan: '411111******1111',
  state: reason === 'PARTIAL_APPROVAL' ? 'approved' : 'declined',
  reason,
  storedAt: '2030-01-01T08:00:00.000Z',
  forwardedAt: '2030-01-01T09:00:00.000Z',
});

describe('operator panel: an alternative-method refund whose answer was lost', () => {
  it('tells the operator the terminal is cancelling it, not that it is under way', async () => {
    const { page, fake, problems } = await signedIn((f) => {
      f.payments.lostRefundAnswers = 1;
    });
    await page.getByTestId('operator-alt-load').click();
    await page.getByTestId('operator-alt-sales').waitFor();
    await page.getByTestId('alt-refund-amount-2').fill('4.00');
    await page.getByTestId('alt-refund-2').click();
    await page.getByTestId('confirm-alt-refund').click();
    // The terminal answers `in-flight` for a refund whose gateway answer was lost: recovery's timeout void cancels it
    // (test/integration/alt-payments.test.ts), so the customer is not refunded by it.
    await expect
      .poll(() => text(page, 'operator-result'))
      .toBe(
        'Refund of €4.00 of sale 2: its answer was lost: the terminal is cancelling it. Do not tell the customer it ' +
          'is refunded; once the sale shows it refundable again, nothing was refunded: refund again',
      );
    expect(fake.operatorRequests.filter((r) => r.action.type === 'alt-refund')).toHaveLength(1);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe('operator panel: stored payments not collected in full after forwarding', () => {
  it('lists them, takes one off the count once acknowledged by keyboard, and axe finds nothing', async () => {
    const { page, fake, problems } = await signedIn((f) =>
      f.setOfflineDeclines([
        declined('OFF1', 1250, 'EXPIRED_CARD'),
        declined('OFF2', 300, 'PARTIAL_APPROVAL'),
      ]),
    );
    // The count comes with the status figures, which the panel asks for once signed in.
    await expect.poll(() => text(page, 'operator-declines-open')).toBe('Not collected after forwarding (2)');
    await page.getByTestId('operator-declines-open').click();
    await page.getByTestId('operator-declines').waitFor();
    expect(await page.locator('[data-testid="operator-declines"] tbody tr').count()).toBe(2);
    expect(await text(page, 'decline-OFF1')).toContain('€12.50');
    expect(await text(page, 'decline-OFF2')).toContain('PARTIAL_APPROVAL');
    expect(await audit(page, 'the panel with the list', { kind: 'tag', values: WCAG_AA })).toEqual([]);

    await page.getByTestId('acknowledge-OFF1').focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByTestId('decline-OFF1').count()).toBe(0);
    expect(await text(page, 'operator-result')).toBe('Acknowledged OFF1');
    await expect.poll(() => text(page, 'operator-declines-open')).toBe('Not collected after forwarding (1)');

    await page.getByTestId('acknowledge-OFF2').click();
    await page.getByTestId('operator-declines-empty').waitFor();
    expect(
      fake.operatorRequests.filter((r) => r.action.type.startsWith('offline')).map((r) => [r.pin, r.action]),
    ).toEqual([
      [FAKE_PIN, { type: 'offline-declines' }],
      [FAKE_PIN, { type: 'offline-acknowledge', transactionId: 'OFF1' }],
      [FAKE_PIN, { type: 'offline-acknowledge', transactionId: 'OFF2' }],
    ]);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe('operator panel: fees not collected in full', () => {
  const eur = (minor: number) => ({ minor, currency: 'EUR', text: `€${(minor / 100).toFixed(2)}` });
  const shortfall = (transactionId: string, owed: number, captured: number, code: string) => ({
    transactionId,
    code,
    owed: eur(owed),
    captured: eur(captured),
    shortfall: eur(owed - captured),
    at: '2030-01-01T09:00:00.000Z',
  });

  it('lists them, takes one off the count once acknowledged by keyboard, and axe finds nothing', async () => {
    const { page, fake, problems } = await signedIn((f) =>
      f.setFeeShortfalls([
        shortfall('CAP1', 900, 598, 'INCREMENTAL_NOT_APPROVED'),
        shortfall('AUTH2', 300, 0, 'FEE_NOT_COMPUTABLE'),
      ]),
    );
    await expect.poll(() => text(page, 'operator-shortfalls-open')).toBe('Fee shortfalls (2)');
    await page.getByTestId('operator-shortfalls-open').click();
    await page.getByTestId('operator-shortfalls').waitFor();
    expect(await page.locator('[data-testid="operator-shortfalls"] tbody tr').count()).toBe(2);
    // Named on screen: opened under the list of stored payments not collected, the two read apart.
    expect(await page.locator('[data-testid="operator-shortfalls"] caption').textContent()).toBe(
      'Fees not collected in full',
    );
    expect(await text(page, 'shortfall-CAP1')).toContain('€3.02');
    expect(await text(page, 'shortfall-AUTH2')).toContain('FEE_NOT_COMPUTABLE');
    expect(await audit(page, 'the panel with the shortfalls', { kind: 'tag', values: WCAG_AA })).toEqual([]);

    await page.getByTestId('acknowledge-shortfall-CAP1').focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByTestId('shortfall-CAP1').count()).toBe(0);
    expect(await text(page, 'operator-result')).toBe('Acknowledged CAP1');
    await expect.poll(() => text(page, 'operator-shortfalls-open')).toBe('Fee shortfalls (1)');

    await page.getByTestId('acknowledge-shortfall-AUTH2').click();
    await page.getByTestId('operator-shortfalls-empty').waitFor();
    expect(
      fake.operatorRequests.filter((r) => r.action.type.startsWith('fee-')).map((r) => [r.pin, r.action]),
    ).toEqual([
      [FAKE_PIN, { type: 'fee-shortfalls' }],
      [FAKE_PIN, { type: 'fee-shortfall-acknowledge', transactionId: 'CAP1' }],
      [FAKE_PIN, { type: 'fee-shortfall-acknowledge', transactionId: 'AUTH2' }],
    ]);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe('operator panel: lists in a narrow window', () => {
  const NARROW = { width: 1100, height: 900 };
  // Transaction ids are 27 characters without a break (src/gateway/transaction-id.ts) and the times full ISO 8601:
  // the widest a row gets.
  const STORED = ['T01HZX3K9W5QJ7M2VRB8N4D6CTE', 'T01HZX3M2A8PK5R9WD3F7G1HJYN'];
  const CAPTURE = 'T01HZX3Q4B6RM8T2XC5V9F3KJWA';
  const ARABIC: NonNullable<CustomerView['language']> = {
    current: 'ar_AE',
    lang: 'ar-AE',
    direction: 'rtl',
    available: [{ locale: 'ar_AE', name: 'العربية', lang: 'ar-AE' }],
  };

  for (const direction of ['ltr', 'rtl'] as const)
    it(`shows every column of every list at ${NARROW.width} px (customer screen ${direction}); nothing scrolls sideways`, async () => {
      const { page, fake, problems } = await signedIn((f) => {
        f.setTransactions([
          {
            transactionId: CAPTURE,
            service: 'capture',
            comments: 'parking',
            gatewayId: '7301234567890123456789',
            state: 'approved',
            amount: { minor: 1250, currency: 'EUR', text: '€12.50' },
            shortfall: { minor: 302, currency: 'EUR', text: '€3.02' },
            maskedPan: '476173******0119',
            at: '2030-01-01T10:00:00.000Z',
            allowed: ['refund', 'void'],
          },
        ]);
        f.setOfflineDeclines([
          declined(STORED[0] ?? '', 1250, 'EXPIRED_CARD'),
          declined(STORED[1] ?? '', 300, 'PARTIAL_APPROVAL'),
        ]);
      }, NARROW);
      if (direction === 'rtl')
        fake.present({ screen: 'idle', title: 'مرحبا', message: '', actions: ['START'], language: ARABIC });
      // The customer's writing direction is the page's (renderer/src/customer.ts); left to right when none is set.
      await expect
        .poll(async () => (await page.locator('html').getAttribute('dir')) ?? 'ltr')
        .toBe(direction);
      await page.getByTestId('operator-reload').click();
      await page.getByTestId('operator-transactions').waitFor();
      await page.getByTestId('operator-declines-open').click();
      await page.getByTestId('operator-declines').waitFor();
      await page.getByTestId('operator-links-load').click();
      await page.getByTestId('operator-links').waitFor();
      await page.getByTestId('operator-alt-load').click();
      await page.getByTestId('operator-alt-sales').waitFor();

      const controls = [
        ...STORED.map((id) => `acknowledge-${id}`),
        `refund-amount-${CAPTURE}`,
        `refund-${CAPTURE}`,
        `void-${CAPTURE}`,
        'link-deactivate-PARK-01',
        'alt-refund-amount-2',
        'alt-refund-2',
      ];
      for (const testid of controls) {
        const box = await page.getByTestId(testid).boundingBox();
        expect(box, testid).not.toBeNull();
        expect(box?.x, testid).toBeGreaterThanOrEqual(0);
        expect((box?.x ?? 0) + (box?.width ?? 0), testid).toBeLessThanOrEqual(NARROW.width);
      }
      // Neither the panel nor the page is wider than the window.
      expect(await page.evaluate(sidewaysScroll, ['.operator-sheet', '.operator-overlay', 'html'])).toEqual({
        '.operator-sheet': 0,
        '.operator-overlay': 0,
        html: 0,
      });
      expect(await audit(page, 'the narrow panel with every list', { kind: 'tag', values: WCAG_AA })).toEqual(
        [],
      );
      expect(problems).toEqual([]);
      await page.context().close();
    });

  it('scrolls a list too wide for a still narrower window in its own region, by keyboard; the panel stays put', async () => {
    const { page, problems } = await signedIn(
      (f) => f.setOfflineDeclines([declined(STORED[0] ?? '', 1250, 'EXPIRED_CARD')]),
      {
        width: 640,
        height: 900,
      },
    );
    await page.getByTestId('operator-declines-open').click();
    await page.getByTestId('operator-declines').waitFor();
    const region = page.getByRole('region', {
      name: 'Stored payments not collected in full after forwarding',
    });
    const button = page.getByTestId(`acknowledge-${STORED[0] ?? ''}`);
    const right = async (): Promise<number> => {
      const box = await button.boundingBox();
      return (box?.x ?? 0) + (box?.width ?? 0);
    };
    expect(await right()).toBeGreaterThan(640);
    // Tab reaches the region (its focus ring shows where the operator is); the arrow keys scroll it.
    await region.focus();
    for (let i = 0; i < 20; i++) await page.keyboard.press('ArrowRight');
    await expect.poll(right).toBeLessThanOrEqual(640);
    expect(await page.evaluate(sidewaysScroll, ['.operator-sheet', '.operator-overlay', 'html'])).toEqual({
      '.operator-sheet': 0,
      '.operator-overlay': 0,
      html: 0,
    });
    expect(await audit(page, 'the panel at 640 px', { kind: 'tag', values: WCAG_AA })).toEqual([]);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe('operator panel: a tap-and-go hold whose fee the tariff could not price in its currency', () => {
  // As the host lists it (src/host/operator-desk.ts), in terminal.locale: here Arabic, right to left inside the
  // English, left-to-right panel.
  const note = {
    code: 'FEE_NOT_COMPUTABLE' as const,
    text: 'لم يتم تحصيل رسوم قدرها ‏3.00 €: لا يمكن للتعرفة احتساب مبلغ محجوز بعملة GBP. تم الإفراج عن المبلغ المحجوز ولم يُخصم أي مبلغ.',
    lang: 'ar-AE',
  };

  it('states on the hold why its fee was not collected, in the terminal’s language, and axe finds nothing', async () => {
    const { page, problems } = await signedIn((f) =>
      f.setTransactions([
        {
          transactionId: 'A1',
          service: 'preauth',
          comments: 'Parking Auth',
          gatewayId: 'G-A1',
          state: 'approved',
          amount: { minor: 598, currency: 'GBP', text: '£5.98' },
          shortfall: { minor: 300, currency: 'EUR', text: '€3.00' },
          note,
          maskedPan: '476173******0119',
          at: '2030-01-01T10:00:00.000Z',
          allowed: [],
        },
      ]),
    );
    await page.getByTestId('operator-reload').click();
    await page.getByTestId('operator-transactions').waitFor();
    // The state, and under it the note (which says the amount not collected).
    expect(await text(page, 'txn-state-A1')).toBe(`approved${note.text}`);
    const line = page.getByTestId('txn-note-A1');
    expect(await line.getAttribute('lang')).toBe('ar-AE');
    // Its own direction, whatever the panel's.
    expect(await line.getAttribute('dir')).toBe('auto');
    expect(await audit(page, 'the panel with the hold', { kind: 'tag', values: WCAG_AA })).toEqual([]);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe('operator panel: open tap-and-go stays (passback reset)', () => {
  const stay = (holdId: string, state: 'open' | 'settling' | 'releasing') => ({
    holdId,
    maskedPan: '476173******0119',
    enteredAt: '2030-01-01T08:00:00.000Z',
    held: { minor: 598, currency: 'GBP', text: '£5.98' },
    state,
    allowed: state === 'open' ? (['release'] as 'release'[]) : [],
  });

  it('lists the open stays with the masked card, releases one only once confirmed, and axe finds nothing', async () => {
    const { page, fake, problems } = await signedIn((f) =>
      f.setStays([stay('H-OPEN', 'open'), stay('H-BUSY', 'settling')]),
    );
    await page.getByTestId('operator-stays-load').click();
    await page.getByTestId('operator-stays').waitFor();
    expect(await text(page, 'stay-H-OPEN')).toContain('476173******0119');
    expect(await text(page, 'stay-state-H-BUSY')).toBe('being settled');
    // A stay being settled offers no release.
    expect(await page.locator('[data-testid="stay-H-BUSY"] button').count()).toBe(0);

    // One press arms the release; nothing is sent until it is confirmed.
    await page.getByTestId('stay-release-H-OPEN').click();
    await page.getByTestId('operator-stay-confirm').waitFor();
    expect(await text(page, 'operator-stay-confirm')).toContain('£5.98');
    expect(fake.operatorRequests.filter((r) => r.action.type === 'hold-release')).toEqual([]);
    expect(await audit(page, 'the panel with the open stays', { kind: 'tag', values: WCAG_AA })).toEqual([]);
    await page.getByTestId('confirm-stay-release').click();
    await expect.poll(() => text(page, 'operator-result')).toContain('Stay H-OPEN: released');
    await expect.poll(() => page.getByTestId('stay-H-OPEN').count()).toBe(0);
    expect(
      fake.operatorRequests.filter(
        (r) => r.action.type.startsWith('stays') || r.action.type === 'hold-release',
      ),
    ).toEqual([
      { pin: FAKE_PIN, action: { type: 'stays' } },
      { pin: FAKE_PIN, action: { type: 'hold-release', holdId: 'H-OPEN' } },
      { pin: FAKE_PIN, action: { type: 'stays' } },
    ]);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe('operator panel: a refund’s or void’s answer, told apart', () => {
  const sale = (transactionId: string) => ({
    transactionId,
    service: 'sale',
    comments: 'Parking Sale',
    gatewayId: `G-${transactionId}`,
    state: 'approved',
    amount: { minor: 600, currency: 'GBP', text: '£6.00' },
    maskedPan: '476173******0119',
    at: '2030-01-01T10:00:00.000Z',
    allowed: ['refund', 'void'] as ('refund' | 'void')[],
  });

  /** The result line's tone, marker and text, and what the live region read out. */
  const shown = async (page: Page) => ({
    tone: await page.getByTestId('operator-notice').getAttribute('data-tone'),
    marker: (await text(page, 'operator-result-marker'))?.trim(),
    text: await text(page, 'operator-result'),
    said: await text(page, 'operator-announcer'),
  });

  it('names each row’s refund and void after its transaction, for a screen reader on any row', async () => {
    const { page, problems } = await signedIn((f) => f.setTransactions([sale('S1'), sale('S2')]));
    await page.getByTestId('operator-reload').click();
    await page.getByTestId('operator-transactions').waitFor();
    // Each row's controls are named after its transaction: a screen reader hears which one it is on, not "Void" for
    // every row.
    for (const id of ['S1', 'S2']) {
      expect(await page.getByTestId(`void-${id}`).getAttribute('aria-label')).toBe(`Void ${id}`);
      expect(await page.getByTestId(`refund-${id}`).getAttribute('aria-label')).toBe(`Refund ${id}`);
      expect(await page.getByTestId(`refund-amount-${id}`).getAttribute('aria-label')).toBe(
        `Refund amount for ${id} (GBP), empty for all that is left`,
      );
    }
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('marks a success, a refusal and an unknown outcome apart, in words read out once, and axe finds each clean', async () => {
    const { page, fake, problems } = await signedIn((f) => f.setTransactions([sale('S1'), sale('S2')]));
    await page.getByTestId('operator-reload').click();
    await page.getByTestId('operator-transactions').waitFor();
    fake.operatorAnswers.push(
      // The refund sent has its own transactionId, R9.
      {
        outcome: 'declined',
        code: 'GENERAL_DECLINE',
        message: 'The refund was not completed',
        transactionId: 'R9',
      },
      {
        outcome: 'unknown',
        code: 'UNKNOWN',
        message: 'The answer to the void was lost: the terminal finishes it; see the transaction list',
      },
    );

    await page.getByTestId('refund-S1').click();
    await page.getByTestId('confirm-refund').click();
    await expect
      .poll(() => shown(page))
      .toEqual({
        tone: 'refusal',
        marker: '✕ Not done',
        text: 'refund of S1 (sent as R9): declined — The refund was not completed (GENERAL_DECLINE)',
        said: 'Not done: refund of S1 (sent as R9): declined — The refund was not completed (GENERAL_DECLINE)',
      });
    expect(await audit(page, 'the panel with a refusal', { kind: 'tag', values: WCAG_AA })).toEqual([]);

    await page.getByTestId('void-S2').click();
    await page.getByTestId('confirm-void').click();
    await expect
      .poll(() => shown(page))
      .toEqual({
        tone: 'unknown',
        marker: '? Outcome unknown',
        text:
          'void of S2: unknown — The answer to the void was lost: the terminal finishes it; see the transaction list ' +
          '(UNKNOWN)',
        said:
          'Outcome unknown: void of S2: unknown — The answer to the void was lost: the terminal finishes it; see the ' +
          'transaction list (UNKNOWN)',
      });
    expect(await audit(page, 'the panel with an unknown outcome', { kind: 'tag', values: WCAG_AA })).toEqual(
      [],
    );

    await page.getByTestId('void-S1').click();
    await page.getByTestId('confirm-void').click();
    await expect
      .poll(() => shown(page))
      .toEqual({
        tone: 'success',
        marker: '✓ Done',
        text: 'void of S1: approved — Voided',
        said: 'Done: void of S1: approved — Voided',
      });
    // The status refresh (every 2 s) draws the panel anew; the live region is the same element, not read out again.
    await page.getByTestId('operator-announcer').evaluate(markDrawnBefore);
    await page.getByTestId('operator-notice').evaluate(markDrawnBefore);
    await expect
      .poll(() => page.locator('[data-testid="operator-notice"][data-drawn="before"]').count(), {
        timeout: 10_000,
      })
      .toBe(0);
    expect(await page.locator('[data-testid="operator-announcer"][data-drawn="before"]').count()).toBe(1);
    expect(await audit(page, 'the panel with a success', { kind: 'tag', values: WCAG_AA })).toEqual([]);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe('operator panel: a PIN the terminal no longer takes', () => {
  it('signs out at the first status refresh refused, and sends the PIN no more: no lockout by the panel', async () => {
    const { page, fake, problems } = await signedIn(undefined, undefined, { clock: true });
    // The terminal restarted and generated another PIN while the panel stayed open.
    fake.pin = '987654';
    const refused = () =>
      fake.operatorRequests.filter((r) => r.pin === FAKE_PIN && r.action.type === 'status').length;
    const before = refused();
    await page.clock.runFor(2_000);
    await page.getByTestId('operator-pin').waitFor();
    expect(await text(page, 'operator-result')).toBe('wrong PIN (OPERATOR_PIN)');
    expect(refused()).toBe(before + 1);
    // Five wrong PINs lock operator mode: the panel sends none again, however long it stays open.
    await page.clock.runFor(30_000);
    await page.getByTestId('operator-pin').waitFor();
    expect(refused()).toBe(before + 1);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});
