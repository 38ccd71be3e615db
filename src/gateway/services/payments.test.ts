import { describe, expect, it } from 'vitest';
import { GatewayInvalidRequestError } from '../errors.js';
import { preparePayment } from './payments.js';
import { REQUIRED_FIELDS, valueAt } from './required-fields.js';
import { SERVICE_NAMES, type PointOfSale, type ServiceRequest } from './types.js';

const TAGS_NO_PSN =
  '9F0206000000001250' +
  '9F0306000000000000' +
  '9A03260101' +
  '9C0100' +
  '5F2A020826' +
  '9F1A020826' +
  '9F36020001' +
  '82021980' +
  '8407A0000000031010' +
  '95050000000000' +
  '9F100706010A03A00000' +
  '9F26081122334455667788' +
  '9F270180' +
  '9F3303E0F0C8' +
  '9F34031E0300' +
  '9F370412345678';
const TAGS = `${TAGS_NO_PSN}5F340101`;

const partner = {
  developerId: '12345678',
  solutionId: 'PARKTERM',
  thirdPartyCertificationNumber: 'PT0000000001',
};
const pos: PointOfSale = {
  cardType: '001',
  entryMode: 'contact',
  terminalCapability: 4,
  terminalPinCapability: 0,
  catLevel: 2,
  terminalId: 'PT000001',
  emvTags: TAGS,
  trackData: ';4111111111111111=30121011234567890?',
};
const cp = {
  code: 'ORDER-1',
  partner,
  amountMinor: 1250,
  currency: 'GBP',
  transactionLocalDateTime: '20260101120000',
  pos,
};

/** One valid request per service of spec 001's comments table. */
const SAMPLES: Record<ServiceRequest['service'], ServiceRequest> = {
  avr: { service: 'avr', ...cp },
  preauth: { service: 'preauth', ...cp },
  sale: {
    service: 'sale',
    ...cp,
    pos: {
      ...pos,
      catLevel: 6,
      initiationChannel: '00',
      serviceCode: '201',
      isDedicatedHardwareTerminal: '1',
      cardType: '002',
    },
  },
  incremental: {
    service: 'incremental',
    code: 'ORDER-1',
    partner,
    id: '7000000000000000000001',
    additionalAmountMinor: 200,
    currency: 'GBP',
    transactionLocalDateTime: '20260101130000',
  },
  reversal: {
    service: 'reversal',
    code: 'ORDER-1',
    partner,
    id: '7000000000000000000001',
    authorizedMinor: 1000,
    currency: 'GBP',
  },
  'timeout-reversal': {
    service: 'timeout-reversal',
    code: 'ORDER-1',
    partner,
    originalTransactionId: 'T01JABCDEFGHJKMNPQRSTVWXYZ0',
    amountMinor: 1250,
    currency: 'GBP',
  },
  capture: {
    service: 'capture',
    code: 'ORDER-1',
    partner,
    id: '7000000000000000000001',
    amountMinor: 1250,
    authorizedMinor: 1250,
    currency: 'GBP',
    preauthEntryMode: 'contact',
    emvTags: TAGS,
  },
  'refund-capture': {
    service: 'refund-capture',
    code: 'ORDER-1',
    partner,
    id: '7000000000000000000002',
    amountMinor: 500,
    currency: 'GBP',
  },
  'refund-payment': {
    service: 'refund-payment',
    code: 'ORDER-1',
    partner,
    id: '7000000000000000000003',
    amountMinor: 500,
    currency: 'GBP',
  },
  credit: { service: 'credit', ...cp },
  'void-capture': { service: 'void-capture', code: 'ORDER-1', partner, id: '7000000000000000000002' },
  'void-payment': { service: 'void-payment', code: 'ORDER-1', partner, id: '7000000000000000000003' },
  'void-refund': { service: 'void-refund', code: 'ORDER-1', partner, id: '7000000000000000000004' },
  'void-credit': { service: 'void-credit', code: 'ORDER-1', partner, id: '7000000000000000000005' },
  'timeout-void': {
    service: 'timeout-void',
    code: 'ORDER-1',
    partner,
    originalTransactionId: 'T01JABCDEFGHJKMNPQRSTVWXYZ0',
  },
};

