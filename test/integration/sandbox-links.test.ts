import { createServer, type IncomingMessage } from 'node:http';
import { createHmac } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEMO_MERCHANT, startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { valueAt } from '../../src/sandbox/fields.js';
import { createSignedClient, type SignedClient } from '../../src/sandbox/testing/signed-client.js';
import { samplePayment } from '../../src/sandbox/sample-requests.js';

let sandbox: Sandbox;
let client: SignedClient;
const hooks: Array<{ headers: IncomingMessage['headers']; body: string }> = [];
const hookWaiters: Array<() => void> = [];
const hookServer = createServer((req, res) => {
  let body = '';
  req.on('data', (c: Buffer) => (body += c.toString('utf8')));
  req.on('end', () => {
    hooks.push({ headers: req.headers, body });
    for (const w of hookWaiters.splice(0)) w();
    res.writeHead(200).end();
  });
});

function link(purchaseNumber: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    processingInformation: { linkType: 'PURCHASE' },
    purchaseInformation: { purchaseNumber },
    orderInformation: {
      amountDetails: { currency: 'EUR', totalAmount: '12.50' },
      lineItems: [{ productName: 'Parking 2 h, zone B', unitPrice: '12.50', productSku: 'ZB-2H' }],
    },
    ...extra,
  };
}

beforeAll(async () => {
  await new Promise<void>((r) => hookServer.listen(0, '127.0.0.1', r));
  const { port } = hookServer.address() as AddressInfo;
  sandbox = await startSandbox({ webhookUrl: `http://127.0.0.1:${port}/hook` });
  client = createSignedClient(sandbox.url);
});
afterAll(async () => {
  await sandbox.close();
  await new Promise<void>((r) => hookServer.close(() => r()));
});
beforeEach(() => {
  sandbox.reset();
  hooks.length = 0;
});

describe('payment links', () => {
  it('creates a link whose URL is returned only while it is ACTIVE', async () => {
    const created = await client.send('POST', '/ipl/v2/payment-links', link('P-1'));
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ id: 'P-1', status: 'ACTIVE' });
    expect(String(valueAt(created.body, 'purchaseInformation.paymentLink'))).toBe(`${sandbox.url}/pay/P-1`);
    expect(valueAt(created.body, 'orderInformation.amountDetails.totalAmount')).toBe(12.5);
    const off = await client.send('PATCH', '/ipl/v2/payment-links/P-1', {
      ...link('P-1'),
      status: 'INACTIVE',
    });
    expect(off.body.status).toBe('INACTIVE');
    expect(valueAt(off.body, 'purchaseInformation.paymentLink')).toBeUndefined();
    expect((await fetch(`${sandbox.url}/pay/P-1`)).status).toBe(404);
  });

  it('refuses a second link with the same purchase number (DUPLICATE_RECORD)', async () => {
    await client.send('POST', '/ipl/v2/payment-links', link('P-2'));
    const again = await client.send('POST', '/ipl/v2/payment-links', link('P-2'));
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ status: 'BADREQUEST', reason: 'DUPLICATE_RECORD' });
  });

  it('names every missing field of a create (VALIDATION_ERRORS)', async () => {
    const a = await client.send('POST', '/ipl/v2/payment-links', {
      processingInformation: { linkType: 'DONATION' },
    });
    expect(a.status).toBe(400);
    expect(a.body.reason).toBe('VALIDATION_ERRORS');
    const fields = (a.body.details as Array<{ field: string }>).map((d) => d.field);
    expect(fields).toEqual(
      expect.arrayContaining([
        'orderInformation.amountDetails.currency',
        'orderInformation.amountDetails.minAmount',
        'purchaseInformation.purchaseNumber',
        'orderInformation.lineItems',
      ]),
    );
  });

  it('removes the fields an update omits', async () => {
    await client.send(
      'POST',
      '/ipl/v2/payment-links',
      link('P-3', { processingInformation: { linkType: 'PURCHASE', requestPhone: true } }),
    );
    const updated = await client.send('PATCH', '/ipl/v2/payment-links/P-3', {
      processingInformation: { linkType: 'PURCHASE' },
      orderInformation: {
        amountDetails: { currency: 'EUR', totalAmount: '15.00' },
        lineItems: [{ productName: 'Parking 3 h', unitPrice: '15.00' }],
      },
    });
    expect(updated.status).toBe(200);
    expect(valueAt(updated.body, 'processingInformation.requestPhone')).toBe(false);
    expect(valueAt(updated.body, 'orderInformation.lineItems')).toEqual([
      { productName: 'Parking 3 h', unitPrice: 15, quantity: 1 },
    ]);
  });

  it('lists with offset and limit and links the next page', async () => {
    for (let i = 0; i < 5; i++) await client.send('POST', '/ipl/v2/payment-links', link(`L-${i}`));
    const page = await client.send('GET', '/ipl/v2/payment-links?offset=0&limit=2');
    expect(page.body.totalLinks).toBe(5);
    expect((page.body.links as unknown[]).length).toBe(2);
    expect(valueAt(page.body, '_links.next.href')).toBe('/ipl/v2/payment-links?offset=2&limit=2');
    const last = await client.send('GET', '/ipl/v2/payment-links?offset=4&limit=2');
    expect(valueAt(last.body, '_links.next')).toBeUndefined();
    expect((await client.send('GET', '/ipl/v2/payment-links?limit=1001')).status).toBe(400);
    expect((await client.send('GET', '/ipl/v2/payment-links/NOPE')).status).toBe(404);
  });

  it('refuses a limit of 0: its page of nothing would link itself as the next page, and a client following it never ends', async () => {
    await client.send('POST', '/ipl/v2/payment-links', link('L-0'));
    const zero = await client.send('GET', '/ipl/v2/payment-links?offset=0&limit=0');
    expect(valueAt(zero.body, '_links.next.href')).not.toBe('/ipl/v2/payment-links?offset=0&limit=0');
    expect(zero.status).toBe(400);
    expect(zero.body).toMatchObject({ status: 'BADREQUEST', reason: 'VALIDATION_ERRORS' });
  });

  it('suspends the merchant when a link field holds a card number, and rejects every later request', async () => {
    const bad = await client.send(
      'POST',
      '/ipl/v2/payment-links',
      link('P-4', {
        orderInformation: {
          amountDetails: { currency: 'EUR', totalAmount: '12.50' },
          lineItems: [{ productName: 'Card 4111111111111111', unitPrice: '12.50' }],
        },
      }),
    );
    expect(bad.status).toBe(400);
    expect(bad.body.reason).toBe('ACTION_NOT_ALLOWED');
    expect(sandbox.ledger().merchants).toContainEqual(
      expect.objectContaining({ merchantId: 'testrest', suspended: true }),
    );
    const pay = await client.send(
      'POST',
      '/pts/v2/payments',
      samplePayment({ amountMinor: 1000, transactionId: 'after-suspension' }),
    );
    expect(pay.status).toBe(400);
    expect(pay.body.reason).toBe('INVALID_MERCHANT_CONFIGURATION');
    expect((await client.send('POST', '/ipl/v2/payment-links', link('P-5'))).body.reason).toBe(
      'ACTION_NOT_ALLOWED',
    );
    expect(JSON.stringify(sandbox.ledger())).not.toContain('4111111111111111');
  });
});

