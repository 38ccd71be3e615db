import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import type { CustomerView } from '../../src/host/api.js';
import { buildRenderer } from '../../src/host/bridge/build-renderer.js';
import { startBridge, type Bridge } from '../../src/host/bridge/server.js';
import { launchBrowser, type LaunchedBrowser } from './browser.js';
import { FakeTerminal } from './fake-terminal.js';

/**
 * Speech output in a real headless Chromium (EN 301 549 5.1.3): with `customer.speech.engine: platform` the renderer
 * says what the terminal's view carries through `speechSynthesis`, repeats it on `*`, stops on `#`, and says nothing
 * in normal mode. The page's `speechSynthesis` is replaced by a recorder before the renderer starts.
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

interface Said {
  text: string;
  lang: string;
  volume: number;
  rate: number;
}

interface Recorder {
  spoken: Said[];
  cancels: number;
}

// The root tsconfig has no DOM library: the page's shapes used here, in this module's scope only.
declare const window: { __speech: Recorder };
declare const document: {
  activeElement: { getAttribute(name: string): string | null } | null;
  querySelector(selector: string): { click(): void };
};

/** Runs in the page before its scripts: a `speechSynthesis` that records utterances and cancellations. */
function recordSpeech(): void {
  const record: Recorder = { spoken: [], cancels: 0 };
  window.__speech = record;
  const synthesis = {
    speak(u: Said): void {
      record.spoken.push({ text: u.text, lang: u.lang, volume: u.volume, rate: u.rate });
    },
    cancel(): void {
      record.cancels += 1;
    },
    getVoices: (): unknown[] => [],
    pause(): void {},
    resume(): void {},
    speaking: false,
    pending: false,
    paused: false,
  };
  Object.defineProperty(window, 'speechSynthesis', { value: synthesis, configurable: true });
}

async function start(speech: true | 'terminal' = true): Promise<{ fake: FakeTerminal; page: Page }> {
  const fake = new FakeTerminal({ speech });
  const bridge = await startBridge(fake, { port: 0, staticDir });
  open.push({ bridge, fake });
  const context = await launched.browser.newContext({ viewport: { width: 800, height: 1280 } });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  await page.addInitScript(recordSpeech);
  const response = await page.goto(bridge.url);
  expect(response?.status()).toBe(200);
  await onScreen(page, 'idle');
  return { fake, page };
}

async function onScreen(page: Page, screen: string): Promise<void> {
  await page.locator(`[data-testid="customer"][data-screen="${screen}"]`).waitFor();
  await page.locator('[data-testid="customer-slot"]:not([aria-busy])').waitFor();
}

function spoken(page: Page): Promise<{ spoken: Said[]; cancels: number }> {
  return page.evaluate(() => window.__speech);
}

async function saidCount(page: Page, n: number): Promise<Said[]> {
  await page.waitForFunction((count) => window.__speech.spoken.length >= count, n);
  return (await spoken(page)).spoken;
}

const IDLE: CustomerView = {
  screen: 'idle',
  title: 'Welcome',
  message: 'Pay for your parking here',
  actions: ['START'],
};

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