const EXPECTED: Record<
  ServiceRequest['service'],
  { method: string; path: string; comments: string; original: boolean }
> = {
  avr: { method: 'POST', path: '/pts/v2/payments', comments: 'Parking AVR', original: true },
  preauth: { method: 'POST', path: '/pts/v2/payments', comments: 'Parking Auth', original: true },
  sale: { method: 'POST', path: '/pts/v2/payments', comments: 'Parking Sale', original: true },
  incremental: {
    method: 'PATCH',
    path: '/pts/v2/payments/7000000000000000000001',
    comments: 'Parking Incremental Auth',
    original: true,
  },
  reversal: {
    method: 'POST',
    path: '/pts/v2/payments/7000000000000000000001/reversals',
    comments: 'REVERSAL',
    original: false,
  },
  'timeout-reversal': {
    method: 'POST',
    path: '/pts/v2/reversals',
    comments: 'REVERSAL Timeout',
    original: false,
  },
  capture: {
    method: 'POST',
    path: '/pts/v2/payments/7000000000000000000001/captures',
    comments: 'Parking Capture',
    original: true,
  },
  'refund-capture': {
    method: 'POST',
    path: '/pts/v2/captures/7000000000000000000002/refunds',
    comments: 'REFUND Capture',
    original: true,
  },
  'refund-payment': {
    method: 'POST',
    path: '/pts/v2/payments/7000000000000000000003/refunds',
    comments: 'REFUND Payment',
    original: true,
  },
  credit: { method: 'POST', path: '/pts/v2/credits', comments: 'Parking Standalone Credit', original: true },
  'void-capture': {
    method: 'POST',
    path: '/pts/v2/captures/7000000000000000000002/voids',
    comments: 'VOID Capture',
    original: false,
  },
  'void-payment': {
    method: 'POST',
    path: '/pts/v2/payments/7000000000000000000003/voids',
    comments: 'VOID Payment',
    original: false,
  },
  'void-refund': {
    method: 'POST',
    path: '/pts/v2/refunds/7000000000000000000004/voids',
    comments: 'VOID Refund',
    original: false,
  },
  'void-credit': {
    method: 'POST',
    path: '/pts/v2/credits/7000000000000000000005/voids',
    comments: 'VOID Credit',
    original: false,
  },
  'timeout-void': { method: 'POST', path: '/pts/v2/voids', comments: 'VOID Timeout', original: false },
};

const bodyOf = (r: ServiceRequest): Record<string, unknown> =>
  JSON.parse(preparePayment(r, { newTransactionId: () => 'TNEWID' }).body.toString('utf8')) as Record<
    string,
    unknown
  >;

function missing(r: ServiceRequest): GatewayInvalidRequestError {
  try {
    preparePayment(r);
  } catch (e) {
    if (e instanceof GatewayInvalidRequestError) return e;
    throw e;
  }
  throw new Error('no error thrown');
}

