import type { ServiceName, ServiceRequest } from './types.js';

/**
 * One required field of a service: a dotted path into the request body and, for conditional rows, when it applies.
 * The table below is data (spec 001, "Card-present parking", required fields; reference/gateway.md §7 for the
 * services whose list the spec marks "not shown"): the builders fill the body, then every applicable row is checked
 * before a byte is sent, and certification rules can read the same table.
 */
export interface RequiredField {
  /** Dotted path in the JSON body, e.g. `pointOfSaleInformation.emv.tags`. */
  readonly field: string;
  /** Human statement of the condition, for reports; absent when the field is always required. */
  readonly condition?: string;
  /** Whether the row applies to this request; absent means always. */
  readonly applies?: (request: ServiceRequest, context: RequestContext) => boolean;
}

/** What the builder learned from the request that conditions depend on. */
export interface RequestContext {
  /** The decoded primitive EMV tags of `emv.tags` (tag → hex value), when the request carries them. */
  readonly emvTags?: ReadonlyMap<string, string>;
}

type CardPresent = Extract<ServiceRequest, { pos: unknown }>;

const hasPos = (r: ServiceRequest): r is CardPresent => 'pos' in r;
const emvEntry = (r: ServiceRequest): boolean =>
  hasPos(r) && (r.pos.entryMode === 'contact' || r.pos.entryMode === 'contactless');
const emvWith5F34 = (r: ServiceRequest, c: RequestContext): boolean =>
  emvEntry(r) && c.emvTags?.has('5F34') === true;
const attended = (r: ServiceRequest): boolean => hasPos(r) && r.pos.catLevel === 6;
const attendedN1 = (r: ServiceRequest): boolean => attended(r) && hasPos(r) && r.pos.cardType === '002';
const dccFamily =
  (family: 'A' | 'B') =>
  (r: ServiceRequest): boolean =>
    'dcc' in r && r.dcc !== undefined && r.dcc.indicator === '1' && r.dcc.family === family;
const dccFamilyA = dccFamily('A');
const dccFamilyB = dccFamily('B');
const dccConverted = (r: ServiceRequest): boolean => dccFamilyA(r) || dccFamilyB(r);
const contactPreauth = (r: ServiceRequest): boolean =>
  r.service === 'capture' && r.preauthEntryMode === 'contact';

const row = (
  field: string,
  condition?: string,
  applies?: (r: ServiceRequest, c: RequestContext) => boolean,
): RequiredField =>
  condition === undefined ? { field } : { field, condition, ...(applies ? { applies } : {}) };

const PARTNER = [
  row('clientReferenceInformation.partner.developerId'),
  row('clientReferenceInformation.partner.solutionId'),
  row('clientReferenceInformation.partner.thirdPartyCertificationNumber'),
];

const REFERENCE = [row('clientReferenceInformation.code'), row('clientReferenceInformation.comments')];

const DCC = [
  row('orderInformation.amountDetails.currencyConversion.indicator', 'DCC accepted', dccConverted),
  row('orderInformation.amountDetails.exchangeRate', 'DCC accepted', dccConverted),
  row('orderInformation.amountDetails.exchangeRateTimeStamp', 'DCC accepted', dccConverted),
  row('orderInformation.amountDetails.originalAmount', 'DCC, processor family A', dccFamilyA),
  row('orderInformation.amountDetails.originalCurrency', 'DCC, processor family A', dccFamilyA),
  row('orderInformation.amountDetails.foreignAmount', 'DCC, processor family B', dccFamilyB),
  row('orderInformation.amountDetails.foreignCurrency', 'DCC, processor family B', dccFamilyB),
];

/** Spec 001's pre-authorization column (shared by the sale column where both say "yes"). */
const CARD_PRESENT_ORIGINAL = [
  ...REFERENCE,
  row('clientReferenceInformation.transactionId'),
  ...PARTNER,
  row('merchantInformation.transactionLocalDateTime'),
  row('orderInformation.amountDetails.currency'),
  row('orderInformation.amountDetails.totalAmount'),
  row('paymentInformation.card.type'),
  row('pointOfSaleInformation.entryMode'),
  row('pointOfSaleInformation.terminalCapability'),
  row('pointOfSaleInformation.terminalPinCapability'),
  row('pointOfSaleInformation.trackData'),
  row('pointOfSaleInformation.emv.tags', 'EMV contact or contactless entry', emvEntry),
  // Spec 001: "cardSequenceNumber required when EMV tag 5F34 is on the chip"; tag 5F34 is C (N1) / O (N2), so the
  // "yes" of the attended and pre-authorization columns is read the same way.
  row('pointOfSaleInformation.emv.cardSequenceNumber', 'tag 5F34 on the chip', emvWith5F34),
  row('processingInformation.commerceIndicator'),
];

