import QRCode from 'qrcode';
import { printableText, type PrintableField, type PrintableReceipt } from '../../devices/printer/index.js';
import type { CardRead } from '../../devices/reader.js';
import type { Config } from '../config/index.js';
import { bytesToHex, detectNetwork, luhnValid, type CardNetwork } from '../emv/index.js';
import {
  convertAtOfferRate,
  dccRateText,
  type DccOfferSummary,
  type EntryMode,
  type ReceiptData,
  type ServiceName,
} from '../flows/index.js';
import { formatMoney } from '../money/index.js';
import type { Receipt } from './api.js';
import { localDateTime } from './local-time.js';

/**
 * The one receipt builder: what the terminal knows of a completed payment → a {@link ReceiptDocument}, the same
 * labelled fields for the customer's screen ({@link screenReceipt}), the printer (devices/printer) and the e-receipt
 * QR code ({@link eReceiptQr}).
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

/** The card as a receipt may show it: nothing here is card data (AID and label identify the application). */
export interface ReceiptCard {
  readonly entryMode: EntryMode;
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
  /** The offer the customer accepted (DCC indicator 1); absent when the payment was not converted. */
  readonly conversion?: DccOfferSummary;
  /** `processorInformation.approvalCode` of the gateway's answer, when the host has it. */
  readonly approvalCode?: string;
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
  readonly locale: string;
  readonly timeZone: string;
  readonly noReceiptBelowMinor: number;
  readonly eReceiptUrl?: string;
  readonly dccProvider: string;
  readonly dccRateSource: string;
}

export function receiptSettingsFromConfig(config: Config): ReceiptSettings {
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
}

/** Labels of the fields, so that tests and callers do not repeat the wording. */
export const RECEIPT_LABELS = {
  location: 'Location',
  merchantId: 'Merchant ID',
  terminalId: 'Terminal ID',
  date: 'Date',
  time: 'Time',
  type: 'Type',
  amount: 'Amount',
  convertedAmount: (currency: string) => `Transaction amount (${currency})`,
  rate: 'Exchange rate',
  markup: 'Markup',
  rateSource: 'Rate source',
  rateTime: 'Rate time (UTC)',
  provider: 'Conversion provider',
  currencyChoice: 'Currency choice',
  disclaimer: 'Disclaimer',
  card: 'Card',
  application: 'Application',
  aid: 'AID',
  entry: 'Entry',
  verification: 'Verification',
  approvalCode: 'Approval code',
  transaction: 'Transaction',
  reference: 'Reference',
} as const;

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

const TRANSACTION_TYPES: Readonly<Record<ServiceName, string>> = {
  avr: 'Card check',
  preauth: 'Pre-authorization',
  incremental: 'Additional authorization',
  reversal: 'Cancellation',
  'timeout-reversal': 'Cancellation',
  capture: 'Payment',
  sale: 'Sale',
  'refund-capture': 'Refund',
  'refund-payment': 'Refund',
  credit: 'Refund',
  'void-capture': 'Void',
  'void-payment': 'Void',
  'void-refund': 'Void',
  'void-credit': 'Void',
  'timeout-void': 'Void',
};

