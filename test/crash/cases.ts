import { planName, systematicPlans, type CrashPlan, type Flow, type IterationResult } from './harness.js';

/** What the gateway holds after recovery, per plan: the money picture a correct terminal leaves. */
export interface Expected {
  sales: number;
  captures: number;
  refunds: number;
  /** Payment links paid (the tap-and-go exit paid by phone). */
  linkPayments: number;
  voided: number;
  /** Authorizations released in full (reversal, timeout reversal, or captured less and the rest released). */
  released: number;
  chargedMinor: number;
  /**
   * Authorizations the terminal keeps after the crash: reversed when the capture window ends (a meter's), or when a
   * tap-and-go stay's maximum ends.
   */
  openHolds: number;
}

const NOTHING: Expected = {
  sales: 0,
  captures: 0,
  refunds: 0,
  linkPayments: 0,
  voided: 0,
  released: 0,
  chargedMinor: 0,
  openHolds: 0,
};
const e = (o: Partial<Expected>): Expected => ({ ...NOTHING, ...o });

/*
 * Why each picture is right (gateway.md §2 and §7, DESIGN.md money safety rules):
 * - killed at journal.begin / journal.sent: nothing left the terminal; the timeout reversal/void finds nothing.
 * - killed at gateway.answered: the gateway acted but the answer was never journaled: a timeout void takes a sale,
 *   capture or refund back (voided), a timeout reversal releases an authorization.
 * - killed at journal.outcome: the outcome was journaled; it stands.
 * - `→ recovery.sent#N`: the N-th recovery request of the restart is killed too; the next start sends it again
 *   (timeout requests are idempotent): the picture is that of the plan without it.
 * - operator void (gateway.md §7): a voided sale or capture moves nothing; voiding a capture leaves the hold in place,
 *   so the terminal reverses the authorization after it; an unknown void is completed by a timeout void of its
 *   target (src/journal/services.ts `void-referenced`).
 * The kiosk fee of the drivers is 6.00, the meter captures 1.50 (25 minutes), with EXTEND 4.50 (70 minutes).
 * The gate holds 5.98 at the entry; its exit by card costs 7.50 (an increment of 1.52, then the capture), its exit by
 * phone 3.00 (a payment link); after each restart the card taps out again and pays what it is offered.
 */
