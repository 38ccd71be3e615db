import { silentLogger, type Logger } from '../log/index.js';
import { refusalPasses } from '../vocabulary/services.js';
import { JournalError } from './errors.js';
import {
  BACKGROUND_WRITE,
  NOT_SENT,
  ONE_STATEMENT,
  receiptApprovalCode,
  receiptCardFacts,
  type BeginEntry,
  type JournalEntry,
  type ReceiptCardFacts,
  type RecordedOutcome,
  type SqliteJournal,
} from './journal.js';

/**
 * The journal's protocol, written once (DESIGN.md, money safety rules 1–3; STYLE.md §16): every gateway request the
 * terminal sends — a live payment, a stored offline payment being forwarded, a timeout reversal or void of recovery —
 * goes begin → mark sent → send → record through {@link JournaledSender} (a live payment's mark is written in the
 * commit of its outcome; a forward's with its begin, in the claim's durable commit just before its first byte). An
 * entry has one owner at a time: from its begin until its outcome is recorded it belongs to the sender, and nobody
 * else (recovery, a sweep) may resolve it; recovery waits for the request's own timeout instead.
 */

/** A request built, validated and serialised once; the gateway client's prepared request has this shape. */
export interface OutgoingRequest {
  /** Service name of the vocabulary (src/vocabulary/services.ts). */
  readonly service: string;
  readonly method: string;
  readonly path: string;
  /** The exact bytes that will be sent (journaled only encrypted). */
  readonly body: Buffer;
  readonly comments: string;
  /** clientReferenceInformation.transactionId of the request itself. */
  readonly transactionId?: string;
  /** transactionId of the original a timeout reversal or void refers to. */
  readonly referencedTransactionId?: string;
  /** Minor units of `currency`. */
  readonly amountMinor?: number;
  readonly currency?: string;
  readonly moneyMoving: boolean;
}

/**
 * The classified answer to one send (gateway.md §4). `rejected`: the gateway answered and refused the request
 * unprocessed (400, 401); `unknown`: no usable answer — it may have been processed (timeout after sending, reset
 * after writing, 5xx, undocumented status).
 */
export interface SendOutcome {
  readonly kind: 'approved' | 'declined' | 'rejected' | 'unknown';
  readonly gatewayId?: string;
  readonly status?: string;
  readonly httpStatus?: number;
  /** Minor units: the authorized amount (increment: the new total). */
  readonly authorizedMinor?: number;
  /** Minor units: the amount the gateway reports processed (reversed, captured, refunded, voided). */
  readonly amountMinor?: number;
  /** Approved for less than requested (PARTIAL_AUTHORIZED). */
  readonly partial?: boolean;
  /**
   * The issuer's approval code (`processorInformation.approvalCode`), for the receipt: journaled with the outcome, so
   * that a receipt issued again after a restart states it too.
   */
  readonly approvalCode?: string;
  /** Decline or rejection reason (e.g. AUTH_ALREADY_REVERSED, NOT_VOIDABLE). */
  readonly reason?: string;
  /** What made the outcome unknown (timeout, reset, 5xx). */
  readonly error?: { readonly code?: string; readonly message?: string };
}

/** A request that provably never reached the gateway (connection refused or timed out before a byte was written). */
export interface NotSent {
  readonly kind: 'not-sent';
  readonly reason?: string;
}

/** Everything a send can end in: the one classification every caller of the journal uses. */
export type TransmitOutcome = SendOutcome | NotSent;

/**
 * Whether a request could reach the gateway now; when not, the host that could not be connected to, as the operator
 * reads it (`gateway api.example.com:443`, `OAuth token host auth.example.com:443`).
 */
export type Reachability =
  { readonly reachable: true } | { readonly reachable: false; readonly host: string };

/** Sends bytes to the gateway once. Implemented by the host with the gateway client. Never resends. */
export interface Transmitter {
  /** Resolves with the classified outcome; a throw is taken as `unknown` (the bytes may have left). */
  transmit(request: OutgoingRequest): Promise<TransmitOutcome>;
  /**
   * Whether a request could reach the gateway now, sending nothing — every connection it would wait on before its
   * first byte (the gateway's, and a token host's when its credentials must be fetched first): a transmitter that
   * cannot tell leaves it out (taken as reachable).
   */
  reachable?(): Promise<Reachability>;
}

