/**
 * What the certification pack checks of follow-ons, enforced by the running sandbox as the gateway would: a reversal
 * of an EMV original repeats its tags; the follow-ons of a converted (DCC) authorization repeat its field set at its
 * rate; a DCC offer call carries the `Authorization` and `keyId` headers.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { signRequest } from './request-signer.js';
import { sampleCapture, samplePayment, sampleReversal } from './sample-requests.js';
import { DEMO_MERCHANT, startSandbox, type Sandbox } from './server.js';
import { createSignedClient, type SignedClient } from './testing/signed-client.js';

let sandbox: Sandbox;
let client: SignedClient;
let seq = 0;
const txId = (label: string): string => `rules-${label}-${++seq}`;

beforeAll(async () => {
  sandbox = await startSandbox();
  client = createSignedClient(sandbox.url);
});
afterAll(async () => {
  await sandbox.close();
});
beforeEach(() => sandbox.reset());

const OFFER = {
  orderInformation: {
    amountDetails: { originalAmount: '20.00', originalCurrency: 'EUR' },
    currencyConversion: { type: 'DCC' },
  },
  paymentInformation: { card: { number: '41111111' } },
  pointOfSaleInformation: { entryMode: 'CONTACTLESS', terminalId: 'T1' },
};

/**
 * A family A converted pre-authorization of 20.00 EUR sent with `stamp` as its exchangeRateTimeStamp (a text, or made
 * from the offer's; by default the offer's rate time, as the gateway wants it: 14 digits yyyyMMDDhhmmss, GMT): the
 * answer, the offer's rate, billing amount, rate time stamp and reconciliation id, and the EMV tags sent.
 */
async function authorizeConverted(stamp?: string | ((offerStamp: string) => string)): Promise<{
  answer: Awaited<ReturnType<SignedClient['send']>>;
  rate: string;
  billing: string;
  stamp: string;
  reconciliationId: string;
  tags: string;
}> {
  const offered = await client.send('POST', '/vas/v1/currencyconversion', OFFER);
  expect(offered.status).toBe(201);
  const conversion = (offered.body.orderInformation as { currencyConversion: Record<string, unknown> })
    .currencyConversion;
  const offer = (conversion.offer as Array<Record<string, string>>)[0] ?? {};
  const billing = offer.amount ?? '';
  const rate = offer.exchangeRate ?? '';
  const offerStamp = (offer.exchangeRateTimeUtc ?? '').replace(/\D/g, '');
  const body = samplePayment({
    amountMinor: Math.round(Number(billing) * 100),
    currency: 'USD',
    transactionId: txId('dcc'),
  });
  Object.assign((body.orderInformation as { amountDetails: Record<string, unknown> }).amountDetails, {
    originalAmount: '20.00',
    originalCurrency: 'EUR',
    exchangeRate: rate,
    exchangeRateTimeStamp: typeof stamp === 'function' ? stamp(offerStamp) : (stamp ?? offerStamp),
    currencyConversion: { indicator: '1', reconciliationId: conversion.reconciliationId },
  });
  const answer = await client.send('POST', '/pts/v2/payments', body);
  const tags = (body.pointOfSaleInformation as { emv: { tags: string } }).emv.tags;
  const reconciliationId = String(conversion.reconciliationId);
  return { answer, rate, billing, stamp: offerStamp, reconciliationId, tags };
}

/**
 * A family A converted pre-authorization of 20.00 EUR; its id, the offer's rate, billing amount, rate time and
 * reconciliation id.
 */
async function convertedAuthorization(): Promise<{
  id: string;
  rate: string;
  billing: string;
  stamp: string;
  reconciliationId: string;
  tags: string;
}> {
  const { answer, rate, billing, stamp, reconciliationId, tags } = await authorizeConverted();
  expect(answer.status).toBe(201);
  return { id: String(answer.body.id), rate, billing, stamp, reconciliationId, tags };
}

/** The 14-digit GMT time stamp `seconds` after `stamp`. */
function stampPlus(stamp: string, seconds: number): string {
  const iso = `${stamp.slice(0, 4)}-${stamp.slice(4, 6)}-${stamp.slice(6, 8)}T${stamp.slice(8, 10)}:${stamp.slice(10, 12)}:${stamp.slice(12)}Z`;
  return new Date(Date.parse(iso) + seconds * 1000).toISOString().slice(0, 19).replace(/\D/g, '');
}

function withDcc(body: Record<string, unknown>, fields: Record<string, unknown>): Record<string, unknown> {
  Object.assign((body.orderInformation as { amountDetails: Record<string, unknown> }).amountDetails, fields);
  return body;
}

