import { createActor } from 'xstate';
import type { Config } from '../config/index.js';
import {
  provideFlowEffects,
  type FlowEffects,
  type FlowSettings,
  type OperatorCommand,
  type OperatorResult,
  type OriginalTransaction,
} from '../flows/index.js';
import type { JournalEntry, SqliteJournal } from '../journal/index.js';
import type { Logger } from '../log/index.js';
import { formatMoney } from '../money/index.js';
import type { OperatorRequest, OperatorResponse, Result, TransactionSummary } from './api.js';
import { sameLocalDay } from './local-time.js';
import type { OperatorPin } from './operator-pin.js';

const REFUNDABLE_OR_VOIDABLE = new Set(['capture', 'sale', 'refund-capture', 'refund-payment', 'credit']);

function ok<T>(value: T): Result<T> {
  return { ok: true, value };
}
function fail<T>(code: string, message: string): Result<T> {
  return { ok: false, error: { code, message } };
}

/**
 * The journal's record of a transaction the operator may refund or void (FlowEffects.findTransaction): its amount,
 * what was refunded already, whether the settlement day still allows a void, and for a capture the authorization it
 * captured (voiding a capture leaves that hold in place, gateway.md §7).
 */
export function findTransaction(
  journal: SqliteJournal,
  transactionId: string,
  options: {
    now: Date;
    timeZone: string;
    currency: string;
    authorizedTotal: (tx: string) => number | undefined;
    /**
     * An amount as the journal holds it (the gateway's: a converted payment of processor family A is in the card's
     * currency) in the local currency the machines and the operator count in.
     */
    toLocal?: (
      authorizationTx: string,
      minor: number,
      currency: string,
    ) => { minor: number; currency: string };
  },
): OriginalTransaction | null {
  const entry = journal.findByTransactionId(transactionId);
  if (!entry || entry.state !== 'approved' || !entry.gatewayId) return null;
  const service = entry.service;
  if (!REFUNDABLE_OR_VOIDABLE.has(service)) return null;
  const related = journal.list({ limit: 1000 }).filter((e) => e.referencedTransactionId === transactionId);
  const refundedMinor = related
    .filter(
      (e) => (e.service === 'refund-capture' || e.service === 'refund-payment') && e.state === 'approved',
    )
    .reduce((s, e) => s + (e.amountMinor ?? 0), 0);
  const voided = related.some((e) => e.service.startsWith('void-') && e.state === 'approved');
  let authorization: OriginalTransaction['authorization'];
  if (service === 'capture' && entry.referencedTransactionId) {
    const auth = journal.findByTransactionId(entry.referencedTransactionId);
    if (auth?.gatewayId)
      authorization = {
        gatewayId: auth.gatewayId,
        transactionId: entry.referencedTransactionId,
        authorizedMinor: options.authorizedTotal(entry.referencedTransactionId) ?? auth.amountMinor ?? 0,
      };
  }
  const currency = entry.currency ?? options.currency;
  const authTx =
    service === 'capture' ? entry.referencedTransactionId : service === 'sale' ? transactionId : undefined;
  const local = (minor: number): { minor: number; currency: string } =>
    authTx !== undefined && options.toLocal ? options.toLocal(authTx, minor, currency) : { minor, currency };
  const amount = local(entry.authorizedMinor ?? entry.amountMinor ?? 0);
  return {
    transactionId,
    gatewayId: entry.gatewayId,
    service: service as OriginalTransaction['service'],
    amountMinor: amount.minor,
    currency: amount.currency,
    refundedMinor: local(refundedMinor).minor,
    voidable: !voided && sameLocalDay(entry.createdAt, options.now, options.timeZone),
    ...(authorization ? { authorization } : {}),
  };
}

/**
 * Operator mode behind the PIN (DESIGN.md: operator actions need the PIN): the recent transactions with what each
 * allows, refunds and voids — run by the flows' operator machine, the one the unit tests drive — and a flush of the
 * offline queue.
 */
