import { assign, enqueueActions, fromPromise, setup } from 'xstate';
import { FlowEffectError, type OriginalTransaction, type ReceiptData, type ServiceName } from './effects.js';
import type { FlowClock } from './effects.js';
import { commentsFor, resolutionFor } from './services.js';
import { toDecimalString } from '../money/index.js';
import { reversalRefusalReleased } from '../vocabulary/services.js';
import { followOnSettings, type FlowSettings } from './settings.js';
import { transactionMachine, type TransactionResult } from './transaction.js';

/**
 * Operator mode (kiosk/booth refunds and voids, attended linked refunds), protected by the operator PIN (DESIGN.md:
 * operator actions need the PIN), which the host checks before it starts the machine — once per request, where the
 * lockout is counted and every check recorded (src/host/operator-desk.ts `checkPin`): the machine never sees the PIN.
 * One actor per operator request: the journal's record of the original →
 * REFUND Capture / REFUND Payment (within the captured amount), or VOID Capture / Payment / Refund / Credit before the
 * settlement cut-off (spec 001). Voiding a capture leaves the authorization hold in place (gateway.md §7): it is
 * reversed next.
 */

export type OperatorCommand =
  { type: 'refund'; transactionId: string; amountMinor?: number } | { type: 'void'; transactionId: string };

export interface OperatorInput {
  settings: FlowSettings;
  clock: FlowClock;
  command: OperatorCommand;
}

export interface OperatorResult {
  /**
   * `not-found`: no such transaction. `failed`: the journal's record of it could not be read (code
   * JOURNAL_UNREADABLE) — nothing was sent; it may well exist. `not-allowed`: the action does not apply to it.
   * `cancelled`: its answer was lost and its own timeout request (a refund's timeout void) cancelled it — nothing moved
   * (code TIMEOUT_RESOLVED).
   */
  outcome:
    'approved' | 'declined' | 'rejected' | 'unknown' | 'cancelled' | 'not-found' | 'not-allowed' | 'failed';
  /** Stable code: NOT_FOUND, JOURNAL_UNREADABLE, an {@link OperatorRefusalCode}, APPROVED, a gateway reason, … */
  code: string;
  message: string;
  /** The service sent, when one was. */
  service?: ServiceName;
  /**
   * What the refund or void sent asked for, when one was sent: minor units of `currency` (the payment's, as listed) —
   * for a refund of all that is left, the amount the machine worked out.
   */
  amountMinor?: number;
  currency?: string;
  /** transactionId of the refund or void sent. */
  transactionId?: string;
}

interface OperatorContext {
  settings: FlowSettings;
  clock: FlowClock;
  command: OperatorCommand;
  original: OriginalTransaction | undefined;
  service: ServiceName | undefined;
  amountMinor: number;
  result: OperatorResult | undefined;
}

const notProvided = (name: string) => () =>
  Promise.reject(new FlowEffectError('EFFECT_NOT_PROVIDED', `effect ${name} was not provided by the host`));

/**
 * Why the operator machine sends nothing for a command (its result's `code`, outcome `not-allowed`):
 * - `ALREADY_VOIDED`: a void of the original went through: neither a refund nor a second void applies;
 * - `VOID_PENDING`: a void of the original awaits its outcome (being sent, or its answer lost until recovery resolves
 *   it): neither a refund nor a second void is sent before it is known — it may have gone through, or may yet be
 *   refused;
 * - `REFUNDS_STANDING`: a void of a capture or sale with a refund that stands or may stand (approved, or its answer not
 *   known yet): the void would give back the whole amount on top of the refund (the gateway refuses it);
 * - `GATEWAY_ID_UNKNOWN`: its answer was lost and recovery found it standing at the gateway (its timeout void refused
 *   NOT_VOIDABLE): the terminal does not know the gateway id its refunds and voids are sent to;
 * - `NOT_VOIDABLE`: past the settlement cut-off (or recovery's timeout void of it was refused so);
 * - `NOT_REFUNDABLE`: only captures and sales are refunded;
 * - `REFUND_AMOUNT_INVALID`: the amount asked for is no refund (not a whole number of minor units above 0);
 * - `REFUND_EXCEEDS_CAPTURED`: the amount is not within what is left to refund (or nothing is left).
 */
export type OperatorRefusalCode =
  | 'ALREADY_VOIDED'
  | 'VOID_PENDING'
  | 'GATEWAY_ID_UNKNOWN'
  | 'REFUNDS_STANDING'
  | 'NOT_VOIDABLE'
  | 'NOT_REFUNDABLE'
  | 'REFUND_AMOUNT_INVALID'
  | 'REFUND_EXCEEDS_CAPTURED';

