/**
 * Field validation of a card-present original (spec 001, Card-present parking; reference/gateway.md §3): what a
 * parking authorization, pre-authorization, sale, account verification and standalone credit carry about the
 * terminal, the card read and the EMV tags.
 */
import { currencyByAlpha } from '../../money/index.js';
import { cardTypeOfPan, luhnValid, readTrackData } from '../card.js';
import { checkEmvTags, type DecodedTag, type EmvContext } from '../emv-rules.js';
import type { FieldReader } from '../fields.js';
import type { ApiCall } from '../service-types.js';
import { EMV_TAGS, readEmvTags, refuseNeverSendTags } from './emv-tags.js';
import { refusal } from './refusal.js';

/** The entry modes of the parking section. */
export const ENTRY_MODES = ['contact', 'contactless', 'swiped', 'keyed', 'msd'];

/*
 * The accepted values of the card-present fields, made once (not on every request), and the 9C values each service
 * expects.
 */
const TERMINAL_CAPABILITIES = ['1', '2', '3', '4', '5'];
const PIN_CAPABILITIES = ['0', '1', '2', '4', '5', '6', '7', '8', '9', '10', '11', '12'];
const COMMERCE_INDICATORS = ['retail'];
const AUTH_INDICATORS = ['0', '1'];
const DEDICATED_HARDWARE = ['0', '1'];
const PURCHASE_TYPES = ['00'];
const REFUND_TYPES = ['20'];

/** The card-present services that carry a card read. */
export type CardPresentService = 'authorization' | 'pre-authorization' | 'sale' | 'verification' | 'credit';

/** What a card-present request says about the card read. */
export interface CardRead {
  pan?: string;
  /** `YYMM`. */
  expiry?: string;
  cardType?: '001' | '002';
  entryMode?: string;
  emv?: DecodedTag[];
}