const AUTHORIZATION = [
  ...CARD_PRESENT_ORIGINAL,
  // "Unattended sale and pre-authorization must carry catLevel; attended mobile payments must carry catLevel."
  row('pointOfSaleInformation.catLevel'),
  row('processingInformation.authorizationOptions.authIndicator'),
];

const REFUND = [
  ...REFERENCE,
  ...PARTNER,
  row('clientReferenceInformation.transactionId'),
  row('orderInformation.amountDetails.totalAmount'),
  row('orderInformation.amountDetails.currency'),
  ...DCC,
];

const VOID = [...REFERENCE];

/** The required-field table, one list per service. */
export const REQUIRED_FIELDS: Readonly<Record<ServiceName, readonly RequiredField[]>> = {
  avr: AUTHORIZATION,
  preauth: [...AUTHORIZATION, ...DCC],
  sale: [
    ...AUTHORIZATION,
    row('processingInformation.capture'),
    row('paymentInformation.initiationChannel', 'attended mobile (catLevel 6)', attended),
    row('pointOfSaleInformation.serviceCode', 'attended mobile (catLevel 6)', attended),
    row('pointOfSaleInformation.isDedicatedHardwareTerminal', 'attended mobile, card type 002', attendedN1),
    ...DCC,
  ],
  incremental: [
    ...REFERENCE,
    ...PARTNER,
    row('clientReferenceInformation.transactionId'),
    row('orderInformation.amountDetails.additionalAmount'),
    row('orderInformation.amountDetails.currency'),
    row('processingInformation.authorizationOptions.initiator.storedCredentialUsed'),
    row('merchantInformation.transactionLocalDateTime'),
  ],
  reversal: [
    ...REFERENCE,
    ...PARTNER,
    row('orderInformation.amountDetails.currency'),
    row('reversalInformation.amountDetails.totalAmount'),
  ],
  'timeout-reversal': [
    row('clientReferenceInformation.transactionId'),
    row('clientReferenceInformation.comments'),
    row('orderInformation.amountDetails.currency'),
    row('reversalInformation.amountDetails.totalAmount'),
  ],
  capture: [
    ...REFERENCE,
    ...PARTNER,
    row('clientReferenceInformation.transactionId'),
    row('orderInformation.amountDetails.totalAmount'),
    row('orderInformation.amountDetails.currency'),
    row('pointOfSaleInformation.emv.tags', 'pre-authorization read by EMV contact', contactPreauth),
    ...DCC,
  ],
  'refund-capture': REFUND,
  'refund-payment': REFUND,
  credit: [...CARD_PRESENT_ORIGINAL],
  'void-capture': VOID,
  'void-payment': VOID,
  'void-refund': VOID,
  'void-credit': VOID,
  'timeout-void': [
    row('clientReferenceInformation.transactionId'),
    row('clientReferenceInformation.comments'),
  ],
};

/** Dotted paths split once: the table is fixed, and every request reads most of it. */
const SPLIT_PATHS = new Map<string, readonly string[]>();

/** The value at a dotted path of a JSON object, or undefined. */
export function valueAt(body: unknown, path: string): unknown {
  let keys = SPLIT_PATHS.get(path);
  if (keys === undefined) {
    keys = path.split('.');
    // Bounded: only paths of the code's own tables come here, but never let a caller grow it without limit.
    if (SPLIT_PATHS.size < 1024) SPLIT_PATHS.set(path, keys);
  }
  let cur: unknown = body;
  for (const key of keys) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

/** The applicable required fields of `request` that are absent (or empty strings) in `body`. */
export function missingFields(
  request: ServiceRequest,
  body: unknown,
  context: RequestContext = {},
): string[] {
  const missing: string[] = [];
  for (const r of REQUIRED_FIELDS[request.service]) {
    if (r.applies !== undefined && !r.applies(request, context)) continue;
    const v = valueAt(body, r.field);
    if (v === undefined || v === null || v === '') missing.push(r.field);
  }
  return missing;
}
