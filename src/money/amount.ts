import { requireCurrency } from './currency.js';

/** An amount in integer minor units (cents for EUR, yen for JPY, fils for KWD) of one currency. */
export interface Money {
  readonly minor: number;
  readonly currency: string;
}

/** Thrown when a decimal string or a minor-unit value cannot be an amount of the currency. */
export class AmountError extends Error {
  override readonly name = 'AmountError';
  constructor(
    readonly code: 'AMOUNT_FORMAT' | 'AMOUNT_PRECISION' | 'AMOUNT_RANGE',
    message: string,
  ) {
    super(message);
  }
}

/** The largest amount in minor units the terminal handles: 12 BCD digits (EMV 9F02, n12). */
export const MAX_MINOR = 999_999_999_999;

function assertMinor(minor: number): void {
  if (!Number.isSafeInteger(minor) || minor < 0 || minor > MAX_MINOR) {
    throw new AmountError('AMOUNT_RANGE', `amount ${minor} is not an integer between 0 and ${MAX_MINOR}`);
  }
}

/**
 * The gateway's decimal string for an amount: "12.50" for 1250 EUR, "1250" for 1250 JPY, "1.250" for 1250 KWD.
 * Decimal strings exist only at the gateway boundary (DESIGN.md, money safety rule 5).
 */
export function toDecimalString(minor: number, currency: string): string {
  assertMinor(minor);
  const { exponent } = requireCurrency(currency);
  if (exponent === 0) return String(minor);
  const digits = String(minor).padStart(exponent + 1, '0');
  return `${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`;
}

/**
 * Parses a gateway amount ("12.5", "12.50", 12.5, "12") into minor units. Refuses more decimals than the currency
 * has (never rounds money silently), signs, exponents and anything that is not a plain decimal.
 */
export function parseDecimal(value: string | number, currency: string): number {
  const { exponent } = requireCurrency(currency);
  const text = typeof value === 'number' ? numberToPlainString(value) : value.trim();
  const m = DECIMAL.exec(text);
  if (!m) throw new AmountError('AMOUNT_FORMAT', `"${String(value)}" is not a decimal amount`);
  const whole = m[1] ?? '0';
  let frac = (m[2] ?? '').replace(TRAILING_ZEROS, '');
  if (frac.length > exponent) {
    throw new AmountError(
      'AMOUNT_PRECISION',
      `"${String(value)}" has more than ${exponent} decimals for ${currency}`,
    );
  }
  frac = frac.padEnd(exponent, '0');
  const minor = Number(whole + frac);
  assertMinor(minor);
  return minor;
}

/** A plain decimal: digits, then optionally a point and digits (none needed). */
const DECIMAL = /^(\d+)(?:\.(\d*))?$/;
const TRAILING_ZEROS = /0+$/;

function numberToPlainString(n: number): string {
  if (!Number.isFinite(n) || n < 0) return String(n);
  // Shortest round-trip representation; toFixed avoids exponent notation for the magnitudes we accept.
  const s = String(n);
  return s.includes('e') ? n.toFixed(20).replace(/0+$/, '').replace(/\.$/, '') : s;
}

/** How an amount writes its currency: its symbol in the locale ("€", "£"), or its ISO code ("EUR"). */
export type CurrencyDisplay = 'symbol' | 'code';

/**
 * A human display of the amount with its currency, e.g. "€12.50" (en-GB) or "12,50 €" (de-DE); with `display`
 * `code`, the currency as its ISO code ("12,50 EUR", for a printer table without the symbol). For screens and
 * receipts only; never parse it back.
 */
export function formatMoney(
  minor: number,
  currency: string,
  locale = 'en-GB',
  display: CurrencyDisplay = 'symbol',
): string {
  assertMinor(minor);
  const { exponent } = requireCurrency(currency);
  const fmt = new Intl.NumberFormat(locale, {
    style: 'currency',
    currency,
    currencyDisplay: display,
    minimumFractionDigits: exponent,
    maximumFractionDigits: exponent,
  });
  // Format from the decimal string so that no float arithmetic touches the amount.
  return fmt.format(toDecimalString(minor, currency) as unknown as number);
}
