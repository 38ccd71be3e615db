import { afterAll, beforeAll, describe, it } from 'vitest';
import type { SupportedLocale } from '../../src/i18n/index.js';
import { launchBrowser, type LaunchedBrowser } from './browser.js';
import { checkCustomerScreen, operatorFigures } from './customer-screen-checks.js';
import {
  attendedDeclined,
  CustomerWalk,
  JOURNEYS,
  kioskLostTicketDeclined,
  MODEL_CONFIGS,
  MODELS,
  outOfService,
  SERVICE_NOTICE,
  type Model,
} from './journeys.js';
import { HELD_SCREENS } from './screen-gate.js';
import { startTerminal, type RunningTerminal } from './terminal-process.js';

/**
 * Issue 13, "Tests and pictures": every model's customer journey on the real terminal (`parking-terminal start
 * --headless` with the model's configuration: host, catalogues, simulated reader, embedded sandbox) in a real
 * browser, in English, German and Arabic (right to left, in accessibility mode), plus a decline and the
 * out-of-service screen an operator puts up. Every screen a journey stops at is checked by checkCustomerScreen: axe-core
 * finds no WCAG 2.x A/AA violation, the language and direction are the customer's, the title is the catalogue's, and
 * no operator figure is in the text. The four terminals run side by side; one terminal serves one customer at a time.
 */

const LOCALES: { locale: SupportedLocale; accessible: boolean }[] = [
  { locale: 'en_GB', accessible: false },
  { locale: 'de_DE', accessible: false },
  { locale: 'ar_AE', accessible: true },
];

/** The screens each journey settles on, in order (the held "Present your card" and "Processing" between them). */
const MILESTONES: Record<Model, string[]> = {
  kiosk: ['idle', 'enter-ticket', 'confirm', 'choose-currency', 'approved'],
  meter: ['idle', 'choose-duration', 'confirm', 'session', 'session-extended', 'approved'],
  'tap-and-go': ['idle', 'session', 'idle', 'approved'],
  attended: ['idle', 'enter-amount', 'confirm', 'approved'],
};

const terminals = new Map<Model, RunningTerminal>();
let launched: LaunchedBrowser;

beforeAll(async () => {
  const started = await Promise.all(
    MODELS.map(async (model) => [model, await startTerminal(MODEL_CONFIGS[model])] as const),
  );
  for (const [model, terminal] of started) terminals.set(model, terminal);
  launched = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await launched?.close();
  await Promise.all([...terminals.values()].map((t) => t.stop()));
});

/** One customer at a time per terminal: the walks of a model queue, the models run side by side. */
const queues = new Map<Model, Promise<unknown>>();
function exclusive<T>(model: Model, walk: () => Promise<T>): Promise<T> {
  const turn = (queues.get(model) ?? Promise.resolve()).then(walk);
  queues.set(
    model,
    turn.catch(() => undefined),
  );
  return turn;
}

/** Walks `journey` on `model`'s terminal and returns the stops and every check that failed on them. */
function walkAndCheck(
  model: Model,
  locale: SupportedLocale,
  accessible: boolean,
  journey: (walk: CustomerWalk, terminal: RunningTerminal) => Promise<void>,
): Promise<{ steps: string[]; failures: string[] }> {
  return exclusive(model, async () => {
    const terminal = terminals.get(model)!;
    const expected = {
      locale,
      accessible,
      operatorFigures: operatorFigures(terminal),
      terminalId: terminal.terminalId,
    };
    const failures: string[] = [];
    const walk = await CustomerWalk.open(launched.browser, terminal.url, {
      locale,
      accessible,
      visit: async (page, stop) => {
        failures.push(...(await checkCustomerScreen(page, stop, expected)));
      },
    });
    try {
      await journey(walk, terminal);
    } catch (e) {
      const seen = walk.stops.map((s) => s.step).join(' → ');
      throw new Error(`${model} ${locale} after ${seen}: ${String(e)}\n${terminal.output()}`, { cause: e });
    } finally {
      await walk.close();
    }
    return { steps: walk.stops.map((s) => s.step), failures };
  });
}

describe.concurrent('every model on the real terminal, in a real browser', () => {
  // Interleaved by model: the tests run a few at a time (vitest's maxConcurrency), and each model's terminal serves
  // one customer at a time, so that the first few are one per model.
  for (const { locale, accessible } of LOCALES)
    for (const model of MODELS)
      it(`${model} in ${locale}${accessible ? ' in accessibility mode' : ''}: the customer journey, every screen checked`, async ({
        expect,
      }) => {
        const { steps, failures } = await walkAndCheck(model, locale, accessible, JOURNEYS[model]);
        expect(failures.join('\n\n')).toBe('');
        expect(steps.filter((s) => !HELD_SCREENS.includes(s))).toEqual(MILESTONES[model]);
        // The card was asked for on the screen, and the payment shown as processing.
        expect(steps).toContain('present-card');
        expect(steps).toContain('processing');
      }, 240_000);

  it('kiosk in en_GB: a lost ticket whose fee the card issuer declines', async ({ expect }) => {
    const { steps, failures } = await walkAndCheck('kiosk', 'en_GB', false, kioskLostTicketDeclined);
    expect(failures.join('\n\n')).toBe('');
    expect(steps.filter((s) => !HELD_SCREENS.includes(s))).toEqual([
      'idle',
      'enter-ticket',
      'confirm-lost-ticket',
      'choose-currency',
      'declined',
    ]);
  }, 240_000);

  it('attended in ar_AE: a declined card', async ({ expect }) => {
    const { steps, failures } = await walkAndCheck('attended', 'ar_AE', false, attendedDeclined);
    expect(failures.join('\n\n')).toBe('');
    expect(steps.filter((s) => !HELD_SCREENS.includes(s))).toEqual([
      'idle',
      'enter-amount',
      'confirm',
      'declined',
    ]);
  }, 240_000);

  const outOfServiceIn: Record<Model, { locale: SupportedLocale; accessible: boolean }> = {
    kiosk: { locale: 'ar_AE', accessible: false },
    meter: { locale: 'de_DE', accessible: true },
    'tap-and-go': { locale: 'en_GB', accessible: false },
    attended: { locale: 'de_DE', accessible: false },
  };
  for (const model of MODELS) {
    const { locale, accessible } = outOfServiceIn[model];
    it(`${model} in ${locale}${accessible ? ' in accessibility mode' : ''}: out of service from operator mode`, async ({
      expect,
    }) => {
      let notice = '';
      const { steps, failures } = await walkAndCheck(model, locale, accessible, async (walk, terminal) => {
        notice = await outOfService(walk, terminal.pin);
      });
      expect(failures.join('\n\n')).toBe('');
      expect(steps).toEqual(['out-of-service']);
      // The notice the operator typed, whole: the panel's status refresh while typing took none of it.
      expect(notice).toBe(SERVICE_NOTICE);
    }, 240_000);
  }
});
