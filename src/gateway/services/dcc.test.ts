import { describe, expect, it } from 'vitest';
import { parseDccOfferAnswer } from './dcc.js';

/** A PENDING offer answer of spec 001 with `offer` (one offer) and `top` merged in. */
const offerAnswer = (offer: Record<string, unknown>, top: Record<string, unknown> = {}): unknown => ({
  id: '7000000000000000000001',
  status: 'PENDING',
  orderInformation: {
    currencyConversion: {
      type: 'DCC',
      reconciliationId: 'REC1',
      offer: [
        {
          amount: '14.67',
          currency: 'EUR',
          exchangeRate: '1.1734',
          marginRate: '3.5',
          exchangeRateTimeUtc: '2026-11-30T08:00:00Z',
          exchangeRateExpirationTimeUtc: '2026-11-30T08:10:00Z',
          ...offer,
        },
      ],
      disclaimer: 'I accept that I have been offered a choice of currencies.',
    },
  },
  ...top,
});

const firstOffer = (answer: unknown) => {
  const result = parseDccOfferAnswer(answer);
  if (result.kind !== 'offer') throw new Error('no offer');
  return result.offers[0];
};

describe('the exchange rate and margin of a DCC offer', () => {
  it('sent as JSON numbers, are read as the exact decimal text they stand for', () => {
    expect(firstOffer(offerAnswer({ exchangeRate: 1.1734, marginRate: 3.5 }))).toMatchObject({
      exchangeRate: '1.1734',
      marginRate: '3.5',
    });
    // String(1e-7) is "1e-7", which the authorization builder refuses as no decimal.
    expect(firstOffer(offerAnswer({ exchangeRate: 1e-7, marginRate: 0.000001 }))).toMatchObject({
      exchangeRate: '0.0000001',
      marginRate: '0.000001',
    });
    expect(firstOffer(offerAnswer({ exchangeRate: 150, marginRate: 0 }))).toMatchObject({
      exchangeRate: '150',
      marginRate: '0',
    });
    expect(firstOffer(offerAnswer({ exchangeRate: 123456789012.345 }))).toMatchObject({
      exchangeRate: '123456789012.345',
    });
  });

  it('that no decimal text of at most 15 digits either side of the point states exactly are refused (GW_PARSE)', () => {
    for (const exchangeRate of [
      // More significant digits than a JSON number keeps: the digits sent are lost.
      JSON.parse('0.12345678901234567') as number,
      1e21,
      1e-16,
      -1.2,
      // As text: what the builder and the journal could not take.
      '1e-7',
      '1'.repeat(20),
      '0.' + '1'.repeat(20),
      '-1.2',
      ' 1.2',
    ]) {
      expect(() => parseDccOfferAnswer(offerAnswer({ exchangeRate })), String(exchangeRate)).toThrow(
        expect.objectContaining({ code: 'GW_PARSE' }),
      );
    }
    expect(() => parseDccOfferAnswer(offerAnswer({ marginRate: 1e-20 }))).toThrow(
      expect.objectContaining({ code: 'GW_PARSE' }),
    );
  });
});

describe('the ids and times of a DCC offer', () => {
  it('are taken in the shape the terminal keeps and sends back, or the answer is refused (GW_PARSE)', () => {
    const long = 'X'.repeat(200);
    for (const answer of [
      offerAnswer({}, { id: long }),
      offerAnswer({}, { id: 'id with spaces' }),
      offerAnswer({ exchangeRateTimeUtc: `2026-11-30T08:00:00Z${' '.repeat(10_000)}` }),
      offerAnswer({ exchangeRateExpirationTimeUtc: long }),
    ]) {
      expect(() => parseDccOfferAnswer(answer)).toThrow(expect.objectContaining({ code: 'GW_PARSE' }));
    }
    const withReconciliation = (reconciliationId: unknown) => {
      const a = offerAnswer({}) as { orderInformation: { currencyConversion: Record<string, unknown> } };
      a.orderInformation.currencyConversion.reconciliationId = reconciliationId;
      return a;
    };
    expect(parseDccOfferAnswer(withReconciliation('REC1'))).toMatchObject({ reconciliationId: 'REC1' });
    expect(() => parseDccOfferAnswer(withReconciliation(long))).toThrow(
      expect.objectContaining({ code: 'GW_PARSE' }),
    );
  });

  it('a no-offer reason that is no code reads as DECLINED', () => {
    const declined = (reason: unknown) =>
      parseDccOfferAnswer({ id: 'D1', status: 'DECLINED', errorInformation: { reason } });
    expect(declined('CURRENCY_MATCH')).toMatchObject({ kind: 'no-offer', reason: 'CURRENCY_MATCH' });
    expect(declined('R'.repeat(10_000))).toMatchObject({ kind: 'no-offer', reason: 'DECLINED' });
  });

  it('a no-offer id that is no gateway id is left out', () => {
    const declined = (id: unknown) =>
      parseDccOfferAnswer({ id, status: 'DECLINED', errorInformation: { reason: 'NOT_ELIGIBLE' } });
    expect(declined('6843379070056369304008')).toEqual({
      kind: 'no-offer',
      reason: 'NOT_ELIGIBLE',
      id: '6843379070056369304008',
    });
    for (const id of ['D1\r\nX-Injected: 1', 'D'.repeat(10_000_000), 'id with spaces'])
      expect(declined(id), id.slice(0, 20)).toEqual({ kind: 'no-offer', reason: 'NOT_ELIGIBLE' });
  });

  it('keeps a rateId in the shape of a gateway id, and drops any other without refusing the offer', () => {
    // The public API's example (hex digits) and the sandbox's (a UUID).
    for (const rateId of ['009F303309AF0723452', '0b6f1c3e-2d4a-4c1e-9a7b-5e8f0d2c1a3b'])
      expect(firstOffer(offerAnswer({ rateId }))).toMatchObject({ rateId });
    for (const rateId of ['R1\r\nX-Injected: 1', 'R'.repeat(10_000_000), 'rate id', 1234, { id: 'R1' }, '']) {
      const offer = firstOffer(offerAnswer({ rateId }));
      expect(offer, JSON.stringify(rateId).slice(0, 20)).toMatchObject({
        exchangeRate: '1.1734',
        currency: 'EUR',
      });
      expect(offer).not.toHaveProperty('rateId');
    }
  });

  it('keeps no rateSource: the receipt states the one the operator configured', () => {
    for (const rateSource of ['Wholesale Exchange Rate', 'S'.repeat(10_000_000), 'ECB\r\nX-Injected: 1'])
      expect(firstOffer(offerAnswer({ rateSource }))).not.toHaveProperty('rateSource');
  });
});

