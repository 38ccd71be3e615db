/**
 * `tlv.decode` and `tlv.encode`: our BER-TLV codec against node-tlv and ber-tlv, measured side by side in the same
 * run on the same realistic field 55 payload (a 200–300-byte contact EMV tag set). Decode: wire bytes → tree.
 * Encode: tag/value pairs → wire bytes (each library from its own input form, built outside the timed loop where the
 * library allows it; node-tlv computes its encoding in the constructor, so constructing is part of its encode).
 */
import { createRequire } from 'node:module';
import { decodeTlv, encodeTlv, hexToBytes, type TlvNode } from '../src/emv/index.js';
import { ratioOf, type Benchmark, type BenchOptions, type BenchResult } from './types.js';

interface NodeTlvItem {
  getTLV(): string;
  getChild(): NodeTlvItem[];
}
interface NodeTlvModule {
  new (tag: string, value: string | Buffer): NodeTlvItem;
  parseList(data: Buffer | string): NodeTlvItem[];
}
interface BerTlvItem {
  tag: string;
}
interface BerTlvModule {
  TlvFactory: {
    primitiveTlv(tag: string, value: Buffer): BerTlvItem;
    parse(data: Buffer): BerTlvItem[];
    serialize(items: BerTlvItem[]): Buffer;
  };
}

const require = createRequire(import.meta.url);
const NodeTlv = require('node-tlv') as NodeTlvModule;
const BerTlv = require('ber-tlv') as BerTlvModule;

/**
 * A contact Mastercard authorization's field 55 as a terminal sends it (values after binaryfoo/emv-bertlv
 * contact-mastercard-in.txt, plus the terminal-sourced tags).
 */
export const FIELD_55_HEX = [
  '9F2608 4573436B1E4B95DD',
  '9F2701 80',
  '9F1012 0110A00009248400000000000000000029FF',
  '9F3704 8221F601',
  '9F3602 0041',
  '9505 0000008000',
  '9A03 250314',
  '9C01 00',
  '9F0206 000000001250',
  '5F2A02 0826',
  '8202 5900',
  '9F1A02 0826',
  '9F0306 000000000000',
  '9F3303 6008C8',
  '9F3403 1F0302',
  '9F3501 25',
  '9F1E08 3132333435363738',
  '8407 A0000000041010',
  '9F0902 0002',
  '9F4104 00000123',
  '5F3401 01',
  '4F07 A0000000041010',
  '500A 4D415354455243415244',
  '9F120A 4D415354455243415244',
  '9F6E05 2070000000',
  '9F0D05 B050BC8000',
  '9F0E05 0000000000',
  '9F0F05 B070BC9800',
  '9F5301 52',
  '9F7C14 0000000000000000000000000000000000000000',
  '9F0702 FF00',
  '9F0802 0002',
  '9F4005 F000F0A001',
].join(' ');

export const FIELD_55 = hexToBytes(FIELD_55_HEX);

/** A sink the optimiser cannot see through, so that no timed call is eliminated. */
let sink = 0;

/** One sample of a contender: operations per second and CPU µs per operation. */
interface Sample {
  opsPerSecond: number;
  cpuMicrosPerOp: number;
}

/**
 * ops/s and CPU µs per op of `fn` over `targetMs` of wall time, in batches so that reading the clock does not
 * dominate.
 */
