import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { parseConfig } from '../../src/config/index.js';
import type { CustomerView, DccChoice, TerminalSnapshot } from '../../src/host/api.js';
import { buildRenderer } from '../../src/host/bridge/build-renderer.js';
import { startBridge, type Bridge } from '../../src/host/bridge/server.js';
import { createTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { silentLogger } from '../../src/log/index.js';
import { formatMoney } from '../../src/money/index.js';
import { launchBrowser, type LaunchedBrowser } from './browser.js';
import { FakeTerminal, SAMPLE_DCC } from './fake-terminal.js';
import { overflowingButtons, sidewaysScroll } from './layout-scripts.js';

/**
 * The currency choice screen against the card networks' presentation rules (reference/gateway.md §5,
 * reference/kiosk.md §1), one test per rule, measured on the page a real headless Chromium renders: computed styles,
 * boxes and the DOM, in normal and in accessibility mode (large text) wherever layout matters.
 */

let staticDir: string;
let launched: LaunchedBrowser;
const open: { bridge: Bridge; fake: FakeTerminal; close: () => Promise<void> }[] = [];

beforeAll(async () => {
  staticDir = await buildRenderer();
  launched = await launchBrowser();
});

afterAll(async () => {
  await launched?.close();
});

afterEach(async () => {
  for (const { bridge, fake, close } of open.splice(0)) {
    await close();
    fake.dispose();
    await bridge.close();
  }
});

const CHOICE: CustomerView = {
  screen: 'choose-currency',
  title: SAMPLE_DCC.title,
  message: '',
  amount: SAMPLE_DCC.local,
  dcc: SAMPLE_DCC,
  maskedPan: '476173******0119',
  actions: ['CHOOSE_CURRENCY', 'CANCEL'],
};

type Mode = 'normal' | 'accessibility';
const MODES: Mode[] = ['normal', 'accessibility'];

/** The kiosk's screen in CSS pixels; at 200 % zoom the page lays out in half of it. */
const KIOSK_VIEWPORT = { width: 800, height: 1280 };
const ZOOMED_200 = { width: KIOSK_VIEWPORT.width / 2, height: KIOSK_VIEWPORT.height / 2 };

/** Opens the renderer on the choice screen (`view`), in accessibility mode when asked. */
async function choiceScreen(
  mode: Mode,
  view: CustomerView = CHOICE,
  viewport: { width: number; height: number } = KIOSK_VIEWPORT,
): Promise<Page> {
  const fake = new FakeTerminal();
  const bridge = await startBridge(fake, { port: 0, staticDir });
  const context = await launched.browser.newContext({ viewport });
  open.push({ bridge, fake, close: () => context.close() });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  expect((await page.goto(bridge.url))?.status()).toBe(200);
  await page.locator('[data-testid="customer"][data-screen="idle"]').waitFor();
  fake.present(mode === 'accessibility' ? { ...view, accessibility: true } : view);
  await page.locator('[data-testid="customer"][data-screen="choose-currency"]').waitFor();
  if (mode === 'accessibility') await page.locator('html.accessible').waitFor();
  return page;
}

// --- Measured in the page (the root tsconfig has no DOM library: the few DOM shapes used are declared here) ---

interface PageStyle {
  color: string;
  backgroundColor: string;
  borderTopColor: string;
  borderTopWidth: string;
  borderTopStyle: string;
  outlineStyle: string;
  outlineWidth: string;
  outlineColor: string;
  boxShadow: string;
  opacity: string;
  fontSize: string;
  fontWeight: string;
  textDecorationLine: string;
}

interface PageRect {
  left: number;
  right: number;
  top: number;
  bottom: number;
  width: number;
  height: number;
}

interface PageElement {
  readonly textContent: string | null;
  readonly innerText: string;
  readonly tagName: string;
  readonly nextElementSibling: PageElement | null;
  getAttribute(name: string): string | null;
  hasAttribute(name: string): boolean;
  getAttributeNames(): string[];
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): ArrayLike<PageElement>;
  getBoundingClientRect(): PageRect;
  matches(selector: string): boolean;
}

declare const document: {
  readonly activeElement: PageElement | null;
  querySelector(selector: string): PageElement | null;
};
declare function getComputedStyle(el: PageElement): PageStyle;

interface Measured {
  testId: string;
  text: string;
  /** Every attribute that could mark a choice as made or preferred, with its value. */
  marks: Record<string, string | null>;
  style: PageStyle;
  rect: PageRect;
  amount: { text: string; style: PageStyle };
  currency: { text: string; style: PageStyle };
}

