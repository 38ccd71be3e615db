import { describe, expect, it } from 'vitest';
import { checkEmvTags, decodeEmvTags, PARKING_EMV_TABLE, type DecodedTag } from './emv-rules.js';
import { sampleEmvTags } from './sample-requests.js';

function tags(hex: string): DecodedTag[] {
  const d = decodeEmvTags(hex);
  if (!d.ok) throw new Error(d.message);
  return d.tags;
}

const without = (list: DecodedTag[], tag: string): DecodedTag[] => list.filter((t) => t.tag !== tag);

describe('the sandbox copy of the spec 001 EMV table', () => {
  it('has one row per tag of the spec table', () => {
    expect(PARKING_EMV_TABLE.map((r) => r.tag)).toEqual([
      '9A',
      '9C',
      '5F2A',
      '9F1A',
      '9F02',
      '9F03',
      '5F34',
      '9F36',
      '82',
      '84',
      '95',
      '9F10',
      '9F26',
      '9F27',
      '9F33',
      '9F34',
      '9F37',
      '9F6E',
    ]);
  });

  it('accepts the full sample tag set for both networks', () => {
    const set = tags(sampleEmvTags(1250, 'EUR'));
    for (const cardType of ['001', '002'] as const)
      expect(
        checkEmvTags(set, {
          cardType,
          context: 'authorization',
          amountMinor: 1250,
          currencyNumeric: '978',
          transactionTypes: ['00'],
        }),
      ).toEqual([]);
  });

  it('requires 9F27 and 9F34 for card type 002 (N1) but not for 001 (N2)', () => {
    const set = without(without(tags(sampleEmvTags(1250, 'EUR')), '9F27'), '9F34');
    expect(checkEmvTags(set, { cardType: '001', context: 'authorization' })).toEqual([]);
    expect(checkEmvTags(set, { cardType: '002', context: 'authorization' })).toEqual([
      'mandatory tag 9F27 (Cryptogram Information Data) is missing',
      'mandatory tag 9F34 (CVM Results) is missing',
    ]);
  });

  it('prohibits 9F6E on a refund of card type 002 only', () => {
    const set = [...tags(sampleEmvTags(1250, 'EUR')), { tag: '9F6E', value: '2070000000' }];
    expect(checkEmvTags(set, { cardType: '002', context: 'refund' })).toEqual([
      'tag 9F6E (Form Factor Indicator) is prohibited here',
    ]);
    expect(checkEmvTags(set, { cardType: '002', context: 'authorization' })).toEqual([]);
    const visa = [...tags(sampleEmvTags(1250, 'EUR')), { tag: '9F6E', value: '20700000' }];
    expect(checkEmvTags(visa, { cardType: '001', context: 'refund' })).toEqual([]);
  });

  it("checks 9F6E's length per network: 4 bytes for card type 001, 5-32 for 002 (reference/emv.md)", () => {
    const withFormFactor = (value: string): DecodedTag[] => [
      ...tags(sampleEmvTags(1250, 'EUR')),
      { tag: '9F6E', value },
    ];
    const check = (cardType: '001' | '002', value: string): string[] =>
      checkEmvTags(withFormFactor(value), { cardType, context: 'authorization' });
    expect(check('001', '20700000')).toEqual([]);
    expect(check('001', '2070000000')).toEqual(['tag 9F6E must be 4 bytes for card type 001']);
    expect(check('002', '2070000000')).toEqual([]);
    expect(check('002', '20'.repeat(32))).toEqual([]);
    expect(check('002', '20700000')).toEqual(['tag 9F6E must be 5-32 bytes for card type 002']);
    expect(check('002', '20'.repeat(33))).toEqual(['tag 9F6E must be 5-32 bytes for card type 002']);
  });

  it('refuses never-send card data tags and redacts their values when decoding', () => {
    const hex = `${sampleEmvTags(1250, 'EUR')}5A084111111111111111`;
    const set = tags(hex);
    expect(set.find((t) => t.tag === '5A')?.value).toBe('[REDACTED]');
    expect(checkEmvTags(set, { cardType: '001', context: 'authorization' })).toContain(
      'tag 5A must never be sent (card data)',
    );
  });

  it('checks 9F02 and 5F2A against the message amount and currency, and 9C against the service', () => {
    const set = tags(sampleEmvTags(1250, 'EUR'));
    expect(
      checkEmvTags(set, {
        cardType: '001',
        context: 'authorization',
        amountMinor: 1300,
        currencyNumeric: '826',
        transactionTypes: ['20'],
      }),
    ).toEqual([
      'tag 9F02 does not equal orderInformation.amountDetails.totalAmount',
      'tag 5F2A does not equal orderInformation.amountDetails.currency',
      'tag 9C must be 20 for this service',
    ]);
  });

  it('requires 5F34 when the card sequence number is sent (conditional for N1) and compares them', () => {
    const set = tags(sampleEmvTags(1250, 'EUR'));
    expect(
      checkEmvTags(set, { cardType: '002', context: 'authorization', cardSequenceNumber: '01' }),
    ).toEqual(['tag 5F34 is missing while emv.cardSequenceNumber is sent']);
    const withPsn = tags(sampleEmvTags(1250, 'EUR', { withPsn: true }));
    expect(
      checkEmvTags(withPsn, { cardType: '002', context: 'authorization', cardSequenceNumber: '1' }),
    ).toEqual([]);
    expect(
      checkEmvTags(withPsn, { cardType: '002', context: 'authorization', cardSequenceNumber: '2' }),
    ).toEqual(['emv.cardSequenceNumber does not equal tag 5F34']);
  });

  it('reports malformed TLV as a result, never a throw', () => {
    expect(decodeEmvTags('DF9A03001736')).toMatchObject({ ok: false });
    expect(decodeEmvTags('9F02 06')).toMatchObject({ ok: false });
    expect(decodeEmvTags('')).toMatchObject({ ok: false });
  });
});
