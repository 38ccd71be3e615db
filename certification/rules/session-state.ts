/**
 * What the earlier messages of a session established, for the rules that judge a message against them: the amounts
 * each authorization, capture and sale holds, the originals by transactionId, the terminal's country.
 */
import { refusedStatus } from '../../src/gateway/outcome.js';
import { isServiceName, type ServiceName } from '../../src/vocabulary/services.js';
import { dccAuthorizationOf, offerRates, type DccAuthorization, type DccOfferRate } from './dcc-terms.js';
import { field, isMasked, minorUnits, tagDigits, text, type MessageView } from './message.js';

/** One original transaction of the session, by the gateway id its answer gave it. */
export interface SessionTransaction {
  readonly view: MessageView;
  readonly currency: string | undefined;
  /** Amount the request asked for, minor units. */
  requestedMinor: number | undefined;
  /**
   * Amount held or charged: the answer's authorizedAmount, else the requested amount (answer unknown). An
   * authorization's includes what its increments without a decision may have added (see {@link uncertainMinor}): the
   * most it may hold.
   */
  authorizedMinor: number | undefined;
  /**
   * An authorization's: what each of its increments whose outcome is unknown — no answer, or one that is no decision
   * of the gateway (a 502, "server error or timeout: outcome unknown", gateway.md §4) — and that no timeout reversal
   * has yet resolved added to {@link authorizedMinor}, minor units. It holds authorizedMinor less any of them.
   */
  readonly uncertainMinor: number[];
  capturedMinor: number;
  refundedMinor: number;
  /**
   * An authorization's: what it still holds after a capture of it was voided (the void gives back what that capture
   * took; the rest the capture made the gateway release stays released), minor units; undefined while none was.
   */
  heldAfterVoidMinor?: number;
  /**
   * An authorization's: the reversal or timeout reversal of it answered REVERSED (it holds nothing any more, its
   * increments included); undefined while none was.
   */
  reversedBy?: MessageView;
  /**
   * The conversion its authorization made (a capture or refund inherits its authorization's), or null when it was
   * made in the local currency.
   */
  readonly dcc: DccAuthorization | null;
}

/** Above this many totals, {@link mayHold} accepts any amount between the least and the most. */
const MAX_TOTALS = 1024;

/** The least an authorization may hold: its total without any of its increments whose outcome is unknown. */
function leastAuthorized(tx: SessionTransaction): number | undefined {
  if (tx.authorizedMinor === undefined) return undefined;
  return tx.authorizedMinor - tx.uncertainMinor.reduce((a, b) => a + b, 0);
}

/**
 * Whether `amount` is a total the authorization may hold: its total less any of its increments whose outcome is
 * unknown ({@link SessionTransaction.uncertainMinor}). True when its total is not known.
 */
export function mayHold(tx: SessionTransaction, amount: number): boolean {
  const most = tx.authorizedMinor;
  if (most === undefined) return true;
  let totals = new Set([most]);
  for (const added of tx.uncertainMinor) {
    const next = new Set(totals);
    for (const t of totals) next.add(t - added);
    totals = next;
    if (totals.size > MAX_TOTALS) return amount >= (leastAuthorized(tx) ?? 0) && amount <= most;
  }
  return totals.has(amount);
}

/** An increment, by its transactionId: what it added to its authorization's total, and whether that is known. */
interface IncrementEntry {
  readonly auth: SessionTransaction;
  readonly addedMinor: number;
  /** Its outcome is unknown: it is one of the authorization's {@link SessionTransaction.uncertainMinor}. */
  uncertain: boolean;
}

const APPROVED = new Set([
  'AUTHORIZED',
  'PARTIAL_AUTHORIZED',
  'AUTHORIZED_PENDING_REVIEW',
  'PENDING',
  'COMPLETED',
  'TRANSMITTED',
]);

function responseStatus(view: MessageView): string | undefined {
  return text(view.message.response, 'status');
}

