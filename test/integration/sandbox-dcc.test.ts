import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { valueAt } from '../../src/sandbox/fields.js';
import { createSignedClient, type SignedClient } from '../../src/sandbox/signed-client.js';
import { samplePayment } from '../../src/sandbox/sample-requests.js';

let sandbox: Sandbox;
let client: SignedClient;
let offsetMs = 0;

function offerRequest(bin: string, amount = '20.00', currency = 'EUR'): Record<string, unknown> {
  return {
    clientReferenceInformation: { code: 'dcc-1' },
    orderInformation: {
      amountDetails: { originalAmount: amount, originalCurrency: currency },
      currencyConversion: { type: 'DCC' },
    },
    paymentInformation: { card: { number: bin } },
    pointOfSaleInformation: { entryMode: 'CONTACTLESS', terminalId: 'T1' },
  };
}

beforeAll(async () => {
  sandbox = await startSandbox();
  client = createSignedClient(sandbox.url, undefined, () => new Date(Date.now() + offsetMs));
});
afterAll(async () => {
  await sandbox.close();
});
beforeEach(() => {
  sandbox.reset();
  offsetMs = 0;
});

describe('DCC offers', () => {
  it('offers the billing currency with margin, expiry and the disclaimer', async () => {
    const a = await client.send('POST', '/vas/v1/currencyconversion', offerRequest('41111111'));
    expect(a.status).toBe(201);
    expect(a.body.status).toBe('PENDING');
    const offer = (
      valueAt(a.body, 'orderInformation.currencyConversion.offer') as Array<Record<string, unknown>>
    )[0]!;
    // 1.0825 × 1.035 = 1.1203875 → 1.120388; 20.00 EUR × 1.120388 = 22.41 USD.
    expect(offer).toMatchObject({
      currency: 'USD',
      exchangeRate: '1.120388',
      amount: '22.41',
      marginRate: '3.5',
      originalAmount: '20.00',
    });
    expect(
      Date.parse(String(offer.exchangeRateExpirationTimeUtc)) - Date.parse(String(offer.exchangeRateTimeUtc)),
    ).toBe(600_000);
    expect(valueAt(a.body, 'orderInformation.currencyConversion.disclaimer')).toEqual(expect.any(String));
  });

  it.each([
    ['22224200', 'CURRENCY_MATCH'],
    ['54133390', 'NOT_ELIGIBLE'],
    ['60110000', 'BIN_UNKNOWN'],
  ])('declines %s with %s', async (bin, reason) => {
    const a = await client.send('POST', '/vas/v1/currencyconversion', offerRequest(bin));
    expect(a.body.status).toBe('DECLINED');
    expect(valueAt(a.body, 'errorInformation.reason')).toBe(reason);
  });

  it('checks a converted authorization against the offer: rate, amounts and expiry', async () => {
    const a = await client.send('POST', '/vas/v1/currencyconversion', offerRequest('41111111'));
    const recon = String(valueAt(a.body, 'orderInformation.currencyConversion.reconciliationId'));
    const dcc = (rate: string, total: string): Record<string, unknown> => {
      const body = samplePayment({
        amountMinor: 2241,
        currency: 'USD',
        transactionId: `dcc-${rate}-${total}-${Math.random()}`,
      });
      const amountDetails = valueAt(body, 'orderInformation.amountDetails') as Record<string, unknown>;
      Object.assign(amountDetails, {
        totalAmount: total,
        originalAmount: '20.00',
        originalCurrency: 'EUR',
        exchangeRate: rate,
        exchangeRateTimeStamp: '20261122101500',
        currencyConversion: { indicator: '1', reconciliationId: recon },
      });
      return body;
    };
    expect((await client.send('POST', '/pts/v2/payments', dcc('1.120388', '22.41'))).body.status).toBe(
      'AUTHORIZED',
    );
    const wrongRate = await client.send('POST', '/pts/v2/payments', dcc('1.2', '22.41'));
    expect(wrongRate.status).toBe(400);
    expect(wrongRate.body.details).toContainEqual({
      field: 'orderInformation.amountDetails.exchangeRate',
      reason: 'INVALID_DATA',
    });
    const wrongAmount = await client.send('POST', '/pts/v2/payments', dcc('1.120388', '23.00'));
    expect(wrongAmount.body.details).toContainEqual({
      field: 'orderInformation.amountDetails.totalAmount',
      reason: 'INVALID_DATA',
    });
    sandbox.advanceClock(11 * 60 * 1000);
    offsetMs = 11 * 60 * 1000;
    const expired = await client.send('POST', '/pts/v2/payments', dcc('1.120388', '22.41'));
    expect(expired.status).toBe(400);
    expect(String(expired.body.message)).toContain('expired');
  });
});
