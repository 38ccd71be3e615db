/**
 * Field validation of `POST /pts/v2/payments`: authorization, pre-authorization, sale and zero-amount account
 * verification, card present (spec 001, Card-present parking) or not (the SDK samples), converted (DCC) or not.
 */
import { cardTypeOfPan, luhnValid } from '../card.js';
import type { DccAuthorizationTerms } from '../dcc.js';
import type { DecodedTag } from '../emv-rules.js';
import type { FieldReader } from '../fields.js';
import type { ApiCall } from '../service-types.js';
import { validateCardPresent } from './card-present.js';
import { refusal } from './refusal.js';

/** Spec 001 names the authorization's comments two ways; both are accepted. */
const PARKING_AUTH_COMMENTS = ['Parking Authorization', 'Parking Auth'];

/** The service a payment request is, from its body. */
export type PaymentKind = 'authorization' | 'sale' | 'verification';

/** A payment request that passed validation. */
export interface PaymentRequest {
  service: PaymentKind;
  currency: string;
  totalMinor: number;
  /** The request carried `pointOfSaleInformation` (the terminal's; amount triggers apply). */
  cardPresent: boolean;
  pan?: string;
  /** `YYMM`. */
  expiry?: string;
  cardType?: string;
  entryMode?: string;
  emv?: DecodedTag[];
  /** The offer and field set of a converted authorization (indicator `1`). */
  dcc?: DccAuthorizationTerms;
}

/** Checks a converted authorization against its offer (dcc.ts `checkDccAuthorization`), collecting into `r`. */
export type DccAuthorizationCheck = (r: FieldReader) => DccAuthorizationTerms | undefined;

/** The comments a card-present payment must carry (spec 001: the comments value names the service). */
function expectedComments(service: PaymentKind): string[] {
  if (service === 'sale') return ['Parking Sale'];
  if (service === 'verification') return ['Parking AVR'];
  return PARKING_AUTH_COMMENTS;
}

/** Card data of a card-not-present request (the gateway SDK samples): keyed number and expiry. */
function readKeyedCard(r: FieldReader, now: Date): { pan?: string; expiry?: string; cardType?: string } {
  const number = r.text('paymentInformation.card.number', true);
  const month = r.text('paymentInformation.card.expirationMonth', true);
  const year = r.text('paymentInformation.card.expirationYear', true);
  let cardType = r.text('paymentInformation.card.type', false);
  let pan: string | undefined;
  if (number !== undefined) {
    if (!/^\d{12,19}$/.test(number) || !luhnValid(number))
      throw refusal(now, 'INVALID_CARD', 'the card number is not valid', 'paymentInformation.card.number');
    pan = number;
    cardType ??= cardTypeOfPan(number);
  }
  const expiry =
    month !== undefined && year !== undefined ? `${year.slice(-2)}${month.padStart(2, '0')}` : undefined;
  return { pan, expiry, cardType };
}

/**
 * Validates a payment request read by `r` (its transactionId already read for the replay check); throws the 400
 * answer naming every field at fault.
 */
export function validatePayment(
  r: FieldReader,
  call: ApiCall,
  now: Date,
  checkDcc: DccAuthorizationCheck,
): PaymentRequest {
  const currency = r.currency('orderInformation.amountDetails.currency');
  const total = r.amount('orderInformation.amountDetails.totalAmount', currency);
  const capture = r.flag('processingInformation.capture') === true;
  const cardPresent = r.has('pointOfSaleInformation');
  let service: PaymentKind = capture ? 'sale' : total === 0 ? 'verification' : 'authorization';
  let read: Omit<PaymentRequest, 'service' | 'currency' | 'totalMinor' | 'cardPresent' | 'dcc'>;
  if (cardPresent) {
    const comments = r.text('clientReferenceInformation.comments', true);
    if (capture && total === 0)
      r.invalid('orderInformation.amountDetails.totalAmount', 'a sale cannot be for 0.00');
    const expected = expectedComments(service);
    if (comments !== undefined && !expected.includes(comments))
      r.invalid(
        'clientReferenceInformation.comments',
        `comments must be ${expected.join(' or ')} for this service`,
      );
    const cardService = service === 'authorization' ? 'pre-authorization' : service;
    read = validateCardPresent(r, call, cardService, currency, total, now);
  } else {
    read = readKeyedCard(r, now);
  }
  const dcc =
    r.has('orderInformation.amountDetails.currencyConversion') && currency !== undefined
      ? checkDcc(r)
      : undefined;
  r.finish();
  if (currency === undefined || total === undefined)
    throw refusal(now, 'MISSING_FIELD', 'amount and currency are required');
  if (service === 'sale' && !cardPresent && total === 0) service = 'verification';
  // A literal of every field (absent ones undefined), not spread from the card read: one hidden class for all.
  return {
    service,
    currency,
    totalMinor: total,
    cardPresent,
    pan: read.pan,
    expiry: read.expiry,
    cardType: read.cardType,
    entryMode: read.entryMode,
    emv: read.emv,
    dcc,
  };
}
