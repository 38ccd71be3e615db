import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import type { CustomerView, Screen } from '../../src/host/api.js';
import { TITLE_KEYS } from '../../src/host/flow-runtime.js';
import { CATALOGUES, intlLocale, LOCALES } from '../../src/i18n/index.js';
import { buildRenderer } from '../../src/host/bridge/build-renderer.js';
import { startBridge, type Bridge } from '../../src/host/bridge/server.js';
import { drawQr } from '../../src/host/link-screen.js';
import { accessibleDocument, focusedTestId, focusOutline } from './accessibility-scripts.js';
import { audit, ENHANCED_CONTRAST, WCAG_AA } from './axe.js';
import { launchBrowser, type LaunchedBrowser } from './browser.js';
import { FakeTerminal, FAKE_QR_SVG, SAMPLE_DCC } from './fake-terminal.js';
import { installWatchers, violationsSeen } from './page-scripts.js';
import {
  outOfReach,
  overflowingButtons,
  sidewaysScroll,
  smallTargets,
  spillingText,
} from './layout-scripts.js';

/**
 * The renderer's accessibility in a real headless Chromium (EN 301 549; WCAG 2.2 AA as the floor): axe-core on every
 * customer screen in normal and in accessibility mode, and a kiosk sale by the keypad alone.
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

/** The kiosk's screen in CSS pixels. */
const KIOSK_VIEWPORT = { width: 800, height: 1280 };

async function start(
  viewport: { width: number; height: number } = KIOSK_VIEWPORT,
): Promise<{ bridge: Bridge; fake: FakeTerminal; page: Page }> {
  const fake = new FakeTerminal();
  const bridge = await startBridge(fake, { port: 0, staticDir });
  open.push({ bridge, fake });
  const context = await launched.browser.newContext({ viewport });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  await page.addInitScript(installWatchers);
  const response = await page.goto(bridge.url);
  expect(response?.status()).toBe(200);
  return { bridge, fake, page };
}

/**
 * Waits for `screen` and for the answer to the last key: the screen may arrive (pushed) before the answer to the event
 * that caused it, and until then the customer area is inert — a key pressed then is not taken, as on the terminal.
 */
async function onScreen(page: Page, screen: string): Promise<void> {
  await page.locator(`[data-testid="customer"][data-screen="${screen}"]`).waitFor();
  await page.locator('[data-testid="customer-slot"]:not([aria-busy])').waitFor();
}

const LANGUAGE: NonNullable<CustomerView['language']> = {
  current: 'en_GB',
  lang: 'en-GB',
  direction: 'ltr',
  available: [
    { locale: 'en_GB', name: 'English', lang: 'en-GB' },
    { locale: 'de_DE', name: 'Deutsch', lang: 'de-DE' },
    { locale: 'ar_AE', name: 'العربية', lang: 'ar-AE' },
  ],
};

const AMOUNT = { minor: 1250, currency: 'EUR', text: '€12.50' };
/** A payment link as the sandbox makes them, for the pay-by-phone screen. */
const PAY_URL = 'http://127.0.0.1:41234/pay/202611241305N0042';
/** An alternative-method sale's payment page as the sandbox makes them, for the alt-pending screen. */
const ALT_URL = 'http://127.0.0.1:41234/ap/7204539021';

const ENTER_TICKET: CustomerView = {
  screen: 'enter-ticket',
  title: 'Your ticket',
  message: 'Enter the number printed on your ticket',
  actions: ['ENTER_TICKET', 'LOST_TICKET', 'CANCEL'],
};

