import {
  AmountError,
  parseDecimal,
  rateTextOf,
  requireCurrency,
  toDecimalString,
} from '../../money/index.js';
import { GatewayError, GatewayInvalidRequestError } from '../errors.js';
import { isGatewayId } from '../gateway-id.js';
import { quotedCode, reasonCode } from '../outcome.js';
import { isDisclaimerText } from '../../vocabulary/dcc-disclaimer.js';
import { isoDateTimeMs, utcTimeStamp } from '../../vocabulary/gateway-time.js';
import type { Partner } from './types.js';

/** Path of the offer service (reference/gateway.md §2). */
export const DCC_OFFER_PATH = '/vas/v1/currencyconversion';

function jwtKid(token: string): string | undefined {
  const header = token.split('.')[0];
  if (header === undefined || header === '') return undefined;
  try {
    const v: unknown = JSON.parse(Buffer.from(header, 'base64url').toString('utf8'));
    const kid = v !== null && typeof v === 'object' ? (v as { kid?: unknown }).kid : undefined;
    return typeof kid === 'string' && kid !== '' ? kid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The header fields spec 001 requires of DCC offer calls ("header fields `Authorization` and `keyId`"), derived from
 * the headers the configured authenticator produced for the offer request; merged over them by the client. The spec
 * does not show their values; decided from reference/gateway.md §1:
 * - HTTP signature: the request's signature goes into `Authorization` in the `Signature` scheme of
 *   draft-cavage-http-signatures §3.1 (the scheme the gateway's signature header comes from), exactly the value of
 *   the `signature` header, and `keyId` is its `keyid`;
 * - JWT: `Authorization: Bearer <jwt>` is already there; `keyId` is the token's `kid` (certificate serial number, or
 *   key id for HS256);
 * - OAuth: `Authorization: Bearer <access token>` is already there; an access token names no merchant key, so no
 *   `keyId` is added.
 * Returns only the headers to add (lower-case names, as the transport sends them).
 */
export function dccOfferAuthHeaders(authHeaders: Readonly<Record<string, string>>): Record<string, string> {
  const signature = authHeaders.signature;
  if (signature !== undefined) {
    const keyId = /(?:^|,)\s*keyid="([^"]*)"/i.exec(signature)?.[1];
    return { authorization: `Signature ${signature}`, ...(keyId ? { keyid: keyId } : {}) };
  }
  const bearer = /^Bearer\s+(\S+)$/i.exec(authHeaders.authorization ?? '')?.[1];
  const kid = bearer !== undefined ? jwtKid(bearer) : undefined;
  return kid !== undefined ? { keyid: kid } : {};
}

/** A DCC offer request (spec 001, "Currency conversion"; reference/gateway.md §5). */
export interface DccOfferRequest {
  /**
   * The leading digits of the card number (6–11): enough for the gateway to find the billing currency, never the
   * whole PAN ("send no more than the gateway needs", reference §5).
   */
  cardPrefix: string;
  /** The local price, minor units of `currency`. */
  amountMinor: number;
  currency: string;
  /** Sent in upper case as the offer service expects (`CONTACTLESS`, …). */
  entryMode?: 'keyed' | 'swiped' | 'contact' | 'contactless';
  terminalId?: string;
  code?: string;
  partner?: Pick<Partner, 'developerId' | 'solutionId'>;
}

/** One converted amount the customer may choose. */
export interface DccOffer {
  /** Amount in the billing currency, minor units. */
  amountMinor: number;
  currency: string;
  originalAmountMinor?: number;
  originalCurrency?: string;
  /** Exchange rate with the margin included, as the gateway wrote it (shown and sent back unchanged). */
  exchangeRate: string;
  /** Margin in percent, as written by the gateway. */
  marginRate?: string;
  /** When the rate was set: an ISO 8601 date-time with seconds and a zone, as the gateway wrote it. */
  exchangeRateTimeUtc?: string;
  /**
   * The same time as a converted authorization sends it back (`exchangeRateTimeStamp`): 14 digits `yyyyMMddHHmmss`
   * in UTC. Present exactly when `exchangeRateTimeUtc` is.
   */
  exchangeRateTimeStamp?: string;
  /** Until when the offer holds: an ISO 8601 date-time with seconds and a zone, as the gateway wrote it. */
  exchangeRateExpirationTimeUtc?: string;
  /**
   * The offer's rate identifier, in the shape of a gateway id ({@link isGatewayId}); absent when the answer gave none
   * or one of another shape (dropped: no request of the terminal needs it, and nothing of any other shape is kept).
   * The offer's `rateSource` is not read: the receipt states the rate source the operator configured.
   */
  rateId?: string;
  exchangeRateInverted?: boolean;
}

