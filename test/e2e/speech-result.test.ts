import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { parseConfig } from '../../src/config/index.js';
import type { TerminalSnapshot } from '../../src/host/api.js';
import { buildRenderer } from '../../src/host/bridge/build-renderer.js';
import { startBridge, type Bridge } from '../../src/host/bridge/server.js';
import { send, waitFor } from '../../src/host/drive.js';
import { createTerminalHost, type TerminalHost } from '../../src/host/terminal-host.js';
import { silentLogger } from '../../src/log/index.js';
import { launchBrowser, type LaunchedBrowser } from './browser.js';

/**
 * A result screen said by the page (`customer.speech.engine: platform`, the default) on the real terminal, in a real
 * headless Chromium: the page tells the terminal when it starts and stops saying (SPEECH_STATE), and the terminal
 * keeps the result screen while the page says it, then for its time; a page that goes away lets it go. The page's
 * `speechSynthesis` is replaced before the renderer starts by one that says each utterance until the test ends it.
 */

let staticDir: string;
let launched: LaunchedBrowser;
let running: { host: TerminalHost; bridge: Bridge; context: BrowserContext } | undefined;

beforeAll(async () => {
  staticDir = await buildRenderer();
  launched = await launchBrowser();
});

afterAll(async () => {
  await launched?.close();
});

afterEach(async () => {
  vi.useRealTimers();
  if (!running) return;
  await running.context.close();
  await running.bridge.close();
  await running.host.close();
  running = undefined;
});

/** What the page's synthesis is doing, and the test's hand on it. */
interface HeldSynthesis {
  spoken: string[];
  /** Ends the utterance being said (said to the end): the next one queued starts. */
  finish(): void;
}

// The root tsconfig has no DOM library: the page's shapes used here, in this module's scope only.
declare const window: { __synthesis: HeldSynthesis };

/**
 * Runs in the page before its scripts: a `speechSynthesis` that says the utterances queued one at a time, each until
 * `finish()` (its `start` when it begins, `end` when finished, `error` "interrupted" or "canceled" when cancelled),
 * the events coming after the call, as a platform's do.
 */
function heldSpeech(): void {
  interface Said {
    text: string;
    onstart: ((e: unknown) => void) | null;
    onend: ((e: unknown) => void) | null;
    onerror: ((e: unknown) => void) | null;
  }
  const queue: Said[] = [];
  const later = (f: () => void): void => void setTimeout(f, 0);
  const begin = (): void => {
    const head = queue[0];
    if (head) later(() => head.onstart?.({ type: 'start' }));
  };
  const held: HeldSynthesis = {
    spoken: [],
    finish(): void {
      const head = queue.shift();
      if (head) later(() => head.onend?.({ type: 'end' }));
      begin();
    },
  };
  window.__synthesis = held;
  const synthesis = {
    speak(u: Said): void {
      held.spoken.push(u.text);
      queue.push(u);
      if (queue.length === 1) begin();
    },
    cancel(): void {
      const dropped = queue.splice(0);
      dropped.forEach((u, i) =>
        later(() => u.onerror?.({ type: 'error', error: i === 0 ? 'interrupted' : 'canceled' })),
      );
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

async function start(): Promise<{ host: TerminalHost; page: Page }> {
  const host = await createTerminalHost(parseConfig({ customer: { accessibilityFactor: 2 } }), {
    logger: silentLogger(),
    cwd: mkdtempSync(join(tmpdir(), 'pt-e2e-speech-result-')),
  });
  const bridge = await startBridge(host, { port: 0, staticDir });
  const context = await launched.browser.newContext({ viewport: { width: 800, height: 1280 } });
  running = { host, bridge, context };
  await waitFor(host, ['idle'], 10_000);
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  await page.addInitScript(heldSpeech);
  expect((await page.goto(bridge.url))?.status()).toBe(200);
  await page.locator('[data-testid="customer"][data-screen="idle"]').waitFor();
  // The tactile way into accessibility mode: the screen is said by the page from then on.
  await page.keyboard.press('*');
  await page.locator('html.accessible').waitFor();
  return { host, page };
}

async function screen(host: TerminalHost): Promise<string | undefined> {
  const r = await host.snapshot();
  return r.ok ? r.value.customer.screen : undefined;
}

/** A sale of the demo ticket, up to its approval, the page saying every screen on the way. */
async function approvedSale(host: TerminalHost, page: Page): Promise<TerminalSnapshot> {
  const ticket = /(\d{16})\)/.exec((await send(host, { type: 'START' })).customer.message)?.[1] ?? '';
  await send(host, { type: 'ENTER_TICKET', ticket });
  await waitFor(host, ['confirm'], 10_000);
  await send(host, { type: 'CONFIRM' });
  const shown = await waitFor(host, ['approved', 'declined', 'error'], 15_000);
  await page.locator('[data-testid="customer"][data-screen="approved"]').waitFor();
  return shown;
}

describe('a result screen said by the page', () => {
  it('stays while the page says it, then for its time; a page that goes away lets it go', async () => {
    const { host, page } = await start();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], shouldAdvanceTime: true });

    expect((await approvedSale(host, page)).customer.screen).toBe('approved');
    // The page has started saying the result and its receipt, and says it still after a minute (the screen's time
    // is 20 s in accessibility mode).
    await expect.poll(() => host.speech.speaking).toBe(true);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(await screen(host)).toBe('approved');
    expect(host.speech.speaking).toBe(true);
    const said = await page.evaluate(() => window.__synthesis.spoken);
    expect(said.at(-1)).toContain('Receipt');

    // Said to the end: the screen's time runs from there.
    await page.evaluate(() => window.__synthesis.finish());
    await expect.poll(() => host.speech.speaking).toBe(false);
    await vi.advanceTimersByTimeAsync(19_000);
    expect(await screen(host)).toBe('approved');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await screen(host)).toBe('idle');

    // The page goes away while it says the next result: the terminal is told, and the screen keeps only its time.
    await send(host, { type: 'SET_ACCESSIBILITY', on: true });
    await page.locator('html.accessible').waitFor();
    expect((await approvedSale(host, page)).customer.screen).toBe('approved');
    await expect.poll(() => host.speech.speaking).toBe(true);
    await page.close();
    await expect.poll(() => host.speech.speaking).toBe(false);
    await vi.advanceTimersByTimeAsync(20_000);
    expect(await screen(host)).toBe('idle');
  });
});