/** Every screen a customer can meet, kiosk and the other models, each with the language button. */
const SCREENS: { name: string; view: CustomerView }[] = [
  { name: 'starting', view: { screen: 'starting', title: 'Starting', message: 'One moment', actions: [] } },
  {
    name: 'recovering',
    view: {
      screen: 'recovering',
      title: 'Please wait',
      message: 'The terminal is getting ready',
      actions: [],
    },
  },
  {
    name: 'idle',
    view: { screen: 'idle', title: 'Welcome', message: 'Pay for your parking here', actions: ['START'] },
  },
  { name: 'enter-ticket', view: ENTER_TICKET },
  {
    name: 'choose-duration',
    view: {
      screen: 'choose-duration',
      title: 'How long will you park?',
      message: 'Choose a duration',
      durations: [
        { minutes: 30, label: '30 min', amount: { minor: 150, currency: 'EUR', text: '€1.50' } },
        { minutes: 60, label: '1 hour', amount: { minor: 300, currency: 'EUR', text: '€3.00' } },
      ],
      actions: ['CHOOSE_DURATION', 'CANCEL'],
    },
  },
  {
    name: 'enter-amount',
    view: {
      screen: 'enter-amount',
      title: 'Amount',
      message: 'Key the amount',
      amount: { minor: 0, currency: 'EUR', text: '€0.00' },
      actions: ['ENTER_AMOUNT', 'CANCEL'],
    },
  },
  {
    name: 'confirm',
    view: {
      screen: 'confirm',
      title: 'Parking fee',
      message: 'Ticket 42007: 2 h 10 min',
      amount: AMOUNT,
      actions: ['CONFIRM', 'CANCEL'],
    },
  },
  {
    name: 'present-card',
    view: {
      screen: 'present-card',
      title: 'Present your card',
      message: 'Insert, tap or swipe',
      amount: AMOUNT,
      actions: ['CANCEL'],
    },
  },
  {
    name: 'choose-currency',
    view: {
      screen: 'choose-currency',
      title: SAMPLE_DCC.title,
      message: '',
      amount: AMOUNT,
      dcc: SAMPLE_DCC,
      maskedPan: '476173******0119',
      actions: ['CHOOSE_CURRENCY', 'CANCEL'],
    },
  },
  {
    name: 'processing',
    view: { screen: 'processing', title: 'Processing', message: 'Please wait', amount: AMOUNT, actions: [] },
  },
  {
    name: 'approved',
    view: {
      screen: 'approved',
      title: 'Approved',
      message: 'Thank you — have a good journey',
      amount: AMOUNT,
      maskedPan: '476173******0119',
      receipt: {
        title: 'Receipt',
        lines: [
          { label: 'Amount', value: AMOUNT.text },
          { label: 'Card', value: '**** 0119' },
        ],
        locale: 'en_GB',
        lang: 'en-GB',
        direction: 'ltr',
        qr: { svg: FAKE_QR_SVG, alt: 'QR code of your receipt link', url: 'https://pay.example/r/abc' },
      },
      actions: ['DONE'],
    },
  },
  {
    name: 'approved, no paper receipt',
    view: {
      screen: 'approved',
      title: 'Approved',
      message: 'Thank you — have a good journey',
      amount: AMOUNT,
      receipt: {
        title: 'City Car Park',
        lines: [
          { label: 'Amount', value: AMOUNT.text },
          { label: 'Card', value: '**** **** **** 0119' },
        ],
        locale: 'en_GB',
        lang: 'en-GB',
        direction: 'ltr',
        notice: 'A paper receipt is not available at the moment. Scan the code for your receipt.',
        qr: { svg: FAKE_QR_SVG, alt: 'QR code holding this receipt' },
      },
      actions: ['DONE'],
    },
  },
  {
    name: 'declined',
    view: {
      screen: 'declined',
      title: 'Declined',
      message: 'Your card was declined. Please try another card.',
      amount: AMOUNT,
      actions: ['DONE'],
    },
  },
  {
    name: 'session',
    view: {
      screen: 'session',
      title: 'Your parking',
      message: 'Extend or end your parking',
      session: { id: 'S-1042', startedAt: '14:05', paidUntil: '15:05', held: AMOUNT },
      durations: [{ minutes: 30, label: '+30 min', amount: { minor: 150, currency: 'EUR', text: '€1.50' } }],
      actions: ['EXTEND', 'END_SESSION'],
    },
  },
  {
    name: 'pay-by-phone',
    view: {
      screen: 'pay-by-phone',
      title: 'Pay by phone',
      message: 'Scan the QR code with your phone and pay on the page that opens.',
      amount: AMOUNT,
      payByPhone: {
        linkId: '202611241305N0042',
        url: PAY_URL,
        notice: 'The payment on your phone was declined. You can try again with another card.',
        domain: 'pay.example.com',
        qr: { ...drawQr(PAY_URL), alt: 'QR code of the payment link' },
        expiresAt: new Date(Date.now() + 300_000).toISOString(),
        seconds: 300,
        purpose: 'fee',
      },
      labels: {
        'payByPhone.url': 'Or open this address on your phone',
        'payByPhone.timeLeft': 'Time left: {time}',
      },
      actions: ['CANCEL'],
    },
  },
  {
    name: 'confirm with alternative methods',
    view: {
      screen: 'confirm',
      title: 'Please confirm',
      message: 'Parking fee for 131 minutes',
      amount: AMOUNT,
      altMethods: [
        { profile: 1, label: 'Bank transfer' },
        { profile: 3, label: 'Online banking' },
      ],
      actions: ['CONFIRM', 'PAY_BY_LINK', 'ALT_METHOD', 'CANCEL'],
    },
  },
  {
    name: 'alt-details',
    view: {
      screen: 'alt-details',
      title: 'Your details',
      message: 'Enter your e-mail address. The receipt is sent there.',
      amount: AMOUNT,
      altField: {
        method: 'Bank transfer',
        field: 'email',
        label: 'Enter your e-mail address. The receipt is sent there.',
        step: 1,
        steps: 3,
        stepText: 'Step 1 of 3',
        problem: 'This is not an e-mail address.',
        inputMode: 'email',
      },
      actions: ['ALT_FIELD', 'CANCEL'],
    },
  },
  {
    name: 'alt-pending',
    view: {
      screen: 'alt-pending',
      title: 'Payment pending',
      message:
        'Payment by Bank transfer pending: scan the code and pay on your phone. The payment is confirmed later; you may leave now.',
      amount: AMOUNT,
      altPending: {
        saleId: 7,
        method: 'Bank transfer',
        url: ALT_URL,
        qr: { ...drawQr(ALT_URL), alt: 'QR code of the payment page' },
        reference: 'Reference: 2026112413050001',
        note: 'The receipt is sent by e-mail once the payment is confirmed.',
      },
      actions: ['DONE'],
    },
  },
  {
    name: 'error',
    view: { screen: 'error', title: 'Sorry', message: 'Something went wrong', actions: ['DONE'] },
  },
  {
    name: 'out-of-service',
    view: {
      screen: 'out-of-service',
      title: 'Out of service',
      message: 'This pay station cannot take cards at the moment. Please use another one.',
      actions: [],
    },
  },
];

