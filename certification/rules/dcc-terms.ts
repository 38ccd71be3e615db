/**
 * The DCC field set of a request and the terms a converted authorization fixes (spec 001, "Currency conversion
 * (DCC)"), read from the message as sent: `orderInformation.amountDetails` with `currencyConversion.indicator` "1",
 * `exchangeRate`, `exchangeRateTimeStamp`, `currency`, `totalAmount`, and original* (processor family A) or foreign*
 * (family B). The rules that use them are in dcc.ts; the session keeps the terms (session-state.ts).
 */
import { currencyByAlpha } from '../../src/money/index.js';
import { field, text, type MessageView } from './message.js';

export const AMOUNT_DETAILS = 'orderInformation.amountDetails';
/** The fields of the DCC field set. */
export const DCC_FIELDS = {
  indicator: `${AMOUNT_DETAILS}.currencyConversion.indicator`,
  rate: `${AMOUNT_DETAILS}.exchangeRate`,
  stamp: `${AMOUNT_DETAILS}.exchangeRateTimeStamp`,
  total: `${AMOUNT_DETAILS}.totalAmount`,
  currency: `${AMOUNT_DETAILS}.currency`,
  originalAmount: `${AMOUNT_DETAILS}.originalAmount`,
  originalCurrency: `${AMOUNT_DETAILS}.originalCurrency`,
  foreignAmount: `${AMOUNT_DETAILS}.foreignAmount`,
  foreignCurrency: `${AMOUNT_DETAILS}.foreignCurrency`,
} as const;

/** Fields whose presence makes a request a converted one (indicator "2"/"3" alone is no conversion). */
const CONVERSION_FIELDS: readonly string[] = [
  DCC_FIELDS.rate,
  DCC_FIELDS.stamp,
  DCC_FIELDS.originalAmount,
  DCC_FIELDS.originalCurrency,
  DCC_FIELDS.foreignAmount,
  DCC_FIELDS.foreignCurrency,
];

/** One side of a conversion: an amount and its currency, with the fields they came from. */
interface Side {
  amount: unknown;
  currency: string | undefined;
  amountField: string;
  currencyField: string;
}

/** The DCC field set of one request, as sent. */
export interface DccFieldSet {
  /** A: original* sent; B: foreign* sent; undefined: neither (an incomplete set). */
  family: 'A' | 'B' | undefined;
  indicator: string | undefined;
  rate: string | undefined;
  rateTimeStamp: string | undefined;
  /** The merchant's price (family A original*, family B total/currency). */
  local: Side;
  /** The card's billing amount (family A total/currency, family B foreign*). */
  billing: Side;
  /** The conversion fields present, in a stable order (the first names a finding). */
  present: string[];
}

/** What a converted authorization or sale fixed for its follow-ons. */
export interface DccAuthorization {
  /** Index of the authorization or sale in the session. */
  index: number;
  family: 'A' | 'B' | undefined;
  rate: string | undefined;
  rateTimeStamp: string | undefined;
  localCurrency: string | undefined;
  billingCurrency: string | undefined;
}

/** One rate a DCC offer of the session gave (`orderInformation.currencyConversion.offer[]`). */
export interface DccOfferRate {
  index: number;
  rate: string;
  inverted: boolean;
  originalCurrency: string | undefined;
  currency: string | undefined;
  /** The offered local price and its converted amount, as decimal strings. */
  originalAmount: unknown;
  amount: unknown;
}

function side(body: unknown, amountField: string, currencyField: string): Side {
  return {
    amount: field(body, amountField),
    currency: text(body, currencyField),
    amountField,
    currencyField,
  };
}

