import type { Config } from '../config/index.js';
import type { ReaderHealth } from '../../devices/index.js';
import { screenOf } from '../flows/index.js';
import {
  CATALOGUES,
  LABEL_PREFIX,
  intlLocale,
  LOCALES,
  localeInfo,
  MESSAGE_KEYS,
  resolveLocale,
  supportedLocale,
  translator,
  type SupportedLocale,
} from '../i18n/index.js';
import type { CustomerView } from './api.js';
import { customerView, TITLE_KEYS, type FlowRuntime } from './flow-runtime.js';
import type { IssuedReceipt } from './receipts.js';

/** Where the terminal is in its life: a card is taken only when `ready` (money safety rule 3). */
export type HostPhase = 'starting' | 'recovering' | 'ready' | 'out-of-service' | 'closed';

/**
 * The customer's language: the terminal's `terminal.locale` (by the fallback rule) until the customer chooses
 * another with SET_LANGUAGE, and again once the machine is back on its idle screen after a session. Presentation
 * only: the machines never see it.
 */
export class CustomerLanguage {
  readonly initial: SupportedLocale;
  private chosen: SupportedLocale;
  private lastScreen: string | undefined;

  constructor(terminalLocale: string) {
    this.initial = resolveLocale(terminalLocale);
    this.chosen = this.initial;
  }

  get current(): SupportedLocale {
    return this.chosen;
  }

  /** Sets the language; false (and nothing changes) for a locale that has no catalogue. */
  choose(tag: string): boolean {
    const locale = supportedLocale(tag);
    if (locale === undefined) return false;
    this.chosen = locale;
    return true;
  }

  /** Called on every machine change: back on idle after another screen, the session is over. */
  follow(runtime: FlowRuntime): void {
    const screen = screenOf(runtime.actor.getSnapshot() as Parameters<typeof screenOf>[0]);
    if (screen === 'idle' && this.lastScreen !== undefined && this.lastScreen !== 'idle')
      this.chosen = this.initial;
    this.lastScreen = screen;
  }
}

/** The button and field labels of the renderer in `locale`, by their key without `label.` (`action.CANCEL`). */
function labelsOf(locale: SupportedLocale): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const key of MESSAGE_KEYS)
    if (key.startsWith(LABEL_PREFIX)) labels[key.slice(LABEL_PREFIX.length)] = CATALOGUES[locale][key];
  return labels;
}

function withLanguage(view: CustomerView, locale: SupportedLocale): CustomerView {
  return {
    ...view,
    language: {
      current: locale,
      lang: intlLocale(locale),
      direction: localeInfo(locale).direction,
      available: LOCALES.map(({ locale: id, name }) => ({ locale: id, name, lang: intlLocale(id) })),
    },
    labels: labelsOf(locale),
  };
}

/**
 * The out-of-service screen in `locale` (by the fallback rule): the operator's notice when there is one, otherwise the
 * catalogue's text. The one out-of-service screen of the terminal, whatever put it there — a fault, service mode, a
 * configuration refused at the start (refused-configuration.ts).
 */
export function outOfServiceScreen(locale: string, notice?: string): CustomerView {
  const { t, locale: resolved } = translator(resolveLocale(locale));
  return withLanguage(
    {
      screen: 'out-of-service',
      title: t(TITLE_KEYS['out-of-service']),
      message: notice ?? t('host.outOfService'),
      actions: [],
    },
    resolved,
  );
}

/**
 * The customer's screen: the machine's view while the terminal can take a card, otherwise a plain screen saying why
 * not (starting, checking earlier payments, out of service) — never operator detail. Every text is in `locale` (the
 * customer's language; `terminal.locale` when absent).
 */
export function customerScreen(input: {
  phase: HostPhase;
  runtime: FlowRuntime | undefined;
  config: Config;
  readerHealth: ReaderHealth;
  /** The receipt issued last (src/host/receipt-desk.ts): shown on the screen of its transaction. */
  lastReceipt: IssuedReceipt | undefined;
  locale?: string;
  /** The operator's notice on the out-of-service screen (service mode), shown as the operator wrote it. */
  serviceNotice?: string;
}): CustomerView {
  const { phase, runtime, config, readerHealth } = input;
  const { t, locale } = translator(resolveLocale(input.locale, config.terminal.locale));
  if (phase === 'out-of-service' || phase === 'closed')
    return outOfServiceScreen(locale, input.serviceNotice);
  if (phase !== 'ready' || !runtime) {
    const screen = phase === 'recovering' ? 'recovering' : 'starting';
    return withLanguage(
      {
        screen,
        title: t(TITLE_KEYS[screen]),
        message: t(phase === 'recovering' ? 'host.recovering' : 'host.starting'),
        actions: [],
      },
      locale,
    );
  }
  const customer = customerView(runtime, config, input.lastReceipt, locale);
  if (customer.screen === 'idle' && readerHealth === 'connecting')
    return withLanguage(
      {
        ...customer,
        screen: 'starting',
        title: t(TITLE_KEYS.starting),
        message: t('host.readerConnecting'),
        actions: [],
      },
      locale,
    );
  if (customer.screen === 'idle' && (readerHealth === 'disconnected' || readerHealth === 'reconnecting'))
    return withLanguage(
      {
        ...customer,
        screen: 'out-of-service',
        title: t(TITLE_KEYS['out-of-service']),
        message: t('host.readerUnavailable'),
        actions: [],
      },
      locale,
    );
  return withLanguage(customer, locale);
}