/** Shows each screen (and the "more time" question, and the open language list) and collects axe's findings. */
async function auditEveryScreen(
  fake: FakeTerminal,
  page: Page,
  audit: (where: string) => Promise<string[]>,
): Promise<string[]> {
  const failures: string[] = [];
  for (const { name, view } of SCREENS) {
    fake.present({ ...view, language: LANGUAGE });
    await onScreen(page, view.screen);
    failures.push(...(await audit(name)));
  }
  fake.present({ ...ENTER_TICKET, language: LANGUAGE });
  await onScreen(page, 'enter-ticket');
  await page.getByTestId('language-button').press('Enter');
  await page.getByTestId('language-list').waitFor();
  failures.push(...(await audit('enter-ticket, language list open')));
  fake.askMoreTime(60);
  await page.getByTestId('more-time').waitFor();
  failures.push(...(await audit('"Do you need more time?"')));
  return failures;
}

function axeAudit(page: Page, request: { kind: 'tag' | 'rule'; values: string[] }) {
  return (where: string): Promise<string[]> => audit(page, where, request);
}

describe('accessibility of the customer screens (axe-core, WCAG 2.2 AA)', () => {
  it('finds no WCAG 2.0/2.1/2.2 A or AA violation on any customer screen in normal mode', async () => {
    const { fake, page } = await start();
    await onScreen(page, 'idle');
    expect(await page.evaluate(accessibleDocument)).toBe(false);
    const failures = await auditEveryScreen(fake, page, axeAudit(page, { kind: 'tag', values: WCAG_AA }));
    expect(failures.join('\n\n')).toBe('');
    // axe came in through the DevTools protocol (axe.ts): the page's CSP was never bent.
    expect(await page.evaluate(violationsSeen)).toEqual([]);
  });

  it('finds no violation in accessibility mode, and text contrast reaches 7:1 there', async () => {
    const { fake, page } = await start();
    await onScreen(page, 'idle');
    const toggle = page.getByTestId('accessibility-button');
    expect(await toggle.getAttribute('aria-pressed')).toBe('false');
    await toggle.press('Enter');
    await page.locator('[data-testid="accessibility-button"][aria-pressed="true"]').waitFor();
    expect(await page.evaluate(accessibleDocument)).toBe(true);
    expect(fake.events).toContainEqual({ type: 'SET_ACCESSIBILITY', on: true });
    const aa = axeAudit(page, { kind: 'tag', values: WCAG_AA });
    // WCAG 1.4.6 (AAA, contrast 7:1) is the bar for accessibility mode.
    const enhanced = axeAudit(page, { kind: 'rule', values: ENHANCED_CONTRAST });
    const failures = await auditEveryScreen(fake, page, async (where) => {
      expect(await page.evaluate(accessibleDocument)).toBe(true);
      return [...(await aa(where)), ...(await enhanced(where))];
    });
    expect(failures.join('\n\n')).toBe('');
  });
});

/** Touch targets of the customer screens: never under 44 CSS px a side (kiosk.md §2, WCAG 2.5.5). */
const MIN_TARGET = 44;
/** The amount of a screen and the amount being keyed: each must fit the width (`spillingText`). */
const AMOUNTS_SHOWN = ['[data-testid="customer-amount"]', '[data-testid="amount-display"]'];

