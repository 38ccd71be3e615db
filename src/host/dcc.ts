import type { Config } from '../config/index.js';
import {
  billingAmountAgreesWithRate,
  convertAtOfferRate,
  type DccOfferInput,
  type DccOfferSummary,
  type DccTerms,
  localAmountsAtOfferRate,
  type ServiceRequest as FlowRequest,
} from '../flows/index.js';
import type { GatewayClient } from '../gateway/client.js';
import { GatewayError } from '../gateway/errors.js';
import type { DccOffer, DccOfferRequest, DccOfferResult } from '../gateway/services/dcc.js';
import type { DccFields } from '../gateway/services/types.js';
import type { Logger } from '../log/index.js';
import { currencyByAlpha, isRateText } from '../money/index.js';
import { isDisclaimerText } from '../vocabulary/dcc-disclaimer.js';
import { isoDateTimeMs } from '../vocabulary/gateway-time.js';
import type { CardStore } from './card-store.js';

/**
 * Currency conversion on the host side (spec 001, "Currency conversion (DCC)"; reference/gateway.md §5): the offer
 * request for a card the host holds (its BIN only), the check that the terminal can present the offer as the card
 * networks require, and the mapping of the machines' choice to the gateway's DCC fields per processor family.
 */

export const DCC_OFFER_PATH = '/vas/v1/currencyconversion';

/** One offer request as the operator and `simulate` see it. Never card data: not even the BIN is kept. */
export interface DccOfferExchange {
  service: 'dcc-offer';
  method: 'POST';
  path: typeof DCC_OFFER_PATH;
  /** The local price asked about, minor units of `currency`. */
  amountMinor: number;
  currency: string;
  /**
   * HTTP status of a refused request when the client reports it; null when the client parsed a 2xx answer (it does
   * not expose which) or nothing came back.
   */
  httpStatus: number | null;
  /** `PENDING` (an offer shown), `DECLINED:<reason>` (no offer), `NOT_PRESENTABLE` or the error code of a failure. */
  status: string;
  /** ISO time the request was made. */
  at: string;
}

/** How many recent offer exchanges are kept in memory. */
const EXCHANGES_KEPT = 100;

/**
 * The first digits of a card number that find its billing currency: 8 for a 16-digit or longer PAN (ISO/IEC 7812-1
 * eight-digit issuer identification numbers), 6 otherwise — never more (reference/gateway.md §5: send no more than
 * the gateway needs).
 */
export function cardBin(pan: string): string {
  return pan.slice(0, pan.length >= 16 ? 8 : 6);
}

/**
 * Whether this terminal can show every element of the choice (gateway.md §5: an unattended terminal that cannot show
 * all of it must not offer conversion). The meter, kiosk and attended screens have the choose-currency screen; a
 * tap-and-go gate has no screen to choose on, and its hold's follow-ons are host-run without conversion terms.
 */
export function terminalCanPresentDcc(config: Config): boolean {
  switch (config.terminal.model) {
    case 'meter':
    case 'kiosk':
    case 'attended':
      return true;
    case 'tap-and-go':
      return false;
  }
}

/**
 * The offer the customer may choose, when the answer has every element the choice screen must show (both amounts
 * with currencies, the rate and its markup, the disclaimer, the expiry) and is for this price; null otherwise.
 */
export function presentableOffer(
  result: DccOfferResult,
  input: DccOfferInput,
  now: Date,
): DccOfferSummary | null {
  if (result.kind !== 'offer' || !isDisclaimerText(result.disclaimer)) return null;
  const offer = result.offers.find((o: DccOffer) => o.currency !== input.currency);
  if (offer === undefined) return null;
  const { marginRate, exchangeRateTimeStamp, exchangeRateExpirationTimeUtc } = offer;
  if (
    marginRate === undefined ||
    exchangeRateTimeStamp === undefined ||
    exchangeRateExpirationTimeUtc === undefined ||
    currencyByAlpha(offer.currency) === undefined ||
    !isRateText(offer.exchangeRate) ||
    !isRateText(marginRate) ||
    offer.amountMinor <= 0
  )
    return null;
  // An offer for another price or currency than the one asked about cannot be authorized against.
  if (offer.originalCurrency !== undefined && offer.originalCurrency !== input.currency) return null;
  if (offer.originalAmountMinor !== undefined && offer.originalAmountMinor !== input.amountMinor) return null;
  const expires = isoDateTimeMs(exchangeRateExpirationTimeUtc);
  if (expires === undefined || expires <= now.getTime()) return null;
  const rate = {
    localAmountMinor: input.amountMinor,
    localCurrency: input.currency,
    billingAmountMinor: offer.amountMinor,
    billingCurrency: offer.currency,
    exchangeRate: offer.exchangeRate,
    exchangeRateInverted: offer.exchangeRateInverted === true,
  };
  // An amount its own rate does not give: the customer would be shown, and charged, a conversion its follow-ons do not
  // repeat (a partial capture or refund converts at the rate).
  if (!billingAmountAgreesWithRate(rate)) return null;
  return {
    offerId: result.id,
    ...(result.reconciliationId !== undefined ? { reconciliationId: result.reconciliationId } : {}),
    ...rate,
    marginRate,
    exchangeRateTimeStamp,
    expiresAtUtc: exchangeRateExpirationTimeUtc,
    ...(offer.rateId !== undefined ? { rateId: offer.rateId } : {}),
    disclaimer: result.disclaimer,
  };
}

