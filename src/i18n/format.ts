import { translator } from './translator.js';
import { intlLocale, resolveLocale } from './locales.js';

/**
 * Durations and times in the customer's language: durations as ICU plurals of hours and minutes from the catalogues
 * (`1 h 30 min`, `1 godzina 30 minut`), times through `Intl.DateTimeFormat` in the terminal's time zone.
 */

/** A duration in whole minutes: `45 min`, `2 h`, `1 h 30 min` (en_GB). */
export function formatDuration(minutes: number, locale: string): string {
  const { t } = translator(locale);
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60;
  if (hours === 0) return t('duration.minutes', { minutes: rest });
  return rest === 0 ? t('duration.hours', { hours }) : t('duration.hoursMinutes', { hours, minutes: rest });
}

function dayKey(atMs: number, timeZone: string): string {
  return new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).format(atMs);
}

/**
 * A clock time for the session panel: the time alone when it is on the day of `nowMs` in `timeZone` (`14:05`), else
 * with the day and month (`23/11 09:30` in en_GB).
 */
export function formatClockTime(atMs: number, nowMs: number, timeZone: string, locale: string): string {
  const tag = intlLocale(resolveLocale(locale));
  const time = new Intl.DateTimeFormat(tag, { timeZone, hour: '2-digit', minute: '2-digit' }).format(atMs);
  if (dayKey(atMs, timeZone) === dayKey(nowMs, timeZone)) return time;
  const day = new Intl.DateTimeFormat(tag, { timeZone, day: '2-digit', month: '2-digit' }).format(atMs);
  return translator(locale).t('time.dayAndTime', { day, time });
}

/** A date and time for a receipt, to the second, in `timeZone`. */
export function formatDateTime(atMs: number, timeZone: string, locale: string): string {
  return new Intl.DateTimeFormat(intlLocale(resolveLocale(locale)), {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).format(atMs);
}

/**
 * A decimal as the gateway sent it (`167.01795`, an exchange rate or a margin) written the way `locale` writes numbers
 * (`167,01795` in de_DE), every digit kept: no rounding, no digit added or dropped (spec 001: the rate is shown as
 * offered). A text that is not a plain decimal is returned unchanged.
 */
export function formatDecimal(text: string, locale: string): string {
  const m = /^\d+(?:\.(\d+))?$/.exec(text);
  if (m === null) return text;
  const decimals = m[1]?.length ?? 0;
  return new Intl.NumberFormat(intlLocale(resolveLocale(locale)), {
    minimumFractionDigits: decimals,
    maximumFractionDigits: decimals,
    // The text itself, not a float: Intl formats a decimal string exactly.
  }).format(text as `${number}`);
}
