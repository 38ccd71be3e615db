import { assign, fromPromise, setup } from 'xstate';
import { FlowEffectError, type LinkOutcome, type LinkRequest, type LinkShown } from './effects.js';
import type { FlowClock, LinkPurpose, ReceiptData } from './effects.js';
import { commentsFor } from './services.js';
import type { FlowSettings } from './settings.js';

/**
 * Pay by phone with a payment link (issue 14), the part every model shares, run as a child actor the way the
 * transaction actor is: the host creates a fixed-price link for the fee (`createLink`), the screen shows its QR code and
 * URL with the time left (`pay-by-phone`), and the wait ends when the link is paid (`awaitLink`: the verified
 * notification, or the host's look through the API), when the customer cancels, or when the wait runs out — then the
 * link is deactivated (`closeLink`), and a payment that came first still counts. Nothing moves money here: the
 * customer pays on the gateway's hosted page, and the model settles its ticket or session on `paid`.
 *
 * A CANCEL while the link is being created is kept and the link closed as soon as it exists: a link the gateway made
 * is never left active for nobody.
 */

/** How pay by phone ended, for the model. */
export type PayByLinkResult =
  | { kind: 'paid'; linkId: string; paymentId: string; amountMinor: number; currency: string }
  | {
      kind: 'not-paid';
      linkId?: string;
      /** cancelled, timeout, unavailable, or what else closed it. */ reason: string;
    };

export interface PayByLinkInput {
  request: LinkRequest;
  clock: FlowClock;
}

export interface PayByLinkContext {
  request: LinkRequest;
  clock: FlowClock;
  link: LinkShown | undefined;
  /** The customer cancelled while the link was being created. */
  cancelRequested: boolean;
  /** Why the terminal closes the link. */
  closeReason: 'cancelled' | 'timeout';
  outcome: LinkOutcome | undefined;
  /** The code of a create that gave no link. */
  unavailable: string | undefined;
}

/** The link a model asks for: the fee of `reference` in the terminal's currency, waited for as configured. */
export function payByLinkRequest(
  settings: FlowSettings,
  reference: string,
  amountMinor: number,
  purpose: LinkPurpose = 'fee',
): LinkRequest {
  return {
    reference,
    amountMinor,
    currency: settings.currency,
    purpose,
    waitMs: settings.payByPhone?.waitMs ?? 300_000,
  };
}

/**
 * The receipt of a fee paid by phone: a sale of the fee, its reference the link (the terminal's record) and the
 * gateway's payment; no card on it (the card was typed on the customer's phone, never seen by the terminal).
 */
export function linkReceipt(
  paid: PayByLinkResult & { kind: 'paid' },
  settings: FlowSettings,
  atMs: number,
  lines: ReceiptData['lines'],
): ReceiptData {
  return {
    service: 'sale',
    comments: commentsFor('sale', settings),
    amountMinor: paid.amountMinor,
    currency: paid.currency,
    transactionId: paid.linkId,
    gatewayId: paid.paymentId,
    atMs,
    lines: [...lines, { label: 'Paid by', value: 'Payment link' }],
  };
}

/** After the host's own deadline, the machine stops waiting by itself (the host's deadline normally comes first). */
const BACKSTOP_MS = 15_000;

const notProvided = (name: string) => () =>
  Promise.reject(new FlowEffectError('EFFECT_NOT_PROVIDED', `effect ${name} was not provided by the host`));

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : 'LINK_UNAVAILABLE';
}

export const payByLinkMachine = setup({
  types: {
    context: {} as PayByLinkContext,
    input: {} as PayByLinkInput,
    events: {} as { type: 'CANCEL' },
    output: {} as PayByLinkResult,
  },
  actors: {
    createLink: fromPromise<LinkShown, LinkRequest>(notProvided('createLink')),
    awaitLink: fromPromise<LinkOutcome, { linkId: string }>(notProvided('awaitLink')),
    closeLink: fromPromise<LinkOutcome, { linkId: string; reason: 'cancelled' | 'timeout' }>(
      notProvided('closeLink'),
    ),
  },
  delays: {
    linkWait: ({ context }) =>
      Math.max(0, (context.link?.expiresAtMs ?? context.clock.now()) - context.clock.now()) + BACKSTOP_MS,
  },
}).createMachine({
  id: 'payByLink',
  context: ({ input }) => ({
    request: input.request,
    clock: input.clock,
    link: undefined,
    cancelRequested: false,
    closeReason: 'cancelled',
    outcome: undefined,
    unavailable: undefined,
  }),
  initial: 'creating',
  states: {
    creating: {
      tags: ['processing'],
      invoke: {
        id: 'createLink',
        src: 'createLink',
        input: ({ context }) => context.request,
        onDone: [
          {
            guard: ({ context }) => context.cancelRequested,
            target: 'closing',
            actions: assign({ link: ({ event }) => event.output }),
          },
          { target: 'waiting', actions: assign({ link: ({ event }) => event.output }) },
        ],
        onError: {
          target: 'done',
          actions: assign({ unavailable: ({ event }) => codeOf(event.error) }),
        },
      },
      on: { CANCEL: { actions: assign({ cancelRequested: true }) } },
    },
    waiting: {
      tags: ['pay-by-phone'],
      invoke: {
        id: 'awaitLink',
        src: 'awaitLink',
        input: ({ context }) => ({ linkId: context.link?.linkId ?? '' }),
        onDone: { target: 'done', actions: assign({ outcome: ({ event }) => event.output }) },
        // The host could not tell: the link is closed (a payment that came first is still reported).
        onError: { target: 'closing', actions: assign({ closeReason: 'timeout' as const }) },
      },
      on: { CANCEL: { target: 'closing', actions: assign({ closeReason: 'cancelled' as const }) } },
      after: { linkWait: { target: 'closing', actions: assign({ closeReason: 'timeout' as const }) } },
    },
    closing: {
      tags: ['processing'],
      invoke: {
        id: 'closeLink',
        src: 'closeLink',
        input: ({ context }) => ({ linkId: context.link?.linkId ?? '', reason: context.closeReason }),
        onDone: { target: 'done', actions: assign({ outcome: ({ event }) => event.output }) },
        onError: {
          target: 'done',
          actions: assign(({ context }) => ({
            outcome: {
              kind: 'closed' as const,
              linkId: context.link?.linkId ?? '',
              reason: context.closeReason,
            },
          })),
        },
      },
    },
    done: { type: 'final' },
  },
  output: ({ context }): PayByLinkResult => {
    const outcome = context.outcome;
    if (outcome?.kind === 'paid')
      return {
        kind: 'paid',
        linkId: outcome.linkId,
        paymentId: outcome.paymentId,
        amountMinor: context.request.amountMinor,
        currency: context.request.currency,
      };
    if (outcome !== undefined) return { kind: 'not-paid', linkId: outcome.linkId, reason: outcome.reason };
    return { kind: 'not-paid', reason: context.unavailable ?? 'LINK_UNAVAILABLE' };
  },
});

export type PayByLinkMachine = typeof payByLinkMachine;
