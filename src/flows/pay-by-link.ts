import { assign, enqueueActions, fromPromise, setup } from 'xstate';
import {
  FlowEffectError,
  type LinkOutcome,
  type LinkPaid,
  type LinkRequest,
  type LinkShown,
  type LinkUnconfirmed,
} from './effects.js';
import type { FlowClock, LinkPurpose, ReceiptData } from './effects.js';
import { commentsFor } from './services.js';
import type { ViewContext } from './models.js';
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
 *
 * Pay later (purpose `pay-later`, issue 14 item 2): the link for an amount owed is printed (`printLink`) and shown for
 * `showMs`; Done, Cancel or that time leave the screen and the link stays active — the host watches it for its wait
 * and deactivates it once paid or when the wait ends. A payment while it is on screen is still reported as paid.
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
  /** Pay later: how long the link stays on screen (the customer takes the printed slip), ms. */
  showMs?: number;
}

export interface PayByLinkContext {
  request: LinkRequest;
  clock: FlowClock;
  showMs: number;
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
    waitMs:
      purpose === 'pay-later'
        ? (settings.payLater?.waitMs ?? 600_000)
        : (settings.payByPhone?.waitMs ?? 300_000),
  };
}

/**
 * A reference for a session that has no ticket: a prefix and the time in UTC with letters between the digit runs
 * (`METER20261124T140512`), so that it never has the shape of a card number.
 */
export function sessionReference(prefix: string, atMs: number): string {
  const iso = new Date(atMs).toISOString();
  return `${prefix}${iso.slice(0, 10).replace(/-/g, '')}T${iso.slice(11, 19).replace(/:/g, '')}`;
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

type PaidByLink = PayByLinkResult & { kind: 'paid' };
type LinkDone = { event: { output: PayByLinkResult } };

/** What a model needs of its own context to offer a payment link. */
export interface PayByLinkParentContext extends ViewContext {
  settings: FlowSettings;
  clock: FlowClock;
}

export interface PayByLinkStateOptions<TContext extends PayByLinkParentContext> {
  /** `fee`: pay by phone, the customer's choice; `pay-later`: the amount the card did not pay, printed and shown. */
  purpose: LinkPurpose;
  /**
   * The link's reference (never card-number shaped) and amount, minor units of the terminal's currency; `holdId`, the
   * tap-and-go hold whose stay it charges for (`LinkRequest.holdId`).
   */
  link: (context: TContext) => { reference: string; amountMinor: number; holdId?: string };
  /** The link's amount is the amount on screen while it is shown. */
  showsAmount?: boolean;
  /** What the receipt of a paid link describes; its `Paid by` line is added. */
  receiptLines: (context: TContext) => ReceiptData['lines'];
  /** The model's state once the link is paid, and what the model notes then (its screen, its session). */
  paid: { target: string; note?: (context: TContext, paid: PaidByLink) => Partial<TContext> };
  /**
   * The model's state when the link is not paid. Pay by phone goes back to the choice and says why (no link, or a
   * link not paid); pay later leaves quietly: the link stays active, watched by the host.
   */
  notPaid: string;
}

/**
 * The state in which a model runs `payByLinkMachine`: the screen's text, the link asked for, the receipt of a paid
 * link (`linkReceipt`) and what the model notes. The model adds its `on`, handing the customer's CANCEL (and, for pay
 * later, DONE) to the child `payByLink`. The model's setup provides the child as the actor `payByLink` and two actions: `issueReceipt` and
 * `noteLink`, an assign of the update it is given (`assign((_, update: Partial<Context>) => update)`).
 */
export function payByLinkState<TContext extends PayByLinkParentContext>(
  options: PayByLinkStateOptions<TContext>,
) {
  const payLater = options.purpose === 'pay-later';
  const paid = (event: LinkDone['event']) => event.output as PaidByLink;
  const notPaid = payLater
    ? { target: options.notPaid }
    : {
        target: options.notPaid,
        actions: {
          type: 'noteLink' as const,
          params: ({ event }: LinkDone): Partial<ViewContext> => ({
            message: {
              key:
                event.output.kind === 'not-paid' && event.output.linkId === undefined
                  ? 'payByPhone.unavailable'
                  : 'payByPhone.notPaid',
            },
            reason: event.output.kind === 'not-paid' ? event.output.reason : undefined,
          }),
        },
      };
  return {
    entry: {
      type: 'noteLink' as const,
      params: ({ context }: { context: TContext }): Partial<ViewContext> => ({
        ...(options.showsAmount === true ? { amountMinor: options.link(context).amountMinor } : {}),
        message: { key: payLater ? 'payLater.scan' : 'payByPhone.scan' },
      }),
    },
    invoke: {
      id: 'payByLink' as const,
      src: 'payByLink' as const,
      input: ({ context }: { context: TContext }): PayByLinkInput => {
        const { reference, amountMinor, holdId } = options.link(context);
        return {
          clock: context.clock,
          ...(payLater ? { showMs: context.settings.timing.resultScreenMs * 3 } : {}),
          request: {
            ...payByLinkRequest(context.settings, reference, amountMinor, options.purpose),
            ...(holdId !== undefined ? { holdId } : {}),
          },
        };
      },
      onDone: [
        {
          guard: ({ event }: LinkDone) => event.output.kind === 'paid',
          target: options.paid.target,
          actions: [
            {
              type: 'issueReceipt' as const,
              params: ({ context, event }: { context: TContext } & LinkDone) =>
                linkReceipt(
                  paid(event),
                  context.settings,
                  context.clock.now(),
                  options.receiptLines(context),
                ),
            },
            {
              type: 'noteLink' as const,
              params: ({ context, event }: { context: TContext } & LinkDone): Partial<TContext> =>
                options.paid.note?.(context, paid(event)) ?? {},
            },
          ],
        },
        notPaid,
      ],
    },
  };
}

/** After the host's own deadline, the machine stops waiting by itself (the host's deadline normally comes first). */
const BACKSTOP_MS = 15_000;

const notProvided = (name: string) => () =>
  Promise.reject(new FlowEffectError('EFFECT_NOT_PROVIDED', `effect ${name} was not provided by the host`));

/** The create's answer: the link to show, or `paid` (its payment was notified before the create's answer came). */
function paidFirst(created: LinkShown | LinkPaid): created is LinkPaid {
  return 'kind' in created && created.kind === 'paid';
}

/** The link to show of a create's answer that is not `paid`. */
function shown(created: LinkShown | LinkPaid): LinkShown | undefined {
  return paidFirst(created) ? undefined : created;
}

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : 'LINK_UNAVAILABLE';
}

