/**
 * Currency conversion offers (`POST /vas/v1/currencyconversion`; spec 001 "Currency conversion (DCC)",
 * reference/gateway.md §5) and the check of a converted authorization against its offer.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { requireCurrency, toDecimalString } from '../money/index.js';
import type { AuthResult } from './auth.js';
import { parseSignatureHeader } from './auth.js';
import type { FieldReader } from './fields.js';
import { isoSeconds } from './fields.js';
import type { SandboxStore } from './store.js';

/** Path of the offer service (reference/gateway.md §2). */
export const DCC_OFFER_PATH = '/vas/v1/currencyconversion';

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
  /**
   * The `id` of the offer answer, which family A authorizations send back as `currencyConversion.id` (spec 001).
   * Absent from offers stored before it was kept.
   */
  id?: string;
  reconciliationId: string;
  rateId: string;
  originalMinor: number;
  originalCurrency: string;
  amountMinor: number;
  currency: string;
  /** Rate with margin, decimal string. */
  exchangeRate: string;
  expiresAt: string;
  /** When the rate was set: the offer's `exchangeRateTimeUtc` is this instant to the second ({@link offerRateTimeStamp}). */
  createdAt: string;
  /** The converted authorizations and sales approved against this offer: their follow-ons repeat these terms. */
  uses?: DccOfferUse[];
}

/** One approved converted authorization or sale made against an offer. */
export interface DccOfferUse {
  /** Ledger id of the authorization or sale. */
  authorizationId: string;
  /** Processor family of its field set (spec 001): A sent original*, B sent foreign*. */
  family: 'A' | 'B';
  /** `exchangeRateTimeStamp` the authorization sent (family B follow-ons repeat it). */
  exchangeRateTimeStamp?: string;
}

