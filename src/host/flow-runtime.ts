import { createActor, type AnyActorRef } from 'xstate';
import type { Config } from '../config/index.js';
import {
  dccMarginText,
  dccRateText,
  describeView,
  flowSettingsFromConfig,
  provideFlowEffects,
  type FlowEffects,
  type FlowSettings,
} from '../flows/index.js';
import {
  formatAmount,
  formatClockTime,
  formatDuration,
  translator,
  type MessageKey,
  type SupportedLocale,
} from '../i18n/index.js';
import type { Logger } from '../log/index.js';
import type { CustomerView, DisplayAmount, Screen, UserEvent } from './api.js';
import { altPendingView, payByPhoneView } from './link-screen.js';
import { localDateTime } from './local-time.js';
import { screenReceipt, type IssuedReceipt } from './receipts.js';

/** The running machine of the configured parking model. */
export interface FlowRuntime {
  actor: AnyActorRef;
  settings: FlowSettings;
  /** The parking clock the machine runs on. */
  clock: { now(): number };
  /**
   * The demo ticket offered on the ticket screen with the simulated reader, taken when that screen comes up and kept
   * while it stays: a ticket does not change while the customer reads it, or hears it said again.
   */
  demoTicket?: string;
}

/** Creates (not starts) the actor of the configured model with the host's effects provided. */
export function createFlowActor(
  config: Config,
  effects: FlowEffects,
  logger: Logger,
  clock: { now(): number } = { now: Date.now },
  options: { payByLink?: boolean; wallClock?: { now(): number } } = {},
): FlowRuntime {
  const configured = flowSettingsFromConfig(config);
  // Without a way to learn that a link was paid (no notification listener or relay), pay by phone is not offered.
  const { payByPhone, ...rest } = configured;
  const settings: FlowSettings =
    options.payByLink === false || payByPhone === undefined ? rest : { ...rest, payByPhone };
  // The gateway's times (a DCC offer's expiry) are read on the terminal's own clock, not on the parking clock.
  const input = {
    settings,
    clock,
    ...(options.wallClock !== undefined ? { wallClock: options.wallClock } : {}),
  };
  const machine = (() => {
    switch (config.terminal.model) {
      case 'meter':
        return provideFlowEffects.meter(effects);
      case 'kiosk':
        return provideFlowEffects.kiosk(effects);
      case 'tap-and-go':
        return provideFlowEffects.tapAndGo(effects);
      case 'attended':
        return provideFlowEffects.attended(effects);
    }
  })();
  const actor = createActor(machine, { input }) as unknown as AnyActorRef;
  actor.subscribe({ error: (err: unknown) => logger.error({ err }, 'parking machine failed') });
  return { actor, settings, clock };
}

/** The catalogue key of each screen's title. */
export const TITLE_KEYS: Record<Screen, MessageKey> = {
  starting: 'screen.starting.title',
  recovering: 'screen.recovering.title',
  idle: 'screen.idle.title',
  'enter-ticket': 'screen.enterTicket.title',
  'choose-duration': 'screen.chooseDuration.title',
  'enter-amount': 'screen.enterAmount.title',
  confirm: 'screen.confirm.title',
  'choose-currency': 'screen.chooseCurrency.title',
  'present-card': 'screen.presentCard.title',
  processing: 'screen.processing.title',
  approved: 'screen.approved.title',
  declined: 'screen.declined.title',
  session: 'screen.session.title',
  'pay-by-phone': 'screen.payByPhone.title',
  'alt-details': 'screen.altDetails.title',
  'alt-pending': 'screen.altPending.title',
  error: 'screen.error.title',
  'out-of-service': 'screen.outOfService.title',
};

function display(minor: number, currency: string, locale: SupportedLocale): DisplayAmount {
  return { minor, currency, text: formatAmount(minor, currency, locale) };
}

