/**
 * Currency conversion offers (`POST /vas/v1/currencyconversion`; spec 001 "Currency conversion (DCC)",
 * reference/gateway.md §5) and the check of a converted authorization against its offer.
 */
import { randomUUID } from 'node:crypto';
import { requireCurrency, toDecimalString } from '../money/index.js';
import type { FieldReader } from './fields.js';
import { isoSeconds } from './fields.js';
import type { SandboxStore } from './store.js';

/** One BIN range of the DCC table: card numbers starting with `prefix` bill in `currency`. */
export interface DccBinRange {
  prefix: string;
  currency: string;
  /** False: the card is known but not eligible for conversion (NOT_ELIGIBLE). */
  eligible?: boolean;
}

/** The DCC configuration of the sandbox. */
export interface DccTable {
  ranges: DccBinRange[];
  /** Mid-market rates: how many units of `to` one unit of `from` buys, as a decimal string. */
  rates: Array<{ from: string; to: string; rate: string }>;
  /** Markup in percent added to the mid rate, as a decimal string (e.g. "3.5"). */
  marginPercent: string;
  /** How long an offer stays valid, milliseconds. */
  offerLifetimeMs: number;
  /** The disclaimer text returned with every offer (shown and printed unchanged by the terminal). */
  disclaimer: string;
}

/** Defaults: the test cards of reference/gateway.md §6 bill in USD, GBP and EUR. */
export const DEFAULT_DCC_TABLE: DccTable = {
  ranges: [
    { prefix: '411111', currency: 'USD' },
    { prefix: '555555', currency: 'GBP' },
    { prefix: '222242', currency: 'EUR' },
    { prefix: '476173', currency: 'JPY' },
    { prefix: '541333', currency: 'CHF', eligible: false },
  ],
  rates: [
    { from: 'EUR', to: 'USD', rate: '1.0825' },
    { from: 'EUR', to: 'GBP', rate: '0.8412' },
    { from: 'EUR', to: 'JPY', rate: '161.37' },
    { from: 'USD', to: 'EUR', rate: '0.9238' },
    { from: 'USD', to: 'GBP', rate: '0.7771' },
    { from: 'GBP', to: 'EUR', rate: '1.1888' },
    { from: 'GBP', to: 'USD', rate: '1.2868' },
  ],
  marginPercent: '3.5',
  offerLifetimeMs: 10 * 60 * 1000,
  disclaimer:
    'I have been offered a choice of currencies and have chosen to pay in the card currency. The exchange rate includes a margin. The conversion is provided by the merchant.',
};

/** A stored offer. */
export interface DccOffer {
  merchantId: string;
  reconciliationId: string;
  rateId: string;
  originalMinor: number;
  originalCurrency: string;
  amountMinor: number;
  currency: string;
  /** Rate with margin, decimal string. */
  exchangeRate: string;
  expiresAt: string;
  createdAt: string;
}

const SCALE = 10n ** 12n;

/** Decimal string → integer scaled by 1e12 (rates have far fewer decimals). */
function scaled(dec: string): bigint {
  const [w = '0', f = ''] = dec.split('.');
  return BigInt(w) * SCALE + BigInt((f + '0'.repeat(12)).slice(0, 12));
}

function unscaled(v: bigint, decimals: number): string {
  const q = 10n ** BigInt(12 - decimals);
  const r = (v + q / 2n) / q;
  const s = r.toString().padStart(decimals + 1, '0');
  return `${s.slice(0, -decimals)}.${s.slice(-decimals)}`.replace(/0+$/, '').replace(/\.$/, '');
}

/** The outcome of an offer request. */
export type OfferResult = { httpStatus: number; body: Record<string, unknown> };

/** Answers an offer request (validated by `reader`), storing the offer. */
export function makeOffer(
  store: SandboxStore,
  table: DccTable,
  r: FieldReader,
  merchantId: string,
  now: Date,
): OfferResult {
  const originalCurrency = r.currency('orderInformation.amountDetails.originalCurrency');
  const original = r.amount('orderInformation.amountDetails.originalAmount', originalCurrency);
  const number = r.text('paymentInformation.card.number', true);
  if (number !== undefined && !/^\d{6,19}$/.test(number))
    r.invalid('paymentInformation.card.number', 'card number must be 6 to 19 digits');
  r.oneOf('orderInformation.currencyConversion.type', ['DCC'], false);
  r.oneOf('pointOfSaleInformation.entryMode', ['KEYED', 'SWIPED', 'CONTACT', 'CONTACTLESS'], false);
  r.finish();
  const id = randomUUID().replace(/-/g, '').slice(0, 22);
  const base = { id, submitTimeUtc: isoSeconds(now) };
  const declined = (reason: string): OfferResult => ({
    httpStatus: 201,
    body: { ...base, status: 'DECLINED', errorInformation: { reason, message: `No offer: ${reason}` } },
  });
  if (number === undefined || original === undefined || originalCurrency === undefined)
    return declined('LOOKUP_FAILED');
  const range = [...table.ranges]
    .sort((a, b) => b.prefix.length - a.prefix.length)
    .find((x) => number.startsWith(x.prefix));
  if (!range) return declined('BIN_UNKNOWN');
  if (range.eligible === false) return declined('NOT_ELIGIBLE');
  if (range.currency === originalCurrency) return declined('CURRENCY_MATCH');
  const mid = table.rates.find((x) => x.from === originalCurrency && x.to === range.currency);
  if (!mid) return declined('EXCHANGE_RATE_NOT_FOUND');
  // Rate with margin, six decimals, from scaled integers: no float touches money.
  const withMargin = (scaled(mid.rate) * (100n * SCALE + scaled(table.marginPercent))) / (100n * SCALE);
  const exchangeRate = unscaled(withMargin, 6);
  const fromExp = requireCurrency(originalCurrency).exponent;
  const toExp = requireCurrency(range.currency).exponent;
  const rate = scaled(exchangeRate);
  const numerator = BigInt(original) * rate * 10n ** BigInt(toExp);
  const denominator = SCALE * 10n ** BigInt(fromExp);
  const amountMinor = Number((numerator + denominator / 2n) / denominator);
  const expiresAt = new Date(now.getTime() + table.offerLifetimeMs);
  const offer: DccOffer = {
    merchantId,
    reconciliationId: id.slice(-12),
    rateId: randomUUID(),
    originalMinor: original,
    originalCurrency,
    amountMinor,
    currency: range.currency,
    exchangeRate,
    expiresAt: expiresAt.toISOString(),
    createdAt: now.toISOString(),
  };
  store.put('offer', offer.reconciliationId, offer);
  return {
    httpStatus: 201,
    body: {
      ...base,
      status: 'PENDING',
      clientReferenceInformation: r.has('clientReferenceInformation.code')
        ? { code: r.text('clientReferenceInformation.code', false) }
        : {},
      orderInformation: {
        currencyConversion: {
          type: 'DCC',
          reconciliationId: offer.reconciliationId,
          offer: [
            {
              originalAmount: toDecimalString(original, originalCurrency),
              originalCurrency,
              amount: toDecimalString(amountMinor, range.currency),
              currency: range.currency,
              exchangeRate,
              marginRate: table.marginPercent,
              rateSource: 'SANDBOX',
              exchangeRateTimeUtc: isoSeconds(now),
              exchangeRateExpirationTimeUtc: isoSeconds(expiresAt),
              exchangeRateInverted: false,
              rateId: offer.rateId,
            },
          ],
          disclaimer: table.disclaimer,
        },
      },
    },
  };
}

