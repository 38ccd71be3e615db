/**
 * The sandbox stays bounded under abuse (README, "Sandbox gateway", "Limits"): the ledger keeps the last 1,000
 * unmatched requests with at most 4 KiB of a rejected body, bodies above 1 MiB are refused with 413, the fault queue
 * holds at most 1,000 faults, JSON deeper than 64 levels is a 400, and an API body must be `application/json`.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { SandboxStore, type LedgerRequest } from '../../src/sandbox/store.js';
import { createSignedClient, type SignedClient } from '../../src/sandbox/testing/signed-client.js';
import { samplePayment } from '../../src/sandbox/sample-requests.js';
import { signRequest } from '../../src/sandbox/request-signer.js';
import { DEMO_MERCHANT } from '../../src/sandbox/server.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let sandbox: Sandbox;
let client: SignedClient;

beforeAll(async () => {
  sandbox = await startSandbox();
  client = createSignedClient(sandbox.url);
});
afterAll(async () => {
  await sandbox.close();
});
beforeEach(() => sandbox.reset());

/** POSTs raw bytes without a signature; resolves with the status and body text. */
function rawPost(
  path: string,
  body: string | Buffer,
  headers: Record<string, string> = { 'content-type': 'application/json' },
): Promise<{ status: number; text: string }> {
  return fetch(`${sandbox.url}${path}`, { method: 'POST', headers, body }).then(async (r) => ({
    status: r.status,
    text: await r.text(),
  }));
}