/**
 * The gateway's DCC fields for a machine's request of `localMinor` (spec 001, DCC authorization, capture and
 * refund): indicator 1 with the billing amount converted at the offer's rate, the rate and its timestamp, and for
 * family A the offer and reconciliation ids; indicator 3 as is (no conversion fields). Follow-ons of a payment in the
 * local currency carry none.
 */
export function dccFieldsFor(
  selection: DccTerms | undefined,
  localMinor: number,
  family: 'A' | 'B',
  original: boolean,
): DccFields | undefined {
  if (selection === undefined) return undefined;
  if (selection.indicator === '3') return original ? { indicator: '3' } : undefined;
  const offer = selection.offer;
  return {
    indicator: '1',
    family,
    billingAmountMinor: convertAtOfferRate(localMinor, offer),
    billingCurrency: offer.billingCurrency,
    exchangeRate: offer.exchangeRate,
    // As the offer gave it to the authorization, or as the authorization sent it to a follow-on (money rule 7).
    exchangeRateTimeStamp: offer.exchangeRateTimeStamp,
    offerId: offer.offerId,
    ...(offer.reconciliationId !== undefined ? { reconciliationId: offer.reconciliationId } : {}),
  };
}

/**
 * Amount and currency of EMV tags 9F02 (Amount, Authorised) and 5F2A (Transaction Currency Code) of an authorization
 * or sale, converted or not: always the local price in the local currency. The card is read before the customer
 * chooses the currency (spec 001 DCC flow: the offer request needs the card's BIN), so the reader was activated with
 * the local price and the card's cryptogram (9F26) was computed over that 9F02 and 5F2A (EMV Book 3: 9F02 is the
 * amount authorised in the transaction currency 5F2A, both in CDOL1). Rewriting them to the converted amount would
 * make the tags disagree with the cryptogram the issuer verifies; the conversion travels in the DCC fields of the
 * message instead (indicator 1, rate, billing amount). The sandbox does not compare 9F02/5F2A with the amount
 * details of a converted request for the same reason.
 */
export function emvTransactionAmount(request: Pick<FlowRequest, 'amountMinor' | 'currency'>): {
  amountMinor: number;
  currency: string;
} {
  return { amountMinor: request.amountMinor, currency: request.currency };
}

/**
 * Amount and currency of a reversal or timeout reversal of a converted authorization. Family A authorized in the
 * billing currency, so its reversal carries the billing amount at the authorization's rate (spec 001: the reversal
 * amount equals the authorized amount); family B authorized the local price.
 */
export function reversalAmount(
  request: Pick<FlowRequest, 'amountMinor' | 'currency'> & { dcc?: DccTerms | undefined },
  family: 'A' | 'B',
): { amountMinor: number; currency: string } {
  const dcc = request.dcc;
  if (dcc?.indicator !== '1' || family === 'B')
    return { amountMinor: request.amountMinor, currency: request.currency };
  return {
    amountMinor: convertAtOfferRate(request.amountMinor, dcc.offer),
    currency: dcc.offer.billingCurrency,
  };
}

/**
 * An amount of the gateway's answer, or of a follow-on as the journal records it, in the machines' local minor units.
 * Family A answers a converted authorization, and journals its follow-ons, in the billing currency: the offered billing
 * amount is the offered local price; any other is a local amount that the terminal's one conversion rule
 * ({@link convertAtOfferRate}) turns back into that same billing amount, when there is one (a capture or refund the
 * terminal converted itself: sent again after a restart, it must carry the card amount it carried, not one more or
 * less), the one nearest the amount scaled by the offer's two amounts when several are; an amount no local amount
 * converts to (a partial approval, the gateway's figure) is scaled by the offer's two amounts, rounded half up.
 */