/**
 * What of a payment still stands, minor units: nothing once a void of it went through (a void awaiting its outcome may
 * yet be refused: it gives nothing back until approved); otherwise its amount less its refunds that stand or may stand
 * (`refundedMinor`). The most a refund of it may take, and whether a paid tap-and-go exit is still paid
 * (src/host/flow-effects.ts): a capture voided, or refunded in full, paid nothing.
 */
export function amountStanding(original: OriginalTransaction): number {
  return original.voided ? 0 : original.amountMinor - original.refundedMinor;
}

/** The refund or void service for an original, or the reason there is none. */
export function operatorService(
  command: OperatorCommand,
  original: OriginalTransaction,
): { service: ServiceName; amountMinor: number } | { code: OperatorRefusalCode; message: string } {
  // A voided payment gave its money back: a refund would pay it again, a second void is refused by the gateway.
  if (original.voided)
    return {
      code: 'ALREADY_VOIDED',
      message: 'Voided already: nothing to undo',
    };
  // A void whose outcome is not known may have given the money back, or may yet be refused: nothing else goes out
  // for the payment (a refund would pay it twice, a second void is refused) until it is known.
  if (original.voidPending)
    return {
      code: 'VOID_PENDING',
      message: 'A void of it is awaiting its outcome: try again once it is known',
    };
  // Refunds and voids go to the original's gateway id (gateway.md §7), which only its lost answer carried.
  if (original.gatewayId === undefined)
    return {
      code: 'GATEWAY_ID_UNKNOWN',
      message: "The gateway's id of this payment is not known (its answer was lost): undo it at the gateway",
    };
  if (command.type === 'void') {
    // spec 001: a payment with refunds is not voided (its refunds are voided first, or what is left is refunded).
    if (original.refundedMinor > 0)
      return {
        code: 'REFUNDS_STANDING',
        message:
          'Refunded in part or in full (or a refund is awaiting its answer): void its refunds first, or refund the rest',
      };
    if (!original.voidable)
      return { code: 'NOT_VOIDABLE', message: 'Past the settlement cut-off: refund instead' };
    switch (original.service) {
      case 'capture':
        return { service: 'void-capture', amountMinor: original.amountMinor };
      case 'sale':
        return { service: 'void-payment', amountMinor: original.amountMinor };
      case 'refund-capture':
      case 'refund-payment':
        return { service: 'void-refund', amountMinor: original.amountMinor };
      case 'credit':
        return { service: 'void-credit', amountMinor: original.amountMinor };
    }
  }
  const service =
    original.service === 'capture'
      ? 'refund-capture'
      : original.service === 'sale'
        ? 'refund-payment'
        : undefined;
  if (service === undefined)
    return { code: 'NOT_REFUNDABLE', message: 'Only captures and sales can be refunded' };
  if (
    command.amountMinor !== undefined &&
    !(Number.isSafeInteger(command.amountMinor) && command.amountMinor > 0)
  )
    return {
      code: 'REFUND_AMOUNT_INVALID',
      message: 'A refund is of an amount above 0 (none: all that is left)',
    };
  const left = amountStanding(original);
  const amountMinor = command.amountMinor ?? left;
  // spec 001, Limits: the sum of refunds stays within the captured amount. Said in money, as the panel lists it: a
  // figure in minor units ("350") reads as pounds.
  if (amountMinor <= 0 || amountMinor > left)
    return {
      code: 'REFUND_EXCEEDS_CAPTURED',
      message:
        left > 0
          ? `At most ${toDecimalString(left, original.currency)} ${original.currency} can be refunded`
          : 'Nothing is left to refund',
    };
  return { service, amountMinor };
}

/**
 * What the operator is told of a request of operator mode whose answer was lost and is left to the journal's recovery
 * (`what` names it), by the vocabulary's plan of its service: a refund has a timeout request of its own (a timeout
 * void, gateway.md §2), which cancels it — the customer is not refunded by it unless that void is refused; a void or
 * the reversal of a voided capture's hold has none, and recovery finishes it — by voiding what the void voids, by a
 * timeout reversal of the whole authorization.
 */
function lostAnswerMessage(what: string, service: ServiceName): string {
  return resolutionFor(service) === null
    ? `The answer to the ${what} was lost: the terminal finishes it; see the transaction list`
    : `The answer to the ${what} was lost: the terminal is cancelling it. Do not tell the customer it is ` +
        `refunded; once the transaction list shows it resolved (timeout-void), nothing was refunded: refund again`;
}

/** The amount and currency of the refund or void sent (OperatorResult `amountMinor`, `currency`). */
function sentAmount(context: OperatorContext): { amountMinor: number; currency: string } {
  return {
    amountMinor: context.amountMinor,
    currency: context.original?.currency ?? context.settings.currency,
  };
}

