/** Data element rules: each field and each EMV tag on its own (formats, value sets, lengths). */
import { EmvValueError, hexToBytes, validateTagValue } from '../../src/emv/index.js';
import { currencyByAlpha } from '../../src/money/index.js';
import { isDigitDateTime } from '../../src/vocabulary/gateway-time.js';
import { isServiceName } from '../../src/vocabulary/services.js';
import type { Finding } from '../session.js';
import { finding, tagField, type RuleId } from './catalog.js';
import { amountPattern, field, text, TAGS_FIELD, type MessageView } from './message.js';
import {
  ATTENDED_SALE_FIELDS,
  CAT_LEVELS,
  CARD_TYPES,
  CONTACTLESS_ENTRY_MODES,
  EMV_ENTRY_MODES,
  EMV_TERMINAL_CAPABILITIES,
  ENTRY_MODES,
  OPERATING_ENVIRONMENTS,
  PIN_CAPABILITIES,
  REQUIRED_FIELDS,
  STORED_CREDENTIAL_USED,
  TERMINAL_CAPABILITIES,
} from './tables.js';

/** A field whose value must be one of a set (numbers and strings compare as text). */
interface ValueSetRow {
  rule: RuleId;
  path: string;
  values: readonly string[];
}

const VALUE_SETS: readonly ValueSetRow[] = [
  { rule: 'DE-CARD-TYPE', path: 'paymentInformation.card.type', values: CARD_TYPES },
  { rule: 'DE-CAT-LEVEL', path: 'pointOfSaleInformation.catLevel', values: CAT_LEVELS },
  { rule: 'DE-ENTRY-MODE', path: 'pointOfSaleInformation.entryMode', values: ENTRY_MODES },
  {
    rule: 'DE-TERMINAL-CAPABILITY',
    path: 'pointOfSaleInformation.terminalCapability',
    values: TERMINAL_CAPABILITIES,
  },
  {
    rule: 'DE-PIN-CAPABILITY',
    path: 'pointOfSaleInformation.terminalPinCapability',
    values: PIN_CAPABILITIES,
  },
  {
    rule: 'DE-OPERATING-ENVIRONMENT',
    path: 'pointOfSaleInformation.operatingEnvironment',
    values: OPERATING_ENVIRONMENTS,
  },
  {
    rule: 'DE-DEDICATED-HARDWARE',
    path: 'pointOfSaleInformation.isDedicatedHardwareTerminal',
    values: ['0', '1'],
  },
  { rule: 'DE-COMMERCE-INDICATOR', path: 'processingInformation.commerceIndicator', values: ['retail'] },
  {
    rule: 'DE-AUTH-INDICATOR',
    path: 'processingInformation.authorizationOptions.authIndicator',
    values: ['0', '1'],
  },
  { rule: 'DE-CATEGORY-CODE', path: 'merchantInformation.categoryCode', values: ['7523'] },
];

/** A field whose text must match a pattern. */
const PATTERNS: ReadonlyArray<{ rule: RuleId; path: string; pattern: RegExp; expected: string }> = [
  {
    rule: 'DE-CARD-SEQUENCE-NUMBER',
    path: 'pointOfSaleInformation.emv.cardSequenceNumber',
    pattern: /^\d{1,3}$/,
    expected: '1-3 digits',
  },
  {
    rule: 'DE-SERVICE-CODE',
    path: 'pointOfSaleInformation.serviceCode',
    pattern: /^\d{3}$/,
    expected: '3 digits',
  },
];

/** Amount fields and the field that gives their currency. */
const AMOUNT_FIELDS: ReadonlyArray<{ path: string; currency: string }> = [
  { path: 'orderInformation.amountDetails.totalAmount', currency: 'orderInformation.amountDetails.currency' },
  {
    path: 'orderInformation.amountDetails.additionalAmount',
    currency: 'orderInformation.amountDetails.currency',
  },
  {
    path: 'orderInformation.amountDetails.originalAmount',
    currency: 'orderInformation.amountDetails.originalCurrency',
  },
  {
    path: 'orderInformation.amountDetails.foreignAmount',
    currency: 'orderInformation.amountDetails.foreignCurrency',
  },
  {
    path: 'reversalInformation.amountDetails.totalAmount',
    currency: 'orderInformation.amountDetails.currency',
  },
];

