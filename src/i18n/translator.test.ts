import { describe, expect, it } from 'vitest';
import {
  directionOf,
  formatAmount,
  formatClockTime,
  formatDecimal,
  formatDuration,
  LOCALES,
  resolveLocale,
  supportedLocale,
  translator,
} from './index.js';

describe('locales', () => {
  it('writes ar_AE right to left and every other locale left to right', () => {
    expect(directionOf('ar_AE')).toBe('rtl');
    expect(LOCALES.filter((l) => l.direction === 'rtl').map((l) => l.locale)).toEqual(['ar_AE']);
  });

  it('names every language in itself', () => {
    expect(LOCALES.map((l) => l.name)).toContain('Polski');
    expect(LOCALES.find((l) => l.locale === 'ar_AE')?.name).toBe('العربية');
  });

  it('falls back from an unsupported locale to terminal.locale, then to en_GB', () => {
    expect(resolveLocale('de-DE', 'en-GB')).toBe('de_DE');
    expect(resolveLocale('xx_XX', 'fr-FR')).toBe('fr_FR');
    expect(resolveLocale('xx_XX', 'ja-JP')).toBe('en_GB');
    expect(resolveLocale(undefined, undefined)).toBe('en_GB');
    expect(supportedLocale('pt_BR')).toBeUndefined();
    expect(translator('xx_XX').locale).toBe('en_GB');
  });
});

describe('formatting per locale', () => {
  it('formats amounts with Intl currency rules', () => {
    expect(formatAmount(600, 'EUR', 'de_DE')).toBe('6,00\u00a0€');
    expect(formatAmount(600, 'GBP', 'en_GB')).toBe('£6.00');
    expect(formatAmount(123456, 'EUR', 'fr_FR')).toMatch(/^1\s234,56\s€$/);
    expect(formatAmount(600, 'JPY', 'en_GB')).toBe('JP¥600');
  });

  it('writes a decimal of the gateway with the separators of the locale, every digit kept', () => {
    expect(formatDecimal('167.01795', 'de_DE')).toBe('167,01795');
    expect(formatDecimal('167.01795', 'en_GB')).toBe('167.01795');
    expect(formatDecimal('0.123456789012', 'pl_PL')).toBe('0,123456789012');
    expect(formatDecimal('3.50', 'fr_FR')).toBe('3,50');
    expect(formatDecimal('1234.5', 'de_DE')).toBe('1.234,5');
    expect(formatDecimal('3', 'it_IT')).toBe('3');
    expect(formatDecimal('n/a', 'de_DE')).toBe('n/a');
  });

  it('formats durations as today in en_GB', () => {
    expect(formatDuration(30, 'en_GB')).toBe('30 min');
    expect(formatDuration(60, 'en_GB')).toBe('1 h');
    expect(formatDuration(90, 'en_GB')).toBe('1 h 30 min');
    expect(formatDuration(90, 'de_DE')).toBe('1 Std. 30 Min.');
  });

  it('uses the Polish one, few and many forms', () => {
    expect(formatDuration(1, 'pl_PL')).toBe('1 minuta');
    expect(formatDuration(2, 'pl_PL')).toBe('2 minuty');
    expect(formatDuration(5, 'pl_PL')).toBe('5 minut');
    expect(formatDuration(22, 'pl_PL')).toBe('22 minuty');
    expect(formatDuration(25, 'pl_PL')).toBe('25 minut');
    expect(formatDuration(120, 'pl_PL')).toBe('2 godziny');
    expect(formatDuration(300 + 12, 'pl_PL')).toBe('5 godzin 12 minut');
    expect(translator('pl_PL').t('meter.extended', { added: 1 })).toBe('Przedłużono o 1 minutę');
  });

  it('uses the Arabic one, two and few forms', () => {
    const { t } = translator('ar_AE');
    expect(t('meter.extended', { added: 1 })).toBe('تم التمديد دقيقة واحدة');
    expect(t('meter.extended', { added: 2 })).toBe('تم التمديد دقيقتان');
    expect(t('meter.extended', { added: 3 })).toBe('تم التمديد 3 دقائق');
  });

  it('keeps the en_GB sentences and places formatted amounts', () => {
    const { t } = translator('en_GB');
    expect(t('kiosk.parkingFee', { minutes: 95 })).toBe('Parking fee for 95 minutes');
    expect(
      t('meter.sessionOpenHeld', {
        held: { minor: 1200, currency: 'GBP' },
        minutes: 60,
        price: { minor: 300, currency: 'GBP' },
      }),
    ).toBe(
      'Parking session open: £12.00 held on your card; 60 minutes cost £3.00, you pay for the time you park',
    );
    expect(
      translator('de_DE').t('meter.confirm', { minutes: 60, price: { minor: 300, currency: 'EUR' } }),
    ).toBe('60 Minuten parken: 3,00\u00a0€');
  });

  it('shows a clock time alone on the same day and with the day otherwise', () => {
    const now = Date.UTC(2025, 10, 24, 12, 0);
    expect(formatClockTime(Date.UTC(2025, 10, 24, 14, 5), now, 'Europe/London', 'en_GB')).toBe('14:05');
    expect(formatClockTime(Date.UTC(2025, 10, 23, 9, 30), now, 'Europe/London', 'en_GB')).toBe('23/11 09:30');
    expect(formatClockTime(Date.UTC(2025, 10, 23, 9, 30), now, 'Europe/Berlin', 'de_DE')).toBe(
      '23.11. 10:30',
    );
  });
});