function finish(
  outcome: OperatorResult['outcome'],
  code: string,
  message: string,
): { result: OperatorResult } {
  return { result: { outcome, code, message } };
}

export const operatorMachine = setup({
  types: {
    context: {} as OperatorContext,
    input: {} as OperatorInput,
    output: {} as OperatorResult,
  },
  actors: {
    transaction: transactionMachine,
    findTransaction: fromPromise<OriginalTransaction | null, { transactionId: string }>(
      notProvided('findTransaction'),
    ),
  },
  actions: {
    issueReceipt: (_, _receipt: ReceiptData) => {},
  },
  guards: {
    voidedCaptureWithHold: ({ context }) =>
      context.service === 'void-capture' && context.original?.authorization !== undefined,
  },
}).createMachine({
  id: 'operator',
  context: ({ input }) => ({
    settings: input.settings,
    clock: input.clock,
    command: input.command,
    original: undefined,
    service: undefined,
    amountMinor: 0,
    result: undefined,
  }),
  initial: 'finding',
  output: ({ context }) => context.result ?? { outcome: 'rejected', code: 'NO_RESULT', message: 'No result' },
  states: {
    finding: {
      invoke: {
        src: 'findTransaction',
        input: ({ context }) => ({ transactionId: context.command.transactionId }),
        onDone: [
          {
            guard: ({ event }) => event.output !== null,
            target: 'deciding',
            actions: assign({ original: ({ event }) => event.output ?? undefined }),
          },
          { target: 'done', actions: assign(finish('not-found', 'NOT_FOUND', 'No such transaction')) },
        ],
        // Not "no such transaction": it may exist, and be refunded or voided once the journal can be read again.
        onError: {
          target: 'done',
          actions: assign(
            finish(
              'failed',
              'JOURNAL_UNREADABLE',
              'The journal could not be read: nothing was sent; try again',
            ),
          ),
        },
      },
    },
    deciding: {
      always: [
        {
          guard: ({ context }) =>
            'code' in operatorService(context.command, context.original as OriginalTransaction),
          target: 'done',
          actions: assign(({ context }) => {
            const refusal = operatorService(context.command, context.original as OriginalTransaction) as {
              code: string;
              message: string;
            };
            return finish('not-allowed', refusal.code, refusal.message);
          }),
        },
        {
          target: 'sending',
          actions: assign(({ context }) => {
            const plan = operatorService(context.command, context.original as OriginalTransaction) as {
              service: ServiceName;
              amountMinor: number;
            };
            return { service: plan.service, amountMinor: plan.amountMinor };
          }),
        },
      ],
    },
    sending: {
      invoke: {
        src: 'transaction',
        input: ({ context }) => {
          const original = context.original as OriginalTransaction;
          const service = context.service as ServiceName;
          return {
            // A refund is in the currency of the payment it gives back, as listed (the journal's).
            settings: followOnSettings(context.settings, original.currency),
            request: {
              service,
              comments: commentsFor(service, context.settings),
              amountMinor: context.amountMinor,
              original: {
                ...(original.gatewayId !== undefined ? { gatewayId: original.gatewayId } : {}),
                transactionId: original.transactionId,
                service: original.service,
              },
              ...(original.cardRef !== undefined ? { cardRef: original.cardRef } : {}),
              includeEmvTags: false,
              acceptPartial: false,
              cancellable: false,
            },
          };
        },
        onDone: [
          {
            guard: ({ event }) => event.output.kind === 'approved',
            target: 'sent',
            actions: [
              enqueueActions(({ context, event, enqueue }) => {
                const output = event.output as TransactionResult & { kind: 'approved' };
                const service = context.service as ServiceName;
                enqueue({
                  type: 'issueReceipt',
                  params: {
                    service,
                    comments: commentsFor(service, context.settings),
                    // A refund's receipt states what it gave back as the gateway answered (the amount processed, which
                    // may be less than was asked), as the journal's record of it and its reprint do.
                    amountMinor:
                      context.command.type === 'refund' ? output.authorizedMinor : context.amountMinor,
                    currency: context.original?.currency ?? context.settings.currency,
                    transactionId: output.transactionId,
                    ...(output.gatewayId !== undefined ? { gatewayId: output.gatewayId } : {}),
                    atMs: context.clock.now(),
                    lines: [{ label: 'Original', value: context.original?.transactionId ?? '' }],
                  },
                });
              }),
              assign(({ context, event }) => ({
                result: {
                  outcome: 'approved' as const,
                  code: 'APPROVED',
                  message: context.command.type === 'refund' ? 'Refunded' : 'Voided',
                  service: context.service as ServiceName,
                  transactionId: (event.output as TransactionResult & { kind: 'approved' }).transactionId,
                  ...sentAmount(context),
                },
              })),
            ],
          },
          {
            target: 'done',
            actions: assign(({ context, event }) => {
              const output = event.output;
              // An answer lost and resolved here: its timeout request (a refund's timeout void) went through, so the
              // outcome is known — nothing moved. Not resolved here: the journal's recovery resolves it (see
              // lostAnswerMessage).
              if (output.kind === 'unknown' && output.resolved)
                return {
                  result: {
                    outcome: 'cancelled' as const,
                    code: 'TIMEOUT_RESOLVED',
                    message:
                      `The answer to the ${context.command.type} was lost and the terminal cancelled it: nothing was ` +
                      `${context.command.type === 'refund' ? 'refunded; refund' : 'voided; void'} again`,
                    service: context.service,
                    transactionId: output.transactionId,
                    ...sentAmount(context),
                  },
                };
              const outcome =
                output.kind === 'declined' ? 'declined' : output.kind === 'rejected' ? 'rejected' : 'unknown';
              const code = 'reason' in output ? output.reason : output.kind.toUpperCase();
              return {
                result: {
                  outcome,
                  code,
                  message:
                    output.kind === 'unknown'
                      ? lostAnswerMessage(context.command.type, context.service as ServiceName)
                      : `The ${context.command.type} was not completed`,
                  service: context.service,
                  ...('transactionId' in output ? { transactionId: output.transactionId } : {}),
                  ...sentAmount(context),
                },
              };
            }),
          },
        ],
      },
    },
    sent: {
      always: [{ guard: 'voidedCaptureWithHold', target: 'releasingHold' }, { target: 'done' }],
    },
    releasingHold: {
      invoke: {
        src: 'transaction',
        input: ({ context }) => {
          const auth = context.original?.authorization as NonNullable<OriginalTransaction['authorization']>;
          return {
            settings: followOnSettings(context.settings, (context.original as OriginalTransaction).currency),
            request: {
              service: 'reversal' as const,
              comments: commentsFor('reversal', context.settings),
              amountMinor: auth.authorizedMinor,
              original: {
                gatewayId: auth.gatewayId,
                transactionId: auth.transactionId,
                service: 'preauth' as const,
              },
              ...(context.original?.cardRef !== undefined ? { cardRef: context.original.cardRef } : {}),
              // A reversal repeats the EMV tags of an original that had them (gateway.md §7): the host attaches
              // the tags it kept for the authorization.
              includeEmvTags: true,
              acceptPartial: false,
              cancellable: false,
            },
          };
        },
        // The void went through, whatever happens to the release: the result stays approved (the audit log records
        // the void as done), its code and message saying what became of the hold. A release refused because nothing
        // is held any more (the vocabulary's `reversalRefusalReleased`: reversed or settled already) is no refusal:
        // the hold is over, as after an approval. Another refusal left the hold on the card (HOLD_NOT_RELEASED): the
        // durable follow-up the void left tries again later (the host's background work); an unanswered one is
        // finished by the journal's recovery (HOLD_RELEASE_UNKNOWN).
        onDone: [
          {
            guard: ({ event }) => event.output.kind === 'approved',
            target: 'done',
            actions: assign(({ context }) => ({
              result: {
                ...(context.result as OperatorResult),
                message: 'Voided; the authorization was released',
              },
            })),
          },
          {
            guard: ({ event }) =>
              (event.output.kind === 'declined' || event.output.kind === 'rejected') &&
              reversalRefusalReleased(event.output.reason),
            target: 'done',
            actions: assign(({ context }) => ({
              result: {
                ...(context.result as OperatorResult),
                message: 'Voided; the authorization was released already',
              },
            })),
          },
          {
            target: 'done',
            actions: assign(({ context, event }) => {
              const output = event.output;
              if (output.kind === 'unknown')
                return {
                  result: {
                    ...(context.result as OperatorResult),
                    code: 'HOLD_RELEASE_UNKNOWN',
                    message: `Voided. ${lostAnswerMessage('release of the authorization hold', 'reversal')}`,
                  },
                };
              const reason = 'reason' in output ? output.reason : output.kind.toUpperCase();
              return {
                result: {
                  ...(context.result as OperatorResult),
                  code: 'HOLD_NOT_RELEASED',
                  message:
                    `Voided, but the authorization hold was not released (${reason}): ` +
                    'the terminal tries again later',
                },
              };
            }),
          },
        ],
      },
    },
    done: { type: 'final' },
  },
});

export type OperatorMachine = typeof operatorMachine;
