/**
 * Field validation of the redirect-based alternative methods (spec 001, "Alternative-method sale", "Check status",
 * "Refund (alternative methods)"): `AP_SALE` on `POST /pts/v2/payments`, `AP_STATUS` on
 * `POST /pts/v2/refresh-payment-status/{id}`, `AP_REFUND` on `POST /pts/v2/payments/{id}/refunds`.
 *
 * The profile table is the sandbox's own reading of spec 001 (an independent oracle: the terminal's configuration
 * keeps its own). The method names are the spec's neutral placeholders without angle brackets (`METHOD_1` …).
 */
import type { FieldReader } from '../fields.js';
import { valueAt } from '../fields.js';
import type { LedgerTransaction } from '../store.js';

/** One profile of spec 001's table. `undefined` where the spec says "not shown": any non-empty value passes. */
export interface AltProfile {
  profile: number;
  methodName: string;
  paymentTypeName: string | undefined;
  country: string | undefined;
  /** Sale currencies the profile takes; undefined: any. */
  currencies: readonly string[] | undefined;
  /** Refunds of the profile must be in this currency (voucher profiles: EUR). */
  refundCurrency?: string;
  /** Profile 3 also requires billTo.address1 and phoneNumber. */
  requiresAddress: boolean;
}

/** Spec 001, "Profiles". */
export const ALT_PROFILES: readonly AltProfile[] = [
  p(1, 'bankTransfer', 'ES', ['EUR']),
  p(2, undefined, 'PL', ['PLN']),
  { ...p(3, 'bankTransfer', 'NL', ['EUR']), requiresAddress: true },
  p(4, undefined, 'DK', ['DKK']),
  p(5, 'bankTransfer', 'PL', ['PLN']),
  { ...p(6, 'Voucher', undefined, ['EUR']), refundCurrency: 'EUR' },
  { ...p(7, 'Voucher', undefined, ['EUR']), refundCurrency: 'EUR' },
  p(8, 'eWallet', undefined, ['IDR', 'MYR', 'PHP']),
];

function p(
  profile: number,
  paymentTypeName: string | undefined,
  country: string | undefined,
  currencies: readonly string[] | undefined,
): AltProfile {
  return {
    profile,
    methodName: `METHOD_${profile}`,
    paymentTypeName,
    country,
    currencies,
    requiresAddress: false,
  };
}

const METHOD = 'paymentInformation.paymentType.method.name';
const TYPE = 'paymentInformation.paymentType.name';
const ACTIONS = 'processingInformation.actionList';

/** Whether a `POST /pts/v2/payments` body is an alternative-method sale (its actionList names AP_SALE). */
export function isAltSaleBody(body: Record<string, unknown>): boolean {
  const actions = valueAt(body, ACTIONS);
  return actions === 'AP_SALE' || (Array.isArray(actions) && actions.includes('AP_SALE'));
}

/** Reads method and payment type names and finds the profile; problems go to `r`. */
function readProfile(r: FieldReader): AltProfile | undefined {
  const method = r.text(METHOD, true);
  const type = r.text(TYPE, true);
  if (method === undefined) return undefined;
  const profile = ALT_PROFILES.find((x) => x.methodName === method);
  if (!profile) {
    r.invalid(METHOD, `${METHOD} is not a method of a spec 001 profile (METHOD_1 … METHOD_8)`);
    return undefined;
  }
  if (type !== undefined && profile.paymentTypeName !== undefined && type !== profile.paymentTypeName)
    r.invalid(TYPE, `${TYPE} of ${method} is ${profile.paymentTypeName}`);
  return profile;
}

/** A validated alternative-method sale. */
export interface AltSaleFields {
  profile: AltProfile;
  currency: string;
  amountMinor: number;
  paymentTypeName: string;
}

/**
 * Validates an `AP_SALE` (spec 001: every listed required field must be sent so that the redirect page renders).
 * Throws the 400 answer naming every field at fault.
 */
