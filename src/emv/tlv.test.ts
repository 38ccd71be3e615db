import { describe, expect, it } from 'vitest';
import { TlvError } from './errors.js';
import { bytesToHex, hexToBytes } from './hex.js';
import { decodeTlv, encodeTlv, findTlv, flattenTlv, tagBytes, type TlvNode } from './tlv.js';

/** Compact tree notation for the tables: `70[9F39=05,82=5900]`. */
function show(nodes: readonly TlvNode[]): string {
  return nodes
    .map((n) =>
      n.children ? `${n.tag}[${show(n.children)}]` : `${n.tag}=${bytesToHex(n.value ?? new Uint8Array())}`,
    )
    .join(',');
}

function decodeHex(hex: string): TlvNode[] {
  return decodeTlv(hexToBytes(hex));
}

function errorOf(fn: () => unknown): TlvError {
  try {
    fn();
  } catch (e) {
    if (e instanceof TlvError) return e;
    throw new Error(`expected a TlvError, got ${String(e)}`);
  }
  throw new Error('expected a TlvError, nothing was thrown');
}

/**
 * Public test data of independent EMV projects. Each row: the source (repository, file), the input as published
 * (APDU status words `9000` removed where the source is an APDU trace), and the tree it documents.
 */
const PUBLIC_VECTORS: ReadonlyArray<{ source: string; hex: string; tree: string }> = [
  {
    source: 'leonlynch/emv-utils README (via reference/emv.md)',
    hex: '701A9F390105571040123456789095D2512201197339300F82025900',
    tree: '70[9F39=05,57=40123456789095D2512201197339300F,82=5900]',
  },
  {
    source: 'devnied/EMV-NFC-Paycard-Enrollment test data, GPO response (via reference/emv.md)',
    hex: '7738 9F1007 06011A23804004 5713 4999999999999999D15092FFFFFFFFFFFFFF0F 8202 2000 9F3602 028F 9F2608 FFFFFFFFFFFFFFFF 9F6C02 1000',
    tree: '77[9F10=06011A23804004,57=4999999999999999D15092FFFFFFFFFFFFFF0F,82=2000,9F36=028F,9F26=FFFFFFFFFFFFFFFF,9F6C=1000]',
  },
  {
    source: 'moov-io/bertlv tlv_test.go TestEncodeDecode (FCI template)',
    hex: '6F2F840E325041592E5359532E4444463031A51DBF0C1A61184F07A0000000041010500A4D617374657263617264870101',
    tree: '6F[84=325041592E5359532E4444463031,A5[BF0C[61[4F=A0000000041010,50=4D617374657263617264,87=01]]]]',
  },
  {
    source: 'binaryfoo/emv-bertlv src/test/resources/cases/contact-visa-in.txt (SELECT response)',
    hex: '6f168407a0000000031010a50b5009564953412054455354',
    tree: '6F[84=A0000000031010,A5[50=564953412054455354]]',
  },
  {
    source:
      'binaryfoo/emv-bertlv src/test/resources/cases/contact-visa-in.txt (READ RECORD, track 2 equivalent)',
    hex: '703857104761340000000050d1712201125234515f20104341524420352f5649534120544553549f1f1031323532333030343531303030303030',
    tree: '70[57=4761340000000050D171220112523451,5F20=4341524420352F564953412054455354,9F1F=31323532333030343531303030303030]',
  },
  {
    source:
      'binaryfoo/emv-bertlv src/test/resources/cases/contact-mastercard-in.txt (GPO response, format 2)',
    hex: '771682025900941010020201180101002001010028010200',
    tree: '77[82=5900,94=10020201180101002001010028010200]',
  },
  {
    source: 'binaryfoo/emv-bertlv src/test/resources/cases/contact-mastercard-in.txt (GENERATE AC response)',
    hex: '77299f2701809f360200419f26084573436b1e4b95dd9f10120110a00009248400000000000000000029ff',
    tree: '77[9F27=80,9F36=0041,9F26=4573436B1E4B95DD,9F10=0110A00009248400000000000000000029FF]',
  },
  {
    source:
      'binaryfoo/emv-bertlv src/test/resources/cases/contact-mastercard-in.txt (READ RECORD, length form 81)',
    hex: '70818f5a0854133300896000445f24031412315f25030401015f280200565f3401018c219f02069f03069f090295055f2a029a039c019f37049f35019f45029f4c089f34038d0c910a8a0295059f37049f4c088e0c00000000000000005e031f039f0702ff009f080200029f0d0500000000009f0e0500000000009f0f0500000000009f420209789f4a0182df4f03123456',
    tree: '70[5A=5413330089600044,5F24=141231,5F25=040101,5F28=0056,5F34=01,8C=9F02069F03069F090295055F2A029A039C019F37049F35019F45029F4C089F3403,8D=910A8A0295059F37049F4C08,8E=00000000000000005E031F03,9F07=FF00,9F08=0002,9F0D=0000000000,9F0E=0000000000,9F0F=0000000000,9F42=0978,9F4A=82,DF4F=123456]',
  },
  {
    source:
      'binaryfoo/emv-bertlv src/test/java/io/github/binaryfoo/tlv/BerTlvTest.java testParseConstructed_1PrimitiveAnd2Constructed',
    hex: 'E00E9A0101EF049F1A0103EF038A01CC',
    tree: 'E0[9A=01,EF[9F1A=03],EF[8A=CC]]',
  },
  {
    source: 'binaryfoo/emv-bertlv BerTlvTest.java testParsePrimitive_Length314 (length form 82)',
    hex: `9F1A82013A${'00'.repeat(314)}`,
    tree: `9F1A=${'00'.repeat(314)}`,
  },
  {
    source: 'knovichikhin/pyemv tests/test_tlv.py test_decode_tag (three-byte tag)',
    hex: '9F820101FF',
    tree: '9F8201=FF',
  },
  {
    source: 'knovichikhin/pyemv tests/test_tlv.py test_decode_tag (length form 83)',
    hex: '9C83000001FF',
    tree: '9C=FF',
  },
  {
    source: 'knovichikhin/pyemv tests/test_tlv.py test_decode_tag (non-minimal form 81, empty value)',
    hex: '9C8100',
    tree: '9C=',
  },
  {
    source: 'knovichikhin/pyemv tests/test_tlv.py test_decode_nested',
    hex: '9F0201FFE0039F03009F0400',
    tree: '9F02=FF,E0[9F03=],9F04=',
  },
];

