import { EventEmitter } from 'node:events';
import { dirname, resolve } from 'node:path';
import type { AnyActorRef, AnyStateMachine, SnapshotFrom } from 'xstate';
import {
  createReader,
  getSimulatorControl,
  ReaderError,
  type CardReader,
  type ReaderDeps,
  type SimulatedReaderControl,
} from '../../devices/index.js';
import { ConfigError, type Config } from '../config/index.js';
import type {
  CardSummary,
  FlowEffects,
  HoldRecord,
  OriginalTransaction,
  ReceiptData,
  ServiceRequest as FlowRequest,
  SubmitOutcome,
} from '../flows/effects.js';
import { createGatewayClient, type GatewayClient, type OAuthTokenManager } from '../gateway/index.js';
import {
  fileKeyProvider,
  openJournal,
  OfflineQueue,
  TimeoutRecovery,
  type JournalEntry,
  type RecoveryItem as JournalRecoveryItem,
  type SqliteJournal,
} from '../journal/index.js';
import type { Logger } from '../log/index.js';
import { formatMoney, requireCurrency } from '../money/index.js';
import { startSandbox, type Sandbox } from '../sandbox/index.js';
import type {
  ApiError,
  OperatorRequest,
  OperatorResponse,
  OperatorStatus,
  RecoveryItem,
  Result,
  TerminalApi,
  TerminalSnapshot,
  TransactionSummary,
  UserEvent,
} from './api.js';
import { CardStore } from './card-store.js';
import { DccOffers } from './dcc.js';
import { failpoint } from './failpoints.js';
import { createFlowActor, customerView, type FlowRuntime } from './flow-runtime.js';
import { HoldStore } from './holds.js';
import { loadOrCreateSecret } from './keys.js';
import { OperatorPin } from './operator-pin.js';
import { PaymentService } from './payments.js';
import { TagVault } from './tag-vault.js';
import { gatewayAuthFromConfig, gatewayForwarder } from './gateway-adapters.js';
import { GatewayResolver } from './resolver.js';

export { SANDBOX_SHARED_SECRET } from './gateway-adapters.js';

export interface TerminalHostOptions {
  logger: Logger;
  /** Relative paths of the configuration (journal, key files) resolve against it. */
  cwd: string;
  now?: () => Date;
  /** Reader test hooks (an injected HID device). */
  readerDeps?: ReaderDeps;
  /**
   * The parking clock of the machines (stay lengths, tariffs, hold expiry), epoch ms. `simulate` advances it to
   * play a 75-minute stay in a second; the gateway, journal and sandbox keep the real clock (signatures carry dates).
   */
  parkingClock?: { now(): number };
  /** Connect to this gateway base URL instead of the configured one (tests, `simulate` against a given sandbox). */
  gatewayUrlOverride?: string;
}

function ok<T>(value: T): Result<T> {
  return { ok: true, value };
}
function fail<T>(code: string, message: string): Result<T> {
  return { ok: false, error: { code, message } satisfies ApiError };
}

/**
 * The composition root (DESIGN.md, Runtime shape): reader, gateway client (and the embedded sandbox), journal,
 * recovery, offline queue and the machine of the configured parking model, wired together. Implements TerminalApi
 * for the UI. A new card is accepted only once recovery of the journal has finished (money safety rule 3).
 */
export class TerminalHost implements TerminalApi {
  private readonly emitter = new EventEmitter();
  private seq = 0;
  private phase: 'starting' | 'recovering' | 'ready' | 'closed' = 'starting';
  private readonly recoveryItems: RecoveryItem[] = [];
  private recoveryInFlight = 0;
  private gatewayOnline: boolean | null = null;
  private gatewayLastError: string | undefined;
  private runtime: FlowRuntime | undefined;
  private readonly holdTimers = new Map<string, NodeJS.Timeout>();
  private sweepTimer: NodeJS.Timeout | undefined;
  private forwarding: Promise<unknown> | undefined;
  private lastReceipt: ReceiptData | undefined;
  private firmware: string | undefined;
  /** The OAuth grant, when `gateway.auth.method` is `oauth` (closed with the terminal). */
  private oauth: OAuthTokenManager | undefined;
  /** Entries a machine is resolving itself; the background sweep leaves them alone. */
  private readonly machineOwned = new Set<number>();

  readonly payments: PaymentService;
  readonly cards: CardStore;
  readonly recovery: TimeoutRecovery;
  readonly offline: OfflineQueue;
  readonly holds: HoldStore;
  readonly pin: OperatorPin;
  /** Currency conversion offers for the cards held (src/host/dcc.ts); `simulate` lists its exchanges. */
  readonly dcc: DccOffers;