describe('a reversal of an EMV original repeats its tags (reference/gateway.md §7, spec 001)', () => {
  it('refuses a reversal of a contactless pre-authorization without emv.tags, naming the field', async () => {
    const auth = await client.send(
      'POST',
      '/pts/v2/payments',
      samplePayment({ amountMinor: 2000, transactionId: txId('a') }),
    );
    const a = await client.send(
      'POST',
      `/pts/v2/payments/${String(auth.body.id)}/reversals`,
      sampleReversal(2000),
    );
    expect(a.status).toBe(400);
    expect(a.body).toMatchObject({ status: 'INVALID_REQUEST', reason: 'MISSING_FIELD' });
    expect(a.body.message).toContain('pointOfSaleInformation.emv.tags');
    expect(a.body.details).toEqual([{ field: 'pointOfSaleInformation.emv.tags', reason: 'MISSING_FIELD' }]);
  });

  it('refuses it after a contact read too, and reverses when the tags are repeated', async () => {
    const body = samplePayment({ amountMinor: 2000, transactionId: txId('c'), entryMode: 'contact' });
    const auth = await client.send('POST', '/pts/v2/payments', body);
    const path = `/pts/v2/payments/${String(auth.body.id)}/reversals`;
    expect((await client.send('POST', path, sampleReversal(2000))).status).toBe(400);
    const tags = (body.pointOfSaleInformation as { emv: { tags: string } }).emv.tags;
    const a = await client.send('POST', path, sampleReversal(2000, 'EUR', tags));
    expect(a.status).toBe(201);
    expect(a.body.status).toBe('REVERSED');
  });

  it('asks no tags of the reversal of a swiped pre-authorization', async () => {
    const body = samplePayment({ amountMinor: 2000, transactionId: txId('s'), entryMode: 'swiped' });
    const auth = await client.send('POST', '/pts/v2/payments', body);
    const a = await client.send(
      'POST',
      `/pts/v2/payments/${String(auth.body.id)}/reversals`,
      sampleReversal(2000),
    );
    expect(a.status).toBe(201);
  });
});

describe('the follow-ons of a converted authorization (spec 001, DCC)', () => {
  it('refuses a capture without the DCC field set, naming each missing field', async () => {
    const auth = await convertedAuthorization();
    const amount = Math.round(Number(auth.billing) * 100);
    const a = await client.send(
      'POST',
      `/pts/v2/payments/${auth.id}/captures`,
      sampleCapture(amount, amount, txId('cap'), 'USD'),
    );
    expect(a.status).toBe(400);
    expect(a.body).toMatchObject({ status: 'INVALID_REQUEST', reason: 'MISSING_FIELD' });
    expect(a.body.details).toContainEqual({
      field: 'orderInformation.amountDetails.exchangeRate',
      reason: 'MISSING_FIELD',
    });
  });

  it('refuses a capture in the local currency as the customer declining conversion at completion (indicator 3)', async () => {
    // spec 001: a capture of a converted authorization repeats its field set at its rate. A customer who declines
    // conversion at completion pays with a new sale in the local currency; the converted hold is reversed.
    const auth = await convertedAuthorization();
    const body = withDcc(sampleCapture(1_000, 2_000, txId('cap'), 'EUR'), {
      currencyConversion: { indicator: '3' },
    });
    const a = await client.send('POST', `/pts/v2/payments/${auth.id}/captures`, body);
    expect(a.status).toBe(400);
    expect(a.body).toMatchObject({ status: 'INVALID_REQUEST' });
    const fields = (a.body.details as { field: string }[]).map((d) => d.field);
    expect(fields).toEqual(
      expect.arrayContaining([
        'orderInformation.amountDetails.currency',
        'orderInformation.amountDetails.currencyConversion.indicator',
        'orderInformation.amountDetails.exchangeRate',
      ]),
    );
  });

  it("refuses a reversal at another rate than the authorization's, naming exchangeRate", async () => {
    const auth = await convertedAuthorization();
    const amount = Math.round(Number(auth.billing) * 100);
    const body = withDcc(sampleReversal(amount, 'USD', auth.tags), {
      exchangeRate: '1.5',
      originalAmount: '20.00',
      originalCurrency: 'EUR',
    });
    const a = await client.send('POST', `/pts/v2/payments/${auth.id}/reversals`, body);
    expect(a.status).toBe(400);
    expect(a.body).toMatchObject({ status: 'INVALID_REQUEST', reason: 'INVALID_DATA' });
    expect(a.body.details).toEqual([
      { field: 'orderInformation.amountDetails.exchangeRate', reason: 'INVALID_DATA' },
    ]);
  });

  it("refuses a capture that names another offer than its authorization's, naming the field", async () => {
    const auth = await convertedAuthorization();
    const other = await convertedAuthorization();
    const amount = Math.round(Number(auth.billing) * 100);
    // 10.00 EUR of the 20.00 EUR hold, at its rate 11.20 USD (22.41 itself is an amount trigger of the sandbox's).
    const capture = (reconciliationId: string) =>
      client.send(
        'POST',
        `/pts/v2/payments/${auth.id}/captures`,
        withDcc(sampleCapture(1120, amount, txId('cap'), 'USD'), {
          exchangeRate: auth.rate,
          exchangeRateTimeStamp: auth.stamp,
          originalAmount: '10.00',
          originalCurrency: 'EUR',
          currencyConversion: { indicator: '1', reconciliationId },
        }),
      );
    const a = await capture(other.reconciliationId);
    expect(a.status).toBe(400);
    expect(a.body).toMatchObject({ status: 'INVALID_REQUEST', reason: 'INVALID_DATA' });
    expect(a.body.details).toEqual([
      { field: 'orderInformation.amountDetails.currencyConversion.reconciliationId', reason: 'INVALID_DATA' },
    ]);
    expect((await capture(auth.reconciliationId)).status).toBe(201);
  });

  it("reverses with the field set at the authorization's rate, and without any DCC field", async () => {
    const first = await convertedAuthorization();
    const amount = Math.round(Number(first.billing) * 100);
    const full = withDcc(sampleReversal(amount, 'USD', first.tags), {
      exchangeRate: first.rate,
      originalAmount: '20.00',
      originalCurrency: 'EUR',
    });
    expect((await client.send('POST', `/pts/v2/payments/${first.id}/reversals`, full)).status).toBe(201);
    const second = await convertedAuthorization();
    const bare = sampleReversal(amount, 'USD', second.tags);
    expect((await client.send('POST', `/pts/v2/payments/${second.id}/reversals`, bare)).status).toBe(201);
  });
});