function responseId(view: MessageView): string | undefined {
  return text(view.message.response, 'id');
}

/** The amount a request moves, minor units (totalAmount, additionalAmount or the reversal amount). */
export function requestAmount(view: MessageView): number | undefined {
  const body = view.message.body;
  const currency = text(body, 'orderInformation.amountDetails.currency');
  const amount =
    field(body, 'reversalInformation.amountDetails.totalAmount') ??
    field(body, 'orderInformation.amountDetails.additionalAmount') ??
    field(body, 'orderInformation.amountDetails.totalAmount');
  return minorUnits(amount, currency);
}

function removeOne(list: number[], value: number): void {
  const i = list.indexOf(value);
  if (i >= 0) list.splice(i, 1);
}

export class SessionState {
  /** Originals by the gateway id of their answer (authorizations, sales, captures, refunds, credits). */
  readonly byGatewayId = new Map<string, SessionTransaction>();
  /** Originals by their clientReferenceInformation.transactionId, first sender wins. */
  readonly byTransactionId = new Map<string, { view: MessageView; requestedMinor: number | undefined }>();
  /**
   * Incremental authorizations by the id of their answer: an id of its own, which follow-ons must not name (they
   * name the original authorization, gateway.md §7).
   */
  readonly incrementIds = new Map<string, MessageView>();
  /**
   * Increments that added to an authorization's total, by their transactionId (the one a timeout reversal names),
   * until a timeout reversal answered REVERSED takes what they added back out.
   */
  private readonly increments = new Map<string, IncrementEntry>();
  /** The terminal's country (9F1A) as first sent, with the index of that message. */
  country: { digits: string; index: number } | undefined;
  /** The rates the session's DCC offers gave, in order. */
  readonly offers: DccOfferRate[] = [];
  /** How many DCC offer requests the session sent, and how many of them have no known answer. */
  offerMessages = 0;
  unansweredOffers = 0;

  /**
   * The authorization `original` (an authorization or increment of the session) holds money under, by its gateway id:
   * an increment's is the authorization its path names (gateway.md §7: it keeps the original's id); undefined when
   * the session does not know it (an original without answer).
   */
  authorizationOf(original: MessageView): SessionTransaction | undefined {
    const id = original.service === 'incremental' ? original.targetId : responseId(original);
    return id !== undefined ? this.byGatewayId.get(id) : undefined;
  }

  /** Whether `id` is the gateway id of a refund of this session. */
  isRefundId(id: string): boolean {
    const tx = this.byGatewayId.get(id);
    return tx !== undefined && (tx.view.service === 'refund-capture' || tx.view.service === 'refund-payment');
  }

  /**
   * A void of a capture answered VOIDED (by the capture's id, or a timeout void by its transactionId): the capture moved
   * nothing, and — when the void answered the amount it voided, the gateway having had the capture — its authorization
   * holds what that capture took (gateway.md §7: voiding a capture leaves the hold in place; the automatic partial
   * reversal of a capture below the authorization is not undone).
   */
  private captureVoided(view: MessageView): void {
    const byId = view.targetId !== undefined ? this.byGatewayId.get(view.targetId) : undefined;
    const transactionId = text(view.message.body, 'clientReferenceInformation.transactionId');
    const capture =
      view.service === 'void-capture'
        ? byId?.view
        : transactionId !== undefined
          ? this.byTransactionId.get(transactionId)?.view
          : undefined;
    if (capture?.service !== 'capture' || capture.targetId === undefined) return;
    const auth = this.byGatewayId.get(capture.targetId);
    const took = requestAmount(capture);
    if (auth === undefined || took === undefined) return;
    auth.capturedMinor = Math.max(0, auth.capturedMinor - took);
    // A timeout void of a capture that never reached the gateway is answered without an amount: nothing was captured,
    // nothing released, and the whole hold stands.
    const voided = field(view.message.response, 'voidAmountDetails.voidAmount');
    if (voided === undefined) return;
    auth.heldAfterVoidMinor = Math.min(auth.heldAfterVoidMinor ?? took, took);
  }