/** Card-present checks shared by payments and credits (spec 001, Card-present parking; gateway.md §3). */
export function validateCardPresent(
  r: FieldReader,
  call: ApiCall,
  service: CardPresentService,
  currency: string | undefined,
  amountMinor: number | undefined,
  now: Date,
): CardRead {
  r.text('clientReferenceInformation.code', true);
  r.text('clientReferenceInformation.transactionId', true);
  r.text('clientReferenceInformation.comments', true);
  // A credit needs only the certification number of the partner fields.
  r.text('clientReferenceInformation.partner.developerId', service !== 'credit');
  r.text('clientReferenceInformation.partner.solutionId', service !== 'credit');
  r.text('clientReferenceInformation.partner.thirdPartyCertificationNumber', true);
  r.dateTimeDigits('merchantInformation.transactionLocalDateTime', true);
  const typeText = r.text('paymentInformation.card.type', true);
  let cardType: '001' | '002' | undefined;
  if (typeText !== undefined) {
    if (typeText === '001' || typeText === '002') cardType = typeText;
    else
      throw refusal(
        now,
        'CARD_TYPE_NOT_ACCEPTED',
        'parking accepts card types 001 and 002 only',
        'paymentInformation.card.type',
      );
  }
  const entryMode = r.oneOf('pointOfSaleInformation.entryMode', ENTRY_MODES, true);
  const catLevel = r.text('pointOfSaleInformation.catLevel', service !== 'credit', true);
  // Spec 001: parking is unattended (2) or attended mobile (6).
  if (catLevel !== undefined && catLevel !== '2' && catLevel !== '6')
    r.invalid(
      'pointOfSaleInformation.catLevel',
      'parking catLevel must be 2 (unattended) or 6 (attended mobile)',
    );
  const capability = r.oneOf('pointOfSaleInformation.terminalCapability', TERMINAL_CAPABILITIES, true, true);
  const emvRead = entryMode === 'contact' || entryMode === 'contactless';
  if (emvRead && capability !== undefined && capability !== '4' && capability !== '5')
    r.invalid('pointOfSaleInformation.terminalCapability', 'an EMV read needs terminalCapability 4 or 5');
  // gateway.md §3: 4 is a contact chip terminal, 5 a contactless one; a tap (EMV or magnetic-stripe mode) was read by
  // a contactless terminal, so it says 5.
  else if (
    (entryMode === 'contactless' || entryMode === 'msd') &&
    capability !== undefined &&
    capability !== '5'
  )
    r.invalid('pointOfSaleInformation.terminalCapability', `a ${entryMode} read needs terminalCapability 5`);
  r.oneOf('pointOfSaleInformation.terminalPinCapability', PIN_CAPABILITIES, true, true);
  r.oneOf('processingInformation.commerceIndicator', COMMERCE_INDICATORS, true);
  if (service !== 'credit') {
    const authIndicator = r.oneOf(
      'processingInformation.authorizationOptions.authIndicator',
      AUTH_INDICATORS,
      true,
      true,
    );
    // Spec 001's required fields list `0` for the sale and the pre-authorization alike (the unattended sale: "same
    // idea" but for catLevel); `1`, a final authorization (gateway.md §3), is no parking request.
    if (authIndicator === '1')
      r.invalid(
        'processingInformation.authorizationOptions.authIndicator',
        `a parking ${service} has authIndicator 0`,
      );
  }
  if (service === 'sale' && catLevel === '6') {
    r.text('paymentInformation.initiationChannel', true);
    r.text('pointOfSaleInformation.serviceCode', true);
    if (cardType === '002')
      r.oneOf('pointOfSaleInformation.isDedicatedHardwareTerminal', DEDICATED_HARDWARE, true, true);
  }
  const { pan, expiry, serviceCode } = readCardData(r, entryMode, cardType, now);
  readEmvFallback(r, entryMode, serviceCode);
  const emv = emvRead
    ? readChipTags(r, call, service, cardType, currency, amountMinor)
    : r.has('pointOfSaleInformation.emv.tags')
      ? readEmvTags(r, call, false)
      : undefined;
  if (!emvRead) {
    refuseNeverSendTags(r, emv);
    // gateway.md §3: emv.tags carries a chip's data; a stripe (swiped, msd) or a keyed number has none to send.
    if (entryMode !== undefined && r.has(EMV_TAGS))
      r.invalid(EMV_TAGS, `a ${entryMode} read has no chip data: emv.tags is not sent`);
  }
  // A literal of every field (absent ones undefined): a result shaped by conditional spreads gets a hidden class of
  // its own per combination, and every later read of it goes megamorphic.
  return { pan, expiry, cardType, entryMode, emv };
}

/** Card data: track data for stripe and chip reads, the number for keyed entry; the PAN must pass Luhn. */
function readCardData(
  r: FieldReader,
  entryMode: string | undefined,
  cardType: '001' | '002' | undefined,
  now: Date,
): { pan?: string; expiry?: string; serviceCode?: string } {
  let pan: string | undefined;
  let expiry: string | undefined;
  let serviceCode: string | undefined;
  if (entryMode === 'keyed') {
    const number = r.text('paymentInformation.card.number', true);
    const month = r.text('paymentInformation.card.expirationMonth', true);
    const year = r.text('paymentInformation.card.expirationYear', true);
    if (number !== undefined) pan = number;
    if (month !== undefined && year !== undefined) expiry = `${year.slice(-2)}${month.padStart(2, '0')}`;
  } else if (entryMode !== undefined) {
    const track = r.text('pointOfSaleInformation.trackData', true);
    if (track !== undefined) {
      const read = readTrackData(track);
      if (!read) r.invalid('pointOfSaleInformation.trackData', 'trackData holds no track 1 or track 2 data');
      else {
        pan = read.pan;
        expiry = read.expiry;
        serviceCode = read.serviceCode;
      }
    }
  }
  if (pan !== undefined) {
    const field =
      entryMode === 'keyed' ? 'paymentInformation.card.number' : 'pointOfSaleInformation.trackData';
    if (!luhnValid(pan)) throw refusal(now, 'INVALID_CARD', 'the card number fails the Luhn check', field);
    if (cardType !== undefined && cardTypeOfPan(pan) !== cardType)
      r.invalid(
        'paymentInformation.card.type',
        'paymentInformation.card.type does not match the card number',
      );
  }
  return { pan, expiry, serviceCode };
}