/**
 * Checks a converted authorization (indicator `1`) against its offer: found by reconciliation id (family A) or by
 * rate and amounts (family B), not expired, same rate, same amounts (spec 001 "DCC authorization").
 */
export function checkDccAuthorization(
  store: SandboxStore,
  r: FieldReader,
  merchantId: string,
  now: Date,
): void {
  const indicator = r.oneOf(
    'orderInformation.amountDetails.currencyConversion.indicator',
    ['1', '2', '3'],
    true,
    true,
  );
  if (indicator !== '1') return;
  const currency = r.currency('orderInformation.amountDetails.currency');
  const total = r.amount('orderInformation.amountDetails.totalAmount', currency);
  const rate = r.text('orderInformation.amountDetails.exchangeRate', true, true);
  r.text('orderInformation.amountDetails.exchangeRateTimeStamp', true);
  const familyA =
    r.has('orderInformation.amountDetails.originalAmount') ||
    r.has('orderInformation.amountDetails.originalCurrency');
  const prefix = familyA ? 'original' : 'foreign';
  const otherCurrency = r.currency(`orderInformation.amountDetails.${prefix}Currency`);
  const other = r.amount(`orderInformation.amountDetails.${prefix}Amount`, otherCurrency);
  const reconciliationId =
    r.text('orderInformation.amountDetails.currencyConversion.reconciliationId', false) ??
    r.text('orderInformation.currencyConversion.reconciliationId', false);
  const offers = store.values<DccOffer>('offer').filter((o) => o.merchantId === merchantId);
  const offer =
    reconciliationId !== undefined
      ? offers.find((o) => o.reconciliationId === reconciliationId)
      : offers.reverse().find((o) => rate !== undefined && scaled(o.exchangeRate) === scaled(rate));
  const field =
    reconciliationId !== undefined
      ? 'orderInformation.currencyConversion.reconciliationId'
      : 'orderInformation.amountDetails.exchangeRate';
  if (!offer) {
    r.invalid(field, 'no currency conversion offer matches');
    return;
  }
  if (Date.parse(offer.expiresAt) < now.getTime()) r.invalid(field, 'the conversion offer has expired');
  if (rate !== undefined && /^\d+(\.\d+)?$/.test(rate) && scaled(rate) !== scaled(offer.exchangeRate))
    r.invalid('orderInformation.amountDetails.exchangeRate', 'exchangeRate differs from the offer');
  // Family A: totalAmount in the billing currency, originalAmount in the merchant's. Family B: the reverse.
  const billing = familyA ? { c: currency, a: total } : { c: otherCurrency, a: other };
  const local = familyA ? { c: otherCurrency, a: other } : { c: currency, a: total };
  if (billing.c !== undefined && billing.c !== offer.currency)
    r.invalid(
      familyA ? 'orderInformation.amountDetails.currency' : 'orderInformation.amountDetails.foreignCurrency',
      'billing currency differs from the offer',
    );
  if (billing.a !== undefined && billing.a !== offer.amountMinor)
    r.invalid(
      familyA ? 'orderInformation.amountDetails.totalAmount' : 'orderInformation.amountDetails.foreignAmount',
      'converted amount differs from the offer',
    );
  if (local.c !== undefined && local.c !== offer.originalCurrency)
    r.invalid(
      familyA ? 'orderInformation.amountDetails.originalCurrency' : 'orderInformation.amountDetails.currency',
      'local currency differs from the offer',
    );
  if (local.a !== undefined && local.a !== offer.originalMinor)
    r.invalid(
      familyA
        ? 'orderInformation.amountDetails.originalAmount'
        : 'orderInformation.amountDetails.totalAmount',
      'local amount differs from the offer',
    );
}
