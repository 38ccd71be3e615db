import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadConfig, type Config } from '../../config/index.js';
import { journalFollowOnStore } from '../../host/follow-on-store.js';
import type { OfflineDeclineSummary } from '../../host/api.js';
import { gatewayTransmitter } from '../../host/gateway-adapters.js';
import { acknowledgeOfflineDeclines, declineSummary } from '../../host/offline-declines.js';
import { forwardedOutcome, type OutcomeObligations } from '../../host/payment-router.js';
import { settleConfiguredRotation } from '../../host/pending-rotation.js';
import {
  AuditStore,
  AuthorizationDataStore,
  emptyOfflineStatus,
  fileKeyProvider,
  FollowUpStore,
  JournaledSender,
  JournalError,
  linuxBootClock,
  offlineDeclinesToAcknowledge,
  openJournal,
  openOfflineQueueReadOnly,
  OfflineQueue,
  type Transmitter,
} from '../../journal/index.js';
import type { Logger } from '../../log/index.js';
import { parseCommandArgs } from '../args.js';
import { commandGatewayUrl, commandLogger, connectConfiguredGateway } from '../gateway-access.js';
import { EXIT_FINDINGS, EXIT_OK, printJson, UsageError, type Command } from '../output.js';

/** What `queue flush` needs to reach the gateway; `close` releases it. */
export interface FlushConnection {
  /** Sends each stored payment once (the journal's sender journals around it). */
  readonly transmitter: Transmitter;
  close(): Promise<void>;
}

/** Builds the connection `queue flush` forwards through (injected by tests; the default uses the gateway client). */
export type ConnectForwarder = (
  config: Config,
  options: { baseUrl: string; logger: Logger; cwd: string },
) => Promise<FlushConnection>;

const connectGateway: ConnectForwarder = (config, { baseUrl, logger, cwd }) => {
  const gateway = connectConfiguredGateway(config, { baseUrl, logger, cwd });
  return Promise.resolve({ transmitter: gatewayTransmitter(gateway), close: () => gateway.close() });
};

const USAGE = `parking-terminal queue status [--config FILE]
parking-terminal queue flush [--config FILE] [--gateway URL]
parking-terminal queue declined [--config FILE]
parking-terminal queue acknowledge TRANSACTION_ID... [--config FILE]
  status        offline queue: depth, total per currency, age of the oldest payment (s), limits, policy,
                payments not approved after forwarding (the numbers of the operator status bar)
  declined      the stored payments not collected in full after forwarding (declined, rejected, outcome
                unknown, or approved for less than their amount) that nobody has acknowledged: the list behind
                the status bar's count, with amount, masked card, state and reason (and, for an unknown
                outcome that timeout recovery has resolved since, its resolution: timeout-void, voided;
                not-voidable, it stands and was collected; not-at-gateway, the gateway never had it: not
                collected, and not forwarded again, its card data wiped when its outcome became unknown)
                status and declined open the journal read-only, safe while the terminal runs
  acknowledge   the operator has seen these (by transactionId): they leave the count; recorded in the audit
                log; exit 1 when one was not waiting for acknowledgement; an argument that cannot be a
                transactionId (empty, over 64 characters) is refused (BAD_ARGUMENTS, exit 2) and none is
                acknowledged
  flush         forward every stored payment now (in order, exactly once each); exit 1 when a payment was
                declined, approved for less than its amount or its outcome is unknown, or the gateway
                could not be used (gatewayUnreachable, with unreachableReason: GW_CONNECTION, GW_AUTH,
                PROCESSOR_UNAVAILABLE …; the payments not sent stay stored); refused (QUEUE_NO_JOURNAL,
                exit 2) where no journal exists
  --config FILE configuration (JSON or YAML); embedded defaults otherwise
  --gateway URL base URL of the gateway to forward to (default gateway.baseUrl; required with the embedded
                sandbox, which lives inside the running terminal — give the standalone sandbox's URL)`;