export function validateAltSale(r: FieldReader): AltSaleFields {
  r.text('clientReferenceInformation.code', true);
  for (const url of ['cancelUrl', 'failureUrl', 'successUrl']) {
    const v = r.text(`merchantInformation.${url}`, true);
    if (v !== undefined && !/^https?:\/\/\S+$/.test(v))
      r.invalid(`merchantInformation.${url}`, `merchantInformation.${url} must be an http(s) URL`);
  }
  const currency = r.currency('orderInformation.amountDetails.currency');
  const amount = r.amount('orderInformation.amountDetails.totalAmount', currency);
  if (amount !== undefined && amount <= 0)
    r.invalid('orderInformation.amountDetails.totalAmount', 'the total must be above zero');
  const country = r.text('orderInformation.billTo.country', true);
  const email = r.text('orderInformation.billTo.email', true);
  if (email !== undefined && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email))
    r.invalid('orderInformation.billTo.email', 'orderInformation.billTo.email is not an e-mail address');
  r.text('orderInformation.billTo.firstName', true);
  r.text('orderInformation.billTo.lastName', true);
  const actions = valueAt(r.body, ACTIONS);
  if (actions === undefined) r.missing(ACTIONS);
  else if (!Array.isArray(actions) || !actions.includes('AP_SALE'))
    r.invalid(ACTIONS, `${ACTIONS} must be an array with AP_SALE`);
  const profile = readProfile(r);
  if (profile) {
    if (profile.requiresAddress) {
      r.text('orderInformation.billTo.address1', true);
      r.text('orderInformation.billTo.phoneNumber', true);
    }
    if (country !== undefined && profile.country !== undefined && country !== profile.country)
      r.invalid('orderInformation.billTo.country', `${profile.methodName} is for country ${profile.country}`);
    if (currency !== undefined && profile.currencies && !profile.currencies.includes(currency))
      r.invalid(
        'orderInformation.amountDetails.currency',
        `${profile.methodName} takes ${profile.currencies.join(', ')}`,
      );
  }
  r.finish();
  // finish() threw on any problem above: the values are present.
  return {
    profile: profile as AltProfile,
    currency: currency as string,
    amountMinor: amount as number,
    paymentTypeName: r.text(TYPE, true) as string,
  };
}

/** The method and payment type a follow-on must repeat "as in the sale" (spec 001). */
function sameMethodAsSale(r: FieldReader, sale: LedgerTransaction): void {
  const method = r.text(METHOD, true);
  const type = r.text(TYPE, true);
  const alt = sale.altPayment;
  if (!alt) return;
  if (method !== undefined && method !== alt.methodName)
    r.invalid(METHOD, `${METHOD} differs from the sale's (${alt.methodName})`);
  if (type !== undefined && type !== alt.paymentTypeName)
    r.invalid(TYPE, `${TYPE} differs from the sale's (${alt.paymentTypeName})`);
}

/** actionList of a status check or refund: "a single string in the examples"; a one-element array is taken too. */
function singleAction(r: FieldReader, action: 'AP_STATUS' | 'AP_REFUND'): void {
  const v = valueAt(r.body, ACTIONS);
  if (v === undefined || v === '') r.missing(ACTIONS);
  else if (v !== action && !(Array.isArray(v) && v.length === 1 && v[0] === action))
    r.invalid(ACTIONS, `${ACTIONS} must be ${action}`);
}

/** Validates an `AP_STATUS` of `sale` (the sale itself, or the sale a refund belongs to). */
export function validateAltStatus(r: FieldReader, sale: LedgerTransaction): void {
  r.text('clientReferenceInformation.code', true);
  sameMethodAsSale(r, sale);
  singleAction(r, 'AP_STATUS');
  r.finish();
}

/** Validates an `AP_REFUND` of `sale`; returns the amount in minor units of the sale's currency. */
export function validateAltRefund(r: FieldReader, sale: LedgerTransaction): { amountMinor: number } {
  r.text('clientReferenceInformation.code', true);
  const currency = r.currency('orderInformation.amountDetails.currency');
  if (currency !== undefined && currency !== sale.currency)
    r.invalid('orderInformation.amountDetails.currency', 'currency differs from the sale');
  const profile = ALT_PROFILES.find((x) => x.methodName === sale.altPayment?.methodName);
  if (currency !== undefined && profile?.refundCurrency !== undefined && currency !== profile.refundCurrency)
    r.invalid(
      'orderInformation.amountDetails.currency',
      `refunds of ${profile.methodName} are in ${profile.refundCurrency}`,
    );
  const amount = r.amount('orderInformation.amountDetails.totalAmount', sale.currency);
  if (amount !== undefined && amount <= 0)
    r.invalid('orderInformation.amountDetails.totalAmount', 'the refund must be above zero');
  sameMethodAsSale(r, sale);
  singleAction(r, 'AP_REFUND');
  r.finish();
  return { amountMinor: amount as number };
}
