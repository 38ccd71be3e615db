/**
 * Every rule of `certify check`, as data: a stable id (reports and scripts refer to it), its category and severity,
 * the spec or reference section it comes from, and what it checks. Findings take their category and severity from
 * here, so a rule cannot be filed under two categories.
 */
import type { Finding, RuleCategory, Severity } from '../session.js';

export interface RuleDefinition {
  readonly category: RuleCategory;
  readonly severity: Severity;
  /** Where the rule comes from: spec 001 or a reference section. */
  readonly source: string;
  readonly title: string;
}

const DE = 'data element';
const CE = 'cross-edit';
const IC = 'interchange compliance';
const DM = 'data mapping';

function rule(category: RuleCategory, severity: Severity, source: string, title: string): RuleDefinition {
  return { category, severity, source, title };
}

export const RULES = {
  'DE-UNKNOWN-SERVICE': rule(
    DE,
    'warning',
    'gateway.md §2',
    'the method and path name a service of the gateway',
  ),
  'DE-REQUIRED-FIELD': rule(
    DE,
    'error',
    'spec 001 Card-present parking, required fields; gateway.md §7',
    'a field the service requires is present',
  ),
  'DE-LOCAL-DATETIME': rule(
    DE,
    'error',
    'gateway.md §3; spec 001 required fields',
    'transactionLocalDateTime is YYYYMMDDhhmmss, a real date and time',
  ),
  'DE-DCC-RATE-TIMESTAMP': rule(
    DE,
    'error',
    'spec 001 Currency conversion (DCC); gateway field reference purchaseTotals_exchangeRateTimeStamp',
    'exchangeRateTimeStamp is yyyyMMddHHmmss in GMT (14 digits), a real date and time',
  ),
  'DE-AMOUNT-FORMAT': rule(
    DE,
    'error',
    'gateway.md §3; DESIGN.md money rule 5',
    "an amount is a decimal string with exactly the currency's minor-unit digits",
  ),
  'DE-CURRENCY-CODE': rule(DE, 'error', 'ISO 4217 (src/money)', 'a currency is an ISO 4217 alphabetic code'),
  'DE-CARD-TYPE': rule(
    DE,
    'error',
    'spec 001 Card-present parking; gateway.md §6',
    'card type is 001 or 002',
  ),
  'DE-CAT-LEVEL': rule(
    DE,
    'error',
    'gateway.md §3; spec 001',
    'catLevel is 2 (unattended) or 6 (attended mobile)',
  ),
  'DE-ENTRY-MODE': rule(
    DE,
    'error',
    'gateway.md §3; spec 001',
    'entryMode is contact, contactless, swiped or msd',
  ),
  'DE-TERMINAL-CAPABILITY': rule(
    DE,
    'error',
    'gateway.md §3',
    'terminalCapability is 1-5, 4 or 5 for an EMV read, 5 for a contactless (EMV or msd) read',
  ),
  'DE-PIN-CAPABILITY': rule(DE, 'error', 'gateway.md §3', 'terminalPinCapability is 0, 1, 2 or 4-12'),
  'DE-OPERATING-ENVIRONMENT': rule(DE, 'error', 'gateway.md §3', 'operatingEnvironment is 1-4'),
  'DE-DEDICATED-HARDWARE': rule(DE, 'error', 'gateway.md §3', 'isDedicatedHardwareTerminal is "0" or "1"'),
  'DE-COMMERCE-INDICATOR': rule(
    DE,
    'error',
    'gateway.md §3; spec 001 required fields',
    'commerceIndicator is retail',
  ),
  'DE-AUTH-INDICATOR': rule(
    DE,
    'error',
    'gateway.md §3; spec 001 required fields',
    'authIndicator is "0" for a pre-authorization, sale or account verification',
  ),
  'DE-CARD-SEQUENCE-NUMBER': rule(DE, 'error', 'gateway.md §3', 'cardSequenceNumber is 1-3 digits'),
  'DE-SERVICE-CODE': rule(DE, 'error', 'spec 001 required fields', 'serviceCode is 3 digits'),
  'DE-CATEGORY-CODE': rule(DE, 'error', 'gateway.md §3', 'the merchant category code of parking is 7523'),
  'DE-EMV-TLV': rule(
    DE,
    'error',
    'reference/emv.md BER-TLV; gateway.md §3',
    'emv.tags is well-formed BER-TLV hex',
  ),
  'DE-EMV-TAG-FORMAT': rule(
    DE,
    'error',
    'reference/emv.md Dictionary',
    "a tag value has the dictionary's format and length",
  ),
  'DE-EMV-TAG-UNKNOWN': rule(
    DE,
    'warning',
    'reference/emv.md Dictionary',
    'a tag the dictionary does not know',
  ),
  'DE-TRACK-DATA': rule(
    DE,
    'warning',
    'gateway.md §3',
    'trackData is readable track 1 or track 2 data (masked data is skipped)',
  ),
  'CE-9F02-TOTAL': rule(
    CE,
    'error',
    'spec 001 EMV tags; reference/emv.md',
    '9F02 equals totalAmount in minor units',
  ),
  'CE-5F2A-CURRENCY': rule(
    CE,
    'error',
    'spec 001 EMV tags; ISO 4217',
    "5F2A equals the currency's numeric code",
  ),
  'CE-9A-LOCAL-DATE': rule(
    CE,
    'error',
    'spec 001 EMV tags; gateway.md §3',
    '9A equals the date of transactionLocalDateTime',
  ),
  'CE-9F1A-COUNTRY': rule(
    CE,
    'error',
    'spec 001 EMV tags',
    "9F1A is the terminal's one country throughout the session, a country of its (single-country) currency",
  ),
  'CE-9C-SERVICE': rule(
    CE,
    'error',
    'reference/emv.md Dictionary (9C)',
    '9C is 20 for refunds and credits, 00 otherwise',
  ),
  'CE-CARD-SEQUENCE-5F34': rule(
    CE,
    'error',
    'gateway.md §3; spec 001 unattended sale',
    'cardSequenceNumber is the value of 5F34, sent when 5F34 is',
  ),
  'CE-CAT-LEVEL-ATTENDED': rule(
    CE,
    'error',
    'gateway.md §3; spec 001; reference/emv.md Dictionary (9F35)',
    'catLevel agrees with an attended or unattended operatingEnvironment and terminal type (9F35)',
  ),
  'CE-DEDICATED-HARDWARE': rule(
    CE,
    'error',
    'spec 001 required fields',
    'isDedicatedHardwareTerminal is sent for card type 002 on an attended terminal',
  ),
  'CE-COMMENTS-SERVICE': rule(CE, 'error', 'spec 001 comments table', 'comments is the value of the service'),
  'IC-NEVER-SEND': rule(
    IC,
    'error',
    'gateway.md §3; DESIGN.md money rule 4',
    'emv.tags holds none of 56 57 5A 5F20 5F24 99 9F0B 9F1F 9F20',
  ),
  'IC-NETWORK-MANDATORY': rule(
    IC,
    'error',
    'spec 001 EMV tags (M per network)',
    'every tag mandatory for the network is sent',
  ),
  'IC-NETWORK-PROHIBITED': rule(
    IC,
    'error',
    'spec 001 EMV tags (P per network)',
    'no tag prohibited for the network and service is sent (a follow-on: the network of its original)',
  ),
  'IC-NETWORK-LENGTH': rule(
    IC,
    'error',
    'reference/emv.md Dictionary (9F6E per network)',
    "a tag's value has its network's length (9F6E: 4 bytes for card type 001, 5-32 for 002)",
  ),
  'IC-EMV-TAGS-ENTRY-MODE': rule(
    IC,
    'error',
    'spec 001 required fields; gateway.md §3',
    'a chip read sends emv.tags; a swipe sends none',
  ),
  'IC-EMV-FALLBACK': rule(
    IC,
    'error',
    'EMV fallback; pointOfSaleInformation.emv.fallback and fallbackCondition of the gateway REST API',
    'a chip card (service code 2xx/6xx) swiped is sent as a fallback (emv.fallback true, fallbackCondition 1 or 2); a fallback is a swipe of a chip card',
  ),
  'IC-CAPTURE-AUTHORIZED': rule(
    IC,
    'error',
    'spec 001 Limits; gateway.md §7',
    'captures do not exceed the authorized amount',
  ),
  'IC-REVERSAL-AMOUNT': rule(
    IC,
    'error',
    'spec 001 Reversal; gateway.md §2',
    'a reversal carries the authorized amount (the approved amount of a partial approval)',
  ),
  'IC-REFUND-CAPTURED': rule(
    IC,
    'error',
    'spec 001 Limits; gateway.md §7',
    'refunds do not exceed the captured or sold amount',
  ),
  'IC-REVERSAL-EMV-TAGS': rule(
    IC,
    'error',
    'gateway.md §7 Reversal; DESIGN.md money rule 7',
    'a reversal of an EMV authorization carries its tags',
  ),
  'IC-CAPTURE-CONTACT-TAGS': rule(
    IC,
    'error',
    'gateway.md §7 Capture; spec 001',
    'a capture of an EMV contact pre-authorization carries tags with 95, 9F10, 9F26, and only then',
  ),
  'IC-FOLLOW-ON-TAGS-REPEAT': rule(
    IC,
    'error',
    'gateway.md §7; DESIGN.md money rule 7',
    "a follow-on's tags repeat the original's values",
  ),
  'IC-AVR-ZERO': rule(
    IC,
    'error',
    'gateway.md §7 Account verification',
    'a zero amount is an account verification: no capture',
  ),
  'IC-TRANSACTION-ID-UNIQUE': rule(
    IC,
    'error',
    'gateway.md §2 Timeouts',
    'every original carries a transactionId of its own',
  ),
  'IC-TIMEOUT-ORIGINAL': rule(
    IC,
    'error',
    'gateway.md §2 Timeouts; §7',
    'a timeout reversal or void names the transactionId of an earlier original it may undo (a timeout reversal an authorization not yet captured)',
  ),
  'IC-FOLLOW-ON-ORIGINAL': rule(
    IC,
    'error',
    'spec 001 comments table; gateway.md §2, §7',
    'a follow-on names an original it may follow: a reversal an authorization, a capture or increment a pre-authorization, a refund or void of a payment a sale, of a capture a capture, a refund void a refund, a credit void a credit',
  ),
  'IC-TIMEOUT-REVERSAL-AMOUNT': rule(
    IC,
    'error',
    'gateway.md §2 Timeouts',
    'a timeout reversal carries the amount the original requested',
  ),
  'IC-FOLLOW-ON-CURRENCY': rule(
    IC,
    'error',
    'spec 001 Reversal, Capture, DCC; gateway.md §7',
    "a capture, reversal, incremental or refund is in its original's currency",
  ),
  'IC-DCC-FOLLOW-ON-FIELDS': rule(
    IC,
    'error',
    'spec 001 Currency conversion (DCC): DCC capture and refund; DESIGN.md money rule 7',
    'a capture or refund of a converted authorization carries the DCC field set of its processor family',
  ),
  'IC-DCC-FOLLOW-ON-RATE': rule(
    IC,
    'error',
    'spec 001 Currency conversion (DCC): "use the exchange rate of the authorization"',
    "a follow-on's exchangeRate and exchangeRateTimeStamp are the authorization's",
  ),
  'IC-DCC-FOLLOW-ON-CURRENCY': rule(
    IC,
    'error',
    'spec 001 Currency conversion (DCC): DCC capture and refund',
    "a follow-on's originalCurrency (family A) or foreignCurrency (family B) is the authorization's",
  ),
  'IC-DCC-NOT-CONVERTED': rule(
    IC,
    'error',
    'spec 001 Currency conversion (DCC); DESIGN.md money rule 7',
    'a follow-on of an authorization in the local currency carries no DCC field set',
  ),
  'IC-DCC-OFFER-RATE': rule(
    IC,
    'error',
    'spec 001 Currency conversion (DCC): flow steps 1-5, DCC authorization',
    "a converted authorization uses the rate, currencies and amounts of the session's offer",
  ),
  'CE-DCC-CONVERTED-AMOUNT': rule(
    CE,
    'error',
    'spec 001 Currency conversion (DCC): "partial captures and refunds convert with the rate from the offer response"',
    "the billing amount is the local amount at the (authorization's) exchange rate, to a minor unit of rounding",
  ),
  'DM-TRACK-PAN': rule(
    DM,
    'error',
    'spec 001; gateway.md §6',
    'the PAN in trackData (the BIN of a masked track) is of the card type sent',
  ),
  'DM-TRACK-SERVICE-CODE': rule(
    DM,
    'error',
    'spec 001 required fields',
    'serviceCode equals the service code in trackData',
  ),
  'DM-AID-CARD-TYPE': rule(
    DM,
    'error',
    'spec 001 EMV tags; reference/emv.md',
    'the application (84 or 4F) is of the card type sent',
  ),
  'DM-9F39-ENTRY-MODE': rule(DM, 'error', 'reference/emv.md Dictionary (9F39)', '9F39 agrees with entryMode'),
} as const satisfies Record<string, RuleDefinition>;

export type RuleId = keyof typeof RULES;

/** A finding of `id` about `field`. */
export function finding(id: RuleId, field: string, message: string): Finding {
  const def: RuleDefinition = RULES[id];
  return { rule: id, category: def.category, severity: def.severity, field, message };
}

/** The field name of one EMV tag in findings. */
export function tagField(tag: string): string {
  return `pointOfSaleInformation.emv.tags[${tag}]`;
}