const CURRENCY_FIELDS: readonly string[] = [
  'orderInformation.amountDetails.currency',
  'orderInformation.amountDetails.originalCurrency',
  'orderInformation.amountDetails.foreignCurrency',
];

function isPresent(v: unknown): boolean {
  return v !== undefined && v !== null && v !== '';
}

function requiredFields(view: MessageView): Finding[] {
  const { service } = view;
  if (!isServiceName(service)) return [];
  const body = view.message.body;
  const out: Finding[] = [];
  const required = [...REQUIRED_FIELDS[service]];
  if (service === 'sale' && text(body, 'pointOfSaleInformation.catLevel') === '6')
    required.push(...ATTENDED_SALE_FIELDS);
  if (service === 'incremental') {
    // gateway.md §7: additionalAmount; a lodging guide sends the new totalAmount instead.
    const amount =
      field(body, 'orderInformation.amountDetails.additionalAmount') ??
      field(body, 'orderInformation.amountDetails.totalAmount');
    if (!isPresent(amount))
      out.push(
        finding(
          'DE-REQUIRED-FIELD',
          'orderInformation.amountDetails.additionalAmount',
          'an incremental authorization sends orderInformation.amountDetails.additionalAmount',
        ),
      );
  }
  for (const path of required)
    if (!isPresent(field(body, path)))
      out.push(finding('DE-REQUIRED-FIELD', path, `${service} requires ${path}`));
  const storedCredential = field(body, STORED_CREDENTIAL_USED);
  if (service === 'incremental' && isPresent(storedCredential) && storedCredential !== true)
    out.push(
      finding(
        'DE-REQUIRED-FIELD',
        STORED_CREDENTIAL_USED,
        `an incremental authorization sends ${STORED_CREDENTIAL_USED} true`,
      ),
    );
  return out;
}

function valueSets(view: MessageView): Finding[] {
  const body = view.message.body;
  const out: Finding[] = [];
  for (const row of VALUE_SETS) {
    const raw = field(body, row.path);
    if (raw === undefined) continue;
    const value = text(body, row.path);
    if (value === undefined || !row.values.includes(value))
      out.push(finding(row.rule, row.path, `${row.path} must be one of ${row.values.join(', ')}`));
  }
  for (const row of PATTERNS) {
    const raw = field(body, row.path);
    if (raw === undefined) continue;
    const value = text(body, row.path);
    if (value === undefined || !row.pattern.test(value))
      out.push(finding(row.rule, row.path, `${row.path} must be ${row.expected}`));
  }
  const entryMode = text(body, 'pointOfSaleInformation.entryMode');
  const capability = text(body, 'pointOfSaleInformation.terminalCapability');
  if (
    entryMode !== undefined &&
    EMV_ENTRY_MODES.includes(entryMode) &&
    capability !== undefined &&
    TERMINAL_CAPABILITIES.includes(capability) &&
    !EMV_TERMINAL_CAPABILITIES.includes(capability)
  )
    out.push(
      finding(
        'DE-TERMINAL-CAPABILITY',
        'pointOfSaleInformation.terminalCapability',
        `an EMV ${entryMode} read needs terminalCapability 4 or 5`,
      ),
    );
  else if (
    entryMode !== undefined &&
    CONTACTLESS_ENTRY_MODES.includes(entryMode) &&
    capability !== undefined &&
    TERMINAL_CAPABILITIES.includes(capability) &&
    capability !== '5'
  )
    // gateway.md §3: 4 is a contact chip terminal, 5 a contactless one; a tap (EMV or magnetic-stripe mode) needs 5.
    out.push(
      finding(
        'DE-TERMINAL-CAPABILITY',
        'pointOfSaleInformation.terminalCapability',
        `a ${entryMode} read needs terminalCapability 5 (contactless)`,
      ),
    );
  const authIndicator = text(body, 'processingInformation.authorizationOptions.authIndicator');
  // Spec 001's required fields: authIndicator `0` for the sale as for the pre-authorization.
  if (
    (view.service === 'preauth' || view.service === 'avr' || view.service === 'sale') &&
    authIndicator !== undefined &&
    authIndicator !== '0'
  )
    out.push(
      finding(
        'DE-AUTH-INDICATOR',
        'processingInformation.authorizationOptions.authIndicator',
        'a pre-authorization, sale or account verification sends authIndicator "0"',
      ),
    );
  return out;
}

