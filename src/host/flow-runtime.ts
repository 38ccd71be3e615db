import { createActor, type AnyActorRef } from 'xstate';
import type { Config } from '../config/index.js';
import {
  dccMarkupText,
  dccRateText,
  describeView,
  flowSettingsFromConfig,
  provideFlowEffects,
  type FlowEffects,
  type FlowSettings,
  type ReceiptData,
} from '../flows/index.js';
import type { Logger } from '../log/index.js';
import { formatMoney } from '../money/index.js';
import type { CustomerView, DisplayAmount, Screen, UserEvent } from './api.js';
import { localDateTime } from './local-time.js';

/** The running machine of the configured parking model. */
export interface FlowRuntime {
  actor: AnyActorRef;
  settings: FlowSettings;
  /** The parking clock the machine runs on. */
  clock: { now(): number };
}

/** Creates (not starts) the actor of the configured model with the host's effects provided. */
export function createFlowActor(
  config: Config,
  effects: FlowEffects,
  logger: Logger,
  clock: { now(): number } = { now: Date.now },
): FlowRuntime {
  const settings = flowSettingsFromConfig(config);
  const input = { settings, clock };
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

const TITLES: Record<Screen, string> = {
  starting: 'Starting',
  recovering: 'One moment',
  idle: 'Welcome',
  'enter-ticket': 'Your ticket',
  'choose-duration': 'How long will you stay?',
  'enter-amount': 'Amount',
  confirm: 'Please confirm',
  'choose-currency': 'Select currency',
  'present-card': 'Present your card',
  processing: 'Processing',
  approved: 'Approved',
  declined: 'Declined',
  session: 'Your parking',
  error: 'Sorry',
  'out-of-service': 'Out of service',
};

function display(minor: number, currency: string, locale: string): DisplayAmount {
  return { minor, currency, text: formatMoney(minor, currency, locale) };
}

/** `HH:MM` in the terminal's time zone, with the date when it is not today (`22/11 14:05`). */
function clockTime(atMs: number, timeZone: string): string {
  const t = localDateTime(new Date(atMs), timeZone);
  const today = localDateTime(new Date(), timeZone).slice(0, 8);
  const hm = `${t.slice(8, 10)}:${t.slice(10, 12)}`;
  return t.slice(0, 8) === today ? hm : `${t.slice(6, 8)}/${t.slice(4, 6)} ${hm}`;
}

function durationLabel(minutes: number): string {
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  if (h === 0) return `${m} min`;
  return m === 0 ? `${h} h` : `${h} h ${m} min`;
}

function receiptView(r: ReceiptData, locale: string, timeZone: string): NonNullable<CustomerView['receipt']> {
  const t = localDateTime(new Date(r.atMs), timeZone);
  const when = `${t.slice(0, 4)}-${t.slice(4, 6)}-${t.slice(6, 8)} ${t.slice(8, 10)}:${t.slice(10, 12)}:${t.slice(12, 14)}`;
  return {
    title: r.comments,
    lines: [
      { label: 'Amount', value: formatMoney(r.amountMinor, r.currency, locale) },
      ...(r.maskedPan ? [{ label: 'Card', value: r.maskedPan }] : []),
      ...r.lines,
      { label: 'Transaction', value: r.transactionId },
      ...(r.gatewayId ? [{ label: 'Reference', value: r.gatewayId }] : []),
      { label: 'Date', value: when },
    ],
  };
}

/** The customer screen for the machine's current state. */
export function customerView(
  runtime: FlowRuntime,
  config: Config,
  lastReceipt: ReceiptData | undefined,
): CustomerView {
  const locale = config.terminal.locale;
  const view = describeView(runtime.actor.getSnapshot() as Parameters<typeof describeView>[0]);
  const screen: Screen = view.screen;
  const actions: UserEvent['type'][] = view.actions;
  const result: CustomerView = {
    screen,
    title: screen === 'approved' && view.reason === 'OFFLINE_STORED' ? 'Approved' : TITLES[screen],
    message: view.message,
    actions,
  };
  if (view.amountMinor !== undefined) result.amount = display(view.amountMinor, view.currency, locale);
  else if (screen === 'enter-amount') result.amount = display(0, view.currency, locale);
  if (view.maskedPan !== undefined) result.maskedPan = view.maskedPan;
  if (view.durations)
    result.durations = view.durations.map((d) => ({
      minutes: d.minutes,
      amount: display(d.amountMinor, view.currency, locale),
      label: screen === 'session' ? `+${durationLabel(d.minutes)}` : durationLabel(d.minutes),
    }));
  if (view.dcc) {
    // gateway.md §5: both amounts formatted alike, the rate with its markup directly under it, the disclaimer
    // verbatim, a neutral title; the renderer shows the two as equal options with none pre-selected.
    const offer = view.dcc;
    result.dcc = {
      title: TITLES['choose-currency'],
      local: display(offer.localAmountMinor, offer.localCurrency, locale),
      card: display(offer.billingAmountMinor, offer.billingCurrency, locale),
      rate: dccRateText(offer),
      markup: dccMarkupText(offer),
      disclaimer: offer.disclaimer,
      expiresAt: offer.expiresAtUtc,
    };
  }
  if (view.session) {
    result.session = {
      id: view.session.id,
      startedAt: clockTime(view.session.startedAtMs, config.terminal.timezone),
      ...(view.session.paidUntilMs !== undefined
        ? { paidUntil: clockTime(view.session.paidUntilMs, config.terminal.timezone) }
        : {}),
      ...(view.session.heldMinor !== undefined
        ? { held: display(view.session.heldMinor, view.currency, locale) }
        : {}),
    };
  }
  if (screen === 'enter-ticket' && config.reader.kind === 'sim') {
    // With the simulated reader there is no ticket machine either: offer a ticket taken 95 minutes ago.
    const ticket = `${localDateTime(new Date(runtime.clock.now() - 95 * 60_000), config.terminal.timezone).slice(0, 12)}0001`;
    result.message = `${view.message} (demo ticket, entered 95 minutes ago: ${ticket})`;
  }
  const receipt = view.receipt ?? (screen === 'approved' ? lastReceipt : undefined);
  if (receipt) result.receipt = receiptView(receipt, locale, config.terminal.timezone);
  return result;
}
