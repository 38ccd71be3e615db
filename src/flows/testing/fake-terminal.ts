import { SimulatedClock, type AnyMachineSnapshot } from 'xstate';
import { describeView, type FlowView } from '../view.js';
import type {
  AltSaleRequest,
  AltSaleStarted,
  CardSummary,
  EntryStay,
  DccOfferInput,
  DccOfferSummary,
  FlowEffects,
  HoldClaim,
  HoldRecord,
  HoldResolution,
  LinkOutcome,
  LinkPaid,
  LinkUnconfirmed,
  LinkRequest,
  LinkShown,
  OriginalTransaction,
  ReadCardInput,
  ReceiptData,
  ServiceName,
  ServiceRequest,
  SubmitKind,
  SubmitOutcome,
  TicketLookup,
  TicketPaid,
} from '../effects.js';
import type { FlowSettings } from '../settings.js';
import { tariffSchema } from '../../config/index.js';

/**
 * A fake of every effect for the machines' tests: a simulated clock, scripted card reads and gateway outcomes, and a
 * tiny ledger that applies each request the way the gateway's money rules say (capture ≤ authorized, reversal =
 * authorized, refunds ≤ captured, timeout reversal/void by transactionId) and records every rule a request broke.
 * An `unknown` outcome is applied (worst case: the request reached the gateway) so that the machine must resolve it.
 */

interface Auth {
  transactionId: string;
  authorizedMinor: number;
  capturedMinor: number | null;
  reversed: boolean;
}
interface Settled {
  service: 'capture' | 'sale' | 'refund-capture' | 'refund-payment' | 'credit';
  transactionId: string;
  gatewayId: string;
  amountMinor: number;
  refundedMinor: number;
  voided: boolean;
  authGatewayId?: string;
}

export interface SentRequest extends ServiceRequest {
  transactionId: string;
  gatewayId: string;
  kind: SubmitKind;
  atMs: number;
}

export function testSettings(overrides: Partial<FlowSettings> = {}): FlowSettings {
  return {
    currency: 'GBP',
    catLevel: 2,
    tariff: tariffSchema.parse({
      periods: [{ minutes: 1_440, priceMinor: 150, unitMinutes: 30 }],
      graceMinutes: 10,
      maxStayMinutes: 240,
      dailyCapMinor: 2_000,
      lostTicketFeeMinor: 3_000,
      tapAndGoHoldMinor: 2_000,
    }),
    preauthComments: 'Parking Auth',
    allowIncremental: true,
    incrementalCardTypes: ['001', '002'],
    captureWindowMs: 24 * 3_600_000,
    tapAndGoMaxStayMs: 24 * 3_600_000,
    tapAndGoHoldMinor: 2_000,
    tapAndGoOneStayPerCard: true,
    dcc: { enabled: false, processorFamily: 'A' },
    timing: {
      readTimeoutMs: 65_000,
      submitTimeoutMs: 100_000,
      timeoutReversalDelayMs: 60_000,
      resolutionRetryMs: 5_000,
      maxResolutionAttempts: 3,
      resultScreenMs: 10_000,
      dccOfferMarginMs: 15_000,
    },
    ...overrides,
  };
}

function abortable<T>(signal: AbortSignal): Promise<T> {
  return new Promise<T>((_, reject) => {
    signal.addEventListener('abort', () =>
      reject(Object.assign(new Error('aborted'), { code: 'READER_CANCELLED' })),
    );
  });
}

