/**
 * `npm run screens`: the pictures of the customer screens in README.md ("Screens"), written to docs/screens/ as
 * `<model>-<locale>[-accessible]-<nn>-<step>.png`. The journeys are those of the end-to-end tests (journeys.ts) on the
 * real terminal, one `parking-terminal start --headless` per model, in a real headless Chromium at the kiosk's
 * 800×1280 portrait screen, photographed at half its pixel density to keep the repository small. Every picture is
 * rewritten on each run (old ones are removed first); the ticket, amounts and cards are fixed, but the terminal has
 * no clock to fix, so the times, dates and transaction references on the pictures are those of the run.
 */
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { launchBrowser } from './browser.js';
import {
  CustomerWalk,
  JOURNEYS,
  kioskLostTicketDeclined,
  kioskPayByPhone,
  MODEL_CONFIGS,
  MODELS,
  outOfService,
  attendedDeclined,
  type Model,
  type Stop,
} from './journeys.js';
import { startTerminal, type RunningTerminal } from './terminal-process.js';

const OUT_DIR = resolve(import.meta.dirname, '../../docs/screens');

/** Half the CSS pixel density: 400×640 pictures, legible, a few tens of kilobytes each. */
const DEVICE_SCALE_FACTOR = 0.5;

interface Series {
  model: Model;
  locale: string;
  accessible: boolean;
  /** The journeys photographed, in order, on the model's terminal. */
  journeys: ((walk: CustomerWalk, terminal: RunningTerminal) => Promise<unknown>)[];
}

/**
 * What is photographed: every screen of every model in en_GB (a decline where the model has one, the out-of-service
 * screen once), the pay station in German (its own default) and in Arabic (right to left), and the pay station in
 * accessibility mode.
 */
const SERIES: Series[] = [
  {
    model: 'kiosk',
    locale: 'en_GB',
    accessible: false,
    journeys: [
      JOURNEYS.kiosk,
      kioskLostTicketDeclined,
      (walk, t) => outOfService(walk, t.pin),
      kioskPayByPhone,
    ],
  },
  { model: 'kiosk', locale: 'de_DE', accessible: false, journeys: [JOURNEYS.kiosk] },
  { model: 'kiosk', locale: 'ar_AE', accessible: false, journeys: [JOURNEYS.kiosk] },
  { model: 'kiosk', locale: 'en_GB', accessible: true, journeys: [JOURNEYS.kiosk] },
  { model: 'meter', locale: 'en_GB', accessible: false, journeys: [JOURNEYS.meter] },
  { model: 'tap-and-go', locale: 'en_GB', accessible: false, journeys: [JOURNEYS['tap-and-go']] },
  { model: 'attended', locale: 'en_GB', accessible: false, journeys: [JOURNEYS.attended, attendedDeclined] },
];

/** Photographs each new step of a series once, numbered in the order the customer meets them. */
function photographer(series: Series, written: string[]): (page: Page, stop: Stop) => Promise<void> {
  const prefix = `${series.model}-${series.locale}${series.accessible ? '-accessible' : ''}`;
  const taken = new Set<string>();
  return async (page, stop) => {
    if (taken.has(stop.step)) return;
    taken.add(stop.step);
    const file = join(OUT_DIR, `${prefix}-${String(taken.size).padStart(2, '0')}-${stop.step}.png`);
    // No focus ring left by the last click, no blinking caret, the spinner stopped: the same picture every run.
    await page.evaluate(
      'document.activeElement && document.activeElement.blur && document.activeElement.blur()',
    );
    await page.screenshot({ path: file, animations: 'disabled', caret: 'hide' });
    written.push(file);
  };
}

async function main(): Promise<void> {
  await mkdir(OUT_DIR, { recursive: true });
  for (const name of await readdir(OUT_DIR)) if (name.endsWith('.png')) await rm(join(OUT_DIR, name));
  const terminals = new Map<Model, RunningTerminal>();
  const launched = await launchBrowser();
  const written: string[] = [];
  try {
    for (const t of await Promise.all(
      MODELS.map(async (model) => [model, await startTerminal(MODEL_CONFIGS[model])] as const),
    ))
      terminals.set(...t);
    // The models side by side; one terminal serves one customer at a time.
    await Promise.all(
      MODELS.map(async (model) => {
        const terminal = terminals.get(model)!;
        for (const series of SERIES.filter((s) => s.model === model)) {
          const visit = photographer(series, written);
          for (const journey of series.journeys) {
            const walk = await CustomerWalk.open(launched.browser, terminal.url, {
              locale: series.locale,
              accessible: series.accessible,
              visit,
              deviceScaleFactor: DEVICE_SCALE_FACTOR,
            });
            try {
              await journey(walk, terminal);
            } finally {
              await walk.close();
            }
          }
        }
      }),
    );
  } finally {
    await launched.close();
    await Promise.all([...terminals.values()].map((t) => t.stop()));
  }
  let bytes = 0;
  for (const file of written) bytes += (await stat(file)).size;
  console.log(JSON.stringify({ directory: 'docs/screens', images: written.length, bytes }));
}

await main();