  private constructor(
    readonly config: Config,
    readonly logger: Logger,
    readonly reader: CardReader,
    readonly gateway: GatewayClient,
    readonly journal: SqliteJournal,
    readonly sandbox: Sandbox | undefined,
    private readonly baseUrl: string,
    private readonly now: () => Date,
    paths: { holds: string; fingerprintKey: string; offlineKey: string; tagVault: string },
    private readonly parkingClock: { now(): number },
  ) {
    this.cards = new CardStore(loadOrCreateSecret(paths.fingerprintKey));
    this.holds = new HoldStore(paths.holds);
    this.pin = new OperatorPin(config.terminal.operatorPinFile, () => this.now().getTime());
    this.dcc = new DccOffers({ config, gateway, cards: this.cards, logger, now });
    const atRestKey = fileKeyProvider(paths.offlineKey).loadKey();
    this.payments = new PaymentService({
      config,
      gateway,
      journal,
      cards: this.cards,
      logger,
      now,
      vault: new TagVault(paths.tagVault, atRestKey),
      health: {
        gatewayAnswered: () => this.setGateway(true),
        gatewayUnreachable: (reason) => this.setGateway(false, reason),
      },
    });
    this.recovery = new TimeoutRecovery(journal, new GatewayResolver(gateway, config, now), {
      timeoutReversalDelayMs: config.journal.timeoutReversalDelayMs,
      retryMs: config.journal.resolutionRetryMs,
      now,
      logger: logger.child({ component: 'recovery' }),
      onResolved: (item) => this.noteRecovered(item),
    });
    this.offline = new OfflineQueue(journal, {
      policy: config.offline.policy,
      limits: config.offline,
      keyProvider: fileKeyProvider(paths.offlineKey),
      now,
      logger: logger.child({ component: 'offline' }),
    });
    reader.on('health', () => this.changed());
  }

  /** Builds every component from the configuration; see {@link createTerminalHost}. */
  static async create(config: Config, options: TerminalHostOptions): Promise<TerminalHost> {
    const { logger } = options;
    const now = options.now ?? (() => new Date());
    const at = (p: string): string => resolve(options.cwd, p);
    const journalPath = at(config.journal.path);
    const offlineKey = at(config.offline.keyFile);
    const journal = openJournal(journalPath, {
      logger: logger.child({ component: 'journal' }),
      now,
      key: fileKeyProvider(offlineKey).loadKey(),
    });
    let sandbox: Sandbox | undefined;
    let baseUrl = options.gatewayUrlOverride ?? config.gateway.baseUrl;
    if (!options.gatewayUrlOverride && config.gateway.kind === 'sandbox') {
      sandbox = await startSandbox({ port: 0, logger: logger.child({ component: 'sandbox' }) });
      baseUrl = sandbox.url;
    }
    if (!baseUrl)
      throw new ConfigError(
        'CONFIG_INVALID',
        'gateway.baseUrl is required when gateway.kind is "remote"',
        '<configuration>',
        'gateway.baseUrl',
      );
    const auth = gatewayAuthFromConfig(config, { baseUrl, cwd: options.cwd, logger });
    const gateway = createGatewayClient({
      baseUrl,
      merchantId: config.gateway.merchantId,
      auth: auth.authenticator,
      timeouts: config.gateway.timeouts,
      retry: config.gateway.retry,
      logger: logger.child({ component: 'gateway' }),
      now,
    });
    const reader = createReader(config.reader, { logger, ...options.readerDeps });
    const host = new TerminalHost(
      config,
      logger,
      reader,
      gateway,
      journal,
      sandbox,
      baseUrl,
      now,
      {
        holds: resolve(dirname(journalPath), 'holds.json'),
        fingerprintKey: resolve(dirname(journalPath), 'fingerprint.key'),
        tagVault: resolve(dirname(journalPath), 'authorization-tags.json'),
        offlineKey,
      },
      options.parkingClock ?? { now: () => now().getTime() },
    );
    host.oauth = auth.oauth;
    await host.start();
    return host;
  }

  /** URL of the embedded sandbox, when the terminal runs against it. */
  get sandboxUrl(): string | undefined {
    return this.sandbox?.url;
  }

  /** The PIN generated for this start when no operator PIN file is configured. */
  get generatedOperatorPin(): string | undefined {
    return this.pin.generated;
  }

