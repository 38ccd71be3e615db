import { AmountError, isRateText, requireCurrency, toDecimalString } from '../../money/index.js';
import { commentsFor, MONEY_MOVING, type ParkingComments } from '../../vocabulary/services.js';
import { GatewayInvalidRequestError } from '../errors.js';
import { isGatewayId } from '../gateway-id.js';
import { newTransactionId } from '../transaction-id.js';
import { CONTACT_FOLLOW_ON_TAGS, inspectEmvTags, prohibitTag, requireTags } from './emv-checks.js';
import { missingFields, type RequestContext } from './required-fields.js';
import type {
  CardPresentFields,
  DccFields,
  Partner,
  PreparedRequest,
  ServiceName,
  ServiceRequest,
} from './types.js';

/** Options of the payment builders that two public guides disagree on (reference/gateway.md: make it configurable). */
export interface PaymentBuilderOptions {
  /**
   * Comments of a pre-authorization: spec 001's comments table says `Parking Authorization`, its required-field
   * list says `Parking Auth` (the default: the list is what message-level validation checks).
   */
  preauthComments?: 'Parking Auth' | 'Parking Authorization';
  /** Transaction id source (tests); defaults to {@link newTransactionId}. */
  newTransactionId?: () => string;
}

/** `clientReferenceInformation.comments` of a service (spec 001 comments table, src/vocabulary/services.ts). */
const comments = (service: ServiceName): ParkingComments => commentsFor(service);

type Json = Record<string, unknown>;

function invalid(field: string, message: string): never {
  throw new GatewayInvalidRequestError(field, 'INVALID_DATA', message);
}

/** Decimal string of an amount, or a typed error naming the field (never a silently rounded amount). */
function amount(minor: number, currency: string, field: string): string {
  try {
    return toDecimalString(minor, currency);
  } catch (e) {
    if (e instanceof AmountError) invalid(field, `${field}: ${e.message}`);
    throw e;
  }
}

function currencyCode(currency: string, field: string): string {
  try {
    return requireCurrency(currency).alpha;
  } catch {
    return invalid(field, `${field}: "${currency}" is not an ISO 4217 currency code`);
  }
}

/** Gateway ids go into paths: only the characters the gateway's ids use, so a path can never be altered. */
function pathId(id: string): string {
  if (!isGatewayId(id)) invalid('id', 'the gateway id is not 1–64 letters, digits, _ or -');
  return id;
}

function positive(minor: number, field: string): void {
  if (!(minor > 0)) invalid(field, `${field} must be above zero`);
}

function notNegative(minor: number, field: string): void {
  if (!(minor >= 0)) invalid(field, `${field} must not be below zero`);
}

/**
 * Drops undefined and empty-string members, and objects left empty, so that "absent" is one thing for the
 * required-field check; undefined when nothing is left.
 */
function compact(obj: Json): Json | undefined {
  const out: Json = {};
  let kept = 0;
  // Own keys only, as `for…in` with `Object.hasOwn` read them, in the same order; cheaper on every request.
  const keys = Object.keys(obj);
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i] as string;
    const v = obj[k];
    if (v === undefined || v === '') continue;
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      const inner = compact(v as Json);
      if (inner === undefined) continue;
      out[k] = inner;
    } else out[k] = v;
    kept++;
  }
  return kept > 0 ? out : undefined;
}

function reference(code: string, comments: string, partner?: Partner, transactionId?: string): Json {
  return {
    code,
    comments,
    transactionId,
    partner: partner && {
      developerId: partner.developerId,
      solutionId: partner.solutionId,
      thirdPartyCertificationNumber: partner.thirdPartyCertificationNumber,
    },
  };
}

/**
 * `orderInformation.amountDetails` with the DCC fields of spec 001. Family A authorizes the billing amount in the
 * billing currency and names the local amount as original*; family B keeps totalAmount in the merchant currency and
 * names the billing amount as foreign*.
 */
