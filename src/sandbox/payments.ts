/**
 * The payment services (spec 001; reference/gateway.md §2–4, §7): authorization, pre-authorization, sale,
 * zero-amount account verification, incremental authorization, reversal, timeout reversal, capture, refunds,
 * standalone credit, the four voids, timeout void, GET and status checks. Every money rule is enforced here and
 * every change is committed to the store before the answer is built.
 */
import { createHash, randomFillSync } from 'node:crypto';
import { currencyByAlpha, parseDecimal, toDecimalString } from '../money/index.js';
import { maskPan } from '../emv/index.js';
import { cardTypeOfPan, isExpired, luhnValid, readTrackData } from './card.js';
import { checkDccFollowOn, recordDccAuthorization, type DccAuthorizationTerms } from './dcc.js';
import {
  checkEmvTags,
  decodeEmvTags,
  NEVER_SEND_TAGS,
  type DecodedTag,
  type EmvContext,
} from './emv-rules.js';
import { GatewayAnswer } from './errors.js';
import { FieldReader, invalidRequest, isoSeconds, valueAt } from './fields.js';
import { captureRule, heldAmount, refundRule, reversalRule, type MoneyRefusal } from './money-rules.js';
import type { LedgerTransaction, SandboxStore, TxKind } from './store.js';
import {
  amountTrigger,
  DECLINING_CARDS,
  faultBeforeCommit,
  type DeclineReason,
  type FaultKind,
  type TriggerOutcome,
} from './triggers.js';

/** What the payment services need from the server. */
export interface ServiceContext {
  store: SandboxStore;
  now(): Date;
  /** True while a transaction created at `createdAt` may still be voided (before the settlement cut-off). */
  voidable(createdAt: Date): boolean;
  /**
   * Which id the answer to an incremental authorization carries: reference/gateway.md §2 says the original's,
   * §7 a new id for the increment (with links to the original). The facts conflict, so it is configurable.
   */
  incrementalAnswerId: 'increment' | 'original';
  /**
   * DCC: checks a converted authorization against the offer, collecting problems in `reader`; returns the offer and
   * family it was checked against (its captures and refunds are held to them), undefined when not converted.
   */
  checkDccAuthorization(
    reader: FieldReader,
    merchantId: string,
    now: Date,
  ): DccAuthorizationTerms | undefined;
}

/** One authenticated API request. */
export interface ApiCall {
  merchantId: string;
  method: string;
  /** Path without query string. */
  path: string;
  body: Record<string, unknown>;
  /** Set by the service once the path names an existing transaction, so that a refusal is filed under it. */
  target?: LedgerTransaction;
  /** Decoded `pointOfSaleInformation.emv.tags`, for the ledger. */
  emvTags?: DecodedTag[];
}

/** The answer of a service, with the transactions it created or changed. */
export interface ApiOutcome {
  httpStatus: number;
  body: Record<string, unknown>;
  /** Transactions this request created (their outcome is unknown to the client if the answer is lost). */
  created: LedgerTransaction[];
  /** Existing transactions this request acted on or replayed. */
  touched: LedgerTransaction[];
  /** Fault selected by an amount trigger. */
  fault?: FaultKind;
  /** Set when an identical repeated request got the first answer again. */
  replayOf?: LedgerTransaction;
}

const PARKING_AUTH_COMMENTS = ['Parking Authorization', 'Parking Auth'];
const ENTRY_MODES = ['contact', 'contactless', 'swiped', 'keyed', 'msd'];
const ORIGINAL_KINDS: ReadonlySet<TxKind> = new Set([
  'authorization',
  'sale',
  'verification',
  'capture',
  'refund',
  'credit',
]);
const MONEY_OUT_KINDS: ReadonlySet<TxKind> = new Set(['capture', 'sale', 'refund', 'credit']);
/** Refunds are accepted within 180 days of the authorization (reference/gateway.md §7). */
const REFUND_WINDOW_MS = 180 * 24 * 3600 * 1000;
/** A lodging guide caps increments at 100 per authorization (reference/gateway.md §7). */
const MAX_INCREMENTS = 100;

const RESPONSE_CODES: Readonly<Record<DeclineReason, string>> = {
  PROCESSOR_DECLINED: '05',
  INSUFFICIENT_FUND: '51',
  EXPIRED_CARD: '54',
  STOLEN_LOST_CARD: '43',
  ISSUER_UNAVAILABLE: '91',
  UNAUTHORIZED_CARD: '57',
  INVALID_ACCOUNT: '14',
  GENERAL_DECLINE: '05',
  CONTACT_PROCESSOR: '01',
  ALLOWABLE_PIN_RETRIES_EXCEEDED: '75',
  PROCESSOR_ERROR: '96',
};

/** Random bytes for ids, refilled a page at a time (one call into the CSPRNG per ~180 ids, not five per id). */
const ID_RANDOM = Buffer.alloc(4096);
let idRandomPos = ID_RANDOM.length;

/** A 22-digit gateway id, like the real gateway's: first digit 1-9, then uniform digits (bytes 250-255 skipped). */
function newId(): string {
  let s = '';
  while (s.length < 22) {
    if (idRandomPos >= ID_RANDOM.length) {
      randomFillSync(ID_RANDOM);
      idRandomPos = 0;
    }
    const b = ID_RANDOM[idRandomPos++] ?? 255;
    if (b >= 250) continue;
    const digit = b % 10;
    if (s.length === 0 && digit === 0) continue;
    s += String(digit);
  }
  return s;
}

/**
 * Canonical JSON of a parsed body: keys sorted at every level, otherwise exactly `JSON.stringify` (the text that
 * ledgers written before this function existed were fingerprinted over), built in one pass.
 */
function canonicalJson(v: unknown): string {
  if (typeof v !== 'object' || v === null) return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) {
    let out = '[';
    for (let i = 0; i < v.length; i++) out += (i > 0 ? ',' : '') + canonicalJson(v[i]);
    return `${out}]`;
  }
  const keys = Object.keys(v).sort();
  let out = '{';
  let first = true;
  for (const k of keys) {
    const value = (v as Record<string, unknown>)[k];
    if (value === undefined || typeof value === 'function') continue;
    out += `${first ? '' : ','}${JSON.stringify(k)}:${canonicalJson(value)}`;
    first = false;
  }
  return `${out}}`;
}

/** Canonical JSON (sorted keys) for DUPLICATE_REQUEST; never stored in clear: hashed. */
function fingerprint(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('base64');
}

function link(href: string, method: string): { href: string; method: string } {
  return { href, method };
}

function approved(tx: LedgerTransaction): boolean {
  return tx.status === 'AUTHORIZED' || tx.status === 'PARTIAL_AUTHORIZED' || tx.status === 'PENDING';
}

/**
 * The fault an amount trigger selects for a follow-on that cannot decline or be partial (capture, refund): only
 * parking (card-present) requests react to triggers.
 */
function followOnFault(parking: boolean, amount: number): FaultKind | undefined {
  if (!parking) return undefined;
  const trigger = amountTrigger(amount, { canDecline: false, canBePartial: false });
  return trigger.kind === 'fault' ? trigger.fault : undefined;
}

/** Effective captured amount: a voided capture or sale has moved nothing. */
function effectiveCaptured(tx: LedgerTransaction): number {
  return tx.voided ? 0 : tx.amounts.captured;
}

/** Amount still held on an authorization. */
export function remainingHold(auth: LedgerTransaction): number {
  return heldAmount(auth.amounts);
}

