import { BASE_LOCALE, formatDecimal } from '../i18n/index.js';
import { currencyByAlpha, requireCurrency, toDecimalString } from '../money/index.js';
import { isoDateTimeMs } from '../vocabulary/gateway-time.js';
import type { DccOfferSummary, DccSelection } from './effects.js';

/**
 * Wording of a currency conversion that the choice screen and the receipt share, so that both show the same rate and
 * markup (spec 001, DCC flow steps 3 and 4: the confirmation or receipt repeats what the choice showed).
 */

/**
 * The rate as the offer states it, in the customer's way of writing numbers: "1 GBP = 1.331838 USD" (en_GB),
 * "1 GBP = 1,331838 USD" (de_DE); the gateway's digits, unrounded. The choice screen and the receipt both word it
 * here.
 */
export function dccRateText(
  offer: Pick<DccOfferSummary, DccRateField>,
  locale: string = BASE_LOCALE,
): string {
  const rate = formatDecimal(offer.exchangeRate, locale);
  return offer.exchangeRateInverted
    ? `1 ${offer.billingCurrency} = ${rate} ${offer.localCurrency}`
    : `1 ${offer.localCurrency} = ${rate} ${offer.billingCurrency}`;
}

type DccRateField = 'exchangeRate' | 'exchangeRateInverted' | 'localCurrency' | 'billingCurrency';

/** The markup percentage of an offer in the customer's way of writing numbers ("3.5", "3,5"), for the catalogues. */
export function dccMarginText(
  offer: Pick<DccOfferSummary, 'marginRate'>,
  locale: string = BASE_LOCALE,
): string {
  return formatDecimal(offer.marginRate, locale);
}

/** The markup line shown directly under the rate (gateway.md §5). */
export function dccMarkupText(offer: DccOfferSummary): string {
  return `includes ${dccMarginText(offer)}% margin over the wholesale rate`;
}

/**
 * How much longer the customer may choose `offer` on the choice screen, milliseconds at `nowMs` (the model's clock):
 * until `marginMs` before its `expiresAtUtc`, so that a converted authorization chosen in time still reaches the
 * gateway before the offer expires (the gateway refuses one sent against an expired offer; spec 001, DCC
 * authorization). Zero or less: the offer can no longer be chosen — the transaction asks for a fresh one, or pays in
 * the local currency as without an offer. An expiry that cannot be read is already past.
 */
export function offerChoosableForMs(
  offer: Pick<DccOfferSummary, 'expiresAtUtc'>,
  nowMs: number,
  marginMs: number,
): number {
  const expiresAtMs = isoDateTimeMs(offer.expiresAtUtc);
  return expiresAtMs === undefined ? 0 : expiresAtMs - marginMs - nowMs;
}

/** A decimal string as an integer and its number of decimals ("1.331838" → 1331838n, 6). */
function decimalParts(text: string): { digits: bigint; scale: number } {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (m === null) throw new RangeError(`exchange rate "${text}" is not a decimal`);
  const fraction = m[2] ?? '';
  return { digits: BigInt(`${m[1] ?? '0'}${fraction}`), scale: fraction.length };
}

/**
 * What a conversion needs of an offer: the two amounts and currencies, the rate and how it is written, and the ids
 * and timestamp a follow-on repeats. A follow-on after a restart repeats only these (kept in the journal database); the
 * presentation elements (margin, disclaimer, expiry) belong to the choice screen and the receipt — the margin and the
 * disclaimer are kept beside these for the receipts ({@link DccReceiptOffer}).
 */
export type DccRate = Pick<
  DccOfferSummary,
  | 'offerId'
  | 'reconciliationId'
  | 'localAmountMinor'
  | 'localCurrency'
  | 'billingAmountMinor'
  | 'billingCurrency'
  | 'exchangeRate'
  | 'exchangeRateInverted'
  | 'exchangeRateTimeStamp'
>;

/**
 * What a receipt of a converted payment states of its offer (kiosk.md §1; gateway.md §5): the rate its follow-ons
 * repeat, with the margin and the gateway's disclaimer the customer was shown. A follow-on's receipt after a restart has
 * these from the journal database, as the first receipt had them from the offer.
 */
export type DccReceiptOffer = DccRate & Pick<DccOfferSummary, 'marginRate' | 'disclaimer'>;

/**
 * The conversion terms a follow-on repeats: the authorization's rate, or the customer's refusal of conversion.
 * `family`: the processor family the authorization was converted for (spec 001: A sends original*, B foreign*), as the
 * journal kept it; absent on the machine's own choice, which follows the configured family.
 */
export type DccTerms = { indicator: '1'; offer: DccRate; family?: 'A' | 'B' } | { indicator: '3' };