describe('preparePayment', () => {
  it.each(SERVICE_NAMES)('%s: path, method, comments and every applicable required field', (service) => {
    const request = SAMPLES[service];
    const prepared = preparePayment(request, { newTransactionId: () => 'TNEWID' });
    const expected = EXPECTED[service];
    expect(prepared.method).toBe(expected.method);
    expect(prepared.path).toBe(expected.path);
    expect(prepared.comments).toBe(expected.comments);
    expect(prepared.moneyMoving).toBe(true);
    const body = bodyOf(request);
    expect(valueAt(body, 'clientReferenceInformation.comments')).toBe(expected.comments);
    if (expected.original) {
      expect(prepared.transactionId).toBe('TNEWID');
      expect(valueAt(body, 'clientReferenceInformation.transactionId')).toBe('TNEWID');
    } else {
      expect(prepared.transactionId).toBeUndefined();
    }
    for (const row of REQUIRED_FIELDS[service]) {
      if (row.applies !== undefined) continue;
      expect(valueAt(body, row.field), row.field).not.toBeUndefined();
    }
  });

  it('writes the pre-authorization exactly as spec 001 lists it', () => {
    expect(bodyOf(SAMPLES.preauth)).toEqual({
      clientReferenceInformation: {
        code: 'ORDER-1',
        comments: 'Parking Auth',
        transactionId: 'TNEWID',
        partner,
      },
      processingInformation: { commerceIndicator: 'retail', authorizationOptions: { authIndicator: '0' } },
      paymentInformation: { card: { type: '001' } },
      orderInformation: { amountDetails: { totalAmount: '12.50', currency: 'GBP' } },
      pointOfSaleInformation: {
        entryMode: 'contact',
        terminalCapability: 4,
        terminalPinCapability: 0,
        catLevel: 2,
        terminalId: 'PT000001',
        trackData: pos.trackData,
        emv: { tags: TAGS, cardSequenceNumber: '01' },
      },
      merchantInformation: { transactionLocalDateTime: '20260101120000' },
    });
  });

  it('writes the attended sale with catLevel 6, capture, initiation channel, service code and hardware flag', () => {
    const body = bodyOf(SAMPLES.sale);
    expect(valueAt(body, 'pointOfSaleInformation.catLevel')).toBe(6);
    expect(valueAt(body, 'processingInformation.capture')).toBe(true);
    expect(valueAt(body, 'processingInformation.authorizationOptions.authIndicator')).toBe('0');
    expect(valueAt(body, 'paymentInformation.initiationChannel')).toBe('00');
    expect(valueAt(body, 'pointOfSaleInformation.serviceCode')).toBe('201');
    expect(valueAt(body, 'pointOfSaleInformation.isDedicatedHardwareTerminal')).toBe('1');
  });

  it('refuses an attended sale without initiation channel, service code or (card type 002) hardware flag', () => {
    const sale = SAMPLES.sale as Extract<ServiceRequest, { service: 'sale' }>;
    const { initiationChannel: _i, serviceCode: _s, isDedicatedHardwareTerminal: _h, ...bare } = sale.pos;
    const e = missing({ ...sale, pos: bare });
    expect(e.code).toBe('GW_INVALID_REQUEST');
    expect(e.details.map((d) => d.field)).toEqual([
      'paymentInformation.initiationChannel',
      'pointOfSaleInformation.serviceCode',
      'pointOfSaleInformation.isDedicatedHardwareTerminal',
    ]);
  });

  it('sends an unattended sale with catLevel 2 without attended-only fields', () => {
    const body = bodyOf({ service: 'sale', ...cp });
    expect(valueAt(body, 'pointOfSaleInformation.catLevel')).toBe(2);
    expect(valueAt(body, 'paymentInformation.initiationChannel')).toBeUndefined();
  });

  it('refuses a sale or pre-authorization without catLevel', () => {
    const { catLevel: _c, ...noCat } = pos;
    expect(missing({ service: 'sale', ...cp, pos: noCat }).field).toBe('pointOfSaleInformation.catLevel');
    expect(missing({ service: 'preauth', ...cp, pos: noCat }).field).toBe('pointOfSaleInformation.catLevel');
  });

  it('refuses EMV entry without tags and any entry without track data, naming the field', () => {
    const { emvTags: _t, ...noTags } = pos;
    expect(missing({ service: 'preauth', ...cp, pos: noTags }).field).toBe('pointOfSaleInformation.emv.tags');
    const { trackData: _d, ...noTrack } = pos;
    expect(missing({ service: 'preauth', ...cp, pos: noTrack }).field).toBe(
      'pointOfSaleInformation.trackData',
    );
    expect(missing({ service: 'preauth', ...cp, code: '' }).field).toBe('clientReferenceInformation.code');
    expect(missing({ service: 'preauth', ...cp, partner: { ...partner, solutionId: '' } }).field).toBe(
      'clientReferenceInformation.partner.solutionId',
    );
  });

  it('takes the card sequence number from tag 5F34 and omits it when the chip has none', () => {
    expect(valueAt(bodyOf(SAMPLES.preauth), 'pointOfSaleInformation.emv.cardSequenceNumber')).toBe('01');
    const body = bodyOf({ service: 'preauth', ...cp, pos: { ...pos, emvTags: TAGS_NO_PSN } });
    expect(valueAt(body, 'pointOfSaleInformation.emv.cardSequenceNumber')).toBeUndefined();
  });

  it('refuses a card sequence number that is not the value of tag 5F34 in the tags sent', () => {
    // gateway.md §3: emv.cardSequenceNumber is the value of tag 5F34.
    const field = 'pointOfSaleInformation.emv.cardSequenceNumber';
    expect(missing({ service: 'preauth', ...cp, pos: { ...pos, cardSequenceNumber: '02' } }).field).toBe(
      field,
    );
    expect(
      missing({ service: 'preauth', ...cp, pos: { ...pos, emvTags: TAGS_NO_PSN, cardSequenceNumber: '01' } })
        .field,
    ).toBe(field);
    const swiped: PointOfSale = { ...pos, entryMode: 'swiped', emvTags: undefined, cardSequenceNumber: '01' };
    expect(missing({ service: 'preauth', ...cp, pos: swiped }).field).toBe(field);
    // The same number written with or without its leading zero is the same number.
    for (const csn of ['01', '1', '001'])
      expect(
        valueAt(bodyOf({ service: 'preauth', ...cp, pos: { ...pos, cardSequenceNumber: csn } }), field),
      ).toBe(csn);
  });

  it.each(['57', '5A', '5F20', '5F24', '56', '99', '9F0B', '9F1F', '9F20'])(
    'refuses EMV tags carrying never-send tag %s',
    (tag) => {
      const value = '0102030405';
      const tlv = `${TAGS}${tag}05${value}`;
      const e = missing({ service: 'preauth', ...cp, pos: { ...pos, emvTags: tlv } });
      expect(e.field).toBe('pointOfSaleInformation.emv.tags');
      expect(e.message).toContain(tag);
      expect(e.message).not.toContain(value);
    },
  );

  it('refuses a terminalCapability that cannot have read the card the way entryMode says', () => {
    // gateway.md §3: 4 contact chip, 5 contactless; EMV requires 4 or 5. A tap, EMV or magnetic-stripe mode, can only
    // have been read by a contactless terminal (5); a chip read by a chip terminal (4 or 5).
    const swiped = { ...pos, entryMode: 'swiped' as const, emvTags: undefined };
    const capability = (p: PointOfSale): string => missing({ service: 'preauth', ...cp, pos: p }).field;
    expect(capability({ ...pos, terminalCapability: 2 })).toBe('pointOfSaleInformation.terminalCapability');
    expect(capability({ ...pos, entryMode: 'contactless', terminalCapability: 4 })).toBe(
      'pointOfSaleInformation.terminalCapability',
    );
    expect(capability({ ...swiped, entryMode: 'msd', terminalCapability: 4 })).toBe(
      'pointOfSaleInformation.terminalCapability',
    );
    expect(capability({ ...swiped, entryMode: 'msd', terminalCapability: 2 })).toBe(
      'pointOfSaleInformation.terminalCapability',
    );
    // What a terminal of that capability reads is accepted.
    for (const ok of [
      { ...pos, terminalCapability: 4 },
      { ...pos, terminalCapability: 5 },
      { ...pos, entryMode: 'contactless', terminalCapability: 5 },
      { ...swiped, entryMode: 'msd', terminalCapability: 5 },
      { ...swiped, terminalCapability: 2 },
      { ...swiped, terminalCapability: 5 },
    ] satisfies PointOfSale[])
      expect(() => preparePayment({ service: 'preauth', ...cp, pos: ok })).not.toThrow();
  });

  it('says an EMV fallback in emv.fallback and emv.fallbackCondition, and only of a swipe without chip data', () => {
    const fallback: PointOfSale = {
      ...pos,
      entryMode: 'swiped',
      emvTags: undefined,
      trackData: ';4111111111111111=30122011234567890?',
      emvFallback: { condition: 1 },
    };
    for (const service of ['sale', 'preauth'] as const) {
      const body = bodyOf({ service, ...cp, pos: fallback });
      expect(valueAt(body, 'pointOfSaleInformation.emv')).toEqual({ fallback: true, fallbackCondition: 1 });
      expect(valueAt(body, 'pointOfSaleInformation.entryMode')).toBe('swiped');
    }
    // A plain swipe says nothing of a fallback.
    const { emvFallback: _none, ...plain } = fallback;
    expect(
      valueAt(bodyOf({ service: 'sale', ...cp, pos: plain }), 'pointOfSaleInformation.emv'),
    ).toBeUndefined();
    expect(missing({ service: 'sale', ...cp, pos: { ...pos, emvFallback: { condition: 1 } } }).field).toBe(
      'pointOfSaleInformation.emv.fallback',
    );
    expect(
      missing({ service: 'sale', ...cp, pos: { ...fallback, emvTags: TAGS, cardSequenceNumber: undefined } })
        .field,
    ).toBe('pointOfSaleInformation.emv.tags');
    expect(
      missing({ service: 'sale', ...cp, pos: { ...fallback, emvFallback: { condition: 3 as 1 } } }).field,
    ).toBe('pointOfSaleInformation.emv.fallbackCondition');
  });

  it('refuses EMV tags that carry one tag twice, naming the tag and never a value', () => {
    // Two cryptograms, two PAN sequence numbers: which one the gateway reads is not ours to guess, and the required-tag
    // check and the cardSequenceNumber taken from 5F34 would each have read just one of them.
    const secondCryptogram = '9F2608AABBCCDDEEFF0011';
    const e = missing({ service: 'preauth', ...cp, pos: { ...pos, emvTags: `${TAGS}${secondCryptogram}` } });
    expect(e.field).toBe('pointOfSaleInformation.emv.tags');
    expect(e.reason).toBe('INVALID_DATA');
    expect(e.message).toContain('9F26');
    expect(e.message).not.toContain('AABBCCDDEEFF0011');
    const twoPsn = missing({ service: 'preauth', ...cp, pos: { ...pos, emvTags: `${TAGS}5F340102` } });
    expect(twoPsn.message).toContain('5F34');
    // Inside a template too: the list is read flat.
    const nested = missing({
      service: 'preauth',
      ...cp,
      pos: { ...pos, emvTags: `${TAGS}7005${'5F340101'}00` },
    });
    expect(nested.message).toContain('5F34');
  });

  it('refuses EMV tags that are not valid BER-TLV', () => {
    expect(missing({ service: 'preauth', ...cp, pos: { ...pos, emvTags: '9F0206000000' } }).reason).toBe(
      'INVALID_DATA',
    );
    expect(missing({ service: 'preauth', ...cp, pos: { ...pos, emvTags: 'XYZ' } }).reason).toBe(
      'INVALID_DATA',
    );
  });

  it('names no byte of the tags it cannot decode, in its message or its cause (a cause is logged)', () => {
    // 5A (a card number) whose length is cut short: the read, out of step, takes its digits for a tag (11) and a
    // length (11), which the decoder's message names.
    const error = missing({ service: 'preauth', ...cp, pos: { ...pos, emvTags: `${TAGS}5A0141111111` } });
    const told = [error.message, String((error.cause as Error | undefined)?.message ?? '')].join(' ');
    expect(told).not.toMatch(/\btag [0-9A-F]{2}|declares/);
    expect(error.message).toMatch(/at offset \d+/);
  });

  it('writes AVR as a zero-amount authorization', () => {
    expect(valueAt(bodyOf(SAMPLES.avr), 'orderInformation.amountDetails.totalAmount')).toBe('0.00');
  });

  it('uses the configured pre-authorization comments', () => {
    expect(preparePayment(SAMPLES.preauth, { preauthComments: 'Parking Authorization' }).comments).toBe(
      'Parking Authorization',
    );
  });

  it('chooses Parking Capture Less Than Auth below the authorized amount and refuses a capture above it', () => {
    const capture = SAMPLES.capture as Extract<ServiceRequest, { service: 'capture' }>;
    expect(preparePayment({ ...capture, amountMinor: 900 }).comments).toBe('Parking Capture Less Than Auth');
    expect(missing({ ...capture, amountMinor: 1300 }).field).toBe(
      'orderInformation.amountDetails.totalAmount',
    );
  });

  it('sends EMV tags on a capture only after a contact pre-authorization, with 95, 9F10 and 9F26', () => {
    const capture = SAMPLES.capture as Extract<ServiceRequest, { service: 'capture' }>;
    expect(valueAt(bodyOf(capture), 'pointOfSaleInformation.emv.tags')).toBe(TAGS);
    expect(
      valueAt(bodyOf({ ...capture, preauthEntryMode: 'contactless' }), 'pointOfSaleInformation'),
    ).toBeUndefined();
    const { emvTags: _e, ...noTags } = capture;
    expect(missing(noTags).field).toBe('pointOfSaleInformation.emv.tags');
    expect(missing({ ...capture, emvTags: '9F36020001' }).message).toContain('95, 9F10, 9F26');
  });

  it('reverses the authorized amount and sends the requested amount in a timeout reversal keyed by transactionId', () => {
    expect(valueAt(bodyOf(SAMPLES.reversal), 'reversalInformation.amountDetails.totalAmount')).toBe('10.00');
    const tr = bodyOf(SAMPLES['timeout-reversal']);
    expect(valueAt(tr, 'clientReferenceInformation.transactionId')).toBe('T01JABCDEFGHJKMNPQRSTVWXYZ0');
    expect(valueAt(tr, 'reversalInformation.amountDetails.totalAmount')).toBe('12.50');
    expect(preparePayment(SAMPLES['timeout-reversal']).referencedTransactionId).toBe(
      'T01JABCDEFGHJKMNPQRSTVWXYZ0',
    );
  });

  it('builds the reversal of an approved account verification at 0.00 (its authorized amount), and refuses a negative one', () => {
    // The terminal reverses an approved verification its customer cancelled (COMPENSATION): for what it authorized.
    const avr = { ...SAMPLES.reversal, authorizedMinor: 0 } as ServiceRequest;
    expect(valueAt(bodyOf(avr), 'reversalInformation.amountDetails.totalAmount')).toBe('0.00');
    expect(() => preparePayment({ ...avr, authorizedMinor: -1 } as ServiceRequest)).toThrow(
      GatewayInvalidRequestError,
    );
  });

  it('builds the timeout reversal of a zero-amount account verification at 0.00, and refuses a negative amount', () => {
    const avr = { ...SAMPLES['timeout-reversal'], amountMinor: 0 } as ServiceRequest;
    expect(valueAt(bodyOf(avr), 'reversalInformation.amountDetails.totalAmount')).toBe('0.00');
    expect(() => preparePayment({ ...avr, amountMinor: -1 } as ServiceRequest)).toThrow(
      GatewayInvalidRequestError,
    );
  });

  it('writes the incremental authorization with additionalAmount and storedCredentialUsed', () => {
    const body = bodyOf(SAMPLES.incremental);
    expect(valueAt(body, 'orderInformation.amountDetails.additionalAmount')).toBe('2.00');
    expect(valueAt(body, 'processingInformation.authorizationOptions.initiator.storedCredentialUsed')).toBe(
      true,
    );
  });

  it('refuses Form Factor Indicator 9F6E on a card type 002 credit', () => {
    const e = missing({
      service: 'credit',
      ...cp,
      pos: { ...pos, cardType: '002', emvTags: `${TAGS}9F6E0420700000` },
    });
    expect(e.message).toContain('9F6E');
  });

  it('writes DCC family A with the billing amount and family B with the foreign amount', () => {
    const dcc = {
      indicator: '1' as const,
      billingAmountMinor: 1467,
      billingCurrency: 'EUR',
      exchangeRate: '1.1734',
      exchangeRateTimeStamp: '20260101115900',
    };
    const a = bodyOf({ service: 'preauth', ...cp, dcc: { ...dcc, family: 'A', offerId: 'O1' } });
    expect(valueAt(a, 'orderInformation.amountDetails')).toEqual({
      totalAmount: '14.67',
      currency: 'EUR',
      originalAmount: '12.50',
      originalCurrency: 'GBP',
      exchangeRate: '1.1734',
      exchangeRateTimeStamp: '20260101115900',
      currencyConversion: { indicator: '1', id: 'O1' },
    });
    const b = bodyOf({ service: 'sale', ...cp, dcc: { ...dcc, family: 'B' } });
    expect(valueAt(b, 'orderInformation.amountDetails.totalAmount')).toBe('12.50');
    expect(valueAt(b, 'orderInformation.amountDetails.foreignAmount')).toBe('14.67');
    expect(valueAt(b, 'orderInformation.amountDetails.foreignCurrency')).toBe('EUR');
  });

  it('refuses a DCC rate the terminal cannot keep: not a decimal, or more than 15 digits after the point', () => {
    const dcc = {
      indicator: '1' as const,
      billingAmountMinor: 1467,
      billingCurrency: 'EUR',
      exchangeRateTimeStamp: '20260101115900',
      family: 'A' as const,
      offerId: 'O1',
    };
    for (const exchangeRate of ['1e-7', '1.1234567890123456', '-1.2', '1.'])
      expect(missing({ service: 'preauth', ...cp, dcc: { ...dcc, exchangeRate } }).field, exchangeRate).toBe(
        'orderInformation.amountDetails.exchangeRate',
      );
  });

  describe('DCC follow-ons repeat the family field set at the authorization rate (spec 001, DCC capture and refund)', () => {
    const terms = {
      indicator: '1' as const,
      billingAmountMinor: 587,
      billingCurrency: 'EUR',
      exchangeRate: '1.1734',
      exchangeRateTimeStamp: '20260101115900',
      offerId: 'O1',
      reconciliationId: 'R1',
    };
    const FAMILY_A = {
      totalAmount: '5.87',
      currency: 'EUR',
      originalAmount: '5.00',
      originalCurrency: 'GBP',
      exchangeRate: '1.1734',
      exchangeRateTimeStamp: '20260101115900',
      currencyConversion: { indicator: '1', id: 'O1', reconciliationId: 'R1' },
    };
    const FAMILY_B = {
      totalAmount: '5.00',
      currency: 'GBP',
      foreignAmount: '5.87',
      foreignCurrency: 'EUR',
      exchangeRate: '1.1734',
      exchangeRateTimeStamp: '20260101115900',
      currencyConversion: { indicator: '1' },
    };

    it.each([
      ['refund-capture', 'A', 'REFUND Capture', '/pts/v2/captures/C1/refunds', FAMILY_A],
      ['refund-capture', 'B', 'REFUND Capture', '/pts/v2/captures/C1/refunds', FAMILY_B],
      ['refund-payment', 'A', 'REFUND Payment', '/pts/v2/payments/C1/refunds', FAMILY_A],
      ['refund-payment', 'B', 'REFUND Payment', '/pts/v2/payments/C1/refunds', FAMILY_B],
    ] as const)('%s, family %s: the exact message', (service, family, comments, path, amountDetails) => {
      const request: ServiceRequest = {
        service,
        code: 'R-1',
        partner,
        id: 'C1',
        amountMinor: 500,
        currency: 'GBP',
        dcc: { ...terms, family },
      };
      const prepared = preparePayment(request, { newTransactionId: () => 'TNEWID' });
      expect(prepared.path).toBe(path);
      expect(JSON.parse(prepared.body.toString('utf8'))).toEqual({
        clientReferenceInformation: { code: 'R-1', comments, transactionId: 'TNEWID', partner },
        orderInformation: { amountDetails },
      });
      // The journal records the amount in the currency the gateway books it in.
      expect([prepared.amountMinor, prepared.currency]).toEqual(family === 'A' ? [587, 'EUR'] : [500, 'GBP']);
    });

    it.each([
      ['A', FAMILY_A],
      ['B', FAMILY_B],
    ] as const)('capture, family %s: the same field set', (family, amountDetails) => {
      const body = bodyOf({
        service: 'capture',
        code: 'C-1',
        partner,
        id: 'A1',
        amountMinor: 500,
        authorizedMinor: 1250,
        currency: 'GBP',
        preauthEntryMode: 'contactless',
        dcc: { ...terms, family },
      });
      expect(valueAt(body, 'orderInformation.amountDetails')).toEqual(amountDetails);
    });
  });

  it('refuses amounts that are not integer minor units, unknown currencies and ids that could alter the path', () => {
    expect(missing({ service: 'preauth', ...cp, amountMinor: 12.5 }).field).toBe(
      'orderInformation.amountDetails.totalAmount',
    );
    expect(missing({ service: 'preauth', ...cp, currency: 'XXX' }).field).toBe(
      'orderInformation.amountDetails.currency',
    );
    expect(missing({ service: 'void-payment', code: 'c', partner, id: '../credits/1' }).field).toBe('id');
    expect(missing({ service: 'preauth', ...cp, transactionLocalDateTime: '2026-01-01' }).field).toBe(
      'merchantInformation.transactionLocalDateTime',
    );
  });
});
