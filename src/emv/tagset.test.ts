import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bytesToHex, hexToBytes } from './hex.js';
import {
  describeRule,
  NETWORK_TAG_TABLE,
  NEVER_SEND_TAGS,
  TAG_SET_SERVICES,
  type CardType,
} from './networks.js';
import { buildTagSet, TagSetError, type TagSetContext } from './tagset.js';
import { decodeTlv, flattenTlv } from './tlv.js';

/**
 * Spec 001, "Card-present parking" → "EMV tags", transcribed independently of networks.ts: tag, N1 (card type 002),
 * N2 (card type 001).
 */
const SPEC_001_TABLE: ReadonlyArray<[tag: string, n1: string, n2: string]> = [
  ['9A', 'M', 'M'],
  ['9C', 'M', 'M'],
  ['5F2A', 'M', 'M'],
  ['9F1A', 'M', 'M'],
  ['9F02', 'M', 'M'],
  ['9F03', 'M', 'M'],
  ['5F34', 'C', 'O'],
  ['9F36', 'M', 'M'],
  ['82', 'M', 'M'],
  ['84', 'M', 'M'],
  ['95', 'M', 'M'],
  ['9F10', 'M', 'M'],
  ['9F26', 'M', 'M'],
  ['9F27', 'M', 'O'],
  ['9F33', 'M', 'M'],
  ['9F34', 'M', 'O'],
  ['9F37', 'M', 'M'],
  ['9F6E', 'O (authorization), P (refund)', 'C'],
];

/** A contact read as a reader returns it (values from binaryfoo/emv-bertlv contact-mastercard-in.txt where known). */
const READER: Readonly<Record<string, string>> = {
  '57': '5413330089600044D14122010123409172',
  '5A': '5413330089600044',
  '5F24': '141231',
  '5F20': '4341524420352F564953412054455354',
  '5F34': '01',
  '82': '5900',
  '84': 'A0000000041010',
  '95': '0000008000',
  '9F10': '0110A00009248400000000000000000029FF',
  '9F26': '4573436B1E4B95DD',
  '9F27': '80',
  '9F34': '1F0302',
  '9F36': '0041',
  '9F37': '8221F601',
  '9F6E': '2070000000',
  '9F39': '05',
  DFEE26: 'E001',
};

function readerTlvs(
  overrides: Record<string, string | undefined> = {},
): Array<{ tag: string; value: Uint8Array }> {
  const merged: Record<string, string | undefined> = { ...READER, ...overrides };
  return Object.entries(merged)
    .filter((e): e is [string, string] => e[1] !== undefined)
    .map(([tag, value]) => ({ tag, value: hexToBytes(value) }));
}

function ctx(cardType: CardType, overrides: Partial<TagSetContext> = {}): TagSetContext {
  return {
    cardType,
    service: 'authorization',
    amountMinor: 1250,
    otherAmountMinor: 0,
    currencyNumeric: '826',
    countryNumeric: '826',
    transactionDate: '250314',
    transactionType: '00',
    entryMode: 'contact',
    random: (n) => new Uint8Array(n).fill(0xa5),
    ...overrides,
  };
}

function tagSetError(fn: () => unknown): TagSetError {
  try {
    fn();
  } catch (e) {
    if (e instanceof TagSetError) return e;
    throw e;
  }
  throw new Error('expected a TagSetError');
}

/** Values the context fixes for each terminal-sourced tag of the table. */
const FROM_CONTEXT: Readonly<Record<string, string>> = {
  '9A': '250314',
  '9C': '00',
  '5F2A': '0826',
  '9F1A': '0826',
  '9F02': '000000001250',
  '9F03': '000000000000',
};

const NETWORKS: ReadonlyArray<[CardType, 'N1' | 'N2', 1 | 2]> = [
  ['002', 'N1', 1],
  ['001', 'N2', 2],
];

/** 9F6E is a 4-byte Form Factor Indicator for card type 001, 5–32-byte Third Party Data for 002. */
function readerFor(cardType: CardType, overrides: Record<string, string | undefined> = {}) {
  return readerTlvs({ '9F6E': cardType === '001' ? '20700000' : '2070000000', ...overrides });
}

