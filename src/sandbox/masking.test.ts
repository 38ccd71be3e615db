import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeEmvTags } from './emv-rules.js';
import { maskedBodyJson } from './masking.js';
import { sampleEmvTags, samplePayment } from './sample-requests.js';

/** A body as the server has it: parsed from the JSON text it received. */
function parsed(body: unknown): unknown {
  return JSON.parse(JSON.stringify(body));
}

describe('the masked body the ledger keeps', () => {
  it('masks the PAN of a keyed card and redacts track data, security codes and cryptograms', () => {
    const body = parsed({
      paymentInformation: { card: { number: '4111111111111111', securityCode: '123' } },
      pointOfSaleInformation: { trackData: ';4111111111111111=30122011234567890?', cryptogram: 'AB' },
      tokenInformation: { value: 'secret' },
    });
    expect(JSON.parse(maskedBodyJson(body))).toEqual({
      paymentInformation: { card: { number: '411111******1111', securityCode: '[REDACTED]' } },
      pointOfSaleInformation: { trackData: '[REDACTED]', cryptogram: '[REDACTED]' },
      tokenInformation: { value: '[REDACTED]' },
    });
  });

  it('masks a Luhn-valid card number written anywhere, also inside arrays', () => {
    const body = parsed({
      note: 'card 4111 1111 1111 1111 here',
      list: ['5555-5555-5555-4444', '1234567890123'],
    });
    expect(JSON.parse(maskedBodyJson(body))).toEqual({
      note: 'card 411111******1111 here',
      list: ['555555******4444', '1234567890123'],
    });
  });

  it("keeps the gateway's 14-digit date-times, though as digits they pass the Luhn check", () => {
    // 20261130115748: 30 November 2026, 11:57:48 UTC, and a Luhn-valid run of 14 digits.
    const body = parsed({
      merchantInformation: { transactionLocalDateTime: '20261130115748' },
      orderInformation: { amountDetails: { exchangeRateTimeStamp: '20261130115748' } },
      clientReferenceInformation: { comments: 'at 20261130115748' },
    });
    expect(JSON.parse(maskedBodyJson(body))).toEqual({
      merchantInformation: { transactionLocalDateTime: '20261130115748' },
      orderInformation: { amountDetails: { exchangeRateTimeStamp: '20261130115748' } },
      // Elsewhere such a run may be a card number: masked.
      clientReferenceInformation: { comments: 'at 2026******5748' },
    });
  });

  it('keeps EMV tags without a never-send tag, and redacts tags that carry one or do not decode', () => {
    const tags = sampleEmvTags(1250, 'EUR');
    const decoded = decodeEmvTags(tags);
    if (!decoded.ok) throw new Error('sample tags do not decode');
    const ok = parsed({ pointOfSaleInformation: { emv: { tags } } });
    expect(maskedBodyJson(ok)).toBe(JSON.stringify(ok));
    expect(maskedBodyJson(ok, { hex: tags, tags: decoded.tags })).toBe(JSON.stringify(ok));
    for (const bad of [`${tags}5A084111111111111111`, 'ZZ']) {
      const body = parsed({ pointOfSaleInformation: { emv: { tags: bad } } });
      expect(JSON.parse(maskedBodyJson(body))).toEqual({
        pointOfSaleInformation: { emv: { tags: '[REDACTED]' } },
      });
    }
  });

  it('writes the text JSON.stringify gives of the masked copy: key order, escapes, numbers, a "__proto__" key', () => {
    const body: unknown = JSON.parse(
      '{"b":1,"a":[true,null,-0,1e21,{"__proto__":{"x":"\\u0000\\"\\\\"}}],"s":"é€😀\\u2028\\ud800","2":"two"}',
    );
    expect(maskedBodyJson(body)).toBe(JSON.stringify(body));
  });

  it('copies only what it masks: the keys around a masked value keep their order, a "__proto__" key stays a key', () => {
    const body: unknown = JSON.parse(
      '{"z":1,"2":"x","__proto__":{"a":[0,{"trackData":"t"}],"b":2},"list":[{"n":1},{"securityCode":"1"}],"a":"s"}',
    );
    const before = JSON.stringify(body);
    expect(maskedBodyJson(body)).toBe(
      '{"2":"x","z":1,"__proto__":{"a":[0,{"trackData":"[REDACTED]"}],"b":2},' +
        '"list":[{"n":1},{"securityCode":"[REDACTED]"}],"a":"s"}',
    );
    expect(JSON.stringify(body)).toBe(before);
  });

  it('leaves every value without card data as it is, so the text equals JSON.stringify of the body', () => {
    fc.assert(
      fc.property(fc.jsonValue({ stringUnit: 'binary' }), (v) => {
        const text = JSON.stringify(v);
        // No key the masking rules name (they all lack a leading underscore), no run of 13 digits.
        fc.pre(!/\d{13}/.test(text.replace(/[ -]/g, '')));
        const body: unknown = JSON.parse(text.replace(/"([^"\\]*)":/g, '"_$1":'));
        expect(maskedBodyJson(body)).toBe(JSON.stringify(body));
      }),
      { numRuns: 300 },
    );
  });

  it('keeps the card-present sample authorization as sent apart from its track data', () => {
    const body = parsed(samplePayment({ amountMinor: 1250, transactionId: 't-1' })) as {
      pointOfSaleInformation: { trackData: string };
    };
    const expected = parsed(body) as typeof body;
    expected.pointOfSaleInformation.trackData = '[REDACTED]';
    expect(maskedBodyJson(body)).toBe(JSON.stringify(expected));
  });
});
