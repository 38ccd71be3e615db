import { describe, expect, it } from 'vitest';
import { FieldReader } from '../fields.js';
import { sampleEmvTags, samplePayment } from '../sample-requests.js';
import { validatePayment, type PaymentRequest } from './authorization.js';
import { callOf, DCC_TERMS, NOW, refusalOf } from './testing/fixtures.js';

function validate(body: Record<string, unknown>, dcc = false): PaymentRequest {
  return validatePayment(new FieldReader(body, NOW), callOf(body), NOW, () => (dcc ? DCC_TERMS : undefined));
}

describe('validatePayment (POST /pts/v2/payments)', () => {
  it('accepts a contactless parking pre-authorization and reads the card', () => {
    const p = validate(samplePayment({ amountMinor: 2000, transactionId: 'tx-1' }));
    expect(p).toMatchObject({
      service: 'authorization',
      currency: 'EUR',
      totalMinor: 2000,
      cardPresent: true,
      pan: '4111111111111111',
      cardType: '001',
      entryMode: 'contactless',
    });
    expect(p.emv?.length).toBeGreaterThan(0);
  });

  it('tells a sale and an account verification from the body', () => {
    expect(validate(samplePayment({ amountMinor: 2000, transactionId: 'tx-2', sale: true })).service).toBe(
      'sale',
    );
    expect(validate(samplePayment({ amountMinor: 0, transactionId: 'tx-3' })).service).toBe('verification');
  });

  it('refuses a card-present request without catLevel, naming the field', () => {
    const body = samplePayment({ amountMinor: 2000, transactionId: 'tx-4' });
    delete (body.pointOfSaleInformation as Record<string, unknown>).catLevel;
    const a = refusalOf(() => validate(body));
    expect(a.httpStatus).toBe(400);
    expect(a.body).toMatchObject({ status: 'INVALID_REQUEST', reason: 'MISSING_FIELD' });
    expect(a.body.details).toEqual([{ field: 'pointOfSaleInformation.catLevel', reason: 'MISSING_FIELD' }]);
  });

  it('accepts an EMV fallback of a chip card swiped, and refuses one that is not a fallback', () => {
    const fallbackSale = (emv: Record<string, unknown>, over: Record<string, unknown> = {}) => {
      const body = samplePayment({
        amountMinor: 960_100,
        transactionId: 'tx-fb',
        sale: true,
        entryMode: 'swiped',
      });
      // A chip card (service code 201): the sample's plain swipe is of a stripe-only card.
      Object.assign(body.pointOfSaleInformation as Record<string, unknown>, {
        trackData: ';4111111111111111=30122011234567890?',
        emv,
        ...over,
      });
      return body;
    };
    expect(validate(fallbackSale({ fallback: true, fallbackCondition: 1 }))).toMatchObject({
      service: 'sale',
      entryMode: 'swiped',
    });
    expect(validate(fallbackSale({ fallback: true, fallbackCondition: 2 })).entryMode).toBe('swiped');
    const refused = (
      emv: Record<string, unknown>,
      over: Record<string, unknown> = {},
    ): { field: string; reason: string }[] =>
      refusalOf(() => validate(fallbackSale(emv, over))).body.details as { field: string; reason: string }[];
    expect(refused({ fallback: true })).toEqual([
      { field: 'pointOfSaleInformation.emv.fallbackCondition', reason: 'MISSING_FIELD' },
    ]);
    expect(refused({ fallback: true, fallbackCondition: 3 })).toEqual([
      { field: 'pointOfSaleInformation.emv.fallbackCondition', reason: 'INVALID_DATA' },
    ]);
    expect(refused({ fallback: 'yes', fallbackCondition: 1 })).toContainEqual({
      field: 'pointOfSaleInformation.emv.fallback',
      reason: 'INVALID_DATA',
    });
    // A condition without the indicator: the condition is wrong, and the chip card's swipe is not said a fallback.
    expect(refused({ fallbackCondition: 1 })).toEqual([
      { field: 'pointOfSaleInformation.emv.fallbackCondition', reason: 'INVALID_DATA' },
      { field: 'pointOfSaleInformation.emv.fallback', reason: 'MISSING_FIELD' },
    ]);
    // A stripe-only card (service code 101) has no chip to fall back from.
    expect(
      refused(
        { fallback: true, fallbackCondition: 1 },
        { trackData: ';4111111111111111=30121011234567890?' },
      ),
    ).toEqual([{ field: 'pointOfSaleInformation.emv.fallback', reason: 'INVALID_DATA' }]);
    // A chip read is no fallback.
    const chip = samplePayment({ amountMinor: 2000, transactionId: 'tx-fb2' });
    const pos = chip.pointOfSaleInformation as { emv: Record<string, unknown> };
    Object.assign(pos.emv, { fallback: true, fallbackCondition: 1 });
    expect(refusalOf(() => validate(chip)).body.details).toEqual([
      { field: 'pointOfSaleInformation.emv.fallback', reason: 'INVALID_DATA' },
    ]);
  });

  it('refuses a chip card (service code 2xx or 6xx) swiped without emv.fallback, and takes a stripe-only card swiped', () => {
    const swipe = (trackData: string, emv?: Record<string, unknown>) => {
      const body = samplePayment({
        amountMinor: 960_100,
        transactionId: 'tx-sw',
        sale: true,
        entryMode: 'swiped',
      });
      const pos = body.pointOfSaleInformation as Record<string, unknown>;
      pos.trackData = trackData;
      if (emv === undefined) delete pos.emv;
      else pos.emv = emv;
      return body;
    };
    for (const chip of [';4111111111111111=30122011234567890?', ';4111111111111111=30126011234567890?']) {
      expect(refusalOf(() => validate(swipe(chip))).body.details).toEqual([
        { field: 'pointOfSaleInformation.emv.fallback', reason: 'MISSING_FIELD' },
      ]);
      expect(refusalOf(() => validate(swipe(chip, { fallback: false }))).body.details).toEqual([
        { field: 'pointOfSaleInformation.emv.fallback', reason: 'INVALID_DATA' },
      ]);
    }
    // The same card read through track 1.
    expect(
      refusalOf(() => validate(swipe('%B4111111111111111^CARDHOLDER/VISA^3012201123456789?'))).body.details,
    ).toEqual([{ field: 'pointOfSaleInformation.emv.fallback', reason: 'MISSING_FIELD' }]);
    expect(validate(swipe(';4111111111111111=30121011234567890?')).entryMode).toBe('swiped');
  });

  it('refuses a contactless read without EMV tags', () => {
    const body = samplePayment({ amountMinor: 2000, transactionId: 'tx-5' });
    delete (body.pointOfSaleInformation as Record<string, unknown>).emv;
    const a = refusalOf(() => validate(body));
    expect(a.body.details).toEqual([{ field: 'pointOfSaleInformation.emv.tags', reason: 'MISSING_FIELD' }]);
  });

  it('refuses comments that name another service', () => {
    const body = samplePayment({ amountMinor: 2000, transactionId: 'tx-6', sale: true });
    (body.clientReferenceInformation as Record<string, unknown>).comments = 'Parking Authorization';
    const a = refusalOf(() => validate(body));
    expect(a.body).toMatchObject({ reason: 'INVALID_DATA' });
    expect(a.body.details).toEqual([
      { field: 'clientReferenceInformation.comments', reason: 'INVALID_DATA' },
    ]);
  });

  it('refuses a card type other than 001 and 002 at once: CARD_TYPE_NOT_ACCEPTED', () => {
    const body = samplePayment({ amountMinor: 2000, transactionId: 'tx-7' });
    (body.paymentInformation as { card: Record<string, unknown> }).card.type = '003';
    expect(refusalOf(() => validate(body)).body).toMatchObject({
      reason: 'CARD_TYPE_NOT_ACCEPTED',
      details: [{ field: 'paymentInformation.card.type', reason: 'INVALID_DATA' }],
    });
  });

  it('returns the terms of a converted authorization', () => {
    const body = samplePayment({ amountMinor: 2241, currency: 'USD', transactionId: 'tx-8' });
    Object.assign((body.orderInformation as { amountDetails: Record<string, unknown> }).amountDetails, {
      currencyConversion: { indicator: '1' },
    });
    expect(validate(body, true).dcc).toBe(DCC_TERMS);
  });

  it('accepts a card-not-present SDK sample and refuses one whose card number fails Luhn', () => {
    const body = {
      clientReferenceInformation: { code: 'TC50171_3' },
      orderInformation: { amountDetails: { totalAmount: '102.21', currency: 'USD' } },
      paymentInformation: {
        card: { number: '4111111111111111', expirationMonth: '12', expirationYear: '2031' },
      },
    };
    expect(validate(body)).toMatchObject({ service: 'authorization', cardPresent: false, cardType: '001' });
    body.paymentInformation.card.number = '4111111111111112';
    expect(refusalOf(() => validate(body)).body).toMatchObject({
      reason: 'INVALID_CARD',
      details: [{ field: 'paymentInformation.card.number', reason: 'INVALID_DATA' }],
    });
  });
  it('refuses a tap from a terminal that does not say it reads contactless (terminalCapability 5)', () => {
    const body = samplePayment({ amountMinor: 2000, transactionId: 'tx-cap-4', entryMode: 'contactless' });
    (body.pointOfSaleInformation as Record<string, unknown>).terminalCapability = '4';
    expect(refusalOf(() => validate(body)).body.details).toEqual([
      { field: 'pointOfSaleInformation.terminalCapability', reason: 'INVALID_DATA' },
    ]);
  });
  it('refuses a sale with authIndicator 1: spec 001 lists `0` for the sale as for the pre-authorization', () => {
    for (const catLevel of ['2', '6'] as const) {
      const body = samplePayment({
        amountMinor: 2000,
        transactionId: `tx-ai-${catLevel}`,
        sale: true,
        catLevel,
      });
      (
        body.processingInformation as { authorizationOptions: { authIndicator: string } }
      ).authorizationOptions.authIndicator = '1';
      expect(refusalOf(() => validate(body)).body.details).toEqual([
        { field: 'processingInformation.authorizationOptions.authIndicator', reason: 'INVALID_DATA' },
      ]);
    }
  });

  it('refuses EMV tags on a swiped read: a stripe has no chip data (gateway.md §3)', () => {
    const body = samplePayment({ amountMinor: 2000, transactionId: 'tx-swipe-tags', entryMode: 'swiped' });
    (body.pointOfSaleInformation as Record<string, unknown>).emv = { tags: sampleEmvTags(2000, 'EUR') };
    expect(refusalOf(() => validate(body)).body.details).toEqual([
      { field: 'pointOfSaleInformation.emv.tags', reason: 'INVALID_DATA' },
    ]);
  });
});