describe('speech output in the browser', () => {
  it('says each screen in accessibility mode, repeats it on *, stops on #', async () => {
    const { fake, page } = await start();
    await page.getByTestId('accessibility-button').click();
    await page.locator('html.accessible').waitFor();
    const first = await saidCount(page, 1);
    expect(first[0]).toMatchObject({ text: 'Welcome. Pay for your parking here', lang: 'en-GB', rate: 1 });
    // The platform keeps the volume as a 32-bit float.
    expect(first[0]?.volume).toBeCloseTo(0.6, 5);
    await expect(page.getByTestId('speech-keys').isVisible()).resolves.toBe(true);

    await page.keyboard.press('*');
    const repeated = await saidCount(page, 2);
    expect(repeated[1]?.text).toBe('Welcome. Pay for your parking here');

    const before = (await spoken(page)).cancels;
    await page.keyboard.press('#');
    await page.waitForFunction((n) => window.__speech.cancels > n, before);

    await page.getByTestId('action-START').click();
    await onScreen(page, 'enter-ticket');
    const next = await saidCount(page, 3);
    expect(next[2]?.text).toBe('Your ticket. Enter the number printed on your ticket');

    await page.getByTestId('speech-repeat').click();
    expect((await saidCount(page, 4))[3]?.text).toBe('Your ticket. Enter the number printed on your ticket');
    // The volume is the terminal's: the key goes to it.
    await page.getByTestId('speech-louder').click();
    await expect
      .poll(() => fake.events.some((e) => e.type === 'SPEECH' && e.command === 'louder'))
      .toBe(true);
  });

  it('echoes the keys pressed and the control Tab reaches, in accessibility mode', async () => {
    const { page } = await start();
    await page.getByTestId('accessibility-button').click();
    await saidCount(page, 1);
    await page.getByTestId('action-START').click();
    await onScreen(page, 'enter-ticket');
    const n = (await saidCount(page, 2)).length;
    await page.getByTestId('ticket-key-4').click();
    expect((await saidCount(page, n + 1)).at(-1)?.text).toBe('4');
    await page.getByTestId('ticket-key-back').click();
    expect((await saidCount(page, n + 2)).at(-1)?.text).toBe('Delete last character');
    await page.keyboard.press('Tab');
    const focused = await page.evaluate(() => document.activeElement?.getAttribute('data-testid') ?? '');
    expect(focused).not.toBe('');
    const said = await saidCount(page, n + 3);
    expect(said.at(-1)?.text.length).toBeGreaterThan(0);
  });

  it('sends the echo to the terminal when the terminal speaks, and every key still counts', async () => {
    const { fake, page } = await start('terminal');
    await page.getByTestId('accessibility-button').click();
    await page.locator('html.accessible').waitFor();
    await page.getByTestId('action-START').click();
    await onScreen(page, 'enter-ticket');
    // Two keys at once: an echo on its way does not make the screen busy, so the second key is not lost.
    await page.getByTestId('ticket-key-4').click();
    await page.getByTestId('ticket-key-2').click();
    await expect
      .poll(() => fake.events.filter((e) => e.type === 'ECHO'))
      .toEqual([
        { type: 'ECHO', text: '4' },
        { type: 'ECHO', text: '2' },
      ]);
    await expect(page.getByTestId('ticket-input').inputValue()).resolves.toBe('42');
    expect((await spoken(page)).spoken).toEqual([]);
    // The last key and Continue in one breath: Continue is not dropped behind the echo still on its way.
    await page.evaluate(() => {
      for (const id of ['ticket-key-7', 'action-ENTER_TICKET'])
        document.querySelector(`[data-testid="${id}"]`).click();
    });
    await onScreen(page, 'confirm');
    expect(fake.events).toContainEqual({ type: 'ENTER_TICKET', ticket: '427' });
    expect(fake.events).toContainEqual({ type: 'ECHO', text: '7' });
  });

  it('says each language of the language list with its own voice, by the page or by the terminal', async () => {
    for (const by of [true, 'terminal'] as const) {
      const { fake, page } = await start(by);
      await page.keyboard.press('*');
      await page.locator('html.accessible').waitFor();
      fake.present({ ...IDLE, language: LANGUAGE });
      await page.getByTestId('language-list').waitFor({ state: 'attached' });
      await page.getByTestId('language-button').focus();
      await page.keyboard.press('Enter');
      await page.getByTestId('language-list').waitFor();
      // English, Deutsch, العربية: 6 three times from the Language button.
      for (let i = 0; i < 3; i++) await page.keyboard.press('6');
      expect(await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe(
        'language-ar_AE',
      );
      if (by === 'terminal')
        await expect
          .poll(() => fake.events.filter((e) => e.type === 'ECHO').at(-1))
          .toEqual({ type: 'ECHO', text: 'العربية', lang: 'ar-AE' });
      else
        await expect
          .poll(async () => (await spoken(page)).spoken.at(-1))
          .toMatchObject({ text: 'العربية', lang: 'ar-AE' });
    }
  });

  it('says nothing in normal mode', async () => {
    const { page } = await start();
    await page.getByTestId('action-START').click();
    await onScreen(page, 'enter-ticket');
    await page.keyboard.press('#');
    await page.getByTestId('action-CANCEL').click();
    await onScreen(page, 'idle');
    expect((await spoken(page)).spoken).toEqual([]);
    expect(await page.getByTestId('speech-keys').count()).toBe(0);
  });

  it('turns accessibility mode on with * (the tactile way in), and speech starts', async () => {
    const { fake, page } = await start();
    await page.keyboard.press('*');
    await page.locator('html.accessible').waitFor();
    expect(fake.events).toContainEqual({ type: 'SET_ACCESSIBILITY', on: true });
    expect((await saidCount(page, 1))[0]?.text).toBe('Welcome. Pay for your parking here');
  });
});
