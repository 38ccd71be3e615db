import {
  AUDIT_LIST_MAX,
  type AuditAction,
  type AuditActor,
  type SettingValue,
  type AuditQuery,
  type AuditRecord,
  type AuditStore,
  type NewAuditRecord,
  type RecoveryItem,
} from '../journal/index.js';
import type { Logger } from '../log/index.js';

/**
 * Configuration keys whose values could be secrets: recorded as changed, never with their values. The configuration
 * holds only the paths of secret files (`…File`) and public identifiers (`…Id`), which are recorded; the rule guards a
 * key added later.
 */
function secretKey(key: string): boolean {
  const last = key.slice(key.lastIndexOf('.') + 1);
  return !/(File|Id|Url)$/.test(last) && /pin|secret|password|passphrase|token|private|key/i.test(last);
}

/** Longest value of a setting the log keeps whole; a longer one (a tariff's bands) is cut, with its length. */
const SETTING_VALUE_MAX = 240;

function keptValue(value: SettingValue): SettingValue {
  if (typeof value !== 'string' || value.length <= SETTING_VALUE_MAX) return value;
  return `${value.slice(0, SETTING_VALUE_MAX)}… (${value.length} characters)`;
}

/** A fee not collected in full by its capture (the payment router's `feeShortfall`). No card data. */
export interface FeeShortfall {
  captureTransactionId: string;
  authorizationTransactionId?: string;
  /** What the customer owed, minor units of `currency`. */
  owedMinor: number;
  /** What the capture took. */
  capturedMinor: number;
  currency: string;
  /**
   * `INCREMENTAL_NOT_APPROVED` (the capture asked less than owed), `CAPTURED_LESS_THAN_ASKED` (the gateway took less),
   * `CAPTURE_NOT_STANDING` (a meter session's later capture, done at the next start, found a capture of its hold
   * that did not stand: that part of the fee is not taken, and the hold is released), `CAPTURE_WINDOW_ENDED` (a meter
   * session's capture refused for now was tried again until its hold's capture window ended: the hold is released).
   */
  reason:
    'INCREMENTAL_NOT_APPROVED' | 'CAPTURED_LESS_THAN_ASKED' | 'CAPTURE_NOT_STANDING' | 'CAPTURE_WINDOW_ENDED';
}

/** A fee not collected in full as the audit log recorded it (see {@link AuditTrail.feeShortfallsSince}). */
export interface RecordedShortfall {
  /** Minor units of `currency`. */
  minor: number;
  currency: string;
  /**
   * The record's code: `INCREMENTAL_NOT_APPROVED`, `CAPTURED_LESS_THAN_ASKED`, `CAPTURE_NOT_STANDING`,
   * `CAPTURE_WINDOW_ENDED`, `FEE_NOT_COMPUTABLE` or `STAY_OUTSTAYED`.
   */
  code?: string;
  /** A fee not computable: the currency of the hold the tariff could not price. */
  holdCurrency?: string;
}

/**
 * A tap-and-go exit whose fee could not be priced in its hold's currency (the configured currency changed since the
 * hold was authorized): the hold was released and nothing charged. No card data.
 */
export interface UnpricedFee {
  authorizationTransactionId: string;
  /** The hold's authorization: its total and currency. */
  authorizedMinor: number;
  holdCurrency: string;
  /** The fee the tariff asks, minor units of `currency` (the configured one): all of it uncollected. */
  feeMinor: number;
  currency: string;
}

/**
 * The host's side of the audit log (issue 13, item 7): what the operator desk, recovery, service mode and the
 * configuration record, in the words of the host, over the journal's append-only {@link AuditStore}.
 *
 * Recording never stands in the way of what it records: the action has happened (or been refused) by the time it is
 * recorded, and its money truth is in the journal, so a record that cannot be written is logged as an error and
 * dropped rather than turned into a failure of the refund, the void or the sign-in.
 */
export class AuditTrail {
  constructor(
    private readonly store: AuditStore,
    private readonly logger: Logger,
  ) {}

  /** Appends one record; returns it, or undefined when it could not be written (logged). */
  record(entry: NewAuditRecord): AuditRecord | undefined {
    try {
      return this.store.append(entry);
    } catch (err) {
      this.logger.error(
        { err, action: entry.action, result: entry.result },
        'the audit log could not record an action',
      );
      return undefined;
    }
  }

  /**
   * Whether a record of `action` about `subject` already holds every one of `facts` ({@link AuditStore.holds}); false
   * when the log cannot be read (logged): a fact recorded twice rather than not at all.
   */
  holds(action: AuditAction, subject: string | undefined, facts: Record<string, string | number>): boolean {
    try {
      return this.store.holds(action, subject, facts);
    } catch (err) {
      this.logger.error({ err, action }, 'the audit log could not be read');
      return false;
    }
  }

