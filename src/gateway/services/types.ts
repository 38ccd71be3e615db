/**
 * The typed requests of the card-present parking services (spec 001, "Card-present parking", comments table) and the
 * prepared request the client sends. Amounts are integer minor units; decimal strings exist only in the body bytes.
 */

/** `paymentInformation.card.type`: the two networks of the parking section (N2 = `001`, N1 = `002`). */
export type CardType = '001' | '002';

/** `pointOfSaleInformation.entryMode` (reference/gateway.md §3). */
export type EntryMode = 'contact' | 'contactless' | 'swiped' | 'keyed' | 'msd';

/** Partner ids supplied by the service provider (spec 001 required fields). */
export interface Partner {
  developerId: string;
  solutionId: string;
  thirdPartyCertificationNumber: string;
}

/** Card-present point-of-sale data of an original request (reference/gateway.md §3). */
export interface PointOfSale {
  cardType: CardType;
  entryMode: EntryMode;
  /** 1 stripe only, 2 stripe and keyed, 3 keyed only, 4 contact chip, 5 contactless (EMV requires 4 or 5). */
  terminalCapability: 1 | 2 | 3 | 4 | 5;
  /** 0 none, 1 unknown, 2 PIN pad down, 4–12 maximum PIN length. */
  terminalPinCapability: number;
  /** 2 unattended self-service, 6 attended mobile (spec 001). Required by sale, pre-authorization and AVR. */
  catLevel?: 2 | 6;
  /** `pointOfSaleInformation.terminalId`. */
  terminalId: string;
  /**
   * Hex TLV of the tag set (from the tag-set builder). Checked before sending: never-send tags (56, 57, 5A, …)
   * are refused. Required for contact and contactless entry.
   */
  emvTags?: string;
  /** Value of tag 5F34; taken from `emvTags` when absent there and present in the tags. */
  cardSequenceNumber?: string;
  /** Track 1 and/or track 2 data. Card data: the client never logs it. */
  trackData?: string;
  /**
   * An EMV fallback (`pointOfSaleInformation.emv.fallback` true): a chip card read by its stripe because its chip
   * failed technically. Only with entry mode `swiped` and no `emvTags`. `condition` is `emv.fallbackCondition`: 1 the
   * terminal's previous transaction was a chip read or no chip transaction, 2 it was itself a fallback after a chip
   * read that failed (the public REST API reference of `pointOfSaleInformation.emv.fallbackCondition`).
   */
  emvFallback?: { condition: 1 | 2 };
  /** Service code of the card (attended sale). */
  serviceCode?: string;
  /** `0` dongle, `1` phone or tablet; required for card type `002` on attended sales. */
  isDedicatedHardwareTerminal?: '0' | '1';
  /** `paymentInformation.initiationChannel`: `00` card. Required on attended sales. */
  initiationChannel?: string;
  /** 1 on premises attended, 2 on premises unattended, 3 off premises attended, 4 off premises unattended. */
  operatingEnvironment?: '1' | '2' | '3' | '4';
}

/**
 * DCC fields of an authorization, capture or refund (spec 001, DCC authorization). Indicator `1`: the customer
 * chose the card currency and the converted amount is authorized; `2` not convertible, `3` declined by the
 * customer (no conversion fields are sent then).
 */
export type DccFields =
  | {
      indicator: '1';
      /** Processor family of the acquirer (spec 001): A sends original*, B sends foreign*. */
      family: 'A' | 'B';
      /** Amount in the card's billing currency, minor units of `billingCurrency`. */
      billingAmountMinor: number;
      billingCurrency: string;
      /** Exchange rate of the offer (margin included), as the offer gave it. */
      exchangeRate: string;
      /**
       * `exchangeRateTimeStamp`, sent as given: the offer's rate time as 14 digits `yyyyMMddHHmmss` in UTC
       * (`DccOffer.exchangeRateTimeStamp`, ./dcc.ts); a follow-on repeats what its authorization sent.
       */
      exchangeRateTimeStamp: string;
      /** Offer id and reconciliation id (family A examples send them). */
      offerId?: string;
      reconciliationId?: string;
    }
  | { indicator: '2' | '3' };

interface Common {
  /** `clientReferenceInformation.code`: the merchant reference. */
  code: string;
  partner: Partner;
}

/** Fields shared by the card-present original requests (pre-authorization, sale, AVR, credit). */
export interface CardPresentFields extends Common {
  /** Amount in minor units of `currency` (the local price; see {@link DccFields} for the billing amount). */
  amountMinor: number;
  /** ISO 4217 alpha code. */
  currency: string;
  /** `merchantInformation.transactionLocalDateTime`: YYYYMMDDhhmmss terminal local time. */
  transactionLocalDateTime: string;
  pos: PointOfSale;
  /** `merchantInformation.categoryCode` (parking: 7523); omitted when absent. */
  merchantCategoryCode?: string;
}

/** Zero-amount account verification, comments `Parking AVR`. */
export interface AvrRequest extends Omit<CardPresentFields, 'amountMinor'> {
  service: 'avr';
}