interface DccScreen {
  title: string;
  options: Measured[];
  /** Accessible names of every button of the customer area. */
  buttons: string[];
  focused: string | null;
  rate: { text: string; rect: PageRect; next: string | null } | null;
  markup: { text: string; rect: PageRect } | null;
  disclaimer: { textContent: string; innerText: string } | null;
  text: string;
}

/** Runs in the page: everything the rules are checked against. */
function measureDccScreen(): DccScreen {
  const q = (selector: string): PageElement | null => document.querySelector(selector);
  const style = (el: PageElement): PageStyle => {
    const s = getComputedStyle(el);
    return {
      color: s.color,
      backgroundColor: s.backgroundColor,
      borderTopColor: s.borderTopColor,
      borderTopWidth: s.borderTopWidth,
      borderTopStyle: s.borderTopStyle,
      outlineStyle: s.outlineStyle,
      outlineWidth: s.outlineWidth,
      outlineColor: s.outlineColor,
      boxShadow: s.boxShadow,
      opacity: s.opacity,
      fontSize: s.fontSize,
      fontWeight: s.fontWeight,
      textDecorationLine: s.textDecorationLine,
    };
  };
  const rect = (el: PageElement): PageRect => {
    const r = el.getBoundingClientRect();
    return { left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width, height: r.height };
  };
  const customer = q('[data-testid="customer"]');
  const options = Array.from(customer?.querySelectorAll('.dcc-option') ?? []).map((el): Measured => {
    const marks: Record<string, string | null> = {};
    for (const name of el.getAttributeNames())
      if (/^(aria-|autofocus|checked|selected|data-selected|data-default)/.test(name))
        marks[name] = el.getAttribute(name);
    const amount = el.querySelector('.dcc-amount');
    const currency = el.querySelector('.dcc-currency');
    return {
      testId: el.getAttribute('data-testid') ?? '',
      text: el.innerText,
      marks,
      style: style(el),
      rect: rect(el),
      amount: { text: amount?.textContent ?? '', style: amount ? style(amount) : style(el) },
      currency: { text: currency?.textContent ?? '', style: currency ? style(currency) : style(el) },
    };
  });
  const rateEl = q('[data-testid="dcc-rate"]');
  const markupEl = q('[data-testid="dcc-markup"]');
  const disclaimerEl = q('[data-testid="dcc-disclaimer"]');
  return {
    title: q('[data-testid="customer-title"]')?.textContent ?? '',
    options,
    buttons: Array.from(customer?.querySelectorAll('button') ?? []).map(
      (b) => b.getAttribute('aria-label') ?? b.innerText,
    ),
    focused: document.activeElement?.getAttribute('data-testid') ?? null,
    rate: rateEl
      ? {
          text: rateEl.textContent ?? '',
          rect: rect(rateEl),
          next: rateEl.nextElementSibling?.getAttribute('data-testid') ?? null,
        }
      : null,
    markup: markupEl ? { text: markupEl.textContent ?? '', rect: rect(markupEl) } : null,
    disclaimer: disclaimerEl
      ? { textContent: disclaimerEl.textContent ?? '', innerText: disclaimerEl.innerText }
      : null,
    text: customer?.innerText ?? '',
  };
}

async function measure(page: Page): Promise<DccScreen> {
  return page.evaluate(measureDccScreen);
}

/** Hue (degrees) and saturation (0–1) of a computed `rgb(...)`/`rgba(...)` colour; null when fully transparent. */
function hueOf(css: string): { hue: number; saturation: number } | null {
  const m = /rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\)/.exec(css);
  if (m === null) throw new Error(`not an rgb colour: ${css}`);
  if (m[4] !== undefined && Number(m[4]) === 0) return null;
  const [r, g, b] = [m[1], m[2], m[3]].map((v) => Number(v) / 255) as [number, number, number];
  const max = Math.max(r, g, b);
  const min = Math.min(r, g, b);
  const d = max - min;
  const lightness = (max + min) / 2;
  const saturation = d === 0 ? 0 : d / (1 - Math.abs(2 * lightness - 1));
  let hue = 0;
  if (d !== 0) {
    if (max === r) hue = 60 * (((g - b) / d) % 6);
    else if (max === g) hue = 60 * ((b - r) / d + 2);
    else hue = 60 * ((r - g) / d + 4);
  }
  return { hue: (hue + 360) % 360, saturation };
}

