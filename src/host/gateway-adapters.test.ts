import { createServer, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createGatewayClient,
  GatewayOAuthError,
  httpSignatureAuthenticator,
  OAuthTokenManager,
  oauthAuthenticator,
  type OAuthTokens,
} from '../gateway/index.js';
import { staticKeyProvider } from '../journal/encryption.js';
import { JournaledSender, OfflineQueue, openJournal } from '../journal/index.js';
import { silentLogger } from '../log/index.js';
import { startSandbox } from '../sandbox/index.js';
import { samplePayment } from '../sandbox/sample-requests.js';
import { GatewayError } from '../gateway/errors.js';
import {
  gatewayProblemOf,
  gatewayTransmitter,
  SANDBOX_SHARED_SECRET,
  toSendOutcome,
} from './gateway-adapters.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** An offline queue on `journal` holding a 6.00 GBP chip sale for each of `transactionIds`. */
function queueHolding(journal: ReturnType<typeof openJournal>, transactionIds: string[]): OfflineQueue {
  const queue = new OfflineQueue(journal, {
    policy: 'prefer-online',
    limits: {
      maxTransactionMinor: 5_000,
      maxTotalMinorPerCurrency: 1e6,
      maxCount: 100,
      maxAgeHours: 24,
      maxCountPerCard: 2,
    },
    keyProvider: staticKeyProvider(Buffer.alloc(32, 7)),
  });
  for (const transactionId of transactionIds) {
    const body = samplePayment({ amountMinor: 600, currency: 'GBP', transactionId, sale: true });
    queue.store({
      transactionId,
      service: 'sale',
      comments: 'Parking Sale',
      method: 'POST',
      path: '/pts/v2/payments',
      body: Buffer.from(JSON.stringify(body)),
      amountMinor: 600,
      currency: 'GBP',
      entryMode: 'contact',
      fingerprint: `card-${transactionId}`,
    });
  }
  return queue;
}

/** The URL of a port on 127.0.0.1 that refuses connections: one a server listened on, closed again. */
async function refusingUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

