import { IntlMessageFormat } from 'intl-messageformat';
import { formatMoney, type CurrencyDisplay } from '../money/index.js';
import { CATALOGUES, type MessageKey } from './catalogues.js';
import { intlLocale, resolveLocale, type SupportedLocale } from './locales.js';

/** An amount as a message parameter: formatted in the message's locale (`6,00 €`) before it is placed. */
export interface AmountParam {
  minor: number;
  currency: string;
}

/** The parameters of a message: numbers select plural forms (`{minutes, plural, …}`); amounts are formatted. */
export type MessageParams = Readonly<Record<string, string | number | AmountParam>>;

/** A message to show, not yet in a language: what the machines put in their context instead of English. */
export interface MessageRef {
  key: MessageKey;
  params?: MessageParams;
}

export interface Translator {
  readonly locale: SupportedLocale;
  /** The message in this translator's locale. @throws Error when a parameter the message names is missing. */
  readonly t: (key: MessageKey, params?: MessageParams) => string;
}

/** Compiled messages, per locale and key: a message is parsed once per process. */
const compiled = new Map<string, IntlMessageFormat>();
const translators = new Map<SupportedLocale, Translator>();

function message(locale: SupportedLocale, key: MessageKey): IntlMessageFormat {
  const id = `${locale}\u0000${key}`;
  let format = compiled.get(id);
  if (format === undefined) {
    format = new IntlMessageFormat(CATALOGUES[locale][key], intlLocale(locale));
    compiled.set(id, format);
  }
  return format;
}

function isAmount(value: MessageParams[string]): value is AmountParam {
  return typeof value === 'object';
}

/**
 * An amount in a locale, through src/money's one formatter (`formatAmount(600, 'EUR', 'de_DE')` = `6,00 €`; with
 * `display` `code`, `6,00 EUR`).
 */
export function formatAmount(
  minor: number,
  currency: string,
  locale: SupportedLocale,
  display: CurrencyDisplay = 'symbol',
): string {
  return formatMoney(minor, currency, intlLocale(locale), display);
}

/** The translator of a locale; an unsupported one falls back to en_GB (see `resolveLocale` for the full rule). */
export function translator(locale: string): Translator {
  const resolved = resolveLocale(locale);
  let found = translators.get(resolved);
  if (found === undefined) {
    const t = (key: MessageKey, params?: MessageParams): string => {
      const values: Record<string, string | number> = {};
      for (const [name, value] of Object.entries(params ?? {}))
        values[name] = isAmount(value) ? formatAmount(value.minor, value.currency, resolved) : value;
      return String(message(resolved, key).format(values));
    };
    found = { locale: resolved, t };
    translators.set(resolved, found);
  }
  return found;
}

/** The text of a message reference in a locale. */
export function formatMessage(ref: MessageRef, locale: string): string {
  return translator(locale).t(ref.key, ref.params);
}