/**
 * Public inputs our strict decoder must refuse. Some of them a lenient parser in the cited project accepts; EMV
 * Book 3 Annex B allows neither the indefinite form `80` nor more than three length bytes, and a value may never be
 * shortened silently (reference/emv.md).
 */
const PUBLIC_REJECTS: ReadonlyArray<{ source: string; hex: string; code: string; offset: number }> = [
  {
    // DF9A03 is a complete three-byte tag with length 00; the 17 that follows declares 54 bytes that are not there.
    source: 'reference/emv.md (the input a well-known npm parser shortens silently)',
    hex: 'DF9A03001736',
    code: 'TLV_TRUNCATED_VALUE',
    offset: 4,
  },
  {
    source: 'knovichikhin/pyemv tests/test_tlv.py (missing tag byte)',
    hex: '9F',
    code: 'TLV_TRUNCATED_TAG',
    offset: 0,
  },
  {
    source: 'knovichikhin/pyemv tests/test_tlv.py (missing tag byte)',
    hex: '9FF0',
    code: 'TLV_TRUNCATED_TAG',
    offset: 0,
  },
  {
    source: 'knovichikhin/pyemv tests/test_tlv.py (missing length)',
    hex: '9C',
    code: 'TLV_TRUNCATED_LENGTH',
    offset: 0,
  },
  {
    source: 'knovichikhin/pyemv tests/test_tlv.py (missing length)',
    hex: '9C8200',
    code: 'TLV_TRUNCATED_LENGTH',
    offset: 0,
  },
  {
    source: 'knovichikhin/pyemv tests/test_tlv.py (missing data)',
    hex: '9C0200',
    code: 'TLV_TRUNCATED_VALUE',
    offset: 0,
  },
  {
    source: 'knovichikhin/pyemv tests/test_tlv.py (missing data)',
    hex: 'E001',
    code: 'TLV_TRUNCATED_VALUE',
    offset: 0,
  },
  {
    source: 'knovichikhin/pyemv tests/test_tlv.py (missing data inside a template)',
    hex: 'E0039C8101C001FF',
    code: 'TLV_TRUNCATED_VALUE',
    offset: 2,
  },
  {
    source: 'knovichikhin/pyemv tests/test_tlv.py (garbage after a complete object)',
    hex: '9C01FFAA',
    code: 'TLV_TRAILING_GARBAGE',
    offset: 3,
  },
  {
    source: 'knovichikhin/pyemv tests/test_tlv.py (accepted there as empty; indefinite length is not EMV)',
    hex: '9C80',
    code: 'TLV_BAD_LENGTH',
    offset: 1,
  },
  {
    source: 'knovichikhin/pyemv tests/test_tlv.py (accepted there; four length bytes are not EMV)',
    hex: '9C8400000001FF',
    code: 'TLV_BAD_LENGTH',
    offset: 1,
  },
  {
    source: 'moov-io/bertlv tlv_test.go TestDecode_OverflowLength',
    hex: '308930890000000000',
    code: 'TLV_BAD_LENGTH',
    offset: 1,
  },
  {
    source: 'binaryfoo/emv-bertlv BerTlvTest.java detailInExceptionForInsufficientBytes',
    hex: '918211',
    code: 'TLV_TRUNCATED_LENGTH',
    offset: 0,
  },
  {
    source: 'binaryfoo/emv-bertlv BerTlvTest.java detailInExceptionForNegativeLength',
    hex: '91FE4C94B779BC04',
    code: 'TLV_BAD_LENGTH',
    offset: 1,
  },
  {
    // Their lenient parseList accepts it: template 72 declares 69 bytes where 68 remain.
    source: 'binaryfoo/emv-bertlv BerTlvTest.java testHandlesZeroPadding',
    hex: '910A93D60A0F3CC53834303072459F180400004000860E04DA9F5809004B360CA0FF728F689F180400004000860E04DA9F580904B50F23328A5C788500000000000000000000000000000000000000000000',
    code: 'TLV_TRUNCATED_VALUE',
    offset: 12,
  },
];

