import { describe, expect, it } from 'vitest';
import { classifyPaymentAnswer } from '../outcome.js';
import { GatewayInvalidRequestError } from '../errors.js';
import {
  AltPaymentAnswerError,
  buildAltRefund,
  buildAltSale,
  buildAltStatus,
  parseAltSaleAnswer,
  parseAltStatusAnswer,
  type AltSaleRequest,
} from './alt-payments.js';

const method = { methodName: 'METHOD_1', paymentTypeName: 'bankTransfer' };
const sale: AltSaleRequest = {
  code: 'TICKET-7',
  amountMinor: 1250,
  currency: 'EUR',
  method,
  customer: { email: 'a@example.com', firstName: 'Ana', lastName: 'Ruiz', country: 'ES' },
  urls: {
    successUrl: 'https://t.example/ok',
    cancelUrl: 'https://t.example/cancel',
    failureUrl: 'https://t.example/fail',
  },
};
const json = (v: unknown): Buffer => Buffer.from(JSON.stringify(v));

describe('alternative-method request builders', () => {
  it('builds an AP_SALE with every field spec 001 requires and a transactionId of its own', () => {
    const built = buildAltSale(sale);
    const body = JSON.parse(built.body.toString('utf8')) as Record<string, unknown>;
    expect(built.path).toBe('/pts/v2/payments');
    expect(body).toMatchObject({
      clientReferenceInformation: { code: 'TICKET-7', transactionId: built.transactionId },
      merchantInformation: sale.urls,
      orderInformation: {
        amountDetails: { totalAmount: '12.50', currency: 'EUR' },
        billTo: { country: 'ES', email: 'a@example.com', firstName: 'Ana', lastName: 'Ruiz' },
      },
      paymentInformation: { paymentType: { name: 'bankTransfer', method: { name: 'METHOD_1' } } },
      processingInformation: { actionList: ['AP_SALE'] },
    });
  });

  it('refuses a sale without a required field, naming it', () => {
    expect(() => buildAltSale({ ...sale, customer: { ...sale.customer, email: '' } })).toThrow(
      GatewayInvalidRequestError,
    );
    try {
      buildAltSale({ ...sale, urls: { ...sale.urls, cancelUrl: ' ' } });
    } catch (e) {
      expect((e as GatewayInvalidRequestError).field).toBe('merchantInformation.cancelUrl');
    }
  });

  it('builds AP_STATUS with a single-string actionList and AP_REFUND as a journaled refund-payment', () => {
    const status = buildAltStatus({ id: '123', code: 'TICKET-7', method });
    expect(status.path).toBe('/pts/v2/refresh-payment-status/123');
    expect(JSON.parse(status.body.toString('utf8'))).toMatchObject({
      processingInformation: { actionList: 'AP_STATUS' },
    });
    const refund = buildAltRefund({
      saleId: '123',
      code: 'TICKET-7',
      amountMinor: 500,
      currency: 'EUR',
      method,
    });
    expect(refund).toMatchObject({
      service: 'refund-payment',
      path: '/pts/v2/payments/123/refunds',
      moneyMoving: true,
      amountMinor: 500,
    });
    expect(refund.transactionId).toBeDefined();
    expect(() => buildAltStatus({ id: '../x', code: 'c', method })).toThrow(GatewayInvalidRequestError);
  });
});