/** Failpoint names fired after each step of one send (the crash suite SIGKILLs the process there). */
export interface SendFailpoints {
  /** After the entry is durably begun. */
  readonly begun?: string;
  /** After it is marked sent, before the first byte. */
  readonly sent?: string;
  /** After the answer is in hand, before it is journaled. */
  readonly answered?: string;
  /** After the outcome is journaled. */
  readonly recorded?: string;
}

/** The failpoints of a live payment (src/host/failpoints.ts names). */
export const LIVE_FAILPOINTS: SendFailpoints = {
  begun: 'journal.begin',
  sent: 'journal.sent',
  answered: 'gateway.answered',
  recorded: 'journal.outcome',
};

export interface SendOptions {
  flowId?: string;
  /** Gateway id of the payment a follow-on acts on. */
  parentGatewayId?: string;
  /** transactionId of the original, when the request itself does not carry it. */
  referencedTransactionId?: string;
  maskedPan?: string;
  /**
   * What a receipt states of the card the request is made with (its entry mode, application and CVM results; never
   * card data): journaled with the outcome, in its one write.
   */
  card?: ReceiptCardFacts;
  /** For a resolution request: the entry it resolves. */
  resolvesEntryId?: number;
  failpoints?: SendFailpoints;
  /**
   * Writes that must be on disk before the request can reach the gateway, whatever its outcome, committed in the SAME
   * transaction as the entry's begin: the one durable write before the send (DESIGN.md rule 1), not a second one
   * (e.g. a ticket's payment by a sale, the follow-ups a meter settlement step creates). One that throws undoes the
   * begin with it: nothing is sent, and the send rejects with its error.
   */
  onBegin?: (entry: JournalEntry) => void;
  /**
   * Writes that must commit in the SAME transaction as the outcome (DESIGN.md rule 6: a state change that must be
   * atomic is one transaction), e.g. the stored offline payment's completion, a hold, a follow-up obligation.
   */
  onOutcome?: (entry: JournalEntry, outcome: TransmitOutcome) => void;
  /**
   * The caller's wait for the answer (a machine's `submit` signal): once it aborts, nobody acts on the answer — no
   * receipt, no undo. A request whose wait aborted before its first byte is not sent (resolved {@link NOT_SENT}, reason
   * {@link ABANDONED}); an approval of a money-moving request that arrives after the abort is journaled as `unknown`
   * (reason {@link ABANDONED}, the answer's facts kept), so that it stays in flight for recovery, which undoes it by
   * the entry's recovery plan like any unanswered request: an approval nobody waits for must not stand. The wait is
   * read last inside the outcome's write; an abort after it (during the commit's sync, or before the caller resumed)
   * finds the approval journaled approved, a final entry that never returns in flight: the caller sees it aborted and
   * undoes the approval itself (src/host/payment-router.ts).
   */
  abandoned?: AbortSignal;
}

/**
 * Reason of an outcome whose caller stopped waiting for it ({@link SendOptions.abandoned}): a request never sent, or an
 * approval journaled as unknown for recovery to undo.
 */
export const ABANDONED = 'ABANDONED';

/**
 * The outcome journaled for an answer that came after its caller stopped waiting: an approval of a money-moving request
 * becomes `unknown` (recovery's to undo), keeping what the gateway said of it; any other answer moved no money and is
 * journaled as it is.
 */
function abandonedOutcome(request: OutgoingRequest, outcome: TransmitOutcome): TransmitOutcome {
  if (outcome.kind !== 'approved' || !request.moneyMoving) return outcome;
  return {
    ...outcome,
    kind: 'unknown',
    reason: ABANDONED,
    error: { code: ABANDONED, message: 'approved after the caller stopped waiting for the answer' },
  };
}