describe('decodeTlv on public vectors', () => {
  it.each(PUBLIC_VECTORS)('decodes $source to its documented tree', ({ hex, tree }) => {
    expect(show(decodeHex(hex))).toBe(tree);
  });

  it.each(PUBLIC_VECTORS)('re-encodes $source to a list that decodes to the same tree', ({ hex }) => {
    const nodes = decodeHex(hex);
    expect(show(decodeTlv(encodeTlv(nodes)))).toBe(show(nodes));
  });

  it.each(PUBLIC_REJECTS)('rejects $hex ($source) with $code at offset $offset', ({ hex, code, offset }) => {
    const e = errorOf(() => decodeHex(hex));
    expect(e.code).toBe(code);
    expect(e.offset).toBe(offset);
  });
});

describe('decodeTlv', () => {
  it('returns an empty list for empty input and for padding only', () => {
    expect(decodeTlv(new Uint8Array())).toEqual([]);
    expect(decodeHex('000000')).toEqual([]);
    expect(decodeHex('00FFFF')).toEqual([]);
  });

  it('skips 00 padding before, between and after objects, also inside templates', () => {
    expect(show(decodeHex('00009A0325010100005F2A02082600007005000082000000'))).toBe(
      '9A=250101,5F2A=0826,70[82=]',
    );
    expect(show(decodeHex('70069F02020123FFFF'))).toBe('70[9F02=0123]');
  });

  it('treats FF as a tag byte unless only FF bytes remain', () => {
    expect(show(decodeHex('FFEE01039A0101FFFF'))).toBe('FFEE01[9A=01]');
  });

  it('reports the declared length, also for non-minimal length forms', () => {
    const [node] = decodeHex('9F02810600000000125000');
    expect(node?.length).toBe(6);
    expect(bytesToHex(node?.value ?? new Uint8Array())).toBe('000000001250');
  });

  it('copies values so that later changes to the input do not reach them', () => {
    const input = hexToBytes('5A0212345F');
    const [node] = decodeTlv(input.subarray(0, 4));
    input[2] = 0;
    expect(bytesToHex(node?.value ?? new Uint8Array())).toBe('1234');
  });

  it('rejects nesting deeper than maxDepth with the offset of the too-deep template', () => {
    const hex = 'E006E104E2029F00'.replace('9F00', '8100');
    expect(show(decodeHex(hex))).toBe('E0[E1[E2[81=]]]');
    const e = errorOf(() => decodeTlv(hexToBytes(hex), { maxDepth: 2 }));
    expect(e.code).toBe('TLV_TOO_DEEP');
    expect(e.offset).toBe(2);
  });

  it('accepts an empty or padding-only template at the depth limit, and nothing inside it', () => {
    expect(show(decodeTlv(hexToBytes('E000'), { maxDepth: 1 }))).toBe('E0[]');
    expect(show(decodeTlv(hexToBytes('E0020000'), { maxDepth: 1 }))).toBe('E0[]');
    expect(errorOf(() => decodeTlv(hexToBytes('E002E100'), { maxDepth: 1 })).code).toBe('TLV_TOO_DEEP');
  });

  it('rejects a default-depth bomb of nested templates without exhausting the stack', () => {
    let small = '8100';
    for (let i = 0; i < 60; i++) small = `E0${(small.length / 2).toString(16).padStart(2, '0')}${small}`;
    expect(errorOf(() => decodeHex(small)).code).toBe('TLV_TOO_DEEP');
  });

  it('rejects a tag longer than four bytes', () => {
    expect(errorOf(() => decodeHex('DF818181010100')).code).toBe('TLV_TAG_TOO_LONG');
  });

  it('quotes no byte of a value in its messages when a short length makes it read card data as tags and lengths', () => {
    // 5A (PAN 4761739001010119) and 57 (track 2 equivalent) whose lengths are cut short: the read, out of step, takes
    // digits of the card number and the expiry for a tag and a length, which the message must not repeat, in hex or
    // as the decimal length they make (errors.ts: messages name offsets, never values).
    const cases: ReadonlyArray<{ hex: string; code: string; offset: number; card: readonly string[] }> = [
      { hex: '5A02 4761 7390 0101 0119', code: 'TLV_BAD_LENGTH', offset: 5, card: ['73', '90'] },
      { hex: '5A01 47 6173 9001', code: 'TLV_TRUNCATED_VALUE', offset: 3, card: ['61', '73', '115'] },
      { hex: '5A01 47 6182 7390 01', code: 'TLV_TRUNCATED_VALUE', offset: 3, card: ['61', '82', '29584'] },
      { hex: '5A02 4761 73', code: 'TLV_TRAILING_GARBAGE', offset: 4, card: ['73'] },
      { hex: '5A02 4761 6182', code: 'TLV_TRAILING_GARBAGE', offset: 4, card: ['61', '82'] },
      {
        hex: '5708 4761739001010119 D22122011758928889',
        code: 'TLV_TRUNCATED_VALUE',
        offset: 10,
        card: ['D2', '33'],
      },
    ];
    for (const { hex, code, offset, card } of cases) {
      const e = errorOf(() => decodeHex(hex));
      expect({ hex, code: e.code, offset: e.offset }).toEqual({ hex, code, offset });
      const told = `${e.message} ${JSON.stringify(e)}`;
      for (const digits of card) expect(told, hex).not.toMatch(new RegExp(`\\b${digits}\\b`, 'i'));
    }
  });

  it('refuses a maxDepth outside 1-64 as a programming error', () => {
    expect(() => decodeTlv(new Uint8Array(), { maxDepth: 0 })).toThrow(RangeError);
    expect(() => decodeTlv(new Uint8Array(), { maxDepth: 65 })).toThrow(RangeError);
  });
});