describe('alternative-method answers', () => {
  it('reads a PENDING sale with its paymentUrl, and a FAILED one', () => {
    expect(
      parseAltSaleAnswer(
        201,
        json({ id: '9', status: 'PENDING', processorInformation: { paymentUrl: 'https://g.example/ap/9' } }),
      ),
    ).toEqual({ status: 'PENDING', id: '9', paymentUrl: 'https://g.example/ap/9' });
    expect(
      parseAltSaleAnswer(201, json({ id: '9', status: 'FAILED', errorInformation: { reason: 'X' } })),
    ).toEqual({ status: 'FAILED', id: '9', reason: 'X' });
  });

  it('raises typed errors for undocumented or unusable answers', () => {
    const problem = (f: () => unknown): string | undefined => {
      try {
        f();
      } catch (e) {
        return e instanceof AltPaymentAnswerError ? e.problem : (e as Error).name;
      }
      return undefined;
    };
    expect(problem(() => parseAltSaleAnswer(201, json({ id: '9', status: 'AUTHORIZED' })))).toBe(
      'undocumented',
    );
    expect(problem(() => parseAltSaleAnswer(201, json({ id: '9', status: 'PENDING' })))).toBe('unreadable');
    expect(problem(() => parseAltSaleAnswer(500, Buffer.alloc(0)))).toBe('undocumented');
    expect(problem(() => parseAltStatusAnswer('sale', 429, json({})))).toBe('too-early');
    expect(problem(() => parseAltStatusAnswer('sale', 200, json({ id: '9', status: 'REFUNDED' })))).toBe(
      'undocumented',
    );
    expect(problem(() => parseAltStatusAnswer('refund', 200, json({ id: '9', status: 'SETTLED' })))).toBe(
      'undocumented',
    );
    expect(problem(() => parseAltStatusAnswer('sale', 400, json({ reason: 'MISSING_FIELD' })))).toBe(
      'GatewayInvalidRequestError',
    );
    expect(parseAltStatusAnswer('sale', 200, json({ id: '9', status: 'SETTLED' })).status).toBe('SETTLED');
  });

  it('refuses a PENDING sale with an id its status checks could not send back, and keeps a FAILED one without it', () => {
    for (const id of ['9/../../payments', '9 1', 'x'.repeat(65)]) {
      const answer = json({
        id,
        status: 'PENDING',
        processorInformation: { paymentUrl: 'https://g.example/ap/9' },
      });
      let error: unknown;
      try {
        parseAltSaleAnswer(201, answer);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(AltPaymentAnswerError);
      expect(error).toMatchObject({ code: 'GW_PARSE', problem: 'unreadable', outcomeUnknown: true });
      expect(error).not.toHaveProperty('gatewayId', id);
      expect(parseAltSaleAnswer(201, json({ id, status: 'FAILED' }))).toEqual({
        status: 'FAILED',
        reason: 'FAILED',
      });
    }
  });

  // The payment-link URL rule (hostedPageUrlProblem): the kiosk shows the paymentUrl as a QR code and as text.
  it.each([
    ['a javascript: URL', 'javascript:alert(1)//https://g.example/ap/9'],
    ['a plain http URL of another machine', 'http://g.example/ap/9'],
    ['a URL too long for the QR code', `https://g.example/ap/9?p=${'a'.repeat(600)}`],
    ['control characters', 'https://g.example/ap/9\u001b[2J'],
    ['a line break', 'https://g.example/ap/9\nTap here'],
    ['credentials', 'https://user:pass@g.example/ap/9'],
  ])('refuses a PENDING sale whose paymentUrl cannot be shown to a customer: %s', (_what, paymentUrl) => {
    const answer = json({ id: '9', status: 'PENDING', processorInformation: { paymentUrl } });
    let error: unknown;
    try {
      parseAltSaleAnswer(201, answer);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(AltPaymentAnswerError);
    expect(error).toMatchObject({
      code: 'GW_PARSE',
      problem: 'unreadable',
      outcomeUnknown: true,
      gatewayId: '9',
    });
    // The refused URL is not repeated in the message that the logs and the operator see.
    expect((error as Error).message).not.toContain(paymentUrl);
  });

  it('accepts the https paymentUrl of a gateway and the plain http one of the embedded sandbox', () => {
    for (const paymentUrl of ['https://g.example/ap/9', 'http://127.0.0.1:41234/ap/9'])
      expect(
        parseAltSaleAnswer(201, json({ id: '9', status: 'PENDING', processorInformation: { paymentUrl } })),
      ).toEqual({ status: 'PENDING', id: '9', paymentUrl });
  });

  it('classifies an AP refund answer with the one classification: REFUNDED approved, FAILED declined', () => {
    const refund = buildAltRefund({ saleId: '1', code: 'c', amountMinor: 500, currency: 'EUR', method });
    const ok = classifyPaymentAnswer(
      refund,
      201,
      json({ id: 'r1', status: 'REFUNDED', refundAmountDetails: { refundAmount: '5.00', currency: 'EUR' } }),
    );
    expect(ok).toMatchObject({ kind: 'approved', gatewayId: 'r1', amountMinor: 500 });
    const failed = classifyPaymentAnswer(
      refund,
      201,
      json({ id: 'r2', status: 'FAILED', errorInformation: { reason: 'INVALID_AMOUNT' } }),
    );
    expect(failed).toMatchObject({ kind: 'declined', reason: 'INVALID_AMOUNT' });
  });
});

describe('the values of an alternative-method answer the terminal keeps or shows', () => {
  const long = 'R'.repeat(10_000);

  it('a reason or response code that is no code: a FAILED sale or status reads FAILED, without it', () => {
    const failed = parseAltSaleAnswer(
      201,
      json({ id: 'S1', status: 'FAILED', errorInformation: { reason: long } }),
    );
    expect(failed).toMatchObject({ status: 'FAILED', id: 'S1', reason: 'FAILED' });
    expect(
      parseAltSaleAnswer(201, json({ id: 'S1', status: 'FAILED', errorInformation: { reason: 'REJECTED' } })),
    ).toMatchObject({ reason: 'REJECTED' });
    const status = parseAltStatusAnswer(
      'sale',
      201,
      json({
        id: 'S1',
        status: 'FAILED',
        errorInformation: { reason: long },
        processorInformation: { responseCode: long },
      }),
    );
    expect(status).toMatchObject({ id: 'S1', status: 'FAILED' });
    expect(status).not.toHaveProperty('reason');
    expect(status).not.toHaveProperty('responseCode');
  });

  it('a status answer with an id the terminal could not keep is unreadable', () => {
    for (const id of ['S'.repeat(200), 'two words']) {
      expect(() => parseAltStatusAnswer('sale', 201, json({ id, status: 'SETTLED' })), id).toThrow(
        AltPaymentAnswerError,
      );
    }
  });

  it('a PENDING sale keeps a reconciliationId only in the shape of an id', () => {
    const pending = (reconciliationId: unknown) =>
      parseAltSaleAnswer(
        201,
        json({
          id: 'S1',
          status: 'PENDING',
          reconciliationId,
          processorInformation: { paymentUrl: 'https://pay.example/S1' },
        }),
      );
    expect(pending('REC1')).toMatchObject({ reconciliationId: 'REC1' });
    expect(pending(long)).not.toHaveProperty('reconciliationId');
  });
});

describe('an alternative-method status nobody documented', () => {
  it('is named in the error only when it is a code', () => {
    const long = 'S'.repeat(10_000);
    for (const read of [
      () => parseAltSaleAnswer(201, json({ id: 'S1', status: long })),
      () => parseAltStatusAnswer('sale', 201, json({ id: 'S1', status: long })),
    ]) {
      expect(read).toThrow(AltPaymentAnswerError);
      expect(read).not.toThrow(/SSSS/);
    }
  });
});
