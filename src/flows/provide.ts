import { fromPromise } from 'xstate';
import type {
  AltSaleRequest,
  AltSaleStarted,
  CardSummary,
  DccOfferInput,
  DccOfferSummary,
  EntryStay,
  FlowEffects,
  HoldClaim,
  HoldRecord,
  LinkOutcome,
  LinkPaid,
  LinkUnconfirmed,
  LinkRequest,
  LinkShown,
  OriginalTransaction,
  ReadCardInput,
  ServiceRequest,
  SubmitOutcome,
  TicketLookup,
} from './effects.js';
import { attendedMachine } from './attended.js';
import type { FlowSettings } from './settings.js';
import { holdExpiryMachine } from './hold.js';
import { kioskMachine } from './kiosk.js';
import { meterMachine } from './meter.js';
import { operatorMachine } from './operator.js';
import { payByLinkMachine } from './pay-by-link.js';
import { tapAndGoMachine } from './tap-and-go.js';
import { transactionMachine } from './transaction.js';

/**
 * Plugs a {@link FlowEffects} implementation into the machines with `machine.provide(...)` (STYLE.md §7). Provided
 * implementations do not reach child machines by themselves, so each model also gets a transaction actor provided
 * with the same effects. Usage in the host:
 *
 *     const machine = provideFlowEffects.meter(effects);
 *     const actor = createActor(machine, { input: { settings, clock: { now: Date.now } } });
 */

function readCard(effects: FlowEffects) {
  return fromPromise<CardSummary, ReadCardInput>(({ input, signal }) => effects.readCard(input, signal));
}

function submit(effects: FlowEffects) {
  return fromPromise<SubmitOutcome, ServiceRequest>(({ input, signal }) => effects.submit(input, signal));
}

function dccOffer(effects: FlowEffects) {
  return fromPromise<DccOfferSummary | null, DccOfferInput>(({ input, signal }) =>
    effects.dccOffer(input, signal),
  );
}

function transaction(effects: FlowEffects) {
  return transactionMachine.provide({
    actors: { readCard: readCard(effects), submit: submit(effects), dccOffer: dccOffer(effects) },
    actions: { releaseCard: (_: unknown, params: { cardRef: string }) => effects.releaseCard(params) },
  });
}

/** Pay by phone (src/flows/pay-by-link.ts) with the host's payment links. */
function payByLink(effects: FlowEffects) {
  return payByLinkMachine.provide({
    actions: {
      printLink: (_: unknown, link: Parameters<FlowEffects['printLink']>[0]) => effects.printLink(link),
    },
    actors: {
      createLink: fromPromise<LinkShown | LinkPaid, LinkRequest>(({ input, signal }) =>
        effects.createLink(input, signal),
      ),
      awaitLink: fromPromise<LinkOutcome, { linkId: string }>(({ input, signal }) =>
        effects.awaitLink(input, signal),
      ),
      closeLink: fromPromise<
        LinkOutcome | LinkUnconfirmed,
        { linkId: string; reason: 'cancelled' | 'timeout' }
      >(({ input, signal }) => effects.closeLink(input, signal)),
    },
    // The pay-later slip's QR code and address (read out in accessibility mode) stay as long as a result screen.
    delays: { payLaterScreen: ({ context }) => longer(effects, context.showMs) },
  });
}

/**
 * The result screens' delays (and the kiosk's pending sale's), as each machine defines them, times the customer's
 * {@link FlowEffects.waitFactor}: a customer in accessibility mode is given longer to read and hear them.
 */
function longer(effects: FlowEffects, ms: number): number {
  return ms * Math.max(1, effects.waitFactor?.() ?? 1);
}

/**
 * The result screens' delay, the one rule of all four models: a customer in accessibility mode hears the result and
 * the receipt read out to the end before the screen goes back to idle (which ends the session, and its speech), so the
 * host may hold the screen while it is said ({@link FlowEffects.resultScreenMs}). The outcome is journaled before a
 * result screen comes up: its time is the customer's only, never a payment's.
 */
function resultDelays(effects: FlowEffects) {
  return {
    resultScreen: ({ context }: { context: { settings: FlowSettings } }) => {
      const ms = longer(effects, context.settings.timing.resultScreenMs);
      return effects.resultScreenMs?.(ms) ?? ms;
    },
  };
}

function cardActions(effects: FlowEffects) {
  return {
    issueReceipt: (_: unknown, receipt: Parameters<FlowEffects['issueReceipt']>[0]) =>
      effects.issueReceipt(receipt),
    releaseCard: (_: unknown, params: { cardRef: string }) => effects.releaseCard(params),
  };
}

export const provideFlowEffects = {
  transaction,
  payByLink,
  meter: (effects: FlowEffects) =>
    meterMachine.provide({
      actors: { transaction: transaction(effects), payByLink: payByLink(effects) },
      actions: cardActions(effects),
      delays: resultDelays(effects),
    }),
  kiosk: (effects: FlowEffects) =>
    kioskMachine.provide({
      actors: {
        transaction: transaction(effects),
        payByLink: payByLink(effects),
        lookupTicket: fromPromise<TicketLookup, { ticket: string }>(({ input, signal }) =>
          effects.lookupTicket(input, signal),
        ),
        startAltSale: fromPromise<AltSaleStarted, AltSaleRequest>(({ input, signal }) =>
          effects.startAltSale(input, signal),
        ),
      },
      actions: cardActions(effects),
      delays: {
        ...resultDelays(effects),
        altPendingScreen: ({ context }) => longer(effects, context.settings.timing.resultScreenMs * 12),
      },
    }),
  attended: (effects: FlowEffects) =>
    attendedMachine.provide({
      actors: { transaction: transaction(effects) },
      actions: cardActions(effects),
      delays: resultDelays(effects),
    }),
  tapAndGo: (effects: FlowEffects) =>
    tapAndGoMachine.provide({
      actors: {
        transaction: transaction(effects),
        payByLink: payByLink(effects),
        readCard: readCard(effects),
        openHold: fromPromise<void, HoldRecord>(({ input, signal }) => effects.openHold(input, signal)),
        claimHold: fromPromise<HoldClaim, Parameters<FlowEffects['claimHold']>[0]>(({ input, signal }) =>
          effects.claimHold(input, signal),
        ),
        stayAtEntry: fromPromise<EntryStay, Parameters<FlowEffects['stayAtEntry']>[0]>(({ input, signal }) =>
          effects.stayAtEntry(input, signal),
        ),
      },
      actions: {
        ...cardActions(effects),
        closeHold: (_: unknown, params: Parameters<FlowEffects['closeHold']>[0]) => effects.closeHold(params),
        feeNotComputable: (_: unknown, params: Parameters<FlowEffects['feeNotComputable']>[0]) =>
          effects.feeNotComputable(params),
        entryRefused: (_: unknown, params: Parameters<FlowEffects['entryRefused']>[0]) =>
          effects.entryRefused(params),
        stayOutstayed: (_: unknown, params: Parameters<FlowEffects['stayOutstayed']>[0]) =>
          effects.stayOutstayed(params),
      },
      delays: resultDelays(effects),
    }),
  operator: (effects: FlowEffects) =>
    operatorMachine.provide({
      actors: {
        transaction: transaction(effects),
        findTransaction: fromPromise<OriginalTransaction | null, { transactionId: string }>(
          ({ input, signal }) => effects.findTransaction(input, signal),
        ),
      },
      actions: { issueReceipt: cardActions(effects).issueReceipt },
    }),
  holdExpiry: (effects: FlowEffects) =>
    holdExpiryMachine.provide({ actors: { transaction: transaction(effects) } }),
};