/** A colour a customer would read as red or green (a signal of "stop"/"go"): a saturated hue in either band. */
function redOrGreen(css: string): boolean {
  const h = hueOf(css);
  if (h === null || h.saturation < 0.25) return false;
  return h.hue < 20 || h.hue > 340 || (h.hue >= 75 && h.hue <= 165);
}

const CATALOGUE_DIR = join(import.meta.dirname, '../../src/i18n/catalogues');
const catalogues: { locale: string; messages: Record<string, string> }[] = readdirSync(CATALOGUE_DIR)
  .filter((f) => f.endsWith('.json'))
  .map((f) => ({
    locale: f.replace(/\.json$/, ''),
    messages: JSON.parse(readFileSync(join(CATALOGUE_DIR, f), 'utf8')) as Record<string, string>,
  }));

/** The catalogue strings a customer can read on the currency choice screen, the one at completion included. */
const CHOICE_SCREEN_KEYS = [
  'screen.chooseCurrency.title',
  'dcc.markup',
  'label.action.CANCEL',
  'meter.chooseFeeCurrency',
];

/**
 * Words that present one option as the better one, in the nine shipped languages: save, recommended, best, better,
 * cheaper, advantage, preferred, guaranteed.
 */
const PROMOTING =
  /\b(save|saving|recommend\w*|best|better|cheap\w*|advantage\w*|prefer\w*|guarantee\w*|bargain|deal)\b|spar|empfohl|empfehl|beste|besser|günstig|vorteil|économ|recommand|meilleur|avantag|moins cher|ahorr|recomend|mejor|ventaj|barat|rispar|consigli|miglior|vantagg|conveni|bespaar|aanbevol|aanrad|voordel|goedkop|oszczęd|poleca|najlep|lepsz|korzystn|tańsz|وفر|توفير|موصى|أفضل|أرخص|ميزة/iu;