  /** The simulator behind a `sim` reader (tests, `simulate`). */
  get simulator(): SimulatedReaderControl | undefined {
    return getSimulatorControl(this.reader);
  }

  private async start(): Promise<void> {
    this.connectReader();
    this.phase = 'recovering';
    this.recoveryInFlight = this.journal.inFlight().length;
    this.changed();
    const report = await this.recovery.recoverAll();
    this.logger.info({ resolved: report.resolved.length }, 'journal recovery finished');
    this.recoveryInFlight = 0;
    this.offline.reconcile();
    this.runtime = createFlowActor(this.config, this.effects(), this.logger, this.parkingClock);
    this.runtime.actor.subscribe(() => this.changed());
    this.runtime.actor.start();
    for (const hold of this.holds.unclaimed()) this.watchHold(hold);
    await this.settleOrphanedAuthorizations();
    // Entries left unknown at runtime that no machine resolves (a machine gave up): resolved in the background.
    this.sweepTimer = setInterval(() => this.sweep(), Math.max(1_000, this.config.journal.resolutionRetryMs));
    this.sweepTimer.unref();
    this.phase = 'ready';
    this.changed();
    if (this.offline.status().depth > 0) void this.startForwarding();
  }

  private connectReader(): void {
    this.reader
      .connect()
      .then(async () => {
        this.firmware = await this.reader.firmwareVersion().catch(() => undefined);
        this.changed();
      })
      .catch((e: unknown) => {
        this.logger.warn({ err: e }, 'reader not connected; the driver keeps trying');
        this.changed();
      });
  }

  /** An authorization was reversed: a tap-and-go hold on it is over (it must never be reversed or captured again). */
  private authorizationReversed(transactionId: string): void {
    if (this.holds.drop(transactionId)) {
      this.unwatchHold(transactionId);
      this.logger.info({ transactionId }, 'hold closed: its authorization was reversed');
    }
  }

  private noteRecovered(item: JournalRecoveryItem): void {
    if (item.transactionId && ['timeout-reversal', 'already-reversed'].includes(item.resolution))
      this.authorizationReversed(item.transactionId);
    const currency = item.currency;
    this.recoveryItems.unshift({
      transactionId: item.transactionId ?? `entry-${item.entryId}`,
      service: item.service,
      ...(item.amountMinor !== undefined && currency
        ? {
            amount: {
              minor: item.amountMinor,
              currency,
              text: formatMoney(item.amountMinor, currency, this.config.terminal.locale),
            },
          }
        : {}),
      resolution: item.resolution + (item.needsOperator ? ' (operator action needed)' : ''),
      at: item.at,
    });
    this.recoveryItems.splice(20);
    this.machineOwned.delete(item.entryId);
    this.changed();
  }

  private sweep(): void {
    if (this.phase !== 'ready') return;
    // Stored offline payments go as soon as the gateway answers again: try while any wait (a refused connection
    // sends nothing and leaves them queued).
    if (!this.forwarding && this.offline.status().depth > 0) void this.startForwarding();
    const graceMs = this.config.journal.timeoutReversalDelayMs + 5 * this.config.journal.resolutionRetryMs;
    const cutoff = this.now().getTime() - graceMs;
    for (const e of this.journal.inFlight()) {
      if (this.machineOwned.has(e.id) && Date.parse(e.createdAt) > cutoff) continue;
      if (e.state !== 'unknown' && Date.parse(e.createdAt) > cutoff) continue;
      this.recovery
        .recover(e.id)
        .catch((err: unknown) => this.logger.error({ err }, 'background recovery failed'));
    }
  }

  private setGateway(online: boolean, reason?: string): void {
    const was = this.gatewayOnline;
    this.gatewayOnline = online;
    this.gatewayLastError = online ? undefined : reason;
    if (online && was === false) void this.startForwarding();
    if (was !== online) this.changed();
  }

  /** Forwards stored offline payments (in order, bounded concurrency, exactly once each). */
  startForwarding(): Promise<unknown> {
    if (this.forwarding) return this.forwarding;
    const run = this.offline
      .forwardPending(gatewayForwarder(this.gateway), { concurrency: this.config.offline.forwardConcurrency })
      .then((report) => {
        if (report.forwarded > 0) this.setGateway(!report.gatewayUnreachable);
        for (const id of report.unknown) void this.recovery.recover(id).catch(() => undefined);
        if (report.declined.length > 0)
          this.logger.warn(
            { declined: report.declined.length },
            'offline payments declined after forwarding',
          );
        return report;
      })
      .finally(() => {
        this.forwarding = undefined;
        this.changed();
      });
    this.forwarding = run;
    return run;
  }