/** What the commands print of a stored payment not collected in full: no card data but the masked number. */
function declinedView(d: OfflineDeclineSummary): Record<string, unknown> {
  return {
    transactionId: d.transactionId,
    amountMinor: d.amount.minor,
    currency: d.amount.currency,
    ...(d.maskedPan !== undefined ? { maskedPan: d.maskedPan } : {}),
    state: d.state,
    ...(d.reason !== undefined ? { reason: d.reason } : {}),
    // An unknown outcome recovery has resolved since: voided (timeout-void), standing, collected (not-voidable), or
    // never at the gateway, not collected and not forwarded again (not-at-gateway).
    ...(d.resolution !== undefined ? { resolution: d.resolution } : {}),
  };
}

/** An argument that cannot be a transactionId is the operator's mistake (nothing was acknowledged): BAD_ARGUMENTS. */
function acknowledge<T>(run: () => T): T {
  try {
    return run();
  } catch (e) {
    if (e instanceof JournalError && e.code === 'JOURNAL_INVALID')
      throw new UsageError('BAD_ARGUMENTS', e.message);
    throw e;
  }
}

/** `parking-terminal queue status|flush|declined|acknowledge`, with the gateway connection injectable. */
export function createQueueCommand(deps: { connect?: ConnectForwarder; now?: () => Date } = {}): Command {
  const connect = deps.connect ?? connectGateway;
  return {
    name: 'queue',
    summary:
      'offline store-and-forward queue: status, flush it to the gateway now, payments not collected in full',
    usage: USAGE,
    async run(args, io) {
      const { values, positionals } = parseCommandArgs(args, {
        config: { type: 'string' },
        gateway: { type: 'string' },
      });
      const [action, ...extra] = positionals;
      const takesIds = action === 'acknowledge';
      if (
        (action !== 'status' && action !== 'flush' && action !== 'declined' && !takesIds) ||
        (takesIds ? extra.length === 0 : extra.length > 0)
      )
        throw new UsageError(
          'BAD_ARGUMENTS',
          'usage: queue status | queue flush | queue declined | queue acknowledge TRANSACTION_ID... (see queue --help)',
        );
      const config = loadConfig(values.config ? resolve(io.cwd, values.config) : undefined);
      const journalPath = resolve(io.cwd, config.journal.path);
      const now = deps.now ?? (() => new Date());
      if ((action === 'declined' || takesIds) && values.gateway !== undefined)
        throw new UsageError('BAD_ARGUMENTS', '--gateway applies to queue flush');

      if (action === 'declined') {
        // Reading must not create a journal where none exists, nor change one (read-only beside the terminal).
        if (!existsSync(journalPath)) {
          printJson(io, { declined: [] });
          return EXIT_OK;
        }
        const queue = openOfflineQueueReadOnly(journalPath, { now });
        try {
          printJson(io, {
            declined: queue
              .declinesToAcknowledge()
              .map((p) => declinedView(declineSummary(p, config.terminal.locale))),
          });
        } finally {
          queue.close();
        }
        return EXIT_OK;
      }

      if (takesIds) {
        if (!existsSync(journalPath))
          throw new UsageError('QUEUE_NO_JOURNAL', `no journal at ${journalPath}: nothing to acknowledge`);
        const journal = openJournal(journalPath, { now });
        try {
          const audit = new AuditStore(journal);
          const results = acknowledge(() =>
            acknowledgeOfflineDeclines(journal, extra, (r) => audit.append(r)),
          );
          printJson(io, {
            acknowledged: results,
            declinedAfterForward: offlineDeclinesToAcknowledge(journal).length,
          });
          return results.every((r) => r.acknowledged) ? EXIT_OK : EXIT_FINDINGS;
        } finally {
          journal.close();
        }
      }

      if (action === 'status') {
        if (values.gateway !== undefined)
          throw new UsageError('BAD_ARGUMENTS', '--gateway applies to queue flush');
        const settings = { policy: config.offline.policy, limits: config.offline };
        // Reading the status must not create a journal where none exists, nor change one (read-only beside the
        // terminal).
        if (!existsSync(journalPath)) {
          printJson(io, emptyOfflineStatus(settings));
          return EXIT_OK;
        }
        const queue = openOfflineQueueReadOnly(journalPath, { now });
        try {
          printJson(io, queue.status(settings));
        } finally {
          queue.close();
        }
        return EXIT_OK;
      }

      const baseUrl = commandGatewayUrl(config, values.gateway, 'QUEUE_NO_GATEWAY');
      // Opening would create an empty journal (and a key): a flush that reports nothing to forward while the payments
      // wait in the journal the configuration was meant to name.
      if (!existsSync(journalPath))
        throw new UsageError('QUEUE_NO_JOURNAL', `no journal at ${journalPath}: nothing to forward`);
      const logger = commandLogger(config);
      const keyProvider = fileKeyProvider(resolve(io.cwd, config.offline.keyFile));
      const journal = openJournal(journalPath, { now, logger });
      try {
        // One sender per journal: refused while the terminal runs (its operator mode flushes the queue instead).
        journal.acquireSenderLock('parking-terminal queue flush');
        // A key rotation a crash interrupted is finished or undone first, as at the terminal's start.
        settleConfiguredRotation(journal, config, io.cwd);
      } catch (e) {
        journal.close();
        throw e;
      }
      const connection = await connect(config, { baseUrl, logger, cwd: io.cwd }).catch((e: unknown) => {
        journal.close();
        throw e;
      });
      try {
        const queue = new OfflineQueue(journal, {
          policy: config.offline.policy,
          limits: config.offline,
          keyProvider,
          now,
          // The terminal's time since boot, as the terminal's own queue reads it; none with a clock of tests.
          ...(deps.now === undefined ? { bootClock: linuxBootClock } : {}),
          logger,
        });
        // What a forward's answer obliges is written with it, as by the terminal's own forwarding (a risk-declined
        // one's reversal, a follow-up the terminal carries out at its next start, before it takes a card).
        const followOns = journalFollowOnStore(
          new AuthorizationDataStore(journal, keyProvider.loadKey()),
          config.dcc.processorFamily,
        );
        const obligations: OutcomeObligations = {
          followUps: new FollowUpStore(journal),
          tags: { put: (tx, tags) => followOns.putTags(tx, tags), get: (tx) => followOns.tags(tx) },
          logger,
          now,
        };
        const report = await queue.forwardPending(
          new JournaledSender(journal, connection.transmitter, { logger }),
          {
            concurrency: config.offline.forwardConcurrency,
            signal: io.signal,
            onOutcome: (entry, request, outcome) => forwardedOutcome(obligations, entry, request, outcome),
          },
        );
        printJson(io, {
          forwarded: report.forwarded,
          approved: report.approved,
          declined: report.declined.map((p) => declinedView(declineSummary(p, config.terminal.locale))),
          // Timeout recovery of these runs in the terminal (at its next sweep or start), never here.
          unknown: report.unknown.length,
          gatewayUnreachable: report.gatewayUnreachable,
          // Why it stopped: no connection (GW_CONNECTION, GW_TIMEOUT), the credentials refused (GW_AUTH …), the
          // processor down a while (PROCESSOR_UNAVAILABLE): the network, the keys or the gateway's side to look at.
          ...(report.unreachableReason !== undefined ? { unreachableReason: report.unreachableReason } : {}),
          // Which host did not open before anything was claimed: the gateway, or the OAuth token host.
          ...(report.unreachableHost !== undefined ? { unreachableHost: report.unreachableHost } : {}),
          remaining: report.remaining,
          status: queue.status(),
        });
        const findings = report.declined.length > 0 || report.unknown.length > 0 || report.gatewayUnreachable;
        return findings ? EXIT_FINDINGS : EXIT_OK;
      } finally {
        await connection.close();
        journal.close();
      }
    },
  };
}

export default createQueueCommand();
