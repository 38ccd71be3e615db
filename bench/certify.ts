/**
 * `certify.check`: message-level validation throughput of `certify check` (issue 12, "Benchmark: certify check of
 * 10,000 messages"). The corpus is 10,000 captured-looking messages of compliant parking sessions — an unattended
 * contact pre-authorization and its capture; an attended sale, its refund and the refund's void; an account
 * verification, a contactless pre-authorization, an incremental authorization and the capture — replicated with fresh
 * transactionIds and gateway ids, each session serialised as the JSON a capture file holds.
 *
 * Every contender starts from the same bytes (one JSON text per session) and must read them:
 * - ours: `JSON.parse` + `checkSession` (every rule: data element, cross-edit, interchange compliance with the session
 *   state, data mapping, DCC);
 * - the named peer at its fastest setting: Ajv validating each message against a JSON Schema of the same requests
 *   (required fields, formats and value sets per route), compiled once, `allErrors: false` — field checks only: no
 *   EMV decoding, no cross-field or cross-message rule, which is where most of our work goes;
 * - the physical floor: `JSON.parse` alone, the cost any validator reading those bytes pays.
 * Reported: messages per second (median of interleaved rounds) and CPU microseconds per message of each.
 */
import { createRequire } from 'node:module';
import type { ValidateFunction } from 'ajv';
import { checkSession } from '../certification/check.js';
import { RULES } from '../certification/rules/index.js';
import { ratioOf, type Benchmark, type BenchOptions, type BenchResult } from './types.js';

interface AjvInstance {
  compile(schema: object): ValidateFunction;
}
type AjvConstructor = new (options: { allErrors: boolean; strict: boolean }) => AjvInstance;

const require = createRequire(import.meta.url);
const ajvModule = require('ajv') as { default: AjvConstructor };
const AJV_VERSION = (require('ajv/package.json') as { version: string }).version;

/** Messages validated per round in a full run. */
export const CORPUS_MESSAGES = 10_000;

type Json = Record<string, unknown>;
interface Message {
  method: string;
  path: string;
  body: Json;
  response?: Json;
}

/** One primitive BER-TLV element (tags and values here are short: one length byte). */
function tlv(tag: string, valueHex: string): string {
  return `${tag}${(valueHex.length / 2).toString(16).padStart(2, '0').toUpperCase()}${valueHex}`;
}

/** A chip read's tag set (spec 001 EMV table: every tag mandatory for N1 and N2), amount in minor units. */
function chipTags(amountMinor: number, aid: string, entry: '05' | '07'): string {
  return [
    tlv('9A', '261124'),
    tlv('9C', '00'),
    tlv('5F2A', '0826'),
    tlv('9F1A', '0826'),
    tlv('9F02', String(amountMinor).padStart(12, '0')),
    tlv('9F03', '000000000000'),
    tlv('5F34', '01'),
    tlv('9F36', '0041'),
    tlv('82', '5900'),
    tlv('84', aid),
    tlv('95', '0000008000'),
    tlv('9F10', '0110A00009248400000000000000000029FF'),
    tlv('9F26', '4573436B1E4B95DD'),
    tlv('9F27', '80'),
    tlv('9F33', 'E0F8C8'),
    tlv('9F34', '1F0302'),
    tlv('9F37', '8221F601'),
    tlv('9F39', entry),
  ].join('');
}

const VISA_AID = 'A0000000031010';
const MASTERCARD_AID = 'A0000000041010';
const PARTNER = { developerId: '123456', solutionId: 'PARKSOL1', thirdPartyCertificationNumber: 'TPCN0001' };
const LOCAL_TIME = '20261124101500';

function reference(code: string, comments: string, transactionId?: string): Json {
  return {
    code,
    comments,
    ...(transactionId !== undefined ? { transactionId } : {}),
    partner: PARTNER,
  };
}

interface Ids {
  /** A new clientReferenceInformation.transactionId. */
  tx(): string;
  /** A new gateway id (22 digits, as the gateway answers). */
  gw(): string;
}