  /**
   * An in-flight journal entry that recovery resolved (the `onResolved` of TimeoutRecovery): `ok` when it is settled,
   * `refused` when it needs the operator (e.g. a void refused after the settlement cut-off, a refund may be due). The
   * code is the resolution (`timeout-reversal`, `timeout-void`, `already-reversed`, `not-voidable` …).
   */
  recovery(item: RecoveryItem): AuditRecord | undefined {
    return this.record({
      actor: 'system',
      action: 'recovery',
      subject: item.transactionId ?? `entry-${item.entryId}`,
      result: item.needsOperator ? 'refused' : 'ok',
      code: item.resolution,
      details: {
        entryId: item.entryId,
        service: item.service,
        ...(item.amountMinor !== undefined ? { amountMinor: item.amountMinor, currency: item.currency } : {}),
        attempts: item.attempts,
        needsOperator: item.needsOperator,
        ...(item.resolvedByEntryId !== undefined ? { resolvedByEntryId: item.resolvedByEntryId } : {}),
      },
    });
  }

  /**
   * A fee not computable at a tap-and-go exit ({@link UnpricedFee}), as a `fee-shortfall` of the whole fee, subject the
   * authorization (no capture took anything), code `FEE_NOT_COMPUTABLE`.
   */
  feeNotComputable(f: UnpricedFee): AuditRecord | undefined {
    return this.shortfall(f.authorizationTransactionId, 'FEE_NOT_COMPUTABLE', {
      authorizedMinor: f.authorizedMinor,
      holdCurrency: f.holdCurrency,
      owedMinor: f.feeMinor,
      capturedMinor: 0,
      shortfallMinor: f.feeMinor,
      currency: f.currency,
    });
  }

  /**
   * A tap-and-go stay that outlasted its hold and whose card entered again before its exit (no exit charges it any
   * more): a `fee-shortfall` of the whole fee, subject the hold's authorization (nothing was captured), code
   * `STAY_OUTSTAYED`; the fee in the tariff's currency, the hold's currency beside it. No card data.
   */
  outstayedStayLeft(f: {
    authorizationTransactionId: string;
    holdCurrency: string;
    feeMinor: number;
    currency: string;
  }): AuditRecord | undefined {
    return this.shortfall(f.authorizationTransactionId, 'STAY_OUTSTAYED', {
      holdCurrency: f.holdCurrency,
      owedMinor: f.feeMinor,
      capturedMinor: 0,
      shortfallMinor: f.feeMinor,
      currency: f.currency,
    });
  }

  /**
   * A capture took less than its customer owed (src/host/payment-router.ts, in the capture outcome's transaction):
   * `refused` with the reason, the capture's transactionId the subject; amounts in minor units, no card data.
   */
  feeShortfall(s: FeeShortfall): AuditRecord | undefined {
    return this.shortfall(s.captureTransactionId, s.reason, {
      ...(s.authorizationTransactionId !== undefined
        ? { authorizationTransactionId: s.authorizationTransactionId }
        : {}),
      owedMinor: s.owedMinor,
      capturedMinor: s.capturedMinor,
      shortfallMinor: s.owedMinor - s.capturedMinor,
      currency: s.currency,
    });
  }

  /**
   * A tap-and-go entry refused after its verification (AVR, which moved no money) and before any pre-authorization:
   * `entry-refused`, `refused`, the reason its code (`CARD_ALREADY_INSIDE`: the card's stay is open, its hold's id in
   * the details), the verification's transactionId the subject. No card data.
   */
  entryRefused(refusal: { reason: string; holdId: string; transactionId: string }): AuditRecord | undefined {
    return this.record({
      actor: 'system',
      action: 'entry-refused',
      ...(refusal.transactionId !== '' ? { subject: refusal.transactionId } : {}),
      result: 'refused',
      code: refusal.reason,
      details: { holdId: refusal.holdId },
    });
  }

  /**
   * A tap-and-go stay that outlasted its hold, at its exit: `stay-outstayed`, `ok` when its fee was charged by a sale
   * (the sale's transactionId the subject), `refused` with the sale's reason otherwise; the hold's id and the fee in
   * minor units in the details. Also, before any exit, when its hold is taken at the end of its maximum stay: `refused`,
   * `MAXIMUM_STAY_REACHED`, the hold's authorization the subject. No card data.
   */
  stayOutstayed(stay: {
    hold: { holdId: string; currency: string };
    feeMinor: number;
    sold: boolean;
    transactionId?: string;
    reason?: string;
  }): AuditRecord | undefined {
    return this.record({
      actor: 'system',
      action: 'stay-outstayed',
      ...(stay.transactionId !== undefined ? { subject: stay.transactionId } : {}),
      result: stay.sold ? 'ok' : 'refused',
      code: stay.sold ? 'SOLD' : (stay.reason ?? 'NOT_SOLD'),
      details: { holdId: stay.hold.holdId, feeMinor: stay.feeMinor, currency: stay.hold.currency },
    });
  }

  /** A `fee-shortfall` record: a fee the terminal did not collect in full, for the operator. */
  private shortfall(
    subject: string,
    code: string,
    details: Record<string, unknown>,
  ): AuditRecord | undefined {
    return this.record({
      actor: 'system',
      action: 'fee-shortfall',
      subject,
      result: 'refused',
      code,
      details,
    });
  }

