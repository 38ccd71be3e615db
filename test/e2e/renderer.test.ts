import { createServer, type Server } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { buildRenderer } from '../../src/host/bridge/build-renderer.js';
import { startBridge, type Bridge } from '../../src/host/bridge/server.js';
import { launchBrowser, type LaunchedBrowser } from './browser.js';
import {
  amountAndCurrencySizes,
  dccOptionStyle,
  dropSockets,
  imageWidth,
  injectInlineStyle,
  installWatchers,
  nextTestId,
  nothingFocused,
  recordSockets,
  screensSeen,
  tryWebSocket,
  violationsSeen,
  whiteSpace,
} from './page-scripts.js';
import { FAKE_PIN, FakeTerminal, SAMPLE_DCC, type FakeTerminalOptions } from './fake-terminal.js';

/**
 * The renderer in a real headless Chromium, against the real bridge and a scripted TerminalApi: the kiosk sale, the
 * DCC choice screen's presentation rules (gateway.md §5), the operator panel, and the browser-side attacks the bridge
 * must stop (DNS rebinding, cross-site WebSocket).
 */

let staticDir: string;
let launched: LaunchedBrowser;
const open: { bridge: Bridge; fake: FakeTerminal }[] = [];

beforeAll(async () => {
  staticDir = await buildRenderer();
  launched = await launchBrowser(['--host-resolver-rules=MAP rebind.test 127.0.0.1']);
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

async function start(options: FakeTerminalOptions = {}): Promise<{ bridge: Bridge; fake: FakeTerminal }> {
  const fake = new FakeTerminal(options);
  const bridge = await startBridge(fake, { port: 0, staticDir });
  const pair = { bridge, fake };
  open.push(pair);
  return pair;
}

interface Watched {
  page: Page;
  /** Content-Security-Policy violations and page errors seen so far. */
  problems: string[];
}

/** Opens the printed URL in a fresh context, recording every customer screen shown and every CSP violation. */
async function openTerminal(bridge: Bridge, initScripts: (() => void)[] = []): Promise<Watched> {
  const context = await launched.browser.newContext({ viewport: { width: 1024, height: 1280 } });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  await page.addInitScript(installWatchers);
  for (const script of initScripts) await page.addInitScript(script);
  const response = await page.goto(bridge.url);
  expect(response?.status()).toBe(200);
  return { page, problems };
}

async function screens(page: Page): Promise<string[]> {
  return page.evaluate(screensSeen);
}

async function violations(page: Page): Promise<string[]> {
  return page.evaluate(violationsSeen);
}

async function onScreen(page: Page, screen: string): Promise<void> {
  await page.locator(`[data-testid="customer"][data-screen="${screen}"]`).waitFor();
}

describe('renderer in a real browser', () => {
  it('walks a kiosk sale from idle to "Approved"', async () => {
    const { bridge, fake } = await start();
    const { page, problems } = await openTerminal(bridge);
    // The secret left the address bar: it was exchanged for a cookie.
    expect(page.url()).toBe(`http://127.0.0.1:${bridge.port}/`);
    await onScreen(page, 'idle');
    // The customer's screen is the customer's: no status bar, no operator figure, no operator button.
    expect(await page.getByTestId('status-bar').count()).toBe(0);
    expect(await page.getByTestId('operator-open').count()).toBe(0);
    const text = (await page.locator('body').innerText()).toLowerCase();
    for (const figure of ['journal', 'offline queue', 'sandbox', 'sim-1.0', 'pt000001'])
      expect(text).not.toContain(figure);
    await page.getByTestId('action-START').click();
    await onScreen(page, 'enter-ticket');
    for (const key of ['4', '2', '0', '0', '7']) await page.getByTestId(`ticket-key-${key}`).click();
    await page.getByTestId('action-ENTER_TICKET').click();
    await onScreen(page, 'confirm');
    expect(await page.getByTestId('customer-amount').textContent()).toBe('€12.50');
    await page.getByTestId('action-CONFIRM').click();
    await onScreen(page, 'approved');
    expect(await page.getByTestId('customer-title').textContent()).toBe('Approved');
    expect(await page.getByTestId('masked-pan').textContent()).toBe('Card 476173******0119');
    const qrWidth = await page.getByTestId('receipt-qr').evaluate(imageWidth);
    expect(qrWidth).toBeGreaterThan(0);

    expect(await screens(page)).toEqual([
      'idle',
      'enter-ticket',
      'confirm',
      'present-card',
      'processing',
      'approved',
    ]);
    expect(fake.events).toEqual([
      { type: 'START' },
      { type: 'ENTER_TICKET', ticket: '42007' },
      { type: 'CONFIRM' },
    ]);
    expect(await violations(page)).toEqual([]);
    expect(problems).toEqual([]);
    // The policy is live: an injected inline style is refused (so "no violations" above means something).
    await page.evaluate(injectInlineStyle);
    await expect.poll(() => violations(page), { timeout: 10_000 }).toEqual(['style-src-elem']);

    await page.getByTestId('action-DONE').click();
    await onScreen(page, 'idle');
    await page.context().close();
  });

  it('tells the customer why a press was refused, in words for customers, and keeps the screen', async () => {
    const { bridge, fake } = await start();
    const { page, problems } = await openTerminal(bridge);
    await onScreen(page, 'idle');
    fake.withdraw('START');
    await page.getByTestId('action-START').click();
    const banner = page.getByTestId('problem');
    await expect.poll(() => banner.textContent()).toBe('That is not possible right now.');
    expect(await banner.getAttribute('data-code')).toBe('NOT_ALLOWED_NOW');
    expect(await page.locator('[data-testid="customer"]').getAttribute('data-screen')).toBe('idle');
    expect(await page.locator('body').innerText()).not.toContain('START on idle');
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('shows the DCC choice as gateway.md §5 requires and sends the chosen currency', async () => {
    const { bridge, fake } = await start({ dcc: SAMPLE_DCC });
    const { page, problems } = await openTerminal(bridge);
    await onScreen(page, 'idle');
    await page.getByTestId('action-START').click();
    await page.getByTestId('action-LOST_TICKET').click();
    await page.getByTestId('action-CONFIRM').click();
    await onScreen(page, 'choose-currency');

    expect(await page.getByTestId('customer-title').textContent()).toBe('Select currency');
    const local = page.getByTestId('dcc-option-EUR');
    const card = page.getByTestId('dcc-option-GBP');
    expect(await local.textContent()).toBe('€12.50EUR');
    expect(await card.textContent()).toBe('£10.91GBP');
    // Equal size, identical style, nothing pre-selected or highlighted.
    const [lb, cb] = [await local.boundingBox(), await card.boundingBox()];
    expect(lb && cb && [lb.width, lb.height]).toEqual(cb && [cb.width, cb.height]);
    expect(await local.evaluate(dccOptionStyle)).toEqual(await card.evaluate(dccOptionStyle));
    const [amountSize, currencySize] = await local.evaluate(amountAndCurrencySizes);
    expect(amountSize).toBe(currencySize);
    expect(await page.evaluate(nothingFocused)).toBe(true);
    expect(
      await page
        .locator('[data-testid="dcc-screen"] [aria-pressed], [data-testid="dcc-screen"] [aria-selected]')
        .count(),
    ).toBe(0);
    // No yes/no or accept/decline wording, and the local amount is not shown bigger elsewhere on the screen.
    const text = (await page.getByTestId('customer').textContent()) ?? '';
    expect(text).not.toMatch(/\b(yes|no|accept|decline)\b/i);
    expect(await page.getByTestId('customer-amount').count()).toBe(0);
    // The rate, and the markup directly under it.
    expect(await page.getByTestId('dcc-rate').textContent()).toBe(SAMPLE_DCC.rate);
    expect(await page.getByTestId('dcc-markup').textContent()).toBe(SAMPLE_DCC.markup);
    expect(await page.getByTestId('dcc-rate').evaluate(nextTestId)).toBe('dcc-markup');
    const [rate, markup] = [
      await page.getByTestId('dcc-rate').boundingBox(),
      await page.getByTestId('dcc-markup').boundingBox(),
    ];
    expect(markup!.y).toBeGreaterThanOrEqual(rate!.y + rate!.height);
    // The disclaimer exactly as the gateway sent it, spaces and line breaks included.
    expect(await page.getByTestId('dcc-disclaimer').textContent()).toBe(SAMPLE_DCC.disclaimer);
    expect(await page.getByTestId('dcc-disclaimer').evaluate(whiteSpace)).toBe('pre-wrap');

    await card.click();
    await onScreen(page, 'approved');
    expect(fake.events.at(-1)).toEqual({ type: 'CHOOSE_CURRENCY', currency: 'GBP' });
    expect(await violations(page)).toEqual([]);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('offers only the local currency when the offer cannot be shown completely', async () => {
    const { bridge, fake } = await start({ dcc: { ...SAMPLE_DCC, disclaimer: '' } });
    const { page } = await openTerminal(bridge);
    await page.getByTestId('action-START').click();
    await page.getByTestId('action-LOST_TICKET').click();
    await page.getByTestId('action-CONFIRM').click();
    await onScreen(page, 'choose-currency');
    expect(await page.getByTestId('dcc-option-GBP').count()).toBe(0);
    await page.getByTestId('dcc-option-EUR').click();
    await onScreen(page, 'approved');
    expect(fake.events.at(-1)).toEqual({ type: 'CHOOSE_CURRENCY', currency: 'EUR' });
    await page.context().close();
  });

  it('lets the operator list, void and flush only with the PIN', async () => {
    const { bridge, fake } = await start();
    const { page, problems } = await openTerminal(bridge);
    await page.getByTestId('action-START').click();
    await page.getByTestId('action-LOST_TICKET').click();
    await page.getByTestId('action-CONFIRM').click();
    await onScreen(page, 'approved');

    // Entered discreetly: the service key combination opens the PIN prompt, nothing the customer can see.
    await page.keyboard.press('Control+Alt+O');
    await page.getByTestId('operator-pin').fill('9999');
    await page.getByTestId('operator-login').click();
    await expect
      .poll(() => page.getByTestId('operator-result').textContent(), { timeout: 10_000 })
      .toContain('OPERATOR_PIN');
    expect(await page.getByTestId('operator-transactions').count()).toBe(0);

    await page.getByTestId('operator-pin').fill(FAKE_PIN);
    await page.getByTestId('operator-login').click();
    const row = page.locator('[data-testid^="txn-T"]').first();
    await row.waitFor();
    // The status figures show inside the panel, to the signed-in operator only.
    await expect
      .poll(() => page.getByTestId('status-reader').textContent(), { timeout: 10_000 })
      .toContain('sim ok');
    const id = ((await row.getAttribute('data-testid')) ?? '').slice('txn-'.length);
    await page.getByTestId(`void-${id}`).click();
    await page.getByTestId('confirm-void').click();
    await expect
      .poll(() => page.getByTestId(`txn-state-${id}`).textContent(), { timeout: 10_000 })
      .toBe('VOIDED');
    await page.getByTestId('operator-flush').click();
    await expect
      .poll(() => page.getByTestId('operator-result').textContent(), { timeout: 10_000 })
      .toContain('0 remaining');
    await page.getByTestId('operator-audit').click();
    await page.getByTestId('operator-audit-log').waitFor();
    await page.getByTestId('operator-close').click();
    expect(await page.getByTestId('operator-panel').isHidden()).toBe(true);

    expect(fake.operatorRequests.some((r) => r.action.type === 'status' && r.pin === FAKE_PIN)).toBe(true);
    expect(fake.operatorRequests.some((r) => r.action.type === 'status' && r.pin !== FAKE_PIN)).toBe(false);
    expect(
      fake.operatorRequests.filter((r) => r.action.type !== 'status').map((r) => [r.pin, r.action.type]),
    ).toEqual([
      ['9999', 'transactions'],
      [FAKE_PIN, 'transactions'],
      [FAKE_PIN, 'void'],
      [FAKE_PIN, 'transactions'],
      [FAKE_PIN, 'flush-queue'],
      [FAKE_PIN, 'audit'],
    ]);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('asks again for a refund whose answer never reached the page under its first requestId: carried out once', async () => {
    const { bridge, fake } = await start();
    const { page, problems } = await openTerminal(bridge, [recordSockets]);
    await page.getByTestId('action-START').click();
    await page.getByTestId('action-LOST_TICKET').click();
    await page.getByTestId('action-CONFIRM').click();
    await onScreen(page, 'approved');
    await page.keyboard.press('Control+Alt+O');
    await page.getByTestId('operator-pin').fill(FAKE_PIN);
    await page.getByTestId('operator-login').click();
    const row = page.locator('[data-testid^="txn-T"]').first();
    await row.waitFor();
    const id = ((await row.getAttribute('data-testid')) ?? '').slice('txn-'.length);
    const refunds = () =>
      fake.operatorRequests.flatMap((r) => (r.action.type === 'refund' ? [r.action] : []));

    // A partial refund reaches the terminal; its answer never reaches the page: the connection drops meanwhile.
    fake.unansweredRefunds = 1;
    await page.getByTestId(`refund-amount-${id}`).fill('3.00');
    await page.getByTestId(`refund-${id}`).click();
    await page.getByTestId('confirm-refund').click();
    await expect.poll(() => refunds().length).toBe(1);
    expect(await page.evaluate(dropSockets)).toBeGreaterThan(0);
    await expect
      .poll(() => page.getByTestId('operator-result').textContent(), { timeout: 10_000 })
      .toContain('DISCONNECTED');
    await expect.poll(() => page.getByTestId('connection-banner').count(), { timeout: 10_000 }).toBe(0);

    // The operator, not knowing whether it went through, asks for the same refund again: the terminal must be able to
    // tell it is the same one (and answer it with the first one's answer), not a second refund of 3.00.
    await page.getByTestId(`refund-${id}`).click();
    await page.getByTestId('confirm-refund').click();
    await expect.poll(() => refunds().length).toBe(2);
    const [first, again] = refunds();
    expect(again).toEqual({
      type: 'refund',
      transactionId: id,
      amountMinor: 300,
      requestId: first?.requestId,
    });
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('closes the operator panel, forgetting the PIN, when the operator leaves it five minutes untouched', async () => {
    const { bridge, fake } = await start();
    const { page, problems } = await openTerminal(bridge);
    await page.clock.install();
    await onScreen(page, 'idle');
    await page.keyboard.press('Control+Alt+O');
    await page.getByTestId('operator-pin').fill(FAKE_PIN);
    await page.getByTestId('operator-login').click();
    await page.getByTestId('operator-audit').waitFor();

    // Used now and then, it stays open: each touch counts afresh.
    await page.clock.runFor(4 * 60_000);
    await page.getByTestId('operator-audit').click();
    await page.getByTestId('operator-audit-log').waitFor();
    await page.clock.runFor(4 * 60_000);
    expect(await page.getByTestId('operator-panel').isHidden()).toBe(false);

    // Left alone (the operator walked away from a kiosk in the street): closed, and the status refresh stops.
    await page.clock.runFor(60_000 + 2_000);
    expect(await page.getByTestId('operator-panel').isHidden()).toBe(true);
    // The page's clock ran a minute of refreshes in a moment: those it sent before closing may still be on their way to
    // the terminal. Counted once none has come for a while (real time, not the page's).
    const arrived = async (): Promise<number> => {
      for (let seen = -1; ; await new Promise((r) => setTimeout(r, 300))) {
        if (seen === fake.operatorRequests.length) return seen;
        seen = fake.operatorRequests.length;
      }
    };
    const asked = await arrived();
    await page.clock.runFor(10_000);
    expect(await arrived()).toBe(asked);
    // Opened again, it asks for the PIN.
    await page.keyboard.press('Control+Alt+O');
    await page.getByTestId('operator-pin').waitFor();
    expect(await page.getByTestId('operator-audit').count()).toBe(0);

    // Left at the PIN prompt, it closes too: the customer's screen is not kept covered.
    await page.clock.runFor(5 * 60_000 + 2_000);
    expect(await page.getByTestId('operator-panel').isHidden()).toBe(true);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('refuses a page reached through a rebound DNS name, even with the secret', async () => {
    const { bridge } = await start();
    const context = await launched.browser.newContext();
    const page = await context.newPage();
    const response = await page.goto(`http://rebind.test:${bridge.port}/?s=${bridge.secret}`);
    expect(response?.status()).toBe(403);
    expect(await page.locator('[data-testid="app"]').count()).toBe(0);
    await context.close();
  });

  it('refuses a WebSocket opened by a page of another origin in the same browser', async () => {
    const { bridge, fake } = await start();
    const { page } = await openTerminal(bridge);
    await onScreen(page, 'idle');
    expect(fake.subscribers).toBe(1);
    // Another site, served from another port, tries to drive the terminal with the user's own browser (and cookie).
    const evil: Server = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end('<!doctype html><title>evil</title>');
    });
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
    const evilPort = (evil.address() as { port: number }).port;
    try {
      const attacker = await page.context().newPage();
      await attacker.goto(`http://rebind.test:${evilPort}/`);
      const outcome = await attacker.evaluate(tryWebSocket, bridge.port);
      expect(outcome).toBe('refused');
      expect(fake.subscribers).toBe(1);
      expect(fake.events).toEqual([]);
    } finally {
      await new Promise((r) => evil.close(r));
      await page.context().close();
    }
  });
});