function authorization(
  ids: Ids,
  comments: string,
  amount: string,
  card: { type: '001' | '002'; entryMode: 'contact' | 'contactless'; attended: boolean },
  capture: boolean,
): Message {
  const minor = Number(amount.replace('.', ''));
  const aid = card.type === '001' ? VISA_AID : MASTERCARD_AID;
  const track =
    card.type === '001' ? ';4761739001010119=28122011973393000?' : ';5413339000001513=28122011973393000?';
  return {
    method: 'POST',
    path: '/pts/v2/payments',
    body: {
      clientReferenceInformation: reference('PT000001-0001', comments, ids.tx()),
      processingInformation: {
        commerceIndicator: 'retail',
        authorizationOptions: { authIndicator: '0' },
        ...(capture ? { capture: true } : {}),
      },
      paymentInformation: {
        card: { type: card.type },
        ...(card.attended ? { initiationChannel: '00' } : {}),
      },
      orderInformation: { amountDetails: { totalAmount: amount, currency: 'GBP' } },
      pointOfSaleInformation: {
        entryMode: card.entryMode,
        terminalCapability: card.entryMode === 'contact' ? 4 : 5,
        terminalPinCapability: 0,
        catLevel: card.attended ? 6 : 2,
        terminalId: 'PT000001',
        operatingEnvironment: card.attended ? '3' : '2',
        ...(card.attended && card.type === '002' ? { isDedicatedHardwareTerminal: '1' } : {}),
        serviceCode: '201',
        trackData: track,
        emv: {
          tags: chipTags(minor, aid, card.entryMode === 'contact' ? '05' : '07'),
          cardSequenceNumber: '1',
        },
      },
      merchantInformation: { transactionLocalDateTime: LOCAL_TIME, categoryCode: '7523' },
    },
    response: {
      id: ids.gw(),
      status: 'AUTHORIZED',
      orderInformation: { amountDetails: { authorizedAmount: amount, currency: 'GBP' } },
    },
  };
}

function idOf(m: Message): string {
  return String(m.response?.id);
}

function capture(ids: Ids, auth: Message, amount: string, comments: string, tags?: string): Message {
  return {
    method: 'POST',
    path: `/pts/v2/payments/${idOf(auth)}/captures`,
    body: {
      clientReferenceInformation: reference('PT000001-0001', comments, ids.tx()),
      orderInformation: { amountDetails: { totalAmount: amount, currency: 'GBP' } },
      ...(tags !== undefined ? { pointOfSaleInformation: { emv: { tags } } } : {}),
    },
    response: { id: ids.gw(), status: 'PENDING' },
  };
}

/** The three sessions of one replication, with fresh ids: 9 messages. */
function replication(ids: Ids): Message[][] {
  // Unattended meter, N2 contact: pre-authorize the maximum stay, capture the actual one (less than authorized).
  const meterAuth = authorization(
    ids,
    'Parking Auth',
    '12.00',
    { type: '001', entryMode: 'contact', attended: false },
    false,
  );
  const meterTags = (meterAuth.body.pointOfSaleInformation as { emv: { tags: string } }).emv.tags;
  const meter = [meterAuth, capture(ids, meterAuth, '8.50', 'Parking Capture Less Than Auth', meterTags)];
  // Attended mobile sale, N1 contact; refunded, and the refund voided.
  const sale = authorization(
    ids,
    'Parking Sale',
    '12.50',
    { type: '002', entryMode: 'contact', attended: true },
    true,
  );
  const refund: Message = {
    method: 'POST',
    path: `/pts/v2/payments/${idOf(sale)}/refunds`,
    body: {
      clientReferenceInformation: reference('PT000001-0002', 'REFUND Payment', ids.tx()),
      orderInformation: { amountDetails: { totalAmount: '12.50', currency: 'GBP' } },
    },
    response: { id: ids.gw(), status: 'PENDING' },
  };
  const refundVoid: Message = {
    method: 'POST',
    path: `/pts/v2/refunds/${idOf(refund)}/voids`,
    body: { clientReferenceInformation: reference('PT000001-0002', 'VOID Refund') },
    response: { id: ids.gw(), status: 'VOIDED' },
  };
  // Tap-and-go, N2 contactless: verify the account at entry, pre-authorize, extend, capture at exit.
  const avr = authorization(
    ids,
    'Parking AVR',
    '0.00',
    { type: '001', entryMode: 'contactless', attended: false },
    false,
  );
  const gateAuth = authorization(
    ids,
    'Parking Auth',
    '20.00',
    { type: '001', entryMode: 'contactless', attended: false },
    false,
  );
  const incremental: Message = {
    method: 'PATCH',
    path: `/pts/v2/payments/${idOf(gateAuth)}`,
    body: {
      clientReferenceInformation: reference('PT000001-0003', 'Parking Incremental Auth', ids.tx()),
      processingInformation: { authorizationOptions: { initiator: { storedCredentialUsed: true } } },
      orderInformation: { amountDetails: { additionalAmount: '5.00', currency: 'GBP' } },
      merchantInformation: { transactionLocalDateTime: LOCAL_TIME },
    },
    response: {
      id: ids.gw(),
      status: 'AUTHORIZED',
      orderInformation: { amountDetails: { authorizedAmount: '25.00', currency: 'GBP' } },
    },
  };
  const gate = [
    avr,
    gateAuth,
    incremental,
    capture(ids, gateAuth, '22.00', 'Parking Capture Less Than Auth'),
  ];
  return [meter, [sale, refund, refundVoid], gate];
}

