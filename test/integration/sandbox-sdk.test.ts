/**
 * The official gateway SDK for Node (`cybersource-rest-client`) against the sandbox: the SDK's own HTTP-signature
 * code is an implementation independent of ours, so this proves the sandbox's verifier (issue 6, item 8).
 */
/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-return -- the SDK is untyped CommonJS */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEMO_MERCHANT, startSandbox, type Sandbox } from '../../src/sandbox/index.js';

const require = createRequire(import.meta.url);
// The SDK is CommonJS without types; its surface here is a handful of constructors and callback methods.
const sdk: any = require('cybersource-rest-client');

type Callback = (
  error: unknown,
  data: Record<string, unknown> | undefined,
  response: { status: number } | undefined,
) => void;

let sandbox: Sandbox;
let dir: string;

function config(host: string, caFile: string, secret = DEMO_MERCHANT.sharedSecret): Record<string, unknown> {
  return {
    authenticationType: 'http_signature',
    runEnvironment: host,
    merchantID: DEMO_MERCHANT.merchantId,
    merchantKeyId: DEMO_MERCHANT.keyId,
    merchantsecretKey: secret,
    sslCaCert: caFile,
    logConfiguration: { enableLog: false },
  };
}

/** Calls an SDK method and resolves with the HTTP status and data (errors carry the status too). */
function call(
  invoke: (cb: Callback) => void,
): Promise<{ status: number; data: Record<string, unknown> | undefined }> {
  return new Promise((resolve) => {
    invoke((error, data, response) => {
      const err = error as { status?: number } | null;
      resolve({ status: response?.status ?? err?.status ?? 0, data });
    });
  });
}

beforeAll(async () => {
  // The SDK reads the clock twice per request (reference/gateway.md §1); a frozen Date keeps both reads equal.
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date(Math.floor(Date.now() / 1000) * 1000));
  sandbox = await startSandbox({ tls: true });
  dir = mkdtempSync(join(tmpdir(), 'sandbox-sdk-'));
  writeFileSync(join(dir, 'ca.pem'), sandbox.certificatePem ?? '');
});

afterAll(async () => {
  vi.useRealTimers();
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
});

function paymentRequest(): unknown {
  const req = new sdk.CreatePaymentRequest();
  const ref = new sdk.Ptsv2paymentsClientReferenceInformation();
  ref.code = 'TC50171_3';
  req.clientReferenceInformation = ref;
  const processing = new sdk.Ptsv2paymentsProcessingInformation();
  processing.capture = false;
  req.processingInformation = processing;
  const card = new sdk.Ptsv2paymentsPaymentInformationCard();
  card.number = '4111111111111111';
  card.expirationMonth = '12';
  card.expirationYear = '2031';
  const payment = new sdk.Ptsv2paymentsPaymentInformation();
  payment.card = card;
  req.paymentInformation = payment;
  const amount = new sdk.Ptsv2paymentsOrderInformationAmountDetails();
  amount.totalAmount = '102.21';
  amount.currency = 'USD';
  const billTo = new sdk.Ptsv2paymentsOrderInformationBillTo();
  billTo.firstName = 'John';
  billTo.lastName = 'Doe';
  billTo.email = 'test@cybs.com';
  billTo.country = 'US';
  const order = new sdk.Ptsv2paymentsOrderInformation();
  order.amountDetails = amount;
  order.billTo = billTo;
  req.orderInformation = order;
  return req;
}

describe('official SDK round trip', () => {
  it('authorizes, captures and refunds with HTTP signatures and gets 201 each time', async () => {
    const host = new URL(sandbox.url).host;
    const cfg = config(host, join(dir, 'ca.pem'));
    const auth = await call((cb) =>
      new sdk.PaymentsApi(cfg, new sdk.ApiClient()).createPayment(paymentRequest(), cb),
    );
    expect(auth.status).toBe(201);
    expect(auth.data?.status).toBe('AUTHORIZED');
    const authId = String(auth.data?.id);

    const captureReq = new sdk.CapturePaymentRequest();
    captureReq.clientReferenceInformation = { code: 'TC50171_3' };
    captureReq.orderInformation = { amountDetails: { totalAmount: '102.21', currency: 'USD' } };
    const capture = await call((cb) =>
      new sdk.CaptureApi(cfg, new sdk.ApiClient()).capturePayment(captureReq, authId, cb),
    );
    expect(capture.status).toBe(201);
    expect(capture.data?.status).toBe('PENDING');
    const captureId = String(capture.data?.id);

    const refundReq = new sdk.RefundCaptureRequest();
    refundReq.clientReferenceInformation = { code: 'TC50171_3' };
    refundReq.orderInformation = { amountDetails: { totalAmount: '102.21', currency: 'USD' } };
    const refund = await call((cb) =>
      new sdk.RefundApi(cfg, new sdk.ApiClient()).refundCapture(refundReq, captureId, cb),
    );
    expect(refund.status).toBe(201);
    expect(refund.data?.status).toBe('PENDING');

    const ledger = sandbox.ledger();
    const kinds = ledger.transactions.map((t) => t.kind);
    expect(kinds).toEqual(['authorization', 'capture', 'refund']);
    for (const tx of ledger.transactions) expect(tx.requests[0]?.auth.verified).toBe(true);
    expect(ledger.consistency.ok).toBe(true);
  });

  it('answers 401 to a request signed with the wrong secret and records why', async () => {
    const host = new URL(sandbox.url).host;
    const tampered = Buffer.from(DEMO_MERCHANT.sharedSecret, 'base64');
    tampered[0] = (tampered[0] ?? 0) ^ 1;
    const cfg = config(host, join(dir, 'ca.pem'), tampered.toString('base64'));
    const before = sandbox.ledger().unmatchedRequests.length;
    const auth = await call((cb) =>
      new sdk.PaymentsApi(cfg, new sdk.ApiClient()).createPayment(paymentRequest(), cb),
    );
    expect(auth.status).toBe(401);
    const rejected = sandbox.ledger().unmatchedRequests.slice(before);
    expect(rejected).toHaveLength(1);
    expect(rejected[0]?.auth).toEqual({
      scheme: 'http-signature',
      verified: false,
      reason: 'signature does not verify',
    });
  });
});