/** The payment services over one store. */
export class PaymentService {
  constructor(private readonly ctx: ServiceContext) {}

  private fail(
    reason: string,
    message: string,
    field?: string,
    kind: 'MISSING_FIELD' | 'INVALID_DATA' = 'INVALID_DATA',
  ): GatewayAnswer {
    return invalidRequest(this.ctx.now(), reason, message, field ? [{ field, reason: kind }] : []);
  }

  /** The 400 answer of a money rule's refusal (money-rules.ts). */
  private refuse(refusal: MoneyRefusal): GatewayAnswer {
    return this.fail(refusal.reason, refusal.message, refusal.field);
  }

  private target(call: ApiCall, id: string): LedgerTransaction | undefined {
    const tx = this.ctx.store.transactions.get(id);
    if (!tx || tx.merchantId !== call.merchantId) return undefined;
    call.target = tx;
    return tx;
  }

  /** Finds an earlier original with the same transactionId: replays an identical request, refuses a different one. */
  private duplicate(call: ApiCall, transactionId: string | undefined): ApiOutcome | undefined {
    if (transactionId === undefined) return undefined;
    for (const tx of this.ctx.store.withTransactionId(call.merchantId, transactionId)) {
      if (!ORIGINAL_KINDS.has(tx.kind)) continue;
      call.target = tx;
      if (tx.bodyFingerprint === fingerprint(call.body))
        return {
          httpStatus: tx.answer.httpStatus,
          body: tx.answer.body,
          created: [],
          touched: [tx],
          replayOf: tx,
        };
      throw this.fail(
        'DUPLICATE_REQUEST',
        'clientReferenceInformation.transactionId was already used with a different request',
        'clientReferenceInformation.transactionId',
      );
    }
    return undefined;
  }

  private newTx(
    call: ApiCall,
    kind: TxKind,
    currency: string,
    fields: Partial<LedgerTransaction>,
  ): LedgerTransaction {
    const now = this.ctx.now();
    const code = valueAt(call.body, 'clientReferenceInformation.code');
    const comments = valueAt(call.body, 'clientReferenceInformation.comments');
    const transactionId = valueAt(call.body, 'clientReferenceInformation.transactionId');
    return {
      id: newId(),
      kind,
      merchantId: call.merchantId,
      ...(typeof transactionId === 'string' ? { transactionId } : {}),
      ...(typeof code === 'string' ? { code } : {}),
      ...(typeof comments === 'string' ? { comments } : {}),
      status: 'PENDING',
      currency,
      amounts: { requested: 0, authorized: 0, captured: 0, reversed: 0, refunded: 0 },
      voided: false,
      createdAt: now.toISOString(),
      outcomeUnknown: false,
      answer: { httpStatus: 201, body: {} },
      bodyFingerprint: fingerprint(call.body),
      requests: [],
      ...fields,
    };
  }

  /** Stores a transaction with its answer and returns the outcome. */
  private commit(
    tx: LedgerTransaction,
    httpStatus: number,
    body: Record<string, unknown>,
    touched: LedgerTransaction[],
    fault?: FaultKind,
  ): ApiOutcome {
    tx.answer = { httpStatus, body };
    this.ctx.store.saveTx(tx);
    for (const t of touched) this.ctx.store.saveTx(t);
    return { httpStatus, body, created: [tx], touched, ...(fault ? { fault } : {}) };
  }

  private clientRef(tx: LedgerTransaction): Record<string, unknown> {
    return {
      ...(tx.code !== undefined ? { code: tx.code } : {}),
      ...(tx.transactionId !== undefined ? { transactionId: tx.transactionId } : {}),
    };
  }

  /** Decodes and checks `emv.tags` when present; returns the decoded tags or records the problem. */
  private emvTags(r: FieldReader, call: ApiCall, required: boolean): DecodedTag[] | undefined {
    const raw = r.text('pointOfSaleInformation.emv.tags', required);
    if (raw === undefined) return undefined;
    const decoded = decodeEmvTags(raw);
    if (!decoded.ok) {
      r.invalid('pointOfSaleInformation.emv.tags', decoded.message);
      return undefined;
    }
    call.emvTags = decoded.tags;
    return decoded.tags;
  }

  /** Card-present checks shared by payments and credits (spec 001, Card-present parking; gateway.md §3). */
  private cardPresent(
    r: FieldReader,
    call: ApiCall,
    service: 'authorization' | 'pre-authorization' | 'sale' | 'verification' | 'credit',
    currency: string | undefined,
    amountMinor: number | undefined,
  ): { pan?: string; expiry?: string; cardType?: '001' | '002'; entryMode?: string; emv?: DecodedTag[] } {
    for (const f of ['code', 'transactionId', 'comments']) r.text(`clientReferenceInformation.${f}`, true);
    for (const f of ['developerId', 'solutionId', 'thirdPartyCertificationNumber'])
      r.text(
        `clientReferenceInformation.partner.${f}`,
        service !== 'credit' || f === 'thirdPartyCertificationNumber',
      );
    r.localDateTime('merchantInformation.transactionLocalDateTime', true);
    const typeText = r.text('paymentInformation.card.type', true);
    let cardType: '001' | '002' | undefined;
    if (typeText !== undefined) {
      if (typeText === '001' || typeText === '002') cardType = typeText;
      else
        throw this.fail(
          'CARD_TYPE_NOT_ACCEPTED',
          'parking accepts card types 001 and 002 only',
          'paymentInformation.card.type',
        );
    }
    const entryMode = r.oneOf('pointOfSaleInformation.entryMode', ENTRY_MODES, true);
    const catLevel = r.text('pointOfSaleInformation.catLevel', service !== 'credit', true);
    // Spec 001: parking is unattended (2) or attended mobile (6).
    if (catLevel !== undefined && catLevel !== '2' && catLevel !== '6')
      r.invalid(
        'pointOfSaleInformation.catLevel',
        'parking catLevel must be 2 (unattended) or 6 (attended mobile)',
      );
    const capability = r.oneOf(
      'pointOfSaleInformation.terminalCapability',
      ['1', '2', '3', '4', '5'],
      true,
      true,
    );
    const emvRead = entryMode === 'contact' || entryMode === 'contactless';
    if (emvRead && capability !== undefined && capability !== '4' && capability !== '5')
      r.invalid('pointOfSaleInformation.terminalCapability', 'an EMV read needs terminalCapability 4 or 5');
    r.oneOf(
      'pointOfSaleInformation.terminalPinCapability',
      ['0', '1', '2', '4', '5', '6', '7', '8', '9', '10', '11', '12'],
      true,
      true,
    );
    r.oneOf('processingInformation.commerceIndicator', ['retail'], true);
    if (service !== 'credit') {
      const authIndicator = r.oneOf(
        'processingInformation.authorizationOptions.authIndicator',
        ['0', '1'],
        true,
        true,
      );
      // Spec 001 lists `0` for pre-authorizations; a sale may be final (gateway.md §3: `1`), both are accepted.
      if (service !== 'sale' && authIndicator === '1')
        r.invalid(
          'processingInformation.authorizationOptions.authIndicator',
          'a pre-authorization has authIndicator 0',
        );
    }
    if (service === 'sale' && catLevel === '6') {
      r.text('paymentInformation.initiationChannel', true);
      r.text('pointOfSaleInformation.serviceCode', true);
      if (cardType === '002')
        r.oneOf('pointOfSaleInformation.isDedicatedHardwareTerminal', ['0', '1'], true, true);
    }
    // Card data: track data for stripe and chip reads, the number for keyed entry.
    let pan: string | undefined;
    let expiry: string | undefined;
    if (entryMode === 'keyed') {
      const number = r.text('paymentInformation.card.number', true);
      const month = r.text('paymentInformation.card.expirationMonth', true);
      const year = r.text('paymentInformation.card.expirationYear', true);
      if (number !== undefined) pan = number;
      if (month !== undefined && year !== undefined) expiry = `${year.slice(-2)}${month.padStart(2, '0')}`;
    } else if (entryMode !== undefined) {
      const track = r.text('pointOfSaleInformation.trackData', true);
      if (track !== undefined) {
        const read = readTrackData(track);
        if (!read)
          r.invalid('pointOfSaleInformation.trackData', 'trackData holds no track 1 or track 2 data');
        else {
          pan = read.pan;
          expiry = read.expiry;
        }
      }
    }
    if (pan !== undefined) {
      const field =
        entryMode === 'keyed' ? 'paymentInformation.card.number' : 'pointOfSaleInformation.trackData';
      if (!luhnValid(pan)) throw this.fail('INVALID_CARD', 'the card number fails the Luhn check', field);
      if (cardType !== undefined && cardTypeOfPan(pan) !== cardType)
        r.invalid(
          'paymentInformation.card.type',
          'paymentInformation.card.type does not match the card number',
        );
    }
    let emv: DecodedTag[] | undefined;
    if (emvRead) {
      emv = this.emvTags(r, call, true);
      const has5F34 = emv?.some((t) => t.tag === '5F34') ?? false;
      const csn = r.text('pointOfSaleInformation.emv.cardSequenceNumber', has5F34, true);
      if (emv && cardType) {
        const context: EmvContext = service === 'credit' ? 'refund' : 'authorization';
        const currencyNumeric = currency ? currencyByAlpha(currency)?.numeric : undefined;
        const dcc = r.has('orderInformation.amountDetails.currencyConversion');
        const problems = checkEmvTags(emv, {
          cardType,
          context,
          ...(amountMinor !== undefined && !dcc ? { amountMinor } : {}),
          ...(currencyNumeric !== undefined && !dcc ? { currencyNumeric } : {}),
          ...(csn !== undefined ? { cardSequenceNumber: csn } : {}),
          transactionTypes: service === 'credit' ? ['20'] : ['00'],
        });
        if (problems.length) r.invalid('pointOfSaleInformation.emv.tags', problems.join('; '));
      }
    } else if (r.has('pointOfSaleInformation.emv.tags')) {
      emv = this.emvTags(r, call, false);
      if (emv?.some((t) => NEVER_SEND_TAGS.has(t.tag)))
        r.invalid('pointOfSaleInformation.emv.tags', 'emv.tags carries a tag that must never be sent');
    }
    return {
      ...(pan !== undefined ? { pan } : {}),
      ...(expiry !== undefined ? { expiry } : {}),
      ...(cardType !== undefined ? { cardType } : {}),
      ...(entryMode !== undefined ? { entryMode } : {}),
      ...(emv !== undefined ? { emv } : {}),
    };
  }

