import type { Config } from '../config/index.js';
import { buildTagSet, TagSetError, type TagSetService } from '../emv/index.js';
import type { ServiceRequest as FlowRequest, SubmitOutcome } from '../flows/effects.js';
import type { GatewayClient } from '../gateway/client.js';
import { GatewayError } from '../gateway/errors.js';
import type { Outcome } from '../gateway/outcome.js';
import type {
  CardPresentFields,
  EntryMode as GatewayEntryMode,
  PointOfSale,
  PreparedRequest,
  ServiceRequest as GatewayRequest,
} from '../gateway/services/types.js';
import { NOT_SENT, type Journal, type JournalEntry } from '../journal/index.js';
import type { Logger } from '../log/index.js';
import { requireCurrency } from '../money/index.js';
import type { CardStore, HeldCard } from './card-store.js';
import { dccFieldsFor, localAmountOf, reversalAmount } from './dcc.js';
import { failpoint } from './failpoints.js';
import { localDateTime } from './local-time.js';
import type { TagVault } from './tag-vault.js';

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

/** Something the host learns from every answer: the operator status bar shows the gateway as online or not. */
export interface GatewayHealthSink {
  gatewayAnswered(): void;
  gatewayUnreachable(reason: string): void;
}

/** What the host wants to know about a submitted request besides the machine's outcome. */
export interface SubmitRecord {
  entry?: JournalEntry;
  prepared?: PreparedRequest;
  outcome: SubmitOutcome;
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
 * The terminal's only path to the gateway: builds the exact request from a machine's description and the card the
 * host holds, journals it durably before a byte goes out (money safety rule 1), sends it once (rule 2), and journals
 * the outcome. Unknown outcomes stay in the journal as 'unknown' until a timeout reversal/void resolves them.
 */
export class PaymentService {
  /** Authorized totals by transactionId of the authorization (grows with incrementals). */
  private readonly authorized = new Map<string, number>();
  /** Tag set of the authorization made with a card read, by card reference (for captures and reversals). */
  private readonly originalTags = new Map<string, string>();
  private sequence = 0;

  constructor(
    private readonly deps: {
      config: Config;
      gateway: GatewayClient;
      journal: Journal;
      cards: CardStore;
      logger: Logger;
      health: GatewayHealthSink;
      now: () => Date;
      /** Durable copy of open authorizations' tag sets (follow-ons after a restart). */
      vault?: TagVault;
    },
  ) {}

  /** Forgets what was kept for a card read once the card is released. */
  forgetCard(cardRef: string): void {
    this.originalTags.delete(cardRef);
  }