describe('network tag table', () => {
  it('is spec 001 row for row, in its order', () => {
    expect(
      NETWORK_TAG_TABLE.map((r) => [r.tag, describeRule(r.rules['002']), describeRule(r.rules['001'])]),
    ).toEqual(
      SPEC_001_TABLE.map(([tag, n1, n2]) => [
        tag,
        n1.startsWith('O (') ? 'O (authorization, capture, reversal), P (refund, credit)' : n1,
        n2,
      ]),
    );
  });

  it('lists no never-send tag', () => {
    for (const row of NETWORK_TAG_TABLE) expect(NEVER_SEND_TAGS.has(row.tag)).toBe(false);
  });
});

describe('buildTagSet, every row of spec 001 for both networks', () => {
  for (const [tag, n1, n2] of SPEC_001_TABLE) {
    for (const [cardType, network, column] of NETWORKS) {
      const rule = column === 1 ? n1 : n2;
      if (tag in FROM_CONTEXT) {
        it(`${tag} (${rule} for ${network}) comes from the transaction and must agree with the reader`, () => {
          const set = buildTagSet(readerFor(cardType), ctx(cardType));
          expect(set.tags.find((t) => t.tag === tag)?.value).toBe(FROM_CONTEXT[tag]);
          const e = tagSetError(() =>
            buildTagSet(
              readerFor(cardType, { [tag]: 'FF'.repeat(hexToBytes(FROM_CONTEXT[tag]!).length) }),
              ctx(cardType),
            ),
          );
          expect([e.code, e.tag, e.network]).toEqual(['TAG_MISMATCH', tag, network]);
        });
      } else if (tag === '9F33') {
        it(`9F33 (${rule} for ${network}) comes from the context, else the reader, else the entry-mode default`, () => {
          const value = (set: ReturnType<typeof buildTagSet>) =>
            set.tags.find((t) => t.tag === '9F33')?.value;
          expect(
            value(buildTagSet(readerFor(cardType), ctx(cardType, { terminalCapabilities: 'E0F8C8' }))),
          ).toBe('E0F8C8');
          expect(value(buildTagSet(readerFor(cardType, { '9F33': '604020' }), ctx(cardType)))).toBe('604020');
          expect(value(buildTagSet(readerFor(cardType), ctx(cardType)))).toBe('6008C8');
          expect(value(buildTagSet(readerFor(cardType), ctx(cardType, { entryMode: 'contactless' })))).toBe(
            '0008C8',
          );
          const e = tagSetError(() =>
            buildTagSet(
              readerFor(cardType, { '9F33': '604020' }),
              ctx(cardType, { terminalCapabilities: 'E0F8C8' }),
            ),
          );
          expect([e.code, e.tag, e.network]).toEqual(['TAG_MISMATCH', '9F33', network]);
        });
      } else if (tag === '9F37') {
        it(`9F37 (${rule} for ${network}) is the reader's, or 4 CSPRNG bytes when the reader gave none`, () => {
          const withReader = buildTagSet(readerFor(cardType), ctx(cardType));
          expect(withReader.tags.find((t) => t.tag === '9F37')?.value).toBe('8221F601');
          const asked: number[] = [];
          const random = (n: number) => {
            asked.push(n);
            return Uint8Array.of(1, 2, 3, 4);
          };
          const own = buildTagSet(readerFor(cardType, { '9F37': undefined }), ctx(cardType, { random }));
          expect(own.tags.find((t) => t.tag === '9F37')?.value).toBe('01020304');
          expect(asked).toEqual([4]);
        });
      } else if (rule === 'M') {
        it(`${tag} is mandatory for ${network}: sent when read, TAG_MISSING naming tag, network and rule when not`, () => {
          for (const service of TAG_SET_SERVICES) {
            const refundLike = service === 'refund' || service === 'credit';
            const c = ctx(cardType, { service, transactionType: refundLike ? '20' : '00' });
            expect(buildTagSet(readerFor(cardType), c).tags.find((t) => t.tag === tag)?.value).toBe(
              READER[tag],
            );
            const e = tagSetError(() => buildTagSet(readerFor(cardType, { [tag]: undefined }), c));
            expect([e.code, e.tag, e.network]).toEqual(['TAG_MISSING', tag, network]);
            expect(e.rule).toContain(`${tag}`);
            expect(e.rule).toContain(network);
          }
        });
      } else if (rule === 'O' || rule === 'C') {
        it(`${tag} is ${rule} for ${network}: sent exactly when present`, () => {
          const present = buildTagSet(readerFor(cardType), ctx(cardType));
          expect(present.tags.some((t) => t.tag === tag)).toBe(true);
          const absent = buildTagSet(readerFor(cardType, { [tag]: undefined }), ctx(cardType));
          expect(absent.tags.some((t) => t.tag === tag)).toBe(false);
        });
      } else {
        it(`${tag} is "${rule}" for ${network}: sent for authorization, capture and reversal, never for refund or credit`, () => {
          for (const service of TAG_SET_SERVICES) {
            const refundLike = service === 'refund' || service === 'credit';
            const set = buildTagSet(
              readerFor(cardType),
              ctx(cardType, { service, transactionType: refundLike ? '20' : '00' }),
            );
            expect(set.tags.some((t) => t.tag === tag)).toBe(!refundLike);
            expect(set.dropped.some((d) => d.tag === tag && d.why === 'prohibited')).toBe(refundLike);
            expect(flattenTlv(decodeTlv(hexToBytes(set.tagsHex))).some((t) => t.tag === tag)).toBe(
              !refundLike,
            );
          }
        });
      }
    }
  }
});