/**
 * Fields the gateway takes as 14 digits YYYYMMDDhhmmss, a real date and time (src/vocabulary/gateway-time.ts): the
 * terminal's local time of the transaction, and the time stamp of a conversion's rate in GMT (the gateway's public
 * field reference, purchaseTotals_exchangeRateTimeStamp: "Data Length: 14, Data Format: yyyyMMDDhhmmss").
 */
const DIGIT_DATE_TIMES: ReadonlyArray<{ rule: RuleId; path: string; expected: string }> = [
  {
    rule: 'DE-LOCAL-DATETIME',
    path: 'merchantInformation.transactionLocalDateTime',
    expected: 'YYYYMMDDhhmmss, a real local date and time',
  },
  {
    rule: 'DE-DCC-RATE-TIMESTAMP',
    path: 'orderInformation.amountDetails.exchangeRateTimeStamp',
    expected: 'yyyyMMddHHmmss in GMT, a real date and time',
  },
];

function dateTimes(view: MessageView): Finding[] {
  const out: Finding[] = [];
  for (const row of DIGIT_DATE_TIMES) {
    const raw = field(view.message.body, row.path);
    if (raw !== undefined && !isDigitDateTime(raw))
      out.push(finding(row.rule, row.path, `${row.path} must be ${row.expected}`));
  }
  return out;
}

function amounts(view: MessageView): Finding[] {
  const body = view.message.body;
  const out: Finding[] = [];
  for (const path of CURRENCY_FIELDS) {
    const raw = field(body, path);
    if (raw === undefined) continue;
    if (typeof raw !== 'string' || currencyByAlpha(raw) === undefined)
      out.push(finding('DE-CURRENCY-CODE', path, `${path} must be an ISO 4217 alphabetic code`));
  }
  for (const row of AMOUNT_FIELDS) {
    const raw = field(body, row.path);
    if (raw === undefined) continue;
    const currencyText = field(body, row.currency);
    const currency = typeof currencyText === 'string' ? currencyByAlpha(currencyText) : undefined;
    if (currency === undefined) {
      if (typeof raw !== 'string' || !/^\d+(\.\d+)?$/.test(raw))
        out.push(finding('DE-AMOUNT-FORMAT', row.path, `${row.path} must be a decimal string`));
      continue;
    }
    if (typeof raw !== 'string' || !amountPattern(currency.exponent).test(raw))
      out.push(
        finding(
          'DE-AMOUNT-FORMAT',
          row.path,
          `${row.path} must be a decimal string with ${currency.exponent} decimals for ${currency.alpha}`,
        ),
      );
  }
  return out;
}

function tagFormats(view: MessageView): Finding[] {
  if (view.tagsError !== undefined)
    return [finding('DE-EMV-TLV', TAGS_FIELD, `${TAGS_FIELD}: ${view.tagsError}`)];
  const out: Finding[] = [];
  for (const [tag, hex] of view.tags ?? []) {
    try {
      validateTagValue(tag, hexToBytes(hex));
    } catch (e) {
      if (!(e instanceof EmvValueError)) throw e;
      if (e.code === 'EMV_UNKNOWN_TAG')
        out.push(finding('DE-EMV-TAG-UNKNOWN', tagField(tag), `tag ${tag} is not in the EMV dictionary`));
      else out.push(finding('DE-EMV-TAG-FORMAT', tagField(tag), e.message));
    }
  }
  return out;
}

/** Every data element rule of one message. */
export function checkDataElements(view: MessageView): Finding[] {
  return [
    ...requiredFields(view),
    ...valueSets(view),
    ...dateTimes(view),
    ...amounts(view),
    ...tagFormats(view),
  ];
}