/** Pre-authorization (hold), comments `Parking Auth`, authIndicator `0`. */
export interface PreauthRequest extends CardPresentFields {
  service: 'preauth';
  dcc?: DccFields;
}

/** Sale: attended mobile when `pos.catLevel` is 6, unattended when 2. */
export interface SaleRequest extends CardPresentFields {
  service: 'sale';
  dcc?: DccFields;
}

/** Incremental authorization (PATCH), comments `Parking Incremental Auth`. */
export interface IncrementalRequest extends Common {
  service: 'incremental';
  /** Gateway id of the original authorization. */
  id: string;
  /** The amount added, minor units. */
  additionalAmountMinor: number;
  currency: string;
  transactionLocalDateTime: string;
}

/** Reversal of an authorization, comments `REVERSAL`. The amount is the **authorized** amount (spec 001). */
export interface ReversalRequest extends Common {
  service: 'reversal';
  /** Gateway id of the authorization. */
  id: string;
  /** The authorized amount of the authorization response (total after increments), minor units. */
  authorizedMinor: number;
  currency: string;
  /** `reversalInformation.reason`, optional. */
  reason?: string;
  /** EMV tags, when the original carried EMV data (reference/gateway.md §7). */
  emvTags?: string;
}

/** Timeout reversal by the original's transactionId, comments `REVERSAL Timeout`. */
export interface TimeoutReversalRequest extends Common {
  service: 'timeout-reversal';
  /** `clientReferenceInformation.transactionId` of the unanswered authorization. */
  originalTransactionId: string;
  /** The amount that was **requested** (the authorized amount is unknown), minor units. */
  amountMinor: number;
  currency: string;
}

/** Capture, comments `Parking Capture` or `Parking Capture Less Than Auth` (chosen from the amounts). */
export interface CaptureRequest extends Common {
  service: 'capture';
  /** Gateway id of the authorization. */
  id: string;
  /** Amount to capture, minor units; never above `authorizedMinor`. */
  amountMinor: number;
  /** Authorized amount (after increments), minor units. */
  authorizedMinor: number;
  currency: string;
  /** Entry mode of the pre-authorization: after an EMV contact read the capture carries the EMV tags. */
  preauthEntryMode: EntryMode;
  /** Required (with 95, 9F10, 9F26) when `preauthEntryMode` is `contact`; not sent otherwise. */
  emvTags?: string;
  dcc?: DccFields;
}

/** Refund of a capture (`REFUND Capture`) or of a sale (`REFUND Payment`). */
export interface RefundRequest extends Common {
  service: 'refund-capture' | 'refund-payment';
  /** Gateway id of the capture (refund-capture) or of the sale (refund-payment). */
  id: string;
  amountMinor: number;
  currency: string;
  dcc?: DccFields;
}

/** Standalone credit, comments `Parking Standalone Credit`: the card is present. */
export interface CreditRequest extends CardPresentFields {
  service: 'credit';
}

/** Void of a capture, payment, refund or credit (`VOID Capture`, …), before the settlement cut-off. */
export interface VoidRequest extends Common {
  service: 'void-capture' | 'void-payment' | 'void-refund' | 'void-credit';
  /** Gateway id of the transaction voided. */
  id: string;
}

/** Timeout void by the original's transactionId, comments `VOID Timeout`. */
export interface TimeoutVoidRequest extends Common {
  service: 'timeout-void';
  /** `clientReferenceInformation.transactionId` of the unanswered capture, sale, refund or credit. */
  originalTransactionId: string;
}

/** One variant per row of spec 001's comments table. */
export type ServiceRequest =
  | AvrRequest
  | PreauthRequest
  | IncrementalRequest
  | ReversalRequest
  | TimeoutReversalRequest
  | CaptureRequest
  | SaleRequest
  | RefundRequest
  | CreditRequest
  | VoidRequest
  | TimeoutVoidRequest;

export type ServiceName = ServiceRequest['service'];

/** Every service name, in the order of spec 001's comments table (the one vocabulary, src/vocabulary/services.ts). */
export { SERVICE_NAMES } from '../../vocabulary/services.js';

/** A request built, validated and serialised once, ready to journal and send. */
export interface PreparedRequest {
  service: ServiceName;
  method: 'POST' | 'PATCH' | 'GET';
  /** Path (with query string, if any) appended to the base URL. */
  path: string;
  /** The exact body bytes: hashed for the digest and sent as they are. */
  body: Buffer;
  /** `clientReferenceInformation.comments` of the body. */
  comments: string;
  /** New `clientReferenceInformation.transactionId` of an original request (AVR, auth, incremental, capture, sale, refund, credit). */
  transactionId?: string;
  /** transactionId of the original that a timeout reversal or timeout void refers to. */
  referencedTransactionId?: string;
  /** Amount of the request in minor units of `currency` (the billing amount for DCC family A). */
  amountMinor?: number;
  currency?: string;
  /** True when a duplicate could move money twice: such requests are never retried. */
  moneyMoving: boolean;
}