/** What a converted authorization was checked against: the offer and the family of its field set. */
export interface DccAuthorizationTerms {
  offer: DccOffer;
  family: 'A' | 'B';
  exchangeRateTimeStamp?: string;
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

/**
 * `localMinor` of `from` in minor units of `to` at `rate` (units of `to` per unit of `from`, margin included),
 * rounded half up: the rounding of the offer's own amount, so the full local amount converts to exactly the offered
 * amount. Scaled integers: no float touches money.
 */
export function convertAtRate(localMinor: number, from: string, to: string, rate: string): number {
  const fromExp = requireCurrency(from).exponent;
  const toExp = requireCurrency(to).exponent;
  const numerator = BigInt(localMinor) * scaled(rate) * 10n ** BigInt(toExp);
  const denominator = SCALE * 10n ** BigInt(fromExp);
  return Number((numerator + denominator / 2n) / denominator);
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
  const amountMinor = convertAtRate(original, originalCurrency, range.currency, exchangeRate);
  const expiresAt = new Date(now.getTime() + table.offerLifetimeMs);
  const offer: DccOffer = {
    merchantId,
    id,
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

/** Decimal text, as the rates of an offer are written (any other text never equals a rate). */
const DECIMAL = /^\d+(\.\d+)?$/;

/** True when `rate` is decimal text of the same value as `offerRate` (1.12 equals 1.120). */
function sameRate(rate: string | undefined, offerRate: string): boolean {
  return rate !== undefined && DECIMAL.test(rate) && scaled(rate) === scaled(offerRate);
}

/**
 * The `exchangeRateTimeStamp` of an offer: the instant its answer gave as `exchangeRateTimeUtc` (the second of
 * `createdAt`), as 14 digits yyyyMMddHHmmss in GMT — the form in which a converted authorization sends it back.
 */
export function offerRateTimeStamp(offer: Pick<DccOffer, 'createdAt'>): string {
  return isoSeconds(new Date(offer.createdAt)).replace(/\D/g, '');
}

const AMOUNT_DETAILS = 'orderInformation.amountDetails';

/**
 * Checks a converted authorization (indicator `1`) against the offer the sandbox issued: found by reconciliation id
 * (family A) or, for a field set that names none (family B), among the merchant's offers at its rate, the one whose
 * rate time and amounts it repeats. The offer must not have expired, and the request must carry its terms unchanged
 * (spec 001 "DCC authorization"): its rate, its rate time (`exchangeRateTimeStamp`), its id when `currencyConversion.id`
 * is sent (family A), its two currencies and its two amounts; each one that differs is INVALID_DATA naming the field.
 *
 * Spec 001 and reference/gateway.md §5 say only that the authorization carries `exchangeRateTimeStamp`, not what it
 * is compared with. The gateway's public field reference defines it as "the time stamp returned by a Dynamic Currency
 * Conversion provider when a conversion request is made", set to GMT: the offer's `exchangeRateTimeUtc` to the
 * second, and the processor holds the authorization to the rate lookup it names. A stale or altered stamp is refused
 * here as the gateway refuses (or mis-settles) it, so that a terminal that sends one fails in tests. Likewise
 * `currencyConversion.id`, which spec 001 says family A takes "from the offer": the gateway's public API reference
 * defines it as the request id returned by the DCC lookup, the offer answer's `id`.
 *
 * Returns the offer and the family of the field set when the request is a converted one that names an offer
 * (problems are collected in `r` all the same); undefined for indicator `2`/`3` or no offer.
 */
export function checkDccAuthorization(
  store: SandboxStore,
  r: FieldReader,
  merchantId: string,
  now: Date,
): DccAuthorizationTerms | undefined {
  const indicator = r.oneOf(`${AMOUNT_DETAILS}.currencyConversion.indicator`, ['1', '2', '3'], true, true);
  if (indicator !== '1') return undefined;
  const currency = r.currency(`${AMOUNT_DETAILS}.currency`);
  const total = r.amount(`${AMOUNT_DETAILS}.totalAmount`, currency);
  const rate = r.text(`${AMOUNT_DETAILS}.exchangeRate`, true, true);
  // The time stamp of the rate, 14 digits yyyyMMDDhhmmss in GMT (the gateway's public field reference): an ISO 8601
  // text is INVALID_DATA, as the gateway refuses it.
  const stampField = `${AMOUNT_DETAILS}.exchangeRateTimeStamp`;
  const exchangeRateTimeStamp = r.dateTimeDigits(stampField, true);
  const familyA = r.has(`${AMOUNT_DETAILS}.originalAmount`) || r.has(`${AMOUNT_DETAILS}.originalCurrency`);
  const prefix = familyA ? 'original' : 'foreign';
  const otherCurrency = r.currency(`${AMOUNT_DETAILS}.${prefix}Currency`);
  const other = r.amount(`${AMOUNT_DETAILS}.${prefix}Amount`, otherCurrency);
  // Family A: totalAmount in the billing currency, originalAmount in the merchant's. Family B: the reverse.
  const billing = familyA ? { c: currency, a: total } : { c: otherCurrency, a: other };
  const local = familyA ? { c: otherCurrency, a: other } : { c: currency, a: total };
  // Spec 001's family A examples send the reconciliation id (and the offer's id) in the authorization's
  // currencyConversion; the offer answer has it in orderInformation.currencyConversion: either place names the offer.
  const reconciliationField = r.has(`${AMOUNT_DETAILS}.currencyConversion.reconciliationId`)
    ? `${AMOUNT_DETAILS}.currencyConversion.reconciliationId`
    : 'orderInformation.currencyConversion.reconciliationId';
  const reconciliationId = r.text(reconciliationField, false);
  const offerIdField = `${AMOUNT_DETAILS}.currencyConversion.id`;
  const offerId = r.text(offerIdField, false);
  const offers = store.values<DccOffer>('offer').filter((o) => o.merchantId === merchantId);
  let offer: DccOffer | undefined;
  if (reconciliationId !== undefined) offer = offers.find((o) => o.reconciliationId === reconciliationId);
  else {
    // Offers for one currency pair share their rate: the one meant is the one whose terms the request repeats, the
    // latest of those that repeat as many (so that the check below names what differs from the closest offer).
    const score = (o: DccOffer): number =>
      (exchangeRateTimeStamp === offerRateTimeStamp(o) ? 8 : 0) +
      (billing.a === o.amountMinor ? 4 : 0) +
      (local.a === o.originalMinor ? 2 : 0) +
      (Date.parse(o.expiresAt) >= now.getTime() ? 1 : 0);
    for (const o of offers) {
      if (!sameRate(rate, o.exchangeRate)) continue;
      if (offer === undefined || score(o) >= score(offer)) offer = o;
    }
  }
  const field = reconciliationId !== undefined ? reconciliationField : `${AMOUNT_DETAILS}.exchangeRate`;
  if (!offer) {
    r.invalid(field, 'no currency conversion offer matches');
    return undefined;
  }
  if (Date.parse(offer.expiresAt) < now.getTime()) r.invalid(field, 'the conversion offer has expired');
  if (rate !== undefined && !sameRate(rate, offer.exchangeRate))
    r.invalid(`${AMOUNT_DETAILS}.exchangeRate`, 'exchangeRate differs from the offer');
  if (exchangeRateTimeStamp !== undefined && exchangeRateTimeStamp !== offerRateTimeStamp(offer))
    r.invalid(
      stampField,
      `exchangeRateTimeStamp must be the offer's rate time ${offerRateTimeStamp(offer)} (yyyyMMDDhhmmss, GMT)`,
    );
  if (offerId !== undefined && offer.id !== undefined && offerId !== offer.id)
    r.invalid(offerIdField, 'currencyConversion.id is not the id of the offer');
  if (billing.c !== undefined && billing.c !== offer.currency)
    r.invalid(
      familyA ? `${AMOUNT_DETAILS}.currency` : `${AMOUNT_DETAILS}.foreignCurrency`,
      'billing currency differs from the offer',
    );
  if (billing.a !== undefined && billing.a !== offer.amountMinor)
    r.invalid(
      familyA ? `${AMOUNT_DETAILS}.totalAmount` : `${AMOUNT_DETAILS}.foreignAmount`,
      'converted amount differs from the offer',
    );
  if (local.c !== undefined && local.c !== offer.originalCurrency)
    r.invalid(
      familyA ? `${AMOUNT_DETAILS}.originalCurrency` : `${AMOUNT_DETAILS}.currency`,
      'local currency differs from the offer',
    );
  if (local.a !== undefined && local.a !== offer.originalMinor)
    r.invalid(
      familyA ? `${AMOUNT_DETAILS}.originalAmount` : `${AMOUNT_DETAILS}.totalAmount`,
      'local amount differs from the offer',
    );
  return {
    offer,
    family: familyA ? 'A' : 'B',
    ...(exchangeRateTimeStamp !== undefined ? { exchangeRateTimeStamp } : {}),
  };
}

/**
 * Records that the converted authorization or sale `authorizationId` was approved against `terms.offer`, so that its
 * captures and refunds can be held to the same terms ({@link checkDccFollowOn}). Written with the transaction.
 */
export function recordDccAuthorization(
  store: SandboxStore,
  terms: DccAuthorizationTerms,
  authorizationId: string,
): void {
  const use: DccOfferUse = {
    authorizationId,
    family: terms.family,
    ...(terms.exchangeRateTimeStamp !== undefined
      ? { exchangeRateTimeStamp: terms.exchangeRateTimeStamp }
      : {}),
  };
  const offer: DccOffer = { ...terms.offer, uses: [...(terms.offer.uses ?? []), use] };
  store.put('offer', offer.reconciliationId, offer);
}

/** The offer a converted authorization or sale of `merchantId` used, with its terms; undefined when not converted. */
export function dccTermsOf(
  store: SandboxStore,
  merchantId: string,
  authorizationId: string,
): DccAuthorizationTerms | undefined {
  for (const offer of store.values<DccOffer>('offer')) {
    if (offer.merchantId !== merchantId) continue;
    const use = offer.uses?.find((u) => u.authorizationId === authorizationId);
    if (use)
      return {
        offer,
        family: use.family,
        ...(use.exchangeRateTimeStamp !== undefined
          ? { exchangeRateTimeStamp: use.exchangeRateTimeStamp }
          : {}),
      };
  }
  return undefined;
}

/** Converted amounts may differ from the sandbox's own rounding by this many minor units (see checkDccFollowOn). */
const CONVERSION_TOLERANCE_MINOR = 1;

/**
 * The DCC rule of a capture, reversal or refund (of a capture or of a sale) whose authorization was converted, given
 * the authorization's terms ({@link dccTermsOf}; spec 001: "DCC
 * capture and refund require the same field set (currency, exchangeRate, totalAmount, plus
 * originalAmount/originalCurrency for family A, or foreignAmount/foreignCurrency/exchangeRateTimeStamp for family B).
 * Rules: use the exchange rate of the authorization … partial captures and refunds convert with the rate from the
 * offer response"). `totalMinor` is the follow-on's totalAmount as read (minor units of the transaction's currency:
 * the billing currency for family A, the merchant's for family B); currency equality is checked by the caller.
 *
 * Missing fields of the authorization's family are MISSING_FIELD; a rate other than the authorization's is
 * INVALID_DATA on `exchangeRate`; an `exchangeRateTimeStamp` that is not 14 digits of a real date and time, or not
 * the authorization's, is INVALID_DATA on it; a `currencyConversion.id` or `.reconciliationId` that names another
 * offer than the authorization's is INVALID_DATA on it (a follow-on repeats its authorization's terms, never a new
 * offer's); a local/billing pair that does not convert at that rate (half up, one minor unit
 * either side: the client may keep a partial amount strictly below the full one) is INVALID_DATA on the converted
 * amount. Nothing is checked when the authorization was not converted.
 */
export function checkDccFollowOn(
  terms: DccAuthorizationTerms | undefined,
  r: FieldReader,
  totalMinor: number | undefined,
): void {
  if (terms === undefined) return;
  const { offer, family } = terms;
  const base = 'orderInformation.amountDetails';
  r.oneOf(`${base}.currencyConversion.indicator`, ['1'], false, true);
  const reconciliationId = r.text(`${base}.currencyConversion.reconciliationId`, false);
  if (reconciliationId !== undefined && reconciliationId !== offer.reconciliationId)
    r.invalid(
      `${base}.currencyConversion.reconciliationId`,
      "currencyConversion.reconciliationId must be the authorization's offer's",
    );
  const offerId = r.text(`${base}.currencyConversion.id`, false);
  if (offerId !== undefined && offer.id !== undefined && offerId !== offer.id)
    r.invalid(`${base}.currencyConversion.id`, "currencyConversion.id must be the authorization's offer's");
  const rate = r.text(`${base}.exchangeRate`, true, true);
  if (rate !== undefined && !sameRate(rate, offer.exchangeRate))
    r.invalid(`${base}.exchangeRate`, `exchangeRate must be the authorization's rate ${offer.exchangeRate}`);
  const pairField = family === 'A' ? 'original' : 'foreign';
  const pairCurrency = r.currency(`${base}.${pairField}Currency`);
  const expectedPairCurrency = family === 'A' ? offer.originalCurrency : offer.currency;
  if (pairCurrency !== undefined && pairCurrency !== expectedPairCurrency)
    r.invalid(`${base}.${pairField}Currency`, `${pairField}Currency must be ${expectedPairCurrency}`);
  const pairMinor = r.amount(`${base}.${pairField}Amount`, expectedPairCurrency);
  // Required of family B; of family A, when sent, in the same form. Either way the authorization's own.
  const stamp = r.dateTimeDigits(`${base}.exchangeRateTimeStamp`, family === 'B');
  if (
    stamp !== undefined &&
    terms.exchangeRateTimeStamp !== undefined &&
    stamp !== terms.exchangeRateTimeStamp
  )
    r.invalid(`${base}.exchangeRateTimeStamp`, "exchangeRateTimeStamp must be the authorization's");
  if (pairMinor === undefined || totalMinor === undefined) return;
  // Family A: totalAmount is the billing amount of the local originalAmount; family B: foreignAmount is the billing
  // amount of the local totalAmount.
  const localMinor = family === 'A' ? pairMinor : totalMinor;
  const billingMinor = family === 'A' ? totalMinor : pairMinor;
  const expected =
    localMinor === offer.originalMinor
      ? offer.amountMinor
      : convertAtRate(localMinor, offer.originalCurrency, offer.currency, offer.exchangeRate);
  if (Math.abs(billingMinor - expected) > CONVERSION_TOLERANCE_MINOR)
    r.invalid(
      family === 'A' ? `${base}.totalAmount` : `${base}.foreignAmount`,
      `the converted amount must be ${toDecimalString(expected, offer.currency)} ${offer.currency} at the authorization's rate`,
    );
}

/**
 * The DCC fields an incremental authorization of a converted authorization repeats, when it sends any: an increment
 * adds to the hold at the authorization's terms, never at a new offer's. Reference/gateway.md §7 documents an increment
 * with `additionalAmount` and `currency` only, and spec 001 names no DCC field set for it, so none is asked for; an
 * `exchangeRate` other than the authorization's, or an `exchangeRateTimeStamp` that is not 14 digits of a real date
 * and time or not the authorization's, is INVALID_DATA naming the field, and an indicator other than `1` too. Nothing
 * is checked when the authorization was not converted.
 */
export function checkDccIncrement(terms: DccAuthorizationTerms | undefined, r: FieldReader): void {
  if (terms === undefined) return;
  const base = 'orderInformation.amountDetails';
  r.oneOf(`${base}.currencyConversion.indicator`, ['1'], false, true);
  const rate = r.text(`${base}.exchangeRate`, false, true);
  if (rate !== undefined && !sameRate(rate, terms.offer.exchangeRate))
    r.invalid(
      `${base}.exchangeRate`,
      `exchangeRate must be the authorization's rate ${terms.offer.exchangeRate}`,
    );
  const stamp = r.dateTimeDigits(`${base}.exchangeRateTimeStamp`, false);
  if (
    stamp !== undefined &&
    terms.exchangeRateTimeStamp !== undefined &&
    stamp !== terms.exchangeRateTimeStamp
  )
    r.invalid(`${base}.exchangeRateTimeStamp`, "exchangeRateTimeStamp must be the authorization's");
}

/**
 * True when an `Authorization` header uses the `Signature` scheme of draft-cavage-http-signatures (§3.1, "The
 * Signature HTTP Authentication Scheme"): `Signature keyid="…", algorithm="…", headers="…", signature="…"`.
 */
export function isSignatureAuthorization(value: string): boolean {
  return /^Signature\s+\S/i.test(value);
}

function single(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
}

function jwtKid(bearer: string): string | undefined {
  const token = /^Bearer\s+(\S+)$/i.exec(bearer)?.[1];
  const header = token?.split('.')[0];
  if (header === undefined) return undefined;
  try {
    const v: unknown = JSON.parse(Buffer.from(header, 'base64url').toString('utf8'));
    const kid = typeof v === 'object' && v !== null ? (v as { kid?: unknown }).kid : undefined;
    return typeof kid === 'string' ? kid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Why an authenticated offer request lacks the header fields spec 001 requires of DCC offer calls ("header fields
 * `Authorization` and `keyId`"), or undefined when it has them; the server answers 401 then, as to any request
 * whose credentials are incomplete (the body of a 401 is not documented, reference/gateway.md §4).
 *
 * The spec does not show what goes into them; the sandbox's decision, from reference/gateway.md §1:
 * - HTTP-signature callers send their signature in `Authorization` too, in the `Signature` scheme of
 *   draft-cavage-http-signatures §3.1 (the scheme the gateway's signature header is taken from):
 *   `Authorization: Signature <the value of the signature header>`, and `keyId: <keyid of that signature>`. The
 *   two must be the verified signature's: an `Authorization` that differs from it is refused.
 * - JWT callers already send `Authorization: Bearer <jwt>`; `keyId` is the token's `kid` (certificate serial number
 *   for RS256, key id for HS256).
 * - OAuth callers (spec 000) send `Authorization: Bearer <access token>`; an access token is not made with a key of
 *   the merchant's, so no `keyId` is asked of them.
 */
export function offerHeadersProblem(headers: IncomingHttpHeaders, auth: AuthResult): string | undefined {
  const authorization = single(headers, 'authorization');
  const keyId = single(headers, 'keyid');
  if (authorization === undefined) return 'a DCC offer call needs the Authorization header (spec 001)';
  switch (auth.scheme) {
    case 'http-signature': {
      if (!isSignatureAuthorization(authorization))
        return 'Authorization of a signed DCC offer call must use the Signature scheme';
      const signature = single(headers, 'signature');
      const params = authorization.replace(/^Signature\s+/i, '');
      if (signature === undefined || params !== signature)
        return 'Authorization does not carry the signature of the request';
      if (keyId === undefined) return 'a DCC offer call needs the keyId header (spec 001)';
      if (keyId !== parseSignatureHeader(signature)?.keyid) return "keyId is not the signature's key id";
      return undefined;
    }
    case 'jwt':
      if (keyId === undefined) return 'a DCC offer call needs the keyId header (spec 001)';
      if (keyId !== jwtKid(authorization)) return "keyId is not the token's kid";
      return undefined;
    case 'oauth':
      return undefined;
    case 'none':
      return 'the request is not authenticated';
  }
}
