import { EventEmitter } from 'node:events';
import { dirname, resolve } from 'node:path';
import type { AnyActorRef, AnyStateMachine, SnapshotFrom } from 'xstate';
import {
  createReader,
  getSimulatorControl,
  type CardReader,
  type ReaderDeps,
  type SimulatedReaderControl,
} from '../../devices/index.js';
import { cardAnswerByMs, cardWaitSeconds, ConfigError, type Config } from '../config/index.js';
import {
  assertConfiguredSecretFiles,
  readSecretText,
  withSecretFilesResolved,
} from '../config/secret-file.js';
import {
  cardReadingActor,
  feeBetween,
  flowSettingsFromConfig,
  type FlowEffects,
  type FlowSettings,
  type HoldRecord,
  type ServiceRequest as FlowRequest,
  type SubmitOutcome,
  type TicketPaid,
} from '../flows/index.js';
import {
  backoffDelayMs,
  createGatewayClient,
  decodeSharedSecret,
  LinkNotificationListener,
  LinkNotificationRelay,
  type ExchangeDispatcher,
  type GatewayClient,
  type LinkNotificationKey,
  type LinkNotificationRefusal,
  type LinkPaymentNotification,
  type OAuthTokenManager,
} from '../gateway/index.js';
import {
  AuthorizationDataStore,
  checkAtRestKey,
  fileKeyProvider,
  FollowUpStore,
  TicketPaymentStore,
  type TicketPayment,
  JournalError,
  AuditStore,
  ConfigurationState,
  HoldStore,
  importLegacySideFiles,
  JournaledSender,
  linuxBootClock,
  openJournal,
  OfflineQueue,
  PaymentLinkStore,
  TimeoutRecovery,
  type BootClock,
  type LogSync,
  type RecoveryItem as JournalRecoveryItem,
  type SqliteJournal,
  undecidedEntriesOf,
} from '../journal/index.js';
import { lookupTicket } from './local-time.js';
import {
  cardSaleToGiveBack,
  ticketPaidOf,
  unresolvedTicketSales,
  type TicketPaymentReaders,
} from './ticket-payments.js';
import type { Logger } from '../log/index.js';
import { startSandbox, type Sandbox } from '../sandbox/index.js';
import {
  NO_CUSTOMER_SCREENS,
  type OperatorRequest,
  type OperatorResponse,
  type OpenStaySummary,
  type OperatorStatus,
  type ServiceResult,
  type ServiceTask,
  type Result,
  type TerminalApi,
  type TerminalSnapshot,
  type UserEvent,
} from './api.js';
import { CardStore } from './card-store.js';
import { DccOffers } from './dcc.js';
import { failpoint } from './failpoints.js';
import { createFlowActor, type FlowRuntime } from './flow-runtime.js';
import { journalFollowOnStore } from './follow-on-store.js';
import { gatewayAuthFromConfig, gatewayTransmitter } from './gateway-adapters.js';
import { settleConfiguredRotation } from './pending-rotation.js';
import { HoldWatch } from './hold-watch.js';
import { idleOf, type IdleVerdict } from './idle.js';
import { fingerprintKeyPath, loadFingerprintKey } from './keys.js';
import { OpenAuthorizations } from './open-authorizations.js';
import { OperatorDesk } from './operator-desk.js';
import { GeneratedPinFileError, OperatorPin } from './operator-pin.js';
import { printedSecret, StartSecretFile } from './start-secret-file.js';
import { PaymentRouter } from './payment-router.js';
import { PaymentService } from './payments.js';
import { GatewayResolutionBuilder } from './resolver.js';
import { AltPaymentDesk } from './alt-payment-desk.js';
import { AuditTrail, type FeeShortfall, type UnpricedFee } from './audit-trail.js';
import { recordConfiguration } from './configuration-audit.js';
import { InactivityWatch } from './inactivity.js';
import { SpeechOutput } from './speech-output.js';
import { ResultScreenHold } from './result-screen.js';
import {
  journaledReceiptFacts,
  journaledReceiptNotes,
  journaledReceipts,
  ReceiptDesk,
} from './receipt-desk.js';
import { assertReaderConfiguration } from './reader-configuration.js';
import { assertPrintableConfiguration } from './receipts.js';
import { CustomerLanguage, customerScreen, type HostPhase } from './screens.js';
import { StatusBoard } from './status-board.js';
import { BackgroundWork, type ForwardSummary } from './background-work.js';
import { createFlowEffects } from './flow-effects.js';
import { translator } from '../i18n/index.js';
import { LinkDesk } from './link-desk.js';
import { withDeclinedNotice } from './link-screen.js';
import { reversalRefusalReleased } from '../vocabulary/services.js';
import { clockSkewText } from '../vocabulary/clock-skew.js';

import { SANDBOX_SHARED_SECRET } from './gateway-adapters.js';
export { SANDBOX_SHARED_SECRET };
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
  /**
   * Carries the gateway's HTTP exchanges instead of the client's own keep-alive pool (`certify run` records every
   * request and answer through it). Not closed by the terminal: its owner closes it.
   */
  gatewayDispatcher?: ExchangeDispatcher;
  /** The journal's disk sync of its log (tests: a disk that fails it); Node's `fdatasync` by default. */
  journalLogSync?: LogSync;
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
  linkNotifications?: LinkNotificationListener;
  linkRelay?: LinkNotificationRelay;
}