export class FakeTerminal implements FlowEffects {
  readonly clock = new SimulatedClock();
  readonly sent: SentRequest[] = [];
  readonly receipts: ReceiptData[] = [];
  readonly issuedCards: string[] = [];
  readonly released = new Set<string>();
  readonly holds = new Map<string, HoldRecord>();
  readonly closedHolds: { holdId: string; resolution: HoldResolution }[] = [];
  readonly violations: string[] = [];
  readonly auths = new Map<string, Auth>();
  readonly settled = new Map<string, Settled>();
  /** Per service, the outcomes of the next requests (default approved). */
  readonly outcomes: Partial<Record<ServiceName, SubmitKind[]>> = {};
  /** Outcomes of the next requests whatever their service (before `outcomes`). */
  readonly nextKinds: SubmitKind[] = [];
  /** Per service, approve for this amount instead of the one requested (a partial approval). */
  readonly partialMinor: Partial<Record<ServiceName, number>> = {};
  /**
   * Next card reads: a card (default), 'chip-swiped' (`card` read by its stripe although it has a chip: a fallback),
   * 'chip-unreadable' (a chip read that failed technically: CARD_ERROR saying `chipUnreadable`, as the reader's error
   * 24 does on the contact chip), 'tap-failed' (the same error 24 during a tap: CARD_ERROR saying `tapFailed`), an
   * error code to reject with (CARD_ERROR: a chip read and failed processing), or 'hang' to wait for the abort.
   */
  readonly reads: string[] = [];
  submitHangs = false;
  card: Omit<CardSummary, 'cardRef'> = {
    entryMode: 'contact',
    cardType: '001',
    maskedPan: '411111******1111',
    fingerprint: 'fp-1',
    fallback: false,
    chip: true,
  };
  readonly tickets = new Map<string, number>();
  /** What stands paid of a ticket (the host reads it from the journal database). */
  readonly paidTickets = new Map<string, TicketPaid>();
  /** Tickets with a payment whose outcome is not known yet (`TicketLookup.paymentUnresolved`). */
  readonly unresolvedTickets = new Set<string>();
  private seq = 0;

  constructor(startMs = Date.UTC(2025, 0, 6, 8, 0, 0)) {
    this.clock.set(startMs);
  }

  script(service: ServiceName, ...kinds: SubmitKind[]): this {
    (this.outcomes[service] ??= []).push(...kinds);
    return this;
  }

  comments(): string[] {
    return this.sent.map((r) => r.comments);
  }

  readCard(_input: ReadCardInput, signal: AbortSignal): Promise<CardSummary> {
    const next = this.reads.shift() ?? 'card';
    if (next === 'hang') return abortable(signal);
    if (next === 'chip-unreadable')
      return Promise.reject(
        Object.assign(new Error('card communication error'), {
          code: 'CARD_ERROR',
          detail: { activateErrorCode: 0x24, chipUnreadable: true },
        }),
      );
    if (next === 'tap-failed')
      return Promise.reject(
        Object.assign(new Error('card communication error'), {
          code: 'CARD_ERROR',
          detail: { activateErrorCode: 0x24, tapFailed: true },
        }),
      );
    if (next !== 'card' && next !== 'chip-swiped')
      return Promise.reject(Object.assign(new Error(next), { code: next }));
    this.seq += 1;
    const cardRef = `card-${this.seq}`;
    this.issuedCards.push(cardRef);
    const swiped = { entryMode: 'swiped' as const, fallback: true, chip: false };
    return Promise.resolve({ ...this.card, ...(next === 'chip-swiped' ? swiped : {}), cardRef });
  }

  /**
   * The next DCC offers: an offer (for whatever amount is asked: the local side is filled in), null (no offer),
   * 'fail' (the lookup rejects) or 'hang' (wait for the abort). Default: no offer.
   */
  readonly offers: (DccOfferSummary | null | 'fail' | 'hang')[] = [];
  readonly offerRequests: DccOfferInput[] = [];

  dccOffer(input: DccOfferInput, signal: AbortSignal): Promise<DccOfferSummary | null> {
    this.offerRequests.push(input);
    const next = this.offers.shift() ?? null;
    if (next === 'hang') return abortable(signal);
    if (next === 'fail')
      return Promise.reject(Object.assign(new Error('lookup failed'), { code: 'GW_SERVER' }));
    if (next === null) return Promise.resolve(null);
    return Promise.resolve({ ...next, localAmountMinor: input.amountMinor, localCurrency: input.currency });
  }

  /** While set, every submit waits for it before it answers (to act while a request is out). */
  submitGate: Promise<void> | undefined;

  async submit(request: ServiceRequest, signal: AbortSignal): Promise<SubmitOutcome> {
    if (this.submitHangs) return abortable(signal);
    if (this.submitGate !== undefined) await this.submitGate;
    return this.answer(request);
  }

