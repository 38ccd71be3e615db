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
import { assertConfiguredSecretFiles, withSecretFilesResolved } from '../config/secret-file.js';
import {
  flowSettingsFromConfig,
  type CardSummary,
  type FlowEffects,
  type FlowSettings,
  type ReceiptData,
  type ServiceRequest as FlowRequest,
  type SubmitOutcome,
} from '../flows/index.js';
import { createGatewayClient, type GatewayClient, type OAuthTokenManager } from '../gateway/index.js';
import {
  AuthorizationDataStore,
  fileKeyProvider,
  FollowUpStore,
  HoldStore,
  importLegacySideFiles,
  JournaledSender,
  openJournal,
  OfflineQueue,
  TimeoutRecovery,
  type RecoveryItem as JournalRecoveryItem,
  type SqliteJournal,
} from '../journal/index.js';
import type { Logger } from '../log/index.js';
import { formatMoney, requireCurrency } from '../money/index.js';
import { startSandbox, type Sandbox } from '../sandbox/index.js';
import type {
  OperatorRequest,
  OperatorResponse,
  OperatorStatus,
  RecoveryItem,
  Result,
  TerminalApi,
  TerminalSnapshot,
  UserEvent,
} from './api.js';
import { CardStore } from './card-store.js';
import { DccOffers } from './dcc.js';
import { failpoint } from './failpoints.js';
import { createFlowActor, type FlowRuntime } from './flow-runtime.js';
import { journalFollowOnStore } from './follow-on-store.js';
import { gatewayAuthFromConfig, gatewayTransmitter } from './gateway-adapters.js';
import { HoldWatch } from './hold-watch.js';
import { loadOrCreateSecret } from './keys.js';
import { lookupTicket } from './local-time.js';
import { OpenAuthorizations } from './open-authorizations.js';
import { OperatorDesk } from './operator-desk.js';
import { OperatorPin } from './operator-pin.js';
import { PaymentRouter } from './payment-router.js';
import { PaymentService } from './payments.js';
import { GatewayResolutionBuilder } from './resolver.js';
import { customerScreen, type HostPhase } from './screens.js';

export { SANDBOX_SHARED_SECRET } from './gateway-adapters.js';
export { lookupTicket } from './local-time.js';

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
  return { ok: false, error: { code, message } };
}

/** What `create` opened, released in reverse order when a later step fails or the terminal closes. */
interface Opened {
  journal?: SqliteJournal;
  sandbox?: Sandbox;
  gateway?: GatewayClient;
  oauth?: OAuthTokenManager;
  reader?: CardReader;
}

async function release(opened: Opened, logger: Logger): Promise<void> {
  const steps: Array<[string, () => unknown]> = [
    ['reader', () => opened.reader?.close()],
    ['gateway', () => opened.gateway?.close()],
    ['oauth', () => opened.oauth?.close()],
    ['sandbox', () => opened.sandbox?.close()],
    ['journal', () => opened.journal?.close()],
  ];
  for (const [what, step] of steps) {
    try {
      await step();
    } catch (err) {
      logger.warn({ err, what }, 'could not release');
    }
  }
}

/**
 * The composition root (DESIGN.md, Runtime shape): it builds the reader, the gateway client (and the embedded
 * sandbox), the journal with its one sender, recovery, the offline queue and the stores of the journal database, and
 * the machine of the configured parking model; it wires them and delegates. The policies live in modules named for
 * them: PaymentRouter (the machines' requests), PaymentService (building them), OpenAuthorizations (holds nobody
 * settles), HoldWatch (tap-and-go expiry), OperatorDesk (operator mode), screens.ts (what the customer sees).
 * A new card is accepted only once recovery of the journal has finished (money safety rule 3).
 */
