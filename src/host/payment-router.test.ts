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
import type { FeeShortfall } from './audit-trail.js';
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

/**
 * The router as TerminalHost wires it, over a journal in a new directory; every request goes out and is never answered,
 * or is answered `answer` when given.
 */
function routerHost(answer?: (request: OutgoingRequest) => TransmitOutcome) {
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
      if (answer !== undefined) return Promise.resolve(answer(request));
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
  const shortfalls: FeeShortfall[] = [];
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
    feeShortfall: (f) => shortfalls.push(f),
  });
  /** Resolves once a request is out. */
  const sentOne = () => new Promise<void>((resolve) => (sent.length > 0 ? resolve() : out.push(resolve)));
  return { router: paymentRouter, journal, followUps, sent, sentOne, shortfalls };
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

describe("payment router: a meter session's capture of its fee (capturesFee)", () => {
  /** The capture of a session's one hold: 4.50 of the 12.00 held, its fee for good. */
  const fee: ServiceRequest = {
    service: 'capture',
    comments: 'Parking Capture Less Than Auth',
    amountMinor: 450,
    currency,
    catLevel: 2,
    includeEmvTags: false,
    original: hold(1),
    capturesFee: true,
  };

  for (const [how, outcome] of [
    [
      'refused for now (PROCESSOR_UNAVAILABLE)',
      { kind: 'rejected', httpStatus: 400, reason: 'PROCESSOR_UNAVAILABLE' },
    ],
    ['never sent (the gateway unreachable)', { kind: 'not-sent', reason: 'GW_CONNECTION' }],
  ] as const) {
    it(`keeps a durable capture of it when the capture is ${how}, written with the outcome`, async () => {
      const { router, followUps, shortfalls } = routerHost(() => outcome);
      const answer = await router.submit(fee);
      expect(answer.kind).toBe('rejected');
      expect(
        followUps
          .open()
          .map((f) => [f.kind, f.authorizationTransactionId, f.gatewayId, f.amountMinor, f.includeEmvTags]),
      ).toEqual([['capture-authorization', 'tx-auth-1', 'G-AUTH-1', 450, false]]);
      // Due soon (the host's retry wait), not at the end of some grace: the hold is kept for it.
      expect(followUps.open()[0]?.dueAtMs).toBeLessThanOrEqual(Date.now() + config.journal.resolutionRetryMs);
      expect(shortfalls).toEqual([]);
    });
  }

  it('records a capture refused for good as a fee not collected for the operator, and keeps no capture of it', async () => {
    const { router, followUps, shortfalls, journal } = routerHost(() => ({
      kind: 'rejected',
      httpStatus: 400,
      reason: 'EXCEEDS_AUTH_AMOUNT',
    }));
    // The capture of this hold that the session's step before wrote (`alsoCaptures`): over with this refusal.
    const earlier = followUps.add({
      kind: 'capture-authorization',
      authorizationTransactionId: 'tx-auth-1',
      gatewayId: 'G-AUTH-1',
      amountMinor: 450,
      currency,
      includeEmvTags: false,
      reason: 'captured by its meter session after its capture',
      dueAtMs: Date.now() + 3_600_000,
    });
    await router.submit(fee);
    expect(followUps.open()).toEqual([]);
    expect(followUps.get(earlier.id)).toMatchObject({ outcome: 'capture-failed' });
    const capture = journal.list({ limit: 10 }).find((e) => e.service === 'capture');
    expect(shortfalls).toEqual([
      {
        captureTransactionId: capture?.transactionId,
        authorizationTransactionId: 'tx-auth-1',
        owedMinor: 450,
        capturedMinor: 0,
        currency,
        reason: 'CAPTURE_NOT_STANDING',
      },
    ]);
  });
});