/** `count` messages of compliant sessions, each session as the JSON text of a capture file's message array. */
export function buildCorpus(count: number): { sessions: string[]; messages: number } {
  let tx = 0;
  let gw = 0;
  const ids: Ids = {
    tx: () => `T${(tx++).toString(36).toUpperCase().padStart(8, '0')}`,
    gw: () => `70${String(gw++).padStart(20, '0')}`,
  };
  const sessions: string[] = [];
  let messages = 0;
  while (messages < count) {
    for (const session of replication(ids)) {
      const part = session.slice(0, count - messages);
      if (part.length === 0) break;
      sessions.push(JSON.stringify(part));
      messages += part.length;
    }
  }
  return { sessions, messages };
}

/** The JSON Schema of the same requests: per route, the required fields, formats and value sets. */
export function requestSchema(): object {
  const amount = { type: 'string', pattern: '^\\d+\\.\\d{2}$' };
  const currency = { type: 'string', pattern: '^[A-Z]{3}$' };
  const partner = {
    type: 'object',
    required: ['developerId', 'solutionId', 'thirdPartyCertificationNumber'],
    properties: {
      developerId: { type: 'string', minLength: 1 },
      solutionId: { type: 'string', minLength: 1 },
      thirdPartyCertificationNumber: { type: 'string', minLength: 1 },
    },
  };
  const ref = (comments: string[], transactionId: boolean): object => ({
    type: 'object',
    required: ['code', 'comments', ...(transactionId ? ['transactionId'] : [])],
    properties: {
      code: { type: 'string', minLength: 1 },
      comments: { enum: comments },
      transactionId: { type: 'string', minLength: 1, maxLength: 50 },
      partner,
    },
  });
  const amountDetails = (amountField: string): object => ({
    type: 'object',
    required: ['orderInformation'],
    properties: {
      orderInformation: {
        type: 'object',
        required: ['amountDetails'],
        properties: {
          amountDetails: {
            type: 'object',
            required: [amountField, 'currency'],
            properties: { [amountField]: amount, currency },
          },
        },
      },
    },
  });
  const tags = { type: 'string', pattern: '^(?:[0-9A-F]{2})+$' };
  const localDateTime = {
    type: 'object',
    required: ['transactionLocalDateTime'],
    properties: {
      transactionLocalDateTime: {
        type: 'string',
        pattern: '^20\\d{2}(0[1-9]|1[0-2])(0[1-9]|[12]\\d|3[01])([01]\\d|2[0-3])[0-5]\\d[0-5]\\d$',
      },
      categoryCode: { const: '7523' },
    },
  };
  const original = {
    type: 'object',
    required: [
      'clientReferenceInformation',
      'processingInformation',
      'paymentInformation',
      'orderInformation',
      'pointOfSaleInformation',
      'merchantInformation',
    ],
    allOf: [amountDetails('totalAmount')],
    properties: {
      clientReferenceInformation: ref(
        ['Parking AVR', 'Parking Auth', 'Parking Authorization', 'Parking Sale'],
        true,
      ),
      processingInformation: {
        type: 'object',
        required: ['commerceIndicator', 'authorizationOptions'],
        properties: {
          commerceIndicator: { const: 'retail' },
          capture: { type: 'boolean' },
          authorizationOptions: {
            type: 'object',
            required: ['authIndicator'],
            properties: { authIndicator: { enum: ['0', '1'] } },
          },
        },
      },
      paymentInformation: {
        type: 'object',
        required: ['card'],
        properties: {
          card: { type: 'object', required: ['type'], properties: { type: { enum: ['001', '002'] } } },
          initiationChannel: { type: 'string', pattern: '^\\d{2}$' },
        },
      },
      pointOfSaleInformation: {
        type: 'object',
        required: ['entryMode', 'terminalCapability', 'terminalPinCapability', 'catLevel'],
        properties: {
          entryMode: { enum: ['contact', 'contactless', 'swiped', 'msd'] },
          terminalCapability: { enum: [1, 2, 3, 4, 5, '1', '2', '3', '4', '5'] },
          terminalPinCapability: { type: ['integer', 'string'] },
          catLevel: { enum: [2, 6, '2', '6'] },
          operatingEnvironment: { enum: ['1', '2', '3', '4'] },
          isDedicatedHardwareTerminal: { enum: ['0', '1'] },
          serviceCode: { type: 'string', pattern: '^\\d{3}$' },
          trackData: { type: 'string', minLength: 1 },
          emv: {
            type: 'object',
            properties: { tags, cardSequenceNumber: { type: 'string', pattern: '^\\d{1,3}$' } },
          },
        },
      },
      merchantInformation: localDateTime,
    },
  };
  const followOn = (comments: string[], amountField: string, transactionId: boolean): object => ({
    type: 'object',
    required: ['clientReferenceInformation', 'orderInformation'],
    allOf: [amountDetails(amountField)],
    properties: {
      clientReferenceInformation: ref(comments, transactionId),
      pointOfSaleInformation: {
        type: 'object',
        properties: { emv: { type: 'object', properties: { tags } } },
      },
    },
  });
  const routes: Array<{ method: string; path: string; body: object }> = [
    { method: 'POST', path: '^/pts/v2/payments$', body: original },
    {
      method: 'PATCH',
      path: '^/pts/v2/payments/\\d+$',
      body: {
        ...(followOn(['Parking Incremental Auth'], 'additionalAmount', true) as Json),
        required: ['clientReferenceInformation', 'orderInformation', 'merchantInformation'],
        properties: {
          clientReferenceInformation: ref(['Parking Incremental Auth'], true),
          merchantInformation: localDateTime,
        },
      },
    },
    {
      method: 'POST',
      path: '^/pts/v2/payments/\\d+/captures$',
      body: followOn(['Parking Capture', 'Parking Capture Less Than Auth'], 'totalAmount', true),
    },
    {
      method: 'POST',
      path: '^/pts/v2/(payments|captures)/\\d+/refunds$',
      body: followOn(['REFUND Capture', 'REFUND Payment'], 'totalAmount', true),
    },
    {
      method: 'POST',
      path: '^/pts/v2/payments/\\d+/reversals$',
      body: {
        type: 'object',
        required: ['clientReferenceInformation', 'orderInformation', 'reversalInformation'],
        properties: { clientReferenceInformation: ref(['REVERSAL'], false) },
      },
    },
    {
      method: 'POST',
      path: '^/pts/v2/(payments|captures|refunds|credits)/\\d+/voids$',
      body: {
        type: 'object',
        required: ['clientReferenceInformation'],
        properties: {
          clientReferenceInformation: ref(
            ['VOID Capture', 'VOID Payment', 'VOID Refund', 'VOID Credit'],
            false,
          ),
        },
      },
    },
  ];
  return {
    type: 'object',
    required: ['method', 'path', 'body'],
    properties: { method: { enum: ['POST', 'PATCH'] }, path: { type: 'string' }, body: { type: 'object' } },
    // One route must match; its body schema then applies (the first failing check stops: allErrors false).
    anyOf: routes.map((r) => ({
      required: ['method', 'path', 'body'],
      properties: {
        method: { const: r.method },
        path: { type: 'string', pattern: r.path },
        body: r.body,
      },
    })),
  };
}

