import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEMO_MERCHANT, startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { signRequest } from '../../src/sandbox/request-signer.js';
import { valueAt } from '../../src/sandbox/fields.js';
import { createSignedClient, type SignedClient } from '../../src/sandbox/testing/signed-client.js';
import { sampleCapture, samplePayment, sampleTimeoutReversal } from '../../src/sandbox/sample-requests.js';

let sandbox: Sandbox;
let client: SignedClient;
let seq = 0;
const tid = (): string => `F${String(++seq).padStart(6, '0')}`;

beforeAll(async () => {
  sandbox = await startSandbox({ lateResponseMs: 300 });
  client = createSignedClient(sandbox.url);
});
afterAll(async () => {
  await sandbox.close();
});
beforeEach(() => sandbox.reset());

/** Sends and reports a dropped connection as status -1 instead of throwing. */
async function sendOrReset(path: string, body: unknown): Promise<number> {
  try {
    return (await client.send('POST', path, body)).status;
  } catch {
    return -1;
  }
}

describe('amount triggers', () => {
  it.each([
    [1001, 'PROCESSOR_DECLINED'],
    [1003, 'EXPIRED_CARD'],
    [1008, 'GENERAL_DECLINE'],
    [1011, 'PROCESSOR_ERROR'],
  ])('declines %i with %s', async (amount, reason) => {
    const a = await client.send(
      'POST',
      '/pts/v2/payments',
      samplePayment({ amountMinor: amount, transactionId: tid() }),
    );
    expect(a.status).toBe(201);
    expect(a.body.status).toBe('DECLINED');
    expect(valueAt(a.body, 'errorInformation.reason')).toBe(reason);
  });

  it('approves every multiple of 0.50', async () => {
    for (const amount of [50, 100, 150, 1250, 2000, 3000]) {
      const a = await client.send(
        'POST',
        '/pts/v2/payments',
        samplePayment({ amountMinor: amount, transactionId: tid() }),
      );
      expect(a.body.status).toBe('AUTHORIZED');
    }
  });

  it('partially authorizes .21 for half the amount', async () => {
    const a = await client.send(
      'POST',
      '/pts/v2/payments',
      samplePayment({ amountMinor: 2021, transactionId: tid() }),
    );
    expect(a.body.status).toBe('PARTIAL_AUTHORIZED');
    expect(valueAt(a.body, 'orderInformation.amountDetails.authorizedAmount')).toBe('10.10');
  });

  it('declines a test card whatever the amount', async () => {
    const body = samplePayment({ amountMinor: 1000, transactionId: tid(), entryMode: 'swiped' });
    // Its stripe-only version (service code 101): a chip card is swiped only as an EMV fallback.
    (body.pointOfSaleInformation as Record<string, unknown>).trackData =
      ';4000000000000002=30121011234567890?';
    const a = await client.send('POST', '/pts/v2/payments', body);
    expect(valueAt(a.body, 'errorInformation.reason')).toBe('GENERAL_DECLINE');
  });

  it('answers .41 with 502 SYSTEM_ERROR and commits nothing', async () => {
    const a = await client.send(
      'POST',
      '/pts/v2/payments',
      samplePayment({ amountMinor: 1041, transactionId: tid() }),
    );
    expect(a.status).toBe(502);
    expect(a.body).toMatchObject({ status: 'SERVER_ERROR', reason: 'SYSTEM_ERROR' });
    expect(sandbox.ledger().transactions).toHaveLength(0);
    expect(sandbox.ledger().unmatchedRequests[0]?.fault).toBe('server-error-502');
  });

  it.each([
    [1042, 502],
    [1045, 500],
    [1046, 202],
  ])('commits %i, answers %i, and flags the authorization until it is reversed', async (amount, status) => {
    const t = tid();
    const a = await client.send(
      'POST',
      '/pts/v2/payments',
      samplePayment({ amountMinor: amount, transactionId: t }),
    );
    expect(a.status).toBe(status);
    const ledger = sandbox.ledger();
    expect(ledger.transactions).toHaveLength(1);
    expect(ledger.transactions[0]!.outcomeUnknown).toBe(true);
    expect(sandbox.consistency().problems.map((p) => p.rule)).toEqual(['UNKNOWN_AUTHORIZATION_NOT_REVERSED']);
    const rev = await client.send('POST', '/pts/v2/reversals', sampleTimeoutReversal(t, amount));
    expect(rev.status).toBe(201);
    expect(sandbox.consistency()).toEqual({ ok: true, problems: [] });
  });

  it('resets the connection after committing .44 and before committing .47', async () => {
    expect(
      await sendOrReset('/pts/v2/payments', samplePayment({ amountMinor: 1044, transactionId: tid() })),
    ).toBe(-1);
    expect(sandbox.ledger().transactions).toHaveLength(1);
    expect(
      await sendOrReset('/pts/v2/payments', samplePayment({ amountMinor: 1047, transactionId: tid() })),
    ).toBe(-1);
    expect(sandbox.ledger().transactions).toHaveLength(1);
    expect(sandbox.ledger().unmatchedRequests.map((r) => r.fault)).toEqual(['reset-before-commit']);
  });

  it('holds .43 past a client timeout while the transaction is already recorded', async () => {
    const controller = new AbortController();
    const body = JSON.stringify(samplePayment({ amountMinor: 1043, transactionId: tid() }));
    const headers = signRequest({
      method: 'POST',
      path: '/pts/v2/payments',
      host: new URL(sandbox.url).host,
      body,
      merchant: DEMO_MERCHANT,
    });
    const request = fetch(`${sandbox.url}/pts/v2/payments`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body,
      signal: controller.signal,
    });
    // The transaction is recorded while its answer is still held back.
    for (let i = 0; i < 200 && sandbox.ledger().transactions.length === 0; i++)
      await new Promise((r) => setTimeout(r, 5));
    expect(sandbox.ledger().transactions).toHaveLength(1);
    // The client gives up before the answer comes.
    controller.abort();
    await expect(request).rejects.toThrow();
    await new Promise((r) => setTimeout(r, 400));
    expect(sandbox.ledger().transactions[0]!.outcomeUnknown).toBe(true);
  });

  it('triggers faults on captures too, which then need a timeout void', async () => {
    const auth = await client.send(
      'POST',
      '/pts/v2/payments',
      samplePayment({ amountMinor: 2000, transactionId: tid() }),
    );
    const capT = tid();
    const cap = await client.send(
      'POST',
      `/pts/v2/payments/${String(auth.body.id)}/captures`,
      sampleCapture(1945, 2000, capT),
    );
    expect(cap.status).toBe(500);
    expect(sandbox.consistency().problems.map((p) => p.rule)).toEqual(['UNKNOWN_CHARGE_NOT_VOIDED']);
    const v = await client.send('POST', '/pts/v2/voids', {
      clientReferenceInformation: { transactionId: capT, comments: 'VOID Timeout' },
    });
    expect(v.body.status).toBe('VOIDED');
    expect(sandbox.consistency().ok).toBe(true);
  });
});

