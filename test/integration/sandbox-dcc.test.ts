import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEMO_MERCHANT, startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { valueAt } from '../../src/sandbox/fields.js';
import { signRequest } from '../../src/sandbox/request-signer.js';
import { createSignedClient, type SignedClient } from '../../src/sandbox/testing/signed-client.js';
import { sampleCapture, samplePayment, sampleRefund } from '../../src/sandbox/sample-requests.js';

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

/**
 * An offer call with the header fields spec 001 requires ("headers `Authorization` and `keyId`"): a signed caller
 * repeats its signature as `Authorization: Signature …` and names its key id (src/sandbox/dcc.ts offerHeadersProblem).
 * `omit` drops one of them.
 */
async function sendOffer(
  body: Record<string, unknown>,
  omit?: 'authorization' | 'keyid',
): Promise<{ status: number; body: Record<string, unknown> }> {
  const text = JSON.stringify(body);
  const path = '/vas/v1/currencyconversion';
  const headers = signRequest({
    method: 'POST',
    path,
    host: new URL(sandbox.url).host,
    body: text,
    merchant: DEMO_MERCHANT,
    date: new Date(Date.now() + offsetMs).toUTCString(),
  });
  const all: Record<string, string> = {
    ...headers,
    authorization: `Signature ${headers.signature ?? ''}`,
    keyid: DEMO_MERCHANT.keyId,
    'content-type': 'application/json',
  };
  if (omit !== undefined) delete all[omit];
  const res = await fetch(`${sandbox.url}${path}`, { method: 'POST', headers: all, body: text });
  const raw = await res.text();
  return { status: res.status, body: raw ? (JSON.parse(raw) as Record<string, unknown>) : {} };
}

/**
 * The offer's rate time as a converted authorization sends it back (`exchangeRateTimeStamp`, 14 digits yyyyMMDDhhmmss
 * in GMT): the digits of its `exchangeRateTimeUtc`, which the sandbox writes to the second in UTC.
 */