function amountDetails(
  minor: number,
  currency: string,
  dcc: DccFields | undefined,
): { json: Json; minor: number; currency: string } {
  const local = currencyCode(currency, 'orderInformation.amountDetails.currency');
  const total = amount(minor, local, 'orderInformation.amountDetails.totalAmount');
  if (dcc === undefined) return { json: { totalAmount: total, currency: local }, minor, currency: local };
  if (dcc.indicator !== '1') {
    return {
      json: { totalAmount: total, currency: local, currencyConversion: { indicator: dcc.indicator } },
      minor,
      currency: local,
    };
  }
  const billing = currencyCode(dcc.billingCurrency, 'orderInformation.amountDetails.currency');
  if (billing === local)
    invalid('orderInformation.amountDetails.currency', 'DCC billing currency equals the local currency');
  if (!isRateText(dcc.exchangeRate))
    invalid(
      'orderInformation.amountDetails.exchangeRate',
      'the exchange rate is not a decimal of at most 15 digits before and after the point',
    );
  const billingAmount = amount(dcc.billingAmountMinor, billing, 'orderInformation.amountDetails.totalAmount');
  const common = {
    exchangeRate: dcc.exchangeRate,
    exchangeRateTimeStamp: dcc.exchangeRateTimeStamp,
  };
  if (dcc.family === 'A') {
    return {
      json: {
        totalAmount: billingAmount,
        currency: billing,
        originalAmount: total,
        originalCurrency: local,
        ...common,
        currencyConversion: { indicator: '1', id: dcc.offerId, reconciliationId: dcc.reconciliationId },
      },
      minor: dcc.billingAmountMinor,
      currency: billing,
    };
  }
  return {
    json: {
      totalAmount: total,
      currency: local,
      foreignAmount: billingAmount,
      foreignCurrency: billing,
      ...common,
      currencyConversion: { indicator: '1' },
    },
    minor,
    currency: local,
  };
}

const LOCAL_DATE_TIME = /^\d{14}$/;
const CARD_SEQUENCE_NUMBER = /^\d{1,3}$/;

function localDateTime(value: string, field = 'merchantInformation.transactionLocalDateTime'): string {
  if (!LOCAL_DATE_TIME.test(value)) invalid(field, `${field} must be 14 digits, YYYYMMDDhhmmss`);
  return value;
}

interface Built {
  method: PreparedRequest['method'];
  path: string;
  body: Json;
  comments: string;
  transactionId?: string;
  referencedTransactionId?: string;
  amountMinor?: number;
  currency?: string;
  context: RequestContext;
}