  /**
   * A configuration setting changed (`key` as in the configuration file, e.g. `offline.policy`), with its old and new
   * value. A key that names a secret (PIN, key, password, token …) is recorded without its values.
   */
  configurationChange(change: {
    actor: AuditActor;
    key: string;
    from?: SettingValue;
    to?: SettingValue;
    result?: 'ok' | 'refused' | 'failed';
    code?: string;
  }): AuditRecord | undefined {
    const secret = secretKey(change.key);
    return this.record({
      actor: change.actor,
      action: 'configuration-change',
      subject: change.key,
      result: change.result ?? 'ok',
      ...(change.code !== undefined ? { code: change.code } : {}),
      details: secret
        ? { values: 'not recorded (secret)' }
        : {
            ...(change.from !== undefined ? { from: keptValue(change.from) } : {}),
            ...(change.to !== undefined ? { to: keptValue(change.to) } : {}),
          },
    });
  }

  /**
   * Service mode turned on (out of service, with the reason customers are shown) or off — or asked for and refused
   * (`code` BUSY: the terminal was not idle) or failed, with the message the asker was given.
   */
  serviceMode(change: {
    actor: AuditActor;
    on: boolean;
    reason?: string;
    result?: 'ok' | 'refused' | 'failed';
    code?: string;
    message?: string;
  }): AuditRecord | undefined {
    return this.record({
      actor: change.actor,
      action: change.on ? 'service-mode-on' : 'service-mode-off',
      result: change.result ?? 'ok',
      ...(change.code !== undefined ? { code: change.code } : {}),
      details: {
        ...(change.reason !== undefined ? { reason: change.reason } : {}),
        ...(change.message !== undefined ? { message: change.message } : {}),
      },
    });
  }

  /** As {@link AuditStore.feeShortfallsAwaiting}: the fee shortfalls no operator has acknowledged, oldest first. */
  feeShortfallsAwaiting(): AuditRecord[] {
    return this.store.feeShortfallsAwaiting();
  }

  /** How many fee shortfalls no operator has acknowledged (the operator status's `feeShortfalls`). */
  feeShortfallsAwaitingCount(): number {
    return this.store.feeShortfallsAwaitingCount();
  }

  /**
   * As {@link AuditStore.acknowledgeFeeShortfall}: the acknowledgement is the record itself, so a failure to write it
   * is thrown, not dropped as {@link record} drops one.
   */
  acknowledgeFeeShortfall(subject: string, actor: AuditActor): boolean {
    return this.store.acknowledgeFeeShortfall(subject, actor);
  }

  /** As {@link AuditStore.list}: the newest `limit` records at or after `sinceMs`, oldest first. */
  list(query: AuditQuery = {}): AuditRecord[] {
    return this.store.list(query);
  }

  /**
   * The operator PIN checks recorded at or after `sinceMs`, oldest first: a `sign-in` (a good PIN) or a `sign-in-failed`
   * with a wrong PIN (`OPERATOR_PIN`), for `OperatorPin.restore`. The refusals during a lockout (`OPERATOR_LOCKED`: the
   * first of each lockout and the record that sums up the others) are left out: they counted for nothing. Empty when
   * the log cannot be read (logged).
   */
  pinChecksSince(sinceMs: number): { atMs: number; ok: boolean }[] {
    let records: AuditRecord[];
    try {
      records = this.list({ sinceMs, limit: AUDIT_LIST_MAX });
    } catch (err) {
      this.logger.error({ err }, 'the audit log could not be read for the operator PIN checks');
      return [];
    }
    return records
      .filter(
        (r) =>
          r.actor === 'operator' &&
          (r.action === 'sign-in' || (r.action === 'sign-in-failed' && r.code !== 'OPERATOR_LOCKED')),
      )
      .map((r) => ({ atMs: Date.parse(r.time), ok: r.action === 'sign-in' }));
  }

  /**
   * The fees not collected in full recorded at or after `sinceMs`, by their record's subject — the capture's
   * transactionId ({@link feeShortfall}), or the authorization's for a fee not computable ({@link feeNotComputable}):
   * the shortfall in minor units of its currency, the record's code and, for a fee not computable, the hold's
   * currency. One read of the log from `sinceMs` (its time index).
   */
  feeShortfallsSince(sinceMs: number): Map<string, RecordedShortfall> {
    const found = new Map<string, RecordedShortfall>();
    for (const r of this.list({ sinceMs, limit: AUDIT_LIST_MAX })) {
      if (r.action !== 'fee-shortfall' || r.subject === undefined) continue;
      const { shortfallMinor, currency, holdCurrency } = r.details;
      if (typeof shortfallMinor === 'number' && typeof currency === 'string')
        found.set(r.subject, {
          minor: shortfallMinor,
          currency,
          ...(r.code !== undefined ? { code: r.code } : {}),
          ...(typeof holdCurrency === 'string' ? { holdCurrency } : {}),
        });
    }
    return found;
  }
}