function rateTimeStamp(offerAnswer: Record<string, unknown>): string {
  const offer = (
    valueAt(offerAnswer, 'orderInformation.currencyConversion.offer') as Array<Record<string, unknown>>
  )[0]!;
  return String(offer.exchangeRateTimeUtc).replace(/\D/g, '');
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
  it.each(['authorization', 'keyid'] as const)(
    'answers 401 to an offer call without the %s header',
    async (h) => {
      const a = await sendOffer(offerRequest('41111111'), h);
      expect(a.status).toBe(401);
      expect(sandbox.ledger().unmatchedRequests.at(-1)).toMatchObject({
        path: '/vas/v1/currencyconversion',
        httpStatus: 401,
      });
    },
  );

  it('answers 401 to a signed offer call whose Authorization is not its signature', async () => {
    const a = await client.send('POST', '/vas/v1/currencyconversion', offerRequest('41111111'), {
      authorization: 'Signature keyid="x", signature="AAAA"',
      keyid: DEMO_MERCHANT.keyId,
    });
    expect(a.status).toBe(401);
  });

  it('offers the billing currency with margin, expiry and the disclaimer', async () => {
    const a = await sendOffer(offerRequest('41111111'));
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
    const a = await sendOffer(offerRequest(bin));
    expect(a.body.status).toBe('DECLINED');
    expect(valueAt(a.body, 'errorInformation.reason')).toBe(reason);
  });

  it('checks a converted authorization against the offer: rate, amounts and expiry', async () => {
    const a = await sendOffer(offerRequest('41111111'));
    const recon = String(valueAt(a.body, 'orderInformation.currencyConversion.reconciliationId'));
    const stamp = rateTimeStamp(a.body);
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
        exchangeRateTimeStamp: stamp,
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

  it("refuses a converted authorization that does not repeat its offer's rate time or id, naming the field", async () => {
    const STAMP = 'orderInformation.amountDetails.exchangeRateTimeStamp';
    const first = await sendOffer(offerRequest('41111111'));
    // A second offer of the same price, a second later: the same rate, another rate time.
    sandbox.advanceClock(1000);
    offsetMs = 1000;
    const second = await sendOffer(offerRequest('41111111'));
    const stamps = [rateTimeStamp(first.body), rateTimeStamp(second.body)];
    expect(stamps[0]).not.toBe(stamps[1]);
    const authorize = (
      family: 'A' | 'B',
      offerAnswer: Record<string, unknown>,
      changes: Record<string, unknown>,
    ): Promise<{ status: number; body: Record<string, unknown> }> => {
      const body = samplePayment({
        amountMinor: family === 'A' ? 2241 : 2000,
        currency: family === 'A' ? 'USD' : 'EUR',
        transactionId: `dcc-stamp-${Math.random()}`,
      });
      Object.assign(
        valueAt(body, 'orderInformation.amountDetails') as Record<string, unknown>,
        family === 'A'
          ? {
              originalAmount: '20.00',
              originalCurrency: 'EUR',
              currencyConversion: {
                indicator: '1',
                id: offerAnswer.id,
                reconciliationId: valueAt(
                  offerAnswer,
                  'orderInformation.currencyConversion.reconciliationId',
                ),
              },
            }
          : { foreignAmount: '22.41', foreignCurrency: 'USD', currencyConversion: { indicator: '1' } },
        { exchangeRate: '1.120388', exchangeRateTimeStamp: rateTimeStamp(offerAnswer) },
        changes,
      );
      return client.send('POST', '/pts/v2/payments', body);
    };
    for (const family of ['A', 'B'] as const) {
      // Family A names its offer: the first offer's terms with the second offer's rate time are refused, as is an
      // invented rate time. Family B names an offer only by its terms, so the second offer's rate time with its rate
      // and amounts is the second offer (authorized below); an invented one matches no offer's.
      for (const stamp of family === 'A' ? [stamps[1]!, '20261122101500'] : ['20261122101500']) {
        const a = await authorize(family, first.body, { exchangeRateTimeStamp: stamp });
        expect(a.status, `${family} ${stamp}`).toBe(400);
        expect(a.body, `${family} ${stamp}`).toMatchObject({
          status: 'INVALID_REQUEST',
          reason: 'INVALID_DATA',
        });
        expect(a.body.details, `${family} ${stamp}`).toEqual([{ field: STAMP, reason: 'INVALID_DATA' }]);
      }
      if (family === 'A') {
        const stale = await authorize('A', second.body, { exchangeRateTimeStamp: stamps[0] });
        expect(stale.body.details).toEqual([{ field: STAMP, reason: 'INVALID_DATA' }]);
        const otherId = await authorize('A', first.body, {
          currencyConversion: {
            indicator: '1',
            id: second.body.id,
            reconciliationId: valueAt(first.body, 'orderInformation.currencyConversion.reconciliationId'),
          },
        });
        expect(otherId.body.details).toEqual([
          { field: 'orderInformation.amountDetails.currencyConversion.id', reason: 'INVALID_DATA' },
        ]);
      }
      // Each offer's own terms are authorized.
      for (const offerAnswer of [first.body, second.body]) {
        const a = await authorize(family, offerAnswer, {});
        expect(a.status, family).toBe(201);
        expect(a.body.status, family).toBe('AUTHORIZED');
      }
    }
  });

  it('answers a converted authorization sent again unchanged with its first answer, after its offer expired too', async () => {
    const offerAnswer = await sendOffer(offerRequest('41111111'));
    const body = samplePayment({
      amountMinor: 2241,
      currency: 'USD',
      transactionId: `dcc-again-${Date.now()}`,
    });
    Object.assign(valueAt(body, 'orderInformation.amountDetails') as Record<string, unknown>, {
      originalAmount: '20.00',
      originalCurrency: 'EUR',
      exchangeRate: '1.120388',
      exchangeRateTimeStamp: rateTimeStamp(offerAnswer.body),
      currencyConversion: {
        indicator: '1',
        id: offerAnswer.body.id,
        reconciliationId: valueAt(offerAnswer.body, 'orderInformation.currencyConversion.reconciliationId'),
      },
    });
    const first = await client.send('POST', '/pts/v2/payments', body);
    expect(first.body.status).toBe('AUTHORIZED');
    sandbox.advanceClock(11 * 60 * 1000);
    offsetMs = 11 * 60 * 1000;
    const again = await client.send('POST', '/pts/v2/payments', body);
    expect(again.status).toBe(201);
    expect(again.body.id).toBe(first.body.id);
  });
});

/**
 * Spec 001: "DCC capture and refund require the same field set (currency, exchangeRate, totalAmount, plus
 * originalAmount/originalCurrency for family A, or foreignAmount/foreignCurrency/exchangeRateTimeStamp for family B).
 * Rules: use the exchange rate of the authorization". The default table converts 20.00 EUR to 22.41 USD at 1.120388.
 */
describe('DCC follow-ons: capture and refund of a converted payment', () => {
  const RATE = '1.120388';
  /** The rate time stamp of the last offer: its converted authorization and that one's follow-ons send it. */
  let stamp = '';
  let seq = 0;
  const txId = (label: string): string => `dcc-${label}-${++seq}-${Date.now()}`;

  async function offer(): Promise<string> {
    const a = await sendOffer(offerRequest('41111111'));
    expect(a.body.status).toBe('PENDING');
    stamp = rateTimeStamp(a.body);
    return String(valueAt(a.body, 'orderInformation.currencyConversion.reconciliationId'));
  }

  /** A converted pre-authorization (or sale) of 20.00 EUR = 22.41 USD in the field set of `family`. */
  async function converted(family: 'A' | 'B', sale: boolean): Promise<string> {
    const recon = await offer();
    const body = samplePayment({
      amountMinor: family === 'A' ? 2241 : 2000,
      currency: family === 'A' ? 'USD' : 'EUR',
      transactionId: txId('auth'),
      sale,
    });
    const details = valueAt(body, 'orderInformation.amountDetails') as Record<string, unknown>;
    Object.assign(
      details,
      family === 'A'
        ? {
            originalAmount: '20.00',
            originalCurrency: 'EUR',
            currencyConversion: { indicator: '1', reconciliationId: recon },
          }
        : { foreignAmount: '22.41', foreignCurrency: 'USD', currencyConversion: { indicator: '1' } },
      { exchangeRate: RATE, exchangeRateTimeStamp: stamp },
    );
    const a = await client.send('POST', '/pts/v2/payments', body);
    expect(a.status).toBe(201);
    expect(a.body.status).toBe('AUTHORIZED');
    return String(a.body.id);
  }

  /** Adds DCC fields to a follow-on body built by the samples. */
  function withDcc(body: Record<string, unknown>, fields: Record<string, unknown>): Record<string, unknown> {
    Object.assign(valueAt(body, 'orderInformation.amountDetails') as Record<string, unknown>, fields);
    return body;
  }

  const familyA = (original: string): Record<string, unknown> => ({
    exchangeRate: RATE,
    originalAmount: original,
    originalCurrency: 'EUR',
    currencyConversion: { indicator: '1' },
  });
  const familyB = (foreign: string): Record<string, unknown> => ({
    exchangeRate: RATE,
    foreignAmount: foreign,
    foreignCurrency: 'USD',
    exchangeRateTimeStamp: stamp,
    currencyConversion: { indicator: '1' },
  });

  it('refuses a family A capture that carries only amount and currency, naming each missing field', async () => {
    const auth = await converted('A', false);
    const a = await client.send(
      'POST',
      `/pts/v2/payments/${auth}/captures`,
      sampleCapture(2241, 2241, txId('cap'), 'USD'),
    );
    expect(a.status).toBe(400);
    expect(a.body.reason).toBe('MISSING_FIELD');
    for (const field of ['exchangeRate', 'originalAmount', 'originalCurrency'])
      expect(a.body.details).toContainEqual({
        field: `orderInformation.amountDetails.${field}`,
        reason: 'MISSING_FIELD',
      });
  });

  it("refuses a capture at another rate than the authorization's", async () => {
    const auth = await converted('A', false);
    const a = await client.send(
      'POST',
      `/pts/v2/payments/${auth}/captures`,
      withDcc(sampleCapture(2241, 2241, txId('cap'), 'USD'), { ...familyA('20.00'), exchangeRate: '1.2' }),
    );
    expect(a.status).toBe(400);
    expect(a.body.reason).toBe('INVALID_DATA');
    expect(a.body.details).toEqual([
      { field: 'orderInformation.amountDetails.exchangeRate', reason: 'INVALID_DATA' },
    ]);
  });

  it('refuses a partial capture whose billing amount is not the local amount at the rate', async () => {
    const auth = await converted('A', false);
    // 10.00 EUR × 1.120388 = 11.20 USD, not 12.00.
    const a = await client.send(
      'POST',
      `/pts/v2/payments/${auth}/captures`,
      withDcc(sampleCapture(1200, 2241, txId('cap'), 'USD'), familyA('10.00')),
    );
    expect(a.status).toBe(400);
    expect(a.body.details).toEqual([
      { field: 'orderInformation.amountDetails.totalAmount', reason: 'INVALID_DATA' },
    ]);
  });

  it('captures and refunds a family A pre-authorization that repeats the field set at its rate', async () => {
    const auth = await converted('A', false);
    const capture = await client.send(
      'POST',
      `/pts/v2/payments/${auth}/captures`,
      withDcc(sampleCapture(1120, 2241, txId('cap'), 'USD'), familyA('10.00')),
    );
    expect(capture.status).toBe(201);
    const captureId = String(capture.body.id);
    const bare = await client.send(
      'POST',
      `/pts/v2/captures/${captureId}/refunds`,
      sampleRefund(560, txId('ref'), 'capture', 'USD'),
    );
    expect(bare.status).toBe(400);
    expect(bare.body.reason).toBe('MISSING_FIELD');
    expect(bare.body.details).toContainEqual({
      field: 'orderInformation.amountDetails.originalAmount',
      reason: 'MISSING_FIELD',
    });
    // 5.00 EUR × 1.120388 = 5.60 USD.
    const refund = await client.send(
      'POST',
      `/pts/v2/captures/${captureId}/refunds`,
      withDcc(sampleRefund(560, txId('ref'), 'capture', 'USD'), familyA('5.00')),
    );
    expect(refund.status).toBe(201);
    expect(refund.body.status).toBe('PENDING');
  });

  it('refuses a family B refund of a sale without foreignAmount, foreignCurrency, rate and timestamp', async () => {
    const sale = await converted('B', true);
    const a = await client.send(
      'POST',
      `/pts/v2/payments/${sale}/refunds`,
      sampleRefund(2000, txId('ref'), 'sale', 'EUR'),
    );
    expect(a.status).toBe(400);
    expect(a.body.reason).toBe('MISSING_FIELD');
    for (const field of ['exchangeRate', 'foreignAmount', 'foreignCurrency', 'exchangeRateTimeStamp'])
      expect(a.body.details).toContainEqual({
        field: `orderInformation.amountDetails.${field}`,
        reason: 'MISSING_FIELD',
      });
    // Family A's fields are not family B's.
    const other = await client.send(
      'POST',
      `/pts/v2/payments/${sale}/refunds`,
      withDcc(sampleRefund(2000, txId('ref'), 'sale', 'EUR'), familyA('22.41')),
    );
    expect(other.status).toBe(400);
    expect(other.body.details).toContainEqual({
      field: 'orderInformation.amountDetails.foreignAmount',
      reason: 'MISSING_FIELD',
    });
  });

  it("refuses a family B refund at another rate, and accepts the full refund at the sale's rate", async () => {
    const sale = await converted('B', true);
    const wrong = await client.send(
      'POST',
      `/pts/v2/payments/${sale}/refunds`,
      withDcc(sampleRefund(2000, txId('ref'), 'sale', 'EUR'), { ...familyB('22.41'), exchangeRate: '1.1' }),
    );
    expect(wrong.status).toBe(400);
    expect(wrong.body.details).toEqual([
      { field: 'orderInformation.amountDetails.exchangeRate', reason: 'INVALID_DATA' },
    ]);
    const refund = await client.send(
      'POST',
      `/pts/v2/payments/${sale}/refunds`,
      withDcc(sampleRefund(2000, txId('ref'), 'sale', 'EUR'), familyB('22.41')),
    );
    expect(refund.status).toBe(201);
    expect(valueAt(refund.body, 'refundAmountDetails.refundAmount')).toBe('20.00');
  });

  it('asks nothing of a refund of a sale in the local currency', async () => {
    const body = samplePayment({
      amountMinor: 2000,
      currency: 'EUR',
      transactionId: txId('sale'),
      sale: true,
    });
    const sale = await client.send('POST', '/pts/v2/payments', body);
    expect(sale.body.status).toBe('AUTHORIZED');
    const refund = await client.send(
      'POST',
      `/pts/v2/payments/${String(sale.body.id)}/refunds`,
      sampleRefund(2000, txId('ref'), 'sale', 'EUR'),
    );
    expect(refund.status).toBe(201);
  });
});