/** A signed POST of exactly these body bytes with these headers. */
async function signedRaw(
  path: string,
  text: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const signed = signRequest({
    method: 'POST',
    path,
    host: new URL(sandbox.url).host,
    body: text,
    merchant: DEMO_MERCHANT,
    date: new Date().toUTCString(),
  });
  // Bytes, not a string: fetch would add `content-type: text/plain` to a string body.
  const r = await fetch(`${sandbox.url}${path}`, {
    method: 'POST',
    headers: { ...signed, ...headers },
    body: Buffer.from(text, 'utf8'),
  });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

async function ledgerOverHttp(): Promise<{ status: number; ledger: Record<string, unknown> }> {
  const r = await fetch(`${sandbox.url}/__sandbox/ledger`);
  return { status: r.status, ledger: (await r.json()) as Record<string, unknown> };
}

describe('the ledger of rejected requests', () => {
  it('keeps the last 1,000 unmatched requests', async () => {
    for (let i = 0; i < 1100; i += 50)
      await Promise.all(
        Array.from({ length: 50 }, (_, j) => rawPost('/pts/v2/payments', JSON.stringify({ n: i + j }))),
      );
    const { status, ledger } = await ledgerOverHttp();
    expect(status).toBe(200);
    const unmatched = ledger.unmatchedRequests as Array<{ body: { n: number } }>;
    expect(unmatched).toHaveLength(1000);
    expect(unmatched[0]?.body.n).toBe(100);
    expect(unmatched[999]?.body.n).toBe(1099);
  });

  it('keeps 4 KiB of a large rejected body, marked truncated', async () => {
    const big = JSON.stringify({ filler: 'x'.repeat(900 * 1024) });
    const a = await rawPost('/pts/v2/payments', big);
    expect(a.status).toBe(401);
    const req = sandbox.ledger().unmatchedRequests[0];
    expect(req?.bodyTruncated).toBe(true);
    expect(req?.bodyBytes).toBe(big.length);
    expect(typeof req?.body).toBe('string');
    expect(Buffer.byteLength(req?.body as string)).toBeLessThanOrEqual(4096);
  });

  it('stays small and answers 200 after 100 unsigned 900 KB requests', async () => {
    const big = JSON.stringify({ filler: 'y'.repeat(900 * 1024) });
    for (let i = 0; i < 100; i += 10)
      await Promise.all(Array.from({ length: 10 }, () => rawPost('/pts/v2/payments', big)));
    const r = await fetch(`${sandbox.url}/__sandbox/ledger`);
    expect(r.status).toBe(200);
    const text = await r.text();
    expect(() => JSON.parse(text) as unknown).not.toThrow();
    expect(text.length).toBeLessThan(2 * 1024 * 1024);
  });

  it('refuses a body above 1 MiB with 413 before reading it', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const u = new URL(sandbox.url);
      // Declares 2 MiB and sends none of it: the answer comes from the declared length alone.
      const req = request(
        {
          host: u.hostname,
          port: u.port,
          path: '/pts/v2/payments',
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': String(2 * 1024 * 1024) },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
          req.destroy();
        },
      );
      req.on('error', reject);
      req.flushHeaders();
    });
    expect(status).toBe(413);
  });

  it('keeps the last 1,000 unmatched requests in a data file too', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sandbox-limits-'));
    try {
      const file = join(dir, 'ledger.db');
      const store = new SandboxStore(file, 3);
      for (let n = 0; n < 5; n++) store.fileRequest(undefined, { view: () => fakeRequest(n) });
      expect(store.unmatched.map((r) => (r.body as { n: number }).n)).toEqual([2, 3, 4]);
      store.close();
      const again = new SandboxStore(file, 3);
      expect(again.unmatched.map((r) => (r.body as { n: number }).n)).toEqual([2, 3, 4]);
      again.fileRequest(undefined, { view: () => fakeRequest(5) });
      again.close();
      const third = new SandboxStore(file, 3);
      expect(third.unmatched.map((r) => (r.body as { n: number }).n)).toEqual([3, 4, 5]);
      third.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

function fakeRequest(n: number): LedgerRequest {
  return {
    at: new Date(0).toISOString(),
    method: 'POST',
    path: '/pts/v2/payments',
    headers: {},
    auth: { scheme: 'none', verified: false },
    body: { n },
    httpStatus: 401,
    response: {},
    delivered: true,
  };
}

describe('the fault queue', () => {
  it('holds at most 1,000 faults (scheduleFaults)', () => {
    sandbox.scheduleFaults(Array.from({ length: 1000 }, () => ({ kind: 'status-500' as const })));
    expect(() => sandbox.scheduleFaults([{ kind: 'status-500' }])).toThrow(/at most 1000 faults/);
  });

  it('answers 400 naming the limit beyond 1,000 (POST /__sandbox/faults)', async () => {
    const post = (n: number): Promise<Response> =>
      fetch(`${sandbox.url}/__sandbox/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ faults: Array.from({ length: n }, () => ({ kind: 'status-500' })) }),
      });
    expect((await post(999)).status).toBe(200);
    const over = await post(2);
    expect(over.status).toBe(400);
    const body = (await over.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('TOO_MANY_FAULTS');
    expect(body.error.message).toMatch(/at most 1000 faults/);
    expect((await post(1)).status).toBe(200);
  });
});

describe('deeply nested JSON', () => {
  const deep = (levels: number): string => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;

  it('answers 400 INVALID_REQUEST to a signed body nested 3,000 levels deep', async () => {
    const a = await signedRaw('/pts/v2/payments', deep(3000), { 'content-type': 'application/json' });
    expect(a.status).toBe(400);
    expect(a.body.status).toBe('INVALID_REQUEST');
    expect(a.body.reason).toBe('INVALID_DATA');
    expect(String(a.body.message)).toMatch(/64 levels/);
    expect((await ledgerOverHttp()).status).toBe(200);
  });

  it('answers 401 to an unsigned one, and the ledger still answers', async () => {
    const arrays = `${'['.repeat(3000)}${']'.repeat(3000)}`;
    expect((await rawPost('/pts/v2/payments', deep(3000))).status).toBe(401);
    expect((await rawPost('/pts/v2/payments', arrays)).status).toBe(401);
    expect((await ledgerOverHttp()).status).toBe(200);
  });

  it('refuses deep JSON on the admin endpoints with 400', async () => {
    const r = await rawPost('/__sandbox/clock', deep(3000));
    expect(r.status).toBe(400);
  });

  it('accepts a body nested within the limit', async () => {
    const a = await client.send('POST', '/pts/v2/payments', {
      ...samplePayment({ amountMinor: 1000, transactionId: 'D000001' }),
      merchantDefinedInformation: [{ key: '1', value: JSON.parse(deep(50)) as unknown }],
    });
    expect(a.status).not.toBe(500);
  });
});

describe('the content type of an API body', () => {
  const body = JSON.stringify(samplePayment({ amountMinor: 1000, transactionId: 'C000001' }));

  it.each([
    ['missing', {}],
    ['text/plain', { 'content-type': 'text/plain' }],
    ['form', { 'content-type': 'application/x-www-form-urlencoded' }],
  ])('refuses a body with content-type %s: 400 INVALID_REQUEST naming it', async (_, headers) => {
    const a = await signedRaw('/pts/v2/payments', body, headers);
    expect(a.status).toBe(400);
    expect(a.body.status).toBe('INVALID_REQUEST');
    expect(String(a.body.message)).toMatch(/content-type/);
    expect(sandbox.ledger().transactions).toHaveLength(0);
  });

  it.each(['application/json', 'application/json; charset=utf-8', 'Application/JSON;charset=UTF-8'])(
    'accepts %s',
    async (type) => {
      const a = await signedRaw('/pts/v2/payments', body, { 'content-type': type });
      expect(a.status).toBe(201);
    },
  );
});