describe('buildTagSet', () => {
  it('never carries 9F6E in an N1 refund, whatever the reader supplied', () => {
    const set = buildTagSet(readerFor('002'), ctx('002', { service: 'refund', transactionType: '20' }));
    expect(flattenTlv(decodeTlv(hexToBytes(set.tagsHex))).map((t) => t.tag)).not.toContain('9F6E');
  });

  it('emits the tags in spec 001 order as one flat TLV list equal to `tags`', () => {
    const set = buildTagSet(readerFor('002'), ctx('002'));
    expect(set.tags.map((t) => t.tag)).toEqual(SPEC_001_TABLE.map(([tag]) => tag));
    expect(
      flattenTlv(decodeTlv(hexToBytes(set.tagsHex))).map((t) => ({ tag: t.tag, value: bytesToHex(t.value) })),
    ).toEqual(set.tags);
  });

  it('drops never-send tags and reader-private tags, and says why', () => {
    const set = buildTagSet(readerFor('001'), ctx('001'));
    expect(set.dropped).toEqual(
      expect.arrayContaining([
        { tag: '57', why: 'never-send' },
        { tag: '5A', why: 'never-send' },
        { tag: '5F24', why: 'never-send' },
        { tag: '5F20', why: 'never-send' },
        { tag: '9F39', why: 'not-in-table' },
        { tag: 'DFEE26', why: 'not-in-table' },
      ]),
    );
  });

  it('never emits a never-send tag, whatever the reader supplied (property)', () => {
    const neverSend = [...NEVER_SEND_TAGS];
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom(...neverSend), fc.uint8Array({ minLength: 1, maxLength: 20 })), {
          maxLength: 12,
        }),
        fc.constantFrom<CardType>('001', '002'),
        (extra, cardType) => {
          const tlvs = [
            ...readerFor(cardType, {
              '57': undefined,
              '5A': undefined,
              '5F24': undefined,
              '5F20': undefined,
            }),
          ];
          const seen = new Set<string>();
          for (const [tag, value] of extra) {
            if (seen.has(tag)) continue;
            seen.add(tag);
            tlvs.push({ tag, value });
          }
          const set = buildTagSet(tlvs, ctx(cardType));
          const emitted = flattenTlv(decodeTlv(hexToBytes(set.tagsHex))).map((t) => t.tag);
          for (const tag of neverSend) expect(emitted).not.toContain(tag);
        },
      ),
      { numRuns: 200, seed: 7 },
    );
  });

  it('sets cardSequenceNumber from 5F34 exactly when the chip gave it', () => {
    expect(buildTagSet(readerFor('002'), ctx('002')).cardSequenceNumber).toBe('01');
    expect(
      buildTagSet(readerFor('002', { '5F34': undefined }), ctx('002')).cardSequenceNumber,
    ).toBeUndefined();
  });

  it('accepts a 4-byte 9F6E for card type 001 only and a 5-byte one for 002 only', () => {
    const e1 = tagSetError(() => buildTagSet(readerFor('002', { '9F6E': '20700000' }), ctx('002')));
    expect([e1.code, e1.tag, e1.network]).toEqual(['TAG_INVALID', '9F6E', 'N1']);
    const e2 = tagSetError(() => buildTagSet(readerFor('001', { '9F6E': '2070000000' }), ctx('001')));
    expect([e2.code, e2.tag, e2.network]).toEqual(['TAG_INVALID', '9F6E', 'N2']);
  });

  it('rejects a reader value that breaks the dictionary, naming the tag', () => {
    const e = tagSetError(() => buildTagSet(readerFor('001', { '9F26': '4573436B1E4B95' }), ctx('001')));
    expect([e.code, e.tag]).toEqual(['TAG_INVALID', '9F26']);
    expect(e.message).not.toContain('4573436B1E4B95');
  });

  it('rejects a tag read twice with different values', () => {
    const tlvs = [...readerFor('001'), { tag: '9F26', value: hexToBytes('0000000000000000') }];
    expect(tagSetError(() => buildTagSet(tlvs, ctx('001'))).code).toBe('TAG_DUPLICATE');
  });

  it.each([
    ['amountMinor', { amountMinor: -1 }, '9F02'],
    ['amountMinor', { amountMinor: 12.5 }, '9F02'],
    ['amountMinor', { amountMinor: 1e12 }, '9F02'],
    ['otherAmountMinor', { otherAmountMinor: Number.NaN }, '9F03'],
    ['currencyNumeric', { currencyNumeric: 'GBP' }, '5F2A'],
    ['countryNumeric', { countryNumeric: '82' }, '9F1A'],
    ['transactionDate', { transactionDate: '250230' }, '9A'],
    ['terminalCapabilities', { terminalCapabilities: 'XYZ' }, '9F33'],
    ['terminalType', { terminalType: '2' }, '9F35'],
    ['random', { random: () => new Uint8Array(3) }, '9F37'],
  ] as Array<[string, Partial<TagSetContext>, string]>)(
    'rejects a bad %s as TAG_INVALID on %s',
    (_f, o, tag) => {
      const e = tagSetError(() => buildTagSet(readerFor('001', { '9F37': undefined }), ctx('001', o)));
      expect([e.code, e.tag]).toEqual(['TAG_INVALID', tag]);
    },
  );

  it('refuses a swiped card, which carries no EMV data', () => {
    expect(tagSetError(() => buildTagSet(readerFor('001'), ctx('001', { entryMode: 'swiped' }))).code).toBe(
      'NOT_EMV',
    );
  });

  it('refuses a refund without transaction type 20 and an authorization with it', () => {
    expect(tagSetError(() => buildTagSet(readerFor('001'), ctx('001', { service: 'refund' }))).code).toBe(
      'SERVICE_MISMATCH',
    );
    expect(tagSetError(() => buildTagSet(readerFor('001'), ctx('001', { transactionType: '20' }))).code).toBe(
      'SERVICE_MISMATCH',
    );
  });

  it('checks terminalType against the reader 9F35 and does not emit it (not in spec 001)', () => {
    const set = buildTagSet(readerFor('001', { '9F35': '25' }), ctx('001', { terminalType: '25' }));
    expect(set.tags.some((t) => t.tag === '9F35')).toBe(false);
    expect(
      tagSetError(() => buildTagSet(readerFor('001', { '9F35': '22' }), ctx('001', { terminalType: '25' })))
        .code,
    ).toBe('TAG_MISMATCH');
  });
});
