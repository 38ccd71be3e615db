/**
 * AUTHORIZED_RISK_DECLINED (reference/gateway.md §4): the issuer approved and the gateway's risk check refused. The
 * sandbox answers it for an authorization or a sale whose amount ends in 22 (README, Triggers): the funds are held,
 * nothing is captured — a sale's included — and the only follow-on it takes is a reversal. PENDING_REVIEW (amount
 * ending in 23): held for a review that never decides in the sandbox, and taken back the same way.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  sampleCapture,
  samplePayment,
  sampleRefund,
  sampleReversal,
  sampleTimeoutReversal,
} from './sample-requests.js';
import { startSandbox, type Sandbox } from './server.js';
import { createSignedClient, type SignedClient } from './testing/signed-client.js';
import { REVIEW_REASON, RISK_DECLINE_REASON } from './triggers.js';

let sandbox: Sandbox;
let client: SignedClient;
let seq = 0;
const txId = (label: string): string => `risk-${label}-${++seq}`;

beforeAll(async () => {
  sandbox = await startSandbox();
  client = createSignedClient(sandbox.url);
});
afterAll(async () => {
  await sandbox.close();
});
beforeEach(() => sandbox.reset());

/** Rules broken by holds still open (`requireResolved`). */
function openHolds(): string[] {
  return sandbox
    .consistency({ requireResolved: true })
    .problems.filter((p) => p.rule === 'OPEN_AUTHORIZATION')
    .map((p) => p.id ?? '');
}

describe.each([
  ['a sale', true, 1222, 'AUTHORIZED_RISK_DECLINED', RISK_DECLINE_REASON],
  ['a pre-authorization', false, 1222, 'AUTHORIZED_RISK_DECLINED', RISK_DECLINE_REASON],
  ['a sale', true, 1223, 'PENDING_REVIEW', REVIEW_REASON],
  ['a pre-authorization', false, 1223, 'PENDING_REVIEW', REVIEW_REASON],
])('%s whose amount is %i', (_label, sale, amount, status, reason) => {
  it('is answered as triggered with the funds held and nothing captured', async () => {
    const body = samplePayment({ amountMinor: amount, transactionId: txId('a'), sale });
    const a = await client.send('POST', '/pts/v2/payments', body);
    expect(a.status).toBe(201);
    expect(a.body).toMatchObject({
      status,
      errorInformation: { reason },
      orderInformation: { amountDetails: { authorizedAmount: (amount / 100).toFixed(2) } },
    });
    const links = a.body._links as Record<string, unknown>;
    expect(Object.keys(links).sort()).toEqual(['authReversal', 'self']);
    const [held] = sandbox.ledger().transactions;
    expect(held?.amounts).toMatchObject({ authorized: amount, captured: 0, reversed: 0 });
    expect(openHolds()).toEqual([String(a.body.id)]);
  });

  it('takes a reversal, which releases it; no capture, refund or void', async () => {
    const body = samplePayment({ amountMinor: amount, transactionId: txId('b'), sale });
    const id = String((await client.send('POST', '/pts/v2/payments', body)).body.id);
    const tags = (body.pointOfSaleInformation as { emv: { tags: string } }).emv.tags;
    const capture = await client.send(
      'POST',
      `/pts/v2/payments/${id}/captures`,
      sampleCapture(amount, amount, txId('c')),
    );
    expect(capture.status).toBe(400);
    const refund = await client.send(
      'POST',
      `/pts/v2/payments/${id}/refunds`,
      sampleRefund(amount, txId('r'), 'sale'),
    );
    expect(refund.status).toBe(400);
    const voided = await client.send('POST', `/pts/v2/payments/${id}/voids`, {
      clientReferenceInformation: { code: 'void' },
    });
    expect(voided.status).toBe(400);

    const reversed = await client.send(
      'POST',
      `/pts/v2/payments/${id}/reversals`,
      sampleReversal(amount, 'EUR', tags),
    );
    expect(reversed.status).toBe(201);
    expect(reversed.body.status).toBe('REVERSED');
    expect(openHolds()).toEqual([]);
    expect(sandbox.consistency({ requireResolved: true }).problems).toEqual([]);

    const again = await client.send(
      'POST',
      `/pts/v2/payments/${id}/reversals`,
      sampleReversal(amount, 'EUR', tags),
    );
    expect(again.status).toBe(400);
    expect(again.body.reason).toBe('AUTH_ALREADY_REVERSED');
  });
});

describe('a risk-declined sale whose answer was lost', () => {
  it('is refused a timeout void (nothing was captured) and released by a timeout reversal', async () => {
    const transactionId = txId('t');
    await client.send(
      'POST',
      '/pts/v2/payments',
      samplePayment({ amountMinor: 1222, transactionId, sale: true }),
    );
    const voided = await client.send('POST', '/pts/v2/voids', {
      clientReferenceInformation: { transactionId, comments: 'VOID Timeout' },
    });
    expect(voided.status).toBe(400);
    expect(voided.body.reason).toBe('NOT_VOIDABLE');

    const reversed = await client.send(
      'POST',
      '/pts/v2/reversals',
      sampleTimeoutReversal(transactionId, 1222),
    );
    expect(reversed.status).toBe(201);
    expect(reversed.body.status).toBe('REVERSED');
    expect(openHolds()).toEqual([]);
    expect(sandbox.consistency({ requireResolved: true }).problems).toEqual([]);
  });
});

describe('an approved sale', () => {
  it('is refused a timeout reversal: it was captured', async () => {
    const transactionId = txId('u');
    await client.send(
      'POST',
      '/pts/v2/payments',
      samplePayment({ amountMinor: 1200, transactionId, sale: true }),
    );
    const reversed = await client.send(
      'POST',
      '/pts/v2/reversals',
      sampleTimeoutReversal(transactionId, 1200),
    );
    expect(reversed.status).toBe(400);
    expect(reversed.body.reason).toBe('TRANSACTION_ALREADY_SETTLED');
  });

  it('is still refused a reversal: it is voided or refunded', async () => {
    const body = samplePayment({ amountMinor: 1200, transactionId: txId('s'), sale: true });
    const id = String((await client.send('POST', '/pts/v2/payments', body)).body.id);
    const tags = (body.pointOfSaleInformation as { emv: { tags: string } }).emv.tags;
    const a = await client.send(
      'POST',
      `/pts/v2/payments/${id}/reversals`,
      sampleReversal(1200, 'EUR', tags),
    );
    expect(a.status).toBe(400);
    expect(a.body.reason).toBe('TRANSACTION_ALREADY_SETTLED');
  });
});