/** The answer to an offer request: an offer, or the reason why the customer pays in the local currency. */
export type DccOfferResult =
  | {
      kind: 'offer';
      id: string;
      reconciliationId?: string;
      offers: DccOffer[];
      /** Text that must be shown and printed without modification (reference §5). */
      disclaimer?: string;
    }
  | { kind: 'no-offer'; reason: string; id?: string };

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const obj = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/** Body of `POST /vas/v1/currencyconversion`. */
export function buildDccOfferBody(r: DccOfferRequest): Buffer {
  if (!/^\d{6,11}$/.test(r.cardPrefix)) {
    throw new GatewayInvalidRequestError(
      'paymentInformation.card.number',
      'INVALID_DATA',
      'the DCC offer takes 6–11 leading card digits, never the whole card number',
    );
  }
  let originalAmount: string;
  let originalCurrency: string;
  try {
    originalCurrency = requireCurrency(r.currency).alpha;
    originalAmount = toDecimalString(r.amountMinor, originalCurrency);
  } catch (e) {
    throw new GatewayInvalidRequestError(
      'orderInformation.amountDetails.originalAmount',
      'INVALID_DATA',
      e instanceof AmountError ? e.message : `"${r.currency}" is not a currency`,
      { cause: e },
    );
  }
  const body = {
    ...(r.code !== undefined || r.partner !== undefined
      ? {
          clientReferenceInformation: {
            ...(r.code !== undefined ? { code: r.code } : {}),
            ...(r.partner ? { partner: r.partner } : {}),
          },
        }
      : {}),
    paymentInformation: { card: { number: r.cardPrefix } },
    orderInformation: {
      amountDetails: { originalAmount, originalCurrency },
      currencyConversion: { type: 'DCC' },
    },
    ...(r.entryMode !== undefined || r.terminalId !== undefined
      ? {
          pointOfSaleInformation: {
            ...(r.entryMode !== undefined ? { entryMode: r.entryMode.toUpperCase() } : {}),
            ...(r.terminalId !== undefined ? { terminalId: r.terminalId } : {}),
          },
        }
      : {}),
  };
  return Buffer.from(JSON.stringify(body), 'utf8');
}

/**
 * A time of the offer (`exchangeRateTimeUtc`, `exchangeRateExpirationTimeUtc`): an ISO 8601 date-time with seconds
 * and a zone, as the gateway writes its UTC times ({@link isoDateTimeMs}), with the instant it stands for; undefined
 * when absent.
 * @throws GatewayError GW_PARSE otherwise.
 */
function timeAt(o: Record<string, unknown>, key: string): { text: string; ms: number } | undefined {
  const v = o[key];
  if (v === undefined || v === null || v === '') return undefined;
  const ms = isoDateTimeMs(v);
  if (ms === undefined)
    throw new GatewayError(
      'GW_PARSE',
      `a DCC offer's ${key} is not an ISO 8601 date-time with seconds and a zone`,
    );
  return { text: v as string, ms };
}

/**
 * A rate of the offer (`exchangeRate`, `marginRate`) as the exact decimal text it stands for ({@link rateTextOf}):
 * the text the authorization sends back and the journal keeps. Undefined when absent.
 * @throws GatewayError GW_PARSE when no such text can be read from it.
 */
function rateAt(o: Record<string, unknown>, key: string): string | undefined {
  const v = o[key];
  if (v === undefined || v === null || v === '') return undefined;
  const text = rateTextOf(v);
  if (text === undefined)
    throw new GatewayError(
      'GW_PARSE',
      `a DCC offer's ${key} is not a decimal of at most 15 digits either side of the point`,
    );
  return text;
}

