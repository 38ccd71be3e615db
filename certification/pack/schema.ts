/**
 * The schema of a certification script pack (`certification/scripts/*.yaml`): a list of cases, each a parking model
 * driven step by step with a simulated card, and what the gateway must answer to each step. The acquirer's MLV script
 * is a table of "transaction type and entry mode | card type | amount" (reference/gateway.md §7); a case here is one
 * row of it, played through the real terminal rather than typed into a request.
 */
import { z } from 'zod';
import { FAULT_KINDS } from '../../src/sandbox/index.js';
import { SERVICE_NAMES } from '../../src/vocabulary/services.js';

/** A decimal amount as the script writes it: `25.00`, `9900.00` (quoted or not in YAML). */
const decimal = z
  .union([z.string(), z.number()])
  .transform((v) => (typeof v === 'number' ? v.toFixed(2) : v.trim()))
  .pipe(z.string().regex(/^\d{1,9}(\.\d{1,3})?$/, 'an amount such as 25.00'));

/** Services a step can expect: the parking services, and the currency-conversion offer. */
export const EXPECTABLE_SERVICES = [...SERVICE_NAMES, 'dcc-offer'] as const;

/** One message a step expects the terminal to send, with the answer it expects the gateway to give. */
export const expectedMessageSchema = z.strictObject({
  service: z.enum(EXPECTABLE_SERVICES),
  amount: decimal.optional(),
  /** The answer's `status` (AUTHORIZED, PARTIAL_AUTHORIZED, PENDING, REVERSED, VOIDED, DECLINED, SERVER_ERROR …) or `NO ANSWER`. */
  status: z.string().min(1).optional(),
  comments: z.string().min(1).optional(),
});

/** A fault the gateway injects before the step (sandbox `/__sandbox/faults`): the outcome of one request is lost. */
export const faultSchema = z.strictObject({
  kind: z.enum(FAULT_KINDS),
  /** Only requests whose path contains this (e.g. `/captures`, `/refunds`, `/pts/v2/payments`). */
  path: z.string().startsWith('/').optional(),
  method: z.enum(['GET', 'POST', 'PATCH']).optional(),
});

const screens = z.enum(['approved', 'declined', 'error', 'session', 'idle']);

/** What every step may say besides its action. */
const common = {
  /** Messages the step must send, in order, with their answers. An empty list: the step sends nothing. */
  expect: z.array(expectedMessageSchema).default([]),
  /** The customer screen the step must end on. */
  screen: screens.optional(),
  /** Faults scheduled just before the step. */
  faults: z.array(faultSchema).max(10).optional(),
  /** The customer's answer when the step offers a currency conversion (absent: the local currency). */
  dcc: z.enum(['card', 'local']).optional(),
};

const minutes = z.number().int().min(0).max(100_000);

/** The actions of a step, per model: what a customer or an operator does. */
export const stepSchema = z.discriminatedUnion('do', [
  /** Meter: choose a duration and confirm; the meter pre-authorizes (tariff.meterAuthorization). */
  z.strictObject({ do: z.literal('park'), minutes: minutes.min(1), ...common }),
  /** Meter: extend the running session. */
  z.strictObject({ do: z.literal('extend'), minutes: minutes.min(1), ...common }),
  /** Meter: end the session `after` minutes after it began (the capture of the actual fee). */
  z.strictObject({ do: z.literal('leave'), after: minutes, ...common }),
  /** Pay station: pay the ticket taken `minutes` ago. */
  z.strictObject({ do: z.literal('pay-ticket'), minutes, ...common }),
  /** Pay station: pay the lost-ticket fee. */
  z.strictObject({ do: z.literal('lost-ticket'), ...common }),
  /** Tap-and-go: tap at the entry gate (account verification and pre-authorization of the hold). */
  z.strictObject({ do: z.literal('tap-entry'), ...common }),
  /** Tap-and-go: tap at the exit gate `after` minutes after entry. */
  z.strictObject({ do: z.literal('tap-exit'), after: minutes, ...common }),
  /** Attended: a sale of this amount. */
  z.strictObject({ do: z.literal('sale'), amount: decimal, ...common }),
  /** Attended: a standalone credit of this amount. */
  z.strictObject({ do: z.literal('credit'), amount: decimal, ...common }),
  /** Operator: refund the case's payment (all of it, or `amount`). */
  z.strictObject({ do: z.literal('refund'), amount: decimal.optional(), ...common }),
  /** Operator: void the case's payment, its refund or its credit. */
  z.strictObject({ do: z.literal('void'), of: z.enum(['payment', 'refund', 'credit']), ...common }),
]);

export const MODELS = ['meter', 'kiosk', 'tap-and-go', 'attended'] as const;

/** The actions each model's customer can take (operator actions are open to every model). */
export const MODEL_ACTIONS: Readonly<Record<(typeof MODELS)[number], readonly string[]>> = {
  meter: ['park', 'extend', 'leave'],
  kiosk: ['pay-ticket', 'lost-ticket'],
  'tap-and-go': ['tap-entry', 'tap-exit'],
  attended: ['sale', 'credit'],
};

export const OPERATOR_ACTIONS: readonly string[] = ['refund', 'void'];

/** A case id as acquirers write them: `PK-MTR-N2-CL-03`. Also a safe file name of its evidence bundle. */
export const CASE_ID = /^[A-Z][A-Z0-9]*(-[A-Z0-9]+){1,6}$/;

export const caseSchema = z.strictObject({
  id: z.string().regex(CASE_ID, 'an id such as PK-MTR-N2-CL-03'),
  title: z.string().min(1).max(200),
  model: z.enum(MODELS),
  /** Attended (catLevel 6, an operator present) or unattended (catLevel 2). */
  attended: z.boolean(),
  /** The simulated reader's card profile (devices/sim/cards.ts: network, entry mode, faults). */
  card: z.string().min(1),
  /** A case whose steps run first in the same terminal session: this case follows on its transaction. */
  parent: z.string().regex(CASE_ID).optional(),
  /** Configuration on top of the pack's (tariff, terminal, dcc …), validated as the terminal's configuration. */
  config: z.record(z.string(), z.unknown()).optional(),
  /** Why the case cannot run on this terminal (it is listed, reported as skipped, and never silently dropped). */
  notApplicable: z.string().min(1).optional(),
  steps: z.array(stepSchema).min(1).max(20),
});

export const packSchema = z.strictObject({
  pack: z.string().regex(/^[a-z0-9][a-z0-9-]*$/),
  title: z.string().min(1),
  /** Version of the pack: a certified terminal is certified against one version. */
  version: z.string().min(1),
  /** Configuration every case starts from (before its own `config`). */
  config: z.record(z.string(), z.unknown()).optional(),
  cases: z.array(caseSchema).min(1),
});

export type Pack = z.infer<typeof packSchema>;
export type PackCase = z.infer<typeof caseSchema>;
export type PackStep = z.infer<typeof stepSchema>;
export type ExpectedStepMessage = z.infer<typeof expectedMessageSchema>;
export type PackFault = z.infer<typeof faultSchema>;
