import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TlvError } from './errors.js';
import { bytesToHex, hexToBytes } from './hex.js';
import { decodeTlv, encodeTlv, flattenTlv, visitTlvPrimitives, type TlvNode } from './tlv.js';
import { xorshift32 } from './testing/xorshift.js';

/** A well-formed tag (EMV Book 3 Annex B1) whose constructed bit matches `constructed`. */
function tagArb(constructed: boolean): fc.Arbitrary<string> {
  const cbit = constructed ? 0x20 : 0;
  const single = fc
    .tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 30 }))
    .map(([cls, num]) => (cls << 6) | cbit | num)
    .filter((b) => b !== 0x00)
    .map((b) => [b]);
  const multi = fc
    .tuple(
      fc.integer({ min: 0, max: 3 }),
      fc.array(fc.integer({ min: 0x80, max: 0xff }), { maxLength: 2 }),
      fc.integer({ min: 0, max: 0x7f }),
    )
    .map(([cls, middle, last]) => [(cls << 6) | cbit | 0x1f, ...middle, last]);
  return fc.oneof(single, multi).map((bytes) => bytesToHex(Uint8Array.from(bytes)));
}

const treeArb = fc.letrec<{ node: TlvNode; list: TlvNode[] }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc
      .tuple(tagArb(false), fc.uint8Array({ maxLength: 300 }))
      .map(([tag, value]): TlvNode => ({ tag, length: value.length, value })),
    fc.tuple(tagArb(true), tie('list')).map(([tag, children]): TlvNode => ({ tag, length: 0, children })),
  ),
  list: fc.array(tie('node'), { maxLength: 4 }),
})).list;

/** The tree without `length`, values as hex: what a round trip must preserve. */
function shape(nodes: readonly TlvNode[]): unknown {
  return nodes.map((n) =>
    n.children ? { tag: n.tag, children: shape(n.children) } : { tag: n.tag, value: bytesToHex(n.value!) },
  );
}

/** Every decoded node's `length` equals the byte size of its value or encoded children. */
function lengthsConsistent(nodes: readonly TlvNode[]): boolean {
  return nodes.every((n) =>
    n.children
      ? n.length === encodeTlv(n.children).length && lengthsConsistent(n.children)
      : n.length === n.value!.length,
  );
}

describe('BER-TLV round trip (property)', () => {
  it('decode(encode(tree)) equals the tree for random trees', () => {
    fc.assert(
      fc.property(treeArb, (tree) => {
        const decoded = decodeTlv(encodeTlv(tree), { maxDepth: 64 });
        expect(shape(decoded)).toEqual(shape(tree));
        expect(lengthsConsistent(decoded)).toBe(true);
      }),
      { numRuns: 500, seed: 0x5eed },
    );
  });

  it('encode(decode(bytes)) is a fixed point after one normalisation', () => {
    fc.assert(
      fc.property(treeArb, (tree) => {
        const once = encodeTlv(tree);
        expect(bytesToHex(encodeTlv(decodeTlv(once, { maxDepth: 64 })))).toBe(bytesToHex(once));
      }),
      { numRuns: 300, seed: 0xbeef },
    );
  });
});

/** What {@link visitTlvPrimitives} reports of `bytes`: the primitives as flattenTlv lists them, or the error. */
function visited(bytes: Uint8Array): unknown {
  const out: { tag: string; value: string }[] = [];
  try {
    visitTlvPrimitives(bytes, (tag, start, end) =>
      out.push({ tag, value: bytesToHex(bytes.slice(start, end)) }),
    );
  } catch (e) {
    if (!(e instanceof TlvError)) throw e;
    return { code: e.code, offset: e.offset, message: e.message };
  }
  return out;
}

/** The same of decodeTlv and flattenTlv. */
function flattened(bytes: Uint8Array): unknown {
  try {
    return flattenTlv(decodeTlv(bytes)).map((e) => ({ tag: e.tag, value: bytesToHex(e.value) }));
  } catch (e) {
    if (!(e instanceof TlvError)) throw e;
    return { code: e.code, offset: e.offset, message: e.message };
  }
}

