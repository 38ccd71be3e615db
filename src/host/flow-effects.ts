import { ReaderError, type CardReader } from '../../devices/index.js';
import type { Config } from '../config/index.js';
import {
  amountStanding,
  type CardSummary,
  type FlowEffects,
  type HoldRecord,
  type OriginalTransaction,
  type ReceiptData,
  type LinkOutcome,
  type ServiceRequest as FlowRequest,
  type SubmitOutcome,
  type TicketLookup,
} from '../flows/index.js';
import type { HoldStore } from '../journal/index.js';
import { requireCurrency } from '../money/index.js';
import type { CardStore } from './card-store.js';
import type { DccOffers } from './dcc.js';
import type { HoldWatch } from './hold-watch.js';
import { lookupTicket } from './local-time.js';
import type { LinkDesk, LinkView } from './link-desk.js';
import { AltPaymentError, type AltPaymentDesk } from './alt-payment-desk.js';
import type { PaymentService } from './payments.js';

/**
 * The host's implementation of what the machines need (src/flows/effects.ts): the reader (only while the terminal
 * takes cards), the one door to the gateway, DCC offers, tickets, the journal's record of a
 * transaction, the tap-and-go holds in the journal database with their expiry watch, card wiping and receipts.
 */
export function createFlowEffects(deps: {
  config: Config;
  reader: CardReader;
  cards: CardStore;
  payments: PaymentService;
  dcc: DccOffers;
  holds: HoldStore;
  /** Set once the watch exists (it runs machines with these very effects). */
  holdWatch: () => HoldWatch;
  /**
   * Whether an exit must leave a hold alone (OpenAuthorizations.holdClosedToExit): being settled outside any exit or
   * expiry, or its release decided already. Never claimed: the exit is told it is being settled.
   */
  holdClosedToExit: (hold: HoldRecord) => boolean;
  /** Whether a card may be taken now (recovery finished, in service). */
  takingCards: () => boolean;
  /**
   * The one door to the gateway. `signal` is the machine's: once it aborts while the request is out, an approval that
   * arrives is left to the journal's recovery to undo (FlowEffects.submit: the host resolves what the machine gave up).
   */
  submit: (request: FlowRequest, signal: AbortSignal) => Promise<SubmitOutcome>;
  findTransaction: (transactionId: string) => OriginalTransaction | null;
  /**
   * The journal's record of the capture of an authorization that moved money (as `findTransaction` reads it: with its
   * voids and refunds), or null: what a paid tap-and-go exit shows and prints again, unless it was given back.
   */
  captureOf: (authorizationTransactionId: string) => OriginalTransaction | null;
  receipt: (receipt: ReceiptData) => void;
  /** A tap-and-go exit's fee not computable in its hold's currency: recorded for the operator. */
  feeNotComputable: FlowEffects['feeNotComputable'];
  /** A tap-and-go entry refused after its verification (a card already inside): recorded for the operator. */
  entryRefused: FlowEffects['entryRefused'];
  /** A tap-and-go stay that outlasted its hold, charged or not at its exit: recorded for the operator. */
  stayOutstayed: FlowEffects['stayOutstayed'];
  /**
   * A tap-and-go stay that outlasted its hold and that no exit charged, replaced as its card's last stay by a new
   * entry's hold (so no exit will ask for it again): its fee recorded for the operator. Called inside the commit that
   * opens the new hold ({@link inOneCommit}), whose transaction the record joins.
   */
  outstayedStayLeft: (stay: { hold: HoldRecord; outstayedAtMs: number }) => void;
  /** Runs `fn` in one synced journal transaction: what it writes commits together, or not at all. */
  inOneCommit: <T>(fn: () => T) => T;
  /**
   * What paid a tap-and-go stay that outlasted its hold (the sales recorded for it as its ticket, the hold's id): `paid`
   * when a payment of it stands, `recent` when the last one was made no longer than `withinMs` ago (on the parking
   * clock); `unresolved` when a sale of it is in flight or its outcome unknown (recovery resolves it); undefined when
   * nothing paid it.
   */
  stayPaid: (
    holdId: string,
    withinMs: number,
  ) => { kind: 'paid'; recent: boolean; paidAtMs: number } | { kind: 'unresolved' } | undefined;
  /** Pay by phone: the terminal's payment links. */
  links: LinkDesk;
  /** How much longer than configured a customer is given (the accessibility factor in accessibility mode, else 1). */
  waitFactor: () => number;
  /** A result screen's longest time, as it comes up (FlowEffects.resultScreenMs; src/host/result-screen.ts). */
  resultScreenMs?: (ms: number) => number;
  /** Seconds the reader waits for a card after one activation (`cardWaitSeconds`: longer in accessibility mode). */
  cardWaitSeconds: () => number;
  /**
   * The reader is activated for a card: every activation, the one a read the transaction refused and waits again with
   * (a chip card swiped before its chip was tried, a chip that failed) included, on a card screen that does not change.
   */
  cardActivated?: () => void;
  /** Pay later: the link printed on the receipt printer. */
  printLink: FlowEffects['printLink'];
  /** Alternative methods (spec 001): the desk (built after the effects, asked only once the host runs). */
  altPayments: () => AltPaymentDesk;
  /**
   * What stands of a ticket's recorded payments (src/host/ticket-payments.ts): `paid` absent when nothing does,
   * `paymentUnresolved` while a payment of it has no known outcome; absent: none.
   */
  ticketPayments?: (
    ticket: string,
  ) => Promise<Pick<TicketLookup & { found: true }, 'paid' | 'paymentUnresolved'>>;
}): FlowEffects {
  const { config, reader, cards } = deps;
  // Whether the capture of a closed hold still pays for its stay, and that capture as the journal holds it: a capture
  // voided or refunded in full (the operator gave the money back) pays for nothing. A hold closed as captured whose
  // capture the journal does not hold is paid, as it says; a dropped one only by a capture the journal holds (one whose
  // answer was lost, found standing by recovery), not when it was released.
  const captureOfStay = (hold: HoldRecord, resolution: 'captured' | 'dropped') => {
    const capture = deps.captureOf(hold.transactionId);
    return { capture, stands: capture === null ? resolution === 'captured' : amountStanding(capture) > 0 };
  };
  return {
    waitFactor: deps.waitFactor,
    ...(deps.resultScreenMs !== undefined ? { resultScreenMs: deps.resultScreenMs } : {}),
    readCard: async (input, signal): Promise<CardSummary> => {
      if (!deps.takingCards())
        throw new ReaderError('READER_NOT_CONNECTED', 'the terminal is not taking cards now');
      deps.cardActivated?.();
      const read = await reader.activate({
        amountMinor: input.amountMinor,
        otherAmountMinor: 0,
        currencyNumeric: requireCurrency(input.currency).numeric,
        countryNumeric: config.terminal.countryNumeric,
        transactionType: input.transactionType,
        timeoutSeconds: deps.cardWaitSeconds(),
        signal,
      });
      return cards.hold(read).summary;
    },
    submit: (request, signal) => deps.submit(request, signal),
    dccOffer: (input, signal) => deps.dcc.offer(input, signal),
    lookupTicket: async ({ ticket }) => {
      const found = lookupTicket(ticket, config.terminal.timezone);
      if (!found.found || deps.ticketPayments === undefined) return found;
      return { ...found, ...(await deps.ticketPayments(found.ticket)) };
    },
    findTransaction: ({ transactionId }) => Promise.resolve(deps.findTransaction(transactionId)),
    openHold: (hold) => {
      // The card's holds of earlier entries are due at this one (HoldStore.open): their watch reverses them now.
      const earlier = deps.inOneCommit(() => {
        // The card's last stay outlasted its hold and its exit never charged it (the exit's read failed and the car
        // was let out, say): once this hold opens, the card's exit asks for this stay only, so the old stay's fee is
        // recorded for the operator in this very commit — once, as the old stay is the card's last no more. A sale of
        // it that stands pays it; one unresolved may, and recovery decides it.
        const left = deps.holds.outstayedLastStay(hold.fingerprint, {
          captureStands: (h, resolution) => captureOfStay(h, resolution).stands,
        });
        const due = deps.holds.open(hold);
        if (
          left !== undefined &&
          left.hold.holdId !== hold.holdId &&
          deps.stayPaid(left.hold.holdId, 0) === undefined
        )
          deps.outstayedStayLeft(left);
        return due;
      });
      const watch = deps.holdWatch();
      watch.watch(hold);
      for (const due of earlier) watch.watch(due);
      return Promise.resolve();
    },
    claimHold: ({ fingerprint, recentCaptureMs }) => {
      // The capture of the last stay, read once: whether it still pays, and what the paid exit shows and prints.
      let capture = null as OriginalTransaction | null;
      const claim = deps.holds.claimAtExit(fingerprint, {
        settling: deps.holdClosedToExit,
        recentCaptureMs,
        captureStands: (hold, resolution) => {
          const read = captureOfStay(hold, resolution);
          capture = read.capture;
          return read.stands;
        },
      });
      // A hold this exit takes, out of expiry watch.
      const taken = <T extends { hold: HoldRecord }>(c: T): T => {
        deps.holdWatch().unwatch(c.hold.holdId);
        // What the authorization holds is the journal's total, increments included (PaymentService.authorizedTotal:
        // one source, before a restart or after): the stored hold grows with an increment only when an exit gives it
        // back, so a process that died between an exit's approved increment and the end of that exit left it short —
        // the next exit would ask that increment again, and with it declined capture less than is authorized.
        // Its currency likewise: the authorization's as the journal records it (in the local terms the machines count
        // in), which the exit's follow-ons are sent in and its fee must be priced in — not the one configured since.
        // A stay paid by phone is released in full: its reversal is for that same total.
        const total = deps.payments.localAuthorizedTotal(c.hold.transactionId);
        return total !== undefined &&
          (total.minor !== c.hold.authorizedMinor || total.currency !== c.hold.currency)
          ? { ...c, hold: { ...c.hold, authorizedMinor: total.minor, currency: total.currency } }
          : c;
      };
      if (claim.kind === 'claimed') return Promise.resolve(taken(claim));
      if (claim.kind === 'paid-by-link') {
        // Paid by phone: never charged again. What the link took is the screen's amount.
        const { linkId, ...rest } = claim;
        const paid = { ...rest, amountMinor: deps.links.get(linkId)?.amountMinor ?? 0 };
        return Promise.resolve(paid.claimed ? taken(paid) : paid);
      }
      // The exit was paid: the screen shows what was captured, and the receipt is that capture's.
      if (claim.kind === 'captured' && capture !== null) return Promise.resolve({ ...claim, capture });
      // A stay that outlasted its hold is owed unless a sale of it stands (paid: shown paid again within the window,
      // as a capture is) or is unresolved (no second sale while the first may stand).
      if (claim.kind === 'outstayed') {
        const paid = deps.stayPaid(claim.hold.holdId, recentCaptureMs);
        if (paid === undefined) return Promise.resolve({ kind: 'outstayed', hold: claim.hold });
        if (paid.kind === 'unresolved')
          return Promise.resolve({ kind: 'settling', holdId: claim.hold.holdId });
        return Promise.resolve(
          paid.recent
            ? { kind: 'captured', hold: claim.hold, capturedAtMs: paid.paidAtMs }
            : { kind: 'none' },
        );
      }
      return Promise.resolve(claim);
    },
    // The entry asks what the exit would claim (HoldStore.stayAtEntry: the one rule of a card's open stay, and the
    // same `settling` as claimHold), claiming nothing: a stay being settled does not keep the card out.
    stayAtEntry: ({ fingerprint }) => {
      const stay = deps.holds.stayAtEntry(fingerprint, { settling: deps.holdClosedToExit });
      return Promise.resolve(
        stay.kind === 'open'
          ? { kind: 'open', holdId: stay.hold.holdId, enteredAtMs: stay.hold.enteredAtMs }
          : stay,
      );
    },
    entryRefused: (input) => deps.entryRefused(input),
    stayOutstayed: (input) => deps.stayOutstayed(input),
    // An approved capture or reversal has closed the hold already, in its outcome's transaction
    // (src/host/payment-router.ts): the store keeps the first resolution, and a hold no longer open is not watched.
    closeHold: ({ hold, resolution }) => {
      deps.holds.close(hold, resolution);
      if (resolution === 'returned' && deps.holds.has(hold.holdId)) deps.holdWatch().watch(hold);
    },
    releaseCard: ({ cardRef }) => {
      cards.release(cardRef);
      deps.payments.forgetCard(cardRef);
    },
    issueReceipt: (receipt) => deps.receipt(receipt),
    feeNotComputable: (input) => deps.feeNotComputable(input),
    createLink: async (input) => {
      const view = await deps.links.createForFee({
        reference: input.reference,
        amountMinor: input.amountMinor,
        currency: input.currency,
        purpose: input.purpose,
        waitMs: Math.round(input.waitMs * deps.waitFactor()),
        ...(input.holdId !== undefined ? { holdId: input.holdId } : {}),
      });
      // Paid before the create's answer came (the journal holds it paid): the customer is told so, not shown a link.
      const outcome = linkOutcome(view);
      if (outcome.kind === 'paid') return outcome;
      if (view.url === undefined)
        throw Object.assign(new Error('the payment link has no URL to show'), { code: 'LINK_UNAVAILABLE' });
      return {
        linkId: view.linkId,
        url: view.url,
        ...(view.domain !== undefined ? { domain: view.domain } : {}),
        expiresAtMs: Date.parse(view.expiresAt),
      };
    },
    // An abort only stops this wait: the desk keeps watching the link until it is paid or closed.
    awaitLink: async ({ linkId }) => linkOutcome(await deps.links.watch(linkId)),
    closeLink: async ({ linkId, reason }) => {
      const view = await deps.links.cancel(linkId, reason);
      // Still open after the cancel (the gateway has not confirmed it INACTIVE): it may be paid yet.
      if (view.state === 'creating' || view.state === 'active') return { kind: 'unconfirmed', linkId };
      return linkOutcome(view);
    },
    printLink: (input) => deps.printLink(input),
    // The desk journals the sale before AP_SALE goes out and keeps no personal data; the customer's values live only
    // in this request. The currency is the terminal's: the kiosk offers only methods in it (src/flows/settings.ts).
    startAltSale: async (input) => {
      try {
        const sale = await deps.altPayments().start(input.profile, {
          code: input.reference,
          amountMinor: input.amountMinor,
          customer: input.customer,
          flowId: `kiosk:${input.reference}`,
        });
        if (sale.state === 'PENDING' && sale.paymentUrl !== undefined)
          return { kind: 'pending', saleId: sale.id, paymentUrl: sale.paymentUrl };
        return { kind: 'failed', reason: sale.reason ?? sale.state };
      } catch (e) {
        if (e instanceof AltPaymentError) return { kind: 'failed', reason: e.code };
        throw e;
      }
    },
  };
}

/** How a link's wait ended, as the machines see it: paid, or closed for a reason. */
function linkOutcome(view: LinkView): LinkOutcome {
  if (view.state === 'paid') return { kind: 'paid', linkId: view.linkId, paymentId: view.paymentId ?? '' };
  return { kind: 'closed', linkId: view.linkId, reason: view.closeReason ?? view.state };
}