describe('hosted payment page', () => {
  it('serves a real form, records the payment and sends a signed webhook without card data', async () => {
    await client.send('POST', '/ipl/v2/payment-links', link('P-6'));
    const page = await fetch(`${sandbox.url}/pay/P-6?locale=de_DE`);
    const html = await page.text();
    expect(html).toContain('<html lang="de-DE"');
    expect(html).toContain('12.50 EUR');
    const arrived = new Promise<void>((r) => hookWaiters.push(r));
    const paid = await fetch(`${sandbox.url}/pay/P-6`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        cardNumber: '4111 1111 1111 1111',
        expiry: '12/30',
        securityCode: '123',
      }).toString(),
    });
    expect(await paid.text()).toContain('Payment approved');
    await arrived;
    const tx = sandbox.ledger().transactions.find((t) => t.kind === 'link-payment')!;
    expect(tx).toMatchObject({
      status: 'AUTHORIZED',
      code: 'P-6',
      amounts: { captured: 1250 },
      card: { masked: '411111******1111' },
    });
    const hook = hooks[0]!;
    expect(hook.body).not.toContain('4111111111111111');
    const sig = /t=(\d+),sig=(.+)/.exec(String(hook.headers['v-c-signature']))!;
    const expected = createHmac('sha256', Buffer.from(DEMO_MERCHANT.sharedSecret, 'base64'))
      .update(`${sig[1]}.${hook.body}`)
      .digest('base64');
    expect(sig[2]).toBe(expected);
    expect(JSON.parse(hook.body)).toMatchObject({
      payload: { paymentLinkId: 'P-6', paymentId: tx.id, status: 'AUTHORIZED', amount: '12.50' },
    });
  });

  it('declines a declining test card on the page', async () => {
    await client.send('POST', '/ipl/v2/payment-links', link('P-7'));
    const paid = await fetch(`${sandbox.url}/pay/P-7`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        cardNumber: '4000000000009995',
        expiry: '12/30',
        securityCode: '123',
      }).toString(),
    });
    const html = await paid.text();
    expect(html).toContain('Payment declined');
    expect(html).toContain('INSUFFICIENT_FUND');
  });
});