describe('the currency choice screen follows the card networks presentation rules (gateway.md §5)', () => {
  it('rule 1: no yes/no, accept/decline or continue/cancel pair — the two options are the two currencies', async () => {
    for (const mode of MODES) {
      const screen = await measure(await choiceScreen(mode));
      expect(screen.options.map((o) => o.testId)).toEqual(['dcc-option-EUR', 'dcc-option-GBP']);
      for (const [option, amount] of [
        [screen.options[0], SAMPLE_DCC.local],
        [screen.options[1], SAMPLE_DCC.card],
      ] as const) {
        // Each option is labelled by its amount and its currency, nothing else.
        expect(option?.amount.text).toBe(amount.text);
        expect(option?.currency.text).toBe(amount.currency);
        expect(option?.text.replace(/\s+/g, '')).toBe(`${amount.text}${amount.currency}`);
      }
      // The only other button abandons the whole payment; no answer word offers or refuses conversion.
      const others = screen.buttons.filter(
        (name) => !screen.options.some((o) => o.text.replace(/\s+/g, '') === name.replace(/\s+/g, '')),
      );
      expect(others).toEqual(['Cancel']);
      for (const name of screen.buttons)
        expect(name).not.toMatch(/^\s*(yes|no|ok|accept|decline|continue|confirm|agree|proceed|skip)\b/i);
    }
  });

  it('rule 2: no red or green — both options have identical colours, neither red- nor green-hued', async () => {
    for (const mode of MODES) {
      const [local, card] = (await measure(await choiceScreen(mode))).options;
      expect(local).toBeDefined();
      for (const part of ['style', 'amount', 'currency'] as const) {
        const a = part === 'style' ? local!.style : local![part].style;
        const b = part === 'style' ? card!.style : card![part].style;
        expect({ color: b.color, background: b.backgroundColor, border: b.borderTopColor }).toEqual({
          color: a.color,
          background: a.backgroundColor,
          border: a.borderTopColor,
        });
        for (const colour of [a.color, a.backgroundColor, a.borderTopColor])
          expect(redOrGreen(colour), `${mode} ${part} ${colour}`).toBe(false);
      }
    }
  });

  it('rule 3: nothing pre-selected or highlighted — no mark, no focus, identical styles, an identical focus ring', async () => {
    for (const mode of MODES) {
      const page = await choiceScreen(mode);
      const screen = await measure(page);
      const [local, card] = screen.options;
      // No state attribute marks either option (aria-pressed/checked/selected/current, autofocus …).
      expect(local!.marks).toEqual({});
      expect(card!.marks).toEqual({});
      // Focus starts on neither: a new screen focuses nothing.
      expect(screen.focused === 'dcc-option-EUR' || screen.focused === 'dcc-option-GBP').toBe(false);
      expect(card!.style).toEqual(local!.style);
      expect([card!.rect.width, card!.rect.height]).toEqual([local!.rect.width, local!.rect.height]);
      // A keyboard customer reaches both in turn, and each shows the same focus ring when it has focus.
      const ringOf = async (testId: string): Promise<PageStyle> => {
        for (let i = 0; i < 10; i += 1) {
          await page.keyboard.press('Tab');
          const now = await measure(page);
          if (now.focused === testId) {
            const option = now.options.find((o) => o.testId === testId);
            return option!.style;
          }
        }
        throw new Error(`${testId} never took focus from the keyboard`);
      };
      const localRing = await ringOf('dcc-option-EUR');
      const cardRing = await ringOf('dcc-option-GBP');
      expect(localRing.outlineStyle).not.toBe('none');
      expect(cardRing).toEqual(localRing);
    }
  });

  it('rule 4: conversion is never presented as the better choice — in any of the nine languages', async () => {
    expect(catalogues.map((c) => c.locale).sort()).toHaveLength(9);
    for (const { locale, messages } of catalogues)
      for (const key of CHOICE_SCREEN_KEYS) {
        const text = messages[key];
        expect(text, `${locale} ${key}`).toBeDefined();
        expect(text, `${locale} ${key}`).not.toMatch(PROMOTING);
      }
    for (const mode of MODES) {
      const screen = await measure(await choiceScreen(mode));
      expect(screen.text.replace(SAMPLE_DCC.disclaimer, '')).not.toMatch(PROMOTING);
    }
  });

  it('rule 5: both amounts with their currencies in the same text size and weight', async () => {
    for (const mode of MODES) {
      const [local, card] = (await measure(await choiceScreen(mode))).options;
      const sizes = [local!.amount, local!.currency, card!.amount, card!.currency].map((p) => ({
        size: p.style.fontSize,
        weight: p.style.fontWeight,
      }));
      expect(new Set(sizes.map((s) => JSON.stringify(s))).size, `${mode}: ${JSON.stringify(sizes)}`).toBe(1);
      expect(parseFloat(sizes[0]!.size)).toBeGreaterThanOrEqual(mode === 'accessibility' ? 40 : 24);
    }
  });

  it('rule 5 at 200 % zoom: each amount with its currency stays inside its option, both options alike, nothing scrolls sideways', async () => {
    // Amounts as long as real ones get: a four-figure euro fee in German, a six-figure yen conversion.
    const dcc: DccChoice = {
      ...SAMPLE_DCC,
      local: { minor: 125000, currency: 'EUR', text: formatMoney(125000, 'EUR', 'de-DE') },
      card: { minor: 208774, currency: 'JPY', text: formatMoney(208774, 'JPY', 'de-DE') },
    };
    for (const mode of MODES) {
      const page = await choiceScreen(mode, { ...CHOICE, amount: dcc.local, dcc }, ZOOMED_200);
      expect(await page.evaluate(overflowingButtons), mode).toEqual([]);
      expect(await page.evaluate(sidewaysScroll, ['html', '[data-testid="customer"]']), mode).toEqual({
        html: 0,
        '[data-testid="customer"]': 0,
      });
      const [local, card] = (await measure(page)).options;
      expect(local!.rect.width, mode).toBeCloseTo(card!.rect.width, 0);
      expect(local!.rect.height, mode).toBeCloseTo(card!.rect.height, 0);
    }
  });

  it('rule 6: the exchange rate with the markup directly under it', async () => {
    for (const mode of MODES) {
      const screen = await measure(await choiceScreen(mode));
      expect(screen.rate?.text).toBe(SAMPLE_DCC.rate);
      expect(screen.markup?.text).toBe(SAMPLE_DCC.markup);
      const rate = screen.rate!.rect;
      const markup = screen.markup!.rect;
      // Nothing between them in the document, and on screen the markup starts where the rate ends, in its column.
      expect(screen.rate!.next).toBe('dcc-markup');
      expect(markup.top).toBeGreaterThanOrEqual(rate.bottom - 0.5);
      expect(markup.top - rate.bottom).toBeLessThanOrEqual(8);
      expect(Math.abs(markup.left - rate.left)).toBeLessThanOrEqual(1);
      expect(markup.height).toBeGreaterThan(0);
    }
  });

  it('rule 7: a neutral title, "Select currency", in every language', async () => {
    const english = catalogues.find((c) => c.locale === 'en_GB')!.messages['screen.chooseCurrency.title'];
    expect(english).toBe('Select currency');
    for (const { locale, messages } of catalogues) {
      const title = messages['screen.chooseCurrency.title'] ?? '';
      expect(title.length, locale).toBeGreaterThan(0);
      expect(title, locale).not.toMatch(PROMOTING);
    }
    for (const mode of MODES) {
      expect((await measure(await choiceScreen(mode))).title).toBe('Select currency');
      // A view that brings no title of its own still gets the neutral one, never the previous screen's.
      const untitled = await measure(
        await choiceScreen(mode, { ...CHOICE, title: 'Parking fee', dcc: { ...SAMPLE_DCC, title: '' } }),
      );
      expect(untitled.title).toBe('Select currency');
    }
  });

  it("rule 8: the gateway's disclaimer exactly as sent, spacing and line breaks included", async () => {
    for (const mode of MODES) {
      const screen = await measure(await choiceScreen(mode));
      expect(screen.disclaimer?.textContent).toBe(SAMPLE_DCC.disclaimer);
      // What the customer reads keeps the gateway's spacing and line break (white-space: pre-wrap).
      expect(screen.disclaimer?.innerText).toBe(SAMPLE_DCC.disclaimer);
    }
  });

  it('rule 9: a choice that cannot be shown completely offers the local currency alone', async () => {
    const incomplete: [string, DccChoice][] = [
      ['no markup', { ...SAMPLE_DCC, markup: '' }],
      ['no rate', { ...SAMPLE_DCC, rate: ' ' }],
      ['no disclaimer', { ...SAMPLE_DCC, disclaimer: '' }],
      ['no card amount', { ...SAMPLE_DCC, card: { ...SAMPLE_DCC.card, text: '' } }],
      ['the same currency twice', { ...SAMPLE_DCC, card: { ...SAMPLE_DCC.card, currency: 'EUR' } }],
    ];
    for (const [what, dcc] of incomplete) {
      const screen = await measure(await choiceScreen('normal', { ...CHOICE, dcc }));
      expect(
        screen.options.map((o) => o.testId),
        what,
      ).toEqual(['dcc-option-EUR']);
      expect(screen.rate, what).toBeNull();
      expect(screen.disclaimer, what).toBeNull();
    }
  });

  it('rule 9: a terminal with no choice screen (a tap-and-go gate) never asks for an offer', async () => {
    // The host knows from the configured model: meter, kiosk and attended have the choose-currency screen, a gate
    // has none (src/host/dcc.ts, terminalCanPresentDcc). The simulator's N2 card is billed in JPY and the terminal
    // prices in EUR, so a terminal with the screen gets an offer for the same card.
    const asked = async (model: 'tap-and-go' | 'meter'): Promise<{ offers: number; screen: string }> => {
      const host = await createTerminalHost(
        parseConfig({
          terminal: {
            model,
            currency: 'EUR',
            country: 'DE',
            countryNumeric: '276',
            timezone: 'Europe/Berlin',
          },
          reader: { sim: { card: 'n2-contact', presentDelayMs: 20 } },
        }),
        { logger: silentLogger(), cwd: mkdtempSync(join(tmpdir(), 'pt-dcc-rule9-')) },
      );
      try {
        await until(host, ['idle']);
        if (model === 'tap-and-go') await sendOk(host, { type: 'TAP_ENTRY' });
        else {
          await sendOk(host, { type: 'START' });
          await sendOk(host, { type: 'CHOOSE_DURATION', minutes: 60 });
          await sendOk(host, { type: 'CONFIRM' });
        }
        const reached = await until(host, ['session', 'choose-currency', 'approved', 'declined', 'error']);
        if (reached.customer.screen === 'choose-currency') await sendOk(host, { type: 'CANCEL' });
        await until(host, ['idle', 'session', 'approved']);
        if (model === 'tap-and-go') {
          const auth = host.sandbox!.ledger().transactions.find((t) => t.kind === 'authorization');
          // The gate's hold is in the local currency with no conversion fields at all.
          expect(auth).toMatchObject({ currency: 'EUR' });
          expect(JSON.stringify(auth!.requests[0]?.body)).not.toMatch(/currencyConversion|exchangeRate/);
        }
        return { offers: host.dcc.exchanges().length, screen: reached.customer.screen };
      } finally {
        await host.close();
      }
    };
    expect(await asked('tap-and-go')).toEqual({ offers: 0, screen: 'session' });
    expect(await asked('meter')).toEqual({ offers: 1, screen: 'choose-currency' });
  });

  it("draws the real meter host's choice again at completion by the same rules, in normal and accessibility mode", async () => {
    // A meter pricing in EUR with dcc.choiceAtCompletion; the simulator's N2 card is billed in JPY. The hold is
    // converted at the pre-authorization; after 45 minutes the fee is offered again at the authorization's rate.
    let offsetMs = 0;
    const host = await createTerminalHost(
      parseConfig({
        terminal: {
          model: 'meter',
          currency: 'EUR',
          country: 'DE',
          countryNumeric: '276',
          timezone: 'Europe/Berlin',
        },
        reader: { sim: { card: 'n2-contact', presentDelayMs: 20 } },
        dcc: { choiceAtCompletion: true },
      }),
      {
        logger: silentLogger(),
        cwd: mkdtempSync(join(tmpdir(), 'pt-dcc-completion-e2e-')),
        parkingClock: { now: () => Date.now() + offsetMs },
      },
    );
    const bridge = await startBridge(host, { port: 0, staticDir });
    const context = await launched.browser.newContext({ viewport: { width: 800, height: 1280 } });
    try {
      await until(host, ['idle']);
      await sendOk(host, { type: 'START' });
      await sendOk(host, { type: 'CHOOSE_DURATION', minutes: 120 });
      await sendOk(host, { type: 'CONFIRM' });
      await until(host, ['choose-currency']);
      await sendOk(host, { type: 'CHOOSE_CURRENCY', currency: 'JPY' });
      await until(host, ['session']);
      offsetMs = 45 * 60_000;
      await sendOk(host, { type: 'END_SESSION' });
      const view = (await until(host, ['choose-currency'])).customer;
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);
      expect((await page.goto(bridge.url))?.status()).toBe(200);
      for (const mode of MODES) {
        if (mode === 'accessibility') await sendOk(host, { type: 'SET_ACCESSIBILITY', on: true });
        await page.locator('[data-testid="customer"][data-screen="choose-currency"]').waitFor();
        if (mode === 'accessibility') await page.locator('html.accessible').waitFor();
        const screen = await measure(page);
        expect(screen.title).toBe('Select currency');
        expect(screen.options.map((o) => o.testId)).toEqual(['dcc-option-EUR', 'dcc-option-JPY']);
        expect(screen.options.map((o) => o.amount.text)).toEqual([view.dcc!.local.text, view.dcc!.card.text]);
        const [local, card] = screen.options;
        expect(card!.style).toEqual(local!.style);
        expect(card!.amount.style.fontSize).toBe(local!.amount.style.fontSize);
        expect(local!.marks).toEqual({});
        expect(screen.focused === 'dcc-option-EUR' || screen.focused === 'dcc-option-JPY').toBe(false);
        expect(screen.rate?.text).toBe(view.dcc!.rate);
        expect(screen.rate?.next).toBe('dcc-markup');
        expect(screen.markup!.rect.top - screen.rate!.rect.bottom).toBeLessThanOrEqual(8);
        expect(screen.disclaimer?.textContent).toBe(view.dcc!.disclaimer);
        // The gateway's disclaimer is shown as sent, whatever its words; the terminal's own words never promote.
        expect(screen.text.replace(view.dcc!.disclaimer, '')).not.toMatch(PROMOTING);
      }
    } finally {
      await context.close();
      await bridge.close();
      await host.close();
    }
  });
});

async function sendOk(host: TerminalHost, event: Parameters<TerminalHost['send']>[0]): Promise<void> {
  const r = await host.send(event);
  if (!r.ok) throw new Error(`${event.type}: ${r.error.code}`);
}

async function until(host: TerminalHost, screens: string[]): Promise<TerminalSnapshot> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const r = await host.snapshot();
    if (r.ok && screens.includes(r.value.customer.screen)) return r.value;
    if (Date.now() > deadline)
      throw new Error(`screen ${r.ok ? r.value.customer.screen : '?'}, wanted ${screens.join('|')}`);
    await new Promise((res) => setTimeout(res, 20));
  }
}