/** A sink the optimiser cannot see through. */
let sink = 0;

interface Figures {
  msgsPerSecond: number;
  cpuMicrosPerMessage: number;
}

/** One pass over the corpus: wall time and CPU time. */
function pass(sessions: readonly string[], fn: (text: string) => number): { wallNs: number; cpuUs: number } {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  for (const text of sessions) sink += fn(text);
  const wallNs = Number(process.hrtime.bigint() - start);
  const used = process.cpuUsage(cpu);
  return { wallNs, cpuUs: used.user + used.system };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
}

/** Interleaved rounds over the whole corpus (machine noise hits every contender alike); medians. */
function compare(
  sessions: readonly string[],
  messages: number,
  contenders: Record<string, (text: string) => number>,
  options: BenchOptions,
): Record<string, Figures> {
  const rounds = options.quick ? 1 : 7;
  const samples: Record<string, { rate: number[]; cpu: number[] }> = {};
  for (const [name, fn] of Object.entries(contenders)) {
    pass(sessions, fn); // warm-up: let the JIT settle before the first sample
    samples[name] = { rate: [], cpu: [] };
  }
  for (let r = 0; r < rounds; r++)
    for (const [name, fn] of Object.entries(contenders)) {
      const { wallNs, cpuUs } = pass(sessions, fn);
      samples[name]?.rate.push(messages / (wallNs / 1e9));
      samples[name]?.cpu.push(cpuUs / messages);
    }
  return Object.fromEntries(
    Object.entries(samples).map(([name, s]) => [
      name,
      { msgsPerSecond: median(s.rate), cpuMicrosPerMessage: median(s.cpu) },
    ]),
  );
}