  /** POST /pts/v2/payments: authorization, pre-authorization, sale, account verification (card present or not). */
  createPayment(call: ApiCall): ApiOutcome {
    const now = this.ctx.now();
    const r = new FieldReader(call.body, now);
    const replay = this.duplicate(call, r.text('clientReferenceInformation.transactionId', false));
    if (replay) return replay;
    const currency = r.currency('orderInformation.amountDetails.currency');
    const total = r.amount('orderInformation.amountDetails.totalAmount', currency);
    const capture = r.flag('processingInformation.capture') === true;
    const cardPresent = r.has('pointOfSaleInformation');
    let pan: string | undefined;
    let expiry: string | undefined;
    let cardType: string | undefined;
    let entryMode: string | undefined;
    let emv: DecodedTag[] | undefined;
    let service: 'authorization' | 'sale' | 'verification' = capture
      ? 'sale'
      : total === 0
        ? 'verification'
        : 'authorization';
    if (cardPresent) {
      const comments = r.text('clientReferenceInformation.comments', true);
      if (capture && total === 0)
        r.invalid('orderInformation.amountDetails.totalAmount', 'a sale cannot be for 0.00');
      // Spec 001: the comments value names the service.
      const expected =
        service === 'sale'
          ? ['Parking Sale']
          : service === 'verification'
            ? ['Parking AVR']
            : PARKING_AUTH_COMMENTS;
      if (comments !== undefined && !expected.includes(comments))
        r.invalid(
          'clientReferenceInformation.comments',
          `comments must be ${expected.join(' or ')} for this service`,
        );
      const read = this.cardPresent(
        r,
        call,
        service === 'sale' ? 'sale' : service === 'verification' ? 'verification' : 'pre-authorization',
        currency,
        total,
      );
      ({ pan, expiry, cardType, entryMode, emv } = read);
    } else {
      const number = r.text('paymentInformation.card.number', true);
      const month = r.text('paymentInformation.card.expirationMonth', true);
      const year = r.text('paymentInformation.card.expirationYear', true);
      cardType = r.text('paymentInformation.card.type', false);
      if (number !== undefined) {
        if (!/^\d{12,19}$/.test(number) || !luhnValid(number))
          throw this.fail('INVALID_CARD', 'the card number is not valid', 'paymentInformation.card.number');
        pan = number;
        cardType ??= cardTypeOfPan(number);
      }
      if (month !== undefined && year !== undefined) expiry = `${year.slice(-2)}${month.padStart(2, '0')}`;
    }
    const dcc =
      r.has('orderInformation.amountDetails.currencyConversion') && currency !== undefined
        ? this.ctx.checkDccAuthorization(r, call.merchantId, now)
        : undefined;
    r.finish();
    if (currency === undefined || total === undefined)
      throw this.fail('MISSING_FIELD', 'amount and currency are required');
    if (service === 'sale' && !cardPresent && total === 0) service = 'verification';

    let decline: DeclineReason | undefined = pan !== undefined ? DECLINING_CARDS[pan] : undefined;
    if (!decline && expiry !== undefined && isExpired(expiry, now)) decline = 'EXPIRED_CARD';
    // Amount triggers apply to card-present requests (the terminal's); card-not-present SDK samples such as
    // 102.21 USD must run unchanged, so only the declining test cards act on them.
    // A converted (DCC family A) authorization triggers on the merchant's original amount, which the tester chose.
    const original = valueAt(call.body, 'orderInformation.amountDetails.originalAmount');
    const originalCurrency = valueAt(call.body, 'orderInformation.amountDetails.originalCurrency');
    let triggerAmount = total;
    if (
      typeof original === 'string' &&
      typeof originalCurrency === 'string' &&
      currencyByAlpha(originalCurrency)
    ) {
      try {
        triggerAmount = parseDecimal(original, originalCurrency);
      } catch {
        triggerAmount = total;
      }
    }
    const trigger: TriggerOutcome = cardPresent
      ? amountTrigger(triggerAmount, { canDecline: true, canBePartial: service !== 'verification' })
      : { kind: 'approve' };
    let fault: FaultKind | undefined;
    let authorized = total;
    if (!decline) {
      switch (trigger.kind) {
        case 'approve':
          break;
        case 'decline':
          decline = trigger.reason;
          break;
        case 'partial':
          authorized = trigger.authorizedMinor;
          break;
        case 'fault':
          if (faultBeforeCommit(trigger.fault))
            return { httpStatus: 0, body: {}, created: [], touched: [], fault: trigger.fault };
          fault = trigger.fault;
          break;
      }
    }
    const kind: TxKind = service;
    const status = decline ? 'DECLINED' : authorized < total ? 'PARTIAL_AUTHORIZED' : 'AUTHORIZED';
    const tx = this.newTx(call, kind, currency, {
      status,
      amounts: {
        requested: total,
        authorized: decline ? 0 : authorized,
        captured: !decline && service === 'sale' ? authorized : 0,
        reversed: 0,
        refunded: 0,
      },
      card: {
        ...(pan !== undefined ? { masked: maskPan(pan) } : {}),
        ...(cardType !== undefined ? { type: cardType } : {}),
        ...(entryMode !== undefined ? { entryMode } : {}),
      },
      emv: { present: emv !== undefined, contact: emv !== undefined && entryMode === 'contact' },
    });
    const base = `/pts/v2/payments/${tx.id}`;
    const links: Record<string, unknown> = { self: link(base, 'GET') };
    if (!decline && service === 'sale') {
      links.void = link(`${base}/voids`, 'POST');
      links.refund = link(`${base}/refunds`, 'POST');
    } else if (!decline) {
      links.authReversal = link(`${base}/reversals`, 'POST');
      if (service === 'authorization') links.capture = link(`${base}/captures`, 'POST');
    }
    const body: Record<string, unknown> = {
      _links: links,
      id: tx.id,
      submitTimeUtc: isoSeconds(now),
      status,
      reconciliationId: tx.id.slice(-12),
      clientReferenceInformation: this.clientRef(tx),
      orderInformation: {
        amountDetails: {
          totalAmount: toDecimalString(total, currency),
          authorizedAmount: toDecimalString(tx.amounts.authorized, currency),
          currency,
        },
      },
      ...(cardType !== undefined
        ? {
            paymentAccountInformation: { card: { type: cardType } },
            paymentInformation: { card: { type: cardType } },
          }
        : {}),
      processorInformation: {
        responseCode: decline ? RESPONSE_CODES[decline] : '00',
        ...(decline ? {} : { approvalCode: tx.id.slice(-6) }),
        transactionId: tx.id.slice(-15),
        networkTransactionId: tx.id.slice(-15),
        systemTraceAuditNumber: tx.id.slice(-6),
        retrievalReferenceNumber: tx.id.slice(-12),
      },
      ...(decline ? { errorInformation: { reason: decline, message: `Decline - ${decline}` } } : {}),
      ...(emv ? { pointOfSaleInformation: { emv: { tags: decline ? '8A023035' : '8A023030' } } } : {}),
    };
    // Spec 001: a capture or refund of a converted payment repeats its terms; remember which offer it used.
    if (dcc !== undefined && !decline) recordDccAuthorization(this.ctx.store, dcc, tx.id);
    return this.commit(tx, 201, body, [], fault);
  }