describe('the disclaimer of a DCC offer', () => {
  const withDisclaimer = (disclaimer: unknown) => {
    const a = offerAnswer({}) as { orderInformation: { currencyConversion: Record<string, unknown> } };
    a.orderInformation.currencyConversion.disclaimer = disclaimer;
    return parseDccOfferAnswer(a);
  };

  it('is kept exactly as it came, up to the length the terminal shows, prints and keeps', () => {
    const text = 'I accept that I have been offered a choice of currencies.\nThe rate includes a margin.';
    expect(withDisclaimer(text)).toMatchObject({ kind: 'offer', disclaimer: text });
    expect(withDisclaimer('D'.repeat(2000))).toMatchObject({ disclaimer: 'D'.repeat(2000) });
  });

  it('longer, is no disclaimer (never cut: it must be shown unmodified), so the offer cannot be presented', () => {
    for (const disclaimer of ['D'.repeat(2001), 'D'.repeat(10_000_000)])
      expect(withDisclaimer(disclaimer)).not.toHaveProperty('disclaimer');
  });

  it('of blanks or control characters only, is no disclaimer: it would show and print as nothing', () => {
    for (const disclaimer of [' ', '   \n\t ', '\u0000\u0007', '\u00a0\u2003', '\r\n'])
      expect(withDisclaimer(disclaimer)).not.toHaveProperty('disclaimer');
    expect(withDisclaimer(' Chosen freely. ')).toMatchObject({ disclaimer: ' Chosen freely. ' });
  });
});

describe('a DCC offer status nobody documented', () => {
  it('is named in the error only when it is a code', () => {
    const read = () => parseDccOfferAnswer({ id: 'D1', status: 'S'.repeat(10_000) });
    expect(read).toThrow(expect.objectContaining({ code: 'GW_UNDOCUMENTED' }));
    expect(read).not.toThrow(/SSSS/);
  });
});

describe('the rate time of a DCC offer', () => {
  it('is taken only as an ISO 8601 date-time with seconds and a zone (GW_PARSE otherwise)', () => {
    for (const time of [
      '2026-01-01 junk',
      '2026-11-30',
      '2026-11-30T08:00Z',
      '2026-11-30T08:00:00',
      '2026-11-30 08:00:00Z',
      '30 Nov 2026 08:00:00 GMT',
      '2026-02-30T08:00:00Z',
      '2026-11-30T24:00:00Z',
      '2026-11-30T08:00:00+24:00',
      '20261130080000',
      1_796_025_600_000,
    ]) {
      expect(() => parseDccOfferAnswer(offerAnswer({ exchangeRateTimeUtc: time })), String(time)).toThrow(
        expect.objectContaining({ code: 'GW_PARSE' }),
      );
      expect(
        () => parseDccOfferAnswer(offerAnswer({ exchangeRateExpirationTimeUtc: time })),
        String(time),
      ).toThrow(expect.objectContaining({ code: 'GW_PARSE' }));
    }
  });

  it('is sent back as 14 digits yyyyMMddHHmmss in UTC, the form of exchangeRateTimeStamp', () => {
    expect(firstOffer(offerAnswer({}))).toMatchObject({
      exchangeRateTimeUtc: '2026-11-30T08:00:00Z',
      exchangeRateTimeStamp: '20261130080000',
      exchangeRateExpirationTimeUtc: '2026-11-30T08:10:00Z',
    });
    // Another zone is the same instant in UTC; a fraction of a second stays in its second.
    expect(firstOffer(offerAnswer({ exchangeRateTimeUtc: '2026-12-01T00:30:15.999+01:00' }))).toMatchObject({
      exchangeRateTimeUtc: '2026-12-01T00:30:15.999+01:00',
      exchangeRateTimeStamp: '20261130233015',
    });
  });
});