  /** The authorized total of an authorization we made, from memory or the journal. */
  authorizedTotal(transactionId: string): number | undefined {
    const known = this.authorized.get(transactionId);
    if (known !== undefined) return known;
    return this.deps.journal.findByTransactionId(transactionId)?.authorizedMinor;
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
      const tags = buildTagSet(read.tlvs, {
        cardType: summary.cardType,
        service: tagService,
        amountMinor,
        otherAmountMinor: 0,
        currencyNumeric: requireCurrency(request.currency).numeric,
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
    if (request.catLevel === 6) {
      pos.initiationChannel = '00';
      if (summary.cardType === '002') pos.isDedicatedHardwareTerminal = t.isDedicatedHardwareTerminal;
    } else if (summary.cardType === '002') {
      pos.isDedicatedHardwareTerminal = t.isDedicatedHardwareTerminal;
    }
    return pos;
  }

  /**
   * EMV tags of a follow-on (capture after an EMV contact pre-authorization, reversal of an EMV original): the tag
   * set of the original authorization, as sent — its cryptogram (9F26) covers the original's amount and date, so the
   * tags are repeated, not rebuilt for the follow-on's amount (gateway.md §7).
   */
  private followOnTags(request: FlowRequest): string | undefined {
    if (!request.includeEmvTags) return undefined;
    const inMemory = request.cardRef ? this.originalTags.get(request.cardRef) : undefined;
    const original = request.original?.transactionId;
    return inMemory ?? (original ? this.deps.vault?.get(original) : undefined);
  }

  /** The tag set sent with an authorization (from the vault), e.g. for its reversal after a restart. */
  authorizationTags(transactionId: string): string | undefined {
    return this.deps.vault?.get(transactionId);
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
    const dccFollowOn = dccFieldsFor(request.dcc, request.amountMinor, family, false);
    const cardPresent = (amountMinor: number): CardPresentFields => {
      if (!card) throw new PaymentBuildError('NO_CARD', `${request.service} needs a card read`);
      return {
        ...common,
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
        return {
          service: 'preauth',
          ...cardPresent(request.amountMinor),
          ...(dccOriginal ? { dcc: dccOriginal } : {}),
        };
      case 'sale':
        return {
          service: 'sale',
          ...cardPresent(request.amountMinor),
          ...(request.authIndicator ? { authIndicator: request.authIndicator } : {}),
          ...(dccOriginal ? { dcc: dccOriginal } : {}),
        };
      case 'credit':
        return { service: 'credit', ...cardPresent(request.amountMinor) };
      case 'incremental':
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
        const amount = reversalAmount(request, family);
        return {
          service: 'reversal',
          ...common,
          id: originalId(),
          authorizedMinor: amount.amountMinor,
          currency: amount.currency,
          ...(tags ? { emvTags: tags } : {}),
        };
      }
      case 'timeout-reversal': {
        const amount = reversalAmount(request, family);
        return {
          service: 'timeout-reversal',
          ...common,
          originalTransactionId: this.originalTransactionId(request),
          amountMinor: amount.amountMinor,
          currency: amount.currency,
        };
      }
      case 'capture': {
        const authTx = request.original?.transactionId;
        const authorizedMinor = (authTx ? this.authorizedTotal(authTx) : undefined) ?? request.amountMinor;
        const tags = this.followOnTags(request);
        return {
          service: 'capture',
          ...common,
          id: originalId(),
          amountMinor: request.amountMinor,
          authorizedMinor,
          currency: request.currency,
          preauthEntryMode: card?.summary.entryMode ?? 'contactless',
          ...(tags ? { emvTags: tags } : {}),
          ...(dccFollowOn ? { dcc: dccFollowOn } : {}),
        };
      }
      case 'refund-capture':
      case 'refund-payment':
        return {
          service: request.service,
          ...common,
          id: originalId(),
          amountMinor: request.amountMinor,
          currency: request.currency,
          ...(dccFollowOn ? { dcc: dccFollowOn } : {}),
        };
      case 'void-capture':
      case 'void-payment':
      case 'void-refund':
      case 'void-credit':
        return { service: request.service, ...common, id: originalId() };
      case 'timeout-void':
        return {
          service: 'timeout-void',
          ...common,
          originalTransactionId: this.originalTransactionId(request),
        };
    }
  }

  private originalTransactionId(request: FlowRequest): string {
    const id = request.original?.transactionId;
    if (!id)
      throw new PaymentBuildError(
        'NO_ORIGINAL',
        `${request.service} needs the transactionId of the original`,
      );
    return id;
  }

  /**
   * Builds, journals, sends and journals the outcome of one request. Never throws for gateway or build failures:
   * they are outcomes. A journal failure does throw (nothing was sent then).
   */
  async submit(request: FlowRequest, options: { flowId?: string } = {}): Promise<SubmitRecord> {
    const { gateway, journal, logger } = this.deps;
    let prepared: PreparedRequest;
    try {
      prepared = gateway.prepare(this.toGatewayRequest(request));
    } catch (e) {
      const code =
        e instanceof PaymentBuildError || e instanceof TagSetError || e instanceof GatewayError
          ? e.code
          : 'BUILD_FAILED';
      logger.warn({ service: request.service, code, err: e }, 'request not built; nothing sent');
      return { outcome: { kind: 'rejected', transactionId: 'not-sent', reason: code } };
    }
    const resolves =
      request.service === 'timeout-reversal' || request.service === 'timeout-void'
        ? journal.findByTransactionId(this.originalTransactionId(request))
        : undefined;
    const card = request.cardRef ? this.deps.cards.get(request.cardRef) : undefined;
    const entry = journal.begin({
      ...(prepared.transactionId ? { transactionId: prepared.transactionId } : {}),
      ...(prepared.referencedTransactionId
        ? { referencedTransactionId: prepared.referencedTransactionId }
        : {}),
      ...(request.original?.transactionId && !prepared.referencedTransactionId
        ? { referencedTransactionId: request.original.transactionId }
        : {}),
      service: prepared.service,
      comments: prepared.comments,
      method: prepared.method,
      path: prepared.path,
      body: prepared.body,
      ...(prepared.amountMinor !== undefined ? { amountMinor: prepared.amountMinor } : {}),
      ...(prepared.currency ? { currency: prepared.currency } : {}),
      ...(options.flowId ? { flowId: options.flowId } : {}),
      ...(request.original?.gatewayId ? { parentGatewayId: request.original.gatewayId } : {}),
      ...(card ? { maskedPan: card.summary.maskedPan } : {}),
      moneyMoving: prepared.moneyMoving,
      ...(resolves ? { resolvesEntryId: resolves.id } : {}),
    });
    failpoint('journal.begin');
    journal.markSent(entry.id);
    failpoint('journal.sent');
    const outcome = await gateway.send(prepared);
    failpoint('gateway.answered');
    this.record(entry, outcome);
    failpoint('journal.outcome');
    const transactionId = prepared.transactionId ?? prepared.referencedTransactionId ?? `entry-${entry.id}`;
    const result = this.toSubmitOutcome(request, outcome, transactionId);
    this.keepTags(request, prepared, result);
    if (result.kind === 'approved' && resolves) journal.resolve(resolves.id, request.service, entry.id);
    return { entry: journal.get(entry.id) ?? entry, prepared, outcome: result };
  }

  private keepTags(request: FlowRequest, prepared: PreparedRequest, result: SubmitOutcome): void {
    const vault = this.deps.vault;
    if (!vault || result.kind !== 'approved') return;
    if (request.service === 'preauth' && prepared.transactionId && request.cardRef) {
      const tags = this.originalTags.get(request.cardRef);
      if (tags) vault.put(prepared.transactionId, tags);
    } else if (
      (request.service === 'capture' ||
        request.service === 'reversal' ||
        request.service === 'timeout-reversal') &&
      request.original?.transactionId
    ) {
      vault.delete(request.original.transactionId);
    }
  }

  /** Journals a gateway outcome for an entry (state per gateway.md §4 classification). */
  record(entry: JournalEntry, outcome: Outcome): void {
    const { journal, health } = this.deps;
    switch (outcome.kind) {
      case 'approved':
        health.gatewayAnswered();
        journal.recordOutcome(entry.id, {
          state: 'approved',
          gatewayId: outcome.gatewayId,
          status: outcome.status,
          httpStatus: outcome.httpStatus,
          ...(outcome.authorizedMinor !== undefined ? { authorizedMinor: outcome.authorizedMinor } : {}),
        });
        break;
      case 'declined':
        health.gatewayAnswered();
        journal.recordOutcome(entry.id, {
          state: 'declined',
          ...(outcome.gatewayId ? { gatewayId: outcome.gatewayId } : {}),
          status: outcome.status,
          httpStatus: outcome.httpStatus,
          reason: outcome.reason,
        });
        break;
      case 'rejected':
        health.gatewayAnswered();
        journal.recordOutcome(entry.id, {
          state: 'rejected',
          httpStatus: outcome.httpStatus,
          reason: outcome.reason,
        });
        break;
      case 'unknown':
        if (outcome.error.outcomeUnknown) {
          health.gatewayUnreachable(outcome.error.code);
          journal.recordOutcome(entry.id, {
            state: 'unknown',
            ...(outcome.httpStatus !== undefined ? { httpStatus: outcome.httpStatus } : {}),
            reason: outcome.error.code,
          });
        } else if (outcome.error.code === 'GW_CONNECTION') {
          // Connection refused before a byte was written: provably not sent. Resolving it as such frees its
          // transactionId, so that the same request may wait in the offline queue.
          health.gatewayUnreachable(outcome.error.code);
          journal.resolve(entry.id, NOT_SENT);
        } else {
          // Refused unprocessed (401, a bad configuration): an answer, and a failure nothing will undo.
          health.gatewayAnswered();
          journal.recordOutcome(entry.id, {
            state: 'rejected',
            ...(outcome.httpStatus !== undefined ? { httpStatus: outcome.httpStatus } : {}),
            reason: outcome.error.code,
          });
        }
        break;
    }
  }

  private toSubmitOutcome(request: FlowRequest, outcome: Outcome, transactionId: string): SubmitOutcome {
    switch (outcome.kind) {
      case 'approved': {
        // The machines count in the local currency; family A answers a converted request in the billing currency.
        const authorizedMinor = localAmountOf(
          outcome.authorizedMinor ?? outcome.amountMinor,
          request,
          this.deps.config.dcc.processorFamily,
        );
        if (authorizedMinor !== undefined) {
          if (request.service === 'incremental' && request.original) {
            this.authorized.set(request.original.transactionId, authorizedMinor);
          } else if (
            request.service === 'preauth' ||
            request.service === 'sale' ||
            request.service === 'avr'
          ) {
            this.authorized.set(transactionId, authorizedMinor);
          }
        }
        return {
          kind: 'approved',
          transactionId,
          gatewayId: outcome.gatewayId,
          ...(authorizedMinor !== undefined ? { authorizedMinor } : {}),
          partial: outcome.partial,
        };
      }
      case 'declined':
        return {
          kind: 'declined',
          transactionId,
          ...(outcome.gatewayId ? { gatewayId: outcome.gatewayId } : {}),
          reason: outcome.reason,
        };
      case 'rejected':
        return { kind: 'rejected', transactionId, reason: outcome.reason };
      case 'unknown':
        return outcome.error.outcomeUnknown
          ? { kind: 'unknown', transactionId, reason: outcome.error.code }
          : { kind: 'rejected', transactionId, reason: outcome.error.code };
    }
  }
}