  /** PATCH /pts/v2/payments/{id}: incremental authorization (gateway.md §7; additionalAmount or new totalAmount). */
  increment(call: ApiCall, id: string): ApiOutcome {
    const now = this.ctx.now();
    const auth = this.target(call, id);
    if (!auth || (auth.kind !== 'authorization' && auth.kind !== 'verification'))
      throw this.fail('INVALID_PAYMENT_ID', 'no authorization with this id', 'id');
    if (auth.status === 'REVERSED')
      throw this.fail('AUTH_ALREADY_REVERSED', 'the authorization is reversed', 'id');
    if (!approved(auth)) throw this.fail('INVALID_PAYMENT_ID', 'the authorization was not approved', 'id');
    if (auth.status === 'REVERSED' || (auth.amounts.reversed > 0 && auth.amounts.captured === 0))
      throw this.fail('AUTH_ALREADY_REVERSED', 'the authorization is reversed', 'id');
    if (auth.amounts.captured > 0)
      throw this.fail('TRANSACTION_ALREADY_SETTLED', 'the authorization is captured', 'id');
    const r = new FieldReader(call.body, now);
    const currency = r.currency('orderInformation.amountDetails.currency');
    if (currency !== undefined && currency !== auth.currency)
      r.invalid('orderInformation.amountDetails.currency', 'currency differs from the authorization');
    const additional = r.amount('orderInformation.amountDetails.additionalAmount', auth.currency, false);
    const newTotal = r.amount('orderInformation.amountDetails.totalAmount', auth.currency, false);
    if (additional === undefined && newTotal === undefined)
      r.missing('orderInformation.amountDetails.additionalAmount');
    if (additional !== undefined && newTotal !== undefined)
      r.invalid(
        'orderInformation.amountDetails.totalAmount',
        'send additionalAmount or totalAmount, not both',
      );
    const add = additional ?? (newTotal !== undefined ? newTotal - auth.amounts.authorized : 0);
    if (add <= 0 && (additional !== undefined || newTotal !== undefined))
      r.invalid(
        additional !== undefined
          ? 'orderInformation.amountDetails.additionalAmount'
          : 'orderInformation.amountDetails.totalAmount',
        'an increment must raise the authorized amount',
      );
    if (auth.card?.entryMode !== undefined) {
      r.oneOf('clientReferenceInformation.comments', ['Parking Incremental Auth'], true);
      r.localDateTime('merchantInformation.transactionLocalDateTime', true);
      if (r.flag('processingInformation.authorizationOptions.initiator.storedCredentialUsed') !== true)
        r.invalid(
          'processingInformation.authorizationOptions.initiator.storedCredentialUsed',
          'storedCredentialUsed must be true',
        );
    }
    r.finish();
    if ((auth.increments ?? 0) >= MAX_INCREMENTS)
      throw this.fail('NOT_SUPPORTED', `at most ${MAX_INCREMENTS} increments per authorization`);
    const trigger: TriggerOutcome =
      auth.card?.entryMode !== undefined
        ? amountTrigger(add, { canDecline: true, canBePartial: false })
        : { kind: 'approve' };
    let fault: FaultKind | undefined;
    let decline: DeclineReason | undefined;
    switch (trigger.kind) {
      case 'approve':
      case 'partial':
        break;
      case 'decline':
        decline = trigger.reason;
        break;
      case 'fault':
        if (faultBeforeCommit(trigger.fault))
          return { httpStatus: 0, body: {}, created: [], touched: [auth], fault: trigger.fault };
        fault = trigger.fault;
        break;
    }
    const tx = this.newTx(call, 'incremental', auth.currency, {
      parentId: auth.id,
      status: decline ? 'DECLINED' : 'AUTHORIZED',
      amounts: { requested: add, authorized: decline ? 0 : add, captured: 0, reversed: 0, refunded: 0 },
    });
    if (!decline) {
      auth.amounts.authorized += add;
      auth.increments = (auth.increments ?? 0) + 1;
    }
    const base = `/pts/v2/payments/${auth.id}`;
    const body: Record<string, unknown> = {
      _links: {
        self: link(`/pts/v2/payments/${tx.id}`, 'GET'),
        capture: link(`${base}/captures`, 'POST'),
        authReversal: link(`${base}/reversals`, 'POST'),
      },
      id: this.ctx.incrementalAnswerId === 'original' ? auth.id : tx.id,
      submitTimeUtc: isoSeconds(now),
      status: tx.status,
      reconciliationId: tx.id.slice(-12),
      clientReferenceInformation: this.clientRef(tx),
      orderInformation: {
        amountDetails: {
          additionalAmount: toDecimalString(add, auth.currency),
          authorizedAmount: toDecimalString(auth.amounts.authorized, auth.currency),
          currency: auth.currency,
        },
      },
      processorInformation: { responseCode: decline ? RESPONSE_CODES[decline] : '00' },
      ...(decline ? { errorInformation: { reason: decline, message: `Decline - ${decline}` } } : {}),
    };
    return this.commit(tx, 201, body, [auth], fault);
  }