export class OperatorDesk {
  constructor(
    private readonly deps: {
      config: Config;
      journal: SqliteJournal;
      pin: OperatorPin;
      effects: FlowEffects;
      settings: FlowSettings;
      clock: { now(): number };
      now: () => Date;
      logger: Logger;
      authorizedTotal: (transactionId: string) => number | undefined;
      toLocal: (
        authorizationTx: string,
        minor: number,
        currency: string,
      ) => { minor: number; currency: string };
      flushQueue: () => Promise<{ forwarded: number; declined: number; remaining: number }>;
      changed: () => void;
    },
  ) {}

  find(transactionId: string): OriginalTransaction | null {
    const { config } = this.deps;
    return findTransaction(this.deps.journal, transactionId, {
      now: this.deps.now(),
      timeZone: config.terminal.timezone,
      currency: config.terminal.currency,
      authorizedTotal: this.deps.authorizedTotal,
      toLocal: this.deps.toLocal,
    });
  }

  async handle(request: OperatorRequest): Promise<Result<OperatorResponse>> {
    const check = this.deps.pin.check(request.pin);
    if (check === 'locked')
      return fail('OPERATOR_LOCKED', 'too many wrong PINs: operator mode is locked for a few minutes');
    if (check === 'wrong') return fail('OPERATOR_PIN', 'wrong operator PIN');
    const a = request.action;
    switch (a.type) {
      case 'transactions':
        return ok({
          type: 'transactions',
          transactions: this.deps.journal.list({ limit: a.limit ?? 50 }).map((e) => this.summarise(e)),
        });
      case 'refund':
        return ok(
          await this.run(
            {
              type: 'refund',
              transactionId: a.transactionId,
              ...(a.amountMinor !== undefined ? { amountMinor: a.amountMinor } : {}),
            },
            request.pin,
          ),
        );
      case 'void':
        return ok(await this.run({ type: 'void', transactionId: a.transactionId }, request.pin));
      case 'flush-queue':
        return ok({ type: 'flush-queue', ...(await this.deps.flushQueue()) });
    }
  }

  /** One refund or void, run by the operator machine with the host's effects. */
  private async run(command: OperatorCommand, pin: string): Promise<OperatorResponse> {
    const actor = createActor(provideFlowEffects.operator(this.deps.effects), {
      input: { settings: this.deps.settings, clock: this.deps.clock, pin, command },
    });
    const result = await new Promise<OperatorResult>((resolve, reject) => {
      actor.subscribe({
        complete: () => resolve(actor.getSnapshot().output as OperatorResult),
        error: reject,
      });
      actor.start();
    });
    this.deps.logger.info(
      { action: command.type, outcome: result.outcome, code: result.code, service: result.service },
      'operator follow-on finished',
    );
    this.deps.changed();
    return {
      type: command.type,
      outcome: result.outcome,
      code: result.code,
      message: result.message,
      transactionId: result.transactionId ?? command.transactionId,
    };
  }

  private summarise(e: JournalEntry): TransactionSummary {
    const allowed: ('refund' | 'void')[] = [];
    if (e.state === 'approved' && e.transactionId) {
      const o = this.find(e.transactionId);
      if (o && (o.service === 'capture' || o.service === 'sale') && o.refundedMinor < o.amountMinor)
        allowed.push('refund');
      if (o?.voidable) allowed.push('void');
    }
    const locale = this.deps.config.terminal.locale;
    const amount =
      e.amountMinor !== undefined && e.currency
        ? { minor: e.amountMinor, currency: e.currency, text: formatMoney(e.amountMinor, e.currency, locale) }
        : undefined;
    return {
      transactionId: e.transactionId ?? e.referencedTransactionId ?? `entry-${e.id}`,
      service: e.service,
      comments: e.comments,
      ...(e.gatewayId ? { gatewayId: e.gatewayId } : {}),
      state: e.resolution ? `${e.state} (${e.resolution})` : e.state,
      ...(amount ? { amount } : {}),
      ...(e.maskedPan ? { maskedPan: e.maskedPan } : {}),
      at: e.createdAt,
      allowed,
    };
  }
}