  /**
   * An increment: an approval raises its authorization to the total the answer states (else by the amount asked); a
   * refusal (DECLINED, a 400) adds nothing; any other answer — none, a 502 or another HTTP status that is no decision,
   * a status the service does not document — is an outcome unknown (gateway.md §4), which may have raised the hold:
   * counted in the most it may hold, and as uncertain, until its timeout reversal resolves it.
   */
  private incremented(
    view: MessageView,
    target: SessionTransaction,
    requested: number,
    answeredAmount: number | undefined,
    transactionId: string | undefined,
  ): void {
    const response = view.message.response;
    const status = responseStatus(view);
    const httpStatus = view.message.httpStatus;
    // A 400 refuses the request; only a 200/201 status is a decision (the capture may not have recorded the HTTP status).
    if (httpStatus === 400) return;
    const decision =
      response !== undefined &&
      status !== undefined &&
      (httpStatus === undefined || httpStatus === 200 || httpStatus === 201);
    if (decision && refusedStatus('incremental', status)) return;
    const approved = decision && APPROVED.has(status);
    const before = target.authorizedMinor ?? 0;
    if (approved && answeredAmount !== undefined) {
      // The gateway states the new total: whatever the earlier increments without a decision did is in it.
      target.authorizedMinor = answeredAmount;
      target.uncertainMinor.length = 0;
      for (const entry of this.increments.values()) if (entry.auth === target) entry.uncertain = false;
    } else {
      target.authorizedMinor = before + requested;
      if (!approved) target.uncertainMinor.push(requested);
    }
    if (transactionId !== undefined && !isMasked(transactionId) && !this.increments.has(transactionId))
      this.increments.set(transactionId, {
        auth: target,
        addedMinor: Math.max(0, target.authorizedMinor - before),
        uncertain: !approved,
      });
  }

  /**
   * A timeout reversal of an increment: answered REVERSED, the increment holds nothing any more and its authorization
   * what it held before it; without a decision (no answer, a 502), whether the increment still holds is unknown.
   */
  private incrementReversed(view: MessageView, transactionId: string | undefined): void {
    const entry = transactionId !== undefined ? this.increments.get(transactionId) : undefined;
    if (entry === undefined) return;
    const { auth } = entry;
    const status = responseStatus(view);
    if (status === 'REVERSED') {
      auth.authorizedMinor = Math.max(0, (auth.authorizedMinor ?? 0) - entry.addedMinor);
      if (entry.uncertain) removeOne(auth.uncertainMinor, entry.addedMinor);
      this.increments.delete(transactionId!);
      return;
    }
    const httpStatus = view.message.httpStatus;
    const unknown =
      view.message.response === undefined ||
      status === undefined ||
      (httpStatus !== undefined && httpStatus !== null && httpStatus >= 500);
    if (unknown && !entry.uncertain) {
      entry.uncertain = true;
      auth.uncertainMinor.push(entry.addedMinor);
    }
  }

  /**
   * A timeout reversal of an authorization (not an increment) answered REVERSED: the authorization, its increments
   * included, holds nothing any more. Without a decision, whether it still holds is unknown: its record stands.
   */
  private authorizationReversed(view: MessageView, transactionId: string | undefined): void {
    const original = transactionId !== undefined ? this.byTransactionId.get(transactionId)?.view : undefined;
    if (original === undefined || original.service === 'incremental' || responseStatus(view) !== 'REVERSED')
      return;
    const auth = this.authorizationOf(original);
    if (auth !== undefined) this.reversed(auth, view);
  }

