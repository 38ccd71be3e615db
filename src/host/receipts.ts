import QRCode from 'qrcode';
import {
  printableText,
  QR_ERROR_CORRECTION,
  qrModuleDots,
  receiptCodepage,
  type PrintableField,
  type PrintableReceipt,
  type PrinterCodepage,
} from '../../devices/printer/index.js';
import type { CardRead } from '../../devices/reader.js';
import { ConfigError, type Config } from '../config/index.js';
import { bytesToHex, detectNetwork, maskCardNumbers, type CardNetwork } from '../emv/index.js';
import {
  convertAtOfferRate,
  refundAtOfferRate,
  dccMarginText,
  dccRateText,
  type DccOfferSummary,
  type DccReceiptOffer,
  type EntryMode,
  type ReceiptData,
  type ServiceName,
} from '../flows/index.js';
import {
  BASE_LOCALE,
  CATALOGUES,
  directionOf,
  formatAmount,
  intlLocale,
  MESSAGE_KEYS,
  resolveLocale,
  translator,
  type MessageKey,
  type SupportedLocale,
  type Translator,
} from '../i18n/index.js';
import { receiptApprovalCode, type IssuedReceiptNote } from '../journal/index.js';
import type { CurrencyDisplay } from '../money/index.js';
import { isoOfUtcTimeStamp } from '../vocabulary/gateway-time.js';
import type { Receipt } from './api.js';

/**
 * The one receipt builder: what the terminal knows of a completed payment → a {@link ReceiptDocument}, the same
 * labelled fields for the customer's screen ({@link screenReceipt}), the printer (devices/printer) and the e-receipt
 * QR code ({@link eReceiptQr}).
 *
 * Language: every label and fixed text (transaction type, entry mode, verification statement, the DCC markup and
 * "choice of currencies" statement) comes from the `receipt.` messages of the catalogues (src/i18n), amounts, dates
 * and times through `Intl`, in the locale the document is built in ({@link issuedReceipt} says which). What stays as
 * it came: the merchant's name and location, ids and references, the card's application label, and the gateway's DCC
 * disclaimer (verbatim, never translated; on paper only when the printer can print it, see {@link issuedReceipt}).
 *
 * Content (kiosk.md §3, §1; gateway.md §5): merchant, merchant and terminal ids, date and time, transaction type,
 * amount, the card as its last four digits only, application label and AID, entry mode, the cardholder verification
 * statement, approval code when known, transaction and gateway reference; for a converted (DCC) payment the
 * disclosure: both amounts, the rate, the markup over the ECB rate, rate source, provider, the statement that the
 * cardholder chose the currency, and the gateway's disclaimer as it came.
 *
 * Card data: the builder never receives the PAN or the expiry, and every text that reaches a receipt goes through
 * {@link withoutCardData} as well, so a model line or an id that carried card data by mistake still cannot print it.
 */

/**
 * The card as a receipt may show it: nothing here is card data (AID and label identify the application). The entry
 * mode and the CVM results are facts of a card read: a transaction that read no card (a refund, a void, a
 * cancellation: {@link readsCard}) has neither, only the AID and label of its original's card.
 */
export interface ReceiptCard {
  /** How the card was read for the transaction; absent when it read none. */
  readonly entryMode?: EntryMode;
  /** Application identifier, upper-case hex (4F, or 84 when the card gave no 4F). */
  readonly aid?: string;
  /** Application label (50), e.g. "VISA CREDIT". */
  readonly applicationLabel?: string;
  /** CVM results (9F34), upper-case hex, 3 bytes. */
  readonly cvmResults?: string;
}

/** What the host knows of a transaction beyond the machine's {@link ReceiptData}. */
export interface ReceiptFacts {
  readonly card?: ReceiptCard;
  /**
   * The offer the customer accepted (DCC indicator 1), as the receipt states it; absent when the payment was not
   * converted, or when what the receipt must state of it is not known (then it states no conversion at all).
   */
  readonly conversion?: DccReceiptOffer;
  /** `processorInformation.approvalCode` of the gateway's answer, when the host has it. */
  readonly approvalCode?: string;
  /**
   * What the transaction moved in the card's currency (the conversion's `billingCurrency`), as the journal holds it:
   * a payment or follow-on of a converted authorization sent in that currency (processor family A). Not always the
   * local amount converted at the offer's rate: the last refund of a payment takes the billing amount that remains
   * (src/host/payments.ts `refundDcc`), and the gateway may answer for less than was asked. Absent: the receipt
   * converts the local amount at the offer's rate, as the request did.
   */
  readonly billedMinor?: number;
}

/** The configuration a receipt needs, read once ({@link receiptSettingsFromConfig}). */
export interface ReceiptSettings {
  readonly merchantName: string;
  readonly merchantLocation?: string;
  readonly merchantId: string;
  readonly terminalId: string;
  /** 2 unattended, 6 attended (spec 001). */
  readonly catLevel: 2 | 6;
  /** The terminal's currency: `noReceiptBelowMinor` is in its minor units. */
  readonly currency: string;
  /** `terminal.locale`: the language of a receipt whose customer's language the printer cannot print. */
  readonly locale: string;
  readonly timeZone: string;
  readonly noReceiptBelowMinor: number;
  readonly eReceiptUrl?: string;
  readonly dccProvider: string;
  readonly dccRateSource: string;
  /** The printer's configured code table; absent when no printer is attached (`printer.kind` none). */
  readonly printerCodepage?: PrinterCodepage;
  /** The printer's characters per line (`printer.widthChars`); absent when no printer is attached. */
  readonly printerWidthChars?: number;
}

/**
 * The configured texts a receipt prints, by key, in the order they come on paper: the merchant's name (the title of
 * every receipt and slip) and location, the merchant and terminal ids, and what a converted payment's receipt states
 * of the conversion. One receipt prints in one code table, so all of them must fit one together.
 */