  // ---- the effects the machines need (src/flows/effects.ts) ----

  private effects(): FlowEffects {
    const config = this.config;
    return {
      readCard: async (input, signal): Promise<CardSummary> => {
        if (this.phase !== 'ready')
          throw new ReaderError('READER_NOT_CONNECTED', 'recovery is still running');
        const read = await this.reader.activate({
          amountMinor: input.amountMinor,
          otherAmountMinor: 0,
          currencyNumeric: requireCurrency(input.currency).numeric,
          countryNumeric: config.terminal.countryNumeric,
          transactionType: input.transactionType,
          timeoutSeconds: config.reader.activateTimeoutSeconds,
          signal,
        });
        return this.cards.hold(read).summary;
      },
      submit: (request, _signal) => this.submit(request),
      dccOffer: (input, signal) => this.dcc.offer(input, signal),
      lookupTicket: ({ ticket }) => Promise.resolve(lookupTicket(ticket, config.terminal.timezone)),
      verifyOperatorPin: ({ pin }) => Promise.resolve(this.pin.check(pin) === 'ok'),
      findTransaction: ({ transactionId }) => Promise.resolve(this.findTransaction(transactionId)),
      openHold: (hold) => {
        this.holds.open(hold);
        this.watchHold(hold);
        return Promise.resolve();
      },
      claimHold: ({ fingerprint }) => {
        const hold = this.holds.claim(fingerprint);
        if (hold) this.unwatchHold(hold.holdId);
        return Promise.resolve(hold);
      },
      closeHold: ({ hold, resolution }) => {
        this.holds.close(hold, resolution);
        if (resolution === 'returned') this.watchHold(hold);
      },
      releaseCard: ({ cardRef }) => {
        this.cards.release(cardRef);
        this.payments.forgetCard(cardRef);
      },
      issueReceipt: (receipt) => {
        this.lastReceipt = receipt;
        this.changed();
      },
    };
  }

  /**
   * One request from a machine: online through the journal, or — when the gateway cannot be reached, the policy is
   * prefer-online and the read was chip — stored for forwarding within the configured limits.
   */
  async submit(request: FlowRequest): Promise<SubmitOutcome> {
    const record = await this.payments.submit(request);
    const { outcome, prepared, entry } = record;
    if (
      outcome.kind === 'approved' &&
      (request.service === 'reversal' || request.service === 'timeout-reversal') &&
      request.original?.transactionId
    )
      this.authorizationReversed(request.original.transactionId);
    if (outcome.kind === 'unknown' && entry) this.machineOwned.add(entry.id);
    const unreachable = outcome.kind === 'rejected' && outcome.reason === 'GW_CONNECTION';
    if (!unreachable || !prepared || !entry || !prepared.transactionId) return outcome;
    const card = request.cardRef ? this.cards.get(request.cardRef) : undefined;
    if (this.config.offline.policy !== 'prefer-online' || !card) return outcome;
    // A converted sale rests on an offer that expires within minutes: it cannot wait in a queue.
    if (request.dcc?.indicator === '1') return outcome;
    const candidate = {
      service: prepared.service,
      entryMode: card.summary.entryMode,
      amountMinor: prepared.amountMinor ?? 0,
      currency: prepared.currency ?? request.currency,
    };
    const refusal = this.offline.refusal(candidate);
    if (refusal) {
      this.logger.info({ code: refusal.code, reason: refusal.message }, 'payment not taken offline');
      return outcome;
    }
    // The online attempt provably never left (connection refused): its entry was resolved as not sent, and the same
    // request, with the same transactionId, waits in the queue.
    const stored = this.offline.store({
      ...candidate,
      transactionId: prepared.transactionId,
      comments: prepared.comments,
      method: prepared.method,
      path: prepared.path,
      body: prepared.body,
      maskedPan: card.summary.maskedPan,
    });
    failpoint('offline.stored');
    this.logger.info({ transactionId: stored.transactionId }, 'payment stored offline');
    this.changed();
    return {
      kind: 'approved',
      transactionId: stored.transactionId,
      authorizedMinor: stored.amountMinor,
      partial: false,
      reason: 'OFFLINE_STORED',
    };
  }