async function release(opened: Opened, logger: Logger): Promise<void> {
  const steps: Array<[string, () => unknown]> = [
    ['reader', () => opened.reader?.close()],
    ['link notifications', () => opened.linkNotifications?.close()],
    ['link relay', () => opened.linkRelay?.close()],
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

/** How a service-mode outcome is recorded in the audit log: its result, the refusal's code, the message given. */
function auditedResult(result: ServiceResult): {
  result: ServiceResult['outcome'];
  code?: string;
  message?: string;
} {
  switch (result.outcome) {
    case 'ok':
      return { result: 'ok' };
    case 'refused':
      return { result: 'refused', code: result.code, message: result.message };
    case 'failed':
      return { result: 'failed', message: result.message };
  }
}

/** Recovery's longest wait between attempts, as a multiple of `journal.resolutionRetryMs`. */
const RESOLUTION_RETRY_MAX_FACTOR = 12;

/** The refusal of what moves money while the start recovers the journal (operator mode's and the fleet's). */
const NOT_READY = fail<never>(
  'NOT_READY',
  'the terminal is checking earlier payments: try again once it has started',
);

/** The operator actions that move money or forward it: refused while the start recovers the journal. */
const MOVES_MONEY: ReadonlySet<OperatorRequest['action']['type']> = new Set([
  'refund',
  'void',
  'flush-queue',
  'link-deactivate',
  'link-reactivate',
  'alt-refund',
  'hold-release',
]);

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
  /** Out of service by the operator's choice (service mode), with the notice customers read; undefined otherwise. */
  private serviceMode: { notice: string | undefined } | undefined;
  private recoveryInFlight = 0;
  /** The start {@link begin} runs, once; {@link close} aborts `stopping` to stop its recovery. */
  private starting: Promise<void> | undefined;
  private readonly stopping = new AbortController();
  private runtime: FlowRuntime | undefined;
  /** The transactionId of the receipt issued last: the screen shows it (src/host/receipt-desk.ts keeps it). */
  private lastReceiptId: string | undefined;
  /** This customer's accessibility mode; back to off when the terminal returns to its attract screen after one. */
  private accessible = false;
  /** A customer's screen was shown since the attract screen (the idle screen next ends their session). */
  private served = false;
  /** The customer's language: terminal.locale until SET_LANGUAGE, and again after the session. */
  private readonly language: CustomerLanguage;
  private lastScreen: string | undefined;
  private readonly inactivity: InactivityWatch;
  /** Speech output of the customer's screens in accessibility mode (src/host/speech-output.ts). */
  readonly speech: SpeechOutput;
  /** A result screen stays while it is read out (src/host/result-screen.ts). */
  private readonly resultHold: ResultScreenHold;

  readonly sender: JournaledSender;
  /** Redirect-based alternative methods (spec 001): sales, status checks from the journal, refunds. */
  readonly altPayments: AltPaymentDesk;
  readonly payments: PaymentService;
  readonly cards: CardStore;
  readonly recovery: TimeoutRecovery;
  readonly offline: OfflineQueue;
  readonly holds: HoldStore;
  readonly followUps: FollowUpStore;
  /** The pay station's paid tickets (`ticket_payments`). */
  readonly tickets: TicketPaymentStore;
  /** The append-only audit log (src/host/audit-trail.ts): operator actions, recoveries, service mode. */
  readonly audit: AuditTrail;
  /** Receipts on paper: the printer, the last receipt for a reprint (src/host/receipt-desk.ts). */
  readonly receipts: ReceiptDesk;
  readonly pin: OperatorPin;
  /** Currency conversion offers for the cards held (src/host/dcc.ts); `simulate` lists its exchanges. */
  readonly dcc: DccOffers;
  /** Pay by phone: the terminal's payment links (src/host/link-desk.ts). */
  readonly links: LinkDesk;
  private readonly settings: FlowSettings;
  private readonly router: PaymentRouter;
  private readonly holdWatch: HoldWatch;
  private readonly openAuthorizations: OpenAuthorizations;
  private readonly desk: OperatorDesk;
  private readonly effects: FlowEffects;
  private readonly board: StatusBoard;
  private readonly background: BackgroundWork;

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
    paths: { fingerprintKey: Buffer; atRestKey: Buffer; offlineKey: string },
    private readonly parkingClock: { now(): number },
    /** The machine's time since boot, for the offline queue; none with a clock of tests (`options.now`). */
    bootClock: BootClock | undefined,
  ) {
    this.settings = flowSettingsFromConfig(config);
    this.language = new CustomerLanguage(config.terminal.locale);
    this.board = new StatusBoard(config);
    this.cards = new CardStore(paths.fingerprintKey);
    this.pin = new OperatorPin(config.terminal.operatorPinFile, () => this.now().getTime());
    this.dcc = new DccOffers({ config, gateway, cards: this.cards, logger, now });
    this.holds = new HoldStore(journal);
    this.followUps = new FollowUpStore(journal);
    this.tickets = new TicketPaymentStore(journal);
    /**
     * Whether a ticket is owed in full: nothing of its recorded payments stands (src/host/ticket-payments.ts), and none
     * is in flight (one that may stand, recovery not done with it).
     */
    const ticketOwed = (ticket: string): boolean => {
      const payments = this.tickets.forTicket(ticket);
      const readers = this.ticketReaders();
      return (
        unresolvedTicketSales(payments, readers).length === 0 && ticketPaidOf(payments, readers) === undefined
      );
    };
    /**
     * A ticket paid, by card (before its sale is sent: what of it stands follows the sale's journal entry) or by phone
     * (in the transaction of its payment's outcome), on the pay station's clock (the one its tickets and their grace
     * period are read on). A value the store refuses is logged, never a
     * reason to lose the payment: the ticket, unrecorded, is charged again if inserted.
     */
    const recordTicketPaid = (payment: Omit<TicketPayment, 'paidAtMs'>): void => {
      try {
        this.tickets.record({ ...payment, paidAtMs: Math.floor(parkingClock.now()) });
      } catch (err) {
        if (!(err instanceof JournalError && err.code === 'JOURNAL_INVALID')) throw err;
        logger.error(
          { err, method: payment.method, paymentRef: payment.paymentRef },
          'ticket paid but not recorded: it will be charged again if inserted',
        );
      }
    };
    this.sender = new JournaledSender(journal, gatewayTransmitter(gateway), {
      failpoint,
      logger: logger.child({ component: 'journal' }),
    });
    const followOns = journalFollowOnStore(
      new AuthorizationDataStore(journal, paths.atRestKey),
      config.dcc.processorFamily,
    );
    this.payments = new PaymentService({
      config,
      gateway,
      sender: this.sender,
      journal,
      cards: this.cards,
      logger,
      now,
      followOns,
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
        // Doubling from `resolutionRetryMs` to 12 times it (5 s to 1 min by default), jittered: a gateway that is down
        // costs a journal entry and a request per attempt, and terminals restarted together do not retry in lockstep.
        retryWaitMs: (failed) =>
          backoffDelayMs(failed, {
            initialDelayMs: config.journal.resolutionRetryMs,
            maxDelayMs: RESOLUTION_RETRY_MAX_FACTOR * config.journal.resolutionRetryMs,
          }),
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
      ...(bootClock !== undefined ? { bootClock } : {}),
      logger: logger.child({ component: 'offline' }),
    });
    this.router = new PaymentRouter({
      config,
      journal,
      payments: this.payments,
      recovery: this.recovery,
      offline: this.offline,
      followUps: this.followUps,
      holds: this.holds,
      cards: this.cards,
      logger,
      now,
      authorizationReversed: (tx) => this.authorizationReversed(tx),
      // Refused because nothing is held any more: the authorization is over, as after an approved reversal.
      reversalRefusedUnwaited: (tx, reason) =>
        reversalRefusalReleased(reason)
          ? this.authorizationReversed(tx, 'already-reversed')
          : this.holdAfterResolution(tx),
      changed: () => this.changed(),
      ticketPaid: (p) => recordTicketPaid(p),
      feeShortfall: (s) => this.feeShortfall(s),
    });
    this.audit = new AuditTrail(new AuditStore(journal), logger.child({ component: 'audit' }));
    this.links = new LinkDesk({
      terminalId: config.terminal.id,
      store: new PaymentLinkStore(journal),
      gateway,
      audit: this.audit,
      logger: logger.child({ component: 'links' }),
      now,
      waitMs: config.links.waitSeconds * 1000,
      pollMs: config.links.pollSeconds * 1000,
      productName: config.links.productName,
      partner: config.terminal.partner,
      notificationsReceived: opened.linkNotifications !== undefined || opened.linkRelay !== undefined,
      notificationToleranceMs: config.links.notifications.toleranceSeconds * 1000,
      // A pay station's ticket paid by phone (its link's reference is the ticket; a meter's or a gate's session, or a
      // lost ticket, is no ticket the pay station finds): recorded paid with the link's payment, on its clock.
      feePaid: (link) => {
        if (!lookupTicket(link.reference, config.terminal.timezone).found) return;
        recordTicketPaid({
          ticket: link.reference,
          method: 'link',
          paymentRef: link.linkId,
          amountMinor: link.amountMinor,
          currency: link.currency,
        });
      },
      // A pay station's ticket that nothing paid since: a payment of its link that a restart left in doubt pays it.
      feeOwedAfterRestart: (link) => {
        const found = lookupTicket(link.reference, config.terminal.timezone);
        return found.found && ticketOwed(found.ticket);
      },
      // A pay station's ticket paid by phone and, meanwhile, by card (its link's payment notified after a confirmed
      // deactivation, or left in doubt by a restart): the payment by link pays it, and the card sale is given back by a
      // durable follow-up, run at once (and at the next start, before any card, when the terminal stops first).
      feePaidTwice: (link) => {
        const found = lookupTicket(link.reference, config.terminal.timezone);
        if (!found.found) return undefined;
        const sale = cardSaleToGiveBack(this.tickets.forTicket(found.ticket), this.ticketReaders(), link);
        if (sale === undefined) return undefined;
        this.followUps.add({
          kind: 'give-back-sale',
          authorizationTransactionId: sale.transactionId,
          gatewayId: sale.gatewayId,
          amountMinor: sale.amountMinor,
          currency: sale.currency,
          includeEmvTags: false,
          reason: `ticket paid by phone too (link ${link.linkId})`,
        });
        recordTicketPaid({
          ticket: found.ticket,
          method: 'link',
          paymentRef: link.linkId,
          amountMinor: link.amountMinor,
          currency: link.currency,
        });
        setImmediate(() => {
          void this.openAuthorizations
            .runFollowUpsOf(sale.transactionId)
            .catch((err: unknown) =>
              logger.error({ err, transactionId: sale.transactionId }, 'follow-up run failed'),
            );
        });
        return { transactionId: sale.transactionId, amountMinor: sale.amountMinor };
      },
      // A gate's stay paid by phone: journaled on its hold with the payment, never charged again (HoldStore.paidByLink).
      // An id the store refuses is logged, never a reason to lose the payment's record.
      stayPaid: (link) => {
        try {
          if (!this.holds.paidByLink(link.holdId, link.linkId, Math.floor(parkingClock.now())))
            logger.warn({ linkId: link.linkId, holdId: link.holdId }, 'a stay paid by phone has no hold');
          // Due now: a hold its expiry watch has (a payment in doubt, notified late) is released at once.
          const hold = this.holds.get(link.holdId);
          if (hold !== undefined && this.holdWatch.watching(hold.holdId)) this.holdWatch.watch(hold);
        } catch (err) {
          if (!(err instanceof JournalError && err.code === 'JOURNAL_INVALID')) throw err;
          logger.error(
            { err, linkId: link.linkId },
            'a stay paid by phone could not be recorded on its hold',
          );
        }
      },
      // A gate's fee link closed at start while its customer may have paid it: its hold is never charged by card, and a
      // late payment of it counts for the stay (HoldStore.phonePaymentInDoubt). Written with the link's closing.
      stayInDoubt: (link) => {
        try {
          if (this.holds.phonePaymentInDoubt(link.holdId, link.linkId))
            logger.warn(
              { linkId: link.linkId, holdId: link.holdId },
              'a stay whose payment by phone is in doubt: not charged by card',
            );
        } catch (err) {
          if (!(err instanceof JournalError && err.code === 'JOURNAL_INVALID')) throw err;
          logger.error(
            { err, linkId: link.linkId },
            'a stay whose payment by phone is in doubt has no valid hold id',
          );
        }
      },
      paymentInDoubt: (link) => this.holds.paymentInDoubt(link.holdId, link.linkId),
    });
    // A receipt of a transaction made before a restart states what the journal kept of it (approval code, card, a
    // converted authorization's accepted offer), and the last receipt can be printed again after one: rebuilt from the
    // journal, read as the operator desk reads it, in the customer's language and with the machine's lines that each
    // receipt's journaled note states.
    this.receipts = new ReceiptDesk(
      config,
      logger.child({ component: 'printer' }),
      undefined,
      journaledReceiptFacts(this.journal, followOns, logger.child({ component: 'receipts' })),
      journaledReceipts(this.journal, (tx) => this.desk.find(tx)),
      journaledReceiptNotes(this.journal, logger.child({ component: 'receipts' })),
    );
    // The receipt's QR drawn, its paper copy printed or not: the customer's screen shows it.
    this.receipts.onChange(() => this.changed());
    // A link paid, closed, or a payment on the phone declined: the pay-by-phone screen follows.
    this.links.subscribe(() => this.changed());
    this.effects = createFlowEffects({
      config,
      reader,
      cards: this.cards,
      payments: this.payments,
      dcc: this.dcc,
      holds: this.holds,
      holdWatch: () => this.holdWatch,
      holdClosedToExit: (hold) => this.openAuthorizations.holdClosedToExit(hold.transactionId),
      takingCards: () => this.phase === 'ready',
      submit: async (request, signal) => {
        const outcome = await this.router.submit(request, signal);
        // What the receipt needs of the card and the conversion, noted while the card is still held.
        this.receipts.facts.noteSubmit(
          request,
          outcome,
          request.cardRef ? this.cards.get(request.cardRef)?.read : undefined,
        );
        return outcome;
      },
      findTransaction: (tx) => this.desk.find(tx),
      captureOf: (authorizationTx) => {
        for (const e of this.journal.referencing(authorizationTx)) {
          if (e.service !== 'capture' || e.transactionId === undefined) continue;
          const capture = this.desk.find(e.transactionId);
          if (capture !== null) return capture;
        }
        return null;
      },
      feeNotComputable: ({ hold, feeMinor, feeCurrency }) =>
        this.feeNotComputable({
          authorizationTransactionId: hold.transactionId,
          authorizedMinor: hold.authorizedMinor,
          holdCurrency: hold.currency,
          feeMinor,
          currency: feeCurrency,
        }),
      entryRefused: (refusal) => this.entryRefused(refusal),
      stayOutstayed: (stay) => this.stayOutstayed(stay),
      outstayedStayLeft: (stay) => this.outstayedStayLeft(stay),
      inOneCommit: (fn) => this.journal.atomically(true, fn),
      stayPaid: (holdId, withinMs) => {
        // The stay's ticket is its hold's id: what of its sales stands, as for any ticket (ticketPaidOf).
        const payments = this.tickets.forTicket(holdId);
        const readers = this.ticketReaders();
        if (unresolvedTicketSales(payments, readers).length > 0) return { kind: 'unresolved' };
        const paid = ticketPaidOf(payments, readers);
        if (paid === undefined) return undefined;
        const recent = Math.floor(parkingClock.now()) - paid.lastPaidAtMs <= withinMs;
        return { kind: 'paid', recent, paidAtMs: paid.lastPaidAtMs };
      },
      receipt: (receipt) => {
        // One document for paper, screen and QR, in the customer's language (the rule of receipts.ts issuedReceipt).
        this.lastReceiptId = receipt.transactionId;
        this.receipts.issue(receipt, this.language.current);
        this.changed();
      },
      links: this.links,
      // A customer in accessibility mode is given the longer time limits on the pay-by-phone screen too.
      waitFactor: () => (this.accessible ? config.customer.accessibilityFactor : 1),
      // A result screen read out by the terminal stays until its speech has ended, then for its time.
      resultScreenMs: (ms) => this.resultHold.delayMs(ms),
      // The reader's wait for a card, with "Do you need more time?" before it ends: longer in accessibility mode.
      cardWaitSeconds: () => cardWaitSeconds(config, this.accessible),
      // A fresh activation, also of a read refused on a card screen that stays (src/flows/transaction.ts): the card
      // screen's clock is the new activation's, and a card detected at the one before is no longer being read.
      cardActivated: () => this.inactivity.cardRead(),
      printLink: (link) => {
        void this.receipts.printLink(
          {
            linkId: link.linkId,
            url: link.url,
            reference: link.reference,
            amountMinor: link.amountMinor,
            currency: link.currency,
            expiresAtMs: link.expiresAtMs,
            atMs: this.now().getTime(),
          },
          this.language.current,
        );
      },
      altPayments: () => this.altPayments,
      ticketPayments: (ticket) => this.ticketPayments(ticket),
    });
    this.holdWatch = new HoldWatch({
      store: this.holds,
      effects: this.effects,
      settings: this.settings,
      clock: parkingClock,
      logger: logger.child({ component: 'holds' }),
      settling: (hold) => this.openAuthorizations.holdSettling(hold.transactionId),
      refusedReversals: (hold) =>
        this.journal.refusedReversals(hold.transactionId).map((e) => e.reason ?? e.state),
      onReversed: (hold) => this.cards.release(hold.cardRef),
      onOutstayed: (hold, atMs) => this.maximumStayReached(hold, atMs),
      inOneCommit: (fn) => this.journal.atomically(true, fn),
      onRefused: (hold, reason) =>
        this.noteForOperator({
          transactionId: hold.transactionId,
          service: 'tap-and-go hold reversal refused',
          resolution: reason,
          amount: { minor: hold.authorizedMinor, currency: hold.currency },
          at: this.now().toISOString(),
        }),
    });
    this.openAuthorizations = new OpenAuthorizations({
      config,
      journal,
      holds: this.holds,
      followUps: this.followUps,
      submit: (request) => this.router.submit(request),
      authorizedTotal: (tx) => this.payments.localAuthorizedTotal(tx),
      toLocal: (tx, minor, currency) => this.payments.toLocal(tx, minor, currency),
      feeShortfall: (s) => this.feeShortfall(s),
      findSale: (tx) => this.desk.find(tx),
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
      flushQueue: () => this.background.forward(),
      changed: () => this.changed(),
      status: () => this.status(),
      service: (task, reason) => this.service(task, reason),
      audit: this.audit,
      links: this.links,
      // Built below; asked only once the host is running.
      altPayments: {
        list: (options) => this.altPayments.list(options),
        get: (id) => this.altPayments.get(id),
        refund: (id, amountMinor) => this.altPayments.refund(id, amountMinor),
      },
      stays: {
        list: (limit) =>
          this.holds.listOpen(limit).map(({ hold, claimed, ...doubt }) => ({
            hold,
            standing: this.holdWatch.standing(hold, claimed),
            ...doubt,
          })),
        release: (holdId) => this.holdWatch.release(holdId),
      },
    });
    this.background = new BackgroundWork({
      config,
      offline: this.offline,
      sender: this.sender,
      recovery: this.recovery,
      router: this.router,
      openAuthorizations: this.openAuthorizations,
      logger,
      // Service mode takes no customer, but what is owed goes on (stored payments, follow-ups, entries nobody owns):
      // it would otherwise wait on a customer's card for the end of service mode. Not while the start recovers, nor
      // out of service for an unexpected error (the journal may refuse every write).
      ready: () => this.phase === 'ready' || this.inServiceMode(),
      gatewaySeen: (online, reason, host) => this.setGateway(online, reason, host),
      changed: () => this.changed(),
    });
    this.altPayments = new AltPaymentDesk({
      journal,
      sender: this.sender,
      gateway,
      config: config.alternativeMethods,
      now,
      resolveUnknown: (entryId) => {
        this.recovery.recover(entryId).catch((e: unknown) => {
          logger.error({ err: e, entryId }, 'recovery of an alternative-method refund failed');
        });
      },
      logger: logger.child({ component: 'alt-payments' }),
      audit: this.audit,
      // A pay station's ticket paid by an alternative method (the sale's reference is the ticket; a lost ticket's is
      // none the pay station finds): recorded paid once the sale is pending — its customer is told they may go —,
      // on the pay station's clock; what of it stands follows the sale's status checks.
      salePending: (sale) => {
        if (!lookupTicket(sale.code, config.terminal.timezone).found) return;
        recordTicketPaid({
          ticket: sale.code,
          method: 'alt',
          paymentRef: String(sale.id),
          amountMinor: sale.amountMinor,
          currency: sale.currency,
        });
      },
    });
    reader.on('health', () => this.changed());
    this.speech = new SpeechOutput(
      config.customer.speech,
      logger.child({ component: 'speech' }),
      undefined,
      () => this.resultHold.update(),
    );
    this.resultHold = new ResultScreenHold({
      // The terminal's own speaker, or the page's (`platform`), which reports what it says (SPEECH_STATE).
      heard: () => this.accessible && this.speech.speaker.by !== undefined,
      speaking: () => this.speech.speaking,
      state: () => {
        const snap = this.runtime?.actor.getSnapshot() as SnapshotFrom<AnyStateMachine> | undefined;
        return snap === undefined ? undefined : JSON.stringify(snap.value);
      },
      leave: () => {
        // DONE, the customer's own event: on every result screen it goes to idle, and nowhere else.
        const actor = this.runtime?.actor;
        if ((actor?.getSnapshot() as SnapshotFrom<AnyStateMachine> | undefined)?.can({ type: 'DONE' }))
          actor?.send({ type: 'DONE' });
      },
    });
    this.inactivity = new InactivityWatch({
      timeoutMs: config.customer.inactivitySeconds * 1000,
      promptMs: config.customer.moreTimeSeconds * 1000,
      accessibilityFactor: config.customer.accessibilityFactor,
      cardAnswerByMs: (accessible) => cardAnswerByMs(config, accessible),
      onPrompt: () => this.changed(),
      onExpire: () => this.leaveInput(),
    });
    // A card being read on the card presentation: "Do you need more time?" waits for the read's end.
    reader.on('card-detected', () => this.inactivity.cardDetected());
  }

  /** Nobody answered "Do you need more time?": the input is cancelled and the attract screen comes back. */
  private leaveInput(): void {
    const snap = this.runtime?.actor.getSnapshot() as SnapshotFrom<AnyStateMachine> | undefined;
    if (snap?.can({ type: 'CANCEL' })) this.runtime?.actor.send({ type: 'CANCEL' });
    this.changed();
  }

  /** {@link open}, then {@link begin}: recovery of the journal has finished when it resolves. */
  static async create(config: Config, options: TerminalHostOptions): Promise<TerminalHost> {
    const host = await TerminalHost.open(config, options);
    try {
      await host.begin();
    } catch (e) {
      await host.close();
      throw e;
    }
    return host;
  }

  /**
   * Builds every component from the configuration, not started yet (phase `starting`): its screen can be served
   * already, and says that the terminal is checking earlier payments while {@link begin} recovers the journal. A
   * failure at any step releases what was opened before it (the embedded sandbox, the journal, the reader) and
   * rethrows; once it has resolved, the caller closes the host.
   */
  static async open(given: Config, options: TerminalHostOptions): Promise<TerminalHost> {
    const { logger } = options;
    // Every secret file is checked (owner-only, readable) before anything starts, and read from its absolute path.
    assertConfiguredSecretFiles(given, options.cwd);
    // And every text the receipts print is one the printer can print: never "?" on paper.
    assertPrintableConfiguration(given);
    // And a simulated reader presents a card the simulator has.
    assertReaderConfiguration(given);
    const config = withSecretFilesResolved(given, options.cwd);
    const now = options.now ?? (() => new Date());
    const at = (p: string): string => resolve(options.cwd, p);
    const journalPath = at(config.journal.path);
    const offlineKey = at(config.offline.keyFile);
    const opened: Opened = {};
    try {
      // A journal whose log could not be synced takes no more writes: the terminal goes out of service until it is
      // restarted, and recovery then starts from what is on disk.
      let journalSyncFailed: () => void = () => undefined;
      const journal = openJournal(journalPath, {
        logger: logger.child({ component: 'journal' }),
        now,
        groupCommit: config.journal.groupCommit,
        onSyncFailure: () => journalSyncFailed(),
        ...(options.journalLogSync ? { logSync: options.journalLogSync } : {}),
      });
      opened.journal = journal;
      // One sender per journal, across processes: a `queue flush` cannot forward while the terminal runs.
      journal.acquireSenderLock('the terminal');
      // The at-rest key: a rotation a crash interrupted finished or undone first (`offline rotate-key`), then the key
      // refused unless the card data sealed in the journal (stored payments, tags of open authorizations) is sealed
      // under it — before any card is taken, not at the capture or reversal that would need the tags.
      settleConfiguredRotation(journal, config, options.cwd);
      const atRestKeyFile = fileKeyProvider(offlineKey);
      const atRestKey = atRestKeyFile.loadKey();
      checkAtRestKey(journal, atRestKey, atRestKeyFile.description);
      // Durable state of earlier versions lived in side files: moved into the journal database once (rule 6).
      importLegacySideFiles(journal, {
        holdsPath: resolve(dirname(journalPath), 'holds.json'),
        tagVaultPath: resolve(dirname(journalPath), 'authorization-tags.json'),
        key: atRestKey,
      });
      // The card fingerprint key by the same rule as the at-rest key's file: one that holds no key is refused, never
      // replaced; a missing one is created only when the journal (its former side files imported) keeps nothing a card
      // is still matched against by its fingerprint (open stays, stays the exit still finds, open offline payments).
      const fingerprintKey = loadFingerprintKey(journal, fingerprintKeyPath(journalPath), {
        settings: { tariff: config.tariff },
        logger,
      });
      // Payment-link notifications reach the terminal through its own listener, when configured; they are handed to
      // the link desk once it exists (no link can be paid before).
      let deliver: (n: LinkPaymentNotification) => void = () => {
        throw new Error('the terminal is starting');
      };
      // A correctly signed notification that is refused may be a real payment: recorded for the operator once the
      // audit log exists (logged by the listener or relay before).
      let refused: (r: LinkNotificationRefusal) => void = () => undefined;
      // With the embedded sandbox and nothing configured, a listener on a free local port: pay by phone works out of
      // the box (the sandbox is told where to send).
      const embedded = !options.gatewayUrlOverride && config.gateway.kind === 'sandbox';
      const listen =
        config.links.notifications.listen ??
        (embedded && !config.links.notifications.relay
          ? { host: '127.0.0.1', port: 0, path: '/payment-links/notifications' }
          : undefined);
      if (listen) {
        opened.linkNotifications = await LinkNotificationListener.start({
          ...listen,
          key: linkNotificationKey(config, options.cwd),
          onNotification: (n) => deliver(n),
          onRefused: (r) => refused(r),
          now: () => now().getTime(),
          logger: logger.child({ component: 'links' }),
        });
      }
      const relay = config.links.notifications.relay;
      if (relay) {
        opened.linkRelay = LinkNotificationRelay.start({
          url: relay.url,
          pollMs: relay.pollSeconds * 1000,
          key: linkNotificationKey(config, options.cwd),
          onNotification: (n) => deliver(n),
          onRefused: (r) => refused(r),
          now: () => now().getTime(),
          logger: logger.child({ component: 'links' }),
        });
      }
      let baseUrl = options.gatewayUrlOverride ?? config.gateway.baseUrl;
      if (!options.gatewayUrlOverride && config.gateway.kind === 'sandbox') {
        opened.sandbox = await startSandbox({
          port: 0,
          logger: logger.child({ component: 'sandbox' }),
          ...(opened.linkNotifications ? { webhookUrl: opened.linkNotifications.url } : {}),
        });
        baseUrl = opened.sandbox.url;
      }
      if (!baseUrl)
        throw new ConfigError(
          'CONFIG_INVALID',
          'gateway.baseUrl is required when gateway.kind is "remote"',
          '<configuration>',
          'gateway.baseUrl',
        );
      // The token deadlines on the clock the gateway's requests are dated with.
      const auth = gatewayAuthFromConfig(config, {
        baseUrl,
        cwd: options.cwd,
        logger,
        now: () => now().getTime(),
      });
      opened.oauth = auth.oauth;
      // The terminal runs for days: its token is renewed ahead of expiry by a timer, so that no payment waits on the
      // token host (a command beside it renews a due token before its own request, leaving nothing in flight at exit).
      auth.oauth?.keepRenewed();
      // The gateway's Date of each answer, for the clock skew of the status (the host exists once the client does).
      let dated: (answer: {
        date: string | undefined;
        sentAtMs: number;
        receivedAtMs: number;
      }) => void = () => undefined;
      const gateway = createGatewayClient({
        baseUrl,
        merchantId: config.gateway.merchantId,
        auth: auth.authenticator,
        timeouts: config.gateway.timeouts,
        retry: config.gateway.retry,
        logger: logger.child({ component: 'gateway' }),
        now,
        ...(options.gatewayDispatcher !== undefined ? { dispatcher: options.gatewayDispatcher } : {}),
        onAnswer: (answer) => dated(answer),
        ...(config.links.hostedPageHosts !== undefined
          ? { hostedPageHosts: config.links.hostedPageHosts }
          : {}),
      });
      opened.gateway = gateway;
      const reader = createReader(config.reader, {
        logger,
        timeZone: config.terminal.timezone,
        ...options.readerDeps,
      });
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
        { fingerprintKey, atRestKey, offlineKey },
        options.parkingClock ?? { now: () => now().getTime() },
        options.now === undefined ? linuxBootClock : undefined,
      );
      journalSyncFailed = () =>
        host.outOfService(
          'the journal could not sync its log to disk: restart the terminal to recover from the disk',
        );
      deliver = (n) => host.links.notify(n);
      refused = (r) => host.links.notificationRefused(r);
      dated = (answer) => host.board.gatewayDated(answer);
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

  /**
   * Records in the audit log what changed in the configuration since the last start (src/host/configuration-audit.ts).
   * A journal that cannot record it is logged; the terminal still starts (its money state is not at stake).
   */
  private recordConfiguration(): void {
    try {
      const changes = recordConfiguration(
        this.journal,
        new ConfigurationState(this.journal),
        this.audit,
        this.config,
        'system',
      );
      if (changes.length > 0)
        this.logger.info({ keys: changes.map((c) => c.key) }, 'configuration changed since the last start');
    } catch (err) {
      this.logger.error({ err }, 'configuration changes could not be recorded');
    }
  }

  /** Meter authorizations whose reversal at the end of the capture window is scheduled (tests, crash suite). */
  watchedAuthorizations(): string[] {
    return this.openAuthorizations.watched();
  }

  /**
   * Starts the terminal {@link open} built: recovery of every journal entry left in flight (it waits for the gateway
   * as long as it must: money safety rule 3), the payment links a restart left open, then the machine of the parking
   * model; resolves once a card can be taken. Called again, the same start. {@link close} meanwhile stops the
   * recovery (what it did not resolve stays in the journal for the next start), and it then resolves with the
   * terminal closed.
   */
  begin(): Promise<void> {
    this.starting ??= this.start();
    return this.starting;
  }

  /** Whether {@link close} has run (a method: the start reads it again after each of its waits). */
  private isClosed(): boolean {
    return this.phase === 'closed';
  }

  private async start(): Promise<void> {
    if (this.isClosed()) return;
    this.recordConfiguration();
    this.connectReader();
    void this.receipts.start();
    this.phase = 'recovering';
    this.recoveryInFlight = this.journal.inFlight().length;
    this.changed();
    const stopped = this.stopping.signal;
    try {
      const report = await this.recovery.recoverAll({ signal: stopped });
      this.logger.info({ resolved: report.resolved.length }, 'journal recovery finished');
    } catch (e) {
      if (stopped.aborted) return;
      throw e;
    }
    if (this.isClosed()) return;
    // Payment links a restart left open: watched again within their wait, deactivated otherwise (issue 14).
    const links = await this.links.recover();
    if (links.length > 0) this.logger.info({ links: links.length }, 'payment links recovered');
    if (this.isClosed()) return;
    this.recoveryInFlight = 0;
    this.offline.reconcile();
    this.altPayments.resume();
    // Pay by phone is offered only while the terminal learns of the payments (a notification listener or relay).
    this.runtime = createFlowActor(this.config, this.effects, this.logger, this.parkingClock, {
      payByLink: this.links.available,
      wallClock: { now: () => this.now().getTime() },
    });
    const runtime = this.runtime;
    runtime.actor.subscribe(() => {
      this.language.follow(runtime);
      this.changed();
    });
    // A screen can change inside an invoked actor without a change of the machine's own snapshot (the transaction's
    // currency choice once the offer is in): the customer's screen follows every actor of the machine's system.
    runtime.actor.system.inspect((e) => {
      if (e.type === '@xstate.snapshot' && e.actorRef !== runtime.actor) this.changed();
    });
    this.runtime.actor.start();
    this.holdWatch.watchAll();
    await this.openAuthorizations.settle();
    if (this.isClosed()) return;
    // Put out of service meanwhile (an unexpected error during the start): it stays so.
    if (this.phase === 'recovering') this.phase = 'ready';
    this.background.start();
    this.changed();
  }

  private connectReader(): void {
    // The firmware of each (re)connect: a reader the driver finds only after the start, or another one put in the
    // place of the first, shows its own in the operator status.
    this.reader.on('reconnected', () => void this.readFirmware());
    this.reader
      .connect()
      .then(() => this.readFirmware())
      .catch((e: unknown) => {
        this.logger.warn({ err: e }, 'reader not connected; the driver keeps trying');
        this.changed();
      });
  }

  private async readFirmware(): Promise<void> {
    this.board.firmware = await this.reader.firmwareVersion().catch(() => undefined);
    this.changed();
  }

  /**
   * Puts the terminal out of service (an unexpected error at the process boundary, a configuration problem found
   * at run time, the journal unable to sync, an update about to install): customers see the out-of-service screen and
   * no card is taken; what is in flight finishes and is journaled as usual. Only a restart brings it back: a service
   * mode it interrupts is over, so that "back in service" cannot take cards again on a terminal that must not.
   * `stopping`: the terminal is being stopped or restarted on purpose — logged as information, not as an error.
   */
  outOfService(reason: string, options: { stopping?: boolean } = {}): void {
    this.stopServing(reason, undefined, options.stopping === true ? 'info' : 'error');
  }

  /**
   * Out of service by the operator's (or the fleet's) choice: service mode. It lives in memory — a restart ends it — so
   * the service watchdog does not restart the terminal for its reader meanwhile (src/host/kiosk-service.ts).
   */
  inServiceMode(): boolean {
    return this.phase === 'out-of-service' && this.serviceMode !== undefined;
  }

  /** Out of service for `reason`: by the operator's choice (`serviceMode`, with its notice) or not (undefined). */
  private stopServing(
    reason: string,
    serviceMode: { notice: string | undefined } | undefined,
    level: 'error' | 'info' = 'error',
  ): void {
    if (this.phase === 'closed') return;
    this.serviceMode = serviceMode;
    this.outOfServiceReason = reason;
    this.phase = 'out-of-service';
    this.logger[level]({ reason }, 'terminal out of service');
    this.changed();
  }

  /**
   * A service task, from operator mode or the fleet: service mode on — out of service with the notice customers read
   * (what is in flight finishes as usual) — only while no customer is served ({@link serviceModeOn}); back in service
   * (only out of a service mode the operator chose: an unexpected error needs a restart); a reader self-test, a test
   * receipt, the last receipt again, recovery of the journal run again now.
   */
  async service(
    task: ServiceTask,
    reason?: string,
    /** Who asks: the operator behind the PIN, or the fleet (a signed command, src/host/fleet-terminal.ts). */
    actor: 'operator' | 'fleet' = 'operator',
  ): Promise<ServiceResult> {
    try {
      switch (task) {
        case 'on':
          return this.serviceModeOn(reason, actor);
        case 'off':
          return this.serviceModeOff(actor);
        case 'reader-self-test': {
          const firmware = await this.reader.firmwareVersion();
          return { outcome: 'ok', message: `reader ${this.reader.health}, firmware ${firmware}` };
        }
        case 'test-print':
          await this.receipts.testPrint();
          return { outcome: 'ok', message: 'test receipt printed' };
        case 'reprint':
          await this.receipts.reprint();
          return { outcome: 'ok', message: 'last receipt printed again' };
        case 'rerun-recovery': {
          const report = await this.recovery.recoverAll();
          return { outcome: 'ok', message: `recovery resolved ${report.resolved.length}` };
        }
      }
    } catch (e) {
      return { outcome: 'failed', message: e instanceof Error ? e.message : String(e) };
    }
  }

  /**
   * Service mode on, only while no customer is being served ({@link customerSession}). Out of service the machine takes
   * no customer event: a meter session could not end, its hold would be neither captured nor released, until service
   * mode ended. So it is refused BUSY, with the reason; the operator asks again once the customer is done. Not the
   * stricter rule the restarts wait for ({@link idle}): nothing is lost by going out of service with an authorization
   * open or an entry unknown — the work between customers goes on in service mode (the background sweep, recovery,
   * the hold watch), whereas waiting for no car to be inside a tap-and-go car park, or for a gateway that is down to
   * answer, could keep service mode off for good. Cars inside are named in the answer: they cannot pay at the exit
   * until the terminal is back in service. Recorded in the audit log whatever the outcome, whoever asked.
   */
  private serviceModeOn(reason: string | undefined, actor: 'operator' | 'fleet'): ServiceResult {
    const result = ((): ServiceResult => {
      if (this.phase !== 'ready') return { outcome: 'failed', message: `the terminal is ${this.phase}` };
      // Checked and switched in one turn of the event loop: no customer can start in between.
      if (this.customerSession())
        return {
          outcome: 'refused',
          code: 'BUSY',
          message: 'a customer session is in progress; service mode can go on once it has ended',
        };
      this.stopServing(`service mode${reason ? `: ${reason}` : ''}`, { notice: reason });
      const inside = this.holds.size;
      return {
        outcome: 'ok',
        message:
          inside === 0
            ? 'out of service'
            : `out of service; ${inside} tap-and-go hold(s) open: those cars cannot pay at the exit until back in service`,
      };
    })();
    this.audit.serviceMode({ actor, on: true, ...(reason ? { reason } : {}), ...auditedResult(result) });
    return result;
  }

  private serviceModeOff(actor: 'operator' | 'fleet'): ServiceResult {
    const result = ((): ServiceResult => {
      if (this.phase !== 'out-of-service' || !this.serviceMode)
        return { outcome: 'failed', message: 'not in service mode (an unexpected error needs a restart)' };
      this.serviceMode = undefined;
      this.outOfServiceReason = undefined;
      this.phase = 'ready';
      this.changed();
      return { outcome: 'ok', message: 'back in service' };
    })();
    this.audit.serviceMode({ actor, on: false, ...auditedResult(result) });
    return result;
  }

  /** Whether a customer is at the terminal: the screen shown is a customer's (not one of NO_CUSTOMER_SCREENS). */
  customerSession(): boolean {
    return this.lastScreen !== undefined && !NO_CUSTOMER_SCREENS.has(this.lastScreen);
  }

  /**
   * Authorizations held on a customer's card that no customer session settles: open tap-and-go holds, meter
   * pre-authorizations whose reversal at the end of the capture window is scheduled, open follow-ups.
   */
  openAuthorizationCount(): number {
    return this.holds.size + this.watchedAuthorizations().length + this.followUps.open().length;
  }

  /**
   * Idle, by the one rule (src/host/idle.ts): no customer session, no open authorization, no journal entry unknown or
   * in flight, recovery not running. What the fleet's heartbeat reports, and what the daily restart, the update gate,
   * and the fleet's restart and configuration wait for (service mode asks less: {@link serviceModeOn}).
   */
  idle(): IdleVerdict {
    const counts = this.journal.counts();
    return idleOf(
      {
        customerSession: this.customerSession(),
        openAuthorizations: this.openAuthorizationCount(),
        journal: { unknown: counts.unknown, inFlight: counts.inFlight },
      },
      this.phase === 'recovering',
    );
  }

  /**
   * An authorization was reversed (`how`: `already-reversed` when a reversal of it was refused because it is released
   * already): a tap-and-go hold on it is over, its follow-ups are done, its data wiped.
   */
  private authorizationReversed(
    transactionId: string,
    how: 'reversed' | 'already-reversed' = 'reversed',
  ): void {
    this.openAuthorizations.forget(transactionId);
    for (const f of this.followUps.open())
      if (f.authorizationTransactionId === transactionId) this.followUps.complete(f.id, how);
    this.dropHold(
      transactionId,
      how === 'reversed'
        ? 'hold closed: its authorization was reversed'
        : 'hold closed: a reversal of it found its authorization released already',
    );
  }

  /**
   * Closes the open hold of an authorization that is over (dropped), stops watching it, and wipes its card read: no
   * exit or expiry uses it any more (DESIGN.md, money safety rule 4).
   */
  private dropHold(transactionId: string, why: string): void {
    const hold = this.holds.get(transactionId);
    if (!this.holds.drop(transactionId)) return;
    this.holdWatch.unwatch(transactionId);
    if (hold !== undefined) this.cards.release(hold.cardRef);
    this.logger.info({ transactionId }, why);
  }

  /**
   * An entry concerning an authorization that may have an open tap-and-go hold was resolved — by recovery (a reversal
   * of it whose outcome was unknown, say), or by the answer to a reversal whose machine had stopped waiting for it
   * (PaymentRouter's `reversalRefusedUnwaited`): the hold ends by the journal's rules. Closed (dropped) when the
   * journal shows the authorization settled; back under expiry watch when nothing is settling it any more (an exit may
   * claim it again; an expired hold is reversed again at once, after the refused reversal). The authorization's open
   * follow-ups run first, at once: a release decided while that entry was unresolved waits for nothing else.
   */
  private holdAfterResolution(transactionId: string): void {
    // A release decided while that follow-on was unresolved (a follow-up: PaymentRouter) goes now, not at its next due
    // time nor at the hold's expiry. At start, recovery's own settle runs every follow-up.
    if (this.runtime !== undefined)
      this.openAuthorizations
        .runFollowUpsOf(transactionId)
        .catch((err: unknown) => this.logger.error({ err, transactionId }, 'follow-up run failed'));
    const hold = this.holds.get(transactionId);
    if (!hold) return;
    if (this.journal.authorizationSettled(transactionId)) {
      this.dropHold(transactionId, 'hold closed: recovery settled its authorization');
      return;
    }
    // At start the watch begins only after recovery, with every unclaimed hold (watchAll).
    if (this.runtime !== undefined && !this.openAuthorizations.holdSettling(transactionId))
      this.holdWatch.watch(hold);
  }

  private noteRecovered(item: JournalRecoveryItem): void {
    this.audit.recovery(item);
    // An operator's refund or void whose answer was lost: what finally became of it, under its own action.
    this.desk.followOnResolved(item);
    if (item.transactionId && ['timeout-reversal', 'already-reversed'].includes(item.resolution))
      this.authorizationReversed(item.transactionId);
    const entry = this.journal.get(item.entryId);
    for (const tx of new Set([item.transactionId, entry?.referencedTransactionId]))
      if (tx !== undefined) this.holdAfterResolution(tx);
    // A void of a capture finished by recovery: the hold of its authorization must still be released.
    if (item.service === 'void-capture' && item.resolution === 'timeout-void' && item.transactionId)
      this.router.captureVoided(item.transactionId);
    this.noteForOperator({
      transactionId: item.transactionId ?? `entry-${item.entryId}`,
      service: item.service,
      resolution: item.resolution + (item.needsOperator ? ' (operator action needed)' : ''),
      amount:
        item.amountMinor !== undefined && item.currency
          ? { minor: item.amountMinor, currency: item.currency }
          : undefined,
      at: item.at,
    });
  }

  /**
   * A fee not collected in full (the router, in the capture outcome's transaction): the audit log keeps it, in that
   * transaction; the operator status shows it, as what recovery leaves for the operator.
   */
  /**
   * A tap-and-go exit that could not price its fee in its hold's currency (the terminal's currency changed while the
   * car was in): the exit releases the hold and charges nothing, so the whole fee is the operator's to settle — in the
   * audit log and the operator status, as a fee shortfall.
   */
  private feeNotComputable(f: UnpricedFee): void {
    this.audit.feeNotComputable(f);
    this.logger.warn(
      { transactionId: f.authorizationTransactionId, holdCurrency: f.holdCurrency, currency: f.currency },
      'exit fee not computable in the hold’s currency: the hold is released, the fee recorded for the operator',
    );
    this.board.note({
      transactionId: f.authorizationTransactionId,
      service: 'preauth',
      resolution: `fee-shortfall (FEE_NOT_COMPUTABLE: hold in ${f.holdCurrency}, operator action needed)`,
      amount: { minor: f.feeMinor, currency: f.currency },
      at: this.now().toISOString(),
    });
  }

  /**
   * A tap-and-go stay that outlasted its hold, charged at its exit by a sale (or not): in the audit log, and on the
   * status board when the sale did not go through (the car is still inside, its fee owed).
   */
  private stayOutstayed(stay: Parameters<FlowEffects['stayOutstayed']>[0]): void {
    this.audit.stayOutstayed(stay);
    const fields = {
      holdId: stay.hold.holdId,
      transactionId: stay.transactionId,
      feeMinor: stay.feeMinor,
      reason: stay.reason,
    };
    if (stay.sold) {
      this.logger.warn(
        fields,
        'tap-and-go stay outlasted its hold: its fee was charged by a sale at the exit',
      );
      return;
    }
    this.logger.warn(
      fields,
      stay.reason === 'MAXIMUM_STAY_REACHED'
        ? 'tap-and-go stay reached its maximum with its car inside: its hold is released, its fee owed at its exit'
        : 'tap-and-go stay outlasted its hold: its sale at the exit did not go through',
    );
    this.board.note({
      transactionId: stay.transactionId ?? stay.hold.holdId,
      service: 'sale',
      resolution: `stay-outstayed (${stay.reason ?? 'NOT_SOLD'}, operator action needed)`,
      amount: { minor: stay.feeMinor, currency: stay.hold.currency },
      at: this.now().toISOString(),
    });
  }

  /**
   * A tap-and-go hold taken by its expiry watch at the end of its maximum stay, its car inside (`HoldStore.outstayed`):
   * its hold is being released and its exit, should it ever come, charges the stay by a sale. Recorded for the operator
   * now, since that exit may never come — a car left behind, or let out through no exit that read the card: the audit
   * log's `stay-outstayed` (`refused`, code `MAXIMUM_STAY_REACHED`, the hold's authorization the subject) with the fee
   * the tariff asks for the stay up to its maximum, and the operator status. Inside the commit of the mark; once per
   * stay (the watch takes a hold again after a reversal refused for now).
   */
  private maximumStayReached(hold: HoldRecord, atMs: number): void {
    if (this.audit.holds('stay-outstayed', hold.transactionId, { holdId: hold.holdId })) return;
    const { feeMinor } = feeBetween(this.settings.tariff, Math.min(hold.enteredAtMs, atMs), atMs);
    this.stayOutstayed({
      hold,
      feeMinor,
      sold: false,
      transactionId: hold.transactionId,
      reason: 'MAXIMUM_STAY_REACHED',
    });
  }

  /**
   * A tap-and-go stay that outlasted its hold, uncharged, which a new entry of its card replaced as the card's last
   * stay (no exit asks for it any more): its fee, priced by the tariff from its entry to the end of its maximum stay —
   * the time the terminal knows its car was inside; when it left since, through no exit that read the card, is not
   * known — is the operator's to collect, as a fee shortfall (`STAY_OUTSTAYED`). Inside the commit that opens the new
   * hold (flow effects' `openHold`): recorded with it, and only once per stay — one recorded already for it (its exit
   * could not price it: `FEE_NOT_COMPUTABLE`) stands.
   */
  private outstayedStayLeft({ hold, outstayedAtMs }: { hold: HoldRecord; outstayedAtMs: number }): void {
    if (this.audit.holds('fee-shortfall', hold.transactionId, {})) return;
    const { feeMinor } = feeBetween(
      this.settings.tariff,
      Math.min(hold.enteredAtMs, outstayedAtMs),
      outstayedAtMs,
    );
    const currency = this.settings.currency;
    this.audit.outstayedStayLeft({
      authorizationTransactionId: hold.transactionId,
      holdCurrency: hold.currency,
      feeMinor,
      currency,
    });
    this.logger.warn(
      { holdId: hold.holdId, feeMinor },
      'tap-and-go stay outlasted its hold and its card entered again before its exit: its fee is recorded for the operator',
    );
    this.board.note({
      transactionId: hold.transactionId,
      service: 'preauth',
      resolution:
        'fee-shortfall (STAY_OUTSTAYED: the card entered again before the exit, operator action needed)',
      amount: { minor: feeMinor, currency },
      at: this.now().toISOString(),
    });
  }

  /**
   * A tap-and-go entry refused after its verification and before any pre-authorization (`CARD_ALREADY_INSIDE`: the
   * card's stay is open): nothing was held or charged, the gate stayed shut. In the audit log, where the operator sees
   * it (the AVR's transactionId the subject, the open hold's in its details; no card data), and the log.
   */
  private entryRefused(refusal: Parameters<FlowEffects['entryRefused']>[0]): void {
    this.audit.entryRefused(refusal);
    this.logger.info(
      { transactionId: refusal.transactionId, holdId: refusal.holdId, reason: refusal.reason },
      'tap-and-go entry refused: the card’s stay is open; no hold placed',
    );
  }

  private feeShortfall(s: FeeShortfall): void {
    this.audit.feeShortfall(s);
    this.logger.warn(
      {
        transactionId: s.captureTransactionId,
        reason: s.reason,
        shortfallMinor: s.owedMinor - s.capturedMinor,
      },
      'fee not collected in full: the shortfall is recorded for the operator',
    );
    this.board.note({
      transactionId: s.captureTransactionId,
      service: 'capture',
      resolution: `fee-shortfall (${s.reason}, operator action needed)`,
      amount: { minor: s.owedMinor - s.capturedMinor, currency: s.currency },
      at: this.now().toISOString(),
    });
  }

  private noteForOperator(item: Parameters<StatusBoard['note']>[0]): void {
    this.board.note(item);
    this.changed();
  }

  private setGateway(online: boolean, reason?: string, host?: string): void {
    const { changed, cameBack, clockRefused } = this.board.gatewaySeen(online, reason, host);
    if (clockRefused) {
      // Once per episode: until the gateway answers again or refuses for another reason.
      const skew = this.board.clockSkew;
      const clock = skew !== undefined ? clockSkewText(skew) : "this terminal's clock is off the gateway's";
      this.logger.warn(
        { code: reason, clockSkewSeconds: skew ?? null },
        `the gateway refuses the credentials: ${clock}, more than the credentials allow — set the clock`,
      );
    }
    if (cameBack) void this.background.forward();
    if (changed) this.changed();
  }

  /** Forwards stored offline payments now (operator mode's flush; a run already going is shared). */
  startForwarding(): Promise<ForwardSummary> {
    return this.background.forward();
  }

  /** One request of a machine (or of the host's own follow-ons), through the one door (src/host/payment-router.ts). */
  submit(request: FlowRequest): Promise<SubmitOutcome> {
    return this.router.submit(request);
  }

  // ---- TerminalApi ----

  private changed(): void {
    this.seq += 1;
    const snapshot = this.buildSnapshot();
    const screen = snapshot.customer.screen;
    // Back on the attract screen after a customer: the next one starts without the last one's choices. A customer who
    // turned speech on while the terminal started or was out of service, and nobody was served, keeps it.
    if (screen === 'idle') {
      if (this.served) this.accessible = false;
      this.served = false;
    } else if (!NO_CUSTOMER_SCREENS.has(screen)) this.served = true;
    this.lastScreen = screen;
    this.inactivity.observe(screen, this.accessible);
    this.speech.observe(snapshot.customer, this.accessible);
    this.resultHold.update();
    if (this.emitter.listenerCount('snapshot') === 0) return;
    this.emitter.emit('snapshot', this.buildSnapshot());
  }

  /** The operator status bar; `queue status` prints the same offline numbers. */
  status(): OperatorStatus {
    return {
      ...this.board.status({
        phase: this.phase,
        outOfService: this.outOfServiceReason,
        readerHealth: this.reader.health,
        baseUrl: this.baseUrl,
        offline: this.offline.status(),
        journal: this.journal.counts(),
        recoveryInFlight: this.recoveryInFlight,
        feeShortfalls: this.audit.feeShortfallsAwaitingCount(),
      }),
      printer: this.receipts.summary(),
      speech: this.speech.summary(),
    };
  }

  private buildSnapshot(): TerminalSnapshot {
    const c = this.config;
    const customer = customerScreen({
      phase: this.phase,
      runtime: this.runtime,
      config: c,
      readerHealth: this.reader.health,
      lastReceipt: this.receipts.issued(this.lastReceiptId),
      locale: this.language.current,
      ...(this.serviceMode?.notice !== undefined ? { serviceNotice: this.serviceMode.notice } : {}),
    });
    if (customer.payByPhone !== undefined)
      customer.payByPhone = withDeclinedNotice(
        customer.payByPhone,
        this.links.get(customer.payByPhone.linkId)?.declinedPayments,
        translator(this.language.current),
      );
    const prompt = this.inactivity.prompt;
    return {
      seq: this.seq,
      model: c.terminal.model,
      locale: c.terminal.locale,
      status: this.status(),
      customer: {
        ...customer,
        ...(this.accessible ? { accessibility: true } : {}),
        ...(this.accessible && this.speech.view() ? { speech: this.speech.view() } : {}),
        ...(prompt && customer.screen === this.lastScreen
          ? {
              prompt: {
                kind: prompt.kind,
                expiresAt: new Date(prompt.expiresAtMs).toISOString(),
                seconds: Math.max(0, Math.ceil((prompt.expiresAtMs - Date.now()) / 1000)),
              },
              actions: [...customer.actions, 'MORE_TIME' as const],
            }
          : {}),
      },
    };
  }

  /** Presentation events: the customer's own settings, handled here, never by the machines. */
  private presentation(event: UserEvent): Result<TerminalSnapshot> | undefined {
    if (event.type === 'SET_ACCESSIBILITY') {
      const turnedOn = event.on && !this.accessible;
      this.accessible = event.on;
      // A card awaited already: a fresh activation with the wait of accessibility mode, which the question is timed on.
      if (turnedOn) this.readAgain();
      this.inactivity.activity();
      this.changed();
      return ok(this.buildSnapshot());
    }
    if (event.type === 'MORE_TIME') {
      if (!this.inactivity.prompt) return this.refuse('NOT_ALLOWED_NOW', 'no question is being asked');
      // On the card presentation the time is the reader's: a fresh activation with its whole wait.
      this.readAgain();
      this.inactivity.activity();
      this.changed();
      return ok(this.buildSnapshot());
    }
    if (event.type === 'SPEECH') {
      if (!this.accessible || !this.speech.command(event.command))
        return this.refuse('NOT_ALLOWED_NOW', 'speech output is off');
      this.inactivity.activity();
      this.changed();
      return ok(this.buildSnapshot());
    }
    if (event.type === 'ECHO') {
      // Refused without a word: a spoken refusal would cut off the echo of every key of a customer whose page speaks.
      if (!this.accessible || !this.speech.echo(event.text, event.lang))
        return fail(
          'NOT_ALLOWED_NOW',
          'no input echo: speech is off, the page speaks, or the text is masked',
        );
      // A key pressed while typing is the customer at work: no "Do you need more time?" meanwhile.
      this.customerAtWork();
      return ok(this.buildSnapshot());
    }
    if (event.type === 'ACTIVITY') {
      this.customerAtWork();
      return ok(this.buildSnapshot());
    }
    return undefined;
  }

  /**
   * A page's report on its own speech (`platform`), in every phase: a result screen stays while any page says it
   * (src/host/result-screen.ts). Refused without a word: a spoken refusal would be a new utterance for the page to say
   * and report on. Not the customer's activity, and nothing anyone sees changes (no snapshot).
   */
  private pageSpeech(id: number, speaking: boolean, page?: number): Result<TerminalSnapshot> {
    if (!this.accessible || !this.speech.pageSpeaking(id, speaking, page))
      return fail(
        'NOT_ALLOWED_NOW',
        'no such speech: speech is off, the terminal speaks itself, or the utterance is not the one given out',
      );
    this.resultHold.update();
    return ok(this.buildSnapshot());
  }

  /**
   * Starts the card read again when a card is awaited (READ_AGAIN to the actor reading it): the read in progress is
   * aborted and the reader activated afresh. Nothing was sent yet; a card already read is past this screen. Not while
   * the reader reads a card it detected (accessibility mode turned on then): that read is never broken off.
   */
  private readAgain(): void {
    if (this.inactivity.readingCard) return;
    const root = this.runtime?.actor;
    const reading = root === undefined ? undefined : cardReadingActor(root);
    if (reading === undefined) return;
    reading.send({ type: 'READ_AGAIN' });
    this.inactivity.cardRead();
  }

  /**
   * The customer is typing what stays on the page (ECHO, ACTIVITY): the time limit starts again, and nothing anyone
   * sees changes (no snapshot for a key). While "Do you need more time?" is asked only its own answer counts: a Tab
   * between Yes and No, echoed, must not take the dialog away under the customer.
   */
  private customerAtWork(): void {
    if (this.inactivity.prompt === undefined) this.inactivity.activity();
  }

  /**
   * Refuses a customer's event: `message` for developers and logs, the reason in the customer's language for the
   * screen (`customerText`) and, while the screen is spoken, for the ear too (a snapshot carries the utterance to the
   * renderer's speech; espeak-ng says it at once).
   */
  private refuse(
    code: 'NOT_ALLOWED_NOW' | 'NOT_READY' | 'OUT_OF_SERVICE',
    message: string,
  ): Result<TerminalSnapshot> {
    const customerText = translator(this.language.current).t(`label.refused.${code}`);
    if (this.accessible && this.speech.aside(customerText)) this.changed();
    return { ok: false, error: { code, message, customerText } };
  }

  private setLanguage(locale: string): Result<TerminalSnapshot> {
    if (!this.language.choose(locale)) return fail('BAD_LOCALE', `no catalogue for locale ${locale}`);
    this.inactivity.activity();
    this.changed();
    return ok(this.buildSnapshot());
  }

  snapshot(): Promise<Result<TerminalSnapshot>> {
    return Promise.resolve(ok(this.buildSnapshot()));
  }

  send(event: UserEvent): Promise<Result<TerminalSnapshot>> {
    // The language is the customer's on every screen, out of service included (presentation, never the machines').
    if (event.type === 'SET_LANGUAGE') return Promise.resolve(this.setLanguage(event.locale));
    if (event.type === 'SPEECH_STATE')
      return Promise.resolve(this.pageSpeech(event.id, event.speaking, event.page));
    // Typing on a page that takes no customer: nothing is timed. Refused without a word, as an echo is: a spoken
    // refusal would talk over the customer every five seconds.
    if (event.type === 'ACTIVITY' && (this.phase !== 'ready' || !this.runtime))
      return Promise.resolve(
        this.phase === 'out-of-service'
          ? fail('OUT_OF_SERVICE', 'the terminal is out of service')
          : fail('NOT_READY', 'the terminal is not ready yet'),
      );
    if (this.phase !== 'ready' || !this.runtime) {
      // A blind customer must still hear why the terminal takes no card: accessibility mode and the speech keys work
      // out of service, while it starts and while it checks earlier payments (presentation only); every other event
      // is refused.
      const handled =
        this.phase !== 'closed' &&
        (event.type === 'SET_ACCESSIBILITY' || event.type === 'SPEECH' || event.type === 'ECHO')
          ? this.presentation(event)
          : undefined;
      return Promise.resolve(
        handled ??
          (this.phase === 'out-of-service'
            ? this.refuse('OUT_OF_SERVICE', 'the terminal is out of service')
            : this.refuse('NOT_READY', 'the terminal is not ready yet')),
      );
    }
    const handled = this.presentation(event);
    if (handled) return Promise.resolve(handled);
    this.inactivity.activity();
    const snap = this.runtime.actor.getSnapshot() as SnapshotFrom<AnyStateMachine>;
    if (!snap.can(event))
      return Promise.resolve(this.refuse('NOT_ALLOWED_NOW', `${event.type} is not possible on this screen`));
    const screen = this.buildSnapshot().customer.screen;
    if (screen === 'starting' || screen === 'out-of-service')
      return Promise.resolve(this.refuse('NOT_ALLOWED_NOW', 'the card reader is not ready'));
    if (event.type === 'START' || event.type === 'DONE') this.lastReceiptId = undefined;
    if (event.type === 'CREDIT') {
      // Money out to any card, linked to no sale: never without the operator PIN, checked and locked out as operator
      // mode's, and only once the machine takes it (`attended.standaloneCredit` off: refused above, no PIN counted).
      // The machine never sees the PIN.
      const admitted = this.desk.admitCredit(event.pin);
      if (!admitted.ok) return Promise.resolve(admitted);
      this.runtime.actor.send({ type: 'CREDIT' });
      return this.snapshot();
    }
    this.runtime.actor.send(event);
    return this.snapshot();
  }

  operator(request: OperatorRequest): Promise<Result<OperatorResponse>> {
    // While the start recovers the journal the operator can sign in and look (status, transactions, audit); what moves
    // money or forwards it waits until the entries left in flight are resolved (rule 3).
    if (this.recovering() && MOVES_MONEY.has(request.action.type)) return Promise.resolve(NOT_READY);
    return this.desk.handle(request);
  }

  /** The start has not yet resolved what the last run left in flight: nothing moves money (rule 3). */
  private recovering(): boolean {
    return this.phase === 'starting' || this.phase === 'recovering';
  }

  /** Where what stands of a ticket's payments is read (src/host/ticket-payments.ts). */
  private ticketReaders(): TicketPaymentReaders {
    return {
      find: (tx) => this.desk.find(tx),
      awaitingOutcome: (tx) => this.offline.awaitingOutcome(tx),
      altSale: (id) => this.altPayments.get(id),
      undecided: (tx) => undecidedEntriesOf(this.journal, tx),
    };
  }

  /**
   * What stands of a pay station ticket's payments when it is inserted. A sale of it whose outcome is not known (its
   * answer lost, recovery not done with it) may have taken the customer's money, a refund or void of one may have given
   * it back or not (`unresolvedTicketSales`): recovery is asked for an attempt now,
   * as for a follow-on of an unresolved request (PaymentRouter.resolveNow, rule 3); still unresolved, the ticket is
   * being checked — neither charged again nor counted paid — until recovery has decided.
   */
  private async ticketPayments(ticket: string): Promise<{ paid?: TicketPaid; paymentUnresolved?: true }> {
    const readers = this.ticketReaders();
    const unresolved = unresolvedTicketSales(this.tickets.forTicket(ticket), readers);
    if (unresolved.length > 0) {
      await this.router.resolveNow(unresolved);
      if (unresolvedTicketSales(this.tickets.forTicket(ticket), readers).length > 0)
        return { paymentUnresolved: true };
    }
    const paid = ticketPaidOf(this.tickets.forTicket(ticket), readers);
    return paid !== undefined ? { paid } : {};
  }

  /** The open tap-and-go stays as operator mode lists them (the fleet's `open-stays`): masked card only. */
  openStays(limit: number): OpenStaySummary[] {
    return this.desk.openStays(limit);
  }

  /**
   * The fleet's release of a stay (`release-stay`): operator mode's release ({@link OperatorDesk.releaseStay}, the hold
   * watch's reversal, every rule of it), recorded as asked by the fleet command `commandId`. Refused `NOT_READY`, like
   * operator mode's, while the start recovers the journal.
   */
  releaseStay(
    holdId: string,
    commandId: string,
  ): Promise<Result<Extract<OperatorResponse, { type: 'hold-release' }>>> {
    if (this.recovering()) return Promise.resolve(NOT_READY);
    return this.desk.releaseStay(holdId, { actor: 'fleet', commandId });
  }

  subscribe(listener: (snapshot: TerminalSnapshot) => void): () => void {
    this.emitter.on('snapshot', listener);
    return () => this.emitter.off('snapshot', listener);
  }

  /** The machine's actor (tests, `simulate`). */
  get actor(): AnyActorRef | undefined {
    return this.runtime?.actor;
  }

  /** Resolves once the machine is idle again, nothing is in flight and no hold is due (tests, `simulate`). */
  async settle(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (
        this.phase === 'ready' &&
        this.journal.inFlight().length === 0 &&
        !this.background.busy &&
        !this.holdWatch.busy &&
        !this.openAuthorizations.busy
      )
        return;
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /**
   * Stops the terminal: no new card or request is taken, every request already out finishes and its outcome is
   * journaled (each is bounded by the gateway timeouts), then everything is released. What is still unresolved stays
   * in the journal for the next start's recovery — an approval of a machine's request among it: the machine is
   * stopped, nobody uses or undoes that approval, so it is journaled unknown for recovery (FlowEffects.submit).
   */
  async close(): Promise<void> {
    if (this.phase === 'closed') return;
    this.phase = 'closed';
    // A start still recovering stops at its next pause; a request it has out finishes below (the sender's drain).
    this.stopping.abort();
    this.inactivity.stop();
    this.resultHold.stop();
    this.speech.end();
    this.links.stop();
    this.holdWatch.stop();
    this.openAuthorizations.stop();
    this.runtime?.actor.stop();
    await this.altPayments.close();
    await this.sender.drain();
    await this.starting?.catch((err: unknown) => this.logger.error({ err }, 'the start failed'));
    // A link's create or deactivation still out: its answer is journaled before the journal closes.
    await this.links.settled();
    await this.background.stop();
    await this.receipts.close();
    // The PIN checks refused during a lockout and not recorded yet: summed up while the journal is open.
    this.desk.close();
    await release(this.opened, this.logger);
  }
}

/**
 * The key payment-link notifications are verified with: `links.notifications.secretFile`, else the gateway's shared
 * secret (HTTP signature), else — with the embedded sandbox — its public demo key.
 */
function linkNotificationKey(config: Config, cwd: string): LinkNotificationKey {
  const n = config.links.notifications;
  const merchantId = config.gateway.merchantId;
  const key = (sharedSecretBase64: string): LinkNotificationKey => ({
    merchantId,
    sharedSecretBase64,
    toleranceSeconds: n.toleranceSeconds,
  });
  if (n.secretFile !== undefined) {
    const file = resolve(cwd, n.secretFile);
    const text = readSecretText(file, 'links.notifications.secretFile');
    // A key that verifies nothing refuses every payment notification: refused at the start, naming the file, rather
    // than found out when payments by phone stop counting.
    try {
      decodeSharedSecret(text);
    } catch (e) {
      throw new ConfigError(
        'CONFIG_INVALID',
        `${file}: ${e instanceof Error ? e.message : String(e)}: payment-link notifications could not be verified`,
        file,
        'links.notifications.secretFile',
      );
    }
    return key(text);
  }
  if (config.gateway.auth.sharedSecretFile !== undefined)
    return key(readSecretText(config.gateway.auth.sharedSecretFile, 'gateway.auth.sharedSecretFile'));
  if (config.gateway.kind === 'sandbox') return key(SANDBOX_SHARED_SECRET);
  throw new ConfigError(
    'CONFIG_INVALID',
    'payment-link notifications need links.notifications.secretFile (or gateway.auth.sharedSecretFile)',
    '<configuration>',
    'links.notifications.secretFile',
  );
}

/** Builds and starts the terminal from a validated configuration: recovery has finished when it resolves. */
export function createTerminalHost(config: Config, options: TerminalHostOptions): Promise<TerminalHost> {
  return TerminalHost.create(config, options);
}

/**
 * Builds the terminal from a validated configuration without starting it: its screen can be served while
 * {@link TerminalHost.begin} recovers the journal (`parking-terminal start`, the Electron shell).
 */
export function openTerminalHost(config: Config, options: TerminalHostOptions): Promise<TerminalHost> {
  return TerminalHost.open(config, options);
}

/**
 * What a start prints, once the terminal is open, for whoever started it (`parking-terminal start`, the Electron
 * shell; under systemd, the service's journal): the embedded sandbox's URL, and the operator PIN generated for this
 * start when no PIN file is configured — shown nowhere else, so a start that did not hand it over would leave operator
 * mode closed to everyone. The PIN opens refunds, voids and releases of holds: it is printed on a terminal only
 * (`terminal`, {@link printedSecret}); elsewhere the line names `terminal.generatedPinFile`, to which it is written
 * (mode 0600; the returned `pinFile`, which the caller withdraws at the stop), or says how to get one.
 */
export function openedLines(
  host: Pick<TerminalHost, 'sandboxUrl' | 'generatedOperatorPin'>,
  where: { terminal: boolean; generatedPinFile: string | undefined; cwd: string; logger: Logger },
): { lines: string[]; pinFile: StartSecretFile | undefined } {
  const lines = host.sandboxUrl ? [`Sandbox gateway: ${host.sandboxUrl}`] : [];
  const pin = host.generatedOperatorPin;
  if (pin === undefined) return { lines, pinFile: undefined };
  const pinFile = StartSecretFile.of(
    where.generatedPinFile,
    where.cwd,
    'operator PIN',
    (message) => new GeneratedPinFileError(`terminal.generatedPinFile ${message}`),
    where.logger,
  );
  pinFile?.publish(pin);
  const shown = printedSecret(pin, { terminal: where.terminal, file: pinFile }, (file) =>
    file !== undefined
      ? `in ${file}`
      : 'printed on a terminal only; set terminal.operatorPinFile, or terminal.generatedPinFile',
  );
  lines.push(`Operator PIN for this start: ${shown}`);
  return { lines, pinFile };
}