  /** POST /pts/v2/payments/{id}/captures (spec 001 capture rules; gateway.md §7). */
  capture(call: ApiCall, id: string): ApiOutcome {
    const now = this.ctx.now();
    const auth = this.target(call, id);
    if (!auth || auth.kind !== 'authorization')
      throw this.fail('INVALID_PAYMENT_ID', 'no authorization with this id', 'id');
    if (auth.status === 'REVERSED')
      throw this.fail('AUTH_ALREADY_REVERSED', 'the authorization is reversed', 'id');
    if (!approved(auth)) throw this.fail('INVALID_PAYMENT_ID', 'the authorization was not approved', 'id');
    const r = new FieldReader(call.body, now);
    const replay = this.duplicate(
      call,
      r.text('clientReferenceInformation.transactionId', auth.card?.entryMode !== undefined),
    );
    if (replay) return replay;
    call.target = auth;
    const currency = r.currency('orderInformation.amountDetails.currency');
    if (currency !== undefined && currency !== auth.currency)
      r.invalid('orderInformation.amountDetails.currency', 'currency differs from the authorization');
    const amount = r.amount('orderInformation.amountDetails.totalAmount', auth.currency);
    const remaining = remainingHold(auth);
    const parking = auth.card?.entryMode !== undefined;
    if (parking && amount !== undefined) {
      // Spec 001: "Parking Capture Less Than Auth" makes the host reverse the rest; the comment must say which.
      const expected = amount < remaining ? 'Parking Capture Less Than Auth' : 'Parking Capture';
      r.oneOf('clientReferenceInformation.comments', [expected], true);
    }
    // gateway.md §7: a capture repeats no card or terminal data.
    if (r.has('pointOfSaleInformation.trackData'))
      r.invalid('pointOfSaleInformation.trackData', 'a capture repeats no card data');
    if (r.has('paymentInformation.card.number'))
      r.invalid('paymentInformation.card.number', 'a capture repeats no card data');
    const tags = r.has('pointOfSaleInformation.emv.tags') ? this.emvTags(r, call, false) : undefined;
    if (auth.emv?.contact) {
      // Spec 001: EMV contact pre-authorizations need the EMV tags on their capture (95, 9F10, 9F26).
      if (!r.has('pointOfSaleInformation.emv.tags'))
        r.missing(
          'pointOfSaleInformation.emv.tags',
          'the capture of an EMV contact pre-authorization carries the EMV tags',
        );
      else if (tags) {
        const missing = ['95', '9F10', '9F26'].filter((t) => !tags.some((x) => x.tag === t));
        if (missing.length)
          r.invalid('pointOfSaleInformation.emv.tags', `capture tags lack ${missing.join(', ')}`);
      }
    } else if (r.has('pointOfSaleInformation.emv.tags')) {
      r.invalid(
        'pointOfSaleInformation.emv.tags',
        'EMV tags go on a capture only after an EMV contact pre-authorization',
      );
    }
    if (tags?.some((t) => NEVER_SEND_TAGS.has(t.tag)))
      r.invalid('pointOfSaleInformation.emv.tags', 'emv.tags carries a tag that must never be sent');
    checkDccFollowOn(this.ctx.store, r, call.merchantId, auth.id, amount);
    r.finish();
    if (amount === undefined) throw this.fail('MISSING_FIELD', 'amount required');
    const rule = captureRule(remaining, amount);
    if (!rule.ok) throw this.refuse(rule);
    const fault = followOnFault(parking, amount);
    if (fault !== undefined && faultBeforeCommit(fault))
      return { httpStatus: 0, body: {}, created: [], touched: [auth], fault };
    const partialReversal = rule.partialReversal;
    const tx = this.newTx(call, 'capture', auth.currency, {
      parentId: auth.id,
      status: 'PENDING',
      amounts: { requested: amount, authorized: 0, captured: amount, reversed: 0, refunded: 0 },
      ...(auth.card ? { card: auth.card } : {}),
    });
    auth.amounts.captured += amount;
    // Spec 001: a capture below the authorization makes the host reverse the rest automatically.
    auth.amounts.reversed += partialReversal;
    const body: Record<string, unknown> = {
      _links: {
        self: link(`/pts/v2/captures/${tx.id}`, 'GET'),
        void: link(`/pts/v2/captures/${tx.id}/voids`, 'POST'),
        refund: link(`/pts/v2/captures/${tx.id}/refunds`, 'POST'),
      },
      id: tx.id,
      submitTimeUtc: isoSeconds(now),
      status: 'PENDING',
      reconciliationId: tx.id.slice(-12),
      clientReferenceInformation: this.clientRef(tx),
      orderInformation: {
        amountDetails: { totalAmount: toDecimalString(amount, auth.currency), currency: auth.currency },
      },
      ...(partialReversal > 0
        ? {
            reversalAmountDetails: {
              reversedAmount: toDecimalString(partialReversal, auth.currency),
              currency: auth.currency,
            },
          }
        : {}),
    };
    return this.commit(tx, 201, body, [auth], fault);
  }

  /** POST /pts/v2/payments/{id}/reversals: amount must equal the authorized amount (spec 001, Reversal). */
  reverse(call: ApiCall, id: string): ApiOutcome {
    const now = this.ctx.now();
    const auth = this.target(call, id);
    if (!auth) throw this.fail('MISSING_AUTH', 'no authorization with this id', 'id');
    if (auth.kind === 'sale')
      throw this.fail('TRANSACTION_ALREADY_SETTLED', 'a sale is voided or refunded, not reversed', 'id');
    if (auth.kind !== 'authorization' && auth.kind !== 'verification')
      throw this.fail('MISSING_AUTH', 'not an authorization', 'id');
    if (auth.status === 'REVERSED')
      throw this.fail('AUTH_ALREADY_REVERSED', 'the authorization is already reversed', 'id');
    if (!approved(auth)) throw this.fail('MISSING_AUTH', 'the authorization was not approved', 'id');
    const r = new FieldReader(call.body, now);
    const currency = r.currency('orderInformation.amountDetails.currency');
    if (currency !== undefined && currency !== auth.currency)
      r.invalid('orderInformation.amountDetails.currency', 'currency differs from the authorization');
    const requested = r.amount('reversalInformation.amountDetails.totalAmount', auth.currency);
    if (auth.card?.entryMode !== undefined)
      r.oneOf('clientReferenceInformation.comments', ['REVERSAL'], true);
    // gateway.md §7: when the original carried EMV data, the reversal carries the EMV tags too.
    const tags = this.emvTags(r, call, auth.emv?.present === true);
    if (tags?.some((t) => NEVER_SEND_TAGS.has(t.tag)))
      r.invalid('pointOfSaleInformation.emv.tags', 'emv.tags carries a tag that must never be sent');
    r.finish();
    const rule = reversalRule(auth.amounts, requested);
    if (!rule.ok) throw this.refuse(rule);
    const { amount, released } = rule;
    const tx = this.newTx(call, 'reversal', auth.currency, {
      parentId: auth.id,
      status: 'REVERSED',
      amounts: { requested: amount, authorized: 0, captured: 0, reversed: released, refunded: 0 },
    });
    auth.amounts.reversed += released;
    auth.status = 'REVERSED';
    return this.commit(tx, 201, this.reversalBody(tx, now, amount), [auth]);
  }

