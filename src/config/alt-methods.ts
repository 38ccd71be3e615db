/**
 * Redirect-based alternative methods (spec 001, "Alternative-method sale", Profiles): the terminal's reading of the
 * profile table, the configuration key `alternativeMethods`, and the checks of what a profile asks of the customer
 * (the on-screen keyboard validates each field with {@link checkCustomerField} through the host before the sale).
 */
import { z } from 'zod';
import { currencyByAlpha } from '../money/index.js';

/** Spec 001's profile table; `undefined` where the spec says "not shown". */
export interface SpecProfile {
  readonly profile: number;
  readonly country: string | undefined;
  readonly currencies: readonly string[] | undefined;
  readonly paymentTypeName: string | undefined;
  /** Profile 3: billTo.address1 and phoneNumber are required too. */
  readonly requiresAddress: boolean;
}

export const SPEC_PROFILES: Readonly<Record<number, SpecProfile>> = {
  1: {
    profile: 1,
    country: 'ES',
    currencies: ['EUR'],
    paymentTypeName: 'bankTransfer',
    requiresAddress: false,
  },
  2: { profile: 2, country: 'PL', currencies: ['PLN'], paymentTypeName: undefined, requiresAddress: false },
  3: {
    profile: 3,
    country: 'NL',
    currencies: ['EUR'],
    paymentTypeName: 'bankTransfer',
    requiresAddress: true,
  },
  4: { profile: 4, country: 'DK', currencies: ['DKK'], paymentTypeName: undefined, requiresAddress: false },
  5: {
    profile: 5,
    country: 'PL',
    currencies: ['PLN'],
    paymentTypeName: 'bankTransfer',
    requiresAddress: false,
  },
  6: {
    profile: 6,
    country: undefined,
    currencies: ['EUR'],
    paymentTypeName: 'Voucher',
    requiresAddress: false,
  },
  7: {
    profile: 7,
    country: undefined,
    currencies: ['EUR'],
    paymentTypeName: 'Voucher',
    requiresAddress: false,
  },
  8: {
    profile: 8,
    country: undefined,
    currencies: ['IDR', 'MYR', 'PHP'],
    paymentTypeName: 'eWallet',
    requiresAddress: false,
  },
};

/** Spec 001, Limits: "status polling interval: every 60 minutes". The configuration may lengthen it, never shorten. */
export const SPEC_STATUS_INTERVAL_MINUTES = 60;

const profileSchema = z
  .strictObject({
    /** Row of spec 001's profile table (1–8). */
    profile: z.number().int().min(1).max(8),
    /** `paymentInformation.paymentType.method.name` (the acquirer's name of the method; spec 001: `<METHOD_N>`). */
    methodName: z.string().min(1).max(64),
    /** `paymentInformation.paymentType.name`; required for profiles 2 and 4 (not shown in spec 001). */
    paymentTypeName: z.string().min(1).max(64).optional(),
    /** Country of the sale (billTo.country); profiles 6–8 need it (not shown in spec 001). */
    country: z
      .string()
      .regex(/^[A-Z]{2}$/)
      .optional(),
    /** Currency of the sale; default the profile's (profile 8: one of IDR, MYR, PHP must be chosen). */
    currency: z.string().optional(),
    /** What the kiosk's button says. */
    label: z.string().min(1).max(40).optional(),
  })
  .superRefine((p, ctx) => {
    const spec = SPEC_PROFILES[p.profile];
    if (!spec) return;
    if (p.paymentTypeName === undefined && spec.paymentTypeName === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['paymentTypeName'],
        message: `profile ${p.profile} needs paymentTypeName`,
      });
    if (
      p.paymentTypeName !== undefined &&
      spec.paymentTypeName !== undefined &&
      p.paymentTypeName !== spec.paymentTypeName
    )
      ctx.addIssue({
        code: 'custom',
        path: ['paymentTypeName'],
        message: `profile ${p.profile} is ${spec.paymentTypeName} (spec 001)`,
      });
    if (p.country === undefined && spec.country === undefined)
      ctx.addIssue({ code: 'custom', path: ['country'], message: `profile ${p.profile} needs country` });
    if (p.country !== undefined && spec.country !== undefined && p.country !== spec.country)
      ctx.addIssue({
        code: 'custom',
        path: ['country'],
        message: `profile ${p.profile} is for ${spec.country}`,
      });
    const currencies = spec.currencies ?? [];
    if (
      p.currency !== undefined &&
      (currencyByAlpha(p.currency) === undefined || !currencies.includes(p.currency))
    )
      ctx.addIssue({
        code: 'custom',
        path: ['currency'],
        message: `profile ${p.profile} takes ${currencies.join(', ')}`,
      });
    if (p.currency === undefined && currencies.length !== 1)
      ctx.addIssue({ code: 'custom', path: ['currency'], message: `profile ${p.profile} needs currency` });
  });