  /**
   * Pre-authorizations approved before a restart and neither captured nor reversed: the meter session that owned
   * them is gone with the process, so the capture-window rule (spec 001 meter model: an authorization not captured in
   * time is reversed) is applied here, from the journal, with the authorized total (increments included). Tap-and-go
   * holds have their own store and expiry.
   */
  private async settleOrphanedAuthorizations(): Promise<void> {
    const dueNow: Array<() => Promise<void>> = [];
    const entries = this.journal.list({ limit: 10_000 });
    const followOns = new Map<string, JournalEntry[]>();
    for (const e of entries) {
      if (!e.referencedTransactionId) continue;
      const list = followOns.get(e.referencedTransactionId) ?? [];
      list.push(e);
      followOns.set(e.referencedTransactionId, list);
    }
    const windowMs = this.config.tariff.captureWindowMinutes * 60_000;
    for (const e of entries) {
      if (e.service !== 'preauth' || e.state !== 'approved' || !e.transactionId || !e.gatewayId) continue;
      if (this.holds.has(e.transactionId)) continue;
      const related = followOns.get(e.transactionId) ?? [];
      // Settled: a capture the gateway approved, or a reversal approved or taken over by recovery (which resolves
      // it by reversing this authorization). A capture resolved by recovery was voided: the hold is still there.
      const settled = related.some(
        (f) =>
          (f.service === 'capture' && f.state === 'approved') ||
          ((f.service === 'reversal' || f.service === 'timeout-reversal') &&
            (f.state === 'approved' || f.state === 'resolved' || f.state === 'unknown')),
      );
      if (settled) continue;
      const total = Math.max(
        e.authorizedMinor ?? e.amountMinor ?? 0,
        ...related
          .filter((f) => f.service === 'incremental' && f.state === 'approved')
          .map((f) => f.authorizedMinor ?? 0),
      );
      const { transactionId, gatewayId } = e;
      const currency = e.currency ?? this.config.terminal.currency;
      // A capture was attempted and did not stand (voided by recovery, or provably not sent): the session ended, so
      // the hold is released now rather than at the end of the capture window.
      const captureFailed = related.some((f) => f.service === 'capture');
      const due = captureFailed ? 0 : Date.parse(e.createdAt) + windowMs - this.now().getTime();
      const reverse = (): Promise<void> =>
        this.submit({
          service: 'reversal',
          comments: 'REVERSAL',
          amountMinor: total,
          currency,
          catLevel: 2,
          original: { gatewayId, transactionId, service: 'preauth' },
          includeEmvTags: this.payments.authorizationTags(transactionId) !== undefined,
        }).then((outcome) =>
          this.logger.info({ transactionId, outcome: outcome.kind }, 'uncaptured authorization reversed'),
        );
      if (due <= 0) {
        // Part of recovery: done before the terminal takes a card (an unknown outcome is left to the sweep).
        dueNow.push(reverse);
        continue;
      }
      const timer = setTimeout(
        () => {
          this.holdTimers.delete(`orphan:${transactionId}`);
          void reverse();
        },
        Math.min(due, 2_147_000_000),
      );
      timer.unref();
      this.holdTimers.set(`orphan:${transactionId}`, timer);
    }
    for (const reverse of dueNow) await reverse();
  }

  private watchHold(hold: HoldRecord): void {
    this.unwatchHold(hold.holdId);
    const delay = Math.max(0, hold.expiresAtMs - this.parkingClock.now());
    const timer = setTimeout(() => void this.expireHold(hold.holdId), Math.min(delay, 2_147_000_000));
    timer.unref();
    this.holdTimers.set(hold.holdId, timer);
  }

  private unwatchHold(holdId: string): void {
    const t = this.holdTimers.get(holdId);
    if (t) clearTimeout(t);
    this.holdTimers.delete(holdId);
  }

  /** Tap-and-go: a card that never exits has its hold reversed after the maximum stay. */
  private async expireHold(holdId: string): Promise<void> {
    const hold = this.holds.claimById(holdId);
    if (!hold) return;
    const { outcome } = await this.payments.submit({
      service: 'reversal',
      comments: 'REVERSAL',
      amountMinor: hold.authorizedMinor,
      currency: hold.currency,
      catLevel: 2,
      cardRef: hold.cardRef,
      original: { gatewayId: hold.gatewayId, transactionId: hold.transactionId, service: 'preauth' },
      includeEmvTags: hold.includeEmvTags,
    });
    if (outcome.kind === 'approved' || outcome.reason === 'AUTH_ALREADY_REVERSED') {
      this.holds.close(hold, 'reversed');
      this.cards.release(hold.cardRef);
    } else {
      this.holds.close(hold, 'returned');
      const retry = { ...hold, expiresAtMs: this.now().getTime() + this.config.journal.resolutionRetryMs };
      this.watchHold(retry);
    }
  }