/** The DCC field set of `body`, or undefined when the request converts nothing. */
export function dccFieldSet(body: unknown): DccFieldSet | undefined {
  const indicator = text(body, DCC_FIELDS.indicator);
  const present = [
    ...(indicator === '1' ? [DCC_FIELDS.indicator] : []),
    ...CONVERSION_FIELDS.filter((f) => field(body, f) !== undefined),
  ];
  if (present.length === 0) return undefined;
  const familyA =
    field(body, DCC_FIELDS.originalAmount) !== undefined ||
    field(body, DCC_FIELDS.originalCurrency) !== undefined;
  const familyB =
    field(body, DCC_FIELDS.foreignAmount) !== undefined ||
    field(body, DCC_FIELDS.foreignCurrency) !== undefined;
  const family = familyA ? 'A' : familyB ? 'B' : undefined;
  const total = side(body, DCC_FIELDS.total, DCC_FIELDS.currency);
  return {
    family,
    indicator,
    rate: text(body, DCC_FIELDS.rate),
    rateTimeStamp: text(body, DCC_FIELDS.stamp),
    local: family === 'A' ? side(body, DCC_FIELDS.originalAmount, DCC_FIELDS.originalCurrency) : total,
    billing: family === 'B' ? side(body, DCC_FIELDS.foreignAmount, DCC_FIELDS.foreignCurrency) : total,
    present,
  };
}

/** The terms a converted original fixed, or null when it converted nothing. */
export function dccAuthorizationOf(view: MessageView): DccAuthorization | null {
  const set = dccFieldSet(view.message.body);
  if (set === undefined) return null;
  return {
    index: view.index,
    family: set.family,
    rate: set.rate,
    rateTimeStamp: set.rateTimeStamp,
    localCurrency: set.family === undefined ? undefined : set.local.currency,
    billingCurrency: set.family === undefined ? undefined : set.billing.currency,
  };
}

/** The rates a DCC offer answer gave (none for a declined offer or an unknown answer). */
export function offerRates(view: MessageView): DccOfferRate[] {
  const offers = field(view.message.response, 'orderInformation.currencyConversion.offer');
  if (!Array.isArray(offers)) return [];
  const out: DccOfferRate[] = [];
  for (const offer of offers as unknown[]) {
    const rate = text(offer, 'exchangeRate');
    if (rate === undefined || parseRate(rate) === undefined) continue;
    out.push({
      index: view.index,
      rate,
      inverted: field(offer, 'exchangeRateInverted') === true,
      originalCurrency: text(offer, 'originalCurrency'),
      currency: text(offer, 'currency'),
      originalAmount: field(offer, 'originalAmount'),
      amount: field(offer, 'amount'),
    });
  }
  return out;
}

/** A positive decimal rate as an integer and its scale ("167.01795" → 16701795n, 5). */
function parseRate(rate: string): { digits: bigint; scale: number } | undefined {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(rate);
  if (m === null) return undefined;
  const fraction = m[2] ?? '';
  const digits = BigInt(`${m[1] ?? '0'}${fraction}`);
  return digits === 0n ? undefined : { digits, scale: fraction.length };
}

/** Whether two decimal rates are the same number ("1.10" and "1.1" are). */
export function sameRate(a: string, b: string): boolean {
  const x = parseRate(a);
  const y = parseRate(b);
  if (x === undefined || y === undefined) return a === b;
  const scale = Math.max(x.scale, y.scale);
  return x.digits * 10n ** BigInt(scale - x.scale) === y.digits * 10n ** BigInt(scale - y.scale);
}

/**
 * Whether `billingMinor` is `localMinor` converted at `rate` (units of billing per unit of local; inverted: units of
 * local per unit of billing). Spec 001 names no rounding, only the rate: any rounding to the billing currency's minor
 * unit is accepted, and one minor unit either side of it (a partial amount is kept strictly below the full one).
 */
export function convertsAt(
  localMinor: number,
  localCurrency: string,
  billingMinor: number,
  billingCurrency: string,
  rate: string,
  inverted: boolean,
): boolean {
  const r = parseRate(rate);
  const local = currencyByAlpha(localCurrency);
  const billing = currencyByAlpha(billingCurrency);
  if (r === undefined || local === undefined || billing === undefined) return true;
  const rateUnit = 10n ** BigInt(r.scale);
  const billingUnit = 10n ** BigInt(billing.exponent);
  const localUnit = 10n ** BigInt(local.exponent);
  const numerator = inverted
    ? BigInt(localMinor) * rateUnit * billingUnit
    : BigInt(localMinor) * r.digits * billingUnit;
  const denominator = inverted ? r.digits * localUnit : rateUnit * localUnit;
  const floor = numerator / denominator;
  const ceil = (numerator + denominator - 1n) / denominator;
  const b = BigInt(billingMinor);
  return b >= floor - 1n && b <= ceil + 1n;
}