function printedConfiguration(config: Config): (readonly [key: string, text: string])[] {
  const { receipts } = config;
  return [
    ['receipts.merchantName', receipts.merchantName],
    ...(receipts.merchantLocation !== undefined
      ? [['receipts.merchantLocation', receipts.merchantLocation] as const]
      : []),
    ['gateway.merchantId', config.gateway.merchantId],
    ['terminal.id', config.terminal.id],
    ['receipts.dccRateSource', receipts.dccRateSource],
    ['receipts.dccProvider', receipts.dccProvider],
  ];
}

/**
 * Refuses a configuration whose printed texts ({@link printedConfiguration}) the printer cannot print: a character
 * that neither `printer.codepage` nor any other code table the printer selects for a receipt holds
 * (devices/printer `receiptCodepage`, the rule each receipt is printed by) would come out as "?" on every receipt.
 * `CONFIG_INVALID` naming the key and the character: the first text that no table holds together with the texts
 * before it. Nothing is checked without a printer (`printer.kind` none): the screen shows every text as it is.
 */
export function assertPrintableConfiguration(config: Config, file = '<configuration>'): void {
  if (config.printer.kind === 'none') return;
  const codepage = config.printer.codepage;
  const fit = (texts: readonly string[]): boolean =>
    receiptCodepage({ title: '', fields: texts.map((value) => ({ label: '', value })) }, codepage) !==
    undefined;
  const printed: (readonly [key: string, text: string])[] = [];
  for (const [key, text] of printedConfiguration(config)) {
    const before = printed.map(([, t]) => t);
    printed.push([key, text]);
    if (fit([...before, text])) continue;
    const chars = [...text];
    const at = chars.findIndex((_, n) => !fit([...before, chars.slice(0, n + 1).join('')]));
    const char = chars[at] ?? '';
    const code = `U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
    // In some table, but in none with the text printed before it: the keys of that text beyond ASCII, its own too.
    const ascii = /^[\x20-\x7e]*$/;
    const clashes = [
      ...printed.slice(0, -1).flatMap(([k, t]) => (ascii.test(t) ? [] : [k])),
      ...(ascii.test(chars.slice(0, at).join('')) ? [] : [key]),
    ];
    throw new ConfigError(
      'CONFIG_INVALID',
      `${file}: "${key}": "${char}" (${code}) is in no code table the printer prints ` +
        (fit([char])
          ? `together with the text of ${clashes.join(', ')} (one receipt prints in one table)`
          : `(printer.codepage ${codepage}, nor any other it selects)`) +
        ': it would print as "?"',
      file,
      key,
    );
  }
}

/**
 * What every receipt needs of the configuration. `CONFIG_INVALID` for printed texts the printer cannot print
 * ({@link assertPrintableConfiguration}): no receipt is printed with "?" in their place.
 */
export function receiptSettingsFromConfig(config: Config): ReceiptSettings {
  assertPrintableConfiguration(config);
  return {
    merchantName: config.receipts.merchantName,
    ...(config.receipts.merchantLocation !== undefined
      ? { merchantLocation: config.receipts.merchantLocation }
      : {}),
    merchantId: config.gateway.merchantId,
    terminalId: config.terminal.id,
    catLevel: config.terminal.catLevel ?? (config.terminal.model === 'attended' ? 6 : 2),
    currency: config.terminal.currency,
    locale: config.terminal.locale,
    timeZone: config.terminal.timezone,
    noReceiptBelowMinor: config.receipts.noReceiptBelowMinor,
    ...(config.receipts.eReceiptUrl !== undefined ? { eReceiptUrl: config.receipts.eReceiptUrl } : {}),
    dccProvider: config.receipts.dccProvider,
    dccRateSource: config.receipts.dccRateSource,
    ...(config.printer.kind !== 'none'
      ? { printerCodepage: config.printer.codepage, printerWidthChars: config.printer.widthChars }
      : {}),
  };
}

/** A receipt: what prints, what the screen shows and what the e-receipt holds are these fields. */
export interface ReceiptDocument extends PrintableReceipt {
  readonly title: string;
  readonly fields: readonly PrintableField[];
  /** Our transactionId: the reference of the e-receipt. */
  readonly transactionId: string;
  readonly amountMinor: number;
  readonly currency: string;
  readonly converted: boolean;
  /** The language the document is written in. */
  readonly locale: SupportedLocale;
}

/** The catalogue key of each field's label. */
const LABEL_KEYS = {
  location: 'receipt.location',
  merchantId: 'receipt.merchantId',
  terminalId: 'receipt.terminalId',
  date: 'receipt.date',
  time: 'receipt.time',
  type: 'receipt.type',
  amount: 'receipt.amount',
  rate: 'receipt.exchangeRate',
  markup: 'receipt.markup',
  rateSource: 'receipt.rateSource',
  rateTime: 'receipt.rateTime',
  provider: 'receipt.provider',
  currencyChoice: 'receipt.currencyChoice',
  disclaimer: 'receipt.disclaimer',
  card: 'receipt.card',
  application: 'receipt.application',
  aid: 'receipt.aid',
  entry: 'receipt.entry',
  verification: 'receipt.verification',
  approvalCode: 'receipt.approvalCode',
  transaction: 'receipt.transaction',
  reference: 'receipt.reference',
} as const satisfies Record<string, MessageKey>;

type FieldName = keyof typeof LABEL_KEYS;

/** The labels in en_GB (the base catalogue), so that tests and callers do not repeat the wording. */
export const RECEIPT_LABELS: Readonly<Record<FieldName, string>> & {
  readonly convertedAmount: (currency: string) => string;
} = {
  ...(Object.fromEntries(
    Object.entries(LABEL_KEYS).map(([name, key]) => [name, CATALOGUES[BASE_LOCALE][key]]),
  ) as Record<FieldName, string>),
  convertedAmount: (currency) => translator(BASE_LOCALE).t('receipt.convertedAmount', { currency }),
};

/**
 * Labels of the DCC lines the machines add to {@link ReceiptData.lines} (src/flows/dcc.ts `dccReceiptLines`). When
 * the host knows the accepted offer, the builder states the full disclosure itself and leaves these out.
 */
export const MACHINE_DCC_LABELS: ReadonlySet<string> = new Set([
  'Paid in card currency',
  'Exchange rate',
  'Markup',
  'Currency conversion',
]);

/**
 * The machines write their receipt lines in en_GB (`Ticket`, `Paid in card currency`, `Parking: On-street meter`):
 * they are the record of a payment and carry no language. A label (or a fixed value) that is the en_GB text of a
 * `receipt.` message is shown in the document's language through that message; anything else (a ticket number, an
 * amount) stays as it is. Labels are the one-level keys (`receipt.ticket`), fixed values those under `receipt.value.`.
 */
const MACHINE_LABEL_KEYS = new Map<string, MessageKey>(
  MESSAGE_KEYS.filter(
    (key) => /^receipt\.[A-Za-z]+$/.test(key) && !CATALOGUES[BASE_LOCALE][key].includes('{'),
  ).map((key) => [CATALOGUES[BASE_LOCALE][key], key]),
);
const MACHINE_VALUE_KEYS = new Map<string, MessageKey>(
  MESSAGE_KEYS.filter((key) => key.startsWith('receipt.value.')).map((key) => [
    CATALOGUES[BASE_LOCALE][key],
    key,
  ]),
);

/** A machine's receipt line in `tr`'s language (see {@link MACHINE_LABEL_KEYS}). */
export function machineLine(line: { label: string; value: string }, tr: Translator): PrintableField {
  const labelKey = MACHINE_LABEL_KEYS.get(line.label);
  const valueKey = MACHINE_VALUE_KEYS.get(line.value);
  return {
    label: labelKey === undefined ? line.label : tr.t(labelKey),
    value: valueKey === undefined ? line.value : tr.t(valueKey),
  };
}

const TRANSACTION_TYPES: Readonly<Record<ServiceName, MessageKey>> = {
  avr: 'receipt.kind.cardCheck',
  preauth: 'receipt.kind.preauth',
  incremental: 'receipt.kind.incremental',
  reversal: 'receipt.kind.cancellation',
  'timeout-reversal': 'receipt.kind.cancellation',
  capture: 'receipt.kind.payment',
  sale: 'receipt.kind.sale',
  'refund-capture': 'receipt.kind.refund',
  'refund-payment': 'receipt.kind.refund',
  credit: 'receipt.kind.refund',
  'void-capture': 'receipt.kind.void',
  'void-payment': 'receipt.kind.void',
  'void-refund': 'receipt.kind.void',
  'void-credit': 'receipt.kind.void',
  'timeout-void': 'receipt.kind.void',
};

const ENTRY_MODES: Readonly<Record<EntryMode, MessageKey>> = {
  contact: 'receipt.entryMode.contact',
  contactless: 'receipt.entryMode.contactless',
  swiped: 'receipt.entryMode.swiped',
  msd: 'receipt.entryMode.msd',
};

const NETWORK_NAMES: Readonly<Record<CardNetwork, string | undefined>> = {
  visa: 'Visa',
  mastercard: 'Mastercard',
  maestro: 'Maestro',
  amex: 'American Express',
  discover: 'Discover',
  diners: 'Diners Club',
  jcb: 'JCB',
  unionpay: 'UnionPay',
  unknown: undefined,
};

// Magnetic-stripe track data and the tag 57 nibble form: a PAN followed by the expiry (YYMM).
const TRACK1 = /%?B\d{8,19}\^[^^]{0,26}\^\d*/g;
const TRACK2 = /;?\d{8,19}[=Dd]\d{4}[\dA-Fa-f=]*\??/g;

/**
 * `text` with card data replaced by `****`: track data (which carries the expiry after the PAN) always, and any
 * Luhn-valid 13–19 digits (grouped or not) whose prefix belongs to a card network. Ticket numbers and timestamps
 * (they start with the year, a prefix no network issues under) stay readable.
 */
export function withoutCardData(text: string): string {
  return maskCardNumbers(text.replace(TRACK1, '****').replace(TRACK2, '****'));
}

/** The text a receipt field carries: card data removed, whitespace runs as single spaces (as it prints). */
function clean(text: string): string {
  return printableText(withoutCardData(text));
}

/** "**** **** **** 0119": the last four digits of a masked (or, by mistake, full) PAN, nothing else. */
export function lastFourOnly(maskedPan: string): string {
  const digits = maskedPan.replace(/\D/g, '');
  return `**** **** **** ${digits.slice(-4).padStart(4, '*')}`;
}

/** The receipt's view of a card read: its entry mode is always known. */
export type ReadReceiptCard = ReceiptCard & { readonly entryMode: EntryMode };

/** Each held card read's receipt view, made once: the journal and the host's memory both take it (one per request). */
const receiptCards = new WeakMap<CardRead, ReadReceiptCard>();

/**
 * The receipt's view of a card read: entry mode, AID (4F, else 84), application label (50) as the receipt prints it
 * (card data removed, {@link withoutCardData}), CVM results (9F34). The journal keeps it with the request's outcome.
 */
export function receiptCardOf(read: CardRead): ReadReceiptCard {
  const made = receiptCards.get(read);
  if (made !== undefined) return made;
  const tag = (t: string): Uint8Array | undefined => read.tlvs.find((x) => x.tag === t)?.value;
  const aid = tag('4F') ?? tag('84');
  const label = tag('50');
  const cvm = tag('9F34');
  const labelText = label ? clean(String.fromCharCode(...label).replace(/[^\x20-\x7e]/g, ' ')) : undefined;
  const card: ReadReceiptCard = {
    entryMode: read.entryMode,
    ...(aid && aid.length > 0 ? { aid: bytesToHex(aid).toUpperCase() } : {}),
    ...(labelText ? { applicationLabel: labelText } : {}),
    ...(cvm && cvm.length === 3 ? { cvmResults: bytesToHex(cvm).toUpperCase() } : {}),
  };
  receiptCards.set(read, card);
  return card;
}

/**
 * Whether a transaction of `service` involves the card as presented: its own read (a sale, an authorization, a
 * credit), or the completion or extension of the authorization it was read for (a capture, an increment), whose
 * receipt states that read's entry mode and verification. A refund, a void or a cancellation is the operator's or the
 * terminal's act on an earlier payment: no card is read and no cardholder verified (a reversal's EMV tags are the
 * original's), so its receipt names the card (masked PAN, application, AID) and states neither.
 */
export function readsCard(service: string | undefined): boolean {
  return service === undefined || !READ_NO_CARD.has(service);
}

const READ_NO_CARD: ReadonlySet<string> = new Set<ServiceName>([
  'refund-capture',
  'refund-payment',
  'void-capture',
  'void-payment',
  'void-refund',
  'void-credit',
  'timeout-void',
  'reversal',
  'timeout-reversal',
]);

/**
 * The cardholder verification statement, from the CVM results (9F34, EMV Book 3 Annex C3) when the card gave them.
 * Unattended parking uses no CVM; an online PIN is verified by the issuer, so on an approved payment it was.
 */
export function cvmStatementKey(card: ReceiptCard | undefined): MessageKey {
  const noCvm = 'receipt.cvm.none';
  const results = card?.cvmResults;
  if (!results || !/^[0-9A-F]{6}$/.test(results)) return noCvm;
  const code = Number.parseInt(results.slice(0, 2), 16) & 0x3f;
  const result = results.slice(4, 6);
  switch (code) {
    case 0x01: // plaintext PIN verified by the ICC; on a contactless read, the confirmation code of a phone or watch
    case 0x04: // enciphered PIN verified by the ICC
      if (result !== '02') return noCvm;
      return card?.entryMode === 'contactless' ? 'receipt.cvm.device' : 'receipt.cvm.pin';
    case 0x02: // enciphered PIN verified online
      return 'receipt.cvm.pin';
    case 0x03: // plaintext PIN by ICC and signature
    case 0x05: // enciphered PIN by ICC and signature
    case 0x1e: // signature
      return 'receipt.cvm.signature';
    default: // 0x00 fail, 0x1F no CVM required, 0x3F no CVM performed
      return noCvm;
  }
}

/** The verification statement in `locale` (en_GB unless told). */
export function cvmStatement(card: ReceiptCard | undefined, locale: string = BASE_LOCALE): string {
  return translator(locale).t(cvmStatementKey(card));
}

/** The card's name: its application label, else its network from the BIN of the masked PAN. */
function cardName(data: ReceiptData, card: ReceiptCard | undefined): string | undefined {
  if (card?.applicationLabel) return card.applicationLabel;
  const bin = /^\d{6}/.exec(data.maskedPan ?? '')?.[0];
  return bin ? NETWORK_NAMES[detectNetwork(`${bin}0000000000`).network] : undefined;
}

function field(label: string, value: string): PrintableField {
  return { label: clean(label), value: clean(value) };
}

/**
 * Which disclaimer a converted payment's receipt states: the gateway's as it came, or the catalogue's own
 * (`receipt.dcc.disclaimer`) where the printer cannot print the gateway's ({@link issuedReceipt}).
 */
export type DisclaimerText = 'gateway' | 'catalogue';

/** How a receipt writes what the printer may not hold: see {@link issuedReceipt} and {@link inPrintableLanguage}. */
export interface ReceiptWording {
  readonly disclaimer?: DisclaimerText;
  /** Amounts' currencies as symbols (the default) or as ISO codes, for a table that lacks a symbol (cp852: €). */
  readonly currency?: CurrencyDisplay;
}

/** The DCC disclosure of a converted payment (kiosk.md §1; gateway.md §5; EU Regulation 2021/1230 Art. 4–5). */
function conversionFields(
  data: ReceiptData,
  offer: DccReceiptOffer,
  billedMinor: number | undefined,
  settings: ReceiptSettings,
  tr: Translator,
  wording: ReceiptWording,
): PrintableField[] {
  const billingMinor =
    billedMinor ??
    (data.currency === offer.localCurrency
      ? convertAtOfferRate(data.amountMinor, offer)
      : offer.billingAmountMinor);
  const label = (name: FieldName): string => tr.t(LABEL_KEYS[name]);
  return [
    field(
      tr.t('receipt.convertedAmount', { currency: offer.billingCurrency }),
      formatAmount(billingMinor, offer.billingCurrency, tr.locale, wording.currency),
    ),
    field(label('rate'), dccRateText(offer, tr.locale)),
    field(
      label('markup'),
      tr.t('receipt.dcc.markup', { margin: dccMarginText(offer, tr.locale), source: settings.dccRateSource }),
    ),
    field(label('rateSource'), settings.dccRateSource),
    // The time the follow-ons repeat, as a person reads it: the UTC time of the 14-digit stamp; a stamp sent as ISO
    // 8601 text by an earlier version is that text already.
    field(label('rateTime'), isoOfUtcTimeStamp(offer.exchangeRateTimeStamp) ?? offer.exchangeRateTimeStamp),
    field(label('provider'), settings.dccProvider),
    field(label('currencyChoice'), tr.t('receipt.dcc.choice', { currency: offer.billingCurrency })),
    // The gateway's words, as they came (gateway.md §5): never translated; the catalogue's own when they cannot be
    // printed (issuedReceipt).
    field(
      label('disclaimer'),
      wording.disclaimer === 'catalogue' ? tr.t('receipt.dcc.disclaimer') : offer.disclaimer,
    ),
  ];
}

/** Date and time of a receipt in the terminal's time zone, written the way `locale` writes them. */
function dateAndTime(
  atMs: number,
  timeZone: string,
  locale: SupportedLocale,
): { date: string; time: string } {
  const tag = intlLocale(locale);
  return {
    date: new Intl.DateTimeFormat(tag, {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
    }).format(atMs),
    time: new Intl.DateTimeFormat(tag, {
      timeZone,
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    }).format(atMs),
  };
}

/**
 * Builds the receipt of a completed transaction in `locale` (`settings.locale`, the terminal's, when not given; an
 * unsupported one by the fallback rule of src/i18n). Pure: the same input gives the same document.
 */
export function buildReceipt(
  data: ReceiptData,
  facts: ReceiptFacts,
  settings: ReceiptSettings,
  locale: string = settings.locale,
  wording: ReceiptWording = {},
): ReceiptDocument {
  const tr = translator(resolveLocale(locale, settings.locale));
  const label = (name: FieldName): string => tr.t(LABEL_KEYS[name]);
  const { date, time } = dateAndTime(data.atMs, settings.timeZone, tr.locale);
  const converted = facts.conversion !== undefined;
  const modelLines = data.lines.filter((l) => !(converted && MACHINE_DCC_LABELS.has(l.label)));
  const name = cardName(data, facts.card);
  const fields: PrintableField[] = [
    ...(settings.merchantLocation ? [field(label('location'), settings.merchantLocation)] : []),
    field(label('merchantId'), settings.merchantId),
    field(label('terminalId'), settings.terminalId),
    field(label('date'), date),
    field(label('time'), time),
    field(label('type'), tr.t(TRANSACTION_TYPES[data.service])),
    ...modelLines.map((l) => {
      const line = machineLine(l, tr);
      return field(line.label, line.value);
    }),
    field(label('amount'), formatAmount(data.amountMinor, data.currency, tr.locale, wording.currency)),
    ...(facts.conversion
      ? conversionFields(data, facts.conversion, facts.billedMinor, settings, tr, wording)
      : []),
    ...(data.maskedPan !== undefined ? [field(label('card'), lastFourOnly(data.maskedPan))] : []),
    ...(name ? [field(label('application'), name)] : []),
    ...(facts.card?.aid ? [field(label('aid'), facts.card.aid)] : []),
    ...(facts.card?.entryMode ? [field(label('entry'), tr.t(ENTRY_MODES[facts.card.entryMode]))] : []),
    // No verification statement on the receipt of a transaction that read no card (readsCard): none took place.
    ...((data.maskedPan !== undefined || facts.card) && readsCard(data.service)
      ? [field(label('verification'), tr.t(cvmStatementKey(facts.card)))]
      : []),
    ...(facts.approvalCode ? [field(label('approvalCode'), facts.approvalCode)] : []),
    field(label('transaction'), data.transactionId),
    ...(data.gatewayId ? [field(label('reference'), data.gatewayId)] : []),
  ];
  return {
    title: clean(settings.merchantName),
    fields,
    transactionId: data.transactionId,
    amountMinor: data.amountMinor,
    currency: data.currency,
    converted,
    locale: tr.locale,
  };
}

/**
 * The receipt a customer gets, on paper and on screen alike (one document, so the two always match):
 * - in the customer's language (`customerLocale`, the session's) when the printer can print it — some code table it
 *   carries holds every character of it (devices/printer `receiptCodepage`: cp858 for most Western European text,
 *   cp852 for Polish …), if need be with its amounts' currencies as ISO codes (cp852 has no €: `6,00 EUR`), or when
 *   no printer is attached;
 * - otherwise in the terminal's language (`terminal.locale`), when the printer can print that: Arabic, for one, is
 *   in no table a printer prints as text (its letters join and run right to left), so an ar_AE customer's receipt is
 *   the terminal's language on paper, and the screen shows that same document;
 * - otherwise (a terminal whose own language is Arabic) in en_GB, the base catalogue, which every table prints;
 * - when none of them can be printed whole (a merchant name in another script, say), in the customer's language: no
 *   other language would print any better.
 *
 * A converted payment's disclosure states the gateway's disclaimer as it came (gateway.md §5) whenever the printer can
 * print it in some language by that rule. A disclaimer in a script no code table holds (Greek, Chinese, Cyrillic
 * beyond cp866 …) would print as "?" and leave the paper without a readable one, and pull the rest of the receipt
 * into a table that cannot print it either: the receipt then states the catalogue's own disclaimer
 * (`receipt.dcc.disclaimer`) instead, in the language the same rule chooses, on paper and on screen alike. The
 * customer read the gateway's words, unmodified, on the choice screen.
 */
export function issuedReceipt(
  data: ReceiptData,
  facts: ReceiptFacts,
  settings: ReceiptSettings,
  customerLocale: string,
): ReceiptDocument {
  const issue = (disclaimer: DisclaimerText): ReceiptDocument =>
    inPrintableLanguage(
      (locale, currency) => buildReceipt(data, facts, settings, locale, { disclaimer, currency }),
      settings,
      customerLocale,
    );
  const asSent = issue('gateway');
  if (facts.conversion === undefined || printable(asSent, settings)) return asSent;
  const own = issue('catalogue');
  return printable(own, settings) ? own : asSent;
}

/** Whether the printer can print `doc` whole in one code table it carries (always, with no printer attached). */
function printable(doc: ReceiptDocument, settings: ReceiptSettings): boolean {
  return (
    settings.printerCodepage === undefined || receiptCodepage(doc, settings.printerCodepage) !== undefined
  );
}

/**
 * The document `build` makes in `locale` when the printer can print it, else in the first of the terminal's language
 * and en_GB it can print, else in `locale` (the rule of {@link issuedReceipt}). In each language, amounts write their
 * currency as its symbol, or as its ISO code when only that prints: "6,00 EUR" keeps a Polish receipt Polish, as
 * cp852 holds Polish but no €.
 */
function inPrintableLanguage(
  build: (locale: string, currency: CurrencyDisplay) => ReceiptDocument,
  settings: ReceiptSettings,
  locale: string,
): ReceiptDocument {
  const own = build(locale, 'symbol');
  if (printable(own, settings)) return own;
  const coded = build(locale, 'code');
  if (printable(coded, settings)) return coded;
  const fallbacks = [settings.locale, BASE_LOCALE].filter((l) => resolveLocale(l) !== own.locale);
  for (const fallback of fallbacks)
    for (const currency of ['symbol', 'code'] as const) {
      const doc = build(fallback, currency);
      if (printable(doc, settings)) return doc;
    }
  return own;
}

/**
 * The test receipt of service mode, for the person at the terminal: its title and labels in the terminal's language
 * (by the rule of {@link issuedReceipt}), the terminal's id and the printer's kind.
 */
export function testReceipt(settings: ReceiptSettings, printerKind: string): ReceiptDocument {
  return inPrintableLanguage(
    (locale) => {
      const tr = translator(resolveLocale(locale, settings.locale));
      return {
        title: tr.t('receipt.test.title'),
        fields: [
          field(tr.t(LABEL_KEYS.terminalId), settings.terminalId),
          field(tr.t('receipt.test.printer'), printerKind),
        ],
        transactionId: 'TEST',
        amountMinor: 0,
        currency: settings.currency,
        converted: false,
        locale: tr.locale,
      };
    },
    settings,
    settings.locale,
  );
}

/** A payment link to pay later, as printed (pay later, issue 14 item 2). */
export interface LinkSlipData {
  linkId: string;
  url: string;
  /** The ticket or session reference the amount is owed for. */
  reference: string;
  amountMinor: number;
  currency: string;
  /** Epoch milliseconds: the link is deactivated after it. */
  expiresAtMs: number;
  atMs: number;
}

/**
 * The slip of a payment link to pay later: what is owed, for what, until when, and the link's address as text under
 * its QR code (the printer draws the QR of the URL). In the customer's language when the printer can print it, else by
 * the fallbacks of {@link issuedReceipt}. No card data: the link is paid on the customer's phone.
 */
export function linkSlip(
  data: LinkSlipData,
  settings: ReceiptSettings,
  customerLocale: string,
): ReceiptDocument {
  const build = (locale: string, currency: CurrencyDisplay): ReceiptDocument => {
    const tr = translator(resolveLocale(locale, settings.locale));
    const label = (name: FieldName): string => tr.t(LABEL_KEYS[name]);
    const { date, time } = dateAndTime(data.atMs, settings.timeZone, tr.locale);
    const until = dateAndTime(data.expiresAtMs, settings.timeZone, tr.locale);
    return {
      title: `${clean(settings.merchantName)}: ${tr.t('slip.payLater.title')}`,
      fields: [
        field(label('terminalId'), settings.terminalId),
        field(label('date'), date),
        field(label('time'), time),
        field(tr.t('receipt.ticket'), data.reference),
        field(label('amount'), formatAmount(data.amountMinor, data.currency, tr.locale, currency)),
        field(tr.t('slip.payLater.until'), `${until.date} ${until.time}`),
        field(tr.t('slip.payLater.title'), tr.t('slip.payLater.instructions')),
        field(tr.t('receipt.paidBy'), data.url),
      ],
      transactionId: data.linkId,
      amountMinor: data.amountMinor,
      currency: data.currency,
      converted: false,
      locale: tr.locale,
    };
  };
  return inPrintableLanguage(build, settings, customerLocale);
}

/**
 * What the journal keeps of a receipt as it is issued, for its copy after a restart (src/journal `IssuedReceiptNote`):
 * the customer's language as the terminal took it (the rule of {@link issuedReceipt}, applied to it again, gives the
 * same document) and the machine's own lines, card data removed as the receipt removes it ({@link withoutCardData}).
 * The machines' currency conversion lines are left out: a receipt rebuilt from the journal states the conversion from
 * the journaled offer, whole, or not at all ({@link ReceiptFactsLog}), never the part those lines hold.
 */
export function receiptNote(
  data: ReceiptData,
  customerLocale: string,
  settings: ReceiptSettings,
): IssuedReceiptNote {
  return {
    locale: resolveLocale(customerLocale, settings.locale),
    lines: data.lines
      .filter((l) => !MACHINE_DCC_LABELS.has(l.label))
      .map((l) => ({ label: withoutCardData(l.label), value: withoutCardData(l.value) })),
  };
}

/**
 * A receipt as operator mode prints it again: the same document, its title marked as a copy in the document's language
 * (`receipt.mark.copy`), so that a second paper receipt of one payment is not taken for a second payment.
 */
export function receiptCopy(doc: ReceiptDocument): ReceiptDocument {
  return { ...doc, title: `${doc.title} - ${translator(doc.locale).t('receipt.mark.copy')}` };
}

/**
 * Whether a receipt is offered at all. Card rules let an unattended terminal skip the receipt of a small amount
 * (Visa: up to USD 25 at unattended terminals, parking cited, kiosk.md §3); `receipts.noReceiptBelowMinor` sets that
 * amount in the terminal's currency, 0 always offers one. An attended terminal always offers one, and so does every
 * terminal for a converted payment: its disclosure (mark-up, both amounts) is owed on a durable medium, the receipt
 * (kiosk.md §1, EU Regulation 2021/1230).
 */
export function receiptOffered(doc: ReceiptDocument, settings: ReceiptSettings): boolean {
  if (settings.catLevel === 6 || doc.converted) return true;
  if (doc.currency !== settings.currency) return true;
  return doc.amountMinor >= settings.noReceiptBelowMinor;
}

/**
 * What became of a receipt's paper copy: `none` (no printer attached), `printing`, `printed`, `unavailable` (the
 * printer could not print it: paper out, cover open, offline, an error — the e-receipt is offered instead) or
 * `not-offered` (no receipt for this small unattended amount, {@link receiptOffered}).
 */
export type PaperCopy = 'none' | 'printing' | 'printed' | 'unavailable' | 'not-offered';

/** A receipt the terminal issued: its document, its e-receipt QR once drawn, and its paper copy. */
export interface IssuedReceipt {
  readonly document: ReceiptDocument;
  readonly paper: PaperCopy;
  readonly qr?: EReceiptQr;
}

/**
 * The on-screen receipt: the document's title and fields exactly as printed (same order, same values, in the
 * document's language), its e-receipt QR code (the printed one's payload), and, in the customer's language
 * (`customerLocale`), a notice when no paper copy comes: the printer could not print it, or none is offered for this
 * amount — then the fields are left out too and only the e-receipt is offered.
 */
export function screenReceipt(
  issued: IssuedReceipt,
  customerLocale: string = issued.document.locale,
): Receipt {
  const { document: doc, paper, qr } = issued;
  const { t } = translator(customerLocale);
  const notice: MessageKey | undefined =
    paper === 'unavailable'
      ? 'receipt.notice.unavailable'
      : paper === 'not-offered'
        ? 'receipt.notice.notOffered'
        : undefined;
  return {
    title: doc.title,
    lines: paper === 'not-offered' ? [] : doc.fields.map((f) => ({ label: f.label, value: f.value })),
    locale: doc.locale,
    lang: intlLocale(doc.locale),
    direction: directionOf(doc.locale),
    ...(qr !== undefined
      ? {
          qr: {
            svg: qr.svg,
            alt: t(qr.url !== undefined ? 'receipt.qr.link' : 'receipt.qr.text'),
            ...(qr.url !== undefined ? { url: qr.url } : {}),
          },
        }
      : {}),
    ...(notice !== undefined ? { notice: t(notice) } : {}),
  };
}

/** The receipt as plain text, one `label: value` line per field (the e-receipt QR's payload without a URL). */
export function receiptText(doc: ReceiptDocument): string {
  return [doc.title, ...doc.fields.map((f) => `${f.label}: ${f.value}`)].join('\n');
}

/** The e-receipt QR code of a receipt. */
export interface EReceiptQr {
  /** What the QR code encodes: the URL when there is one, else the receipt's text. */
  readonly payload: string;
  /** `receipts.eReceiptUrl` with `ref=<transactionId>`; absent when no URL is configured. */
  readonly url?: string;
  /** The QR code as an SVG document (dark on light, quiet zone of 4 modules, error correction M: kiosk.md §4). */
  readonly svg: string;
}

/** The e-receipt URL of a receipt: the configured base with the transaction reference, never any card data. */
export function eReceiptUrl(doc: ReceiptDocument, settings: ReceiptSettings): string | undefined {
  if (settings.eReceiptUrl === undefined) return undefined;
  const url = new URL(settings.eReceiptUrl);
  url.searchParams.set('ref', doc.transactionId);
  return url.toString();
}

/**
 * The QR code for a receipt: the e-receipt URL when `receipts.eReceiptUrl` is set, otherwise the receipt's text
 * itself (its fields carry the card's last four digits at most). Error correction {@link QR_ERROR_CORRECTION} (M),
 * the printer's: undefined when the payload is too long for a code at M, or, with a printer attached, for one across
 * its roll (devices/printer `qrModuleDots`), and the receipt is then shown and printed without a code — never a code
 * on screen that the paper does not carry. Never rejects, so that a receipt is never lost for its code.
 */
export async function eReceiptQr(
  doc: ReceiptDocument,
  settings: ReceiptSettings,
): Promise<EReceiptQr | undefined> {
  const url = eReceiptUrl(doc, settings);
  const payload = url ?? receiptText(doc);
  if (
    settings.printerWidthChars !== undefined &&
    qrModuleDots(payload, settings.printerWidthChars) === undefined
  )
    return undefined;
  let svg: string;
  try {
    svg = await QRCode.toString(payload, {
      type: 'svg',
      errorCorrectionLevel: QR_ERROR_CORRECTION,
      margin: 4,
      color: { dark: '#000000', light: '#ffffff' },
    });
  } catch {
    return undefined;
  }
  return { payload, ...(url !== undefined ? { url } : {}), svg };
}

/** What {@link ReceiptFactsLog.noteSubmit} needs of a request: the ServiceRequest of src/flows/effects.ts fits. */
export interface SubmittedRequest {
  readonly service?: ServiceName;
  readonly cardRef?: string;
  readonly original?: { readonly transactionId: string };
  readonly dcc?: { readonly indicator: '1'; readonly offer: DccOfferSummary } | { readonly indicator: '3' };
}

/**
 * What the journal database keeps of a transaction for its receipt (its entry, and a converted authorization's offer
 * kept for its follow-ons: src/host/receipt-desk.ts reads them).
 */
export interface JournaledReceiptFacts {
  readonly service: string;
  /** The transactionId of the original a follow-on acts on (a capture's authorization). */
  readonly originalTransactionId?: string;
  readonly approvalCode?: string;
  readonly card?: ReceiptCard;
  /** A converted authorization's accepted offer, as its first receipt stated it. */
  readonly conversion?: DccReceiptOffer;
  /**
   * The amount the entry moved and its currency: the answer's (a capture's captured, a refund's refunded amount),
   * else the request's; an increment's, the request's (its answer states the new total).
   */
  readonly amountMinor?: number;
  readonly currency?: string;
  /**
   * A refund's: what stood refunded of its payment, in the journal's currency, when it was built (the refunds journaled
   * before it that stand or may stand).
   */
  readonly refundedBeforeMinor?: number;
}

/** Reads {@link JournaledReceiptFacts} of a transactionId; undefined when the journal has no such entry. */
export type JournaledReceiptFactsReader = (transactionId: string) => JournaledReceiptFacts | undefined;

/** Originals followed from a follow-on's journal entry at most (a refund of a capture of an authorization: 2). */
const MAX_ORIGINALS = 4;

/**
 * A transaction's receipt facts from its own and its original's: a follow-on (capture, refund) states the card and
 * the conversion of its original when it has none of its own, and a capture's approval is its authorization's — the
 * code the issuer gave then is the one the receipt states. A transaction that read no card ({@link readsCard}: a
 * refund, a void, a cancellation) keeps only the card's AID and label: the entry mode and the CVM results are those
 * of the original's card read, and its receipt stating "Chip" or "PIN verified" would be false. One rule for the
 * facts noted live and those read back from the journal.
 */
function withOriginal(
  service: string | undefined,
  own: ReceiptFacts,
  original: ReceiptFacts | undefined,
): ReceiptFacts {
  const inherited = own.card ?? original?.card;
  const card =
    inherited === undefined || readsCard(service)
      ? inherited
      : {
          ...(inherited.aid !== undefined ? { aid: inherited.aid } : {}),
          ...(inherited.applicationLabel !== undefined
            ? { applicationLabel: inherited.applicationLabel }
            : {}),
        };
  const conversion = own.conversion ?? original?.conversion;
  const approvalCode = own.approvalCode ?? (service === 'capture' ? original?.approvalCode : undefined);
  return {
    ...(card ? { card } : {}),
    ...(conversion ? { conversion } : {}),
    ...(approvalCode ? { approvalCode } : {}),
  };
}

/**
 * `facts` with what the journal's `entry` says the transaction moved in the conversion's card currency, if it does: the
 * amount of an entry journaled in that currency (processor family A), or the card amount a refund journaled in the
 * local currency carried beside it (family B: {@link refundAtOfferRate} of what stood refunded before it).
 */
function withBilled(facts: ReceiptFacts, entry: JournaledReceiptFacts | undefined): ReceiptFacts {
  const conversion = facts.conversion;
  if (conversion === undefined || entry?.amountMinor === undefined) return facts;
  if (entry.currency === conversion.billingCurrency) return { ...facts, billedMinor: entry.amountMinor };
  if (entry.currency === conversion.localCurrency && entry.refundedBeforeMinor !== undefined)
    return {
      ...facts,
      billedMinor: refundAtOfferRate(entry.amountMinor, entry.refundedBeforeMinor, conversion),
    };
  return facts;
}

/**
 * The host's memory of recent transactions for their receipts: the card's receipt view, the accepted offer and the
 * approval code, keyed by transactionId, noted when a request is answered and read when the machine issues the receipt.
 * A follow-on (capture, refund) inherits what its original had. Bounded: only the last `capacity` transactions are
 * kept. A transaction not noted in this process (made before a restart, or no longer kept) is read from the journal
 * (`journaled`), which keeps the approval code and the card's view with each outcome: a receipt issued again after a
 * restart states them as the first one did — and the accepted offer of a converted authorization, kept with the terms
 * its follow-ons repeat: the receipt of its refund, of its capture or of the operator's reprint after a restart states
 * the conversion as the first one did.
 */
export class ReceiptFactsLog {
  private readonly facts = new Map<string, ReceiptFacts>();

  constructor(
    private readonly capacity = 64,
    private readonly journaled: JournaledReceiptFactsReader = () => undefined,
  ) {}

  /**
   * Notes an answered request. `read` is the held card read of `request.cardRef` (CardStore.get(ref)?.read) when the
   * host still holds it; only its receipt view is kept, never the read itself.
   */
  noteSubmit(
    request: SubmittedRequest,
    outcome: { readonly transactionId: string; readonly approvalCode?: string },
    read?: CardRead,
  ): void {
    const original = request.original ? this.factsFor(request.original.transactionId) : undefined;
    const code = receiptApprovalCode(outcome.approvalCode);
    const facts = withOriginal(
      request.service,
      {
        ...(read ? { card: receiptCardOf(read) } : {}),
        ...(request.dcc?.indicator === '1' ? { conversion: request.dcc.offer } : {}),
        // The journal's rule of an approval code a receipt states (no card number, no odd shape): the receipt of this
        // answer and the one issued again from the journal state the same.
        ...(code !== undefined ? { approvalCode: code } : {}),
      },
      original,
    );
    this.facts.delete(outcome.transactionId);
    this.facts.set(outcome.transactionId, facts);
    while (this.facts.size > this.capacity) {
      const oldest = this.facts.keys().next().value;
      if (oldest === undefined) break;
      this.facts.delete(oldest);
    }
  }

  /**
   * What is known of a transaction: noted in this process, else journaled; empty when neither knows it. The amount it
   * moved in the card's currency is the journal's in both cases ({@link ReceiptFacts.billedMinor}).
   */
  factsFor(transactionId: string): ReceiptFacts {
    const noted = this.facts.get(transactionId);
    if (noted === undefined) return this.fromJournal(transactionId, MAX_ORIGINALS);
    let entry: JournaledReceiptFacts | undefined;
    try {
      entry = this.journaled(transactionId);
    } catch {
      // A receipt is never lost for it: the local amount converted at the offer's rate, as the request was.
      return noted;
    }
    return withBilled(noted, entry);
  }

  private fromJournal(transactionId: string, originals: number): ReceiptFacts {
    const entry = this.journaled(transactionId);
    if (entry === undefined) return {};
    return withBilled(this.fromEntry(entry, originals), entry);
  }

  private fromEntry(entry: JournaledReceiptFacts, originals: number): ReceiptFacts {
    const originalTx = entry.originalTransactionId;
    const original =
      originalTx !== undefined && originals > 0
        ? (this.facts.get(originalTx) ?? this.fromJournal(originalTx, originals - 1))
        : undefined;
    return withOriginal(
      entry.service,
      {
        ...(entry.card ? { card: entry.card } : {}),
        ...(entry.conversion ? { conversion: entry.conversion } : {}),
        ...(entry.approvalCode ? { approvalCode: entry.approvalCode } : {}),
      },
      original,
    );
  }
}