function measure(fn: () => number, targetMs: number): Sample {
  const batch = 64;
  let iterations = 0;
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(Math.round(targetMs * 1e6));
  let now = start;
  while (now < deadline) {
    for (let i = 0; i < batch; i++) sink += fn();
    iterations += batch;
    now = process.hrtime.bigint();
  }
  const used = process.cpuUsage(cpu);
  return {
    opsPerSecond: iterations / (Number(now - start) / 1e9),
    cpuMicrosPerOp: (used.user + used.system) / iterations,
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
}

/**
 * Runs every contender for `rounds` interleaved rounds (so that machine noise hits all of them alike) and returns
 * the median ops/s and the median CPU µs per op of each.
 */
function compare(contenders: Record<string, () => number>, options: BenchOptions): Record<string, Sample> {
  const rounds = options.quick ? 1 : 5;
  const targetMs = options.quick ? 40 : 300;
  const samples: Record<string, Sample[]> = {};
  for (const [name, fn] of Object.entries(contenders)) {
    measure(fn, targetMs / 4); // warm-up: let the JIT settle before the first sample
    samples[name] = [];
  }
  for (let r = 0; r < rounds; r++)
    for (const [name, fn] of Object.entries(contenders)) samples[name]?.push(measure(fn, targetMs));
  return Object.fromEntries(
    Object.entries(samples).map(([name, xs]) => [
      name,
      {
        opsPerSecond: median(xs.map((x) => x.opsPerSecond)),
        cpuMicrosPerOp: median(xs.map((x) => x.cpuMicrosPerOp)),
      },
    ]),
  );
}

const NONE: Sample = { opsPerSecond: 0, cpuMicrosPerOp: 0 };

/** CPU µs per op, to the hundredth (a decode costs a few microseconds). */
function micros(x: number): number {
  return Math.round(x * 100) / 100;
}

function results(
  name: string,
  figures: Record<string, Sample>,
  extra: Record<string, number | string>,
): BenchResult[] {
  const ours = figures.ours ?? NONE;
  return (['node-tlv', 'ber-tlv'] as const).map((peer) => {
    const theirs = figures[peer] ?? NONE;
    return {
      name,
      unit: 'ops/s',
      ours: Math.round(ours.opsPerSecond),
      peer,
      peerValue: Math.round(theirs.opsPerSecond),
      ratio: ratioOf(ours.opsPerSecond, theirs.opsPerSecond, true),
      cpuMicrosPerOp: micros(ours.cpuMicrosPerOp),
      peerCpuMicrosPerOp: micros(theirs.cpuMicrosPerOp),
      extra,
    };
  });
}

/** Before timing, every contender must read the payload as the same list of objects. */
function checkSameDecode(): number {
  const ours = decodeTlv(FIELD_55).length;
  const nodeTlv = NodeTlv.parseList(Buffer.from(FIELD_55)).length;
  const berTlv = BerTlv.TlvFactory.parse(Buffer.from(FIELD_55)).length;
  if (ours !== nodeTlv || ours !== berTlv)
    throw new Error(`contenders disagree on the payload: ${ours} / ${nodeTlv} / ${berTlv} objects`);
  return ours;
}

const decodeBench: Benchmark = {
  name: 'tlv.decode',
  description:
    'decodes per second of a 258-byte field 55 (33 objects); peers node-tlv and ber-tlv on the same bytes. CPU-bound.',
  run(options) {
    const objects = checkSameDecode();
    const input = Buffer.from(FIELD_55);
    const figures = compare(
      {
        ours: () => decodeTlv(input).length,
        'node-tlv': () => NodeTlv.parseList(input).length,
        'ber-tlv': () => BerTlv.TlvFactory.parse(input).length,
      },
      options,
    );
    return Promise.resolve(results('tlv.decode', figures, { bytes: FIELD_55.length, objects }));
  },
};

const encodeBench: Benchmark = {
  name: 'tlv.encode',
  description: 'encodes per second of the same 33 objects; peers node-tlv and ber-tlv. CPU-bound.',
  run(options) {
    const objects = checkSameDecode();
    const nodes: TlvNode[] = decodeTlv(FIELD_55);
    const pairs = nodes.map((n) => ({ tag: n.tag, value: Buffer.from(n.value ?? new Uint8Array()) }));
    const hexPairs = pairs.map((p) => ({ tag: p.tag, value: p.value.toString('hex').toUpperCase() }));
    const berItems = pairs.map((p) => BerTlv.TlvFactory.primitiveTlv(p.tag, p.value));
    const expected = Buffer.from(FIELD_55).toString('hex').toUpperCase();
    const same =
      Buffer.from(encodeTlv(nodes)).toString('hex').toUpperCase() === expected &&
      hexPairs
        .map((p) => new NodeTlv(p.tag, p.value).getTLV())
        .join('')
        .toUpperCase() === expected &&
      BerTlv.TlvFactory.serialize(berItems).toString('hex').toUpperCase() === expected;
    if (!same) throw new Error('contenders do not encode the payload to the same bytes');
    const figures = compare(
      {
        ours: () => encodeTlv(nodes).length,
        'node-tlv': () => {
          let n = 0;
          for (const p of hexPairs) n += new NodeTlv(p.tag, p.value).getTLV().length;
          return n;
        },
        'ber-tlv': () => BerTlv.TlvFactory.serialize(berItems).length,
      },
      options,
    );
    return Promise.resolve(results('tlv.encode', figures, { bytes: FIELD_55.length, objects }));
  },
};

export const benchmarks: Benchmark[] = [decodeBench, encodeBench];

/** Exposed so that the sink is observable; reading it keeps the timed calls alive. */
export function benchSink(): number {
  return sink;
}