  private reversalBody(
    tx: LedgerTransaction,
    now: Date,
    amount: number,
    extra: Record<string, unknown> = {},
  ): Record<string, unknown> {
    return {
      _links: { self: link(`/pts/v2/reversals/${tx.id}`, 'GET') },
      id: tx.id,
      submitTimeUtc: isoSeconds(now),
      status: 'REVERSED',
      reconciliationId: tx.id.slice(-12),
      clientReferenceInformation: this.clientRef(tx),
      reversalAmountDetails: {
        reversedAmount: toDecimalString(amount, tx.currency),
        currency: tx.currency,
        ...extra,
      },
      processorInformation: { responseCode: '00' },
    };
  }

  /**
   * A timeout reversal keyed by the transactionId of an incremental authorization: takes back that increment only
   * (the authorization keeps what was authorized before it), for the amount the increment requested.
   */
  private timeoutReversalOfIncrement(
    call: ApiCall,
    increment: LedgerTransaction,
    r: { currency: string; amount: number; now: Date },
  ): ApiOutcome {
    call.target = increment;
    const auth =
      increment.parentId !== undefined ? this.ctx.store.transactions.get(increment.parentId) : undefined;
    if (r.currency !== increment.currency || r.amount !== increment.amounts.requested)
      throw this.fail(
        'INVALID_AMOUNT',
        'a timeout reversal carries the amount that was requested',
        'reversalInformation.amountDetails.totalAmount',
      );
    if (auth && auth.amounts.captured > 0)
      throw this.fail(
        'TRANSACTION_ALREADY_SETTLED',
        'the authorization is captured',
        'clientReferenceInformation.transactionId',
      );
    const released =
      auth && approved(increment) ? Math.min(increment.amounts.authorized, remainingHold(auth)) : 0;
    const tx = this.newTx(call, 'timeout-reversal', r.currency, {
      parentId: increment.id,
      status: 'REVERSED',
      originalFound: true,
      amounts: { requested: r.amount, authorized: 0, captured: 0, reversed: released, refunded: 0 },
      delayAfterOriginalMs: r.now.getTime() - Date.parse(increment.createdAt),
    });
    const touched: LedgerTransaction[] = [increment];
    if (released > 0 && auth) {
      // The increment never happened for the card: the authorization is back to its total before it.
      auth.amounts.authorized -= released;
      increment.amounts.reversed += released;
      increment.status = 'REVERSED';
      touched.push(auth);
    }
    return this.commit(tx, 201, this.reversalBody(tx, r.now, released), touched);
  }

  /** POST /pts/v2/reversals: timeout reversal by the original's transactionId; found or not; idempotent. */
  timeoutReversal(call: ApiCall): ApiOutcome {
    const now = this.ctx.now();
    const r = new FieldReader(call.body, now);
    const transactionId = r.text('clientReferenceInformation.transactionId', true);
    const currency = r.currency('orderInformation.amountDetails.currency');
    const amount = r.amount('reversalInformation.amountDetails.totalAmount', currency);
    const comments = r.text('clientReferenceInformation.comments', false);
    if (comments !== undefined && comments !== 'REVERSAL Timeout')
      r.invalid('clientReferenceInformation.comments', 'comments must be REVERSAL Timeout');
    r.finish();
    if (transactionId === undefined || currency === undefined || amount === undefined)
      throw this.fail('MISSING_FIELD', 'fields missing');
    const txs = this.ctx.store.withTransactionId(call.merchantId, transactionId);
    const earlier = txs.find((t) => t.kind === 'timeout-reversal');
    if (earlier) {
      call.target = earlier;
      return {
        httpStatus: earlier.answer.httpStatus,
        body: earlier.answer.body,
        created: [],
        touched: [earlier],
        replayOf: earlier,
      };
    }
    const increment = txs.find((t) => t.kind === 'incremental');
    if (increment && !txs.some((t) => ORIGINAL_KINDS.has(t.kind)))
      return this.timeoutReversalOfIncrement(call, increment, { currency, amount, now });
    const original = txs.find((t) => ORIGINAL_KINDS.has(t.kind));
    if (original) {
      call.target = original;
      if (original.kind !== 'authorization' && original.kind !== 'verification')
        throw this.fail(
          'TRANSACTION_ALREADY_SETTLED',
          'timeout reversal is for authorizations; use a timeout void',
          'clientReferenceInformation.transactionId',
        );
      if (original.card?.entryMode !== undefined && comments === undefined)
        throw this.fail(
          'MISSING_FIELD',
          'clientReferenceInformation.comments is required',
          'clientReferenceInformation.comments',
          'MISSING_FIELD',
        );
      if (original.amounts.captured > 0)
        throw this.fail(
          'TRANSACTION_ALREADY_SETTLED',
          'the authorization is captured',
          'clientReferenceInformation.transactionId',
        );
      if (currency !== original.currency || amount !== original.amounts.requested)
        throw this.fail(
          'INVALID_AMOUNT',
          'a timeout reversal carries the amount that was requested',
          'reversalInformation.amountDetails.totalAmount',
        );
    }
    const released = original && approved(original) ? remainingHold(original) : 0;
    const tx = this.newTx(call, 'timeout-reversal', currency, {
      ...(original ? { parentId: original.id } : {}),
      status: 'REVERSED',
      originalFound: original !== undefined,
      amounts: { requested: amount, authorized: 0, captured: 0, reversed: released, refunded: 0 },
      ...(original ? { delayAfterOriginalMs: now.getTime() - Date.parse(original.createdAt) } : {}),
    });
    const touched: LedgerTransaction[] = [];
    if (original) {
      if (approved(original)) {
        original.amounts.reversed += released;
        original.status = 'REVERSED';
      }
      touched.push(original);
    }
    // gateway.md §7: when the original never reached the gateway the answer carries originalTransactionAmount.
    const body = this.reversalBody(
      tx,
      now,
      released,
      original ? {} : { originalTransactionAmount: toDecimalString(amount, currency) },
    );
    return this.commit(tx, 201, body, touched);
  }

  /** POST /pts/v2/{payments|captures|refunds|credits}/{id}/voids. */
  voidOne(
    call: ApiCall,
    collection: 'payments' | 'captures' | 'refunds' | 'credits',
    id: string,
  ): ApiOutcome {
    const now = this.ctx.now();
    const kinds: Record<typeof collection, { kind: TxKind; comments: string }> = {
      payments: { kind: 'sale', comments: 'VOID Payment' },
      captures: { kind: 'capture', comments: 'VOID Capture' },
      refunds: { kind: 'refund', comments: 'VOID Refund' },
      credits: { kind: 'credit', comments: 'VOID Credit' },
    };
    const want = kinds[collection];
    const target = this.target(call, id);
    if (!target) throw this.fail('INVALID_PAYMENT_ID', 'no transaction with this id', 'id');
    const r = new FieldReader(call.body, now);
    const comments = r.text('clientReferenceInformation.comments', target.card?.entryMode !== undefined);
    if (comments !== undefined && comments !== want.comments)
      r.invalid('clientReferenceInformation.comments', `comments must be ${want.comments}`);
    r.finish();
    if (target.kind !== want.kind)
      throw this.fail('NOT_VOIDABLE', `only a ${want.kind} can be voided at this path`, 'id');
    return this.applyVoid(call, target, 'void', now);
  }