export interface BegunSendOptions extends SendOptions {
  /**
   * The release of the ownership the caller took inside the write that began the entry ({@link
   * JournaledSender.ownBegun}): the sender keeps it until the outcome is recorded, then releases it. Absent: the sender
   * takes ownership here (only for an entry nothing else can find in flight meanwhile).
   */
  owned?: () => void;
  /**
   * The entry was begun already marked sent, in a durable commit made just before this send (a claimed offline
   * forward, {@link BeginEntry.sentAt}): its outcome's commit writes no mark.
   */
  markedSent?: boolean;
  /**
   * Called once the answer (or the failure to get one) is in, before its outcome is journaled: the request is no
   * longer on the wire. A forward loop starts its next send from here, so that the next claim shares the outcome's
   * group commit.
   */
  onAnswered?: (outcome: TransmitOutcome) => void;
  /**
   * A refusal that passes (the vocabulary's `refusalPasses`: a 400 PROCESSOR_UNAVAILABLE, the processor down for a
   * while) is journaled as not sent, its transactionId free again, as a refusal of the terminal's credentials is
   * (src/host/gateway-adapters.ts): the gateway processed nothing, and the same request can pass later. For a stored
   * offline payment's forward, whose customer was told it was paid and has gone: closed as refused, its card data
   * wiped, it could never be collected; not sent, it stays stored for a later forward.
   */
  refusalForNowNotSent?: boolean;
  /**
   * Nobody waits for this send at the terminal (a stored payment's forward): its outcome is a background write of the
   * group commit ({@link DurableWriteOptions.background}), which may wait briefly for others to share its commit.
   */
  background?: boolean;
}

/** What one send left in the journal. */
export interface SentRequest {
  /** The entry as journaled after the outcome. */
  readonly entry: JournalEntry;
  readonly outcome: TransmitOutcome;
}

export interface JournaledSenderOptions {
  /** Called with each failpoint name (src/host/failpoints.ts); absent: none. */
  failpoint?: (name: string) => void;
  logger?: Logger;
}

/**
 * The one journaled sender. It never retries: each call sends once. Journal failures before the send throw (nothing
 * went out); a journal failure after it throws too, and the entry stays in flight for recovery.
 */
export class JournaledSender {
  private readonly owned = new Map<number, { done: Promise<void>; release: () => void }>();
  /** Sends whose entry is queued for the group commit and not yet owned: {@link drain} waits for them too. */
  private readonly beginning = new Set<Promise<unknown>>();
  private readonly logger: Logger;

  constructor(
    readonly journal: SqliteJournal,
    private readonly transmitter: Transmitter,
    private readonly options: JournaledSenderOptions = {},
  ) {
    this.logger = options.logger ?? silentLogger();
  }

  /**
   * Journals `request` durably, then sends it once and journals the outcome. Both writes go through the journal's
   * group commit ({@link SqliteJournal.commitDurably}): they share their disk sync with writes of other requests in
   * flight, and the send starts only after the commit that holds this request's entry returned (rule 1).
   */
  async send(request: OutgoingRequest, options: SendOptions = {}): Promise<SentRequest> {
    const { begun, recorded } = await this.beginAndSend(request, options, true);
    return { entry: recorded.entry ?? this.journal.get(begun.id) ?? begun, outcome: recorded.outcome };
  }

  /**
   * {@link send} for a caller that needs only the outcome and the entry's id (a live payment): the same two durable
   * writes, without reading the entry back after its outcome.
   */
  async sendForOutcome(
    request: OutgoingRequest,
    options: SendOptions = {},
  ): Promise<{ entryId: number; outcome: TransmitOutcome }> {
    const { begun, recorded } = await this.beginAndSend(request, options, false);
    return { entryId: begun.id, outcome: recorded.outcome };
  }

  private async beginAndSend(
    request: OutgoingRequest,
    options: SendOptions,
    readBack: boolean,
  ): Promise<{
    begun: JournalEntry;
    recorded: { entry: JournalEntry | undefined; outcome: TransmitOutcome };
  }> {
    const begin = entryOf(request, options);
    // Owned from inside the write that creates it: no moment exists where the entry is in the journal and nobody
    // owns it (a sweep for unowned entries could otherwise take it between the commit and this caller's turn).
    let release: (() => void) | undefined;
    let entry: JournalEntry;
    // Its entry is one INSERT (begin makes its own transaction when it must read first): no transaction around it,
    // unless the caller writes with it (`onBegin`).
    const { onBegin } = options;
    const begun = this.journal.commitDurably(
      () => {
        const created = this.journal.begin(begin);
        release = this.own(created.id);
        onBegin?.(created);
        return created;
      },
      onBegin === undefined ? ONE_STATEMENT : {},
    );
    this.beginning.add(begun);
    try {
      entry = await begun;
    } catch (e) {
      release?.();
      throw e;
    } finally {
      this.beginning.delete(begun);
    }
    const recorded = await this.transmitAndRecord(
      entry,
      request,
      options,
      release ?? this.own(entry.id),
      readBack,
    );
    return { begun: entry, recorded };
  }