/**
 * A local amount in the offer's billing currency at the offer's rate (spec 001: partial captures and refunds convert
 * with the rate of the offer), in integer arithmetic, rounded half up to the billing currency's minor unit.
 * - The offered amount converts to exactly the offered billing amount (the gateway's own figure).
 * - A smaller amount always converts to a smaller billing amount, at least one minor unit: a capture below the
 *   authorization stays below it in both currencies, so its comments ("Parking Capture Less Than Auth") hold on both.
 * @throws RangeError for a negative or non-integer amount or an unreadable rate.
 */
export function convertAtOfferRate(localMinor: number, offer: DccRate): number {
  if (!Number.isSafeInteger(localMinor) || localMinor < 0)
    throw new RangeError(`amount ${localMinor} is not a non-negative integer of minor units`);
  if (localMinor === offer.localAmountMinor) return offer.billingAmountMinor;
  if (localMinor === 0) return 0;
  const rate = decimalParts(offer.exchangeRate);
  if (rate.digits === 0n) throw new RangeError('exchange rate is zero');
  const localUnit = 10n ** BigInt(requireCurrency(offer.localCurrency).exponent);
  const billingUnit = 10n ** BigInt(requireCurrency(offer.billingCurrency).exponent);
  const rateUnit = 10n ** BigInt(rate.scale);
  // Not inverted: billing = local × rate; inverted (rate in local units per billing unit): billing = local ÷ rate.
  const numerator = offer.exchangeRateInverted
    ? BigInt(localMinor) * rateUnit * billingUnit
    : BigInt(localMinor) * rate.digits * billingUnit;
  const denominator = offer.exchangeRateInverted ? rate.digits * localUnit : rateUnit * localUnit;
  const rounded = Number((2n * numerator + denominator) / (2n * denominator));
  if (localMinor < offer.localAmountMinor)
    return Math.max(1, Math.min(rounded, offer.billingAmountMinor - 1));
  return rounded;
}

/**
 * The local amounts that {@link convertAtOfferRate} converts to `billingMinor`, lowest and highest (more than one where
 * the billing currency's minor unit is worth more than the local one's): the way back from a card-currency amount the
 * terminal converted itself (a follow-on's, journaled in the card's currency) by the very rule that made it, so that
 * converting the local amount again gives the same card amount. Undefined when no local amount converts to it (an
 * amount the gateway chose, e.g. a partial approval), for a negative or non-integer amount or an unreadable rate.
 * The conversion is non-decreasing below the offered local amount and above it (each side searched on its own: the
 * offered amount converts to the gateway's own figure, which may lie off the rate's rounding by a unit).
 */
export function localAmountsAtOfferRate(
  billingMinor: number,
  offer: DccRate,
): { lowest: number; highest: number } | undefined {
  if (!Number.isSafeInteger(billingMinor) || billingMinor < 0) return undefined;
  const convert = (localMinor: number): number => convertAtOfferRate(localMinor, offer);
  try {
    convert(offer.localAmountMinor + 1);
  } catch {
    return undefined;
  }
  const offered = offer.localAmountMinor;
  /** The first local amount in [from, to] (to may be open: Infinity) that converts to at least `atLeast`. */
  const firstReaching = (atLeast: number, from: number, to: number): number | undefined => {
    let high = to;
    if (!Number.isFinite(high)) {
      high = Math.max(from, 1);
      while (convert(high) < atLeast) {
        if (high > Number.MAX_SAFE_INTEGER / 2) return undefined;
        high *= 2;
      }
    } else if (from > high || convert(high) < atLeast) return undefined;
    let low = from;
    while (low < high) {
      const mid = Math.floor((low + high) / 2);
      if (convert(mid) >= atLeast) high = mid;
      else low = mid + 1;
    }
    return low;
  };
  const runWithin = (from: number, to: number): { lowest: number; highest: number } | undefined => {
    const lowest = firstReaching(billingMinor, from, to);
    if (lowest === undefined || convert(lowest) !== billingMinor) return undefined;
    const beyond = firstReaching(billingMinor + 1, lowest, to);
    return { lowest, highest: beyond === undefined ? (Number.isFinite(to) ? to : lowest) : beyond - 1 };
  };
  if (billingMinor === offer.billingAmountMinor) return { lowest: offered, highest: offered };
  return billingMinor < offer.billingAmountMinor
    ? runWithin(0, offered - 1)
    : runWithin(offered + 1, Number.POSITIVE_INFINITY);
}

/**
 * The card-currency amount of one refund of `localMinor` of a converted payment of which `refundedBeforeMinor` (local)
 * is refunded already, where the refund states it beside its local amount (processor family B's `foreignAmount`): the
 * card amount of everything refunded with it less that of everything refunded before it, at the offer's rate
 * ({@link convertAtOfferRate}). Refunds converted one by one can add up to more than the payment took in the card's
 * currency (0.01 and 9.99 EUR of 10.00 EUR = 1612 JPY convert to 2 + 1611 JPY); these add up to the card amount of what
 * they refunded, all of it for a refund of everything. Each is within one minor unit of its own amount converted.
 */
