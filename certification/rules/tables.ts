/**
 * The tables the rules read: required fields per service, the comments each service may carry, field value sets,
 * the never-send tags, applications and entry modes. Data, not code: a new value is a new row.
 */
import {
  commentsFor,
  isServiceName,
  type ParkingComments,
  type ServiceName,
} from '../../src/vocabulary/services.js';
import type { CardType, TagSetService } from '../../src/emv/index.js';

/** Services whose body builds its own tag set (tags read now, amount and date of this message). */
export const TAG_BUILDING_SERVICES: ReadonlySet<ServiceName> = new Set(['avr', 'preauth', 'sale', 'credit']);

/** The tag-set service of spec 001's EMV table that a parking service's tags follow (src/emv/networks.ts). */
export const TAG_SET_SERVICE: Readonly<Record<ServiceName, TagSetService | null>> = {
  avr: 'authorization',
  preauth: 'authorization',
  sale: 'authorization',
  incremental: 'authorization',
  reversal: 'reversal',
  'timeout-reversal': 'reversal',
  capture: 'capture',
  'refund-capture': 'refund',
  'refund-payment': 'refund',
  credit: 'credit',
  'void-capture': null,
  'void-payment': null,
  'void-refund': null,
  'void-credit': null,
  'timeout-void': null,
};

const REFERENCE = ['clientReferenceInformation.code', 'clientReferenceInformation.comments'];
const PARTNER = [
  'clientReferenceInformation.partner.developerId',
  'clientReferenceInformation.partner.solutionId',
  'clientReferenceInformation.partner.thirdPartyCertificationNumber',
];
const CARD_PRESENT = [
  ...REFERENCE,
  'clientReferenceInformation.transactionId',
  ...PARTNER,
  'merchantInformation.transactionLocalDateTime',
  'orderInformation.amountDetails.currency',
  'orderInformation.amountDetails.totalAmount',
  'paymentInformation.card.type',
  'pointOfSaleInformation.entryMode',
  'pointOfSaleInformation.terminalCapability',
  'pointOfSaleInformation.terminalPinCapability',
  'pointOfSaleInformation.trackData',
  'pointOfSaleInformation.catLevel',
  'processingInformation.commerceIndicator',
];
const AUTHORIZATION = [...CARD_PRESENT, 'processingInformation.authorizationOptions.authIndicator'];
const AMOUNT = ['orderInformation.amountDetails.totalAmount', 'orderInformation.amountDetails.currency'];
/** gateway.md §7: an increment carries this, and `true` (checked with the field). */
export const STORED_CREDENTIAL_USED =
  'processingInformation.authorizationOptions.initiator.storedCredentialUsed';

/**
 * Fields each service must send (spec 001 required-field list for sale and pre-authorization, "must carry catLevel";
 * gateway.md §7 for the follow-ons). Conditional fields (tags, attended sale) are rules of their own.
 */
export const REQUIRED_FIELDS: Readonly<Record<ServiceName, readonly string[]>> = {
  avr: AUTHORIZATION,
  preauth: AUTHORIZATION,
  sale: AUTHORIZATION,
  credit: CARD_PRESENT,
  incremental: [
    'clientReferenceInformation.comments',
    ...PARTNER,
    'orderInformation.amountDetails.currency',
    'merchantInformation.transactionLocalDateTime',
    STORED_CREDENTIAL_USED,
  ],
  reversal: [
    ...REFERENCE,
    ...PARTNER,
    'orderInformation.amountDetails.currency',
    'reversalInformation.amountDetails.totalAmount',
  ],
  'timeout-reversal': [
    'clientReferenceInformation.comments',
    'clientReferenceInformation.transactionId',
    'orderInformation.amountDetails.currency',
    'reversalInformation.amountDetails.totalAmount',
  ],
  // gateway.md §2: every original (authorization, capture, sale, refund, credit) carries a transactionId of its own.
  // gateway.md §7: capture, reversal, increment and refund carry the partner ids (developerId, solutionId,
  // thirdPartyCertificationNumber) like the originals of spec 001's required-field list.
  capture: [...REFERENCE, 'clientReferenceInformation.transactionId', ...PARTNER, ...AMOUNT],
  'refund-capture': [...REFERENCE, 'clientReferenceInformation.transactionId', ...PARTNER, ...AMOUNT],
  'refund-payment': [...REFERENCE, 'clientReferenceInformation.transactionId', ...PARTNER, ...AMOUNT],
  'void-capture': ['clientReferenceInformation.comments'],
  'void-payment': ['clientReferenceInformation.comments'],
  'void-refund': ['clientReferenceInformation.comments'],
  'void-credit': ['clientReferenceInformation.comments'],
  'timeout-void': ['clientReferenceInformation.comments', 'clientReferenceInformation.transactionId'],
};

