import { describe, expect, it } from 'vitest';
import { FieldReader } from '../fields.js';
import { isAltSaleBody, validateAltRefund, validateAltSale, validateAltStatus } from './alt-payment.js';
import { ledgerTx, NOW, refusalOf } from './testing/fixtures.js';

function sale(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    clientReferenceInformation: { code: 'T-1' },
    merchantInformation: {
      cancelUrl: 'https://t.example/c',
      failureUrl: 'https://t.example/f',
      successUrl: 'https://t.example/s',
    },
    orderInformation: {
      amountDetails: { totalAmount: '10.00', currency: 'PLN' },
      billTo: { country: 'PL', email: 'a@example.com', firstName: 'Ala', lastName: 'Nowak' },
    },
    paymentInformation: { paymentType: { name: 'anything', method: { name: 'METHOD_2' } } },
    processingInformation: { actionList: ['AP_SALE'] },
    ...overrides,
  };
}

const details = (f: () => unknown): string[] =>
  ((refusalOf(f).body.details ?? []) as Array<{ field: string }>).map((d) => d.field);

const AP_SALE = ledgerTx(0, 'EUR', {
  kind: 'ap-sale',
  status: 'SETTLED',
  altPayment: {
    profile: 6,
    methodName: 'METHOD_6',
    paymentTypeName: 'Voucher',
    statusChecks: 0,
    statusChecksTooEarly: 0,
  },
});

describe('alternative-method validators (spec 001)', () => {
  it('tells an AP_SALE body from a card payment', () => {
    expect(isAltSaleBody(sale())).toBe(true);
    expect(isAltSaleBody({ processingInformation: { capture: true } })).toBe(false);
  });

  it('accepts a sale of profile 2 with any payment type name (not shown in spec 001)', () => {
    expect(validateAltSale(new FieldReader(sale(), NOW))).toMatchObject({
      currency: 'PLN',
      amountMinor: 1000,
    });
  });

  it('names every missing required field, and an actionList that is not an array with AP_SALE', () => {
    const body = sale({ merchantInformation: {}, processingInformation: { actionList: 'AP_SALE' } });
    expect(details(() => validateAltSale(new FieldReader(body, NOW)))).toEqual([
      'merchantInformation.cancelUrl',
      'merchantInformation.failureUrl',
      'merchantInformation.successUrl',
      'processingInformation.actionList',
    ]);
  });

  it('refuses an unknown method and a currency the profile does not take', () => {
    const unknown = sale({ paymentInformation: { paymentType: { name: 'x', method: { name: 'PAYNOW' } } } });
    expect(details(() => validateAltSale(new FieldReader(unknown, NOW)))).toEqual([
      'paymentInformation.paymentType.method.name',
    ]);
    const eur = sale();
    (eur.orderInformation as { amountDetails: { currency: string } }).amountDetails.currency = 'EUR';
    expect(details(() => validateAltSale(new FieldReader(eur, NOW)))).toEqual([
      'orderInformation.amountDetails.currency',
    ]);
  });

  it('holds status checks and refunds to the sale method; voucher refunds in EUR', () => {
    const status = {
      clientReferenceInformation: { code: 'T-1' },
      paymentInformation: { paymentType: { name: 'Voucher', method: { name: 'METHOD_7' } } },
      processingInformation: { actionList: 'AP_STATUS' },
    };
    expect(details(() => validateAltStatus(new FieldReader(status, NOW), AP_SALE))).toEqual([
      'paymentInformation.paymentType.method.name',
    ]);
    const refund = {
      clientReferenceInformation: { code: 'T-1' },
      orderInformation: { amountDetails: { totalAmount: '1.00', currency: 'EUR' } },
      paymentInformation: { paymentType: { name: 'Voucher', method: { name: 'METHOD_6' } } },
      processingInformation: { actionList: 'AP_REFUND' },
    };
    expect(validateAltRefund(new FieldReader(refund, NOW), AP_SALE)).toEqual({ amountMinor: 100 });
    expect(
      details(() =>
        validateAltRefund(
          new FieldReader({ ...refund, processingInformation: { actionList: 'AP_STATUS' } }, NOW),
          AP_SALE,
        ),
      ),
    ).toEqual(['processingInformation.actionList']);
  });
});