  private answer(request: ServiceRequest): Promise<SubmitOutcome> {
    this.seq += 1;
    const transactionId = `T${this.seq}`;
    const gatewayId = `G${this.seq}`;
    let kind: SubmitKind = this.nextKinds.shift() ?? this.outcomes[request.service]?.shift() ?? 'approved';
    let authorizedMinor: number | undefined;
    let partial = false;
    if (kind === 'approved' || kind === 'unknown') {
      const applied = this.apply(request, transactionId, gatewayId);
      if (typeof applied === 'string') {
        this.violations.push(`${request.service}: ${applied}`);
        kind = 'rejected';
      } else {
        authorizedMinor = applied.authorizedMinor;
        partial = applied.partial;
      }
    }
    this.sent.push({ ...request, transactionId, gatewayId, kind, atMs: this.clock.now() });
    const outcome: SubmitOutcome = { kind, transactionId };
    if (kind === 'approved' || kind === 'declined') outcome.gatewayId = gatewayId;
    if (kind === 'approved' && authorizedMinor !== undefined) outcome.authorizedMinor = authorizedMinor;
    if (kind === 'approved' && partial) outcome.partial = true;
    if (kind === 'declined') outcome.reason = 'GENERAL_DECLINE';
    if (kind === 'rejected') outcome.reason = 'INVALID_DATA';
    return Promise.resolve(outcome);
  }

  /** Applies a request to the ledger; a string names the money rule it broke. */
  private apply(
    r: ServiceRequest,
    transactionId: string,
    gatewayId: string,
  ): string | { authorizedMinor?: number; partial: boolean } {
    const byTxn = (id: string | undefined) =>
      [...this.auths.entries()].find(([, a]) => a.transactionId === id) ??
      [...this.settled.entries()].find(([, s]) => s.transactionId === id);
    switch (r.service) {
      case 'avr':
      case 'preauth': {
        if (r.service === 'avr' && r.amountMinor !== 0) return 'AVR with an amount';
        if (r.cardRef === undefined) return 'no card';
        const amount = this.partialMinor[r.service] ?? r.amountMinor;
        this.auths.set(gatewayId, {
          transactionId,
          authorizedMinor: amount,
          capturedMinor: null,
          reversed: false,
        });
        return { authorizedMinor: amount, partial: amount < r.amountMinor };
      }
      case 'incremental': {
        const auth = this.auths.get(r.original?.gatewayId ?? '');
        if (auth === undefined || auth.reversed || auth.capturedMinor !== null)
          return 'incremental on no open auth';
        auth.authorizedMinor += r.amountMinor;
        // Keep the increment findable by its own transactionId for a timeout reversal of it.
        this.auths.set(gatewayId, {
          transactionId,
          authorizedMinor: 0,
          capturedMinor: null,
          reversed: true,
        });
        this.increments.set(transactionId, {
          parent: r.original?.gatewayId ?? '',
          amountMinor: r.amountMinor,
        });
        return { authorizedMinor: auth.authorizedMinor, partial: false };
      }
      case 'reversal': {
        const auth = this.auths.get(r.original?.gatewayId ?? '');
        if (auth === undefined) return 'reversal of no auth';
        if (auth.reversed || auth.capturedMinor !== null) return 'reversal of a closed auth';
        if (r.amountMinor !== auth.authorizedMinor)
          return `reversal ${r.amountMinor} != authorized ${auth.authorizedMinor}`;
        auth.reversed = true;
        return { authorizedMinor: r.amountMinor, partial: false };
      }
      case 'capture': {
        const authGatewayId = r.original?.gatewayId ?? '';
        const auth = this.auths.get(authGatewayId);
        if (auth === undefined || auth.reversed || auth.capturedMinor !== null)
          return 'capture of no open auth';
        if (r.amountMinor > auth.authorizedMinor) return 'capture above authorized';
        if (r.amountMinor <= 0) return 'capture of nothing';
        // A gateway may capture less than it was asked (`partialMinor.capture`); what it did not capture of the
        // authorization it reverses itself (spec 001: a capture below the authorization).
        const captured = Math.min(this.partialMinor.capture ?? r.amountMinor, r.amountMinor);
        auth.capturedMinor = captured;
        this.settled.set(gatewayId, {
          service: 'capture',
          transactionId,
          gatewayId,
          amountMinor: captured,
          refundedMinor: 0,
          voided: false,
          authGatewayId,
        });
        return { authorizedMinor: captured, partial: false };
      }
      case 'sale':
      case 'credit': {
        if (r.cardRef === undefined) return 'no card';
        const amount = this.partialMinor[r.service] ?? r.amountMinor;
        this.settled.set(gatewayId, {
          service: r.service,
          transactionId,
          gatewayId,
          amountMinor: amount,
          refundedMinor: 0,
          voided: false,
        });
        return { authorizedMinor: amount, partial: amount < r.amountMinor };
      }
      case 'refund-capture':
      case 'refund-payment': {
        const parent = this.settled.get(r.original?.gatewayId ?? '');
        const expected = r.service === 'refund-capture' ? 'capture' : 'sale';
        if (parent === undefined || parent.service !== expected || parent.voided)
          return 'refund of no such original';
        if (parent.refundedMinor + r.amountMinor > parent.amountMinor) return 'refunds above captured';
        parent.refundedMinor += r.amountMinor;
        this.settled.set(gatewayId, {
          service: r.service,
          transactionId,
          gatewayId,
          amountMinor: r.amountMinor,
          refundedMinor: 0,
          voided: false,
          authGatewayId: parent.gatewayId,
        });
        return { authorizedMinor: r.amountMinor, partial: false };
      }
      case 'void-capture':
      case 'void-payment':
      case 'void-refund':
      case 'void-credit': {
        const target = this.settled.get(r.original?.gatewayId ?? '');
        if (target === undefined || target.voided) return 'void of nothing';
        this.voidSettled(target);
        return { partial: false };
      }
      case 'timeout-reversal': {
        const increment = this.increments.get(r.original?.transactionId ?? '');
        if (increment !== undefined) {
          const parent = this.auths.get(increment.parent);
          if (parent !== undefined) parent.authorizedMinor -= increment.amountMinor;
          this.increments.delete(r.original?.transactionId ?? '');
          return { partial: false };
        }
        const found = byTxn(r.original?.transactionId);
        if (found !== undefined && 'capturedMinor' in found[1]) found[1].reversed = true;
        return { partial: false };
      }
      case 'timeout-void': {
        const found = byTxn(r.original?.transactionId);
        if (found !== undefined && 'voided' in found[1]) this.voidSettled(found[1]);
        return { partial: false };
      }
    }
  }