function offerFrom(v: unknown): DccOffer {
  const o = obj(v);
  const currency = str(o.currency);
  const amount = o.amount;
  if (currency === undefined || (typeof amount !== 'string' && typeof amount !== 'number')) {
    throw new GatewayError('GW_PARSE', 'a DCC offer lacks amount or currency');
  }
  const rate = rateAt(o, 'exchangeRate');
  if (rate === undefined) throw new GatewayError('GW_PARSE', 'a DCC offer lacks its rate');
  const originalCurrency = str(o.originalCurrency);
  const originalAmount = o.originalAmount;
  const out: DccOffer = {
    amountMinor: parseDecimal(amount, currency),
    currency,
    exchangeRate: rate,
  };
  if (
    originalCurrency !== undefined &&
    (typeof originalAmount === 'string' || typeof originalAmount === 'number')
  ) {
    out.originalAmountMinor = parseDecimal(originalAmount, originalCurrency);
    out.originalCurrency = originalCurrency;
  }
  const marginRate = rateAt(o, 'marginRate');
  if (marginRate !== undefined) out.marginRate = marginRate;
  const rateTime = timeAt(o, 'exchangeRateTimeUtc');
  if (rateTime !== undefined) {
    out.exchangeRateTimeUtc = rateTime.text;
    // Converted here, once: the authorization and every follow-on of it send these 14 digits (the journal keeps them
    // with the payment's terms, DESIGN.md money rule 7).
    out.exchangeRateTimeStamp = utcTimeStamp(rateTime.ms);
  }
  const expiry = timeAt(o, 'exchangeRateExpirationTimeUtc');
  if (expiry !== undefined) out.exchangeRateExpirationTimeUtc = expiry.text;
  // An id the terminal keeps (and could send back): in the shape of a gateway id or not kept at all — the offer stays
  // usable without it (spec 001's DCC field sets carry the offer's id and reconciliationId, not the rateId).
  const rateId = o.rateId;
  if (typeof rateId === 'string' && isGatewayId(rateId)) out.rateId = rateId;
  if (typeof o.exchangeRateInverted === 'boolean') out.exchangeRateInverted = o.exchangeRateInverted;
  return out;
}

/**
 * Reads a 2xx offer answer: status PENDING with `orderInformation.currencyConversion.offer[]` is an offer; DECLINED
 * is no offer (NOT_ELIGIBLE, CURRENCY_MATCH, …).
 * @throws GatewayError GW_PARSE / GW_UNDOCUMENTED for anything else.
 */
export function parseDccOfferAnswer(body: unknown): DccOfferResult {
  const b = obj(body);
  const status = str(b.status);
  const id = str(b.id);
  if (status === 'DECLINED') {
    const reason = reasonCode(obj(b.errorInformation).reason) ?? reasonCode(b.reason) ?? 'DECLINED';
    // The answer's id names the declined lookup in the logs: kept in the shape of a gateway id, or left out.
    return { kind: 'no-offer', reason, ...(id !== undefined && isGatewayId(id) ? { id } : {}) };
  }
  if (status !== 'PENDING')
    throw new GatewayError(
      'GW_UNDOCUMENTED',
      `DCC offer status ${status === undefined ? '(none)' : quotedCode(status)}`,
    );
  const conversion = obj(obj(b.orderInformation).currencyConversion);
  const rawOffers = conversion.offer ?? b.offer;
  if (!Array.isArray(rawOffers) || rawOffers.length === 0 || id === undefined) {
    throw new GatewayError('GW_PARSE', 'a PENDING DCC answer without id or offers');
  }
  // The offer's ids are kept with the payment's terms and sent back in its authorization (family A): in the shape of
  // a gateway id, as every id the terminal keeps and sends.
  if (!isGatewayId(id))
    throw new GatewayError('GW_PARSE', 'a DCC offer id is not 1–64 letters, digits, _ or -');
  let offers: DccOffer[];
  try {
    offers = rawOffers.map(offerFrom);
  } catch (e) {
    if (e instanceof GatewayError) throw e;
    throw new GatewayError('GW_PARSE', 'a DCC offer amount is unreadable', { cause: e });
  }
  // Shown and printed without modification (gateway.md §5), so never cut: one the terminal cannot show and keep as it
  // came is no disclaimer, and an offer without one is not offered (src/host/dcc.ts, presentableOffer).
  const given = str(conversion.disclaimer) ?? str(b.disclaimer);
  const disclaimer = isDisclaimerText(given) ? given : undefined;
  const reconciliationId = str(conversion.reconciliationId);
  if (reconciliationId !== undefined && !isGatewayId(reconciliationId))
    throw new GatewayError('GW_PARSE', 'a DCC reconciliationId is not 1–64 letters, digits, _ or -');
  return {
    kind: 'offer',
    id,
    offers,
    ...(reconciliationId !== undefined ? { reconciliationId } : {}),
    ...(disclaimer !== undefined ? { disclaimer } : {}),
  };
}