describe('the journal transmitter over the gateway client', () => {
  it('leaves payments stored offline in the queue when the gateway refuses the credentials (401)', async () => {
    const sandbox = await startSandbox({ port: 0, logger: silentLogger() });
    cleanups.push(() => sandbox.close());
    const client = (secret: string) => {
      const gateway = createGatewayClient({
        baseUrl: sandbox.url,
        merchantId: 'testrest',
        auth: httpSignatureAuthenticator('testrest', '08c94330-f618-42a3-b09d-e1e43be5efda', secret),
        timeouts: { connectMs: 2_000, headersMs: 5_000, bodyMs: 5_000 },
        logger: silentLogger(),
      });
      cleanups.push(() => gateway.close());
      return gateway;
    };
    const journal = openJournal(':memory:');
    cleanups.push(() => journal.close());
    const queue = queueHolding(journal, ['OFF-1', 'OFF-2']);
    // Rotated credentials: the gateway answers 401 and processes nothing.
    const wrong = Buffer.alloc(32, 9).toString('base64');
    const refused = await queue.forwardPending(
      new JournaledSender(journal, gatewayTransmitter(client(wrong))),
    );
    expect(refused.forwarded).toBe(0);
    expect(queue.status()).toMatchObject({ depth: 2, declinedAfterForward: 0 });
    // Mended: both go, each once, under its own transactionId.
    const sender = new JournaledSender(journal, gatewayTransmitter(client(SANDBOX_SHARED_SECRET)));
    expect(await queue.forwardPending(sender)).toMatchObject({ forwarded: 2, approved: 2 });
    expect(queue.status()).toMatchObject({ depth: 0 });
  });

  it('leaves payments stored offline in the queue when no access token can be had (token endpoint 500, grant withdrawn)', async () => {
    const sandbox = await startSandbox({ port: 0, logger: silentLogger() });
    cleanups.push(() => sandbox.close());
    const journal = openJournal(':memory:');
    cleanups.push(() => journal.close());
    const queue = queueHolding(journal, ['OFF-T']);
    // The token endpoint's own failures: the payment request itself never left, whatever status the token request got.
    const failures = [
      new GatewayOAuthError(
        'GW_OAUTH_TOKEN',
        'token endpoint answered HTTP 500 server_error',
        'server_error',
        {
          httpStatus: 500,
        },
      ),
      new GatewayOAuthError('GW_OAUTH_REAUTHORIZE', 'the grant was withdrawn', 'access_denied', {
        httpStatus: 500,
      }),
    ];
    for (const failure of failures) {
      const gateway = createGatewayClient({
        baseUrl: sandbox.url,
        merchantId: 'testrest',
        auth: oauthAuthenticator({
          accessToken: () => Promise.reject(failure),
          renewAfterUnauthorized: () => Promise.resolve(false),
        }),
        timeouts: { connectMs: 2_000, headersMs: 5_000, bodyMs: 5_000 },
        logger: silentLogger(),
        retry: { maxAttempts: 1, initialDelayMs: 0, maxDelayMs: 0 },
      });
      cleanups.push(() => gateway.close());
      const report = await queue.forwardPending(new JournaledSender(journal, gatewayTransmitter(gateway)));
      expect(report.forwarded).toBe(0);
      expect(queue.status()).toMatchObject({ depth: 1, declinedAfterForward: 0 });
    }
  });

  it('claims no stored payment while the OAuth token host cannot be reached and the access token must be fetched from it', async () => {
    const sandbox = await startSandbox({ port: 0, logger: silentLogger() });
    cleanups.push(() => sandbox.close());
    const tokenUrl = await refusingUrl();
    const now = Date.now();
    // A grant whose access token has expired: the next request needs the token host first.
    let stored: OAuthTokens | undefined = {
      accessToken: 'A1',
      accessTokenExpiresAt: now - 1_000,
      refreshToken: 'R1',
      refreshTokenExpiresAt: now + 365 * 86_400_000,
    };
    const tokens = new OAuthTokenManager({
      tokenUrl,
      clientId: 'c',
      clientSecret: 's',
      store: { load: () => stored, save: (t) => (stored = t), clear: () => (stored = undefined) },
      timeouts: { connectMs: 2_000, headersMs: 5_000, bodyMs: 5_000 },
      retry: { maxAttempts: 1, initialDelayMs: 0, maxDelayMs: 0 },
    });
    cleanups.push(() => tokens.close());
    // The gateway itself answers: only the token host is down.
    const gateway = createGatewayClient({
      baseUrl: sandbox.url,
      merchantId: 'testrest',
      auth: oauthAuthenticator(tokens),
      timeouts: { connectMs: 2_000, headersMs: 5_000, bodyMs: 5_000 },
      logger: silentLogger(),
    });
    cleanups.push(() => gateway.close());
    const journal = openJournal(':memory:');
    cleanups.push(() => journal.close());
    const queue = queueHolding(journal, ['OFF-O']);
    const report = await queue.forwardPending(new JournaledSender(journal, gatewayTransmitter(gateway)));
    expect(report).toMatchObject({
      forwarded: 0,
      gatewayUnreachable: true,
      unreachableReason: 'GW_CONNECTION',
      unreachableHost: `OAuth token host ${new URL(tokenUrl).host}`,
      remaining: 1,
    });
    // Never claimed: no journal entry marked sent that a power cut during the token fetch would leave for a void.
    expect(journal.findByTransactionId('OFF-O')).toBeUndefined();
    expect(queue.status()).toMatchObject({ depth: 1, declinedAfterForward: 0 });
  });

  it('names credentials the gateway refused, or a grant the merchant must renew, apart from a gateway it cannot reach', () => {
    expect(gatewayProblemOf('GW_AUTH')).toBe('credentials');
    expect(gatewayProblemOf('GW_OAUTH_REAUTHORIZE')).toBe('credentials');
    expect(gatewayProblemOf('GW_OAUTH_DENIED')).toBe('credentials');
    expect(gatewayProblemOf('GW_CONNECTION')).toBe('unreachable');
    expect(gatewayProblemOf('GW_OAUTH_TOKEN')).toBe('unreachable');
  });

  it('names a processor that is down (400 PROCESSOR_UNAVAILABLE) apart from a gateway it cannot reach: it answers', () => {
    expect(gatewayProblemOf('PROCESSOR_UNAVAILABLE')).toBe('processor');
    expect(gatewayProblemOf(undefined)).toBe('unreachable');
  });

  it("takes a 401 the terminal's wrong clock explains (GW_AUTH_CLOCK) as refused credentials: nothing was processed", () => {
    expect(gatewayProblemOf('GW_AUTH_CLOCK')).toBe('credentials');
    const error = new GatewayError('GW_AUTH_CLOCK', 'clock', { httpStatus: 401 });
    expect(toSendOutcome({ kind: 'unknown', error, httpStatus: 401 })).toMatchObject({ kind: 'not-sent' });
  });
});
