import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEMO_MERCHANT, startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { valueAt } from '../../src/sandbox/fields.js';
import { signRequest } from '../../src/sandbox/request-signer.js';
import {
  sampleCapture,
  sampleEmvTags,
  samplePayment,
  sampleRefund,
  sampleReversal,
  sampleTimeoutReversal,
} from '../../src/sandbox/sample-requests.js';

let sandbox: Sandbox;
let seq = 0;
const tid = (): string => `T${Date.now()}${String(++seq).padStart(4, '0')}`;

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

async function send(method: string, path: string, body?: unknown): Promise<Answer> {
  const text = body === undefined ? '' : JSON.stringify(body);
  const host = new URL(sandbox.url).host;
  const headers = signRequest({ method, path, host, body: text, merchant: DEMO_MERCHANT });
  const res = await fetch(`${sandbox.url}${path}`, {
    method,
    headers: { ...headers, 'content-type': 'application/json' },
    ...(method === 'GET' ? {} : { body: text }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function authorize(
  amountMinor: number,
  extra: Partial<Parameters<typeof samplePayment>[0]> = {},
): Promise<{ id: string; transactionId: string; answer: Answer }> {
  const transactionId = tid();
  const answer = await send(
    'POST',
    '/pts/v2/payments',
    samplePayment({ amountMinor, transactionId, ...extra }),
  );
  return { id: String(answer.body.id), transactionId, answer };
}

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await sandbox.close();
});
beforeEach(() => sandbox.reset());

describe('authorization', () => {
  it('approves a contactless pre-authorization and records the verified request with its EMV tags', async () => {
    const { id, answer } = await authorize(1250);
    expect(answer.status).toBe(201);
    expect(answer.body.status).toBe('AUTHORIZED');
    expect(valueAt(answer.body, 'orderInformation.amountDetails.authorizedAmount')).toBe('12.50');
    const tx = sandbox.ledger().transactions.find((t) => t.id === id)!;
    expect(tx.kind).toBe('authorization');
    expect(tx.amounts.authorized).toBe(1250);
    expect(tx.requests).toHaveLength(1);
    expect(tx.requests[0]!.auth).toEqual({ scheme: 'http-signature', verified: true });
    expect(tx.requests[0]!.emvTags?.find((t) => t.tag === '9F02')?.value).toBe('000000001250');
    expect(JSON.stringify(sandbox.ledger())).not.toContain('4111111111111111');
    expect(sandbox.consistency().ok).toBe(true);
  });

  it('rejects a card-present request without catLevel, naming the field', async () => {
    const body = samplePayment({ amountMinor: 1000, transactionId: tid() });
    delete (body.pointOfSaleInformation as Record<string, unknown>).catLevel;
    const a = await send('POST', '/pts/v2/payments', body);
    expect(a.status).toBe(400);
    expect(a.body.reason).toBe('MISSING_FIELD');
    expect(a.body.details).toContainEqual({
      field: 'pointOfSaleInformation.catLevel',
      reason: 'MISSING_FIELD',
    });
  });

  it('declines with the reason the amount cents select', async () => {
    const { answer } = await authorize(1002);
    expect(answer.status).toBe(201);
    expect(answer.body.status).toBe('DECLINED');
    expect(valueAt(answer.body, 'errorInformation.reason')).toBe('INSUFFICIENT_FUND');
  });
});

describe('capture and reversal', () => {
  it('captures below the authorization and records the automatic partial reversal', async () => {
    const { id } = await authorize(2000);
    const cap = await send('POST', `/pts/v2/payments/${id}/captures`, sampleCapture(1500, 2000, tid()));
    expect(cap.status).toBe(201);
    expect(cap.body.status).toBe('PENDING');
    const auth = sandbox.ledger().transactions.find((t) => t.id === id)!;
    expect(auth.amounts).toMatchObject({ authorized: 2000, captured: 1500, reversed: 500 });
  });

  it('refuses a capture above the authorized amount with EXCEEDS_AUTH_AMOUNT', async () => {
    const { id } = await authorize(2000);
    const cap = await send('POST', `/pts/v2/payments/${id}/captures`, sampleCapture(2050, 2000, tid()));
    expect(cap.status).toBe(400);
    expect(cap.body.reason).toBe('EXCEEDS_AUTH_AMOUNT');
    expect(cap.body.details).toContainEqual({
      field: 'orderInformation.amountDetails.totalAmount',
      reason: 'INVALID_DATA',
    });
  });

  it('reverses only for the authorized amount and only once', async () => {
    const { id } = await authorize(1500);
    const tags = sampleEmvTags(1500, 'EUR');
    const wrong = await send('POST', `/pts/v2/payments/${id}/reversals`, sampleReversal(1000, 'EUR', tags));
    expect(wrong.status).toBe(400);
    expect(wrong.body.reason).toBe('INVALID_AMOUNT');
    const ok = await send('POST', `/pts/v2/payments/${id}/reversals`, sampleReversal(1500, 'EUR', tags));
    expect(ok.status).toBe(201);
    expect(ok.body.status).toBe('REVERSED');
    const again = await send('POST', `/pts/v2/payments/${id}/reversals`, sampleReversal(1500, 'EUR', tags));
    expect(again.body.reason).toBe('AUTH_ALREADY_REVERSED');
  });

  it('answers a timeout reversal for an unknown transactionId and again identically', async () => {
    const t = tid();
    const first = await send('POST', '/pts/v2/reversals', sampleTimeoutReversal(t, 1000));
    expect(first.status).toBe(201);
    expect(valueAt(first.body, 'reversalAmountDetails.originalTransactionAmount')).toBe('10.00');
    const second = await send('POST', '/pts/v2/reversals', sampleTimeoutReversal(t, 1000));
    expect(second.body).toEqual(first.body);
  });

  it('refunds a capture up to the captured amount and no further', async () => {
    const { id } = await authorize(2000);
    const cap = await send('POST', `/pts/v2/payments/${id}/captures`, sampleCapture(2000, 2000, tid()));
    const capId = String(cap.body.id);
    expect(
      (await send('POST', `/pts/v2/captures/${capId}/refunds`, sampleRefund(1500, tid(), 'capture'))).status,
    ).toBe(201);
    const over = await send('POST', `/pts/v2/captures/${capId}/refunds`, sampleRefund(600, tid(), 'capture'));
    expect(over.status).toBe(400);
    expect(over.body.reason).toBe('INVALID_AMOUNT');
  });
});