export const alternativeMethodsSchema = z
  .strictObject({
    /** The methods the kiosk offers, in button order; none by default. */
    profiles: z.array(profileSchema).max(8).default([]),
    /** Minutes between status checks of one sale or refund: spec 001 says every 60 minutes, so at least 60. */
    statusCheckMinutes: z
      .number()
      .int()
      .min(SPEC_STATUS_INTERVAL_MINUTES)
      .max(24 * 60)
      .default(60),
    /** Where the method's page sends the customer afterwards (spec 001: all three required). */
    returnUrls: z
      .strictObject({
        successUrl: z.url().default('https://parking-terminal.invalid/alt/success'),
        cancelUrl: z.url().default('https://parking-terminal.invalid/alt/cancel'),
        failureUrl: z.url().default('https://parking-terminal.invalid/alt/failure'),
      })
      .prefault({}),
  })
  .prefault({});

export type AlternativeMethodsConfig = z.infer<typeof alternativeMethodsSchema>;
export type AltProfileConfig = AlternativeMethodsConfig['profiles'][number];

/** A configured profile with every default of the spec table filled in. */
export interface ResolvedAltProfile {
  profile: number;
  label: string;
  methodName: string;
  paymentTypeName: string;
  country: string;
  currency: string;
  /** What the customer must enter, in keyboard order. */
  customerFields: readonly CustomerField[];
}

/** Fills in the spec table's values (the schema has checked that each is known). */
export function resolveAltProfile(p: AltProfileConfig): ResolvedAltProfile {
  const spec = SPEC_PROFILES[p.profile];
  return {
    profile: p.profile,
    label: p.label ?? p.methodName,
    methodName: p.methodName,
    paymentTypeName: p.paymentTypeName ?? spec?.paymentTypeName ?? '',
    country: p.country ?? spec?.country ?? '',
    currency: p.currency ?? spec?.currencies?.[0] ?? '',
    customerFields: spec?.requiresAddress
      ? ['email', 'firstName', 'lastName', 'address1', 'phoneNumber']
      : ['email', 'firstName', 'lastName'],
  };
}

/** What a profile may ask of the customer (spec 001: billTo email, firstName, lastName; profile 3 address, phone). */
export type CustomerField = 'email' | 'firstName' | 'lastName' | 'address1' | 'phoneNumber';

/** Why a value typed on the keyboard is not accepted; undefined when it is. */
export type CustomerFieldProblem =
  'required' | 'too-long' | 'not-an-email' | 'not-a-name' | 'not-a-phone-number';

/**
 * Checks one value the customer typed. Pure (the host calls it for the on-screen keyboard and again before the sale).
 * Names refuse digits, which also keeps a card number typed into a name field from travelling.
 */
export function checkCustomerField(field: CustomerField, raw: string): CustomerFieldProblem | undefined {
  const value = raw.trim();
  if (value === '') return 'required';
  switch (field) {
    case 'email':
      if (value.length > 254) return 'too-long';
      return /^[^\s@]{1,64}@[^\s@.]+(\.[^\s@.]+)+$/.test(value) ? undefined : 'not-an-email';
    case 'firstName':
    case 'lastName':
      if (value.length > 60) return 'too-long';
      return /^[\p{L}\p{M}][\p{L}\p{M} .'-]*$/u.test(value) ? undefined : 'not-a-name';
    case 'address1':
      if (value.length > 60) return 'too-long';
      return undefined;
    case 'phoneNumber':
      return /^\+?[0-9 ]{6,20}$/.test(value) ? undefined : 'not-a-phone-number';
  }
}

/** Checks every field a profile needs; the problems by field (empty when all pass). */
export function checkCustomer(
  profile: ResolvedAltProfile,
  values: Partial<Record<CustomerField, string>>,
): Partial<Record<CustomerField, CustomerFieldProblem>> {
  const problems: Partial<Record<CustomerField, CustomerFieldProblem>> = {};
  for (const f of profile.customerFields) {
    const problem = checkCustomerField(f, values[f] ?? '');
    if (problem) problems[f] = problem;
  }
  return problems;
}