const FALLBACK_CONDITIONS = ['1', '2'];

/**
 * An EMV fallback (`pointOfSaleInformation.emv.fallback`, `fallbackCondition`; the public REST API reference): a chip
 * card read by its stripe after its contact chip failed technically (never after a failed tap: the card networks
 * define no contactless fallback, and a request says nothing of an earlier tap, so the terminal keeps that rule, not
 * this check). `fallback` is a boolean; when true, `fallbackCondition` is required (1 or 2), the read is a swipe, and
 * its track's service code says a chip card (2xx or 6xx); a condition without `fallback: true` says a fallback that
 * was not one. The other way round, a chip card swiped is accepted only as a fallback: its chip must be tried first,
 * so a swipe of it without `fallback: true` is refused (MLV prices "fallback or swipe" alike, gateway.md §7, but a swipe
 * is of a stripe-only card).
 */
function readEmvFallback(
  r: FieldReader,
  entryMode: string | undefined,
  serviceCode: string | undefined,
): void {
  const fallback = r.flag('pointOfSaleInformation.emv.fallback');
  const condition = r.oneOf(
    'pointOfSaleInformation.emv.fallbackCondition',
    FALLBACK_CONDITIONS,
    fallback === true,
    true,
  );
  const chipCard = serviceCode !== undefined && /^[26]/.test(serviceCode);
  if (fallback !== true) {
    if (condition !== undefined)
      r.invalid(
        'pointOfSaleInformation.emv.fallbackCondition',
        'emv.fallbackCondition is sent only with emv.fallback true',
      );
    if (entryMode === 'swiped' && chipCard) {
      const message = `a chip card (service code ${serviceCode}) swiped is sent only as an EMV fallback: emv.fallback true`;
      if (fallback === undefined) r.missing('pointOfSaleInformation.emv.fallback', message);
      else r.invalid('pointOfSaleInformation.emv.fallback', message);
    }
    return;
  }
  if (entryMode !== 'swiped')
    r.invalid('pointOfSaleInformation.emv.fallback', 'an EMV fallback is a swiped read (entryMode swiped)');
  else if (serviceCode !== undefined && !chipCard)
    r.invalid(
      'pointOfSaleInformation.emv.fallback',
      'an EMV fallback is a chip card (service code 2xx or 6xx) read by its stripe',
    );
}

/** The tags of a chip read (contact or contactless): required, and checked against the request (emv-rules.ts). */
function readChipTags(
  r: FieldReader,
  call: ApiCall,
  service: CardPresentService,
  cardType: '001' | '002' | undefined,
  currency: string | undefined,
  amountMinor: number | undefined,
): DecodedTag[] | undefined {
  const emv = readEmvTags(r, call, true);
  const has5F34 = emv?.some((t) => t.tag === '5F34') ?? false;
  const csn = r.text('pointOfSaleInformation.emv.cardSequenceNumber', has5F34, true);
  if (emv && cardType) {
    const context: EmvContext = service === 'credit' ? 'refund' : 'authorization';
    const currencyNumeric = currency ? currencyByAlpha(currency)?.numeric : undefined;
    const dcc = r.has('orderInformation.amountDetails.currencyConversion');
    const problems = checkEmvTags(emv, {
      cardType,
      context,
      amountMinor: dcc ? undefined : amountMinor,
      currencyNumeric: dcc ? undefined : currencyNumeric,
      cardSequenceNumber: csn,
      transactionTypes: service === 'credit' ? REFUND_TYPES : PURCHASE_TYPES,
    });
    if (problems.length) r.invalid('pointOfSaleInformation.emv.tags', problems.join('; '));
  }
  return emv;
}
