/**
 * Alternative methods at the running sandbox (spec 001): AP_SALE → page → AP_STATUS → AP_REFUND, the profile rules,
 * the 60-minute status-check interval and the documented triggers.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ABANDON_AFTER_MS, FUNDED_AFTER_MS, STATUS_CHECK_INTERVAL_MS } from './alt-payments.js';
import { startSandbox, type Sandbox } from './server.js';
import { createSignedClient, type SignedClient } from './testing/signed-client.js';

let sandbox: Sandbox;
let client: SignedClient;
let offset = 0;
const base = Date.UTC(2026, 10, 24, 9, 0, 0);
let seq = 0;

beforeAll(async () => {
  sandbox = await startSandbox({ now: () => new Date(base) });
  client = createSignedClient(sandbox.url, undefined, () => new Date(base + offset));
});
afterAll(async () => {
  await sandbox.close();
});
beforeEach(() => {
  sandbox.reset();
  offset = 0;
});

function advance(ms: number): void {
  offset += ms;
  sandbox.advanceClock(ms);
}

function saleBody(overrides: { amount?: string; method?: string; type?: string; country?: string } = {}) {
  return {
    clientReferenceInformation: { code: 'TICKET-1', transactionId: `alt-${++seq}` },
    merchantInformation: {
      cancelUrl: 'https://terminal.example/cancel',
      failureUrl: 'https://terminal.example/failure',
      successUrl: 'https://terminal.example/success',
    },
    orderInformation: {
      amountDetails: { totalAmount: overrides.amount ?? '12.50', currency: 'EUR' },
      billTo: {
        country: overrides.country ?? 'ES',
        email: 'a@example.com',
        firstName: 'Ana',
        lastName: 'Ruiz',
      },
    },
    paymentInformation: {
      paymentType: {
        name: overrides.type ?? 'bankTransfer',
        method: { name: overrides.method ?? 'METHOD_1' },
      },
    },
    processingInformation: { actionList: ['AP_SALE'] },
  };
}

const statusBody = {
  clientReferenceInformation: { code: 'TICKET-1' },
  paymentInformation: { paymentType: { name: 'bankTransfer', method: { name: 'METHOD_1' } } },
  processingInformation: { actionList: 'AP_STATUS' },
};

function refundBody(amount: string) {
  return {
    clientReferenceInformation: { code: 'TICKET-1', transactionId: `altr-${++seq}` },
    orderInformation: { amountDetails: { totalAmount: amount, currency: 'EUR' } },
    paymentInformation: { paymentType: { name: 'bankTransfer', method: { name: 'METHOD_1' } } },
    processingInformation: { actionList: 'AP_REFUND' },
  };
}

async function pendingSale(amount = '12.50'): Promise<{ id: string; url: string }> {
  const sale = await client.send('POST', '/pts/v2/payments', saleBody({ amount }));
  expect(sale.status).toBe(201);
  expect(sale.body.status).toBe('PENDING');
  const processor = sale.body.processorInformation as { paymentUrl: string; responseCode: string };
  expect(processor.responseCode).toBe('00001');
  return { id: sale.body.id as string, url: processor.paymentUrl };
}

async function press(url: string, action: string): Promise<number> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `action=${action}`,
  });
  return res.status;
}

describe('alternative-method sale', () => {
  it('goes PENDING → SETTLED when paid on its page, and refunds partially within the settled amount', async () => {
    const { id, url } = await pendingSale();
    expect(url).toBe(`${sandbox.url}/ap/${id}`);
    const page = await fetch(url);
    expect(await page.text()).toContain('12.50 EUR');
    expect(await press(url, 'pay')).toBe(200);
    advance(STATUS_CHECK_INTERVAL_MS);
    const checked = await client.send('POST', `/pts/v2/refresh-payment-status/${id}`, statusBody);
    expect(checked.status).toBe(200);
    expect(checked.body.status).toBe('SETTLED');
    expect((checked.body.processorInformation as { responseCode: string }).responseCode).toBe('00004');

    const first = await client.send('POST', `/pts/v2/payments/${id}/refunds`, refundBody('5.00'));
    expect(first.status).toBe(201);
    expect(first.body.status).toBe('REFUNDED');
    expect(first.body.refundAmountDetails).toEqual({ refundAmount: '5.00', currency: 'EUR' });
    const above = await client.send('POST', `/pts/v2/payments/${id}/refunds`, refundBody('8.00'));
    expect(above.status).toBe(201);
    expect(above.body.status).toBe('FAILED');
    expect(above.body.errorInformation).toMatchObject({ reason: 'INVALID_AMOUNT' });
    const rest = await client.send('POST', `/pts/v2/payments/${id}/refunds`, refundBody('7.50'));
    expect(rest.body.status).toBe('REFUNDED');
    expect(sandbox.consistency().ok).toBe(true);
  });

  it('refuses a status check sooner than 60 minutes after the sale or the previous check, and counts it', async () => {
    const { id } = await pendingSale();
    advance(STATUS_CHECK_INTERVAL_MS - 1);
    const early = await client.send('POST', `/pts/v2/refresh-payment-status/${id}`, statusBody);
    expect(early.status).toBe(429);
    expect(early.body.reason).toBe('TOO_MANY_REQUESTS');
    advance(1);
    expect((await client.send('POST', `/pts/v2/refresh-payment-status/${id}`, statusBody)).body.status).toBe(
      'PENDING',
    );
    advance(60_000);
    expect((await client.send('POST', `/pts/v2/refresh-payment-status/${id}`, statusBody)).status).toBe(429);
    const consistency = sandbox.consistency();
    expect(consistency.problems.map((p) => p.rule)).toEqual(['STATUS_POLLED_TOO_OFTEN']);
  });

  it('answers ABANDONED when nobody finished at the page, FAILED when the method rejected it', async () => {
    const left = await pendingSale();
    const failed = await pendingSale();
    expect(await press(failed.url, 'fail')).toBe(200);
    advance(ABANDON_AFTER_MS);
    expect(
      (await client.send('POST', `/pts/v2/refresh-payment-status/${left.id}`, statusBody)).body.status,
    ).toBe('ABANDONED');
    expect(
      (await client.send('POST', `/pts/v2/refresh-payment-status/${failed.id}`, statusBody)).body.status,
    ).toBe('FAILED');
    expect(await press(left.url, 'pay')).toBe(409);
  });

  it('answers FUNDED a day after settlement', async () => {
    const { id, url } = await pendingSale();
    await press(url, 'pay');
    advance(FUNDED_AFTER_MS);
    expect((await client.send('POST', `/pts/v2/refresh-payment-status/${id}`, statusBody)).body.status).toBe(
      'FUNDED',
    );
  });

  it('answers FAILED at once for a sale amount ending in 01–11', async () => {
    const sale = await client.send('POST', '/pts/v2/payments', saleBody({ amount: '12.02' }));
    expect(sale.status).toBe(201);
    expect(sale.body.status).toBe('FAILED');
    expect(sale.body.errorInformation).toMatchObject({ reason: 'INSUFFICIENT_FUND' });
  });

  it('refuses a refund of a sale that is not settled', async () => {
    const { id } = await pendingSale();
    const refund = await client.send('POST', `/pts/v2/payments/${id}/refunds`, refundBody('1.00'));
    expect(refund.body.status).toBe('FAILED');
    expect(refund.body.errorInformation).toMatchObject({ reason: 'NOT_SUPPORTED' });
  });

  it('validates the required fields and the profile', async () => {
    const body = saleBody({ method: 'METHOD_3', country: 'ES' });
    const refused = await client.send('POST', '/pts/v2/payments', body);
    expect(refused.status).toBe(400);
    const fields = (refused.body.details as Array<{ field: string; reason: string }>).map((d) => d.field);
    expect(fields).toEqual(
      expect.arrayContaining([
        'orderInformation.billTo.address1',
        'orderInformation.billTo.phoneNumber',
        'orderInformation.billTo.country',
      ]),
    );
    const noEmail = saleBody();
    delete (noEmail.orderInformation.billTo as Partial<typeof noEmail.orderInformation.billTo>).email;
    const missing = await client.send('POST', '/pts/v2/payments', noEmail);
    expect(missing.status).toBe(400);
    expect(missing.body.reason).toBe('MISSING_FIELD');
    const wrongType = await client.send('POST', '/pts/v2/payments', saleBody({ type: 'Voucher' }));
    expect(wrongType.status).toBe(400);
  });

  it('takes back an AP refund by its timeout void', async () => {
    const { id, url } = await pendingSale();
    await press(url, 'pay');
    const refund = refundBody('3.00');
    expect((await client.send('POST', `/pts/v2/payments/${id}/refunds`, refund)).body.status).toBe(
      'REFUNDED',
    );
    const voided = await client.send('POST', '/pts/v2/voids', {
      clientReferenceInformation: {
        code: 'TICKET-1',
        comments: 'VOID Timeout',
        transactionId: refund.clientReferenceInformation.transactionId,
      },
    });
    expect(voided.status).toBe(201);
    expect(voided.body.status).toBe('VOIDED');
    const sale = sandbox.ledger().transactions.find((t) => t.id === id);
    expect(sale?.amounts.refunded).toBe(0);
  });
});