export const EXPECTED: Record<string, Expected> = {
  'sale uninterrupted': e({ sales: 1, chargedMinor: 600 }),
  'sale journal.begin': NOTHING,
  'sale journal.sent': NOTHING,
  'sale gateway.answered': e({ voided: 1 }),
  'sale journal.outcome': e({ sales: 1, chargedMinor: 600 }),
  'sale gateway.answered → recovery.sent#1': e({ voided: 1 }),

  'refund uninterrupted': e({ sales: 1, refunds: 1 }),
  'refund journal.begin#1': NOTHING,
  'refund journal.sent#1': NOTHING,
  'refund gateway.answered#1': e({ voided: 1 }),
  'refund journal.outcome#1': e({ sales: 1, chargedMinor: 600 }),
  // The refund never went out: the customer is still charged and the operator sees no approved refund.
  'refund journal.begin#2': e({ sales: 1, chargedMinor: 600 }),
  'refund journal.sent#2': e({ sales: 1, chargedMinor: 600 }),
  // The refund's answer was lost: timeout-voided, the sale stands; recovery lists it for the operator to refund again.
  'refund gateway.answered#2': e({ sales: 1, voided: 1, chargedMinor: 600 }),
  'refund journal.outcome#2': e({ sales: 1, refunds: 1 }),
  'refund gateway.answered#1 → recovery.sent#1': e({ voided: 1 }),
  'refund gateway.answered#2 → recovery.sent#1': e({ sales: 1, voided: 1, chargedMinor: 600 }),

  // The operator's void of the sale: the customer ends with nothing charged.
  'void uninterrupted': e({ voided: 1 }),
  'void journal.begin#1': NOTHING,
  'void journal.sent#1': NOTHING,
  'void gateway.answered#1': e({ voided: 1 }),
  // The sale journaled, the operator never got to void it: it stands.
  'void journal.outcome#1': e({ sales: 1, chargedMinor: 600 }),
  // The void was journaled, not yet marked sent. A live request's mark is not synced on its own (one fsync less per
  // payment), so recovery takes a pending entry as possibly sent: the void the operator asked for is completed with a
  // timeout void of the sale (the operator was told nothing; the customer is not charged).
  'void journal.begin#2': e({ voided: 1 }),
  // The void may have gone out: recovery completes it with a timeout void of the sale.
  'void journal.sent#2': e({ voided: 1 }),
  'void gateway.answered#2': e({ voided: 1 }),
  'void journal.outcome#2': e({ voided: 1 }),
  'void gateway.answered#1 → recovery.sent#1': e({ voided: 1 }),
  'void gateway.answered#2 → recovery.sent#1': e({ voided: 1 }),

  'meter uninterrupted': e({ captures: 1, released: 1, chargedMinor: 150 }),
  'meter journal.begin#1': NOTHING,
  'meter journal.sent#1': NOTHING,
  'meter gateway.answered#1': e({ released: 1 }),
  // Approved and journaled, the session lost with the process: held until the capture window ends.
  'meter journal.outcome#1': e({ openHolds: 1 }),
  'meter journal.begin#2': e({ captures: 1, released: 1, chargedMinor: 150 }),
  'meter journal.sent#2': e({ captures: 1, released: 1, chargedMinor: 150 }),
  'meter gateway.answered#2': e({ captures: 1, voided: 1, released: 1, chargedMinor: 150 }),
  'meter journal.outcome#2': e({ captures: 1, released: 1, chargedMinor: 150 }),
  'meter gateway.answered#1 → recovery.sent#1': e({ released: 1 }),
  'meter gateway.answered#2 → recovery.sent#1': e({ captures: 1, voided: 1, released: 1, chargedMinor: 150 }),

  'meter-extend uninterrupted': e({ captures: 1, released: 1, chargedMinor: 450 }),
  'meter-extend journal.begin#1': NOTHING,
  'meter-extend journal.sent#1': NOTHING,
  'meter-extend gateway.answered#1': e({ released: 1 }),
  'meter-extend journal.outcome#1': e({ openHolds: 1 }),
  // An increment whose outcome is unknown is timeout-reversed by its own transactionId (gateway.md §2,
  // src/vocabulary/services.ts): the increment alone is taken back; the authorization stands, its session gone with
  // the process, and is reversed when its capture window ends.
  'meter-extend journal.begin#2': e({ openHolds: 1 }),
  'meter-extend journal.sent#2': e({ openHolds: 1 }),
  'meter-extend gateway.answered#2': e({ openHolds: 1 }),
  'meter-extend journal.outcome#2': e({ openHolds: 1 }),
  'meter-extend journal.begin#3': e({ captures: 1, released: 1, chargedMinor: 450 }),
  'meter-extend journal.sent#3': e({ captures: 1, released: 1, chargedMinor: 450 }),
  'meter-extend gateway.answered#3': e({ captures: 1, voided: 1, released: 1, chargedMinor: 450 }),
  'meter-extend journal.outcome#3': e({ captures: 1, released: 1, chargedMinor: 450 }),
  'meter-extend gateway.answered#1 → recovery.sent#1': e({ released: 1 }),
  'meter-extend gateway.answered#2 → recovery.sent#1': e({ openHolds: 1 }),
  'meter-extend gateway.answered#3 → recovery.sent#1': e({
    captures: 1,
    voided: 1,
    released: 1,
    chargedMinor: 450,
  }),

  // The operator voids the capture (1.50 of a 3.00 hold): the capture moves nothing and the hold is reversed.
  'meter-void uninterrupted': e({ voided: 1, released: 1 }),
  'meter-void journal.begin#1': NOTHING,
  'meter-void journal.sent#1': NOTHING,
  'meter-void gateway.answered#1': e({ released: 1 }),
  'meter-void journal.outcome#1': e({ openHolds: 1 }),
  'meter-void journal.begin#2': e({ captures: 1, released: 1, chargedMinor: 150 }),
  'meter-void journal.sent#2': e({ captures: 1, released: 1, chargedMinor: 150 }),
  'meter-void gateway.answered#2': e({ captures: 1, voided: 1, released: 1, chargedMinor: 150 }),
  // The capture journaled, the operator never got to void it: it stands, the rest of the hold released by the gateway.
  'meter-void journal.outcome#2': e({ captures: 1, released: 1, chargedMinor: 150 }),
  // The void was journaled, not yet marked sent: recovery takes a pending live entry as possibly sent (its mark is
  // not synced on its own) and completes the void the operator asked for; the hold it leaves is reversed too.
  'meter-void journal.begin#3': e({ voided: 1, released: 1 }),
  // The void may have gone out: recovery voids the capture, and the hold it leaves in place must be reversed too.
  'meter-void journal.sent#3': e({ voided: 1, released: 1 }),
  'meter-void gateway.answered#3': e({ voided: 1, released: 1 }),
  // The void journaled, the reversal of the hold not begun: the restart must still release the hold.
  'meter-void journal.outcome#3': e({ voided: 1, released: 1 }),
  'meter-void journal.begin#4': e({ voided: 1, released: 1 }),
  // The reversal in doubt: its recovery releases the hold (a timeout reversal of the authorization).
  'meter-void journal.sent#4': e({ voided: 1, released: 1 }),
  'meter-void gateway.answered#4': e({ voided: 1, released: 1 }),
  'meter-void journal.outcome#4': e({ voided: 1, released: 1 }),
  'meter-void gateway.answered#1 → recovery.sent#1': e({ released: 1 }),
  'meter-void gateway.answered#2 → recovery.sent#1': e({
    captures: 1,
    voided: 1,
    released: 1,
    chargedMinor: 150,
  }),
  'meter-void gateway.answered#3 → recovery.sent#1': e({ voided: 1, released: 1 }),
  'meter-void gateway.answered#4 → recovery.sent#1': e({ voided: 1, released: 1 }),

  // Two sales of 6.00 stored while the gateway was unreachable, forwarded at the next start.
  'offline uninterrupted': e({ sales: 2, chargedMinor: 1200 }),
  // Killed before the second sale: one payment was stored, the customer of the second never paid.
  'offline offline.stored#1': e({ sales: 1, chargedMinor: 600 }),
  'offline offline.stored#2': e({ sales: 2, chargedMinor: 1200 }),
  // Forwarded one at a time: the forward whose answer was lost is voided, never resent; the rest go out once.
  'offline uninterrupted → offline.forwarded#1': e({ sales: 1, voided: 1, chargedMinor: 600 }),
  'offline uninterrupted → offline.forwarded#2': e({ sales: 1, voided: 1, chargedMinor: 600 }),
  'queued uninterrupted': e({ sales: 3, chargedMinor: 3150 }),
  'queued uninterrupted → offline.forwarded#1': e({ sales: 2, voided: 1, chargedMinor: 2150 }),
  'queued uninterrupted → offline.forwarded#2': e({ sales: 2, voided: 1, chargedMinor: 2100 }),
  'queued uninterrupted → offline.forwarded#3': e({ sales: 2, voided: 1, chargedMinor: 2050 }),
  // The next start voids the first forward, forwards the second and is killed with its answer in hand: voided too.
  'queued uninterrupted → offline.forwarded#1 → offline.forwarded#1': e({
    sales: 1,
    voided: 2,
    chargedMinor: 1100,
  }),
  // The timeout void of the forward in doubt is killed too; the next start sends it again.
  'queued uninterrupted → offline.forwarded#1 → recovery.sent#1': e({
    sales: 2,
    voided: 1,
    chargedMinor: 2150,
  }),
  'queued uninterrupted → offline.forwarded#2 → recovery.sent#1': e({
    sales: 2,
    voided: 1,
    chargedMinor: 2100,
  }),
  'queued uninterrupted → offline.forwarded#3 → recovery.sent#1': e({
    sales: 2,
    voided: 1,
    chargedMinor: 2050,
  }),

  // The capture takes the whole authorization (hold and increment): released with it. The card tapped again after
  // the restart is shown its exit as paid (ALREADY_PAID), charged nothing.
  'gate uninterrupted': e({ captures: 1, released: 1, chargedMinor: 750 }),
  // The entry's verification holds nothing: killed anywhere in it, nothing moved; the card tapped at the exit has no
  // entry (declined, nothing charged).
  'gate journal.begin#1': NOTHING,
  'gate journal.sent#1': NOTHING,
  'gate gateway.answered#1': NOTHING,
  'gate journal.outcome#1': NOTHING,
  'gate journal.begin#2': NOTHING,
  'gate journal.sent#2': NOTHING,
  // The hold's answer lost: timeout-reversed; the car never entered.
  'gate gateway.answered#2': e({ released: 1 }),
  // The hold approved and journaled, the process gone before it was stored as the car's stay (the gate never opened):
  // no exit or expiry would ever settle it, so the restart reverses it before the first card.
  'gate journal.outcome#2': e({ released: 1 }),
  // Killed at the exit's increment: the hold stays the car's (an increment in doubt is timeout-reversed alone), and
  // the card tapped again pays the fee once (the increment asked again on the authorized total, then the capture).
  'gate journal.begin#3': e({ captures: 1, released: 1, chargedMinor: 750 }),
  'gate journal.sent#3': e({ captures: 1, released: 1, chargedMinor: 750 }),
  'gate gateway.answered#3': e({ captures: 1, released: 1, chargedMinor: 750 }),
  'gate journal.outcome#3': e({ captures: 1, released: 1, chargedMinor: 750 }),
  // Killed at the capture before it left: the card tapped again is captured once.
  'gate journal.begin#4': e({ captures: 1, released: 1, chargedMinor: 750 }),
  'gate journal.sent#4': e({ captures: 1, released: 1, chargedMinor: 750 }),
  // The capture's answer lost: timeout-voided at the restart (the hold left in place), then captured once when the
  // card taps again.
  'gate gateway.answered#4': e({ captures: 1, voided: 1, released: 1, chargedMinor: 750 }),
  // The capture journaled (the hold closed with it): the card tapped again is shown the exit as paid.
  'gate journal.outcome#4': e({ captures: 1, released: 1, chargedMinor: 750 }),
  'gate gateway.answered#2 → recovery.sent#1': e({ released: 1 }),
  'gate gateway.answered#3 → recovery.sent#1': e({ captures: 1, released: 1, chargedMinor: 750 }),
  'gate gateway.answered#4 → recovery.sent#1': e({ captures: 1, voided: 1, released: 1, chargedMinor: 750 }),
  // The restart's own capture (the card tapped again) loses its answer too: voided at the next start, which captures
  // the card tapped once more.
  'gate gateway.answered#4 → gateway.answered#1': e({
    captures: 1,
    voided: 2,
    released: 1,
    chargedMinor: 750,
  }),

  // The link paid by phone, the hold reversed in full; the card tapped again opens as paid (PAID_BY_LINK), nothing sent.
  'gate-phone uninterrupted': e({ linkPayments: 1, released: 1, chargedMinor: 300 }),
  'gate-phone journal.begin#1': NOTHING,
  'gate-phone journal.sent#1': NOTHING,
  'gate-phone gateway.answered#1': NOTHING,
  'gate-phone journal.outcome#1': NOTHING,
  'gate-phone journal.begin#2': NOTHING,
  'gate-phone journal.sent#2': NOTHING,
  'gate-phone gateway.answered#2': e({ released: 1 }),
  'gate-phone journal.outcome#2': e({ released: 1 }),
  // Killed at the release of the paid stay's hold: the stay is paid (its link's payment journaled on the hold), so the
  // hold is released — by the restart's expiry watch (due from the payment on), by recovery (a reversal in doubt), or
  // by the exit of the card tapped again — and never captured.
  'gate-phone journal.begin#3': e({ linkPayments: 1, released: 1, chargedMinor: 300 }),
  'gate-phone journal.sent#3': e({ linkPayments: 1, released: 1, chargedMinor: 300 }),
  'gate-phone gateway.answered#3': e({ linkPayments: 1, released: 1, chargedMinor: 300 }),
  'gate-phone journal.outcome#3': e({ linkPayments: 1, released: 1, chargedMinor: 300 }),
  'gate-phone gateway.answered#2 → recovery.sent#1': e({ released: 1 }),
  'gate-phone gateway.answered#3 → recovery.sent#1': e({ linkPayments: 1, released: 1, chargedMinor: 300 }),
  // The link's payment journaled, nothing released yet, the customer told nothing: one payment by link, the hold
  // released, no capture — the card tapped again opens as paid.
  'gate-phone link.paid': e({ linkPayments: 1, released: 1, chargedMinor: 300 }),
  // And the restart that releases that hold killed with its reversal's answer in hand: the next start's recovery
  // completes the release.
  'gate-phone link.paid → gateway.answered#1': e({ linkPayments: 1, released: 1, chargedMinor: 300 }),
  // Paid by phone at the gateway, the terminal gone before it read the notification (none comes again): the restart
  // closes the link shown to the customer with its stay's payment by phone in doubt (HoldStore.phonePaymentInDoubt),
  // so the card tapped again is never charged — the exit sends it to the operator — and the hold stays open, under
  // its expiry watch, which releases it at the maximum stay.
  'gate-phone link.notified': e({ linkPayments: 1, openHolds: 1, chargedMinor: 300 }),
};