function cardPresent(
  r: CardPresentFields & { dcc?: DccFields },
  comments: string,
  transactionId: string,
  amountMinor: number,
  processing: Json,
): Built {
  const { pos } = r;
  const context: { emvTags?: ReadonlyMap<string, string> } = {};
  let cardSequenceNumber = pos.cardSequenceNumber;
  if (pos.emvTags !== undefined && pos.emvTags !== '') {
    const tags = inspectEmvTags(pos.emvTags);
    context.emvTags = tags;
    // spec 001: emv.cardSequenceNumber is the value of tag 5F34; take it from the tags when the caller did not.
    cardSequenceNumber ??= tags.get('5F34');
  }
  // gateway.md §3: the value of tag 5F34 — so one given by the caller must be the 5F34 of the tags sent with it.
  const psn = context.emvTags?.get('5F34');
  if (
    pos.cardSequenceNumber !== undefined &&
    pos.cardSequenceNumber !== '' &&
    (psn === undefined ||
      !CARD_SEQUENCE_NUMBER.test(pos.cardSequenceNumber) ||
      Number(pos.cardSequenceNumber) !== Number(psn))
  ) {
    invalid(
      'pointOfSaleInformation.emv.cardSequenceNumber',
      psn === undefined
        ? 'emv.cardSequenceNumber is sent without tag 5F34 in emv.tags'
        : 'emv.cardSequenceNumber is not the value of tag 5F34 in emv.tags',
    );
  }
  if (
    pos.entryMode !== 'contact' &&
    pos.entryMode !== 'contactless' &&
    pos.emvTags !== undefined &&
    pos.emvTags !== ''
  ) {
    invalid('pointOfSaleInformation.emv.tags', `EMV tags sent with entry mode ${pos.entryMode}`);
  }
  // An EMV fallback is a chip card read by its stripe: a swipe, without chip data.
  if (pos.emvFallback !== undefined) {
    if (pos.entryMode !== 'swiped')
      invalid('pointOfSaleInformation.emv.fallback', `an EMV fallback is a swipe, not ${pos.entryMode}`);
    if (pos.emvTags !== undefined && pos.emvTags !== '')
      invalid('pointOfSaleInformation.emv.fallback', 'an EMV fallback carries no EMV tags');
    if (pos.emvFallback.condition !== 1 && pos.emvFallback.condition !== 2)
      invalid('pointOfSaleInformation.emv.fallbackCondition', 'emv.fallbackCondition must be 1 or 2');
  }
  // gateway.md §3: 4 contact chip, 5 contactless; EMV requires 4 or 5. A tap (EMV or magnetic-stripe mode) was read by
  // a contactless terminal, so it says 5.
  if ((pos.entryMode === 'contactless' || pos.entryMode === 'msd') && pos.terminalCapability !== 5) {
    invalid(
      'pointOfSaleInformation.terminalCapability',
      `a ${pos.entryMode} read requires terminalCapability 5 (contactless)`,
    );
  }
  if (pos.entryMode === 'contact' && pos.terminalCapability < 4) {
    invalid('pointOfSaleInformation.terminalCapability', 'EMV entry requires terminalCapability 4 or 5');
  }
  if (
    !Number.isInteger(pos.terminalPinCapability) ||
    pos.terminalPinCapability < 0 ||
    pos.terminalPinCapability > 12
  ) {
    invalid('pointOfSaleInformation.terminalPinCapability', 'terminalPinCapability must be 0–12');
  }
  const details = amountDetails(amountMinor, r.currency, r.dcc);
  const body: Json = {
    clientReferenceInformation: reference(r.code, comments, r.partner, transactionId),
    processingInformation: { commerceIndicator: 'retail', ...processing },
    paymentInformation: { card: { type: pos.cardType }, initiationChannel: pos.initiationChannel },
    orderInformation: { amountDetails: details.json },
    pointOfSaleInformation: {
      entryMode: pos.entryMode,
      terminalCapability: pos.terminalCapability,
      terminalPinCapability: pos.terminalPinCapability,
      catLevel: pos.catLevel,
      terminalId: pos.terminalId,
      operatingEnvironment: pos.operatingEnvironment,
      isDedicatedHardwareTerminal: pos.isDedicatedHardwareTerminal,
      serviceCode: pos.serviceCode,
      trackData: pos.trackData,
      emv: {
        tags: pos.emvTags,
        cardSequenceNumber,
        ...(pos.emvFallback !== undefined
          ? { fallback: true, fallbackCondition: pos.emvFallback.condition }
          : {}),
      },
    },
    merchantInformation: {
      transactionLocalDateTime: localDateTime(r.transactionLocalDateTime),
      categoryCode: r.merchantCategoryCode,
    },
  };
  return {
    method: 'POST',
    path: '/pts/v2/payments',
    body,
    comments,
    transactionId,
    amountMinor: details.minor,
    currency: details.currency,
    context,
  };
}