  /** `auth` reversed by `view` (spec 001 state table: REVERSED): it holds nothing, its increments included. */
  private reversed(auth: SessionTransaction, view: MessageView): void {
    auth.authorizedMinor = 0;
    auth.uncertainMinor.length = 0;
    auth.reversedBy = view;
    for (const [id, entry] of this.increments) if (entry.auth === auth) this.increments.delete(id);
  }

  /** Files what `view` established, after its rules ran. */
  record(view: MessageView): void {
    const service = view.service;
    if (service === 'dcc-offer') {
      this.offerMessages += 1;
      if (view.message.response === undefined) this.unansweredOffers += 1;
      this.offers.push(...offerRates(view));
      return;
    }
    if (!isServiceName(service)) return;
    const country = tagDigits(view.tags, '9F1A');
    if (country !== undefined && this.country === undefined)
      this.country = { digits: country, index: view.index };
    const requested = requestAmount(view);
    const transactionId = text(view.message.body, 'clientReferenceInformation.transactionId');
    if (
      transactionId !== undefined &&
      !isMasked(transactionId) &&
      ORIGINALS.has(service) &&
      !this.byTransactionId.has(transactionId)
    )
      this.byTransactionId.set(transactionId, { view, requestedMinor: requested });
    const status = responseStatus(view);
    const answered = view.message.response !== undefined;
    const approved = !answered || (status !== undefined && APPROVED.has(status));
    // A capture or refund the gateway refused moved nothing; one approved, or without a known answer, may have.
    const refused = answered && status !== undefined && refusedStatus(service, status);
    const currency = text(view.message.body, 'orderInformation.amountDetails.currency');
    const answeredAmount = minorUnits(
      field(view.message.response, 'orderInformation.amountDetails.authorizedAmount'),
      currency,
    );
    const target = view.targetId !== undefined ? this.byGatewayId.get(view.targetId) : undefined;
    if (service === 'incremental') {
      if (target && requested !== undefined)
        this.incremented(view, target, requested, answeredAmount, transactionId);
    } else if (service === 'timeout-reversal') {
      this.incrementReversed(view, transactionId);
      this.authorizationReversed(view, transactionId);
    } else if (service === 'reversal') {
      if (target && status === 'REVERSED') this.reversed(target, view);
    } else if (service === 'capture') {
      if (target && !refused && requested !== undefined) target.capturedMinor += requested;
    } else if (service === 'refund-capture' || service === 'refund-payment') {
      if (target && !refused && requested !== undefined) target.refundedMinor += requested;
    }
    if ((service === 'timeout-void' || service === 'void-capture') && status === 'VOIDED')
      this.captureVoided(view);
    const id = responseId(view);
    if (service === 'incremental' && id !== undefined && !this.byGatewayId.has(id))
      this.incrementIds.set(id, view);
    if (id === undefined || !KEEPS_ID.has(service)) return;
    const authorized = approved ? (answeredAmount ?? requested) : 0;
    this.byGatewayId.set(id, {
      view,
      currency,
      requestedMinor: requested,
      authorizedMinor: authorized,
      // A sale is captured as it is approved; a capture holds what it captured (refunds refer to it).
      capturedMinor: service === 'sale' || service === 'capture' ? (authorized ?? 0) : 0,
      uncertainMinor: [],
      refundedMinor: 0,
      dcc: target !== undefined ? target.dcc : dccAuthorizationOf(view),
    });
  }
}

/** Services whose request carries a transactionId of its own (timeout requests are keyed by it). */
export const ORIGINALS: ReadonlySet<ServiceName> = new Set([
  'avr',
  'preauth',
  'incremental',
  'sale',
  'capture',
  'refund-capture',
  'refund-payment',
  'credit',
]);

/** Services whose answer's id later requests refer to. */
const KEEPS_ID: ReadonlySet<ServiceName> = new Set([
  'avr',
  'preauth',
  'sale',
  'capture',
  'refund-capture',
  'refund-payment',
  'credit',
]);