/**
 * Plans whose correct outcome the terminal does not reach today, with the reason (see the final report of the crash
 * suite). Their tests are marked as failing; remove an entry when the bug is fixed.
 */
export const KNOWN_BUGS: Record<string, string> = {};

/** Whether a random-moment kill or plan can meet a known bug (the flow reaches the step concerned). */
export function knownBugOf(plan: CrashPlan): string | undefined {
  return KNOWN_BUGS[planName(plan)];
}

/** The invariants every iteration must meet, as one comparable object. */
export function verdict(r: IterationResult): object {
  return {
    lost: r.lost,
    duplicated: r.duplicated,
    unresolved: r.unresolved,
    problems: r.problems,
    cardData: r.cardData,
  };
}

export const CLEAN = { lost: 0, duplicated: 0, unresolved: 0, problems: [], cardData: [] };

/** The money picture of a result, comparable with {@link Expected}. */
export function picture(r: IterationResult): Expected {
  const m = r.money;
  return {
    sales: m.sales,
    captures: m.captures,
    refunds: m.refunds,
    linkPayments: m.linkPayments,
    voided: m.voided,
    released: m.released,
    chargedMinor: m.chargedMinor,
    openHolds: r.openHolds.length,
  };
}

/** The expected picture of a plan; a kill at a later recovery request (`recovery.sent#N`) leaves the same one. */
export function expectedOf(plan: CrashPlan): Expected | undefined {
  return EXPECTED[planName(plan)];
}

/** The systematic plans of some flows, each with its expected picture and known bug. */
export function cases(
  flows: Flow[],
  which: (plan: CrashPlan) => boolean = () => true,
): { name: string; plan: CrashPlan; expected: Expected; bug?: string }[] {
  return flows.flatMap((f) =>
    systematicPlans(f)
      .filter(which)
      .map((plan) => {
        const name = planName(plan);
        const expected = EXPECTED[name];
        if (!expected) throw new Error(`no expected picture for ${name}`);
        const bug = KNOWN_BUGS[name];
        return { name, plan, expected, ...(bug ? { bug } : {}) };
      }),
  );
}