export const payByLinkMachine = setup({
  types: {
    context: {} as PayByLinkContext,
    input: {} as PayByLinkInput,
    events: {} as { type: 'CANCEL' } | { type: 'DONE' },
    output: {} as PayByLinkResult,
  },
  actions: {
    printLink: (_, _link: LinkShown & { amountMinor: number; currency: string; reference: string }) => {},
    leaveForLater: assign(({ context }) => ({
      outcome: { kind: 'closed' as const, linkId: context.link?.linkId ?? '', reason: 'later' },
    })),
  },
  guards: {
    payLater: ({ context }) => context.request.purpose === 'pay-later',
  },
  actors: {
    createLink: fromPromise<LinkShown | LinkPaid, LinkRequest>(notProvided('createLink')),
    awaitLink: fromPromise<LinkOutcome, { linkId: string }>(notProvided('awaitLink')),
    closeLink: fromPromise<
      LinkOutcome | LinkUnconfirmed,
      { linkId: string; reason: 'cancelled' | 'timeout' }
    >(notProvided('closeLink')),
  },
  delays: {
    linkWait: ({ context }) =>
      Math.max(0, (context.link?.expiresAtMs ?? context.clock.now()) - context.clock.now()) + BACKSTOP_MS,
    payLaterScreen: ({ context }) => context.showMs,
  },
}).createMachine({
  id: 'payByLink',
  context: ({ input }) => ({
    request: input.request,
    clock: input.clock,
    showMs: input.showMs ?? 30_000,
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
          // Paid before the create's answer came: the ticket is paid (a CANCEL meanwhile changes nothing of that).
          {
            guard: ({ event }) => paidFirst(event.output),
            target: 'done',
            actions: assign({ outcome: ({ event }) => (paidFirst(event.output) ? event.output : undefined) }),
          },
          {
            guard: ({ context }) => context.cancelRequested,
            target: 'closing',
            actions: assign({ link: ({ event }) => shown(event.output) }),
          },
          { target: 'waiting', actions: assign({ link: ({ event }) => shown(event.output) }) },
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
      entry: enqueueActions(({ context, enqueue, check }) => {
        const link = context.link;
        if (link !== undefined && check('payLater'))
          enqueue({
            type: 'printLink',
            params: {
              ...link,
              amountMinor: context.request.amountMinor,
              currency: context.request.currency,
              reference: context.request.reference,
            },
          });
      }),
      invoke: {
        id: 'awaitLink',
        src: 'awaitLink',
        input: ({ context }) => ({ linkId: context.link?.linkId ?? '' }),
        onDone: { target: 'done', actions: assign({ outcome: ({ event }) => event.output }) },
        // The host could not tell: the link is closed (a payment that came first is still reported).
        onError: { target: 'closing', actions: assign({ closeReason: 'timeout' as const }) },
      },
      on: {
        // Pay later: the customer leaves with the slip; the link stays active for its wait, watched by the host.
        CANCEL: [
          { guard: 'payLater', target: 'done', actions: 'leaveForLater' },
          { target: 'closing', actions: assign({ closeReason: 'cancelled' as const }) },
        ],
        DONE: { guard: 'payLater', target: 'done', actions: 'leaveForLater' },
      },
      after: {
        payLaterScreen: { guard: 'payLater', target: 'done', actions: 'leaveForLater' },
        linkWait: { target: 'closing', actions: assign({ closeReason: 'timeout' as const }) },
      },
    },
    closing: {
      tags: ['processing'],
      invoke: {
        id: 'closeLink',
        src: 'closeLink',
        input: ({ context }) => ({ linkId: context.link?.linkId ?? '', reason: context.closeReason }),
        onDone: [
          // The gateway has not confirmed the link INACTIVE: it may be paid, or have been paid already.
          { guard: ({ event }) => event.output.kind === 'unconfirmed', target: 'checking' },
          {
            target: 'done',
            actions: assign({
              outcome: ({ event }) => (event.output.kind === 'unconfirmed' ? undefined : event.output),
            }),
          },
        ],
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
    checking: {
      // The deactivation is not confirmed: the customer is not sent to another way of paying the same fee (a card
      // would charge it twice) until the link is known paid, or INACTIVE at the gateway — the host keeps deactivating
      // it. The screen says the payment by phone is being checked (`link-checking`).
      tags: ['processing', 'link-checking'],
      invoke: {
        id: 'awaitLink',
        src: 'awaitLink',
        input: ({ context }) => ({ linkId: context.link?.linkId ?? '' }),
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