export function localAmountOf(
  gatewayMinor: number | undefined,
  request: { dcc?: DccTerms | undefined },
  family: 'A' | 'B',
): number | undefined {
  const dcc = request.dcc;
  if (gatewayMinor === undefined || dcc?.indicator !== '1' || family === 'B') return gatewayMinor;
  const { billingAmountMinor, localAmountMinor } = dcc.offer;
  if (gatewayMinor === billingAmountMinor) return localAmountMinor;
  const numerator = 2n * BigInt(gatewayMinor) * BigInt(localAmountMinor) + BigInt(billingAmountMinor);
  const scaled = Number(numerator / (2n * BigInt(billingAmountMinor)));
  const converting = localAmountsAtOfferRate(gatewayMinor, dcc.offer);
  return converting === undefined
    ? scaled
    : Math.min(Math.max(scaled, converting.lowest), converting.highest);
}

/**
 * Offer requests for the cards the host holds. The request carries the card's BIN, the local price, the entry mode
 * and the terminal id — never the PAN (reference/gateway.md §5); the answer reaches the machines only when the
 * terminal can present it completely.
 */
export class DccOffers {
  private readonly log: DccOfferExchange[] = [];

  constructor(
    private readonly deps: {
      config: Config;
      gateway: Pick<GatewayClient, 'dccOffer'>;
      cards: Pick<CardStore, 'get'>;
      logger: Logger;
      now: () => Date;
    },
  ) {}

  /** Recent offer requests, oldest first (at most {@link EXCHANGES_KEPT}). */
  exchanges(): readonly DccOfferExchange[] {
    return [...this.log];
  }

  /** The FlowEffects `dccOffer` contract (src/flows/effects.ts): null for no offer; rejects only on abort. */
  async offer(input: DccOfferInput, signal: AbortSignal): Promise<DccOfferSummary | null> {
    const { config, logger } = this.deps;
    if (!config.dcc.enabled || !terminalCanPresentDcc(config)) return null;
    const card = this.deps.cards.get(input.cardRef);
    const pan = card?.data?.pan;
    if (card === undefined || pan === undefined) return null;
    const entryMode = card.summary.entryMode === 'msd' ? 'contactless' : card.summary.entryMode;
    // An acquirer that forbids conversion on a tap at or below the CVM limit (kiosk.md §1): no offer, nothing asked.
    const cvmLimit = config.dcc.contactlessCvmLimitMinor;
    if (entryMode === 'contactless' && cvmLimit !== undefined && input.amountMinor <= cvmLimit) return null;
    const request: DccOfferRequest = {
      cardPrefix: cardBin(pan),
      amountMinor: input.amountMinor,
      currency: input.currency,
      entryMode,
      terminalId: config.terminal.id,
      partner: {
        developerId: config.terminal.partner.developerId,
        solutionId: config.terminal.partner.solutionId,
      },
    };
    const at = this.deps.now();
    let result: DccOfferResult;
    try {
      result = await this.deps.gateway.dccOffer(request, { signal });
    } catch (e) {
      if (signal.aborted) throw e;
      const code = e instanceof GatewayError ? e.code : 'DCC_OFFER_FAILED';
      const httpStatus = e instanceof GatewayError && e.httpStatus !== undefined ? e.httpStatus : null;
      this.note(input, at, httpStatus, code);
      // spec 001, DCC flow step 2: a failed lookup continues in the local currency.
      logger.warn({ code }, 'DCC offer lookup failed; paying in the local currency');
      return null;
    }
    if (result.kind === 'no-offer') {
      this.note(input, at, null, `DECLINED:${result.reason}`);
      return null;
    }
    const offer = presentableOffer(result, input, this.deps.now());
    this.note(input, at, null, offer === null ? 'NOT_PRESENTABLE' : 'PENDING');
    if (offer === null)
      logger.warn({ offerId: result.id }, 'DCC offer incomplete for the choice screen: not offered');
    return offer;
  }

  private note(input: DccOfferInput, at: Date, httpStatus: number | null, status: string): void {
    this.log.push({
      service: 'dcc-offer',
      method: 'POST',
      path: DCC_OFFER_PATH,
      amountMinor: input.amountMinor,
      currency: input.currency,
      httpStatus,
      status,
      at: at.toISOString(),
    });
    this.log.splice(0, Math.max(0, this.log.length - EXCHANGES_KEPT));
  }
}