  private findTransaction(transactionId: string): OriginalTransaction | null {
    const entry = this.journal.findByTransactionId(transactionId);
    if (!entry || entry.state !== 'approved' || !entry.gatewayId) return null;
    const service = entry.service;
    if (!['capture', 'sale', 'refund-capture', 'refund-payment', 'credit'].includes(service)) return null;
    const related = this.journal
      .list({ limit: 1000 })
      .filter((e) => e.referencedTransactionId === transactionId);
    const refundedMinor = related
      .filter(
        (e) => (e.service === 'refund-capture' || e.service === 'refund-payment') && e.state === 'approved',
      )
      .reduce((s, e) => s + (e.amountMinor ?? 0), 0);
    const voided = related.some((e) => e.service.startsWith('void-') && e.state === 'approved');
    let authorization: OriginalTransaction['authorization'];
    if (service === 'capture' && entry.referencedTransactionId) {
      const auth = this.journal.findByTransactionId(entry.referencedTransactionId);
      if (auth?.gatewayId)
        authorization = {
          gatewayId: auth.gatewayId,
          transactionId: entry.referencedTransactionId,
          authorizedMinor:
            this.payments.authorizedTotal(entry.referencedTransactionId) ?? auth.amountMinor ?? 0,
        };
    }
    return {
      transactionId,
      gatewayId: entry.gatewayId,
      service: service as OriginalTransaction['service'],
      amountMinor: entry.authorizedMinor ?? entry.amountMinor ?? 0,
      currency: entry.currency ?? this.config.terminal.currency,
      refundedMinor,
      voidable: !voided && sameLocalDay(entry.createdAt, this.now(), this.config.terminal.timezone),
      ...(authorization ? { authorization } : {}),
    };
  }

  // ---- TerminalApi ----

  private changed(): void {
    this.seq += 1;
    if (this.emitter.listenerCount('snapshot') === 0) return;
    const snap = this.buildSnapshot();
    this.emitter.emit('snapshot', snap);
  }

  /** The operator status bar; `queue status` prints the same offline numbers. */
  status(): OperatorStatus {
    const c = this.config;
    const q = this.offline.status();
    const counts = this.journal.counts();
    return {
      terminalId: c.terminal.id,
      model: c.terminal.model,
      reader: {
        kind: c.reader.kind,
        health: this.reader.health,
        ...(this.firmware ? { firmware: this.firmware } : {}),
      },
      gateway: {
        kind: c.gateway.kind,
        baseUrl: this.baseUrl,
        online: this.gatewayOnline,
        ...(this.gatewayLastError ? { lastError: this.gatewayLastError } : {}),
      },
      offline: {
        policy: q.policy,
        depth: q.depth,
        totals: q.totalsPerCurrency.map((t) => ({
          currency: t.currency,
          minor: t.minor,
          text: formatMoney(t.minor, t.currency, c.terminal.locale),
        })),
        oldestAgeSeconds: q.oldestAgeSeconds,
        limits: { ...q.limits },
        declinedAfterForward: q.declinedAfterForward,
      },
      recovery: {
        running: this.phase === 'recovering',
        inFlight: this.phase === 'recovering' ? this.recoveryInFlight : counts.inFlight,
        resolved: [...this.recoveryItems],
      },
      journal: { entries: counts.entries, unknown: counts.unknown },
    };
  }

  private buildSnapshot(): TerminalSnapshot {
    const c = this.config;
    const base = { seq: this.seq, model: c.terminal.model, locale: c.terminal.locale, status: this.status() };
    if (this.phase !== 'ready' || !this.runtime) {
      return {
        ...base,
        customer: {
          screen: this.phase === 'recovering' ? 'recovering' : 'starting',
          title: this.phase === 'recovering' ? 'One moment' : 'Starting',
          message:
            this.phase === 'recovering'
              ? 'Checking earlier payments before taking a new card'
              : 'The terminal is starting',
          actions: [],
        },
      };
    }
    const customer = customerView(this.runtime, c, this.lastReceipt);
    if (customer.screen === 'idle' && this.reader.health === 'connecting') {
      return {
        ...base,
        customer: {
          ...customer,
          screen: 'starting',
          title: 'Starting',
          message: 'Connecting to the card reader',
          actions: [],
        },
      };
    }
    if (
      customer.screen === 'idle' &&
      (this.reader.health === 'disconnected' || this.reader.health === 'reconnecting')
    ) {
      return {
        ...base,
        customer: {
          ...customer,
          screen: 'out-of-service',
          title: 'Out of service',
          message: 'The card reader is not available. Please use another machine.',
          actions: [],
        },
      };
    }
    return { ...base, customer };
  }