/** The customer screen for the machine's current state. */
export function customerView(
  runtime: FlowRuntime,
  config: Config,
  lastReceipt: IssuedReceipt | undefined,
  language: string = config.terminal.locale,
): CustomerView {
  const tr = translator(language);
  const locale = tr.locale;
  const view = describeView(runtime.actor.getSnapshot() as Parameters<typeof describeView>[0]);
  const screen: Screen = view.screen;
  const actions: UserEvent['type'][] = view.actions;
  const result: CustomerView = {
    screen,
    title: tr.t(view.titleKey ?? TITLE_KEYS[screen]),
    message: tr.t(view.messageKey, view.messageParams),
    actions,
  };
  if (view.messageEvent !== undefined) result.messageEvent = view.messageEvent;
  if (view.amountMinor !== undefined) result.amount = display(view.amountMinor, view.currency, locale);
  else if (screen === 'enter-amount') result.amount = display(0, view.currency, locale);
  if (view.maskedPan !== undefined) result.maskedPan = view.maskedPan;
  if (view.link !== undefined) result.payByPhone = payByPhoneView(view.link, tr);
  if (view.altMethods !== undefined) result.altMethods = view.altMethods;
  if (view.altField !== undefined) {
    const f = view.altField;
    result.altField = {
      method: f.label,
      field: f.field,
      label: tr.t(`alt.field.${f.field}`),
      step: f.step,
      steps: f.steps,
      stepText: tr.t('label.alt.step', { step: f.step, steps: f.steps }),
      ...(f.problem !== undefined ? { problem: tr.t(`alt.problem.${f.problem}`) } : {}),
      ...(f.problemEvent !== undefined ? { problemEvent: f.problemEvent } : {}),
      inputMode: f.field === 'email' ? 'email' : f.field === 'phoneNumber' ? 'tel' : 'text',
    };
  }
  if (view.altSale !== undefined) result.altPending = altPendingView(view.altSale, tr);
  if (view.durations)
    result.durations = view.durations.map((d) => ({
      minutes: d.minutes,
      amount: display(d.amountMinor, view.currency, locale),
      label:
        screen === 'session'
          ? tr.t('duration.extension', { duration: formatDuration(d.minutes, locale) })
          : formatDuration(d.minutes, locale),
    }));
  if (view.dcc) {
    // gateway.md §5: both amounts formatted alike, the rate with its markup directly under it, the disclaimer
    // verbatim, a neutral title; the renderer shows the two as equal options with none pre-selected.
    const offer = view.dcc;
    result.dcc = {
      title: tr.t(TITLE_KEYS['choose-currency']),
      local: display(offer.localAmountMinor, offer.localCurrency, locale),
      card: display(offer.billingAmountMinor, offer.billingCurrency, locale),
      rate: dccRateText(offer, locale),
      markup: tr.t('dcc.markup', { margin: dccMarginText(offer, locale) }),
      disclaimer: offer.disclaimer,
      expiresAt: offer.expiresAtUtc,
    };
  }
  if (view.session) {
    const clockTime = (atMs: number): string =>
      formatClockTime(atMs, Date.now(), config.terminal.timezone, locale);
    result.session = {
      id: view.session.id,
      startedAt: clockTime(view.session.startedAtMs),
      ...(view.session.paidUntilMs !== undefined ? { paidUntil: clockTime(view.session.paidUntilMs) } : {}),
      ...(view.session.endedAtMs !== undefined ? { endedAt: clockTime(view.session.endedAtMs) } : {}),
      ...(view.session.heldMinor !== undefined
        ? { held: display(view.session.heldMinor, view.currency, locale) }
        : {}),
    };
  }
  if (screen === 'enter-ticket' && config.reader.kind === 'sim') {
    // With the simulated reader there is no ticket machine either: offer a ticket taken 95 minutes ago, its serial
    // the second and hundredth of now, so that each customer gets a ticket of their own (a paid one is not paid twice).
    const now = runtime.clock.now();
    runtime.demoTicket ??= `${localDateTime(new Date(now - 95 * 60_000), config.terminal.timezone).slice(0, 12)}${String(Math.floor(now / 10) % 10_000).padStart(4, '0')}`;
    result.message = tr.t('host.demoTicket', {
      message: result.message,
      minutes: 95,
      ticket: runtime.demoTicket,
    });
  } else runtime.demoTicket = undefined;
  // The receipt the host issued for this transaction (printed, on screen and in the QR alike), never a second wording.
  const shown =
    view.receipt?.transactionId ?? (screen === 'approved' ? lastReceipt?.document.transactionId : undefined);
  if (lastReceipt && shown === lastReceipt.document.transactionId)
    result.receipt = screenReceipt(lastReceipt, locale);
  return result;
}
