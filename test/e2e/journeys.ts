import type { Browser, Locator, Page } from 'playwright-core';
import type { ConfigInput } from '../../src/config/index.js';
import { installWatchers } from './page-scripts.js';
import { HELD_SCREENS, ScreenGate } from './screen-gate.js';
import { ticketFor } from './terminal-process.js';

/**
 * The customer journeys of the four models, walked in a real browser on the real terminal. One copy of each journey:
 * the end-to-end tests (models.test.ts) check every screen a journey stops at, the screenshot script (screens.ts)
 * photographs the same stops.
 */

export type Model = 'kiosk' | 'meter' | 'tap-and-go' | 'attended';

export const MODELS: readonly Model[] = ['kiosk', 'meter', 'tap-and-go', 'attended'];

/**
 * The configuration each model's terminal runs with. The pay station is a German one pricing in euros, so that the
 * sandbox offers the simulated Visa card's currency (JPY) and the currency choice is on the way; its screen starts
 * in German (`terminal.locale`), the other languages are chosen with the language button. Its lost-ticket fee of
 * €30.01 ends in 01, the sandbox's decline trigger (README, "Triggers"). The meter and the gate have no grace
 * period, so that ending a stay at once costs one unit instead of nothing.
 */
export const MODEL_CONFIGS: Record<Model, ConfigInput> = {
  kiosk: {
    terminal: {
      model: 'kiosk',
      id: 'PTKIOSK1',
      country: 'DE',
      countryNumeric: '276',
      currency: 'EUR',
      timezone: 'Europe/Berlin',
      locale: 'de-DE',
    },
    tariff: { lostTicketFeeMinor: 3001 },
  },
  meter: { terminal: { model: 'meter', id: 'PTMETER1' }, tariff: { graceMinutes: 0 } },
  'tap-and-go': { terminal: { model: 'tap-and-go', id: 'PTGATE01' }, tariff: { graceMinutes: 0 } },
  attended: { terminal: { model: 'attended', id: 'PTMOBIL1' } },
};

/** Where a journey stops: the customer screen (`data-screen`) and a name for this stop of the journey. */
export interface Stop {
  screen: string;
  step: string;
}

export interface WalkOptions {
  /** The customer's language, chosen with the language button (unless the screen is already in it). */
  locale: string;
  /** Whether the customer turns accessibility mode on. */
  accessible: boolean;
  /** Called at every stop, the screen shown and settled: checks, or a screenshot. */
  visit: (page: Page, stop: Stop) => Promise<void>;
  /** Device pixels per CSS pixel of the 800×1280 portrait kiosk screen (1 unless told). */
  deviceScaleFactor?: number;
}

const KIOSK_SCREEN = { width: 800, height: 1280 };

function customerOn(screen: string): string {
  return `[data-testid="customer"][data-screen="${screen}"]`;
}

/** One customer at one terminal's screen, in a page of its own. */
export class CustomerWalk {
  /** Every stop visited, in order. */
  readonly stops: Stop[] = [];

  private constructor(
    readonly page: Page,
    private readonly gate: ScreenGate,
    private readonly options: WalkOptions,
  ) {}

  /** Opens the terminal's screen (its URL with the secret) in a new browser context, on the welcome screen. */
  static async open(browser: Browser, url: string, options: WalkOptions): Promise<CustomerWalk> {
    const context = await browser.newContext({
      viewport: KIOSK_SCREEN,
      deviceScaleFactor: options.deviceScaleFactor ?? 1,
    });
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    await page.addInitScript(installWatchers);
    const gate = await ScreenGate.install(page);
    const response = await page.goto(url);
    if (response?.status() !== 200) throw new Error(`the screen answered ${response?.status()}`);
    const walk = new CustomerWalk(page, gate, options);
    await walk.#settled('idle');
    return walk;
  }

  get locale(): string {
    return this.options.locale;
  }

  async close(): Promise<void> {
    await this.page.context().close();
  }