export function refundAtOfferRate(localMinor: number, refundedBeforeMinor: number, offer: DccRate): number {
  return (
    convertAtOfferRate(refundedBeforeMinor + localMinor, offer) -
    convertAtOfferRate(refundedBeforeMinor, offer)
  );
}

/**
 * Whether an offer's billing amount is its local amount at its own rate: the amount the customer is shown and the
 * authorization carries, and the rate its partial captures and refunds convert with ({@link convertAtOfferRate};
 * spec 001: "partial captures and refunds convert with the rate from the offer response"), must tell the same
 * conversion. The rate as written stands for any rate within half a unit of its last digit (the gateway may convert
 * at more digits than it states), and the gateway rounds the product to the billing currency's minor unit its own way
 * (down or half up): the amount must lie between the floor and the ceiling of the local amount at those two rates. A
 * rate of zero, an unreadable one, or a currency the terminal does not know agrees with no amount.
 */
export function billingAmountAgreesWithRate(
  offer: Omit<DccRate, 'offerId' | 'reconciliationId' | 'exchangeRateTimeStamp'>,
): boolean {
  const local = currencyByAlpha(offer.localCurrency);
  const billing = currencyByAlpha(offer.billingCurrency);
  if (local === undefined || billing === undefined) return false;
  if (!Number.isSafeInteger(offer.localAmountMinor) || !Number.isSafeInteger(offer.billingAmountMinor))
    return false;
  let rate: { digits: bigint; scale: number };
  try {
    rate = decimalParts(offer.exchangeRate);
  } catch {
    return false;
  }
  if (rate.digits === 0n) return false;
  const localMinor = BigInt(offer.localAmountMinor);
  const billingMinor = BigInt(offer.billingAmountMinor);
  const localUnit = 10n ** BigInt(local.exponent);
  const billingUnit = 10n ** BigInt(billing.exponent);
  // The rate lies in [lowest, highest] / twice10^scale: its digits less and more half a unit of the last one.
  const twiceRateUnit = 2n * 10n ** BigInt(rate.scale);
  const lowest = 2n * rate.digits - 1n;
  const highest = 2n * rate.digits + 1n;
  // The billing amount at a rate r, in billing minor units: local × r (not inverted), local ÷ r (inverted, r in local
  // units per billing unit). Each bound as a fraction numerator / denominator.
  const bound = (r: bigint): { n: bigint; d: bigint } =>
    offer.exchangeRateInverted
      ? { n: localMinor * billingUnit * twiceRateUnit, d: r * localUnit }
      : { n: localMinor * r * billingUnit, d: twiceRateUnit * localUnit };
  const low = bound(offer.exchangeRateInverted ? highest : lowest);
  const high = bound(offer.exchangeRateInverted ? lowest : highest);
  // floor(low) ≤ billing ⟺ billing + 1 > low; billing ≤ ceil(high) ⟺ billing − 1 < high.
  return (billingMinor + 1n) * low.d > low.n && (billingMinor - 1n) * high.d < high.n;
}

/**
 * The currency choice offered again at completion (reference/kiosk.md §1: some acquirers ask for the choice at the
 * pre-authorization and again at completion) for `feeMinor` of a converted authorization: the authorization's rate,
 * markup and disclaimer, with the fee in the local currency and in the card's currency at that rate (spec 001: a
 * capture uses the exchange rate of the authorization). The card amount is the one the capture would carry.
 */
export function offerAtAuthorizationRate(feeMinor: number, offer: DccOfferSummary): DccOfferSummary {
  return { ...offer, localAmountMinor: feeMinor, billingAmountMinor: convertAtOfferRate(feeMinor, offer) };
}

/**
 * Receipt lines of a converted payment (spec 001, DCC requirements: both amounts, the rate and the markup, and the
 * disclaimer unchanged). The receipt's own amount is the local price `localMinor`; none for a payment in the local
 * currency.
 */
export function dccReceiptLines(
  dcc: DccSelection | undefined,
  localMinor?: number,
): { label: string; value: string }[] {
  if (dcc?.indicator !== '1') return [];
  const offer = dcc.offer;
  const billing = convertAtOfferRate(localMinor ?? offer.localAmountMinor, offer);
  return [
    {
      label: 'Paid in card currency',
      value: `${toDecimalString(billing, offer.billingCurrency)} ${offer.billingCurrency}`,
    },
    { label: 'Exchange rate', value: dccRateText(offer) },
    { label: 'Markup', value: dccMarkupText(offer) },
    { label: 'Currency conversion', value: offer.disclaimer },
  ];
}