describe('the customer screens at 200 % zoom (low vision)', () => {
  /** 200 % zoom on the kiosk's 800 px lays the page out in 400 CSS px. */
  const ZOOMED_200 = { width: KIOSK_VIEWPORT.width / 2, height: KIOSK_VIEWPORT.height / 2 };

  it('keeps every screen title and the more-time question of every language on the screen in large text: a long word breaks, nothing scrolls sideways', async () => {
    const { fake, page } = await start(ZOOMED_200);
    await onScreen(page, 'idle');
    const failures: string[] = [];
    for (const { locale, direction } of LOCALES)
      for (const screen of Object.keys(TITLE_KEYS) as Screen[]) {
        const title = CATALOGUES[locale][TITLE_KEYS[screen]];
        const language = { ...LANGUAGE, current: locale, lang: intlLocale(locale), direction };
        // The currency choice takes its title from the offer.
        const dcc = screen === 'choose-currency' ? { dcc: { ...SAMPLE_DCC, title } } : {};
        fake.present({ screen, title, message: '', actions: [], language, accessibility: true, ...dcc });
        await onScreen(page, screen);
        expect(await page.getByTestId('customer-title').textContent()).toBe(title);
        const scroll = await page.evaluate(sidewaysScroll, ['html', '[data-testid="customer-title"]']);
        for (const [selector, px] of Object.entries(scroll))
          if (px > 0) failures.push(`${locale} ${screen} "${title}": ${selector} scrolls ${px} px sideways`);
      }
    // And the question "Do you need more time?" over a screen, in its own larger type.
    for (const { locale, direction } of LOCALES) {
      const question = CATALOGUES[locale]['label.moreTime.title'];
      const language = { ...LANGUAGE, current: locale, lang: intlLocale(locale), direction };
      fake.present({
        ...ENTER_TICKET,
        language,
        labels: { 'moreTime.title': question },
        accessibility: true,
      });
      await onScreen(page, 'enter-ticket');
      fake.askMoreTime(60);
      await page.getByTestId('more-time-title').filter({ hasText: question }).waitFor();
      const scroll = await page.evaluate(sidewaysScroll, ['html', '[data-testid="more-time-title"]']);
      for (const [selector, px] of Object.entries(scroll))
        if (px > 0) failures.push(`${locale} "${question}": ${selector} scrolls ${px} px sideways`);
    }
    expect(failures.join('\n')).toBe('');
  });

  it('brings every part of "Do you need more time?" into view in large text, in every language', async () => {
    const { fake, page } = await start(ZOOMED_200);
    await onScreen(page, 'idle');
    const failures: string[] = [];
    for (const { locale, direction } of LOCALES) {
      const catalogue = CATALOGUES[locale];
      const labels = {
        'moreTime.title': catalogue['label.moreTime.title'],
        'moreTime.yes': catalogue['label.moreTime.yes'],
        'moreTime.no': catalogue['label.moreTime.no'],
        'moreTime.remaining': catalogue['label.moreTime.remaining'],
      };
      const language = { ...LANGUAGE, current: locale, lang: intlLocale(locale), direction };
      fake.present({ ...ENTER_TICKET, language, labels, accessibility: true });
      await onScreen(page, 'enter-ticket');
      fake.askMoreTime(60);
      await page.getByTestId('more-time-title').filter({ hasText: labels['moreTime.title'] }).waitFor();
      const parts = ['more-time-title', 'more-time-countdown', 'more-time-yes', 'more-time-no'];
      for (const where of await page.evaluate(
        outOfReach,
        parts.map((id) => `[data-testid="${id}"]`),
      ))
        failures.push(`${locale}: ${where}`);
    }
    expect(failures.join('\n')).toBe('');
  });

  it('reflows every screen: nothing scrolls sideways, no text leaves its button, no key under 44 px', async () => {
    const { fake, page } = await start(ZOOMED_200);
    await onScreen(page, 'idle');
    const failures: string[] = [];
    for (const accessible of [false, true])
      for (const { name, view } of SCREENS) {
        const where = `${name}${accessible ? ' (accessibility mode)' : ''}`;
        fake.present({ ...view, language: LANGUAGE, accessibility: accessible });
        await onScreen(page, view.screen);
        const scroll = await page.evaluate(sidewaysScroll, ['html', '[data-testid="customer"]']);
        for (const [selector, px] of Object.entries(scroll))
          if (px > 0) failures.push(`${where}: ${selector} scrolls ${px} px sideways`);
        for (const overflow of await page.evaluate(overflowingButtons))
          failures.push(`${where}: text overflows its button: ${overflow}`);
        for (const spill of await page.evaluate(spillingText, AMOUNTS_SHOWN))
          failures.push(`${where}: ${spill}`);
        for (const small of await page.evaluate(smallTargets, MIN_TARGET))
          failures.push(`${where}: target under ${MIN_TARGET} px: ${small}`);
      }
    expect(failures.join('\n')).toBe('');
  });

  it('fits a large amount and the longest keyed amount in the width, large text included: nothing scrolls sideways or leaves the screen', async () => {
    const { fake, page } = await start(ZOOMED_200);
    await onScreen(page, 'idle');
    const failures: string[] = [];
    const german = { ...LANGUAGE, current: 'de_DE', lang: 'de-DE', direction: 'ltr' as const };
    const large = { minor: 125_000, currency: 'EUR', text: '1.250,00 €' };
    const check = async (where: string): Promise<void> => {
      const scroll = await page.evaluate(sidewaysScroll, ['html', '[data-testid="customer"]']);
      for (const [selector, px] of Object.entries(scroll))
        if (px > 0) failures.push(`${where}: ${selector} scrolls ${px} px sideways`);
      for (const spill of await page.evaluate(spillingText, AMOUNTS_SHOWN))
        failures.push(`${where}: ${spill}`);
      for (const small of await page.evaluate(smallTargets, MIN_TARGET))
        failures.push(`${where}: target under ${MIN_TARGET} px: ${small}`);
    };
    for (const accessible of [false, true]) {
      const mode = accessible ? ' (accessibility mode)' : '';
      for (const screen of ['confirm', 'present-card', 'processing'] as const) {
        fake.present({
          screen,
          title: 'Betrag',
          message: '',
          amount: large,
          actions: screen === 'confirm' ? ['CONFIRM', 'CANCEL'] : [],
          language: german,
          accessibility: accessible,
        });
        await onScreen(page, screen);
        await check(`${screen} "${large.text}"${mode}`);
      }
      // The longest amount the keypad takes, typed on the screen keys.
      fake.present({
        screen: 'enter-amount',
        title: 'Betrag',
        message: '',
        amount: { minor: 0, currency: 'EUR', text: '0,00 €' },
        actions: ['ENTER_AMOUNT', 'CANCEL'],
        language: german,
        accessibility: accessible,
      });
      await onScreen(page, 'enter-amount');
      await page.getByTestId('amount-key-clear').click();
      for (const digit of '999999999') await page.getByTestId(`amount-key-${digit}`).click();
      const keyed = (await page.getByTestId('amount-display').textContent()) ?? '';
      expect(keyed.replace(/\D/g, '')).toBe('999999999');
      await check(`enter-amount "${keyed}"${mode}`);
    }
    expect(failures.join('\n')).toBe('');
  });
});