export class TerminalHost implements TerminalApi {
  private readonly emitter = new EventEmitter();
  private seq = 0;
  private phase: HostPhase = 'starting';
  private outOfServiceReason: string | undefined;
  private readonly recoveryItems: RecoveryItem[] = [];
  private recoveryInFlight = 0;
  private gatewayOnline: boolean | null = null;
  private gatewayLastError: string | undefined;
  private runtime: FlowRuntime | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  private forwarding: Promise<{ forwarded: number; declined: number; remaining: number }> | undefined;
  private lastReceipt: ReceiptData | undefined;
  private firmware: string | undefined;

  readonly sender: JournaledSender;
  readonly payments: PaymentService;
  readonly cards: CardStore;
  readonly recovery: TimeoutRecovery;
  readonly offline: OfflineQueue;
  readonly holds: HoldStore;
  readonly followUps: FollowUpStore;
  readonly pin: OperatorPin;
  /** Currency conversion offers for the cards held (src/host/dcc.ts); `simulate` lists its exchanges. */
  readonly dcc: DccOffers;
  private readonly settings: FlowSettings;
  private readonly router: PaymentRouter;
  private readonly holdWatch: HoldWatch;
  private readonly openAuthorizations: OpenAuthorizations;
  private readonly desk: OperatorDesk;
  private readonly effects: FlowEffects;

  private constructor(
    readonly config: Config,
    readonly logger: Logger,
    readonly reader: CardReader,
    readonly gateway: GatewayClient,
    readonly journal: SqliteJournal,
    readonly sandbox: Sandbox | undefined,
    private readonly opened: Opened,
    private readonly baseUrl: string,
    private readonly now: () => Date,
    paths: { fingerprintKey: string; atRestKey: Buffer; offlineKey: string },
    private readonly parkingClock: { now(): number },
  ) {
    this.settings = flowSettingsFromConfig(config);
    this.cards = new CardStore(loadOrCreateSecret(paths.fingerprintKey));
    this.pin = new OperatorPin(config.terminal.operatorPinFile, () => this.now().getTime());
    this.dcc = new DccOffers({ config, gateway, cards: this.cards, logger, now });
    this.holds = new HoldStore(journal);
    this.followUps = new FollowUpStore(journal);
    this.sender = new JournaledSender(journal, gatewayTransmitter(gateway), {
      failpoint,
      logger: logger.child({ component: 'journal' }),
    });
    this.payments = new PaymentService({
      config,
      gateway,
      sender: this.sender,
      journal,
      cards: this.cards,
      logger,
      now,
      followOns: journalFollowOnStore(
        new AuthorizationDataStore(journal, paths.atRestKey),
        config.dcc.processorFamily,
      ),
      health: {
        gatewayAnswered: () => this.setGateway(true),
        gatewayUnreachable: (reason) => this.setGateway(false, reason),
      },
    });
    this.recovery = new TimeoutRecovery(
      journal,
      new GatewayResolutionBuilder(gateway, config, now),
      this.sender,
      {
        timeoutReversalDelayMs: config.journal.timeoutReversalDelayMs,
        retryMs: config.journal.resolutionRetryMs,
        now,
        logger: logger.child({ component: 'recovery' }),
        onResolved: (item) => this.noteRecovered(item),
      },
    );
    this.offline = new OfflineQueue(journal, {
      policy: config.offline.policy,
      limits: config.offline,
      keyProvider: fileKeyProvider(paths.offlineKey),
      now,
      logger: logger.child({ component: 'offline' }),
    });
    this.router = new PaymentRouter({
      config,
      journal,
      payments: this.payments,
      recovery: this.recovery,
      offline: this.offline,
      followUps: this.followUps,
      cards: this.cards,
      logger,
      authorizationReversed: (tx) => this.authorizationReversed(tx),
      changed: () => this.changed(),
    });
    this.effects = this.flowEffects();
    this.holdWatch = new HoldWatch({
      store: this.holds,
      effects: this.effects,
      settings: this.settings,
      clock: parkingClock,
      logger: logger.child({ component: 'holds' }),
      onReversed: (hold) => this.cards.release(hold.cardRef),
      onRefused: (hold, reason) =>
        this.noteForOperator(hold.transactionId, 'tap-and-go hold reversal refused', reason, {
          minor: hold.authorizedMinor,
          currency: hold.currency,
        }),
    });
    this.openAuthorizations = new OpenAuthorizations({
      config,
      journal,
      holds: this.holds,
      followUps: this.followUps,
      submit: (request) => this.router.submit(request),
      authorizedTotal: (tx) => this.payments.authorizedTotal(tx),
      now,
      logger: logger.child({ component: 'authorizations' }),
    });
    this.desk = new OperatorDesk({
      config,
      journal,
      pin: this.pin,
      effects: this.effects,
      settings: this.settings,
      clock: parkingClock,
      now,
      logger: logger.child({ component: 'operator' }),
      authorizedTotal: (tx) => this.payments.authorizedTotal(tx),
      toLocal: (tx, minor, currency) => this.payments.toLocal(tx, minor, currency),
      flushQueue: () => this.startForwarding(),
      changed: () => this.changed(),
    });
    reader.on('health', () => this.changed());
  }

