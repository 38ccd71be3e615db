import { createRequire } from 'node:module';
import {
  createGatewayClient,
  httpSignatureAuthenticator,
  newTransactionId,
  type ServiceRequest,
} from '../src/gateway/index.js';
import { startSandbox, type Sandbox } from '../src/sandbox/index.js';
import { ratioOf, type Benchmark, type BenchResult } from './types.js';

const MERCHANT = 'testrest';
const KEY_ID = '08c94330-f618-42a3-b09d-e1e43be5efda';
const SECRET = 'yBJxy6LjM2TmcPGu+GaJrHtkke25fPpUX+UY6/L/1tE=';
const PEER = 'cybersource-rest-client';

function tlv(tag: string, value: string): string {
  return `${tag}${(value.length / 2).toString(16).padStart(2, '0').toUpperCase()}${value}`;
}

/** The same card-present pre-authorization for both clients (an amount that the sandbox approves). */
const AUTHORIZATION: ServiceRequest = {
  service: 'preauth',
  code: 'BENCH-1',
  partner: { developerId: '12345678', solutionId: 'PARKTERM', thirdPartyCertificationNumber: 'PT0000000001' },
  amountMinor: 1250,
  currency: 'GBP',
  transactionLocalDateTime: '20260101120000',
  pos: {
    cardType: '001',
    entryMode: 'contact',
    terminalCapability: 4,
    terminalPinCapability: 0,
    catLevel: 2,
    terminalId: 'PT000001',
    trackData: ';4111111111111111=30122011234567890?',
    emvTags: [
      tlv('9A', '260101'),
      tlv('9C', '00'),
      tlv('5F2A', '0826'),
      tlv('9F1A', '0826'),
      tlv('9F02', '000000001250'),
      tlv('9F03', '000000000000'),
      tlv('9F36', '0042'),
      tlv('82', '1980'),
      tlv('84', 'A0000000031010'),
      tlv('95', '0000008000'),
      tlv('9F10', '06010A03A00000'),
      tlv('9F26', '1122334455667788'),
      tlv('9F27', '80'),
      tlv('9F33', 'E0F8C8'),
      tlv('9F34', '1F0302'),
      tlv('9F37', 'A1B2C3D4'),
    ].join(''),
  },
};

interface SdkPayments {
  createPayment(
    body: unknown,
    cb: (error: unknown, data: unknown, response: { status?: number } | undefined) => void,
  ): void;
}

/** The official SDK configured for HTTP signature against the sandbox (plain HTTP through `intermediateHost`). */
function sdkPayments(sandbox: Sandbox): SdkPayments {
  const require = createRequire(import.meta.url);
  const sdk = require(PEER) as {
    ApiClient: new () => unknown;
    PaymentsApi: new (config: unknown, apiClient: unknown) => SdkPayments;
  };
  const host = new URL(sandbox.url).host;
  const config = {
    authenticationType: 'http_signature',
    runEnvironment: host,
    intermediateHost: sandbox.url,
    merchantID: MERCHANT,
    merchantKeyId: KEY_ID,
    merchantsecretKey: SECRET,
    logConfiguration: { enableLog: false },
  };
  return new sdk.PaymentsApi(config, new sdk.ApiClient());
}

async function timed(n: number, one: () => Promise<void>): Promise<number> {
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await one();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

/**
 * gateway.authorize: the same authorization sent N times, one at a time, to the same sandbox by our client and by
 * the official SDK in one run; requests per second of each. Every answer must be an approval, or the run fails.
 */
const authorize: Benchmark = {
  name: 'gateway.authorize',
  async run({ quick }): Promise<BenchResult[]> {
    const n = quick ? 30 : 800;
    const sandbox = await startSandbox();
    const client = createGatewayClient({
      baseUrl: sandbox.url,
      merchantId: MERCHANT,
      auth: httpSignatureAuthenticator(MERCHANT, KEY_ID, SECRET),
      timeouts: { connectMs: 5_000, headersMs: 30_000, bodyMs: 30_000 },
    });
    const sdk = sdkPayments(sandbox);
    const template = JSON.parse(client.prepare(AUTHORIZATION).body.toString('utf8')) as {
      clientReferenceInformation: { transactionId: string };
    };
    const ours = async (): Promise<void> => {
      const outcome = await client.send(client.prepare(AUTHORIZATION));
      if (outcome.kind !== 'approved') throw new Error(`our client: ${outcome.kind}`);
    };
    const peer = (): Promise<void> =>
      new Promise((resolve, reject) => {
        // A fresh transactionId per request, as the gateway requires of every original request.
        const body = {
          ...template,
          clientReferenceInformation: {
            ...template.clientReferenceInformation,
            transactionId: newTransactionId(),
          },
        };
        sdk.createPayment(body, (error, data) => {
          const status = (data as { status?: unknown } | undefined)?.status;
          if (error || status !== 'AUTHORIZED') reject(new Error(`${PEER}: ${String(status ?? error)}`));
          else resolve();
        });
      });
    try {
      // Warm both (connections, JIT) before measuring.
      await timed(Math.min(20, n), ours);
      await timed(Math.min(20, n), peer);
      const oursSeconds = await timed(n, ours);
      const peerSeconds = await timed(n, peer);
      const oursRate = n / oursSeconds;
      const peerRate = n / peerSeconds;
      return [
        {
          name: 'gateway.authorize',
          unit: 'req/s',
          ours: Math.round(oursRate),
          peer: PEER,
          peerValue: Math.round(peerRate),
          ratio: ratioOf(oursRate, peerRate, true),
          extra: {
            requests: n,
            oursMsPerRequest: (1000 * oursSeconds) / n,
            peerMsPerRequest: (1000 * peerSeconds) / n,
          },
        },
      ];
    } finally {
      await client.close();
      await sandbox.close();
    }
  },
};

export const benchmarks: Benchmark[] = [authorize];