describe('scheduled faults', () => {
  it('applies the next fault to the next matching request only', async () => {
    sandbox.scheduleFaults([{ kind: 'status-500', path: '/captures' }, { kind: 'server-error-502' }]);
    const first = await client.send(
      'POST',
      '/pts/v2/payments',
      samplePayment({ amountMinor: 1000, transactionId: tid() }),
    );
    expect(first.status).toBe(502);
    const auth = await client.send(
      'POST',
      '/pts/v2/payments',
      samplePayment({ amountMinor: 1000, transactionId: tid() }),
    );
    expect(auth.status).toBe(201);
    const cap = await client.send(
      'POST',
      `/pts/v2/payments/${String(auth.body.id)}/captures`,
      sampleCapture(1000, 1000, tid()),
    );
    expect(cap.status).toBe(500);
    const after = await client.send(
      'POST',
      '/pts/v2/payments',
      samplePayment({ amountMinor: 1000, transactionId: tid() }),
    );
    expect(after.status).toBe(201);
  });

  it('answers a processor that is down with 400 PROCESSOR_UNAVAILABLE, committing nothing', async () => {
    sandbox.scheduleFaults([{ kind: 'processor-unavailable' }]);
    const transactionId = tid();
    const refused = await client.send(
      'POST',
      '/pts/v2/payments',
      samplePayment({ amountMinor: 1000, transactionId }),
    );
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ status: 'INVALID_REQUEST', reason: 'PROCESSOR_UNAVAILABLE' });
    expect(sandbox.ledger().transactions).toEqual([]);
    // Nothing was processed: the same request passes later.
    const again = await client.send(
      'POST',
      '/pts/v2/payments',
      samplePayment({ amountMinor: 1000, transactionId }),
    );
    expect(again.status).toBe(201);
    expect(again.body.status).toBe('AUTHORIZED');
  });

  it('takes faults over the admin endpoint and rejects unknown kinds', async () => {
    const bad = await fetch(`${sandbox.url}/__sandbox/faults`, {
      method: 'POST',
      body: JSON.stringify({ faults: [{ kind: 'explode' }] }),
    });
    expect(bad.status).toBe(400);
    const ok = await fetch(`${sandbox.url}/__sandbox/faults`, {
      method: 'POST',
      body: JSON.stringify({ faults: [{ kind: 'status-202' }] }),
    });
    expect(ok.status).toBe(200);
    const a = await client.send(
      'POST',
      '/pts/v2/payments',
      samplePayment({ amountMinor: 1000, transactionId: tid() }),
    );
    expect(a.status).toBe(202);
    expect(a.body.status).toBe('AUTHORIZED');
  });
});

describe('duplicates and replays', () => {
  it('replays the first answer for an identical request and refuses a different body with DUPLICATE_REQUEST', async () => {
    const t = tid();
    const body = samplePayment({ amountMinor: 1044, transactionId: t });
    expect(await sendOrReset('/pts/v2/payments', body)).toBe(-1);
    const replay = await client.send('POST', '/pts/v2/payments', body);
    expect(replay.status).toBe(201);
    expect(sandbox.ledger().transactions).toHaveLength(1);
    expect(sandbox.ledger().transactions[0]!.outcomeUnknown).toBe(false);
    const other = await client.send(
      'POST',
      '/pts/v2/payments',
      samplePayment({ amountMinor: 1050, transactionId: t }),
    );
    expect(other.status).toBe(400);
    expect(other.body.reason).toBe('DUPLICATE_REQUEST');
    expect(other.body.details).toEqual([
      { field: 'clientReferenceInformation.transactionId', reason: 'INVALID_DATA' },
    ]);
  });
});

describe('strict end-of-run consistency', () => {
  it('reports an authorization left open only when asked to require every authorization resolved', async () => {
    await client.send('POST', '/pts/v2/payments', samplePayment({ amountMinor: 1000, transactionId: tid() }));
    expect(sandbox.consistency().ok).toBe(true);
    expect(sandbox.consistency({ requireResolved: true }).problems.map((p) => p.rule)).toEqual([
      'OPEN_AUTHORIZATION',
    ]);
    const viaHttp = (await (
      await fetch(`${sandbox.url}/__sandbox/consistency?requireResolved=1`)
    ).json()) as { ok: boolean };
    expect(viaHttp.ok).toBe(false);
  });
});