describe('encodeTlv', () => {
  it('uses the shortest length form at each boundary (127, 128, 255, 256, 65535, 65536)', () => {
    const prefix = (n: number): string =>
      bytesToHex(encodeTlv([{ tag: '9F1A', length: 0, value: new Uint8Array(n) }])).slice(0, 14);
    expect(prefix(127).slice(0, 6)).toBe('9F1A7F');
    expect(prefix(128).slice(0, 8)).toBe('9F1A8180');
    expect(prefix(255).slice(0, 8)).toBe('9F1A81FF');
    expect(prefix(256).slice(0, 10)).toBe('9F1A820100');
    expect(prefix(65535).slice(0, 10)).toBe('9F1A82FFFF');
    expect(prefix(65536).slice(0, 12)).toBe('9F1A83010000');
  });

  it('recomputes lengths of templates from their children, ignoring the stated length', () => {
    const nodes: TlvNode[] = [
      {
        tag: 'E0',
        length: 99,
        children: [
          { tag: '9A', length: 0, value: hexToBytes('01') },
          { tag: 'EF', length: 0, children: [{ tag: '9F1A', length: 0, value: hexToBytes('03') }] },
        ],
      },
    ];
    // binaryfoo/emv-bertlv BerTlvTest.java testToBinary_1PrimitiveAnd1Constructed
    expect(bytesToHex(encodeTlv(nodes))).toBe('E0099A0101EF049F1A0103');
  });

  it('encodes pyemv test_encode rows byte for byte', () => {
    // knovichikhin/pyemv tests/test_tlv.py test_encode
    expect(bytesToHex(encodeTlv([{ tag: '9F8001', length: 0, value: hexToBytes('FF') }]))).toBe('9F800101FF');
    expect(bytesToHex(encodeTlv([{ tag: 'E0', length: 0, children: [] }]))).toBe('E000');
    expect(
      bytesToHex(
        encodeTlv([
          { tag: 'E0', length: 0, children: [{ tag: '9F00', length: 0, value: hexToBytes('FF') }] },
          { tag: '9C', length: 0, value: hexToBytes('FF') },
        ]),
      ),
    ).toBe('E0049F0001FF9C01FF');
  });

  it.each([
    ['lower-case hex', { tag: '9f02', length: 0, value: new Uint8Array(1) }],
    ['a tag of 00', { tag: '00', length: 0, value: new Uint8Array(1) }],
    ['a multi-byte tag cut short', { tag: '9F', length: 0, value: new Uint8Array(1) }],
    ['a continuation after the last tag byte', { tag: '9F0001', length: 0, value: new Uint8Array(1) }],
    ['bytes after a one-byte tag', { tag: '9A01', length: 0, value: new Uint8Array(1) }],
    ['a value on a constructed tag', { tag: '70', length: 0, value: new Uint8Array(1) }],
    ['children on a primitive tag', { tag: '9A', length: 0, children: [] }],
    ['neither value nor children', { tag: '9A', length: 0 }],
    ['both value and children', { tag: '70', length: 0, value: new Uint8Array(1), children: [] }],
    ['a five-byte tag', { tag: '9F81818101', length: 0, value: new Uint8Array(1) }],
  ] as Array<[string, TlvNode]>)('rejects a node with %s as TLV_BAD_NODE', (_why, node) => {
    const e = errorOf(() => encodeTlv([node]));
    expect(e.code).toBe('TLV_BAD_NODE');
    expect(e.offset).toBe(-1);
  });

  it('rejects a value longer than the 83 form can carry', () => {
    expect(errorOf(() => encodeTlv([{ tag: '9A', length: 0, value: new Uint8Array(0x1000000) }])).code).toBe(
      'TLV_BAD_NODE',
    );
  });
});

describe('flattenTlv and findTlv', () => {
  const nodes = decodeHex('9F0201FFE0039F03009F0400');

  it('lists primitive objects depth first, templates replaced by their contents', () => {
    expect(flattenTlv(nodes).map((e) => `${e.tag}=${bytesToHex(e.value)}`)).toEqual([
      '9F02=FF',
      '9F03=',
      '9F04=',
    ]);
  });

  it('finds a primitive inside a template and returns undefined for an absent tag', () => {
    expect(findTlv(nodes, '9F03')).toEqual(new Uint8Array());
    expect(findTlv(nodes, '9F05')).toBeUndefined();
  });
});

describe('tagBytes', () => {
  it('returns the bytes of a well-formed tag', () => {
    expect(bytesToHex(tagBytes('DF9A03'))).toBe('DF9A03');
  });
});