  snapshot(): Promise<Result<TerminalSnapshot>> {
    return Promise.resolve(ok(this.buildSnapshot()));
  }

  send(event: UserEvent): Promise<Result<TerminalSnapshot>> {
    if (this.phase !== 'ready' || !this.runtime)
      return Promise.resolve(fail('NOT_READY', 'the terminal is not ready yet'));
    const snap = this.runtime.actor.getSnapshot() as SnapshotFrom<AnyStateMachine>;
    if (!snap.can(event))
      return Promise.resolve(fail('NOT_ALLOWED_NOW', `${event.type} is not possible on this screen`));
    const screen = this.buildSnapshot().customer.screen;
    if (screen === 'starting' || screen === 'out-of-service')
      return Promise.resolve(fail('NOT_ALLOWED_NOW', 'the card reader is not ready'));
    if (event.type === 'START' || event.type === 'DONE') this.lastReceipt = undefined;
    this.runtime.actor.send(event);
    return this.snapshot();
  }

  async operator(request: OperatorRequest): Promise<Result<OperatorResponse>> {
    const check = this.pin.check(request.pin);
    if (check === 'locked')
      return fail('OPERATOR_LOCKED', 'too many wrong PINs: operator mode is locked for a few minutes');
    if (check === 'wrong') return fail('OPERATOR_PIN', 'wrong operator PIN');
    const a = request.action;
    switch (a.type) {
      case 'transactions':
        return ok({
          type: 'transactions',
          transactions: this.journal.list({ limit: a.limit ?? 50 }).map((e) => this.summarise(e)),
        });
      case 'refund':
      case 'void':
        return ok(
          await this.operatorFollowOn(
            a.type,
            a.transactionId,
            a.type === 'refund' ? a.amountMinor : undefined,
          ),
        );
      case 'flush-queue': {
        const report = (await this.startForwarding()) as
          { forwarded: number; declined: unknown[]; remaining: number } | undefined;
        return ok({
          type: 'flush-queue',
          forwarded: report?.forwarded ?? 0,
          declined: report?.declined.length ?? 0,
          remaining: report?.remaining ?? this.offline.status().depth,
        });
      }
    }
  }

  /** Refund or void from operator mode (kiosk: spec 001 "refunds" and voids before the settlement cut-off). */
  private async operatorFollowOn(
    kind: 'refund' | 'void',
    transactionId: string,
    amountMinor?: number,
  ): Promise<OperatorResponse> {
    const original = this.findTransaction(transactionId);
    if (!original)
      return {
        type: kind,
        outcome: 'rejected',
        message: 'no approved capture, sale, refund or credit with that id',
        transactionId,
      };
    let request: FlowRequest;
    if (kind === 'refund') {
      if (original.service !== 'capture' && original.service !== 'sale')
        return {
          type: kind,
          outcome: 'rejected',
          message: 'only captures and sales can be refunded',
          transactionId,
        };
      const left = original.amountMinor - original.refundedMinor;
      const amount = amountMinor ?? left;
      if (!Number.isSafeInteger(amount) || amount <= 0 || amount > left)
        return {
          type: kind,
          outcome: 'rejected',
          message: `the refund must be between 0.01 and ${formatMoney(left, original.currency)}`,
          transactionId,
        };
      request = {
        service: original.service === 'capture' ? 'refund-capture' : 'refund-payment',
        comments: original.service === 'capture' ? 'REFUND Capture' : 'REFUND Payment',
        amountMinor: amount,
        currency: original.currency,
        catLevel: this.config.terminal.catLevel ?? (this.config.terminal.model === 'attended' ? 6 : 2),
        original: { gatewayId: original.gatewayId, transactionId, service: original.service },
        includeEmvTags: false,
      };
    } else {
      if (!original.voidable)
        return {
          type: kind,
          outcome: 'rejected',
          message: 'past the settlement cut-off or already voided: refund instead',
          transactionId,
        };
      const map = {
        capture: ['void-capture', 'VOID Capture'],
        sale: ['void-payment', 'VOID Payment'],
        'refund-capture': ['void-refund', 'VOID Refund'],
        'refund-payment': ['void-refund', 'VOID Refund'],
        credit: ['void-credit', 'VOID Credit'],
      } as const;
      const [service, comments] = map[original.service];
      request = {
        service,
        comments,
        amountMinor: original.amountMinor,
        currency: original.currency,
        catLevel: this.config.terminal.catLevel ?? 2,
        original: { gatewayId: original.gatewayId, transactionId, service: original.service },
        includeEmvTags: false,
      };
    }
    const outcome = await this.submit(request);
    if (outcome.kind === 'approved' && kind === 'void' && original.authorization) {
      // Voiding a capture leaves the authorization hold in place (gateway.md §7): reverse it too.
      await this.submit({
        service: 'reversal',
        comments: 'REVERSAL',
        amountMinor: original.authorization.authorizedMinor,
        currency: original.currency,
        catLevel: 2,
        original: {
          gatewayId: original.authorization.gatewayId,
          transactionId: original.authorization.transactionId,
          service: 'preauth',
        },
        includeEmvTags: false,
      });
    }
    if (outcome.kind === 'unknown') {
      const entry = this.journal.findByTransactionId(outcome.transactionId);
      if (entry) void this.recovery.recover(entry.id).catch(() => undefined);
    }
    this.changed();
    return {
      type: kind,
      outcome: outcome.kind,
      message: outcome.reason ?? outcome.kind,
      transactionId: outcome.transactionId,
    };
  }