  /**
   * Takes ownership of an entry from inside the write that begins it, for a caller that begins its own entries (the
   * offline queue's claim begins each forward with the stored payment's claim): as with {@link send}, no moment then
   * exists where the entry is in the journal, in flight, and nobody owns it — the commit that makes it visible may
   * still be syncing while the event loop turns and a sweep looks for unowned entries. Returns the release: hand it to
   * {@link sendBegun} (`owned`), or call it when the entry will not be sent (the write threw or its commit failed).
   */
  ownBegun(entryId: number): () => void {
    return this.own(entryId);
  }

  /**
   * Sends a request whose entry the caller has begun (e.g. in the same transaction as claiming a stored payment).
   * The sender owns the entry until its outcome is recorded: from the write that began it when the caller took
   * ownership there ({@link ownBegun}, `owned`), else from here. Resolves with the outcome once it is journaled; the
   * entry is not read back (the caller has it, and its outcome is the one resolved with).
   */
  async sendBegun(
    entry: JournalEntry,
    request: OutgoingRequest,
    options: BegunSendOptions = {},
  ): Promise<TransmitOutcome> {
    const release = options.owned ?? this.own(entry.id);
    return (await this.transmitAndRecord(entry, request, options, release, false)).outcome;
  }

  private async transmitAndRecord(
    entry: JournalEntry,
    request: OutgoingRequest,
    options: BegunSendOptions,
    release: () => void,
    readBack: boolean,
  ): Promise<{ entry: JournalEntry | undefined; outcome: TransmitOutcome }> {
    try {
      const fire = (name: string | undefined): void => {
        if (name !== undefined) this.options.failpoint?.(name);
      };
      fire(options.failpoints?.begun);
      // A live payment's mark is written with its outcome, in that one commit: a write of its own would not be synced
      // (recovery treats a pending entry as possibly sent) and would cost a commit per payment for nothing.
      const markedAt = options.markedSent ? undefined : this.journal.now();
      fire(options.failpoints?.sent);
      let outcome: TransmitOutcome;
      // Its outcome's write is expected: writes of other answers meanwhile wait for the event loop's turn to share a
      // commit with it and with each other.
      const answered = this.journal.expectWrite();
      try {
        // Nobody waits for it any more and not a byte has left: it is not sent at all.
        outcome = options.abandoned?.aborted
          ? { kind: 'not-sent', reason: ABANDONED }
          : await this.transmitter.transmit(request);
      } catch (e) {
        outcome = {
          kind: 'unknown',
          error: { code: 'SEND_FAILED', message: e instanceof Error ? e.message : String(e) },
        };
      } finally {
        answered();
      }
      if (options.abandoned?.aborted) outcome = abandonedOutcome(request, outcome);
      if (options.refusalForNowNotSent && outcome.kind === 'rejected' && refusalPasses(outcome.reason))
        outcome = { kind: 'not-sent', reason: outcome.reason };
      fire(options.failpoints?.answered);
      options.onAnswered?.(outcome);
      const after = await this.journal.commitDurably(
        () => {
          // Read again in the outcome's own write, which a group commit runs a turn or more later: a wait that ended
          // meanwhile (the machine's backstop, a graceful stop) leaves nobody to use or undo the approval either.
          if (options.abandoned?.aborted) outcome = abandonedOutcome(request, outcome);
          if (outcome.kind === 'not-sent') {
            if (markedAt) this.journal.markSent(entry.id, markedAt);
            this.journal.resolve(entry.id, NOT_SENT);
          } else this.journal.recordOutcome(entry.id, recorded(outcome, options.card), markedAt);
          options.onOutcome?.(entry, outcome);
          return readBack ? this.journal.get(entry.id) : undefined;
        },
        options.background === true ? BACKGROUND_WRITE : undefined,
      );
      fire(options.failpoints?.recorded);
      return { entry: after, outcome };
    } finally {
      release();
    }
  }