  /** The screen shown, its answer in (the customer area is inert until then: a key pressed earlier is not taken). */
  async #settled(screen: string): Promise<void> {
    await this.page.locator(customerOn(screen)).waitFor();
    await this.page.locator('[data-testid="customer-slot"]:not([aria-busy])').waitFor();
  }

  async #visit(screen: string, step = screen): Promise<void> {
    const stop = { screen, step };
    this.stops.push(stop);
    await this.options.visit(this.page, stop);
  }

  /**
   * A customer comes to the screen as it is (the welcome screen, or the out-of-service one): chooses the language and
   * the mode, as a customer would with the buttons, then the screen is visited. Both last until the terminal is back
   * on its welcome screen, so a customer starting again chooses again.
   */
  async arrive(screen = 'idle'): Promise<void> {
    await this.#settled(screen);
    const tag = this.options.locale.replace('_', '-');
    if ((await this.page.locator('html').getAttribute('lang')) !== tag) {
      await this.page.getByTestId('language-button').click();
      await this.page.getByTestId(`language-${this.options.locale}`).click();
      await this.page.locator(`html[lang="${tag}"]`).waitFor();
    }
    const mode = this.page.getByTestId('accessibility-button');
    if (this.options.accessible && (await mode.getAttribute('aria-pressed')) !== 'true') {
      await mode.click();
      await this.page.locator('[data-testid="accessibility-button"][aria-pressed="true"]').waitFor();
    }
    await this.#settled(screen);
    await this.#visit(screen);
  }

  /** Presses a button of the customer screen. */
  async press(testId: string): Promise<void> {
    await this.page.getByTestId(testId).click();
  }

  /**
   * Follows the terminal to `screen`, visiting every screen held on the way ("Present your card", "Processing"), then
   * `screen` itself as `step` (unless `visit` is false).
   */
  async reach(screen: string, step = screen, visit = true): Promise<void> {
    if (HELD_SCREENS.includes(screen)) {
      // A held screen is visited as it is held; the ones before it too.
      while ((await this.#visitHeld(await this.gate.holding())) !== screen);
      return;
    }
    await this.#follow(this.page.locator(customerOn(screen)));
    await this.#settled(screen);
    if (visit) await this.#visit(screen, step);
  }

  /** Waits for a change on the screen (e.g. a new "paid until" time), held screens visited on the way; visits it. */
  async changed(screen: string, testId: string, before: string, step: string): Promise<void> {
    await this.#follow(this.page.getByTestId(testId).filter({ hasNotText: before }));
    await this.#settled(screen);
    await this.#visit(screen, step);
  }

  /** Visits and releases every screen the gate holds until `until` is on the page. */
  async #follow(until: Locator): Promise<void> {
    for (;;) {
      if (this.gate.held !== undefined) {
        await this.#visitHeld(this.gate.held);
        continue;
      }
      const shown = until.waitFor().then(() => undefined);
      const held = await Promise.race([shown, this.gate.holding()]);
      // The losing wait ends on its own (at its time limit when nothing comes): its failure is nobody's.
      shown.catch(() => undefined);
      if (held === undefined && this.gate.held === undefined) return;
    }
  }

  /** Visits the held screen, once the page shows it, and lets the terminal's next messages through. */
  async #visitHeld(screen: string): Promise<string> {
    await this.page.locator(customerOn(screen)).waitFor();
    await this.#visit(screen);
    this.gate.release();
    return screen;
  }

  /**
   * Operator mode (Ctrl+Alt+O and the PIN) puts the terminal out of service, with `notice` for customers typed key by
   * key as an operator types it (slower than the panel's status refresh every 2 s), or back in service.
   */
  async operatorService(pin: string, task: 'on' | 'off', notice?: string): Promise<void> {
    await this.page.keyboard.press('Control+Alt+O');
    await this.page.getByTestId('operator-pin').fill(pin);
    await this.page.getByTestId('operator-login').click();
    if (notice !== undefined) {
      const field = this.page.getByTestId('service-notice');
      await field.click();
      await field.pressSequentially(notice, { delay: Math.ceil(3_000 / notice.length) });
    }
    await this.page.getByTestId(`service-${task}`).click();
    await this.page.getByTestId('operator-result').waitFor();
    await this.page.getByTestId('operator-close').click();
    await this.page.getByTestId('operator-panel').waitFor({ state: 'hidden' });
  }
}

/** A kiosk ticket of its own: an entry 2 h 10 min ago (five started half-hours). */
function kioskTicket(): string {
  return ticketFor(130, MODEL_CONFIGS.kiosk.terminal?.timezone ?? 'Europe/London');
}

/** Pay station: welcome → ticket → (ticket looked up) → the fee to confirm. */
async function kioskFee(walk: CustomerWalk): Promise<void> {
  await walk.arrive();
  await walk.press('action-START');
  await walk.reach('enter-ticket');
  await walk.page.getByTestId('ticket-input').fill(kioskTicket());
  await walk.press('action-ENTER_TICKET');
  await walk.reach('confirm');
}

/**
 * Pay station: welcome → ticket → (ticket looked up) → fee to confirm → card → currency choice (the card's, JPY) →
 * approved with the receipt; Done.
 */
export async function kioskSale(walk: CustomerWalk): Promise<void> {
  await kioskFee(walk);
  await walk.press('action-CONFIRM');
  await walk.reach('choose-currency');
  await walk.press('dcc-option-JPY');
  await walk.reach('approved');
  await walk.press('action-DONE');
  await walk.reach('idle', 'idle', false);
}

/**
 * Pay station, pay by phone (issue 14): welcome → ticket → fee → Pay by phone → the payment link's QR code and URL
 * with the time left; Cancel (the link is deactivated) → back at the fee; Cancel.
 */