  private readonly increments = new Map<string, { parent: string; amountMinor: number }>();

  private voidSettled(target: Settled): void {
    target.voided = true;
    if (target.service.startsWith('refund') && target.authGatewayId !== undefined) {
      const parent = this.settled.get(target.authGatewayId);
      if (parent !== undefined) parent.refundedMinor -= target.amountMinor;
    }
    if (target.service === 'capture' && target.authGatewayId !== undefined) {
      // gateway.md §7: voiding a capture leaves the authorization hold in place.
      const auth = this.auths.get(target.authGatewayId);
      if (auth !== undefined) auth.capturedMinor = null;
    }
  }

  /** Net amount taken from cardholders, minor units. */
  netChargedMinor(): number {
    let net = 0;
    for (const s of this.settled.values()) {
      if (s.voided) continue;
      net += s.service === 'capture' || s.service === 'sale' ? s.amountMinor : -s.amountMinor;
    }
    return net;
  }

  /** Authorizations with money held that are neither captured nor reversed. */
  openAuthorizations(): string[] {
    return [...this.auths.entries()]
      .filter(([, a]) => !a.reversed && a.capturedMinor === null && a.authorizedMinor > 0)
      .map(([gatewayId]) => gatewayId);
  }

  /**
   * The ledger balances: no request broke a money rule, every hold is captured or reversed unless the machine still
   * owns it (`ownedHolds`: gateway ids of open sessions), and every card read was released unless an open hold keeps it.
   */
  balanceProblems(ownedHolds: string[] = [], ownedCards: string[] = []): string[] {
    const problems = [...this.violations];
    const owned = new Set([...ownedHolds, ...[...this.holds.values()].map((h) => h.gatewayId)]);
    for (const gatewayId of this.openAuthorizations()) {
      if (!owned.has(gatewayId)) problems.push(`authorization ${gatewayId} left open`);
    }
    const keptCards = new Set([...ownedCards, ...[...this.holds.values()].map((h) => h.cardRef)]);
    for (const card of this.issuedCards) {
      if (!this.released.has(card) && !keptCards.has(card)) problems.push(`card ${card} not released`);
    }
    return problems;
  }

  lookupTicket(input: { ticket: string }): Promise<TicketLookup> {
    const enteredAtMs = this.tickets.get(input.ticket);
    return Promise.resolve(
      enteredAtMs === undefined
        ? { found: false, ticket: input.ticket }
        : this.unresolvedTickets.has(input.ticket)
          ? { found: true, ticket: input.ticket, enteredAtMs, paymentUnresolved: true }
          : this.paidTickets.has(input.ticket)
            ? { found: true, ticket: input.ticket, enteredAtMs, paid: this.paidTickets.get(input.ticket)! }
            : { found: true, ticket: input.ticket, enteredAtMs },
    );
  }