  /**
   * Builds every component from the configuration; see {@link createTerminalHost}. A failure at any step releases
   * what was opened before it (the embedded sandbox, the journal, the reader) and rethrows.
   */
  static async create(given: Config, options: TerminalHostOptions): Promise<TerminalHost> {
    const { logger } = options;
    // Every secret file is checked (owner-only, readable) before anything starts, and read from its absolute path.
    assertConfiguredSecretFiles(given, options.cwd);
    const config = withSecretFilesResolved(given, options.cwd);
    const now = options.now ?? (() => new Date());
    const at = (p: string): string => resolve(options.cwd, p);
    const journalPath = at(config.journal.path);
    const offlineKey = at(config.offline.keyFile);
    const opened: Opened = {};
    try {
      const atRestKey = fileKeyProvider(offlineKey).loadKey();
      const journal = openJournal(journalPath, {
        logger: logger.child({ component: 'journal' }),
        now,
        key: atRestKey,
      });
      opened.journal = journal;
      // One sender per journal, across processes: a `queue flush` cannot forward while the terminal runs.
      journal.acquireSenderLock('the terminal');
      // Durable state of earlier versions lived in side files: moved into the journal database once (rule 6).
      importLegacySideFiles(journal, {
        holdsPath: resolve(dirname(journalPath), 'holds.json'),
        tagVaultPath: resolve(dirname(journalPath), 'authorization-tags.json'),
        key: atRestKey,
      });
      let baseUrl = options.gatewayUrlOverride ?? config.gateway.baseUrl;
      if (!options.gatewayUrlOverride && config.gateway.kind === 'sandbox') {
        opened.sandbox = await startSandbox({ port: 0, logger: logger.child({ component: 'sandbox' }) });
        baseUrl = opened.sandbox.url;
      }
      if (!baseUrl)
        throw new ConfigError(
          'CONFIG_INVALID',
          'gateway.baseUrl is required when gateway.kind is "remote"',
          '<configuration>',
          'gateway.baseUrl',
        );
      const auth = gatewayAuthFromConfig(config, { baseUrl, cwd: options.cwd, logger });
      opened.oauth = auth.oauth;
      const gateway = createGatewayClient({
        baseUrl,
        merchantId: config.gateway.merchantId,
        auth: auth.authenticator,
        timeouts: config.gateway.timeouts,
        retry: config.gateway.retry,
        logger: logger.child({ component: 'gateway' }),
        now,
      });
      opened.gateway = gateway;
      const reader = createReader(config.reader, { logger, ...options.readerDeps });
      opened.reader = reader;
      const host = new TerminalHost(
        config,
        logger,
        reader,
        gateway,
        journal,
        opened.sandbox,
        opened,
        baseUrl,
        now,
        { fingerprintKey: resolve(dirname(journalPath), 'fingerprint.key'), atRestKey, offlineKey },
        options.parkingClock ?? { now: () => now().getTime() },
      );
      await host.start();
      return host;
    } catch (e) {
      await release(opened, logger);
      throw e;
    }
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

  /** Meter authorizations whose reversal at the end of the capture window is scheduled (tests, crash suite). */
  watchedAuthorizations(): string[] {
    return this.openAuthorizations.watched();
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
    this.runtime = createFlowActor(this.config, this.effects, this.logger, this.parkingClock);
    this.runtime.actor.subscribe(() => this.changed());
    this.runtime.actor.start();
    this.holdWatch.watchAll();
    await this.openAuthorizations.settle();
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

  /**
   * Puts the terminal out of service (an unexpected error at the process boundary, a configuration problem found
   * at run time): customers see the out-of-service screen and no card is taken; what is in flight finishes and is
   * journaled as usual.
   */
  outOfService(reason: string): void {
    if (this.phase === 'closed') return;
    this.outOfServiceReason = reason;
    this.phase = 'out-of-service';
    this.logger.error({ reason }, 'terminal out of service');
    this.changed();
  }

  /** An authorization was reversed: a tap-and-go hold on it is over, its follow-ups are done, its data wiped. */
  private authorizationReversed(transactionId: string): void {
    this.openAuthorizations.forget(transactionId);
    for (const f of this.followUps.open())
      if (f.authorizationTransactionId === transactionId) this.followUps.complete(f.id, 'reversed');
    if (this.holds.drop(transactionId)) {
      this.holdWatch.unwatch(transactionId);
      this.logger.info({ transactionId }, 'hold closed: its authorization was reversed');
    }
  }

  private noteRecovered(item: JournalRecoveryItem): void {
    if (item.transactionId && ['timeout-reversal', 'already-reversed'].includes(item.resolution))
      this.authorizationReversed(item.transactionId);
    // A void of a capture finished by recovery: the hold of its authorization must still be released.
    if (item.service === 'void-capture' && item.resolution === 'timeout-void' && item.transactionId)
      this.router.captureVoided(item.transactionId);
    this.noteForOperator(
      item.transactionId ?? `entry-${item.entryId}`,
      item.service,
      item.resolution + (item.needsOperator ? ' (operator action needed)' : ''),
      item.amountMinor !== undefined && item.currency
        ? { minor: item.amountMinor, currency: item.currency }
        : undefined,
      item.at,
    );
  }

  private noteForOperator(
    transactionId: string,
    service: string,
    resolution: string,
    amount?: { minor: number; currency: string },
    at: string = this.now().toISOString(),
  ): void {
    this.recoveryItems.unshift({
      transactionId,
      service,
      ...(amount
        ? {
            amount: {
              ...amount,
              text: formatMoney(amount.minor, amount.currency, this.config.terminal.locale),
            },
          }
        : {}),
      resolution,
      at,
    });
    this.recoveryItems.splice(20);
    this.changed();
  }

  /**
   * Background work while the terminal runs: stored offline payments go as soon as the gateway answers again, due
   * follow-ups are finished, and any entry left in flight that nobody owns is handed to recovery. An entry whose
   * request is still out belongs to its sender and is never touched (recovery waits for its own timeout).
   */
  private sweep(): void {
    if (this.phase !== 'ready') return;
    if (!this.forwarding && this.offline.status().depth > 0) void this.startForwarding();
    void this.openAuthorizations
      .runFollowUps()
      .catch((err: unknown) => this.logger.error({ err }, 'follow-ups failed'));
    for (const e of this.journal.inFlight()) {
      if (this.sender.owns(e.id) || this.recovery.isRecovering(e.id)) continue;
      this.router.recoverInBackground(e.id);
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
  startForwarding(): Promise<{ forwarded: number; declined: number; remaining: number }> {
    if (this.forwarding) return this.forwarding;
    const run = this.offline
      .forwardPending(this.sender, { concurrency: this.config.offline.forwardConcurrency })
      .then((report) => {
        if (report.forwarded > 0) this.setGateway(!report.gatewayUnreachable);
        for (const id of report.unknown) this.router.recoverInBackground(id);
        if (report.declined.length > 0)
          this.logger.warn(
            { declined: report.declined.length },
            'offline payments declined after forwarding',
          );
        return { forwarded: report.forwarded, declined: report.declined.length, remaining: report.remaining };
      })
      .finally(() => {
        this.forwarding = undefined;
        this.changed();
      });
    this.forwarding = run;
    return run;
  }

  // ---- the effects the machines need (src/flows/effects.ts) ----

  private flowEffects(): FlowEffects {
    const config = this.config;
    return {
      readCard: async (input, signal): Promise<CardSummary> => {
        if (this.phase !== 'ready')
          throw new ReaderError('READER_NOT_CONNECTED', 'the terminal is not taking cards now');
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
      findTransaction: ({ transactionId }) => Promise.resolve(this.desk.find(transactionId)),
      openHold: (hold) => {
        this.holds.open(hold);
        this.holdWatch.watch(hold);
        return Promise.resolve();
      },
      claimHold: ({ fingerprint }) => {
        const hold = this.holds.claim(fingerprint);
        if (hold) this.holdWatch.unwatch(hold.holdId);
        return Promise.resolve(hold);
      },
      closeHold: ({ hold, resolution }) => {
        this.holds.close(hold, resolution);
        if (resolution === 'returned') this.holdWatch.watch(hold);
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

  /** One request of a machine (or of the host's own follow-ons), through the one door (src/host/payment-router.ts). */
  submit(request: FlowRequest): Promise<SubmitOutcome> {
    return this.router.submit(request);
  }

  // ---- TerminalApi ----

  private changed(): void {
    this.seq += 1;
    if (this.emitter.listenerCount('snapshot') === 0) return;
    this.emitter.emit('snapshot', this.buildSnapshot());
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
      ...(this.outOfServiceReason !== undefined ? { outOfService: this.outOfServiceReason } : {}),
    };
  }

  private buildSnapshot(): TerminalSnapshot {
    const c = this.config;
    return {
      seq: this.seq,
      model: c.terminal.model,
      locale: c.terminal.locale,
      status: this.status(),
      customer: customerScreen({
        phase: this.phase,
        runtime: this.runtime,
        config: c,
        readerHealth: this.reader.health,
        lastReceipt: this.lastReceipt,
      }),
    };
  }

  snapshot(): Promise<Result<TerminalSnapshot>> {
    return Promise.resolve(ok(this.buildSnapshot()));
  }

  send(event: UserEvent): Promise<Result<TerminalSnapshot>> {
    if (this.phase === 'out-of-service')
      return Promise.resolve(fail('OUT_OF_SERVICE', 'the terminal is out of service'));
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

  operator(request: OperatorRequest): Promise<Result<OperatorResponse>> {
    return this.desk.handle(request);
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

  /**
   * Stops the terminal: no new card or request is taken, every request already out finishes and its outcome is
   * journaled (each is bounded by the gateway timeouts), then everything is released. What is still unresolved stays
   * in the journal for the next start's recovery.
   */
  async close(): Promise<void> {
    if (this.phase === 'closed') return;
    this.phase = 'closed';
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.holdWatch.stop();
    this.openAuthorizations.stop();
    this.runtime?.actor.stop();
    await this.sender.drain();
    await this.forwarding?.catch(() => undefined);
    await release(this.opened, this.logger);
  }
}

/** Builds and starts the terminal from a validated configuration: recovery has finished when it resolves. */
export function createTerminalHost(config: Config, options: TerminalHostOptions): Promise<TerminalHost> {
  return TerminalHost.create(config, options);
}
