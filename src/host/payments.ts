import type { Config } from '../config/index.js';
import { buildTagSet, TagSetError, type TagSetService } from '../emv/index.js';
import type { ServiceRequest as FlowRequest, SubmitOutcome } from '../flows/effects.js';
import type { GatewayClient } from '../gateway/client.js';
import { GatewayError } from '../gateway/errors.js';
import type {
  CardPresentFields,
  DccFields,
  EntryMode as GatewayEntryMode,
  PointOfSale,
  PreparedRequest,
  ServiceRequest as GatewayRequest,
} from '../gateway/services/types.js';
import {
  ABANDONED,
  answeredAmountOf,
  authorizationTransactionOf,
  authorizedTotalOf,
  LIVE_FAILPOINTS,
  refundedTotalOf,
  resolvedStanding,
  type JournaledSender,
  type JournalEntry,
  type SqliteJournal,
  type TransmitOutcome,
} from '../journal/index.js';
import type { Logger } from '../log/index.js';
import { requireCurrency } from '../money/index.js';
import { refundAtOfferRate, type DccReceiptOffer, type DccSelection, type DccTerms } from '../flows/index.js';
import type { CardStore, HeldCard } from './card-store.js';
import { dccFieldsFor, emvTransactionAmount, localAmountOf, reversalAmount } from './dcc.js';
import { UNREACHABLE_CODES } from './gateway-adapters.js';
import { localDateTime } from './local-time.js';
import { receiptCardOf } from './receipts.js';
import { declineHolds, PROCESSOR_UNAVAILABLE, recoveryPlanFor } from '../vocabulary/services.js';