  voidable = true;

  findTransaction(input: { transactionId: string }): Promise<OriginalTransaction | null> {
    const s = [...this.settled.values()].find((x) => x.transactionId === input.transactionId);
    if (s === undefined) return Promise.resolve(null);
    const auth =
      s.service === 'capture' && s.authGatewayId !== undefined ? this.auths.get(s.authGatewayId) : undefined;
    return Promise.resolve({
      transactionId: s.transactionId,
      gatewayId: s.gatewayId,
      service: s.service,
      amountMinor: s.amountMinor,
      currency: 'GBP',
      refundedMinor: s.refundedMinor,
      voided: s.voided,
      voidPending: false,
      voidable: this.voidable && !s.voided,
      ...(auth !== undefined && s.authGatewayId !== undefined
        ? {
            authorization: {
              gatewayId: s.authGatewayId,
              transactionId: auth.transactionId,
              authorizedMinor: auth.authorizedMinor,
            },
          }
        : {}),
    });
  }

  openHold(hold: HoldRecord): Promise<void> {
    this.holds.set(hold.holdId, hold);
    return Promise.resolve();
  }

  claimHold(input: { fingerprint: string; recentCaptureMs: number }): Promise<HoldClaim> {
    const hold = [...this.holds.values()].find((h) => h.fingerprint === input.fingerprint);
    if (hold === undefined) return Promise.resolve({ kind: 'none' });
    this.holds.delete(hold.holdId);
    return Promise.resolve({ kind: 'claimed', hold });
  }

  /** The card's open stay: an unclaimed hold of its fingerprint (a claimed one is out of this map, as the exit's). */
  stayAtEntry(input: { fingerprint: string }): Promise<EntryStay> {
    const hold = [...this.holds.values()].find((h) => h.fingerprint === input.fingerprint);
    return Promise.resolve(
      hold === undefined
        ? { kind: 'none' }
        : { kind: 'open', holdId: hold.holdId, enteredAtMs: hold.enteredAtMs },
    );
  }

  /** Entries refused after their verification (entryRefused), as the machines reported them. */
  readonly refusedEntries: Parameters<FlowEffects['entryRefused']>[0][] = [];

  entryRefused(input: Parameters<FlowEffects['entryRefused']>[0]): void {
    this.refusedEntries.push(input);
  }

  /** Stays that outlasted their hold, charged or not at their exit (stayOutstayed), as the machines reported them. */
  readonly outstayedStays: Parameters<FlowEffects['stayOutstayed']>[0][] = [];

  stayOutstayed(input: Parameters<FlowEffects['stayOutstayed']>[0]): void {
    this.outstayedStays.push(input);
  }

  /** Fees the exits could not price (feeNotComputable), as the machines reported them. */
  readonly unpricedFees: { holdId: string; feeMinor: number; feeCurrency: string }[] = [];

  feeNotComputable(input: { hold: HoldRecord; feeMinor: number; feeCurrency: string }): void {
    this.unpricedFees.push({
      holdId: input.hold.holdId,
      feeMinor: input.feeMinor,
      feeCurrency: input.feeCurrency,
    });
  }

  closeHold(input: { hold: HoldRecord; resolution: HoldResolution }): void {
    this.closedHolds.push({ holdId: input.hold.holdId, resolution: input.resolution });
    if (input.resolution === 'returned') this.holds.set(input.hold.holdId, input.hold);
    else this.released.add(input.hold.cardRef);
  }

  releaseCard(input: { cardRef: string }): void {
    this.released.add(input.cardRef);
  }

  issueReceipt(receipt: ReceiptData): void {
    this.receipts.push(receipt);
  }

  // ---- payment links (pay by phone) ----

  /** Links created, in order; `linkOutcomes` decides how each wait ends (default: it waits for `payLink`/a close). */
  readonly links: (LinkRequest & LinkShown & { state: 'active' | 'paid' | 'closed'; reason?: string })[] = [];
  /** Next creates: 'ok' (default), 'paid' (paid before the create's answer came) or an error code to reject with. */
  readonly linkCreates: string[] = [];
  readonly printedLinks: string[] = [];
  private readonly linkWaiters = new Map<string, (o: LinkOutcome) => void>();