describe('visitTlvPrimitives (property)', () => {
  it('reports what flattenTlv(decodeTlv(bytes)) lists, or the same TlvError, for trees and for random bytes', () => {
    fc.assert(
      fc.property(treeArb, (tree) => {
        const bytes = encodeTlv(tree);
        expect(visited(bytes)).toEqual(flattened(bytes));
      }),
      { numRuns: 300, seed: 0xfeed },
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        expect(visited(bytes)).toEqual(flattened(bytes));
      }),
      { numRuns: 3000, seed: 0xface },
    );
  });
});

const SEEDS = [
  '701A9F390105571040123456789095D2512201197339300F82025900',
  '77299F2701809F360200419F26084573436B1E4B95DD9F10120110A00009248400000000000000000029FF',
  '6F2F840E325041592E5359532E4444463031A51DBF0C1A61184F07A0000000041010500A4D617374657263617264870101',
  '9F1A82013A' + '00'.repeat(314),
  'E00E9A0101EF049F1A0103EF038A01CC',
  'DF9A03001736',
].map(hexToBytes);

/**
 * How many inputs the fuzz run decodes: a seeded 200,000 in the test suite; the soak sets `TLV_FUZZ_INPUTS` (README,
 * "Soaks"), e.g. 10,000,000, with the same seed and generator, so that the suite's inputs are the soak's first ones.
 */
const FUZZ_INPUTS = Number(process.env['TLV_FUZZ_INPUTS'] ?? 200_000);

describe('BER-TLV fuzz', () => {
  it(
    `answers ${FUZZ_INPUTS.toLocaleString('en')} random and mutated inputs with a tree or a TlvError, never anything else`,
    () => {
      const next = xorshift32(0xc0ffee);
      const total = FUZZ_INPUTS;
      let errors = 0;
      let trees = 0;
      const buf = new Uint8Array(400);
      for (let i = 0; i < total; i++) {
        let input: Uint8Array;
        if (i % 2 === 0) {
          // Random bytes, biased towards the bytes that matter to the grammar (tag and length markers, padding).
          const len = next() % 48;
          for (let j = 0; j < len; j++) {
            const r = next();
            const special = [0x00, 0x1f, 0x20, 0x7f, 0x80, 0x81, 0x82, 0x83, 0x84, 0x9f, 0xbf, 0xdf, 0xff];
            buf[j] = r % 3 === 0 ? (special[(r >>> 8) % special.length] as number) : (r >>> 16) & 0xff;
          }
          input = buf.subarray(0, len);
        } else {
          // A public vector with 1-3 mutations: flipped bit, replaced byte, truncation, or duplicated slice.
          const seed = SEEDS[next() % SEEDS.length] as Uint8Array;
          let m = Uint8Array.from(seed);
          const mutations = 1 + (next() % 3);
          for (let k = 0; k < mutations && m.length > 0; k++) {
            const pos = next() % m.length;
            switch (next() % 4) {
              case 0:
                m[pos] = (m[pos] as number) ^ (1 << (next() % 8));
                break;
              case 1:
                m[pos] = next() & 0xff;
                break;
              case 2:
                m = m.slice(0, pos);
                break;
              default: {
                const extra = m.slice(pos, pos + (next() % 8));
                const grown = new Uint8Array(m.length + extra.length);
                grown.set(m);
                grown.set(extra, m.length);
                m = grown;
              }
            }
          }
          input = m;
        }
        try {
          const nodes = decodeTlv(input);
          trees++;
          // What decodes must re-encode to something that decodes to the same tree.
          if (i % 16 === 1) expect(shape(decodeTlv(encodeTlv(nodes)))).toEqual(shape(nodes));
        } catch (e) {
          if (!(e instanceof TlvError)) throw e;
          if (e.offset < 0 || e.offset > input.length)
            throw new Error(`offset ${e.offset} outside the input`);
          errors++;
        }
      }
      expect(trees + errors).toBe(total);
      // Both outcomes must be exercised, or the generator is not testing the parser.
      expect(trees).toBeGreaterThan(total / 100);
      expect(errors).toBeGreaterThan(total / 100);
      // A soak of millions runs for minutes: its timeout grows with it (the suite's default is 30 s).
    },
    Math.max(30_000, FUZZ_INPUTS / 10),
  );
});