/** A request that could not be built (bad card data, a missing required field): nothing was journaled or sent. */
export class PaymentBuildError extends Error {
  override readonly name = 'PaymentBuildError';
  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * Whether the request undoes what an earlier one moved (a reversal, a void: gateway.md §7), read from the recovery
 * plan of its service, which undoes the earlier request too: not subject to the caller's wait
 * ({@link PaymentService.submit}'s `signal`).
 */
function undoing(service: string): boolean {
  const plan = recoveryPlanFor(service);
  return plan === 'void-referenced' || plan === 'reverse-referenced-authorization';
}

/**
 * A pre-authorization or sale declined with a status that leaves it on the gateway (reference/gateway.md §4, payment
 * statuses; the vocabulary's declineHolds): AUTHORIZED_RISK_DECLINED, the issuer approved and the gateway's risk check
 * refused, or PENDING_REVIEW, held for a review that may yet accept and charge it. The customer is told it was
 * declined, yet it stands until the authorization is reversed (src/host/payment-router.ts writes that reversal as a
 * follow-up).
 */
export function isHeldDecline(outcome: TransmitOutcome): boolean {
  return outcome.kind === 'declined' && declineHolds(outcome.status);
}

/** Something the host learns from every answer: the operator status bar shows the gateway as online or not. */
export interface GatewayHealthSink {
  gatewayAnswered(): void;
  /**
   * The gateway could not be used, with the code of why: unreachable (GW_CONNECTION, GW_TIMEOUT, an unknown outcome's
   * code), its credentials refused (GW_AUTH) or its processor down (PROCESSOR_UNAVAILABLE: it answers, refusing
   * payments for a while); the status board tells them apart (src/host/gateway-adapters.ts, gatewayProblemOf).
   */
  gatewayUnreachable(reason: string): void;
}

/** What the host wants to know about a submitted request besides the machine's outcome. */
export interface SubmitRecord {
  /** The journal entry of the request (absent when nothing was built). */
  entryId?: number;
  prepared?: PreparedRequest;
  outcome: SubmitOutcome;
  /** The journal's classification of the send (absent when nothing was built). */
  sent?: TransmitOutcome;
  /** True when the gateway could not be reached and the request provably never left (offline fallback applies). */
  unreachable: boolean;
  /**
   * Approved, and journaled approved, although the caller stopped waiting: its wait aborted after the outcome's write
   * (while that commit was under way, or before this submit resumed), too late for the sender to journal it unknown
   * for recovery. Nobody will use it or undo it: the router undoes it. Never for a reversal or void (they stand
   * whoever waits).
   */
  abandonedApproval: boolean;
}

/**
 * What follow-ons of an authorization must repeat, kept durably in the journal database (DESIGN.md rules 6 and 7):
 * the tag set sent with an EMV authorization (a reversal carries it, a capture after a contact read too), and the
 * currency-conversion terms of a converted one (its capture and refunds carry the DCC field set at its rate).
 */
export interface FollowOnStore {
  putTags(transactionId: string, tagsHex: string): void;
  tags(transactionId: string): string | undefined;
  putDcc(transactionId: string, selection: DccSelection): void;
  dcc(transactionId: string): DccTerms | undefined;
  /**
   * The accepted offer of the converted authorization `transactionId` as the receipts of its transactions state it: its
   * terms with the margin and the disclaimer the customer was shown. `not-kept`: converted, but the disclosure was not
   * kept (terms kept before it was, or by the previous terminal); undefined: no conversion kept.
   */
  receiptOffer(transactionId: string): DccReceiptOffer | 'not-kept' | undefined;
  /** The authorization is settled (reversed, or past any follow-on): wipe what was kept. */
  forget(transactionId: string): void;
}

const TAG_SET_SERVICE: Partial<Record<FlowRequest['service'], TagSetService>> = {
  avr: 'authorization',
  preauth: 'authorization',
  sale: 'authorization',
  credit: 'credit',
  capture: 'capture',
  reversal: 'reversal',
};

/**
 * The machines' requests as the gateway sees them: builds the exact request from a machine's description, the card
 * the host holds and what the original requires (its tags, its conversion terms), and sends it through the journal's
 * one sender (journaled durably before a byte goes out, sent once, outcome journaled — money safety rules 1 and 2).
 * Unknown outcomes stay in the journal as 'unknown' until recovery resolves them.
 */
export class PaymentService {
  /** Tag set of the authorization made with a card read, by card reference (for captures and reversals). */
  private readonly originalTags = new Map<string, string>();
  private sequence = 0;

  constructor(
    private readonly deps: {
      config: Config;
      gateway: Pick<GatewayClient, 'prepare'>;
      sender: JournaledSender;
      journal: SqliteJournal;
      cards: CardStore;
      logger: Logger;
      health: GatewayHealthSink;
      now: () => Date;
      followOns: FollowOnStore;
    },
  ) {}

  /** Forgets what was kept for a card read once the card is released. */
  forgetCard(cardRef: string): void {
    this.originalTags.delete(cardRef);
  }

  /**
   * The authorized total of an authorization we made (increments included) as the gateway holds it, from the
   * journal: the amount a full reversal carries, in the currency of the authorization (a converted authorization of
   * family A: the card's billing currency).
   */
  gatewayAuthorizedTotal(transactionId: string): { amountMinor: number; currency: string } | undefined {
    const total = authorizedTotalOf(this.deps.journal, transactionId);
    if (total === undefined) return undefined;
    return { amountMinor: total.minor, currency: total.currency ?? this.deps.config.terminal.currency };
  }

  /**
   * The authorized total of an authorization we made (increments included) in the local currency the machines count
   * in: {@link gatewayAuthorizedTotal} through {@link toLocal}. One source, whether the authorization was made
   * before a restart or not.
   */
  authorizedTotal(transactionId: string): number | undefined {
    return this.localAuthorizedTotal(transactionId)?.minor;
  }

  /**
   * Whether a capture of `gateway` (this capture as the gateway takes it: a converted hold's in the card's billing
   * currency, at the authorization's rate) is all its authorization still holds because a capture of it of that same
   * amount reached the gateway, lost its answer and was voided by recovery (resolved `timeout-void` by a timeout void
   * that answered the amount it voided: the gateway had the capture; one that never arrived is answered without an
   * amount). That capture made the gateway release the rest of the hold (spec 001, "Parking Capture Less Than Auth"),
   * and its void gave back only what it took (reference/gateway.md §7: the hold stays as the capture left it), so this
   * one is not below what is held. A voided capture of more than this one left more held than this takes, which the
   * authorized total says as well. Judged in the gateway's terms, as the journal records the voided capture: a
   * converted capture is journaled in the card's currency, and the local fee's figure is not the one the gateway holds.
   */
  private voidedCaptureLeftOnly(authTx: string, gateway: { minor: number; currency: string }): boolean {
    const { journal } = this.deps;
    const voidedAtGateway = (e: JournalEntry): boolean => {
      const by = e.resolvedByEntryId !== undefined ? journal.get(e.resolvedByEntryId) : undefined;
      return by?.state === 'approved' && (answeredAmountOf(by) ?? 0) > 0;
    };
    return journal
      .referencing(authTx)
      .some(
        (e) =>
          e.service === 'capture' &&
          e.state === 'resolved' &&
          e.resolution === 'timeout-void' &&
          e.currency === gateway.currency &&
          e.amountMinor === gateway.minor &&
          voidedAtGateway(e),
      );
  }

  /** {@link authorizedTotal} with its currency: the local one. */
  localAuthorizedTotal(transactionId: string): { minor: number; currency: string } | undefined {
    const total = this.gatewayAuthorizedTotal(transactionId);
    return total && this.toLocal(transactionId, total.amountMinor, total.currency);
  }

  private merchantReference(): string {
    this.sequence += 1;
    return `${this.deps.config.terminal.id}-${this.deps.now().getTime().toString(36)}-${this.sequence}`;
  }

  private pos(
    card: HeldCard,
    request: FlowRequest,
    tagService: TagSetService,
    amountMinor: number,
    date: string,
  ): PointOfSale {
    const t = this.deps.config.terminal;
    const { summary, read, data } = card;
    if (summary.cardType === null) {
      throw new PaymentBuildError('CARD_NOT_SUPPORTED', 'the card network is not supported for parking');
    }
    // EMV: a chip card is sent by its stripe only as the fallback the machine allowed (its chip failed first).
    if (summary.fallback && request.emvFallback !== true) {
      throw new PaymentBuildError('CHIP_NOT_TRIED', 'a chip card swiped is sent only after its chip failed');
    }
    const entryMode: GatewayEntryMode = summary.entryMode;
    const pos: PointOfSale = {
      cardType: summary.cardType,
      entryMode,
      terminalCapability: t.terminalCapability,
      terminalPinCapability: t.terminalPinCapability,
      catLevel: request.catLevel,
      terminalId: t.id,
      operatingEnvironment: request.catLevel === 6 ? '3' : '2',
    };
    if (summary.chip) {
      // 9F02/5F2A: the local price the card was read with, converted or not (src/host/dcc.ts says why).
      const emv = emvTransactionAmount({ amountMinor, currency: request.currency });
      const tags = buildTagSet(read.tlvs, {
        cardType: summary.cardType,
        service: tagService,
        amountMinor: emv.amountMinor,
        otherAmountMinor: 0,
        currencyNumeric: requireCurrency(emv.currency).numeric,
        countryNumeric: t.countryNumeric,
        transactionDate: date.slice(2, 8),
        transactionType: tagService === 'credit' || tagService === 'refund' ? '20' : '00',
        entryMode: summary.entryMode,
      });
      pos.emvTags = tags.tagsHex;
      if (tagService === 'authorization') this.originalTags.set(card.ref, tags.tagsHex);
      if (tags.cardSequenceNumber !== undefined) pos.cardSequenceNumber = tags.cardSequenceNumber;
    }
    const track =
      read.track2 ??
      (data ? `;${data.pan}=${data.expiry}${data.serviceCode}${data.discretionaryData}?` : undefined);
    if (track !== undefined) pos.trackData = track;
    if (data) pos.serviceCode = data.serviceCode;
    // fallbackCondition 1: the terminal does not record whether its previous transaction was a fallback too (2).
    if (request.emvFallback === true && summary.fallback) pos.emvFallback = { condition: 1 };
    if (request.catLevel === 6) {
      pos.initiationChannel = '00';
      if (summary.cardType === '002') pos.isDedicatedHardwareTerminal = t.isDedicatedHardwareTerminal;
    } else if (summary.cardType === '002') {
      pos.isDedicatedHardwareTerminal = t.isDedicatedHardwareTerminal;
    }
    return pos;
  }

  /**
   * EMV tags of a follow-on (DESIGN.md rule 7; gateway.md §7): the tag set of the original authorization, as sent —
   * its cryptogram (9F26) covers the original's amount and date, so the tags are repeated, not rebuilt. A reversal
   * carries them whenever the original had them (whatever the machine asked: the rule is the original's); a capture
   * only after an EMV contact pre-authorization (`includeEmvTags`).
   */
  private followOnTags(request: FlowRequest): string | undefined {
    if (request.service === 'capture' && !request.includeEmvTags) return undefined;
    const inMemory = request.cardRef ? this.originalTags.get(request.cardRef) : undefined;
    const original = request.original?.transactionId;
    return inMemory ?? (original ? this.deps.followOns.tags(original) : undefined);
  }

  /**
   * The conversion terms a follow-on repeats (spec 001, DCC capture and refund: the same field set, at the
   * authorization's rate): the machine's, or those kept for the authorization it follows.
   */
  private followOnDcc(request: FlowRequest): DccTerms | undefined {
    const auth = this.authorizationOf(request);
    const kept = auth === undefined ? undefined : this.deps.followOns.dcc(auth);
    if (request.dcc === undefined) return kept;
    // The machine's terms, converted for the family the journal kept with them (the authorization's, not the one
    // configured since).
    return request.dcc.indicator === '1' && kept?.indicator === '1' && kept.family !== undefined
      ? { ...request.dcc, family: kept.family }
      : request.dcc;
  }

  /**
   * transactionId of the authorization a follow-on belongs to (a refund of a capture: the capture's), by the journal's
   * rule that operator mode converts listed amounts with.
   */
  private authorizationOf(request: FlowRequest): string | undefined {
    const original = request.original;
    return original && authorizationTransactionOf(this.deps.journal, original.transactionId);
  }

  /**
   * An amount of a payment as the gateway holds it, in the local currency the machines count in: a converted
   * authorization of processor family A is held in the card's billing currency (spec 001, DCC), converted back at
   * the authorization's rate; anything else is already local.
   */
  toLocal(authorizationTx: string, minor: number, currency: string): { minor: number; currency: string } {
    const dcc = this.deps.followOns.dcc(authorizationTx);
    if (dcc?.indicator !== '1' || currency !== dcc.offer.billingCurrency) return { minor, currency };
    const local = localAmountOf(minor, { dcc }, this.familyOf(dcc));
    return { minor: local ?? minor, currency: dcc.offer.localCurrency };
  }

  /**
   * The processor family of conversion terms: the one the authorization was converted for, as the journal kept it
   * (a follow-on after a restart under another configured family repeats the authorization's field set, spec 001
   * "DCC capture and refund require the same field set"); the configured one for the machine's own choice.
   */
  private familyOf(terms: DccTerms | undefined): 'A' | 'B' {
    return (terms?.indicator === '1' ? terms.family : undefined) ?? this.deps.config.dcc.processorFamily;
  }

  /**
   * A capture or increment takes from or adds to its authorization, so it is in the authorization's currency as the
   * journal records it (in the local terms the machines count in: {@link localAuthorizedTotal}) — the rule a reversal
   * follows by carrying the journal's figure. An amount priced in another currency (the terminal's, changed since the
   * authorization) is no amount of this authorization: the request is refused unbuilt, never sent converted by nobody.
   */
  private checkFollowOnCurrency(request: FlowRequest): void {
    const authTx = request.original?.transactionId;
    const auth = authTx ? this.localAuthorizedTotal(authTx) : undefined;
    if (auth !== undefined && auth.currency !== request.currency)
      throw new PaymentBuildError(
        'CURRENCY_MISMATCH',
        `${request.service} in ${request.currency} of an authorization in ${auth.currency}`,
      );
  }

  /** The tag set sent with an authorization (kept in the journal), e.g. for its reversal after a restart. */
  /** Keeps the EMV tags an original was sent with, for its follow-ons (a forwarded stored payment's). */
  keepOriginalTags(transactionId: string, tagsHex: string): void {
    this.deps.followOns.putTags(transactionId, tagsHex);
  }

  authorizationTags(transactionId: string): string | undefined {
    return this.deps.followOns.tags(transactionId);
  }

  /** Maps a machine's request to the gateway client's typed request. Throws PaymentBuildError. */
  toGatewayRequest(request: FlowRequest): GatewayRequest {
    const { config } = this.deps;
    const date = localDateTime(this.deps.now(), config.terminal.timezone);
    const common = { code: this.merchantReference(), partner: config.terminal.partner };
    const card = request.cardRef ? this.deps.cards.get(request.cardRef) : undefined;
    const originalId = (): string => {
      const id = request.original?.gatewayId;
      if (!id)
        throw new PaymentBuildError('NO_ORIGINAL', `${request.service} needs the gateway id of the original`);
      return id;
    };
    // Currency conversion (spec 001, DCC): the machine's amounts are the local price; the family decides the fields.
    const family = config.dcc.processorFamily;
    const dccOriginal = dccFieldsFor(request.dcc, request.amountMinor, family, true);
    const followOnTerms = this.followOnDcc(request);
    const dccFollowOn = dccFieldsFor(followOnTerms, request.amountMinor, this.familyOf(followOnTerms), false);
    // Literals of every field: the gateway client reads each one, and an object spread from another gets a shape of its
    // own that makes each of those reads a slow lookup.
    const cardPresent = (amountMinor: number): CardPresentFields => {
      if (!card) throw new PaymentBuildError('NO_CARD', `${request.service} needs a card read`);
      return {
        code: common.code,
        partner: common.partner,
        amountMinor,
        currency: request.currency,
        transactionLocalDateTime: date,
        merchantCategoryCode: config.terminal.merchantCategoryCode,
        pos: this.pos(card, request, TAG_SET_SERVICE[request.service] ?? 'authorization', amountMinor, date),
      };
    };
    switch (request.service) {
      case 'avr': {
        const { amountMinor: _zero, ...fields } = cardPresent(0);
        return { service: 'avr', ...fields };
      }
      case 'preauth':
      case 'sale': {
        const f = cardPresent(request.amountMinor);
        return {
          service: request.service,
          code: f.code,
          partner: f.partner,
          amountMinor: f.amountMinor,
          currency: f.currency,
          transactionLocalDateTime: f.transactionLocalDateTime,
          merchantCategoryCode: f.merchantCategoryCode,
          pos: f.pos,
          dcc: dccOriginal,
        };
      }
      case 'credit':
        return { service: 'credit', ...cardPresent(request.amountMinor) };
      case 'incremental':
        this.checkFollowOnCurrency(request);
        return {
          service: 'incremental',
          ...common,
          id: originalId(),
          additionalAmountMinor: request.amountMinor,
          currency: request.currency,
          transactionLocalDateTime: date,
        };
      case 'reversal': {
        const tags = this.followOnTags(request);
        // A reversal carries the authorized amount (gateway.md §7) as the gateway holds it: the journal's figure in
        // the authorization's currency, not the machine's local amount converted back — a partial approval of a
        // converted authorization does not survive that round trip to the unit.
        const authTx = request.original?.transactionId;
        const amount =
          (authTx ? this.gatewayAuthorizedTotal(authTx) : undefined) ??
          reversalAmount(
            { ...request, ...(followOnTerms ? { dcc: followOnTerms } : {}) },
            this.familyOf(followOnTerms),
          );
        return {
          service: 'reversal',
          ...common,
          id: originalId(),
          authorizedMinor: amount.amountMinor,
          currency: amount.currency,
          ...(tags ? { emvTags: tags } : {}),
        };
      }
      case 'timeout-reversal':
      case 'timeout-void':
        // Timeout requests are recovery's (src/journal/recovery.ts): the host routes a machine's to it.
        throw new PaymentBuildError('RECOVERY_ONLY', `${request.service} is sent by journal recovery`);
      case 'capture': {
        this.checkFollowOnCurrency(request);
        const authTx = request.original?.transactionId;
        // The capture as the gateway takes it: a converted hold's (family A) in the card's billing currency.
        const atGateway =
          dccFollowOn?.indicator === '1' && dccFollowOn.family === 'A'
            ? { minor: dccFollowOn.billingAmountMinor, currency: dccFollowOn.billingCurrency }
            : { minor: request.amountMinor, currency: request.currency };
        const authorizedMinor =
          authTx !== undefined && this.voidedCaptureLeftOnly(authTx, atGateway)
            ? request.amountMinor
            : ((authTx ? this.authorizedTotal(authTx) : undefined) ?? request.amountMinor);
        const tags = this.followOnTags(request);
        return {
          service: 'capture',
          ...common,
          id: originalId(),
          amountMinor: request.amountMinor,
          authorizedMinor,
          currency: request.currency,
          // The card read of the pre-authorization, or — once it is gone (a tap-and-go exit after a restart) — the
          // machine's word, kept with the hold: its tags are asked for only after an EMV contact read.
          preauthEntryMode: card?.summary.entryMode ?? (request.includeEmvTags ? 'contact' : 'contactless'),
          ...(tags ? { emvTags: tags } : {}),
          ...(dccFollowOn ? { dcc: dccFollowOn } : {}),
        };
      }
      case 'refund-capture':
      case 'refund-payment': {
        const dcc =
          dccFollowOn && followOnTerms ? this.refundDcc(request, dccFollowOn, followOnTerms) : undefined;
        return {
          service: request.service,
          ...common,
          id: originalId(),
          amountMinor: request.amountMinor,
          currency: request.currency,
          ...(dcc ? { dcc } : {}),
        };
      }
      case 'void-capture':
      case 'void-payment':
      case 'void-refund':
      case 'void-credit':
        return { service: request.service, ...common, id: originalId() };
    }
  }

  /**
   * The conversion fields of a refund of a converted payment, its card-currency amount bounded so that the refunds of
   * the payment never add up to more than it took in the card's currency: refunds converted one by one can (0.01 and
   * 9.99 EUR of 10.00 EUR = 1612 JPY convert to 2 + 1611 JPY). Refunds that stand or may stand count as refunded: the
   * journal's one rule, {@link refundedTotalOf}, the one operator mode counts with. The payment counts whether
   * approved, or left in flight and found standing by recovery after its answer was lost.
   * - Family A refunds in the card's billing currency, and the journal counts in it: the billing amount is bounded by
   *   what the journal says remains of the billing amount paid (the gateway refuses more), and a refund of the whole
   *   local remainder carries the whole billing remainder.
   * - Family B refunds the local amount with the card's amount as `foreignAmount`, and the journal counts in the local
   *   currency: the card amount is {@link refundAtOfferRate} of what stands refunded before it, so that the refunds'
   *   card amounts add up to the card amount of what they refunded (the receipts state the same figure).
   */
  private refundDcc(request: FlowRequest, fields: DccFields, terms: DccTerms): DccFields {
    const paidTx = request.original?.transactionId;
    if (fields.indicator !== '1' || terms.indicator !== '1' || !paidTx) return fields;
    const { journal } = this.deps;
    const paid = journal.findByTransactionId(paidTx);
    const paidMinor = paid && answeredAmountOf(paid);
    // Approved, or left in flight and found standing by recovery (its timeout void refused NOT_VOIDABLE): the payment
    // took its money either way, and its refunds are bounded alike (the operator desk's reading, findTransaction).
    const stands = paid !== undefined && (paid.state === 'approved' || resolvedStanding(paid));
    if (!stands || paidMinor === undefined) return fields;
    const refunded = refundedTotalOf(journal, paidTx);
    if (fields.family === 'B') {
      const refundedAfter = refunded + request.amountMinor;
      // More than was paid is refused by the gateway on the local amount; nothing to bound it to.
      if (paid.currency !== terms.offer.localCurrency || refundedAfter > paidMinor) return fields;
      return { ...fields, billingAmountMinor: refundAtOfferRate(request.amountMinor, refunded, terms.offer) };
    }
    if (paid.currency !== fields.billingCurrency) return fields;
    const remaining = Math.max(0, paidMinor - refunded);
    const remainingLocal = localAmountOf(remaining, { dcc: terms }, 'A') ?? 0;
    const billingAmountMinor =
      request.amountMinor >= remainingLocal ? remaining : Math.min(fields.billingAmountMinor, remaining);
    return { ...fields, billingAmountMinor };
  }

  /**
   * Builds one request and sends it through the journal's sender. Never throws for gateway or build failures: they
   * are outcomes. A journal failure does throw (nothing was sent then, or the entry stays in flight for recovery).
   * `onOutcome` writes commit in the same transaction as the outcome. `signal`: the caller's wait (a machine's
   * submit signal); once it aborts, the request is not sent if it has not left yet, and an approval that arrives
   * afterwards is journaled unknown and returned as such, for recovery to undo (the sender's `abandoned` option) —
   * except for a reversal or void, which goes and stands regardless. An abort that comes after the outcome's write
   * finds the approval journaled approved: the record says so (`abandonedApproval`), for the router to undo it.
   * `beforeSend` writes what must be on disk before the request can reach the gateway (its transactionId is known once
   * it is built), in the transaction that begins its journal entry: no durable write of its own. It runs only for a
   * request that was built; one that throws sends nothing (the begin is undone with it).
   */
  async submit(
    request: FlowRequest,
    options: {
      flowId?: string;
      onOutcome?: (entry: JournalEntry, outcome: TransmitOutcome) => void;
      signal?: AbortSignal;
      beforeSend?: (prepared: PreparedRequest) => void;
    } = {},
  ): Promise<SubmitRecord> {
    const { gateway, logger, health } = this.deps;
    let prepared: PreparedRequest;
    try {
      prepared = gateway.prepare(this.toGatewayRequest(request));
    } catch (e) {
      const code =
        e instanceof PaymentBuildError || e instanceof TagSetError || e instanceof GatewayError
          ? e.code
          : 'BUILD_FAILED';
      logger.warn({ service: request.service, code, err: e }, 'request not built; nothing sent');
      return {
        outcome: { kind: 'rejected', transactionId: 'not-sent', reason: code },
        unreachable: false,
        abandonedApproval: false,
      };
    }
    const { beforeSend } = options;
    // The conversion terms the request was built with, read before its outcome (a reversal's wipes those the journal
    // kept): its answer converts back at them.
    const terms = this.followOnDcc(request);
    const card = request.cardRef ? this.deps.cards.get(request.cardRef) : undefined;
    // A reversal or void is sent, and its approval kept, whoever still waits: left unsent it would leave standing
    // what it undoes (a sale the customer cancelled), and recovery of one that is unknown completes it anyway.
    const abandoned = undoing(request.service) ? undefined : options.signal;
    // A literal of every option (undefined where absent): the sender reads each one of them.
    const { entryId, outcome: sent } = await this.deps.sender.sendForOutcome(prepared, {
      referencedTransactionId: request.original?.transactionId || undefined,
      flowId: options.flowId || undefined,
      parentGatewayId: request.original?.gatewayId || undefined,
      maskedPan: card?.summary.maskedPan,
      // What the receipt states of the card, journaled with the outcome: a receipt issued after a restart states it.
      card: card ? receiptCardOf(card.read) : undefined,
      resolvesEntryId: undefined,
      failpoints: LIVE_FAILPOINTS,
      abandoned,
      onBegin: beforeSend && (() => beforeSend(prepared)),
      onOutcome: (e, o) => {
        // A risk-declined authorization, or one in review, is reversed: its reversal repeats its tags too.
        if (o.kind === 'approved' || isHeldDecline(o)) this.keepFollowOnData(request, prepared, o);
        // An approval journaled unknown because nobody waited for it may yet stand (recovery's void of it refused
        // NOT_VOIDABLE): its refund needs its tags and conversion terms as much as any approval's. A reversal's
        // only forgets them, which waits for recovery's resolution.
        else if (o.kind === 'unknown' && o.reason === ABANDONED && request.service !== 'reversal')
          this.keepFollowOnData(request, prepared, o);
        options.onOutcome?.(e, o);
      },
    });
    switch (sent.kind) {
      case 'approved':
      case 'declined':
        health.gatewayAnswered();
        break;
      case 'rejected':
        // The processor down: the gateway answered, but cannot take payments for a while — as forwarding finds it.
        if (sent.reason === PROCESSOR_UNAVAILABLE) health.gatewayUnreachable(PROCESSOR_UNAVAILABLE);
        else health.gatewayAnswered();
        break;
      case 'unknown':
        // An approval that came after its caller stopped waiting is journaled unknown: the gateway did answer.
        if (sent.reason === ABANDONED) health.gatewayAnswered();
        else health.gatewayUnreachable(sent.error?.code ?? 'UNKNOWN');
        break;
      case 'not-sent':
        // Not sent because nobody waited for it any more: nothing was learnt of the gateway.
        if (sent.reason !== ABANDONED) health.gatewayUnreachable(sent.reason ?? 'NOT_SENT');
        break;
    }
    const transactionId = prepared.transactionId ?? prepared.referencedTransactionId ?? `entry-${entryId}`;
    return {
      entryId,
      prepared,
      sent,
      outcome: this.toSubmitOutcome(request, prepared, sent, transactionId, terms),
      unreachable: sent.kind === 'not-sent' && UNREACHABLE_CODES.has(sent.reason ?? ''),
      // An abort before the outcome's write has it journaled unknown (the sender's `abandoned`): approved here, the
      // abort came after that write.
      abandonedApproval: sent.kind === 'approved' && abandoned?.aborted === true,
    };
  }

  /**
   * Keeps what the follow-ons of an approved authorization must repeat (its tags, its conversion terms), in the
   * transaction of its outcome; wipes it once the authorization is reversed.
   */
  private keepFollowOnData(request: FlowRequest, prepared: PreparedRequest, outcome: TransmitOutcome): void {
    const store = this.deps.followOns;
    const tx = prepared.transactionId;
    // A sale is voided or refunded, which repeat no tags, unless it was risk-declined or held for review: then it is
    // reversed.
    const reversible =
      request.service === 'preauth' ||
      request.service === 'avr' ||
      (request.service === 'sale' && isHeldDecline(outcome));
    if (reversible && tx) {
      const tags = request.cardRef ? this.originalTags.get(request.cardRef) : undefined;
      if (tags) store.putTags(tx, tags);
    }
    if ((request.service === 'preauth' || request.service === 'sale') && tx && request.dcc?.indicator === '1')
      store.putDcc(tx, request.dcc);
    if (request.service === 'reversal' && request.original?.transactionId)
      store.forget(request.original.transactionId);
  }

  private toSubmitOutcome(
    request: FlowRequest,
    prepared: PreparedRequest,
    outcome: TransmitOutcome,
    transactionId: string,
    terms: DccTerms | undefined,
  ): SubmitOutcome {
    switch (outcome.kind) {
      case 'approved': {
        // An increment's outcome is the authorization's new total, as the journal (which holds the answer by now)
        // counts it. Otherwise the amount the answer states (a capture's: what it captured, which may be less than
        // asked), in the local currency the machines count in: what was asked when the gateway took all of it; else
        // converted back at the terms the request was built with (`terms`) — family A answers a converted request in
        // the billing currency. A follow-on's are those the journal kept with its authorization, family included: a
        // restart under another configured family, or a follow-on without the machine's terms, changes neither.
        const answered = outcome.authorizedMinor ?? outcome.amountMinor;
        const authorizedMinor =
          request.service === 'incremental' && request.original
            ? (this.authorizedTotal(request.original.transactionId) ?? outcome.authorizedMinor)
            : answered !== undefined && answered === prepared.amountMinor
              ? request.amountMinor
              : localAmountOf(answered, { dcc: terms }, this.familyOf(terms));
        return {
          kind: 'approved',
          transactionId,
          gatewayId: outcome.gatewayId,
          ...(authorizedMinor !== undefined ? { authorizedMinor } : {}),
          partial: outcome.partial === true,
          ...(outcome.approvalCode !== undefined ? { approvalCode: outcome.approvalCode } : {}),
        };
      }
      case 'declined':
        return {
          kind: 'declined',
          transactionId,
          ...(outcome.gatewayId ? { gatewayId: outcome.gatewayId } : {}),
          reason: outcome.reason ?? outcome.status ?? 'DECLINED',
        };
      case 'rejected':
        return { kind: 'rejected', transactionId, reason: outcome.reason ?? 'REJECTED' };
      case 'unknown':
        return { kind: 'unknown', transactionId, reason: outcome.error?.code ?? 'UNKNOWN' };
      // Provably never reached the gateway: nothing moved; the machine takes it as a refusal.
      case 'not-sent':
        return { kind: 'rejected', transactionId, reason: outcome.reason ?? 'NOT_SENT', notSent: true };
    }
  }
}
