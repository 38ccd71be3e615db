/**
 * The offline queue of the terminal as a child process for the crash tests: stores payments taken offline (first
 * run), forwards them to a standalone sandbox through the gateway client, and SIGKILLs itself at `KILL_AT`:
 * `before-send#N` (the N-th forward marked sent, its bytes not yet out) or `answered#N` (the N-th answer received, not journaled).
 * `recover` runs what the terminal runs at start: timeout recovery, reconciliation, then forwarding again.
 *
 * Usage: node --import tsx test/crash/forward-driver.ts run|recover DIR SANDBOX_URL [KILL_AT]
 */
import { join } from 'node:path';
import { parseConfig } from '../../src/config/index.js';
import { createAuthenticator, createGatewayClient } from '../../src/gateway/index.js';
import { GatewayResolver } from '../../src/host/resolver.js';
import { SANDBOX_SHARED_SECRET } from '../../src/host/terminal-host.js';
import {
  fileKeyProvider,
  openJournal,
  OfflineQueue,
  TimeoutRecovery,
  type Forwarder,
} from '../../src/journal/index.js';
import { createLogger } from '../../src/log/index.js';
import { samplePayment } from '../../src/sandbox/sample-requests.js';

const FORWARD_PAYMENTS = 5;

const [mode, dir, url, killAt] = process.argv.slice(2);
if ((mode !== 'run' && mode !== 'recover') || !dir || !url) {
  process.stderr.write('usage: forward-driver.ts run|recover DIR SANDBOX_URL [KILL_AT]\n');
  process.exit(2);
}
const [killPoint, killNth] = (killAt ?? '').split('#');
let passages = 0;
function maybeDie(point: string): void {
  if (point !== killPoint) return;
  passages += 1;
  if (passages === Number(killNth ?? '1')) process.kill(process.pid, 'SIGKILL');
}

const config = parseConfig({
  journal: { timeoutReversalDelayMs: 200, resolutionRetryMs: 50 },
  // Each start logs to its own file through the redacting logger; the crash suite scans them for card data.
  log: { level: 'debug', file: `forwarder-${mode}-${process.pid}.log` },
});
const logger = createLogger({
  level: config.log.level,
  destination: join(dir, config.log.file ?? 'forwarder.log'),
});
const keyProvider = fileKeyProvider(join(dir, 'offline.key'));
const journal = openJournal(join(dir, 'journal.db'), {
  key: keyProvider.loadKey(),
  logger: logger.child({ component: 'journal' }),
});
const queue = new OfflineQueue(journal, {
  policy: 'prefer-online',
  limits: { maxTransactionMinor: 5_000, maxTotalMinorPerCurrency: 100_000, maxCount: 100, maxAgeHours: 24 },
  keyProvider,
  logger: logger.child({ component: 'offline' }),
});
const gateway = createGatewayClient({
  baseUrl: url,
  merchantId: config.gateway.merchantId,
  auth: createAuthenticator(config.gateway.auth, config.gateway.merchantId, {
    defaultSharedSecret: SANDBOX_SHARED_SECRET,
  }),
  timeouts: config.gateway.timeouts,
  logger: logger.child({ component: 'gateway' }),
});
const forwarder: Forwarder = {
  async forward(req) {
    maybeDie('before-send');
    const o = await gateway.send({ ...req, service: 'sale', method: 'POST' });
    maybeDie('answered');
    switch (o.kind) {
      case 'approved':
        return { kind: 'approved', gatewayId: o.gatewayId, status: o.status, httpStatus: o.httpStatus };
      case 'declined':
        return { kind: 'declined', status: o.status, httpStatus: o.httpStatus, reason: o.reason };
      case 'rejected':
        return { kind: 'rejected', httpStatus: o.httpStatus, reason: o.reason };
      case 'unknown':
        return o.error.outcomeUnknown
          ? { kind: 'unknown', error: { code: o.error.code } }
          : { kind: 'not-sent' };
    }
  },
};

try {
  if (mode === 'run') {
    for (let i = 0; i < FORWARD_PAYMENTS; i++) {
      const transactionId = `OFF${Date.now()}${i}`;
      queue.store({
        transactionId,
        service: 'sale',
        comments: 'Parking Sale',
        method: 'POST',
        path: '/pts/v2/payments',
        body: Buffer.from(
          JSON.stringify(samplePayment({ amountMinor: 1_000, currency: 'GBP', transactionId, sale: true })),
        ),
        amountMinor: 1_000,
        currency: 'GBP',
        entryMode: 'contactless',
      });
    }
  } else {
    const recovery = new TimeoutRecovery(journal, new GatewayResolver(gateway, config, () => new Date()), {
      timeoutReversalDelayMs: config.journal.timeoutReversalDelayMs,
      retryMs: config.journal.resolutionRetryMs,
      logger: logger.child({ component: 'recovery' }),
    });
    await recovery.recoverAll();
    queue.reconcile();
  }
  const report = await queue.forwardPending(forwarder, { concurrency: 1 });
  const recovery = new TimeoutRecovery(journal, new GatewayResolver(gateway, config, () => new Date()), {
    timeoutReversalDelayMs: config.journal.timeoutReversalDelayMs,
    retryMs: config.journal.resolutionRetryMs,
    logger: logger.child({ component: 'recovery' }),
  });
  for (const id of report.unknown) await recovery.recover(id);
  queue.reconcile();
  process.stdout.write(`${JSON.stringify({ ...report, declined: report.declined.length })}\n`);
} finally {
  await gateway.close();
  journal.close();
  await new Promise<void>((done) => logger.flush(() => done()));
}
