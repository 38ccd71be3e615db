/**
 * Request bodies the sandbox accepts, one per parking service, built from spec 001 and reference/gateway.md §3, §7.
 * They document the strict field set by example (README) and feed the sandbox's tests and benchmark.
 */
import { currencyByAlpha, toDecimalString } from '../money/index.js';

/**
 * Test card data (reference/gateway.md §6): card type, the track 2 equivalent of the chip card (service code 201), and
 * the track 2 of the same number as a magnetic-stripe-only card (service code 101), which is what a plain swipe reads:
 * a chip card is swiped only as an EMV fallback.
 */
export const SAMPLE_CARDS = {
  visa: {
    pan: '4111111111111111',
    type: '001' as const,
    track2: ';4111111111111111=30122011234567890?',
    stripeTrack2: ';4111111111111111=30121011234567890?',
  },
  mastercard: {
    pan: '5555555555554444',
    type: '002' as const,
    track2: ';5555555555554444=30122011234567890?',
    stripeTrack2: ';5555555555554444=30121011234567890?',
  },
};

function tlv(tag: string, valueHex: string): string {
  return `${tag}${(valueHex.length / 2).toString(16).padStart(2, '0').toUpperCase()}${valueHex}`;
}

/** An EMV tag set with every mandatory tag of both networks (spec 001 table) for `amountMinor` in `currency`. */
export function sampleEmvTags(
  amountMinor: number,
  currency: string,
  options: { transactionType?: string; withPsn?: boolean } = {},
): string {
  const numeric = currencyByAlpha(currency)?.numeric ?? '978';
  return [
    tlv('9A', '261122'),
    tlv('9C', options.transactionType ?? '00'),
    tlv('5F2A', numeric.padStart(4, '0')),
    tlv('9F1A', '0276'),
    tlv('9F02', String(amountMinor).padStart(12, '0')),
    tlv('9F03', '000000000000'),
    ...(options.withPsn ? [tlv('5F34', '01')] : []),
    tlv('9F36', '0042'),
    tlv('82', '1980'),
    tlv('84', 'A0000000031010'),
    tlv('95', '0000008000'),
    tlv('9F10', '06010A03A00000'),
    tlv('9F26', '1122334455667788'),
    tlv('9F27', '80'),
    tlv('9F33', 'E0F8C8'),
    tlv('9F34', '1F0302'),
    tlv('9F37', 'A1B2C3D4'),
  ].join('');
}

/** Options of the sample builders. */
export interface SampleOptions {
  amountMinor: number;
  currency?: string;
  transactionId: string;
  card?: keyof typeof SAMPLE_CARDS;
  entryMode?: 'contact' | 'contactless' | 'swiped';
  catLevel?: '2' | '6';
}

const PARTNER = {
  developerId: 'PT000001',
  solutionId: 'PTSOL001',
  thirdPartyCertificationNumber: 'PTCERT000001',
};

/** A card-present pre-authorization (`Parking Authorization`), or a sale with `sale: true`. */
export function samplePayment(o: SampleOptions & { sale?: boolean }): Record<string, unknown> {
  const currency = o.currency ?? 'EUR';
  const card = SAMPLE_CARDS[o.card ?? 'visa'];
  const entryMode = o.entryMode ?? 'contactless';
  const emv = entryMode !== 'swiped';
  const catLevel = o.catLevel ?? '2';
  const verification = o.amountMinor === 0;
  return {
    clientReferenceInformation: {
      code: `order-${o.transactionId}`,
      transactionId: o.transactionId,
      comments: o.sale ? 'Parking Sale' : verification ? 'Parking AVR' : 'Parking Authorization',
      partner: { ...PARTNER },
    },
    merchantInformation: { transactionLocalDateTime: '20261122101500' },
    orderInformation: { amountDetails: { totalAmount: toDecimalString(o.amountMinor, currency), currency } },
    paymentInformation: {
      card: { type: card.type },
      ...(o.sale && catLevel === '6' ? { initiationChannel: '00' } : {}),
    },
    pointOfSaleInformation: {
      entryMode,
      catLevel,
      terminalCapability: emv ? '5' : '2',
      terminalPinCapability: '0',
      trackData: emv ? card.track2 : card.stripeTrack2,
      ...(o.sale && catLevel === '6'
        ? {
            serviceCode: emv ? '201' : '101',
            ...(card.type === '002' ? { isDedicatedHardwareTerminal: '1' } : {}),
          }
        : {}),
      ...(emv ? { emv: { tags: sampleEmvTags(o.amountMinor, currency) } } : {}),
    },
    processingInformation: {
      commerceIndicator: 'retail',
      authorizationOptions: { authIndicator: '0' },
      ...(o.sale ? { capture: true } : {}),
    },
  };
}

/** A capture of `amountMinor` on an authorization of `authorizedMinor`. */
export function sampleCapture(
  amountMinor: number,
  authorizedMinor: number,
  transactionId: string,
  currency = 'EUR',
): Record<string, unknown> {
  return {
    clientReferenceInformation: {
      code: `capture-${transactionId}`,
      transactionId,
      comments: amountMinor < authorizedMinor ? 'Parking Capture Less Than Auth' : 'Parking Capture',
      partner: { ...PARTNER },
    },
    orderInformation: { amountDetails: { totalAmount: toDecimalString(amountMinor, currency), currency } },
  };
}

/** A reversal of the full authorized amount; EMV tags included as the original carried them. */
export function sampleReversal(
  authorizedMinor: number,
  currency = 'EUR',
  emvTags?: string,
): Record<string, unknown> {
  return {
    clientReferenceInformation: { code: 'reversal', comments: 'REVERSAL', partner: { ...PARTNER } },
    orderInformation: { amountDetails: { currency } },
    reversalInformation: {
      amountDetails: { totalAmount: toDecimalString(authorizedMinor, currency) },
      reason: 'cancelled',
    },
    ...(emvTags !== undefined ? { pointOfSaleInformation: { emv: { tags: emvTags } } } : {}),
  };
}

/** A timeout reversal keyed by the original's transactionId with the amount that was requested. */
export function sampleTimeoutReversal(
  originalTransactionId: string,
  requestedMinor: number,
  currency = 'EUR',
): Record<string, unknown> {
  return {
    clientReferenceInformation: {
      transactionId: originalTransactionId,
      comments: 'REVERSAL Timeout',
      partner: { ...PARTNER },
    },
    orderInformation: { amountDetails: { currency } },
    reversalInformation: { amountDetails: { totalAmount: toDecimalString(requestedMinor, currency) } },
  };
}

/** A refund of a capture (`REFUND Capture`) or of a sale (`REFUND Payment`). */
export function sampleRefund(
  amountMinor: number,
  transactionId: string,
  of: 'capture' | 'sale',
  currency = 'EUR',
): Record<string, unknown> {
  return {
    clientReferenceInformation: {
      code: `refund-${transactionId}`,
      transactionId,
      comments: of === 'capture' ? 'REFUND Capture' : 'REFUND Payment',
      partner: { ...PARTNER },
    },
    orderInformation: { amountDetails: { totalAmount: toDecimalString(amountMinor, currency), currency } },
  };
}