const certifyCheck: Benchmark = {
  name: 'certify.check',
  description:
    'messages per second and CPU µs per message of `certify check` (JSON.parse + every rule, session state ' +
    'included) over 10,000 messages of compliant captured sessions; peers in the same run: Ajv with a JSON Schema of ' +
    'the same requests (compiled once, allErrors: false; field checks only, no EMV decoding or cross-message rule) ' +
    'and JSON.parse of the same bytes, the floor any validator pays. Limited by EMV tag decoding and the per-message ' +
    'rule passes, not by I/O (the corpus is in memory).',
  run(options) {
    const { sessions, messages } = buildCorpus(options.quick ? 180 : CORPUS_MESSAGES);
    const Ajv = ajvModule.default;
    const validate = new Ajv({ allErrors: false, strict: false }).compile(requestSchema());
    // Before timing: the corpus is compliant for both validators, so each does its full work on every message.
    for (const text of sessions) {
      const result = checkSession(JSON.parse(text));
      const errors = result.messages.flatMap((m) => m.findings).filter((f) => f.severity === 'error');
      if (errors.length > 0) throw new Error(`the corpus is not compliant: ${JSON.stringify(errors[0])}`);
      for (const m of JSON.parse(text) as unknown[])
        if (!validate(m)) throw new Error(`Ajv refuses the corpus: ${JSON.stringify(validate.errors)}`);
    }
    const figures = compare(
      sessions,
      messages,
      {
        ours: (text) => checkSession(JSON.parse(text)).messages.length,
        ajv: (text) => {
          let ok = 0;
          for (const m of JSON.parse(text) as unknown[]) if (validate(m)) ok++;
          return ok;
        },
        'JSON.parse': (text) => (JSON.parse(text) as unknown[]).length,
      },
      options,
    );
    const ours = figures.ours ?? { msgsPerSecond: 0, cpuMicrosPerMessage: 0 };
    const floor = figures['JSON.parse'] ?? { msgsPerSecond: 0, cpuMicrosPerMessage: 0 };
    const row = (peer: string, key: string): BenchResult => {
      const p = figures[key] ?? { msgsPerSecond: 0, cpuMicrosPerMessage: 0 };
      return {
        name: 'certify.check',
        unit: 'msgs/s',
        ours: Math.round(ours.msgsPerSecond),
        peer,
        peerValue: Math.round(p.msgsPerSecond),
        ratio: ratioOf(ours.msgsPerSecond, p.msgsPerSecond, true),
        cpuMicrosPerOp: Math.round(ours.cpuMicrosPerMessage * 100) / 100,
        peerCpuMicrosPerOp: Math.round(p.cpuMicrosPerMessage * 100) / 100,
        limit: {
          what: 'JSON.parse of the same bytes: the floor of any validator of them',
          value: Math.round(floor.msgsPerSecond),
          unit: 'msgs/s',
        },
        extra: {
          messages,
          sessions: sessions.length,
          rules: Object.keys(RULES).length,
          oursCpuUsPerMsg: Math.round(ours.cpuMicrosPerMessage * 100) / 100,
          peerCpuUsPerMsg: Math.round(p.cpuMicrosPerMessage * 100) / 100,
        },
      };
    };
    return Promise.resolve([
      row(`ajv ${AJV_VERSION} (JSON Schema of the same requests, compiled once, allErrors: false)`, 'ajv'),
      row('JSON.parse of the same bytes (floor)', 'JSON.parse'),
    ]);
  },
};

export const benchmarks: Benchmark[] = [certifyCheck];

/** Exposed so that the sink is observable; reading it keeps the timed calls alive. */
export function benchSink(): number {
  return sink;
}