/** Spec 001: the attended mobile sale also requires these. */
export const ATTENDED_SALE_FIELDS: readonly string[] = [
  'paymentInformation.initiationChannel',
  'pointOfSaleInformation.serviceCode',
];

/**
 * The comments a service may carry (spec 001 comments table, through the shared vocabulary). The pre-authorization
 * has two spellings in the spec; a capture is "Less Than Auth" below the authorized amount (checked with the session).
 */
export const ALLOWED_COMMENTS: Readonly<Record<ServiceName, readonly ParkingComments[]>> = {
  avr: [commentsFor('avr')],
  preauth: ['Parking Auth', 'Parking Authorization'],
  incremental: [commentsFor('incremental')],
  reversal: [commentsFor('reversal')],
  'timeout-reversal': [commentsFor('timeout-reversal')],
  capture: ['Parking Capture', 'Parking Capture Less Than Auth'],
  sale: [commentsFor('sale')],
  'refund-capture': [commentsFor('refund-capture')],
  'refund-payment': [commentsFor('refund-payment')],
  credit: [commentsFor('credit')],
  'void-capture': [commentsFor('void-capture')],
  'void-payment': [commentsFor('void-payment')],
  'void-refund': [commentsFor('void-refund')],
  'void-credit': [commentsFor('void-credit')],
  'timeout-void': [commentsFor('timeout-void')],
};

/** 9C (Transaction Type) per service: refunds and credits move money to the card. */
export const TRANSACTION_TYPE: Readonly<Record<ServiceName, '00' | '20' | null>> = {
  avr: '00',
  preauth: '00',
  sale: '00',
  incremental: '00',
  reversal: '00',
  'timeout-reversal': '00',
  capture: '00',
  'refund-capture': '20',
  'refund-payment': '20',
  credit: '20',
  'void-capture': null,
  'void-payment': null,
  'void-refund': null,
  'void-credit': null,
  'timeout-void': null,
};

/** Value sets of the card-present fields (gateway.md §3, spec 001). */
export const ENTRY_MODES: readonly string[] = ['contact', 'contactless', 'swiped', 'msd'];
export const EMV_ENTRY_MODES: readonly string[] = ['contact', 'contactless'];
/** Entry modes of a tap: EMV contactless and contactless magnetic-stripe mode. */
export const CONTACTLESS_ENTRY_MODES: readonly string[] = ['contactless', 'msd'];
export const CAT_LEVELS: readonly string[] = ['2', '6'];
export const TERMINAL_CAPABILITIES: readonly string[] = ['1', '2', '3', '4', '5'];
export const EMV_TERMINAL_CAPABILITIES: readonly string[] = ['4', '5'];
export const PIN_CAPABILITIES: readonly string[] = [
  '0',
  '1',
  '2',
  '4',
  '5',
  '6',
  '7',
  '8',
  '9',
  '10',
  '11',
  '12',
];
export const OPERATING_ENVIRONMENTS: readonly string[] = ['1', '2', '3', '4'];
export const ATTENDED_ENVIRONMENTS: readonly string[] = ['1', '3'];
export const CARD_TYPES: readonly CardType[] = ['001', '002'];
/** catLevel per attendance (spec 001: unattended 2, attended mobile 6). */
export const CAT_LEVEL_BY_ATTENDANCE = { attended: '6', unattended: '2' } as const;

/** Registered application provider ids (first 5 bytes of 84 / 4F) and their parking card type. */
export const RID_CARD_TYPE: Readonly<Record<string, CardType>> = {
  A000000003: '001',
  A000000004: '002',
};

/**
 * Currencies of a single country (or of a country and its dependencies), with the ISO 3166 numeric codes a terminal
 * pricing in them stands in: 9F1A (Terminal Country Code) is one of them. Multi-country currencies (EUR, USD, XOF …)
 * are not listed: their 9F1A is only held to the session's one country.
 */
export const CURRENCY_COUNTRIES: Readonly<Record<string, readonly string[]>> = {
  GBP: ['826', '831', '832', '833'],
  JPY: ['392'],
  CHF: ['756', '438'],
  SEK: ['752'],
  PLN: ['616'],
  CZK: ['203'],
  HUF: ['348'],
  CAD: ['124'],
};

/** 9F39 (POS Entry Mode) values and the entryMode each agrees with. */
export const POS_ENTRY_MODE: Readonly<Record<string, readonly string[]>> = {
  '05': ['contact'],
  '07': ['contactless'],
  '91': ['msd'],
  '90': ['swiped'],
  '80': ['swiped'],
  '02': ['swiped'],
};

/** Whether `service` builds its own tag set (see {@link TAG_BUILDING_SERVICES}). */
export function buildsTags(service: string): boolean {
  return isServiceName(service) && TAG_BUILDING_SERVICES.has(service);
}