describe("a converted authorization's exchangeRateTimeStamp (14 digits yyyyMMDDhhmmss, GMT)", () => {
  const FIELD = 'orderInformation.amountDetails.exchangeRateTimeStamp';

  it('refuses one in any other form as INVALID_DATA, naming the field', async () => {
    for (const stamp of ['2026-11-22T10:15:00Z', '2026112210150', '20261131101500', '20261122241500']) {
      const { answer } = await authorizeConverted(stamp);
      expect(answer.status, stamp).toBe(400);
      expect(answer.body, stamp).toMatchObject({ status: 'INVALID_REQUEST', reason: 'INVALID_DATA' });
      expect(answer.body.details, stamp).toContainEqual({ field: FIELD, reason: 'INVALID_DATA' });
    }
  });

  it("refuses a stamp in that form that is not its offer's rate time, naming the field (the gateway's field reference)", async () => {
    // The gateway's public field reference: "the time stamp returned by a Dynamic Currency Conversion provider when a
    // conversion request is made" — the offer's exchangeRateTimeUtc, not a time of the terminal's or another offer's.
    for (const stamp of [
      (s: string) => stampPlus(s, -1),
      (s: string) => stampPlus(s, 60),
      () => '20261122101500',
    ]) {
      const { answer } = await authorizeConverted(stamp);
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ status: 'INVALID_REQUEST', reason: 'INVALID_DATA' });
      expect(answer.body.details).toEqual([{ field: FIELD, reason: 'INVALID_DATA' }]);
    }
    expect((await authorizeConverted()).answer.status).toBe(201);
  });

  it("refuses a follow-on whose stamp is not the authorization's, in form or in time, and takes it with it", async () => {
    const auth = await convertedAuthorization();
    const amount = Math.round(Number(auth.billing) * 100);
    const reverse = (stamp: string) =>
      client.send(
        'POST',
        `/pts/v2/payments/${auth.id}/reversals`,
        withDcc(sampleReversal(amount, 'USD', auth.tags), {
          exchangeRate: auth.rate,
          originalAmount: '20.00',
          originalCurrency: 'EUR',
          exchangeRateTimeStamp: stamp,
        }),
      );
    const iso = `${auth.stamp.slice(0, 4)}-${auth.stamp.slice(4, 6)}-${auth.stamp.slice(6, 8)}T${auth.stamp.slice(8, 10)}:${auth.stamp.slice(10, 12)}:${auth.stamp.slice(12)}Z`;
    for (const stamp of [iso, stampPlus(auth.stamp, 1)]) {
      const a = await reverse(stamp);
      expect(a.status, stamp).toBe(400);
      expect(a.body.details, stamp).toEqual([{ field: FIELD, reason: 'INVALID_DATA' }]);
    }
    expect((await reverse(auth.stamp)).status).toBe(201);
  });
});

describe('DCC offer calls carry the Authorization and keyId headers (spec 001)', () => {
  it.each(['authorization', 'keyid'] as const)('answers 401 to an offer call without %s', async (omit) => {
    const text = JSON.stringify(OFFER);
    const path = '/vas/v1/currencyconversion';
    const signed = signRequest({
      method: 'POST',
      path,
      host: new URL(sandbox.url).host,
      body: text,
      merchant: DEMO_MERCHANT,
      date: new Date().toUTCString(),
    });
    const headers: Record<string, string> = {
      ...signed,
      authorization: `Signature ${signed.signature ?? ''}`,
      keyid: DEMO_MERCHANT.keyId,
      'content-type': 'application/json',
    };
    delete headers[omit];
    const res = await fetch(`${sandbox.url}${path}`, { method: 'POST', headers, body: text });
    expect(res.status).toBe(401);
  });
});
