/**
 * The languages the customer screens speak: each locale's native name (for the language button) and writing
 * direction. Locale ids are the underscore form of spec 002's locale list (`de_DE`); `Intl` takes the BCP 47 form
 * (`de-DE`), which `intlLocale` gives.
 */

export type Direction = 'ltr' | 'rtl';

export interface LocaleInfo {
  locale: SupportedLocale;
  /** The language's own name, so that a customer who reads no other finds it. */
  name: string;
  direction: Direction;
}

export const SUPPORTED_LOCALES = [
  'en_GB',
  'en_US',
  'de_DE',
  'fr_FR',
  'es_ES',
  'it_IT',
  'nl_NL',
  'pl_PL',
  'ar_AE',
] as const;

export type SupportedLocale = (typeof SUPPORTED_LOCALES)[number];

/** The last resort of the fallback rule: the locale whose catalogue every other one must match. */
export const BASE_LOCALE: SupportedLocale = 'en_GB';

const INFO: Record<SupportedLocale, Omit<LocaleInfo, 'locale'>> = {
  en_GB: { name: 'English (UK)', direction: 'ltr' },
  en_US: { name: 'English (US)', direction: 'ltr' },
  de_DE: { name: 'Deutsch', direction: 'ltr' },
  fr_FR: { name: 'Français', direction: 'ltr' },
  es_ES: { name: 'Español', direction: 'ltr' },
  it_IT: { name: 'Italiano', direction: 'ltr' },
  nl_NL: { name: 'Nederlands', direction: 'ltr' },
  pl_PL: { name: 'Polski', direction: 'ltr' },
  ar_AE: { name: 'العربية', direction: 'rtl' },
};

/** Every supported locale with its native name and direction, in the order the language button lists them. */
export const LOCALES: readonly LocaleInfo[] = SUPPORTED_LOCALES.map((locale) => ({
  locale,
  ...INFO[locale],
}));

/** The supported locale a tag names (`de_DE`, `de-DE`, `DE-de`), or undefined. */
export function supportedLocale(tag: string): SupportedLocale | undefined {
  const m = /^([a-zA-Z]{2})[-_]([a-zA-Z]{2})$/.exec(tag.trim());
  if (m === null) return undefined;
  const id = `${(m[1] ?? '').toLowerCase()}_${(m[2] ?? '').toUpperCase()}`;
  return (SUPPORTED_LOCALES as readonly string[]).includes(id) ? (id as SupportedLocale) : undefined;
}

/**
 * The fallback rule: the requested locale when it is supported, else the terminal's `terminal.locale` when that is,
 * else en_GB.
 */
export function resolveLocale(requested: string | undefined, terminalLocale?: string): SupportedLocale {
  return (
    (requested !== undefined ? supportedLocale(requested) : undefined) ??
    (terminalLocale !== undefined ? supportedLocale(terminalLocale) : undefined) ??
    BASE_LOCALE
  );
}

export function localeInfo(locale: SupportedLocale): LocaleInfo {
  return { locale, ...INFO[locale] };
}

export function directionOf(locale: SupportedLocale): Direction {
  return INFO[locale].direction;
}

/** The BCP 47 tag `Intl` takes (`de_DE` → `de-DE`). */
export function intlLocale(locale: SupportedLocale): string {
  return locale.replace('_', '-');
}