describe('the renderer by keys alone', () => {
  it('walks a kiosk sale from idle to "Approved" with the keypad and Tab, never the mouse', async () => {
    const { fake, page } = await start();
    await onScreen(page, 'idle');
    // Tab order on the attract screen: the main action, then the accessibility button; focus is visible.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(focusedTestId)).toBe('action-START');
    expect(await page.evaluate(focusOutline)).toMatch(/^solid ([4-9]|\d\d)/);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(focusedTestId)).toBe('accessibility-button');
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Enter');
    await onScreen(page, 'enter-ticket');
    // The new screen is announced.
    await expect
      .poll(() => page.getByTestId('screen-announcer').textContent())
      .toBe('Your ticket. Enter the number printed on your ticket');

    // Keypad digits type into the ticket field; Backspace takes the last one back.
    for (const key of ['4', '2', '0', '0', '9', 'Backspace', '7']) await page.keyboard.press(key);
    expect(await page.getByTestId('ticket-input').inputValue()).toBe('42007');
    // Enter = the screen's main action (continue).
    await page.keyboard.press('Enter');
    await onScreen(page, 'confirm');
    expect(fake.events).toContainEqual({ type: 'ENTER_TICKET', ticket: '42007' });
    await page.keyboard.press('Enter');
    await onScreen(page, 'approved');
    expect(await page.getByTestId('customer-title').textContent()).toBe('Approved');
    expect(fake.events.map((e) => e.type)).toEqual(['START', 'ENTER_TICKET', 'CONFIRM']);

    // Done, by Enter again; then Escape cancels a started sale.
    await page.keyboard.press('Enter');
    await onScreen(page, 'idle');
    await page.keyboard.press('Enter');
    await onScreen(page, 'enter-ticket');
    await page.keyboard.press('Escape');
    await onScreen(page, 'idle');
    expect(fake.events.map((e) => e.type).slice(-3)).toEqual(['DONE', 'START', 'CANCEL']);
  });

  it('moves between the choices with the tactile keypad’s 4 and 6 (it has no Tab) and chooses with Enter', async () => {
    const { fake, page } = await start();
    await onScreen(page, 'idle');
    // The attract screen: 6 reaches the main action, then the accessibility button; 4 goes back.
    await page.keyboard.press('6');
    expect(await page.evaluate(focusedTestId)).toBe('action-START');
    await page.keyboard.press('6');
    expect(await page.evaluate(focusedTestId)).toBe('accessibility-button');
    await page.keyboard.press('4');
    expect(await page.evaluate(focusedTestId)).toBe('action-START');

    const durations = SCREENS.find((s) => s.name === 'choose-duration')?.view;
    if (!durations) throw new Error('no duration screen');
    fake.present({ ...durations, language: LANGUAGE });
    await onScreen(page, 'choose-duration');
    // Nothing is chosen by moving: focus only, and the choice is the customer's Enter (gateway.md §5).
    await page.keyboard.press('6');
    expect(await page.evaluate(focusedTestId)).toBe('duration-30');
    await page.keyboard.press('6');
    expect(await page.evaluate(focusedTestId)).toBe('duration-60');
    expect(fake.events).toEqual([]);
    await page.keyboard.press('Enter');
    await expect.poll(() => fake.events).toEqual([{ type: 'CHOOSE_DURATION', minutes: 60 }]);

    fake.present({
      screen: 'choose-currency',
      title: SAMPLE_DCC.title,
      message: '',
      amount: AMOUNT,
      dcc: SAMPLE_DCC,
      actions: ['CHOOSE_CURRENCY', 'CANCEL'],
      language: LANGUAGE,
    });
    await onScreen(page, 'choose-currency');
    // From the end of the screen, 6 goes round to its top.
    await page.getByTestId('accessibility-button').focus();
    await page.keyboard.press('6');
    expect(await page.evaluate(focusedTestId)).toBe('dcc-option-EUR');
    await page.keyboard.press('6');
    expect(await page.evaluate(focusedTestId)).toBe('dcc-option-GBP');
    await page.keyboard.press('Enter');
    await expect.poll(() => fake.events.at(-1)).toEqual({ type: 'CHOOSE_CURRENCY', currency: 'GBP' });
  });

  it('leaves the ticket field with Clear ← when it is empty: 4 and 6 then reach "Lost ticket" and the language list, another digit types again', async () => {
    const { fake, page } = await start();
    await onScreen(page, 'idle');
    fake.present({ ...ENTER_TICKET, language: LANGUAGE });
    await onScreen(page, 'enter-ticket');
    const ticket = page.getByTestId('ticket-input');
    // A digit typed and taken back: Clear ← only deletes while the field has something in it.
    await page.keyboard.press('4');
    await page.keyboard.press('Backspace');
    expect(await ticket.inputValue()).toBe('');
    expect(await page.evaluate(focusedTestId)).toBeNull();
    // Clear ← on the empty field leaves it, to the control after it; the screen keypad's own keys are not in the way.
    await page.keyboard.press('Backspace');
    expect(await page.evaluate(focusedTestId)).toBe('action-ENTER_TICKET');
    await page.keyboard.press('6');
    expect(await page.evaluate(focusedTestId)).toBe('action-LOST_TICKET');
    await page.keyboard.press('6');
    await page.keyboard.press('6');
    expect(await page.evaluate(focusedTestId)).toBe('language-button');
    await page.keyboard.press('4');
    await page.keyboard.press('4');
    expect(await page.evaluate(focusedTestId)).toBe('action-LOST_TICKET');
    expect(await ticket.inputValue()).toBe('');
    expect(fake.events).toEqual([]);
    // Any other digit goes back into the field, and 4 and 6 type again.
    for (const key of ['5', '4', '6']) await page.keyboard.press(key);
    expect(await ticket.inputValue()).toBe('546');
    expect(await page.evaluate(focusedTestId)).toBe('ticket-input');
    for (let i = 0; i < 4; i += 1) await page.keyboard.press('Backspace');
    expect(await ticket.inputValue()).toBe('');
    await page.keyboard.press('6');
    expect(await page.evaluate(focusedTestId)).toBe('action-LOST_TICKET');
    await page.keyboard.press('Enter');
    await expect.poll(() => fake.events).toEqual([{ type: 'LOST_TICKET' }]);
  });

  it('leaves the amount field with Clear ← only while nothing is keyed, and types again on the way back', async () => {
    const { fake, page } = await start();
    await onScreen(page, 'idle');
    const amount = SCREENS.find((s) => s.name === 'enter-amount')?.view;
    if (!amount) throw new Error('no amount screen');
    fake.present({ ...amount, language: LANGUAGE });
    await onScreen(page, 'enter-amount');
    const display = page.getByTestId('amount-display');
    const shown = await display.textContent();
    await page.keyboard.press('4');
    // Something keyed: Clear ← deletes it, and only then leaves.
    await page.keyboard.press('Backspace');
    expect(await display.textContent()).toBe(shown);
    expect(await page.evaluate(focusedTestId)).toBeNull();
    await page.keyboard.press('Backspace');
    expect(await page.evaluate(focusedTestId)).toBe('action-ENTER_AMOUNT');
    await page.keyboard.press('6');
    await page.keyboard.press('6');
    expect(await page.evaluate(focusedTestId)).toBe('language-button');
    await page.keyboard.press('1');
    await page.keyboard.press('6');
    expect(await page.evaluate(focusedTestId)).toBeNull();
    expect(await display.textContent()).not.toBe(shown);
    expect(fake.events).toEqual([]);
  });

  it('reaches the letters of the details keyboard from the tactile keypad: Clear ← on the empty field, then 4, 6 and Enter', async () => {
    const { fake, page } = await start();
    await onScreen(page, 'idle');
    const details = SCREENS.find((s) => s.name === 'alt-details')?.view;
    if (!details) throw new Error('no details screen');
    fake.present(details);
    await onScreen(page, 'alt-details');
    const field = page.getByTestId('alt-input');
    await page.keyboard.press('Backspace');
    expect(await page.evaluate(focusedTestId)).toBe('alt-key-1');
    // 1 … 0, then the letters: q w.
    for (let i = 0; i < 11; i += 1) await page.keyboard.press('6');
    expect(await page.evaluate(focusedTestId)).toBe('alt-key-w');
    await page.keyboard.press('Enter');
    await page.keyboard.press('4');
    await page.keyboard.press('Enter');
    expect(await field.inputValue()).toBe('wq');
    // A digit goes back into the field and types there; Enter is Next.
    await page.keyboard.press('7');
    expect(await field.inputValue()).toBe('wq7');
    expect(await page.evaluate(focusedTestId)).toBe('alt-input');
    await page.keyboard.press('Enter');
    await expect.poll(() => fake.events).toEqual([{ type: 'ALT_FIELD', value: 'wq7' }]);
  });

  it('closes the open language list with Escape and returns focus to the Language button, without cancelling', async () => {
    const { fake, page } = await start();
    await onScreen(page, 'idle');
    fake.present({ ...ENTER_TICKET, language: LANGUAGE });
    await onScreen(page, 'enter-ticket');
    await page.getByTestId('language-button').focus();
    await page.keyboard.press('Enter');
    const list = page.getByTestId('language-list');
    await list.waitFor();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(focusedTestId)).toMatch(/^language-[a-z]{2}_[A-Z]{2}$/);
    const before = fake.events.length;
    // Cancel ✕ with the list open: the list closes, the sale goes on.
    await page.keyboard.press('Escape');
    await list.waitFor({ state: 'hidden' });
    expect(await page.evaluate(focusedTestId)).toBe('language-button');
    expect(await page.getByTestId('language-button').getAttribute('aria-expanded')).toBe('false');
    expect(fake.events.slice(before)).toEqual([]);
    expect(await page.getByTestId('customer').getAttribute('data-screen')).toBe('enter-ticket');
    // With the list closed, Cancel ✕ cancels as on any screen.
    await page.keyboard.press('Escape');
    await expect.poll(() => fake.events.slice(before).map((e) => e.type)).toEqual(['CANCEL']);
  });

  it('announces a new message on the same screen (a ticket not found), not only a new screen', async () => {
    const { fake, page } = await start();
    await onScreen(page, 'idle');
    fake.present({ ...ENTER_TICKET, language: LANGUAGE });
    await onScreen(page, 'enter-ticket');
    const announcer = page.getByTestId('screen-announcer');
    await expect
      .poll(() => announcer.textContent())
      .toBe('Your ticket. Enter the number printed on your ticket');
    // The terminal looked the ticket up and is back on the same screen, with the reason in its message.
    const unknown = CATALOGUES.en_GB['kiosk.ticketUnknown'];
    fake.present({ ...ENTER_TICKET, message: unknown, language: LANGUAGE });
    await page.getByTestId('customer-message').filter({ hasText: unknown }).waitFor();
    await expect.poll(() => announcer.textContent()).toBe(`Your ticket. ${unknown}`);
  });

  it('types into the focused ticket field and submits it with Enter', async () => {
    const { fake, page } = await start();
    await onScreen(page, 'idle');
    await page.keyboard.press('Enter');
    await onScreen(page, 'enter-ticket');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(focusedTestId)).toBe('ticket-input');
    await page.keyboard.type('AB123');
    await page.keyboard.press('Enter');
    await onScreen(page, 'confirm');
    expect(fake.events).toContainEqual({ type: 'ENTER_TICKET', ticket: 'AB123' });
  });

  it('asks "Do you need more time?" as a modal dialog with focus on Yes, and gives focus back after', async () => {
    const { fake, page } = await start();
    await onScreen(page, 'idle');
    await page.keyboard.press('Enter');
    await onScreen(page, 'enter-ticket');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(focusedTestId)).toBe('ticket-input');
    fake.askMoreTime(40);
    const dialog = page.getByTestId('more-time');
    await dialog.waitFor();
    expect(await dialog.getAttribute('role')).toBe('alertdialog');
    expect(await dialog.getAttribute('aria-modal')).toBe('true');
    expect(await page.getByRole('alertdialog', { name: 'Do you need more time?' }).count()).toBe(1);
    await expect.poll(() => page.evaluate(focusedTestId)).toBe('more-time-yes');
    expect(await page.getByTestId('more-time-countdown').getAttribute('role')).toBe('timer');
    expect(await page.getByTestId('more-time-countdown').textContent()).toMatch(/^Time left: \d+ seconds$/);
    expect(await page.getByTestId('more-time-live').getAttribute('aria-live')).toBe('polite');
    // The screen behind is out of reach; Tab goes round Yes and No.
    expect(await page.getByTestId('customer').getAttribute('inert')).toBe('');
    // Asked once: no second "Yes" among the screen's own buttons.
    expect(await page.getByTestId('action-MORE_TIME').count()).toBe(0);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(focusedTestId)).toBe('more-time-no');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(focusedTestId)).toBe('more-time-yes');
    // Digits do not reach the field behind the question.
    await page.keyboard.press('3');
    expect(await page.getByTestId('ticket-input').inputValue()).toBe('');
    await page.keyboard.press('Enter');
    await dialog.waitFor({ state: 'detached' });
    expect(fake.events.at(-1)).toEqual({ type: 'MORE_TIME' });
    await expect.poll(() => page.evaluate(focusedTestId)).toBe('ticket-input');

    // Asked again, Escape answers No: the sale is cancelled.
    fake.askMoreTime(40);
    await dialog.waitFor();
    await page.keyboard.press('Escape');
    await onScreen(page, 'idle');
    expect(fake.events.at(-1)).toEqual({ type: 'CANCEL' });
  });

  it('tells the terminal that the customer is typing on the keypad, never what', async () => {
    const { fake, page } = await start();
    await onScreen(page, 'idle');
    await page.keyboard.press('Enter');
    await onScreen(page, 'enter-ticket');
    expect(fake.activity).toBe(0);
    // Three digits in a breath: one ACTIVITY (at most one every five seconds), and the ticket stays on the page.
    for (const key of ['4', '2', '7']) await page.keyboard.press(key);
    await expect.poll(() => fake.activity).toBe(1);
    expect(await page.getByTestId('ticket-input').inputValue()).toBe('427');
    expect(fake.events).toEqual([{ type: 'START' }]);
    // Continue right after is not held back by it.
    await page.keyboard.press('Enter');
    await onScreen(page, 'confirm');
    expect(fake.events).toEqual([{ type: 'START' }, { type: 'ENTER_TICKET', ticket: '427' }]);
    expect(fake.activity).toBe(1);
  });

  it('switches accessibility mode from the keyboard and keeps focus on the button', async () => {
    const { fake, page } = await start();
    await onScreen(page, 'idle');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(focusedTestId)).toBe('accessibility-button');
    await page.keyboard.press('Space');
    await page.locator('[data-testid="accessibility-button"][aria-pressed="true"]').waitFor();
    expect(await page.evaluate(accessibleDocument)).toBe(true);
    expect(await page.evaluate(focusedTestId)).toBe('accessibility-button');
    expect(await page.evaluate(focusOutline)).toMatch(/^solid ([6-9]|\d\d)/);
    await page.keyboard.press('Space');
    await page.locator('[data-testid="accessibility-button"][aria-pressed="false"]').waitFor();
    expect(await page.evaluate(accessibleDocument)).toBe(false);
    expect(fake.events).toEqual([
      { type: 'SET_ACCESSIBILITY', on: true },
      { type: 'SET_ACCESSIBILITY', on: false },
    ]);
  });
});