const ENTRY_MODES: Readonly<Record<EntryMode, string>> = {
  contact: 'Chip',
  contactless: 'Contactless',
  swiped: 'Magnetic stripe',
  msd: 'Contactless (magnetic stripe mode)',
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
// Digit groups joined by single spaces or dashes ("4111 1111 1111 1111", "ticket 2026 0001").
const DIGIT_GROUPS = /\d+(?:[ -]\d+)*/g;

const isCardNumber = (digits: string): boolean =>
  digits.length >= 13 &&
  digits.length <= 19 &&
  luhnValid(digits) &&
  detectNetwork(digits).network !== 'unknown';

/**
 * A run of digit groups with every sequence of whole groups that forms a card number replaced by `****`. Groups are
 * never split: a 22-digit gateway id stays whole, and a PAN run together with other digits without any separator is
 * not recognised (no text the terminal builds does that).
 */
function maskCardNumbers(run: string): string {
  const parts = run.split(/([ -])/);
  const groups = parts.filter((_, i) => i % 2 === 0);
  const masked = groups.map(() => false);
  for (let i = 0; i < groups.length; i++) {
    let digits = '';
    for (let j = i; j < groups.length && digits.length <= 19; j++) {
      digits += groups[j] ?? '';
      if (isCardNumber(digits)) masked.fill(true, i, j + 1);
    }
  }
  if (!masked.includes(true)) return run;
  let out = '';
  groups.forEach((group, i) => {
    if (i > 0 && !(masked[i] && masked[i - 1])) out += parts[2 * i - 1] ?? ' ';
    if (!masked[i]) out += group;
    else if (i === 0 || !masked[i - 1]) out += '****';
  });
  return out;
}

/**
 * `text` with card data replaced by `****`: track data (which carries the expiry after the PAN) always, and any
 * Luhn-valid 13–19 digits (grouped or not) whose prefix belongs to a card network. Ticket numbers and timestamps
 * (they start with the year, a prefix no network issues under) stay readable.
 */
export function withoutCardData(text: string): string {
  return text.replace(TRACK1, '****').replace(TRACK2, '****').replace(DIGIT_GROUPS, maskCardNumbers);
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

/** The receipt's view of a card read: entry mode, AID (4F, else 84), application label (50), CVM results (9F34). */
export function receiptCardOf(read: CardRead): ReceiptCard {
  const tag = (t: string): Uint8Array | undefined => read.tlvs.find((x) => x.tag === t)?.value;
  const aid = tag('4F') ?? tag('84');
  const label = tag('50');
  const cvm = tag('9F34');
  const labelText = label
    ? printableText(String.fromCharCode(...label).replace(/[^\x20-\x7e]/g, ' '))
    : undefined;
  return {
    entryMode: read.entryMode,
    ...(aid && aid.length > 0 ? { aid: bytesToHex(aid).toUpperCase() } : {}),
    ...(labelText ? { applicationLabel: labelText } : {}),
    ...(cvm && cvm.length === 3 ? { cvmResults: bytesToHex(cvm).toUpperCase() } : {}),
  };
}

/**
 * The cardholder verification statement, from the CVM results (9F34, EMV Book 3 Annex C3) when the card gave them.
 * Unattended parking uses no CVM; an online PIN is verified by the issuer, so on an approved payment it was.
 */
export function cvmStatement(card: ReceiptCard | undefined): string {
  const noCvm = 'No signature required';
  const results = card?.cvmResults;
  if (!results || !/^[0-9A-F]{6}$/.test(results)) return noCvm;
  const code = Number.parseInt(results.slice(0, 2), 16) & 0x3f;
  const result = results.slice(4, 6);
  switch (code) {
    case 0x01: // plaintext PIN verified by the ICC; on a contactless read, the confirmation code of a phone or watch
    case 0x04: // enciphered PIN verified by the ICC
      if (result !== '02') return noCvm;
      return card?.entryMode === 'contactless' ? 'Verified on the cardholder\u2019s device' : 'PIN verified';
    case 0x02: // enciphered PIN verified online
      return 'PIN verified';
    case 0x03: // plaintext PIN by ICC and signature
    case 0x05: // enciphered PIN by ICC and signature
    case 0x1e: // signature
      return 'Signature required';
    default: // 0x00 fail, 0x1F no CVM required, 0x3F no CVM performed
      return noCvm;
  }
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

/** The DCC disclosure of a converted payment (kiosk.md §1; gateway.md §5; EU Regulation 2021/1230 Art. 4–5). */
function conversionFields(
  data: ReceiptData,
  offer: DccOfferSummary,
  settings: ReceiptSettings,
): PrintableField[] {
  const billingMinor =
    data.currency === offer.localCurrency
      ? convertAtOfferRate(data.amountMinor, offer)
      : offer.billingAmountMinor;
  return [
    field(
      RECEIPT_LABELS.convertedAmount(offer.billingCurrency),
      formatMoney(billingMinor, offer.billingCurrency, settings.locale),
    ),
    field(RECEIPT_LABELS.rate, dccRateText(offer)),
    field(RECEIPT_LABELS.markup, `${offer.marginRate}% over the ${settings.dccRateSource}`),
    field(RECEIPT_LABELS.rateSource, settings.dccRateSource),
    field(RECEIPT_LABELS.rateTime, offer.rateTimeUtc),
    field(RECEIPT_LABELS.provider, settings.dccProvider),
    field(
      RECEIPT_LABELS.currencyChoice,
      `You were offered a choice of currencies and chose to pay in ${offer.billingCurrency}.`,
    ),
    field(RECEIPT_LABELS.disclaimer, offer.disclaimer),
  ];
}

/** Builds the receipt of a completed transaction. Pure: the same input gives the same document. */
export function buildReceipt(
  data: ReceiptData,
  facts: ReceiptFacts,
  settings: ReceiptSettings,
): ReceiptDocument {
  const t = localDateTime(new Date(data.atMs), settings.timeZone);
  const converted = facts.conversion !== undefined;
  const modelLines = data.lines.filter((l) => !(converted && MACHINE_DCC_LABELS.has(l.label)));
  const name = cardName(data, facts.card);
  const fields: PrintableField[] = [
    ...(settings.merchantLocation ? [field(RECEIPT_LABELS.location, settings.merchantLocation)] : []),
    field(RECEIPT_LABELS.merchantId, settings.merchantId),
    field(RECEIPT_LABELS.terminalId, settings.terminalId),
    field(RECEIPT_LABELS.date, `${t.slice(0, 4)}-${t.slice(4, 6)}-${t.slice(6, 8)}`),
    field(RECEIPT_LABELS.time, `${t.slice(8, 10)}:${t.slice(10, 12)}:${t.slice(12, 14)}`),
    field(RECEIPT_LABELS.type, TRANSACTION_TYPES[data.service]),
    ...modelLines.map((l) => field(l.label, l.value)),
    field(RECEIPT_LABELS.amount, formatMoney(data.amountMinor, data.currency, settings.locale)),
    ...(facts.conversion ? conversionFields(data, facts.conversion, settings) : []),
    ...(data.maskedPan !== undefined ? [field(RECEIPT_LABELS.card, lastFourOnly(data.maskedPan))] : []),
    ...(name ? [field(RECEIPT_LABELS.application, name)] : []),
    ...(facts.card?.aid ? [field(RECEIPT_LABELS.aid, facts.card.aid)] : []),
    ...(facts.card ? [field(RECEIPT_LABELS.entry, ENTRY_MODES[facts.card.entryMode])] : []),
    ...(data.maskedPan !== undefined || facts.card
      ? [field(RECEIPT_LABELS.verification, cvmStatement(facts.card))]
      : []),
    ...(facts.approvalCode ? [field(RECEIPT_LABELS.approvalCode, facts.approvalCode)] : []),
    field(RECEIPT_LABELS.transaction, data.transactionId),
    ...(data.gatewayId ? [field(RECEIPT_LABELS.reference, data.gatewayId)] : []),
  ];
  return {
    title: clean(settings.merchantName),
    fields,
    transactionId: data.transactionId,
    amountMinor: data.amountMinor,
    currency: data.currency,
    converted,
  };
}

/**
 * Whether a receipt is offered at all. Card rules let an unattended terminal skip the receipt of a small amount
 * (Visa: up to USD 25 at unattended terminals, parking cited, kiosk.md §3); `receipts.noReceiptBelowMinor` sets that
 * amount in the terminal's currency, 0 always offers one. An attended terminal always offers one.
 */
export function receiptOffered(doc: ReceiptDocument, settings: ReceiptSettings): boolean {
  if (settings.catLevel === 6) return true;
  if (doc.currency !== settings.currency) return true;
  return doc.amountMinor >= settings.noReceiptBelowMinor;
}

/** The on-screen receipt: the document's title and fields, and the e-receipt link when there is a URL. */
export function screenReceipt(doc: ReceiptDocument, eReceipt?: EReceiptQr): Receipt {
  return {
    title: doc.title,
    lines: doc.fields.map((f) => ({ label: f.label, value: f.value })),
    ...(eReceipt?.url !== undefined ? { link: { url: eReceipt.url, qrSvg: eReceipt.svg } } : {}),
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
 * itself (its fields carry the card's last four digits at most). Error correction M, lowered to L only when the text
 * is too long for M.
 */
export async function eReceiptQr(doc: ReceiptDocument, settings: ReceiptSettings): Promise<EReceiptQr> {
  const url = eReceiptUrl(doc, settings);
  const payload = url ?? receiptText(doc);
  const svgOf = (errorCorrectionLevel: 'M' | 'L'): Promise<string> =>
    QRCode.toString(payload, {
      type: 'svg',
      errorCorrectionLevel,
      margin: 4,
      color: { dark: '#000000', light: '#ffffff' },
    });
  let svg: string;
  try {
    svg = await svgOf('M');
  } catch {
    svg = await svgOf('L');
  }
  return { payload, ...(url !== undefined ? { url } : {}), svg };
}

/** What {@link ReceiptFactsLog.noteSubmit} needs of a request: the ServiceRequest of src/flows/effects.ts fits. */
export interface SubmittedRequest {
  readonly cardRef?: string;
  readonly original?: { readonly transactionId: string };
  readonly dcc?: { readonly indicator: '1'; readonly offer: DccOfferSummary } | { readonly indicator: '3' };
}

/**
 * The host's memory of recent transactions for their receipts: the card's receipt view and the accepted offer, keyed
 * by transactionId, noted when a request is answered and read when the machine issues the receipt. A follow-on
 * (capture, refund) inherits what its original had. Bounded: only the last `capacity` transactions are kept.
 */
export class ReceiptFactsLog {
  private readonly facts = new Map<string, ReceiptFacts>();

  constructor(private readonly capacity = 64) {}

  /**
   * Notes an answered request. `read` is the held card read of `request.cardRef` (CardStore.get(ref)?.read) when the
   * host still holds it; only its receipt view is kept, never the read itself.
   */
  noteSubmit(
    request: SubmittedRequest,
    outcome: { readonly transactionId: string; readonly approvalCode?: string },
    read?: CardRead,
  ): void {
    const inherited = request.original ? this.facts.get(request.original.transactionId) : undefined;
    const card = read ? receiptCardOf(read) : inherited?.card;
    const conversion = request.dcc?.indicator === '1' ? request.dcc.offer : inherited?.conversion;
    this.facts.delete(outcome.transactionId);
    this.facts.set(outcome.transactionId, {
      ...(card ? { card } : {}),
      ...(conversion ? { conversion } : {}),
      ...(outcome.approvalCode ? { approvalCode: outcome.approvalCode } : {}),
    });
    while (this.facts.size > this.capacity) {
      const oldest = this.facts.keys().next().value;
      if (oldest === undefined) break;
      this.facts.delete(oldest);
    }
  }

  /** What is known of a transaction; empty when nothing was noted. */
  factsFor(transactionId: string): ReceiptFacts {
    return this.facts.get(transactionId) ?? {};
  }
}