  /**
   * Whether the gateway can be reached now, sending nothing; `true` at once, without a turn of the event loop, when
   * the transmitter cannot tell.
   */
  reachable(): Promise<Reachability> | true {
    return this.transmitter.reachable?.() ?? true;
  }

  /** Whether a request of this entry is being sent by this process (nobody else may resolve it). */
  owns(entryId: number): boolean {
    return this.owned.has(entryId);
  }

  /** Resolves once the entry is no longer owned (at once when it is not). */
  released(entryId: number): Promise<void> {
    return this.owned.get(entryId)?.done ?? Promise.resolve();
  }

  /** Entries being sent right now. */
  get inFlight(): number {
    return this.owned.size;
  }

  /**
   * Resolves once every send in progress has recorded its outcome (shutdown), including a send whose entry is still
   * waiting for its group commit (e.g. a timeout void handed over by the outcome of the send before it).
   */
  async drain(): Promise<void> {
    for (;;) {
      while (this.owned.size > 0 || this.beginning.size > 0)
        await Promise.all([
          ...[...this.owned.values()].map((o) => o.done),
          ...[...this.beginning].map((b) => b.catch(() => undefined)),
        ]);
      // One turn of the event loop for a send that an outcome just recorded starts (recovery's timeout void of an
      // unknown answer): its entry is queued for the next group commit, not yet begun.
      await new Promise<void>((turn) => setImmediate(turn));
      if (this.owned.size === 0 && this.beginning.size === 0) return;
    }
  }

  private own(entryId: number): () => void {
    if (this.owned.has(entryId))
      throw new JournalError('JOURNAL_BAD_TRANSITION', `journal entry ${entryId} is already being sent`);
    let release!: () => void;
    const done = new Promise<void>((r) => (release = r));
    this.owned.set(entryId, { done, release });
    return () => {
      this.owned.delete(entryId);
      release();
    };
  }
}

/**
 * The journal entry of a request about to be sent, with what the caller knows of it (`sentAt`: begun already marked
 * sent). One literal of every field, undefined where absent: an object assembled from conditional spreads gets a shape
 * of its own, and every read of it afterwards (validation, the insert) is a slow, megamorphic lookup.
 */
export function entryOf(request: OutgoingRequest, options: SendOptions & { sentAt?: Date } = {}): BeginEntry {
  const amount = request.amountMinor !== undefined && request.currency !== undefined;
  return {
    transactionId: request.transactionId,
    referencedTransactionId: request.referencedTransactionId ?? options.referencedTransactionId,
    service: request.service,
    comments: request.comments,
    method: request.method,
    path: request.path,
    body: request.body,
    amountMinor: amount ? request.amountMinor : undefined,
    currency: amount ? request.currency : undefined,
    flowId: options.flowId,
    parentGatewayId: options.parentGatewayId,
    maskedPan: options.maskedPan,
    moneyMoving: request.moneyMoving,
    resolvesEntryId: options.resolvesEntryId,
    sentAt: options.sentAt,
  };
}

/**
 * The journal's record of an outcome. The amount is the one the answer states: an authorization's authorized amount
 * (an increment: the new total), otherwise the amount it processed — a capture's captured amount, which a gateway may
 * make less than was asked (spec 001, the capture answer's `orderInformation.amountDetails.totalAmount`). The
 * receipt's facts (the approval code, the card's view) are kept as far as the journal takes them: a code or label of an
 * unexpected shape is left out, never a reason to refuse the outcome of a payment.
 */
function recorded(o: SendOutcome, card: ReceiptCardFacts | undefined): RecordedOutcome {
  return {
    state: o.kind,
    gatewayId: o.gatewayId,
    status: o.status,
    httpStatus: o.httpStatus,
    authorizedMinor: o.authorizedMinor ?? o.amountMinor,
    reason: o.reason ?? o.error?.code,
    approvalCode: receiptApprovalCode(o.approvalCode),
    card: receiptCardFacts(card),
  };
}
