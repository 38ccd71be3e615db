/** An ISO 4217 currency: alphabetic code, numeric code (3 digits as a string) and minor-unit exponent. */
export interface Currency {
  readonly alpha: string;
  readonly numeric: string;
  readonly exponent: number;
  readonly name: string;
}

// ISO 4217 (list one, 2024 edition): the currencies a parking terminal meets in practice, including the
// zero- and three-decimal ones that break naive "cents" code.
const TABLE: readonly Currency[] = [
  { alpha: 'AED', numeric: '784', exponent: 2, name: 'UAE Dirham' },
  { alpha: 'AUD', numeric: '036', exponent: 2, name: 'Australian Dollar' },
  { alpha: 'BHD', numeric: '048', exponent: 3, name: 'Bahraini Dinar' },
  { alpha: 'BRL', numeric: '986', exponent: 2, name: 'Brazilian Real' },
  { alpha: 'CAD', numeric: '124', exponent: 2, name: 'Canadian Dollar' },
  { alpha: 'CHF', numeric: '756', exponent: 2, name: 'Swiss Franc' },
  { alpha: 'CLP', numeric: '152', exponent: 0, name: 'Chilean Peso' },
  { alpha: 'CNY', numeric: '156', exponent: 2, name: 'Yuan Renminbi' },
  { alpha: 'CZK', numeric: '203', exponent: 2, name: 'Czech Koruna' },
  { alpha: 'DKK', numeric: '208', exponent: 2, name: 'Danish Krone' },
  { alpha: 'EUR', numeric: '978', exponent: 2, name: 'Euro' },
  { alpha: 'GBP', numeric: '826', exponent: 2, name: 'Pound Sterling' },
  { alpha: 'HKD', numeric: '344', exponent: 2, name: 'Hong Kong Dollar' },
  { alpha: 'HUF', numeric: '348', exponent: 2, name: 'Forint' },
  { alpha: 'IDR', numeric: '360', exponent: 2, name: 'Rupiah' },
  { alpha: 'ILS', numeric: '376', exponent: 2, name: 'New Israeli Sheqel' },
  { alpha: 'INR', numeric: '356', exponent: 2, name: 'Indian Rupee' },
  { alpha: 'ISK', numeric: '352', exponent: 0, name: 'Iceland Krona' },
  { alpha: 'JOD', numeric: '400', exponent: 3, name: 'Jordanian Dinar' },
  { alpha: 'JPY', numeric: '392', exponent: 0, name: 'Yen' },
  { alpha: 'KRW', numeric: '410', exponent: 0, name: 'Won' },
  { alpha: 'KWD', numeric: '414', exponent: 3, name: 'Kuwaiti Dinar' },
  { alpha: 'MXN', numeric: '484', exponent: 2, name: 'Mexican Peso' },
  { alpha: 'MYR', numeric: '458', exponent: 2, name: 'Malaysian Ringgit' },
  { alpha: 'NOK', numeric: '578', exponent: 2, name: 'Norwegian Krone' },
  { alpha: 'NZD', numeric: '554', exponent: 2, name: 'New Zealand Dollar' },
  { alpha: 'OMR', numeric: '512', exponent: 3, name: 'Rial Omani' },
  { alpha: 'PHP', numeric: '608', exponent: 2, name: 'Philippine Peso' },
  { alpha: 'PLN', numeric: '985', exponent: 2, name: 'Zloty' },
  { alpha: 'RON', numeric: '946', exponent: 2, name: 'Romanian Leu' },
  { alpha: 'SAR', numeric: '682', exponent: 2, name: 'Saudi Riyal' },
  { alpha: 'SEK', numeric: '752', exponent: 2, name: 'Swedish Krona' },
  { alpha: 'SGD', numeric: '702', exponent: 2, name: 'Singapore Dollar' },
  { alpha: 'THB', numeric: '764', exponent: 2, name: 'Baht' },
  { alpha: 'TND', numeric: '788', exponent: 3, name: 'Tunisian Dinar' },
  { alpha: 'TRY', numeric: '949', exponent: 2, name: 'Turkish Lira' },
  { alpha: 'TWD', numeric: '901', exponent: 2, name: 'New Taiwan Dollar' },
  { alpha: 'USD', numeric: '840', exponent: 2, name: 'US Dollar' },
  { alpha: 'VND', numeric: '704', exponent: 0, name: 'Dong' },
  { alpha: 'ZAR', numeric: '710', exponent: 2, name: 'Rand' },
];

const BY_ALPHA = new Map(TABLE.map((c) => [c.alpha, c]));
const BY_NUMERIC = new Map(TABLE.map((c) => [c.numeric, c]));

/** Every currency the terminal knows, in alphabetic order. */
export const CURRENCIES: readonly Currency[] = TABLE;

/** The currency with this alphabetic code (case-sensitive, upper case), or undefined. */
export function currencyByAlpha(alpha: string): Currency | undefined {
  return BY_ALPHA.get(alpha);
}

/** The currency with this numeric code ("978", with leading zeros), or undefined. */
export function currencyByNumeric(numeric: string): Currency | undefined {
  return BY_NUMERIC.get(numeric.padStart(3, '0'));
}

/** Like {@link currencyByAlpha} but throws a RangeError naming the code when it is unknown. */
export function requireCurrency(alpha: string): Currency {
  const c = BY_ALPHA.get(alpha);
  if (!c) throw new RangeError(`unknown currency code "${alpha}"`);
  return c;
}