function build(r: ServiceRequest, options: PaymentBuilderOptions): Built {
  const txId = options.newTransactionId ?? newTransactionId;
  switch (r.service) {
    case 'avr':
      return cardPresent({ ...r, amountMinor: 0 }, comments('avr'), txId(), 0, {
        authorizationOptions: { authIndicator: '0' },
      });
    case 'preauth':
      positive(r.amountMinor, 'orderInformation.amountDetails.totalAmount');
      return cardPresent(
        r,
        commentsFor('preauth', options.preauthComments ? { preauthComments: options.preauthComments } : {}),
        txId(),
        r.amountMinor,
        {
          authorizationOptions: { authIndicator: '0' },
        },
      );
    case 'sale': {
      positive(r.amountMinor, 'orderInformation.amountDetails.totalAmount');
      if (r.pos.catLevel !== 2 && r.pos.catLevel !== 6) {
        // The sale variant (attended mobile 6 / unattended 2) follows catLevel; without it there is no variant.
        throw new GatewayInvalidRequestError(
          'pointOfSaleInformation.catLevel',
          'MISSING_FIELD',
          'a sale needs catLevel 6 (attended mobile) or 2 (unattended)',
        );
      }
      return cardPresent(r, comments('sale'), txId(), r.amountMinor, {
        capture: true,
        // Spec 001, required fields: authIndicator `0` for the sale as for the pre-authorization (not the `1` of a
        // final authorization, gateway.md §3); the unattended sale follows the same list but for catLevel.
        authorizationOptions: { authIndicator: '0' },
      });
    }
    case 'credit': {
      positive(r.amountMinor, 'orderInformation.amountDetails.totalAmount');
      const built = cardPresent(r, comments('credit'), txId(), r.amountMinor, {});
      const tags = built.context.emvTags;
      if (tags !== undefined) {
        if (r.pos.entryMode === 'contact')
          requireTags(tags, CONTACT_FOLLOW_ON_TAGS, 'credit after an EMV contact read');
        // spec 001 EMV table: Form Factor Indicator is prohibited on N1 (card type 002) refunds.
        if (r.pos.cardType === '002') prohibitTag(tags, '9F6E', 'card type 002 refund');
      }
      return { ...built, path: '/pts/v2/credits' };
    }
    case 'incremental': {
      positive(r.additionalAmountMinor, 'orderInformation.amountDetails.additionalAmount');
      const currency = currencyCode(r.currency, 'orderInformation.amountDetails.currency');
      const transactionId = txId();
      return {
        method: 'PATCH',
        path: `/pts/v2/payments/${pathId(r.id)}`,
        comments: comments('incremental'),
        transactionId,
        amountMinor: r.additionalAmountMinor,
        currency,
        context: {},
        body: {
          clientReferenceInformation: reference(r.code, comments('incremental'), r.partner, transactionId),
          processingInformation: { authorizationOptions: { initiator: { storedCredentialUsed: true } } },
          orderInformation: {
            amountDetails: {
              additionalAmount: amount(
                r.additionalAmountMinor,
                currency,
                'orderInformation.amountDetails.additionalAmount',
              ),
              currency,
            },
          },
          merchantInformation: { transactionLocalDateTime: localDateTime(r.transactionLocalDateTime) },
        },
      };
    }
    case 'reversal': {
      // The authorized amount, 0.00 for an account verification (COMPENSATION reverses an approved one).
      notNegative(r.authorizedMinor, 'reversalInformation.amountDetails.totalAmount');
      const currency = currencyCode(r.currency, 'orderInformation.amountDetails.currency');
      const context: RequestContext = r.emvTags ? { emvTags: inspectEmvTags(r.emvTags) } : {};
      return {
        method: 'POST',
        path: `/pts/v2/payments/${pathId(r.id)}/reversals`,
        comments: comments('reversal'),
        amountMinor: r.authorizedMinor,
        currency,
        context,
        body: {
          clientReferenceInformation: reference(r.code, comments('reversal'), r.partner),
          orderInformation: { amountDetails: { currency } },
          reversalInformation: {
            amountDetails: {
              totalAmount: amount(
                r.authorizedMinor,
                currency,
                'reversalInformation.amountDetails.totalAmount',
              ),
            },
            reason: r.reason,
          },
          pointOfSaleInformation: { emv: { tags: r.emvTags } },
        },
      };
    }
    case 'timeout-reversal': {
      // The amount the original requested (gateway.md §2): 0.00 for a zero-amount account verification.
      notNegative(r.amountMinor, 'reversalInformation.amountDetails.totalAmount');
      const currency = currencyCode(r.currency, 'orderInformation.amountDetails.currency');
      return {
        method: 'POST',
        path: '/pts/v2/reversals',
        comments: comments('timeout-reversal'),
        referencedTransactionId: r.originalTransactionId,
        amountMinor: r.amountMinor,
        currency,
        context: {},
        body: {
          clientReferenceInformation: reference(
            r.code,
            comments('timeout-reversal'),
            r.partner,
            r.originalTransactionId,
          ),
          orderInformation: { amountDetails: { currency } },
          reversalInformation: {
            amountDetails: {
              totalAmount: amount(r.amountMinor, currency, 'reversalInformation.amountDetails.totalAmount'),
            },
          },
        },
      };
    }
    case 'capture': {
      positive(r.amountMinor, 'orderInformation.amountDetails.totalAmount');
      if (r.amountMinor > r.authorizedMinor) {
        invalid(
          'orderInformation.amountDetails.totalAmount',
          'a capture may not exceed the authorized amount (spec 001)',
        );
      }
      // spec 001: a capture below the authorization makes the host reverse the rest; the comments announce it.
      const comments = commentsFor('capture', {
        capture: { amountMinor: r.amountMinor, authorizedMinor: r.authorizedMinor },
      });
      // reference §7: emv.tags only after an EMV contact pre-authorization, and then with 95, 9F10 and 9F26.
      const sendTags = r.preauthEntryMode === 'contact' ? r.emvTags : undefined;
      const context: RequestContext = sendTags ? { emvTags: inspectEmvTags(sendTags) } : {};
      if (context.emvTags)
        requireTags(context.emvTags, CONTACT_FOLLOW_ON_TAGS, 'capture after an EMV contact read');
      const details = amountDetails(r.amountMinor, r.currency, r.dcc);
      const transactionId = txId();
      return {
        method: 'POST',
        path: `/pts/v2/payments/${pathId(r.id)}/captures`,
        comments,
        transactionId,
        amountMinor: details.minor,
        currency: details.currency,
        context,
        body: {
          clientReferenceInformation: reference(r.code, comments, r.partner, transactionId),
          orderInformation: { amountDetails: details.json },
          pointOfSaleInformation: { emv: { tags: sendTags } },
        },
      };
    }
    case 'refund-capture':
    case 'refund-payment': {
      positive(r.amountMinor, 'orderInformation.amountDetails.totalAmount');
      const comments = commentsFor(r.service);
      const details = amountDetails(r.amountMinor, r.currency, r.dcc);
      const transactionId = txId();
      const base = r.service === 'refund-capture' ? 'captures' : 'payments';
      return {
        method: 'POST',
        path: `/pts/v2/${base}/${pathId(r.id)}/refunds`,
        comments,
        transactionId,
        amountMinor: details.minor,
        currency: details.currency,
        context: {},
        body: {
          clientReferenceInformation: reference(r.code, comments, r.partner, transactionId),
          orderInformation: { amountDetails: details.json },
        },
      };
    }
    case 'void-capture':
    case 'void-payment':
    case 'void-refund':
    case 'void-credit': {
      const comments = commentsFor(r.service);
      const base = VOID_BASE[r.service];
      return {
        method: 'POST',
        path: `/pts/v2/${base}/${pathId(r.id)}/voids`,
        comments,
        context: {},
        body: { clientReferenceInformation: reference(r.code, comments, r.partner) },
      };
    }
    case 'timeout-void':
      return {
        method: 'POST',
        path: '/pts/v2/voids',
        comments: comments('timeout-void'),
        referencedTransactionId: r.originalTransactionId,
        context: {},
        body: {
          clientReferenceInformation: reference(
            r.code,
            comments('timeout-void'),
            r.partner,
            r.originalTransactionId,
          ),
        },
      };
  }
}