export async function kioskPayByPhone(walk: CustomerWalk): Promise<void> {
  await kioskFee(walk);
  await walk.press('action-PAY_BY_LINK');
  await walk.reach('pay-by-phone');
  await walk.press('action-CANCEL');
  await walk.reach('confirm', 'confirm', false);
  await walk.press('action-CANCEL');
  await walk.reach('idle', 'idle', false);
}

/** Pay station, lost ticket: the fee (€30.01, a decline trigger) in euros → card → declined; Done. */
export async function kioskLostTicketDeclined(walk: CustomerWalk): Promise<void> {
  await walk.arrive();
  await walk.press('action-START');
  await walk.reach('enter-ticket');
  await walk.press('action-LOST_TICKET');
  await walk.reach('confirm', 'confirm-lost-ticket');
  await walk.press('action-CONFIRM');
  await walk.reach('choose-currency');
  await walk.press('dcc-option-EUR');
  await walk.reach('declined');
  await walk.press('action-DONE');
  await walk.reach('idle', 'idle', false);
}

/**
 * On-street meter: duration → confirm (the longest stay held) → card → session → extend by 30 minutes → end parking →
 * approved (the stay so far captured); Done.
 */
export async function meterSession(walk: CustomerWalk): Promise<void> {
  await walk.arrive();
  await walk.press('action-START');
  await walk.reach('choose-duration');
  await walk.press('duration-60');
  await walk.reach('confirm');
  await walk.press('action-CONFIRM');
  await walk.reach('session');
  const paidUntil = (await walk.page.getByTestId('session-paid-until').textContent()) ?? '';
  await walk.press('extend-30');
  await walk.changed('session', 'session-paid-until', paidUntil, 'session-extended');
  await walk.press('action-END_SESSION');
  await walk.reach('approved');
  // Ended at the terminal: the screen shows when, no longer the time the hold covered.
  const ended = (await walk.page.getByTestId('session-ended').textContent()) ?? '';
  if (!/\d/.test(ended) || (await walk.page.getByTestId('session-paid-until').count()) !== 0)
    throw new Error(
      `the ended session shows "${ended}" and ${await walk.page.getByTestId('session-paid-until').count()} paid-until rows`,
    );
  await walk.press('action-DONE');
  await walk.reach('idle', 'idle', false);
}

/**
 * Tap-and-go gate: tap in (account verification and the hold) → session, the gate opens; Done. Then, as the same
 * customer leaving (choosing the language again: the first visit ended): tap out → the stay captured → approved; Done.
 */
export async function tapAndGo(walk: CustomerWalk): Promise<void> {
  await walk.arrive();
  await walk.press('action-TAP_ENTRY');
  await walk.reach('session');
  await walk.press('action-DONE');
  await walk.reach('idle', 'idle', false);
  await walk.arrive();
  await walk.press('action-TAP_EXIT');
  await walk.reach('approved');
  await walk.press('action-DONE');
  await walk.reach('idle', 'idle', false);
}

/** Attended mobile terminal: the amount keyed (digits of minor units) → confirm → card → approved or declined; Done. */
export async function attendedSale(walk: CustomerWalk, digits = '850', result = 'approved'): Promise<void> {
  await walk.arrive();
  await walk.press('action-START');
  await walk.reach('enter-amount');
  for (const digit of digits) await walk.press(`amount-key-${digit}`);
  await walk.press('action-ENTER_AMOUNT');
  await walk.reach('confirm');
  await walk.press('action-CONFIRM');
  await walk.reach(result);
  await walk.press('action-DONE');
  await walk.reach('idle', 'idle', false);
}

/** Attended: an amount of 10.01 (the sandbox's decline trigger) is declined. */
export function attendedDeclined(walk: CustomerWalk): Promise<void> {
  return attendedSale(walk, '1001', 'declined');
}

/** The notice the operator types for customers in the out-of-service journey. */
export const SERVICE_NOTICE = 'Card reader being replaced. Please pay at the machine by the exit.';

/**
 * The operator puts the terminal out of service from operator mode (Ctrl+Alt+O and the PIN), typing a notice for
 * customers; a customer comes to the out-of-service screen and chooses the language and accessibility mode there,
 * as a visitor or a blind customer would to learn why no card is taken; the operator puts it back in service and the
 * welcome screen returns. Resolves with the message the customer read.
 */
export async function outOfService(
  walk: CustomerWalk,
  pin: string,
  notice: string = SERVICE_NOTICE,
): Promise<string> {
  await walk.operatorService(pin, 'on', notice);
  await walk.arrive('out-of-service');
  const message = (await walk.page.getByTestId('customer-message').textContent()) ?? '';
  await walk.operatorService(pin, 'off');
  await walk.reach('idle', 'idle', false);
  return message;
}

/** Each model's main journey. */
export const JOURNEYS: Record<Model, (walk: CustomerWalk) => Promise<void>> = {
  kiosk: kioskSale,
  meter: meterSession,
  'tap-and-go': tapAndGo,
  attended: (walk) => attendedSale(walk),
};
