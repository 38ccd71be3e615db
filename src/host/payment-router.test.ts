import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../config/index.js';
import type { ServiceRequest } from '../flows/index.js';
import { createAuthenticator, createGatewayClient } from '../gateway/index.js';
import {
  AuthorizationDataStore,
  FollowUpStore,
  HoldStore,
  JournaledSender,
  OfflineQueue,
  openJournal,
  staticKeyProvider,
  TimeoutRecovery,
  type OutgoingRequest,
  type TransmitOutcome,
} from '../journal/index.js';
import { silentLogger } from '../log/index.js';
import { CardStore } from './card-store.js';
import { journalFollowOnStore } from './follow-on-store.js';
import { SANDBOX_SHARED_SECRET } from './gateway-adapters.js';
import { PaymentRouter } from './payment-router.js';
import { PaymentService } from './payments.js';
import { GatewayResolutionBuilder } from './resolver.js';

/**
 * The payment router's obligations of a meter session's settlement step (`alsoReleases`, `alsoCaptures`), over the real
 * journal, sender and payment service; only the network is faked. The process dies while the step is out: what the
 * journal committed before the step could reach the gateway is all that survives, and the next start runs the open
 * follow-ups.
 */

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const config = parseConfig({});
const currency = config.terminal.currency;

/** The router as TerminalHost wires it, over a journal in a new directory; every request goes out and is never answered. */
function routerHost() {
  const dir = mkdtempSync(join(tmpdir(), 'pt-router-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const journal = openJournal(join(dir, 'journal.db'));
  const sent: OutgoingRequest[] = [];
  const out: (() => void)[] = [];
  // The process dies while the request is out: no answer, and nothing journaled after its send.
  const transmitter = {
    transmit(request: OutgoingRequest): Promise<TransmitOutcome> {
      sent.push(request);
      for (const f of out.splice(0)) f();
      return new Promise<TransmitOutcome>(() => undefined);
    },
  };
  const logger = silentLogger();
  const now = () => new Date();
  const gateway = createGatewayClient({
    baseUrl: 'http://127.0.0.1:9',
    merchantId: config.gateway.merchantId,
    auth: createAuthenticator(config.gateway.auth, config.gateway.merchantId, {
      defaultSharedSecret: SANDBOX_SHARED_SECRET,
    }),
    timeouts: config.gateway.timeouts,
    logger,
  });
  cleanups.push(() => gateway.close());
  const cards = new CardStore(Buffer.alloc(32, 7));
  const sender = new JournaledSender(journal, transmitter);
  const payments = new PaymentService({
    config,
    gateway,
    sender,
    journal,
    cards,
    logger,
    now,
    followOns: journalFollowOnStore(new AuthorizationDataStore(journal, Buffer.alloc(32, 5)), 'A'),
    health: { gatewayAnswered: () => undefined, gatewayUnreachable: () => undefined },
  });
  const followUps = new FollowUpStore(journal);
  const paymentRouter = new PaymentRouter({
    config,
    journal,
    payments,
    recovery: new TimeoutRecovery(journal, new GatewayResolutionBuilder(gateway, config, now), sender, {
      timeoutReversalDelayMs: config.journal.timeoutReversalDelayMs,
      retryMs: 10,
    }),
    offline: new OfflineQueue(journal, {
      policy: config.offline.policy,
      limits: config.offline,
      keyProvider: staticKeyProvider(Buffer.alloc(32, 3)),
      now,
      logger,
    }),
    followUps,
    holds: new HoldStore(journal),
    cards,
    logger,
    now,
    authorizationReversed: () => undefined,
    reversalRefusedUnwaited: () => undefined,
    changed: () => undefined,
  });
  /** Resolves once a request is out. */
  const sentOne = () => new Promise<void>((resolve) => (sent.length > 0 ? resolve() : out.push(resolve)));
  return { router: paymentRouter, journal, followUps, sent, sentOne };
}

const hold = (n: number) => ({
  gatewayId: `G-AUTH-${n}`,
  transactionId: `tx-auth-${n}`,
  service: 'preauth' as const,
});

/** The capture of the first of three holds (1.50 of 3.00): the second is captured next (1.00), the third released. */
const capture: ServiceRequest = {
  service: 'capture',
  comments: 'Parking Capture',
  amountMinor: 300,
  currency,
  catLevel: 2,
  includeEmvTags: false,
  original: hold(1),
  alsoCaptures: [{ original: hold(2), amountMinor: 100, includeEmvTags: false }],
  alsoReleases: [{ original: hold(3), amountMinor: 150 }],
};

describe('payment router: a meter settlement step names the holds settled after it', () => {
  it('writes their capture and release before the step can reach the gateway: a death while it is out keeps them', async () => {
    const { router, journal, followUps, sent, sentOne } = routerHost();
    void router.submit(capture);
    await sentOne();
    expect(sent.map((r) => r.service)).toEqual(['capture']);
    // The process dies here: the capture journaled and out, its outcome never written.
    expect(journal.list({ limit: 10 }).map((e) => [e.service, e.state])).toEqual([['capture', 'pending']]);
    expect(
      followUps
        .open()
        .map((f) => [f.kind, f.authorizationTransactionId, f.gatewayId, f.amountMinor, f.currency])
        .sort(),
    ).toEqual([
      ['capture-authorization', 'tx-auth-2', 'G-AUTH-2', 100, currency],
      ['reverse-authorization', 'tx-auth-3', 'G-AUTH-3', 150, currency],
    ]);
  });
});