  private applyVoid(
    call: ApiCall,
    target: LedgerTransaction,
    kind: 'void' | 'timeout-void',
    now: Date,
  ): ApiOutcome {
    if (target.voided) throw this.fail('NOT_VOIDABLE', 'already voided', 'id');
    if (!approved(target) && target.status !== 'PENDING')
      throw this.fail('NOT_VOIDABLE', `a ${target.status} transaction cannot be voided`, 'id');
    if (!this.ctx.voidable(new Date(target.createdAt)))
      throw this.fail('NOT_VOIDABLE', 'the settlement cut-off has passed; refund instead', 'id');
    if ((target.kind === 'capture' || target.kind === 'sale') && target.amounts.refunded > 0)
      throw this.fail('NOT_VOIDABLE', 'refunds exist; void them first', 'id');
    const touched: LedgerTransaction[] = [target];
    const amount =
      target.kind === 'capture' || target.kind === 'sale'
        ? target.amounts.captured
        : target.amounts.requested;
    target.voided = true;
    target.status = 'VOIDED';
    const parent =
      target.parentId !== undefined ? this.ctx.store.transactions.get(target.parentId) : undefined;
    if (parent && target.kind === 'capture') {
      // gateway.md §7: voiding a capture leaves the authorization hold in place.
      parent.amounts.captured -= amount;
      touched.push(parent);
    } else if (parent && target.kind === 'refund') {
      parent.amounts.refunded -= amount;
      touched.push(parent);
    }
    const tx = this.newTx(call, kind, target.currency, {
      parentId: target.id,
      status: 'VOIDED',
      amounts: { requested: amount, authorized: 0, captured: 0, reversed: 0, refunded: 0 },
      ...(kind === 'timeout-void' ? { originalFound: true } : {}),
    });
    return this.commit(tx, 201, this.voidBody(tx, now, amount), touched);
  }

  private voidBody(tx: LedgerTransaction, now: Date, amount: number): Record<string, unknown> {
    return {
      _links: { self: link(`/pts/v2/voids/${tx.id}`, 'GET') },
      id: tx.id,
      submitTimeUtc: isoSeconds(now),
      status: 'VOIDED',
      clientReferenceInformation: this.clientRef(tx),
      voidAmountDetails: { voidAmount: toDecimalString(amount, tx.currency), currency: tx.currency },
    };
  }

  /** POST /pts/v2/voids: timeout void by the original's transactionId; found or not; idempotent. */
  timeoutVoid(call: ApiCall): ApiOutcome {
    const now = this.ctx.now();
    const r = new FieldReader(call.body, now);
    const transactionId = r.text('clientReferenceInformation.transactionId', true);
    const comments = r.text('clientReferenceInformation.comments', false);
    if (comments !== undefined && comments !== 'VOID Timeout')
      r.invalid('clientReferenceInformation.comments', 'comments must be VOID Timeout');
    r.finish();
    if (transactionId === undefined) throw this.fail('MISSING_FIELD', 'transactionId required');
    const txs = this.ctx.store.withTransactionId(call.merchantId, transactionId);
    const earlier = txs.find((t) => t.kind === 'timeout-void');
    if (earlier) {
      call.target = earlier;
      return {
        httpStatus: earlier.answer.httpStatus,
        body: earlier.answer.body,
        created: [],
        touched: [earlier],
        replayOf: earlier,
      };
    }
    const original = txs.find((t) => ORIGINAL_KINDS.has(t.kind));
    if (original) {
      call.target = original;
      if (!MONEY_OUT_KINDS.has(original.kind))
        throw this.fail(
          'NOT_VOIDABLE',
          'an authorization is reversed (timeout reversal), not voided',
          'clientReferenceInformation.transactionId',
        );
      if (original.card?.entryMode !== undefined && comments === undefined)
        throw this.fail(
          'MISSING_FIELD',
          'clientReferenceInformation.comments is required',
          'clientReferenceInformation.comments',
          'MISSING_FIELD',
        );
      if (original.status === 'DECLINED' || original.voided) {
        const tx = this.newTx(call, 'timeout-void', original.currency, {
          parentId: original.id,
          status: 'VOIDED',
          originalFound: true,
        });
        return this.commit(tx, 201, this.voidBody(tx, now, 0), [original]);
      }
      return this.applyVoid(call, original, 'timeout-void', now);
    }
    // Nothing reached the gateway under this transactionId: nothing to void, still a success for the terminal.
    // ISO 4217 "XXX" (no currency) marks the ledger entry; the answer carries no amount.
    const tx = this.newTx(call, 'timeout-void', 'XXX', { status: 'VOIDED', originalFound: false });
    const body: Record<string, unknown> = {
      _links: { self: link(`/pts/v2/voids/${tx.id}`, 'GET') },
      id: tx.id,
      submitTimeUtc: isoSeconds(now),
      status: 'VOIDED',
      clientReferenceInformation: this.clientRef(tx),
    };
    return this.commit(tx, 201, body, []);
  }

  /** POST /pts/v2/captures/{id}/refunds and /pts/v2/payments/{id}/refunds (sum of refunds ≤ captured). */
  refund(call: ApiCall, collection: 'captures' | 'payments', id: string): ApiOutcome {
    const now = this.ctx.now();
    const target = this.target(call, id);
    const wantKind: TxKind = collection === 'captures' ? 'capture' : 'sale';
    if (!target || target.kind !== wantKind)
      throw this.fail('INVALID_PAYMENT_ID', `no ${wantKind} with this id`, 'id');
    const r = new FieldReader(call.body, now);
    const parking = target.card?.entryMode !== undefined;
    const replay = this.duplicate(call, r.text('clientReferenceInformation.transactionId', parking));
    if (replay) return replay;
    call.target = target;
    const currency = r.currency('orderInformation.amountDetails.currency');
    if (currency !== undefined && currency !== target.currency)
      r.invalid('orderInformation.amountDetails.currency', 'currency differs from the original');
    const amount = r.amount('orderInformation.amountDetails.totalAmount', target.currency);
    if (parking)
      r.oneOf(
        'clientReferenceInformation.comments',
        [collection === 'captures' ? 'REFUND Capture' : 'REFUND Payment'],
        true,
      );
    const tags = this.emvTags(r, call, false);
    if (tags && target.card?.type) {
      if (tags.some((t) => NEVER_SEND_TAGS.has(t.tag)))
        r.invalid('pointOfSaleInformation.emv.tags', 'emv.tags carries a tag that must never be sent');
      // Spec 001: tag 9F6E is prohibited on refunds of card type 002.
      if (target.card.type === '002' && tags.some((t) => t.tag === '9F6E'))
        r.invalid('pointOfSaleInformation.emv.tags', 'tag 9F6E is prohibited on a refund of card type 002');
    }
    // A refund of a capture follows the capture's authorization; a refund of a sale, the sale itself.
    const authorizationId = collection === 'captures' ? target.parentId : target.id;
    if (authorizationId !== undefined)
      checkDccFollowOn(this.ctx.store, r, call.merchantId, authorizationId, amount);
    r.finish();
    if (amount === undefined) throw this.fail('MISSING_FIELD', 'amount required');
    if (target.voided) throw this.fail('CAPTURE_ALREADY_VOIDED', 'the original is voided', 'id');
    if (!approved(target)) throw this.fail('INVALID_PAYMENT_ID', 'the original was not approved', 'id');
    if (now.getTime() - Date.parse(target.createdAt) > REFUND_WINDOW_MS)
      throw this.fail('NOT_SUPPORTED', 'refunds are accepted within 180 days', 'id');
    const rule = refundRule(effectiveCaptured(target), target.amounts.refunded, amount);
    if (!rule.ok) throw this.refuse(rule);
    const fault = followOnFault(parking, amount);
    if (fault !== undefined && faultBeforeCommit(fault))
      return { httpStatus: 0, body: {}, created: [], touched: [target], fault };
    const tx = this.newTx(call, 'refund', target.currency, {
      parentId: target.id,
      status: 'PENDING',
      amounts: { requested: amount, authorized: 0, captured: 0, reversed: 0, refunded: amount },
      ...(target.card ? { card: target.card } : {}),
    });
    target.amounts.refunded += amount;
    const body: Record<string, unknown> = {
      _links: {
        self: link(`/pts/v2/refunds/${tx.id}`, 'GET'),
        void: link(`/pts/v2/refunds/${tx.id}/voids`, 'POST'),
      },
      id: tx.id,
      submitTimeUtc: isoSeconds(now),
      status: 'PENDING',
      reconciliationId: tx.id.slice(-12),
      clientReferenceInformation: this.clientRef(tx),
      refundAmountDetails: {
        refundAmount: toDecimalString(amount, target.currency),
        currency: target.currency,
      },
    };
    return this.commit(tx, 201, body, [target], fault);
  }