  private summarise(e: JournalEntry): TransactionSummary {
    const allowed: ('refund' | 'void')[] = [];
    if (e.state === 'approved' && e.transactionId) {
      const o = this.findTransaction(e.transactionId);
      if (o && (o.service === 'capture' || o.service === 'sale') && o.refundedMinor < o.amountMinor)
        allowed.push('refund');
      if (o?.voidable) allowed.push('void');
    }
    const amount =
      e.amountMinor !== undefined && e.currency
        ? {
            minor: e.amountMinor,
            currency: e.currency,
            text: formatMoney(e.amountMinor, e.currency, this.config.terminal.locale),
          }
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

  subscribe(listener: (snapshot: TerminalSnapshot) => void): () => void {
    this.emitter.on('snapshot', listener);
    return () => this.emitter.off('snapshot', listener);
  }

  /** The machine's actor (tests, `simulate`). */
  get actor(): AnyActorRef | undefined {
    return this.runtime?.actor;
  }

  /** Resolves once the machine is idle again and nothing is in flight (tests, `simulate`). */
  async settle(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.phase === 'ready' && this.journal.inFlight().length === 0 && !this.forwarding) return;
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  async close(): Promise<void> {
    if (this.phase === 'closed') return;
    this.phase = 'closed';
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    for (const t of this.holdTimers.values()) clearTimeout(t);
    this.runtime?.actor.stop();
    await this.reader.close().catch(() => undefined);
    await this.forwarding?.catch(() => undefined);
    await this.gateway.close();
    await this.oauth?.close();
    await this.sandbox?.close();
    this.journal.close();
  }
}

/** A kiosk ticket encodes its entry time: `YYYYMMDDhhmm` followed by up to 8 digits of serial number. */
export function lookupTicket(
  ticket: string,
  timeZone: string,
): { found: true; ticket: string; enteredAtMs: number } | { found: false; ticket: string } {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})\d{0,8}$/.exec(ticket.trim());
  if (!m) return { found: false, ticket };
  const [, y, mo, d, h, mi] = m.map(Number) as [number, number, number, number, number, number];
  const utcGuess = Date.UTC(y, mo - 1, d, h, mi);
  if (Number.isNaN(utcGuess) || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59)
    return { found: false, ticket };
  // Shift by the zone's offset at that instant so the ticket's wall-clock time is read in the terminal's zone.
  const offset = zoneOffsetMs(utcGuess, timeZone);
  return { found: true, ticket, enteredAtMs: utcGuess - offset };
}

function zoneOffsetMs(at: number, timeZone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(new Date(at));
  const get = (t: string): number => Number(parts.find((p) => p.type === t)?.value ?? 0);
  return Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second')) - at;
}

function sameLocalDay(iso: string, now: Date, timeZone: string): boolean {
  const fmt = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  });
  return fmt.format(new Date(iso)) === fmt.format(now);
}

/** Builds and starts the terminal from a validated configuration: recovery has finished when it resolves. */
export function createTerminalHost(config: Config, options: TerminalHostOptions): Promise<TerminalHost> {
  return TerminalHost.create(config, options);
}
