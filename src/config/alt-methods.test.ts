import { describe, expect, it } from 'vitest';
import {
  alternativeMethodsSchema,
  checkCustomer,
  checkCustomerField,
  resolveAltProfile,
} from './alt-methods.js';

const parse = (v: unknown) => alternativeMethodsSchema.safeParse(v);

describe('alternativeMethods configuration', () => {
  it('offers nothing by default and checks status every 60 minutes', () => {
    expect(alternativeMethodsSchema.parse(undefined)).toMatchObject({ profiles: [], statusCheckMinutes: 60 });
  });

  it('never lets status checks come sooner than spec 001 allows', () => {
    expect(parse({ statusCheckMinutes: 59 }).success).toBe(false);
    expect(parse({ statusCheckMinutes: 90 }).success).toBe(true);
  });

  it('fills a profile from spec 001 and refuses values the table contradicts', () => {
    const ok = alternativeMethodsSchema.parse({ profiles: [{ profile: 3, methodName: 'METHOD_3' }] });
    expect(resolveAltProfile(ok.profiles[0]!)).toMatchObject({
      country: 'NL',
      currency: 'EUR',
      paymentTypeName: 'bankTransfer',
      customerFields: ['email', 'firstName', 'lastName', 'address1', 'phoneNumber'],
    });
    expect(parse({ profiles: [{ profile: 3, methodName: 'M', currency: 'USD' }] }).success).toBe(false);
    expect(parse({ profiles: [{ profile: 1, methodName: 'M', country: 'PL' }] }).success).toBe(false);
    expect(parse({ profiles: [{ profile: 2, methodName: 'M' }] }).success).toBe(false); // type name not shown
    expect(parse({ profiles: [{ profile: 8, methodName: 'M', country: 'ID' }] }).success).toBe(false); // currency
    expect(
      parse({ profiles: [{ profile: 8, methodName: 'M', country: 'ID', currency: 'MYR' }] }).success,
    ).toBe(true);
  });
});

describe('customer fields of the on-screen keyboard', () => {
  it('accepts ordinary values', () => {
    expect(checkCustomerField('email', ' ana.ruiz@example.com ')).toBeUndefined();
    expect(checkCustomerField('firstName', 'José-María')).toBeUndefined();
    expect(checkCustomerField('lastName', "O'Neill")).toBeUndefined();
    expect(checkCustomerField('phoneNumber', '+31 20 555 0100')).toBeUndefined();
  });

  it('refuses what is not an e-mail, a name or a phone number', () => {
    expect(checkCustomerField('email', 'ana@example')).toBe('not-an-email');
    expect(checkCustomerField('email', 'a b@example.com')).toBe('not-an-email');
    expect(checkCustomerField('firstName', '4111111111111111')).toBe('not-a-name');
    expect(checkCustomerField('lastName', '   ')).toBe('required');
    expect(checkCustomerField('lastName', 'x'.repeat(61))).toBe('too-long');
    expect(checkCustomerField('phoneNumber', 'call me')).toBe('not-a-phone-number');
  });

  it('checks every field a profile needs', () => {
    const p = resolveAltProfile(
      alternativeMethodsSchema.parse({ profiles: [{ profile: 3, methodName: 'METHOD_3' }] }).profiles[0]!,
    );
    expect(checkCustomer(p, { email: 'a@b.nl', firstName: 'A', lastName: 'B' })).toEqual({
      address1: 'required',
      phoneNumber: 'required',
    });
  });
});