  /** POST /pts/v2/credits: standalone credit (gateway.md §7; comments `Parking Standalone Credit`). */
  credit(call: ApiCall): ApiOutcome {
    const now = this.ctx.now();
    const r = new FieldReader(call.body, now);
    const replay = this.duplicate(call, r.text('clientReferenceInformation.transactionId', true));
    if (replay) return replay;
    const currency = r.currency('orderInformation.amountDetails.currency');
    const amount = r.amount('orderInformation.amountDetails.totalAmount', currency);
    r.oneOf('clientReferenceInformation.comments', ['Parking Standalone Credit'], true);
    const read = this.cardPresent(r, call, 'credit', currency, amount);
    if (read.emv && read.entryMode === 'contact') {
      const missing = ['95', '9F10', '9F26'].filter((t) => !read.emv?.some((x) => x.tag === t));
      if (missing.length)
        r.invalid('pointOfSaleInformation.emv.tags', `credit tags lack ${missing.join(', ')}`);
    }
    r.finish();
    if (currency === undefined || amount === undefined) throw this.fail('MISSING_FIELD', 'amount required');
    if (amount === 0)
      throw this.fail(
        'INVALID_AMOUNT',
        'a credit cannot be for 0',
        'orderInformation.amountDetails.totalAmount',
      );
    let decline: DeclineReason | undefined = read.pan !== undefined ? DECLINING_CARDS[read.pan] : undefined;
    const trigger = amountTrigger(amount, { canDecline: true, canBePartial: false });
    let fault: FaultKind | undefined;
    if (!decline && trigger.kind === 'decline') decline = trigger.reason;
    if (trigger.kind === 'fault') {
      if (faultBeforeCommit(trigger.fault))
        return { httpStatus: 0, body: {}, created: [], touched: [], fault: trigger.fault };
      fault = trigger.fault;
    }
    const tx = this.newTx(call, 'credit', currency, {
      status: decline ? 'DECLINED' : 'PENDING',
      amounts: { requested: amount, authorized: 0, captured: 0, reversed: 0, refunded: decline ? 0 : amount },
      card: {
        ...(read.pan !== undefined ? { masked: maskPan(read.pan) } : {}),
        ...(read.cardType !== undefined ? { type: read.cardType } : {}),
        ...(read.entryMode !== undefined ? { entryMode: read.entryMode } : {}),
      },
      emv: {
        present: read.emv !== undefined,
        contact: read.emv !== undefined && read.entryMode === 'contact',
      },
    });
    const body: Record<string, unknown> = {
      _links: {
        self: link(`/pts/v2/credits/${tx.id}`, 'GET'),
        ...(decline ? {} : { void: link(`/pts/v2/credits/${tx.id}/voids`, 'POST') }),
      },
      id: tx.id,
      submitTimeUtc: isoSeconds(now),
      status: tx.status,
      reconciliationId: tx.id.slice(-12),
      clientReferenceInformation: this.clientRef(tx),
      creditAmountDetails: { creditAmount: toDecimalString(decline ? 0 : amount, currency), currency },
      ...(decline ? { errorInformation: { reason: decline, message: `Decline - ${decline}` } } : {}),
    };
    return this.commit(tx, 201, body, [], fault);
  }

  /** A payment made on the hosted page of a payment link: a sale recorded in the ledger. */
  linkPayment(
    merchantId: string,
    linkId: string,
    amount: number,
    currency: string,
    maskedPan: string,
    cardType: string,
    decline: DeclineReason | undefined,
  ): LedgerTransaction {
    const now = this.ctx.now();
    const tx: LedgerTransaction = {
      id: newId(),
      kind: 'link-payment',
      merchantId,
      code: linkId,
      status: decline ? 'DECLINED' : 'AUTHORIZED',
      currency,
      amounts: {
        requested: amount,
        authorized: decline ? 0 : amount,
        captured: decline ? 0 : amount,
        reversed: 0,
        refunded: 0,
      },
      card: { masked: maskedPan, type: cardType, entryMode: 'keyed' },
      voided: false,
      createdAt: now.toISOString(),
      outcomeUnknown: false,
      answer: { httpStatus: 201, body: { id: '', status: decline ? 'DECLINED' : 'AUTHORIZED' } },
      requests: [],
    };
    tx.answer.body = {
      id: tx.id,
      status: tx.status,
      submitTimeUtc: isoSeconds(now),
      clientReferenceInformation: { code: linkId },
      orderInformation: { amountDetails: { totalAmount: toDecimalString(amount, currency), currency } },
      ...(decline ? { errorInformation: { reason: decline, message: `Decline - ${decline}` } } : {}),
    };
    this.ctx.store.saveTx(tx);
    return tx;
  }

  /** GET /pts/v2/{collection}/{id}: the stored answer with the current status. */
  get(call: ApiCall, collection: string, id: string): ApiOutcome {
    const kindsByCollection: Record<string, readonly TxKind[]> = {
      payments: ['authorization', 'sale', 'verification', 'incremental', 'link-payment'],
      captures: ['capture'],
      reversals: ['reversal', 'timeout-reversal'],
      refunds: ['refund'],
      credits: ['credit'],
      voids: ['void', 'timeout-void'],
    };
    const tx = this.target(call, id);
    if (!tx || !(kindsByCollection[collection] ?? []).includes(tx.kind))
      throw new GatewayAnswer(
        404,
        {
          submitTimeUtc: isoSeconds(this.ctx.now()),
          status: 'NOT_FOUND',
          reason: 'NOT_FOUND',
          message: 'no such resource',
        },
        'NOT_FOUND',
      );
    return { httpStatus: 200, body: { ...tx.answer.body, status: tx.status }, created: [], touched: [tx] };
  }

  /** POST /pts/v2/refresh-payment-status/{id}. */
  refreshStatus(call: ApiCall, id: string): ApiOutcome {
    const tx = this.target(call, id);
    if (!tx) throw this.fail('INVALID_PAYMENT_ID', 'no payment with this id', 'id');
    return {
      httpStatus: 200,
      body: {
        id: tx.id,
        status: tx.status,
        clientReferenceInformation: this.clientRef(tx),
        submitTimeUtc: isoSeconds(this.ctx.now()),
      },
      created: [],
      touched: [tx],
    };
  }
}