const VOID_BASE = {
  'void-capture': 'captures',
  'void-payment': 'payments',
  'void-refund': 'refunds',
  'void-credit': 'credits',
} as const;

/**
 * Builds the exact request of one parking service: path, body bytes (serialised once), comments, and a new
 * transactionId for original requests. Pure apart from the transaction id. Every applicable row of the required-field
 * table is checked on the built body.
 *
 * @throws GatewayInvalidRequestError (code GW_INVALID_REQUEST) naming the first missing or invalid field; nothing
 *   may be sent then.
 */
export function preparePayment(
  request: ServiceRequest,
  options: PaymentBuilderOptions = {},
): PreparedRequest {
  const built = build(request, options);
  const body = compact(built.body) ?? {};
  const missing = missingFields(request, body, built.context);
  const first = missing[0];
  if (first !== undefined) {
    throw new GatewayInvalidRequestError(
      first,
      'MISSING_FIELD',
      `${request.service}: required field ${missing.join(', ')} missing (spec 001)`,
      { details: missing.map((field) => ({ field, reason: 'MISSING_FIELD' })) },
    );
  }
  // One literal with every member, undefined where absent: every prepared request has the same shape, so the reads
  // of the send path stay monomorphic (conditional spreads gave each combination a shape of its own).
  return {
    service: request.service,
    method: built.method,
    path: built.path,
    body: Buffer.from(JSON.stringify(body), 'utf8'),
    comments: built.comments,
    transactionId: built.transactionId,
    referencedTransactionId: built.referencedTransactionId,
    amountMinor: built.amountMinor,
    currency: built.currency,
    moneyMoving: MONEY_MOVING[request.service],
  };
}