  createLink(input: LinkRequest, _signal: AbortSignal): Promise<LinkShown | LinkPaid> {
    const next = this.linkCreates.shift() ?? 'ok';
    if (next !== 'ok' && next !== 'paid')
      return Promise.reject(Object.assign(new Error(next), { code: next }));
    const linkId = `${input.reference}-L${this.links.length + 1}`;
    const shown: LinkShown = {
      linkId,
      url: `https://pay.example/pay/${linkId}`,
      domain: 'pay.example',
      expiresAtMs: this.clock.now() + input.waitMs,
    };
    // 'paid': the payment was notified before the create's answer came.
    this.links.push({ ...input, ...shown, state: next === 'paid' ? 'paid' : 'active' });
    return Promise.resolve(next === 'paid' ? { kind: 'paid', linkId, paymentId: `pay-${linkId}` } : shown);
  }

  awaitLink({ linkId }: { linkId: string }, _signal: AbortSignal): Promise<LinkOutcome> {
    const link = this.links.find((l) => l.linkId === linkId);
    if (link?.state === 'paid') return Promise.resolve({ kind: 'paid', linkId, paymentId: `pay-${linkId}` });
    if (link?.state === 'closed')
      return Promise.resolve({ kind: 'closed', linkId, reason: link.reason ?? '' });
    return new Promise((resolve) => this.linkWaiters.set(linkId, resolve));
  }

  closeLink(
    { linkId, reason }: { linkId: string; reason: 'cancelled' | 'timeout' },
    _signal: AbortSignal,
  ): Promise<LinkOutcome | LinkUnconfirmed> {
    const link = this.links.find((l) => l.linkId === linkId);
    if (link?.state === 'paid') return Promise.resolve({ kind: 'paid', linkId, paymentId: `pay-${linkId}` });
    if (link) Object.assign(link, { state: 'closed', reason });
    return Promise.resolve({ kind: 'closed', linkId, reason });
  }

  printLink(input: LinkShown): void {
    this.printedLinks.push(input.linkId);
  }

  /** The customer pays the link on the phone: the wait ends paid. */
  payLink(linkId = this.links.at(-1)?.linkId ?? ''): void {
    const link = this.links.find((l) => l.linkId === linkId);
    if (link) link.state = 'paid';
    this.linkWaiters.get(linkId)?.({ kind: 'paid', linkId, paymentId: `pay-${linkId}` });
    this.linkWaiters.delete(linkId);
  }

  /** The terminal closed the link by itself (its wait ran out). */
  expireLink(linkId = this.links.at(-1)?.linkId ?? ''): void {
    const link = this.links.find((l) => l.linkId === linkId);
    if (link) Object.assign(link, { state: 'closed', reason: 'timeout' });
    this.linkWaiters.get(linkId)?.({ kind: 'closed', linkId, reason: 'timeout' });
    this.linkWaiters.delete(linkId);
  }

  // ---- alternative methods (spec 001) ----

  /** Sales asked for, in order (the customer values included: a fake keeps what a test must check). */
  readonly altSales: AltSaleRequest[] = [];
  /** Next sales: 'PENDING' (default), or a reason the sale is not pending. */
  readonly altAnswers: string[] = [];

  startAltSale(input: AltSaleRequest, _signal: AbortSignal): Promise<AltSaleStarted> {
    this.altSales.push(input);
    const answer = this.altAnswers.shift() ?? 'PENDING';
    if (answer !== 'PENDING') return Promise.resolve({ kind: 'failed', reason: answer });
    const saleId = this.altSales.length;
    return Promise.resolve({ kind: 'pending', saleId, paymentUrl: `https://pay.example/ap/${saleId}` });
  }
}

/** Lets promise effects settle and the machines react (no timers involved: delays run on the SimulatedClock). */
export async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i += 1) await new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * The customer presents a card again (CONFIRM: another card after a decline, or the same one after a read put right)
 * while the fake's next read never ends: the customer screen as the card is awaited.
 */
export async function cardAwaitedAgain(
  fake: FakeTerminal,
  actor: { send(event: { type: 'CONFIRM' }): void; getSnapshot(): AnyMachineSnapshot },
): Promise<FlowView> {
  fake.reads.push('hang');
  actor.send({ type: 'CONFIRM' });
  await settle();
  return describeView(actor.getSnapshot());
}
