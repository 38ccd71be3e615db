import { createHash, createHmac } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { MockAgent, type Dispatcher } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  httpSignatureAuthenticator,
  jwtAuthenticator,
  oauthAuthenticator,
  type Authenticator,
} from './auth/authenticator.js';
import { hmacKey } from './auth/jwt.js';
import { OAuthTokenManager } from './auth/oauth.js';
import { createGatewayClient, type GatewayClient } from './client.js';
import type { ServiceRequest } from './services/types.js';

const ORIGIN = 'https://gateway.test';
const SECRET = 'yBJxy6LjM2TmcPGu+GaJrHtkke25fPpUX+UY6/L/1tE=';
const KEY_ID = '08c94330-f618-42a3-b09d-e1e43be5efda';
const partner = {
  developerId: '12345678',
  solutionId: 'PARKTERM',
  thirdPartyCertificationNumber: 'PT0000000001',
};
const preauth: ServiceRequest = {
  service: 'preauth',
  code: 'ORDER-1',
  partner,
  amountMinor: 1250,
  currency: 'GBP',
  transactionLocalDateTime: '20260101120000',
  pos: {
    cardType: '001',
    entryMode: 'swiped',
    terminalCapability: 2,
    terminalPinCapability: 0,
    catLevel: 2,
    terminalId: 'PT000001',
    trackData: ';4111111111111111=30121011234567890?',
  },
};

type Headers = Record<string, string>;
function headersOf(h: unknown): Headers {
  const out: Headers = {};
  if (Array.isArray(h))
    for (let i = 0; i < h.length; i += 2) out[String(h[i]).toLowerCase()] = String(h[i + 1]);
  else if (h && typeof h === 'object')
    for (const [k, v] of Object.entries(h)) out[k.toLowerCase()] = String(v);
  return out;
}

/** Verifies a received request the way a server does: rebuild the string from the header list, compare the MAC. */
function verifies(method: string, path: string, headers: Headers, body: string): boolean {
  const m = /headers="([^"]+)", signature="([^"]+)"/.exec(headers.signature ?? '');
  if (!m) return false;
  if (
    headers.digest !== undefined &&
    headers.digest !== `SHA-256=${createHash('sha256').update(body).digest('base64')}`
  )
    return false;
  const lines = m[1]!
    .split(' ')
    .map((name) =>
      name === 'request-target'
        ? `request-target: ${method.toLowerCase()} ${path}`
        : `${name}: ${headers[name] ?? ''}`,
    );
  const mac = createHmac('sha256', Buffer.from(SECRET, 'base64')).update(lines.join('\n')).digest('base64');
  return mac === m[2];
}

const bodyText = (b: unknown): string =>
  typeof b === 'string' ? b : Buffer.isBuffer(b) ? b.toString('utf8') : '';

let agent: MockAgent;
let client: GatewayClient;
let clockReads: number;

function makeClient(o: { auth?: Authenticator; now?: () => Date; headersMs?: number } = {}): GatewayClient {
  return createGatewayClient({
    baseUrl: ORIGIN,
    merchantId: 'testrest',
    auth: o.auth ?? httpSignatureAuthenticator('testrest', KEY_ID, SECRET),
    timeouts: { connectMs: 1000, headersMs: o.headersMs ?? 2000, bodyMs: 2000 },
    retry: { maxAttempts: 3, initialDelayMs: 1, maxDelayMs: 2 },
    dispatcher: agent,
    ...(o.now ? { now: o.now } : {}),
  });
}

beforeEach(() => {
  agent = new MockAgent();
  agent.disableNetConnect();
  clockReads = 0;
  client = makeClient();
});
afterEach(async () => {
  await client.close();
  await agent.close();
});

const approved = {
  id: '7000000000000000000001',
  status: 'AUTHORIZED',
  orderInformation: { amountDetails: { authorizedAmount: '12.50', currency: 'GBP' } },
  futureField: { ignored: true },
};

describe('GatewayClient.send', () => {
  it('signs with one clock read, so a request signed across a second boundary still verifies', async () => {
    // The first read is 999 ms into a second, every later read is in the next second: a client reading twice
    // would sign one date and send another.
    const times = [Date.UTC(2026, 0, 1, 12, 0, 0, 999), Date.UTC(2026, 0, 1, 12, 0, 1, 0)];
    client = makeClient({
      now: () => new Date(times[Math.min(clockReads++, 1)]!),
    });
    let seen: { headers: Headers; body: string } | undefined;
    agent
      .get(ORIGIN)
      .intercept({ path: '/pts/v2/payments', method: 'POST' })
      .reply((opts) => {
        seen = { headers: headersOf(opts.headers), body: bodyText(opts.body) };
        return { statusCode: 201, data: approved };
      });
    const prepared = client.prepare(preauth);
    const outcome = await client.send(prepared);
    expect(outcome.kind).toBe('approved');
    expect(clockReads).toBe(1);
    expect(seen!.headers.date).toBe('Thu, 01 Jan 2026 12:00:00 GMT');
    expect(seen!.body).toBe(prepared.body.toString('utf8'));
    expect(seen!.headers.host).toBe('gateway.test');
    expect(seen!.headers['v-c-merchant-id']).toBe('testrest');
    expect(seen!.headers['v-c-client-correlation-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(verifies('POST', '/pts/v2/payments', seen!.headers, seen!.body)).toBe(true);
  });

  it('sends the same bytes for a given request: body, header order and signature as recorded', async () => {
    // Recorded from the client before the send path was optimised: any change of the body bytes, the signed string,
    // the HMAC or the headers sent (names, values, order) fails here.
    client = createGatewayClient({
      baseUrl: ORIGIN,
      merchantId: 'testrest',
      auth: httpSignatureAuthenticator('testrest', KEY_ID, SECRET),
      timeouts: { connectMs: 1000, headersMs: 2000, bodyMs: 2000 },
      dispatcher: agent,
      now: () => new Date(Date.UTC(2026, 0, 1, 12, 0, 0, 999)),
      builder: { newTransactionId: () => 'T01KDWX0000000000000000000' },
    });
    let seen: { headers: unknown; body: string } | undefined;
    agent
      .get(ORIGIN)
      .intercept({ path: '/pts/v2/payments', method: 'POST' })
      .reply((opts) => {
        seen = { headers: opts.headers, body: bodyText(opts.body) };
        return { statusCode: 201, data: approved };
      });
    const prepared = client.prepare(preauth);
    await client.send(prepared);
    const body =
      '{"clientReferenceInformation":{"code":"ORDER-1","comments":"Parking Auth","transactionId":' +
      '"T01KDWX0000000000000000000","partner":{"developerId":"12345678","solutionId":"PARKTERM",' +
      '"thirdPartyCertificationNumber":"PT0000000001"}},"processingInformation":{"commerceIndicator":"retail",' +
      '"authorizationOptions":{"authIndicator":"0"}},"paymentInformation":{"card":{"type":"001"}},' +
      '"orderInformation":{"amountDetails":{"totalAmount":"12.50","currency":"GBP"}},"pointOfSaleInformation":' +
      '{"entryMode":"swiped","terminalCapability":2,"terminalPinCapability":0,"catLevel":2,"terminalId":"PT000001",' +
      '"trackData":";4111111111111111=30121011234567890?"},"merchantInformation":{"transactionLocalDateTime":' +
      '"20260101120000"}}';
    expect(prepared.body.toString('utf8')).toBe(body);
    expect(seen!.body).toBe(body);
    const headers = Object.entries(seen!.headers as Record<string, string>);
    expect(headers.map(([name]) => name)).toEqual([
      'host',
      'date',
      'digest',
      'v-c-merchant-id',
      'signature',
      'accept',
      'v-c-client-correlation-id',
      'content-type',
    ]);
    expect(Object.fromEntries(headers.filter(([name]) => name !== 'v-c-client-correlation-id'))).toEqual({
      host: 'gateway.test',
      date: 'Thu, 01 Jan 2026 12:00:00 GMT',
      digest: 'SHA-256=KGjasdegqI7VTm2igZgo1bbAk0RPiJ0x0uKLm3WXY7A=',
      'v-c-merchant-id': 'testrest',
      signature:
        'keyid="08c94330-f618-42a3-b09d-e1e43be5efda", algorithm="HmacSHA256", headers="host date request-target ' +
        'digest v-c-merchant-id", signature="UVeqr7v/nfV1OJcrS1pi2veTJW6Hs6R8DqsLo/GSQuA="',
      accept: 'application/hal+json;charset=utf-8, application/json',
      'content-type': 'application/json;charset=utf-8',
    });
  });

  it.each([
    ['equal to', 300],
    ['shorter than', 2000],
  ])(
    'turns an answer body that stalls into unknown (GW_TIMEOUT, body), with its deadline %s the headers one',
    async (_, headersMs) => {
      const server = createServer((socket) => {
        socket.once('data', () => {
          // The headers at once, then half the body, and nothing more.
          socket.write(
            'HTTP/1.1 201 Created\r\ncontent-type: application/json\r\ncontent-length: 40\r\n\r\n{"id"',
          );
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      const real = createGatewayClient({
        baseUrl: `http://127.0.0.1:${port}`,
        merchantId: 'testrest',
        auth: httpSignatureAuthenticator('testrest', KEY_ID, SECRET),
        timeouts: { connectMs: 1000, headersMs, bodyMs: 300 },
      });
      try {
        const outcome = await real.send(real.prepare(preauth));
        expect(outcome).toMatchObject({
          kind: 'unknown',
          error: { code: 'GW_TIMEOUT', phase: 'body', outcomeUnknown: true },
        });
      } finally {
        await real.close();
        server.close();
      }
    },
  );

  it('classifies an authorization as approved with its authorized amount', async () => {
    agent.get(ORIGIN).intercept({ path: '/pts/v2/payments', method: 'POST' }).reply(201, approved);
    const outcome = await client.send(client.prepare(preauth));
    expect(outcome).toMatchObject({
      kind: 'approved',
      gatewayId: approved.id,
      authorizedMinor: 1250,
      partial: false,
      httpStatus: 201,
    });
  });

  it("reads the issuer's approval code for the receipt, and leaves it out when the answer has none", async () => {
    agent
      .get(ORIGIN)
      .intercept({ path: '/pts/v2/payments', method: 'POST' })
      .reply(201, { ...approved, processorInformation: { responseCode: '00', approvalCode: '831000' } });
    expect(await client.send(client.prepare(preauth))).toMatchObject({
      kind: 'approved',
      approvalCode: '831000',
    });
    agent
      .get(ORIGIN)
      .intercept({ path: '/pts/v2/payments', method: 'POST' })
      .reply(201, { ...approved, processorInformation: { responseCode: '00' } });
    expect(await client.send(client.prepare(preauth))).not.toHaveProperty('approvalCode');
  });

  it('marks a partial approval and reads amounts given as numbers', async () => {
    agent
      .get(ORIGIN)
      .intercept({ path: '/pts/v2/payments', method: 'POST' })
      .reply(201, {
        id: 'A1',
        status: 'PARTIAL_AUTHORIZED',
        orderInformation: { amountDetails: { authorizedAmount: 10, currency: 'GBP' } },
      });
    expect(await client.send(client.prepare(preauth))).toMatchObject({
      kind: 'approved',
      authorizedMinor: 1000,
      partial: true,
    });
  });

  it('classifies a 201 DECLINED as a decline with its reason', async () => {
    agent
      .get(ORIGIN)
      .intercept({ path: '/pts/v2/payments', method: 'POST' })
      .reply(201, {
        id: 'D1',
        status: 'DECLINED',
        errorInformation: { reason: 'EXPIRED_CARD', message: 'Expired card' },
      });
    expect(await client.send(client.prepare(preauth))).toMatchObject({
      kind: 'declined',
      gatewayId: 'D1',
      status: 'DECLINED',
      reason: 'EXPIRED_CARD',
      message: 'Expired card',
    });
  });

  it('classifies a 400 as rejected with field details, sent once', async () => {
    let calls = 0;
    agent
      .get(ORIGIN)
      .intercept({ path: '/pts/v2/payments', method: 'POST' })
      .reply(() => {
        calls++;
        return {
          statusCode: 400,
          data: {
            status: 'INVALID_REQUEST',
            reason: 'MISSING_FIELD',
            details: [{ field: 'orderInformation.amountDetails.currency', reason: 'MISSING_FIELD' }],
          },
        };
      })
      .persist();
    expect(await client.send(client.prepare(preauth))).toMatchObject({
      kind: 'rejected',
      reason: 'MISSING_FIELD',
      details: [{ field: 'orderInformation.amountDetails.currency', reason: 'MISSING_FIELD' }],
    });
    expect(calls).toBe(1);
  });

  it('turns a delayed answer into unknown (GW_TIMEOUT, outcome unknown) and never retries it', async () => {
    client = makeClient({ headersMs: 100 });
    let calls = 0;
    agent
      .get(ORIGIN)
      .intercept({ path: '/pts/v2/payments', method: 'POST' })
      .reply(() => {
        calls++;
        return { statusCode: 201, data: approved };
      })
      .delay(400)
      .persist();
    const outcome = await client.send(client.prepare(preauth));
    expect(outcome.kind).toBe('unknown');
    if (outcome.kind !== 'unknown') return;
    expect(outcome.error.code).toBe('GW_TIMEOUT');
    expect(outcome.error.outcomeUnknown).toBe(true);
    await new Promise((r) => setTimeout(r, 450));
    expect(calls).toBe(1);
  });

  it.each([
    [502, { status: 'SERVER_ERROR', reason: 'SERVER_TIMEOUT' }, 'GW_SERVER'],
    [500, 'oops', 'GW_SERVER'],
    [202, { status: 'AUTHORIZED', id: 'x' }, 'GW_UNDOCUMENTED'],
  ])(
    'turns HTTP %i into unknown (%s) without retrying a money-moving request',
    async (status, body, code) => {
      let calls = 0;
      agent
        .get(ORIGIN)
        .intercept({ path: '/pts/v2/payments', method: 'POST' })
        .reply(() => {
          calls++;
          return { statusCode: status, data: typeof body === 'string' ? body : JSON.stringify(body) };
        })
        .persist();
      const outcome = await client.send(client.prepare(preauth));
      expect(outcome).toMatchObject({
        kind: 'unknown',
        httpStatus: status,
        error: { code, outcomeUnknown: true },
      });
      expect(calls).toBe(1);
    },
  );

  it('turns an unreadable 201 body and an undocumented status value into unknown', async () => {
    agent
      .get(ORIGIN)
      .intercept({ path: '/pts/v2/payments', method: 'POST' })
      .reply(201, '{"id": "A1", "stat');
    expect(await client.send(client.prepare(preauth))).toMatchObject({
      kind: 'unknown',
      error: { code: 'GW_PARSE', outcomeUnknown: true },
    });
    agent
      .get(ORIGIN)
      .intercept({ path: '/pts/v2/payments', method: 'POST' })
      .reply(201, { id: 'A1', status: 'SOMETHING_NEW' });
    expect(await client.send(client.prepare(preauth))).toMatchObject({
      kind: 'unknown',
      error: { code: 'GW_UNDOCUMENTED' },
    });
  });

  it('turns a connection error into unknown with outcomeUnknown (the request may have been written)', async () => {
    agent
      .get(ORIGIN)
      .intercept({ path: '/pts/v2/payments', method: 'POST' })
      .replyWithError(Object.assign(new Error('reset'), { code: 'ECONNRESET' }));
    expect(await client.send(client.prepare(preauth))).toMatchObject({
      kind: 'unknown',
      error: { code: 'GW_CONNECTION', outcomeUnknown: true },
    });
  });

  it('reports a refused connection as not sent', async () => {
    agent
      .get(ORIGIN)
      .intercept({ path: '/pts/v2/payments', method: 'POST' })
      .replyWithError(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }));
    expect(await client.send(client.prepare(preauth))).toMatchObject({
      kind: 'unknown',
      error: { code: 'GW_CONNECTION', outcomeUnknown: false },
    });
  });

  /**
   * A dispatcher that fails with `code`: before the request reached a socket (`stage` connect), once it was started
   * on one (written), or after a 201's status line and part of its body arrived.
   */
  function failing(code: string, stage: 'connect' | 'written' | 'answering'): Dispatcher {
    return {
      dispatch(_options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler) {
        const controller = {
          abort: () => undefined,
          pause: () => undefined,
          resume: () => undefined,
        } as unknown as Dispatcher.DispatchController;
        setImmediate(() => {
          if (stage !== 'connect') handler.onRequestStart?.(controller, {});
          if (stage === 'answering') {
            handler.onResponseStart?.(controller, 201, { 'content-type': 'application/json' }, 'Created');
            handler.onResponseData?.(
              controller,
              Buffer.from('{"id":"7000000000000000000001","status":"AUTH'),
            );
          }
          handler.onResponseError?.(controller, Object.assign(new Error(`read ${code}`), { code }));
        });
        return true;
      },
      close: () => Promise.resolve(),
      destroy: () => Promise.resolve(),
    } as unknown as Dispatcher;
  }

  it.each([
    ['EHOSTUNREACH', 'connect', false],
    ['ENETUNREACH', 'connect', false],
    ['EHOSTUNREACH', 'written', true],
    ['ENETUNREACH', 'written', true],
    ['EHOSTUNREACH', 'answering', true],
    ['ECONNREFUSED', 'answering', true],
  ] as const)(
    'an unreachable route (%s) says "not sent" only before the request reached a socket (%s)',
    async (code, stage, outcomeUnknown) => {
      const broken = createGatewayClient({
        baseUrl: ORIGIN,
        merchantId: 'testrest',
        auth: httpSignatureAuthenticator('testrest', KEY_ID, SECRET),
        timeouts: { connectMs: 1000, headersMs: 2000, bodyMs: 2000 },
        retry: { maxAttempts: 3, initialDelayMs: 1, maxDelayMs: 2 },
        dispatcher: failing(code, stage),
      });
      // Once written, the sale may have been processed: "not sent" would free its transactionId for a resend.
      expect(await broken.send(broken.prepare(preauth))).toMatchObject({
        kind: 'unknown',
        error: { code: 'GW_CONNECTION', outcomeUnknown },
      });
      await broken.close();
    },
  );

  it('reports a 401 as an authentication failure that moved no money', async () => {
    agent.get(ORIGIN).intercept({ path: '/pts/v2/payments', method: 'POST' }).reply(401, '');
    expect(await client.send(client.prepare(preauth))).toMatchObject({
      kind: 'unknown',
      httpStatus: 401,
      error: { code: 'GW_AUTH', outcomeUnknown: false },
    });
  });

  it("names a wrong clock as the cause of a 401 when the gateway's Date is further off than the credentials allow", async () => {
    // The terminal's clock is 300 s ahead of the gateway's: its JWT or signed date is outside the gateway's window.
    const gatewayDate = new Date(Date.now() - 300_000).toUTCString();
    agent
      .get(ORIGIN)
      .intercept({ path: '/pts/v2/payments', method: 'POST' })
      .reply(401, '', { headers: { date: gatewayDate } });
    const outcome = await client.send(client.prepare(preauth));
    expect(outcome).toMatchObject({
      kind: 'unknown',
      httpStatus: 401,
      error: { code: 'GW_AUTH_CLOCK', outcomeUnknown: false, toleranceSeconds: 120 },
    });
    if (outcome.kind !== 'unknown') throw new Error('not unknown');
    const skew = (outcome.error as unknown as { clockSkewSeconds: number }).clockSkewSeconds;
    expect(Math.abs(skew - 300)).toBeLessThanOrEqual(1);
    expect(outcome.error.message).toMatch(/clock is 30\d s ahead of the gateway's/);
  });

  it('names a wrong clock on a 401 to a JWT (its exp is iat + 120 s), and never on one to an OAuth bearer token', async () => {
    const behind = new Date(Date.now() + 200_000).toUTCString();
    const jwt = makeClient({ auth: jwtAuthenticator('testrest', hmacKey(SECRET, KEY_ID)) });
    agent
      .get(ORIGIN)
      .intercept({ path: '/pts/v2/payments', method: 'POST' })
      .reply(401, '', { headers: { date: behind } });
    expect(await jwt.send(jwt.prepare(preauth))).toMatchObject({
      kind: 'unknown',
      error: { code: 'GW_AUTH_CLOCK', outcomeUnknown: false, toleranceSeconds: 120 },
    });
    const bearer = makeClient({
      auth: { method: 'oauth', authenticate: () => Promise.resolve({ authorization: 'Bearer t' }) },
    });
    agent
      .get(ORIGIN)
      .intercept({ path: '/pts/v2/payments', method: 'POST' })
      .reply(401, '', { headers: { date: behind } });
    expect(await bearer.send(bearer.prepare(preauth))).toMatchObject({
      kind: 'unknown',
      error: { code: 'GW_AUTH', outcomeUnknown: false },
    });
    await jwt.close();
    await bearer.close();
  });

  it('keeps a 401 a plain credentials refusal when the clocks agree', async () => {
    agent
      .get(ORIGIN)
      .intercept({ path: '/pts/v2/payments', method: 'POST' })
      .reply(401, '', { headers: { date: new Date().toUTCString() } });
    expect(await client.send(client.prepare(preauth))).toMatchObject({
      kind: 'unknown',
      error: { code: 'GW_AUTH', outcomeUnknown: false },
    });
  });

  it('names a wrong clock on the 401 of a non-payment service too', async () => {
    agent
      .get(ORIGIN)
      .intercept({ path: /^\/ipl\/v2\/payment-links/, method: 'GET' })
      .reply(401, '', { headers: { date: new Date(Date.now() + 600_000).toUTCString() } });
    await expect(client.paymentLinks.list({ offset: 0, limit: 10 })).rejects.toMatchObject({
      code: 'GW_AUTH_CLOCK',
      outcomeUnknown: false,
    });
  });

  it('renews an expired OAuth token once and resends the request once', async () => {
    let renewals = 0;
    let token = 'old';
    const auth: Authenticator = {
      method: 'oauth',
      authenticate: () => Promise.resolve({ authorization: `Bearer ${token}` }),
      renewAfterUnauthorized: (body) => {
        renewals++;
        token = 'new';
        return Promise.resolve(
          (body as { response: { rmsg: { error: string } } }).response.rmsg.error === 'ACCESS_TOKEN_EXPIRED',
        );
      },
    };
    client = makeClient({ auth });
    const seen: string[] = [];
    agent
      .get(ORIGIN)
      .intercept({ path: '/pts/v2/payments', method: 'POST' })
      .reply((opts) => {
        const a = headersOf(opts.headers).authorization ?? '';
        seen.push(a);
        return a === 'Bearer new'
          ? { statusCode: 201, data: JSON.stringify(approved) }
          : {
              statusCode: 401,
              data: {
                response: {
                  rmsg: { error: 'ACCESS_TOKEN_EXPIRED', error_description: 'ACCESS_TOKEN_EXPIRED' },
                },
              },
            };
      })
      .persist();
    expect((await client.send(client.prepare(preauth))).kind).toBe('approved');
    expect(seen).toEqual(['Bearer old', 'Bearer new']);
    expect(renewals).toBe(1);
  });

  it('refreshes the OAuth token once when many payments in flight meet its expiry, however their 401s straggle in', async () => {
    const TOKEN_ORIGIN = 'https://token.test';
    let refreshes = 0;
    agent
      .get(TOKEN_ORIGIN)
      .intercept({ path: '/oauth2/v3/token', method: 'POST' })
      .reply(() => {
        refreshes++;
        return {
          statusCode: 200,
          data: JSON.stringify({
            access_token: `A${refreshes + 1}`,
            refresh_token: `R${refreshes + 1}`,
            expires_in: 899,
          }),
        };
      })
      .persist();
    // The terminal's clock still holds A1 valid; the gateway says it expired. The 401s of the five requests sent with
    // it arrive one after another, the later ones after the first refresh is done.
    const expired = {
      response: { rmsg: { error: 'ACCESS_TOKEN_EXPIRED', error_description: 'ACCESS_TOKEN_EXPIRED' } },
    };
    const pool = agent.get(ORIGIN);
    for (let i = 0; i < 5; i++) {
      pool
        .intercept({ path: '/pts/v2/payments', method: 'POST', headers: { authorization: 'Bearer A1' } })
        .reply(401, expired)
        .delay(1 + i * 40);
    }
    const seen: string[] = [];
    pool
      .intercept({ path: '/pts/v2/payments', method: 'POST' })
      .reply((opts) => {
        seen.push(headersOf(opts.headers).authorization ?? '');
        return { statusCode: 201, data: JSON.stringify(approved) };
      })
      .persist();
    const now = 1_000_000;
    const tokens = new OAuthTokenManager({
      tokenUrl: TOKEN_ORIGIN,
      clientId: 'c',
      clientSecret: 's',
      store: {
        load: () => ({
          accessToken: 'A1',
          accessTokenExpiresAt: now + 600_000,
          refreshToken: 'R1',
          refreshTokenExpiresAt: now + 365 * 86_400_000,
        }),
        save: () => undefined,
        clear: () => undefined,
      },
      timeouts: { connectMs: 1000, headersMs: 2000, bodyMs: 2000 },
      now: () => now,
      dispatcher: agent,
    });
    client = makeClient({ auth: oauthAuthenticator(tokens) });
    const outcomes = await Promise.all(Array.from({ length: 5 }, () => client.send(client.prepare(preauth))));
    expect(outcomes.map((o) => o.kind)).toEqual(Array(5).fill('approved'));
    expect(refreshes).toBe(1);
    expect(seen).toEqual(Array(5).fill('Bearer A2'));
    await tokens.close();
  });

  it('reports a payment whose OAuth token could not be renewed as not sent, when the token endpoint failed mid-exchange', async () => {
    const TOKEN_ORIGIN = 'https://token.test';
    // The token request may have reached the token host; the payment never left the terminal.
    agent
      .get(TOKEN_ORIGIN)
      .intercept({ path: '/oauth2/v3/token', method: 'POST' })
      .replyWithError(new Error('socket hang up'));
    let payments = 0;
    agent
      .get(ORIGIN)
      .intercept({ path: '/pts/v2/payments', method: 'POST' })
      .reply(() => {
        payments++;
        return { statusCode: 201, data: JSON.stringify(approved) };
      })
      .persist();
    const tokens = new OAuthTokenManager({
      tokenUrl: TOKEN_ORIGIN,
      clientId: 'c',
      clientSecret: 's',
      store: {
        load: () => ({
          accessToken: 'A1',
          accessTokenExpiresAt: 0,
          refreshToken: 'R1',
          refreshTokenExpiresAt: 365 * 86_400_000,
        }),
        save: () => undefined,
        clear: () => undefined,
      },
      timeouts: { connectMs: 1000, headersMs: 2000, bodyMs: 2000 },
      retry: { maxAttempts: 1, initialDelayMs: 1, maxDelayMs: 1 },
      now: () => 1_000_000,
      dispatcher: agent,
    });
    client = makeClient({ auth: oauthAuthenticator(tokens) });
    const outcome = await client.send(client.prepare(preauth));
    expect(payments).toBe(0);
    // "Outcome unknown" would send a timeout reversal for an authorization that was never sent; the code still says
    // the network failed (the offline queue may take the payment).
    expect(outcome).toMatchObject({
      kind: 'unknown',
      error: { code: 'GW_CONNECTION', outcomeUnknown: false },
    });
    await tokens.close();
  });

  it('reads reversal, capture, refund and void amounts from their own answer fields', async () => {
    const pool = agent.get(ORIGIN);
    pool.intercept({ path: '/pts/v2/payments/A1/reversals', method: 'POST' }).reply(201, {
      id: 'R1',
      status: 'REVERSED',
      reversalAmountDetails: { reversedAmount: '12.50', currency: 'GBP' },
    });
    pool.intercept({ path: '/pts/v2/payments/A1/captures', method: 'POST' }).reply(201, {
      id: 'C1',
      status: 'PENDING',
      orderInformation: { amountDetails: { totalAmount: '9.00', currency: 'GBP' } },
    });
    const reversal = await client.send(
      client.prepare({
        service: 'reversal',
        code: 'c',
        partner,
        id: 'A1',
        authorizedMinor: 1250,
        currency: 'GBP',
      }),
    );
    expect(reversal).toMatchObject({ kind: 'approved', gatewayId: 'R1', amountMinor: 1250 });
    const capture = await client.send(
      client.prepare({
        service: 'capture',
        code: 'c',
        partner,
        id: 'A1',
        amountMinor: 900,
        authorizedMinor: 1250,
        currency: 'GBP',
        preauthEntryMode: 'swiped',
      }),
    );
    expect(capture).toMatchObject({ kind: 'approved', gatewayId: 'C1', status: 'PENDING', amountMinor: 900 });
  });

  it('reports cancellation by the caller as unknown', async () => {
    agent.get(ORIGIN).intercept({ path: '/pts/v2/payments', method: 'POST' }).reply(201, approved).delay(300);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 20);
    const outcome = await client.send(client.prepare(preauth), { signal: ac.signal });
    expect(outcome).toMatchObject({ kind: 'unknown', error: { code: 'GW_CANCELLED', outcomeUnknown: true } });
  });
});

describe('GatewayClient reads and offers', () => {
  it('retries a payment-link read after a 503 and returns the link', async () => {
    const pool = agent.get(ORIGIN);
    pool.intercept({ path: '/ipl/v2/payment-links/PARK-1', method: 'GET' }).reply(503, '');
    pool.intercept({ path: '/ipl/v2/payment-links/PARK-1', method: 'GET' }).reply(200, {
      id: 'PARK-1',
      status: 'ACTIVE',
      processingInformation: { linkType: 'PURCHASE' },
      purchaseInformation: { purchaseNumber: 'PARK-1', paymentLink: 'https://gateway.test/pay/PARK-1' },
      orderInformation: {
        amountDetails: { totalAmount: 12.5, currency: 'GBP' },
        lineItems: [{ productName: 'Parking', unitPrice: 12.5 }],
      },
    });
    const link = await client.paymentLinks.get('PARK-1');
    expect(link).toMatchObject({
      id: 'PARK-1',
      status: 'ACTIVE',
      totalAmountMinor: 1250,
      paymentLink: 'https://gateway.test/pay/PARK-1',
    });
  });

  it('creates a payment link once and refuses a card number in any field', async () => {
    let body = '';
    agent
      .get(ORIGIN)
      .intercept({ path: '/ipl/v2/payment-links', method: 'POST' })
      .reply((o) => {
        body = bodyText(o.body);
        return {
          statusCode: 201,
          data: {
            id: 'PARK-2',
            status: 'ACTIVE',
            purchaseInformation: { purchaseNumber: 'PARK-2', paymentLink: 'https://gateway.test/pay/PARK-2' },
          },
        };
      });
    const input = {
      linkType: 'PURCHASE' as const,
      purchaseNumber: 'PARK-2',
      currency: 'GBP',
      totalAmountMinor: 300,
      lineItems: [{ productName: 'Day ticket', unitPriceMinor: 300 }],
    };
    expect((await client.paymentLinks.create(input)).id).toBe('PARK-2');
    expect(JSON.parse(body)).toMatchObject({
      processingInformation: { linkType: 'PURCHASE' },
      purchaseInformation: { purchaseNumber: 'PARK-2' },
      orderInformation: {
        amountDetails: { currency: 'GBP', totalAmount: '3.00' },
        lineItems: [{ productName: 'Day ticket', unitPrice: '3.00' }],
      },
    });
    await expect(
      client.paymentLinks.create({
        ...input,
        lineItems: [{ productName: 'Card 4111 1111 1111 1111', unitPriceMinor: 300 }],
      }),
    ).rejects.toMatchObject({
      code: 'LINK_PERSONAL_DATA',
      field: 'orderInformation.lineItems[0].productName',
    });
  });

  it('refuses a create answer without a URL it can show as an unknown outcome, and reads other answers without it', async () => {
    const input = {
      linkType: 'PURCHASE' as const,
      purchaseNumber: 'PARK-3',
      currency: 'GBP',
      totalAmountMinor: 300,
      lineItems: [{ productName: 'Day ticket', unitPriceMinor: 300 }],
    };
    const answer = (paymentLink?: string) => ({
      id: 'PARK-3',
      status: 'ACTIVE',
      purchaseInformation: {
        purchaseNumber: 'PARK-3',
        ...(paymentLink !== undefined ? { paymentLink } : {}),
      },
    });
    const pool = agent.get(ORIGIN);
    for (const url of [
      `https://gateway.test/pay/PARK-3?pad=${'x'.repeat(4_000)}`, // too long for a QR code: qrcode throws
      'http://gateway.test/pay/PARK-3', // not https
      'javascript:alert(1)',
      'https://gateway.test/pay/PARK 3',
      undefined,
    ]) {
      pool.intercept({ path: '/ipl/v2/payment-links', method: 'POST' }).reply(201, answer(url));
      await expect(client.paymentLinks.create(input)).rejects.toMatchObject({
        code: 'GW_PARSE',
        outcomeUnknown: true,
      });
    }
    // A read keeps working, so that the link can be watched and deactivated.
    pool
      .intercept({ path: '/ipl/v2/payment-links/PARK-3', method: 'GET' })
      .reply(200, answer(`https://gateway.test/pay/PARK-3?pad=${'x'.repeat(4_000)}`));
    const link = await client.paymentLinks.get('PARK-3');
    expect(link).toMatchObject({ id: 'PARK-3', status: 'ACTIVE' });
    expect(link.paymentLink).toBeUndefined();
  });

  it("shows only a page on the gateway's own host, or on one of hostedPageHosts when given; another is an undocumented answer", async () => {
    const input = {
      linkType: 'PURCHASE' as const,
      purchaseNumber: 'PARK-5',
      currency: 'GBP',
      totalAmountMinor: 300,
      lineItems: [{ productName: 'Day ticket', unitPriceMinor: 300 }],
    };
    const answer = (paymentLink: string) => ({
      id: 'PARK-5',
      status: 'ACTIVE',
      purchaseInformation: { purchaseNumber: 'PARK-5', paymentLink },
    });
    const pool = agent.get(ORIGIN);
    for (const url of [
      'https://pay.attacker.example/pay/PARK-5',
      'https://gateway.test:8443/pay/PARK-5',
      'https://gateway.test.attacker.example/pay/PARK-5',
      'http://127.0.0.1:8080/pay/PARK-5', // the sandbox's kind of page, from a gateway that is not on this machine
    ]) {
      pool.intercept({ path: '/ipl/v2/payment-links', method: 'POST' }).reply(201, answer(url));
      await expect(client.paymentLinks.create(input), url).rejects.toMatchObject({
        code: 'GW_UNDOCUMENTED',
        outcomeUnknown: true,
      });
    }
    pool
      .intercept({ path: '/ipl/v2/payment-links/PARK-5', method: 'GET' })
      .reply(200, answer('https://pay.attacker.example/pay/PARK-5'));
    expect((await client.paymentLinks.get('PARK-5')).paymentLink).toBeUndefined();

    const configured = createGatewayClient({
      baseUrl: ORIGIN,
      merchantId: 'testrest',
      auth: httpSignatureAuthenticator('testrest', KEY_ID, SECRET),
      timeouts: { connectMs: 1000, headersMs: 2000, bodyMs: 2000 },
      dispatcher: agent,
      hostedPageHosts: ['*.pages.test'],
    });
    pool
      .intercept({ path: '/ipl/v2/payment-links', method: 'POST' })
      .reply(201, answer('https://eu.pages.test/PARK-5'));
    expect((await configured.paymentLinks.create(input)).paymentLink).toBe('https://eu.pages.test/PARK-5');
    // The configured list replaces the default.
    pool
      .intercept({ path: '/ipl/v2/payment-links', method: 'POST' })
      .reply(201, answer('https://gateway.test/pay/PARK-5'));
    await expect(configured.paymentLinks.create(input)).rejects.toMatchObject({ code: 'GW_UNDOCUMENTED' });
  });

  it('refuses, as an unknown outcome, a create answer that is not the link requested (id, amount, currency, status)', async () => {
    const input = {
      linkType: 'PURCHASE' as const,
      purchaseNumber: 'PARK-4',
      currency: 'GBP',
      totalAmountMinor: 300,
      lineItems: [{ productName: 'Day ticket', unitPriceMinor: 300 }],
    };
    const answer = (o: { id?: string; status?: string; totalAmount?: unknown; currency?: string }) => ({
      id: o.id ?? 'PARK-4',
      status: o.status ?? 'ACTIVE',
      purchaseInformation: {
        purchaseNumber: o.id ?? 'PARK-4',
        paymentLink: `https://gateway.test/pay/${o.id ?? 'PARK-4'}`,
      },
      orderInformation: {
        amountDetails: { totalAmount: o.totalAmount ?? '3.00', currency: o.currency ?? 'GBP' },
        lineItems: [{ productName: 'Day ticket', unitPrice: o.totalAmount ?? '3.00' }],
      },
    });
    const pool = agent.get(ORIGIN);
    for (const wrong of [
      { id: 'OTHER-1' }, // another link's page: the customer would pay someone else's link
      { totalAmount: '300.00' }, // the customer would be charged a hundred times the fee
      { totalAmount: '0.01' },
      { currency: 'EUR' },
      { status: 'INACTIVE' },
    ]) {
      pool.intercept({ path: '/ipl/v2/payment-links', method: 'POST' }).reply(201, answer(wrong));
      await expect(client.paymentLinks.create(input), JSON.stringify(wrong)).rejects.toMatchObject({
        outcomeUnknown: true,
      });
    }
    pool.intercept({ path: '/ipl/v2/payment-links', method: 'POST' }).reply(201, answer({}));
    expect(await client.paymentLinks.create(input)).toMatchObject({ id: 'PARK-4', totalAmountMinor: 300 });
  });

  it('reports a create or an update whose 2xx answer cannot be read as of unknown outcome: the link may exist, payable', async () => {
    const input = {
      linkType: 'PURCHASE' as const,
      purchaseNumber: 'PARK-5',
      currency: 'GBP',
      totalAmountMinor: 300,
      lineItems: [{ productName: 'Day ticket', unitPriceMinor: 300 }],
    };
    const page = { paymentLink: 'https://gateway.test/pay/PARK-5' };
    const pool = agent.get(ORIGIN);
    for (const [what, body] of [
      ['a body that is not JSON', '<html>created</html>'],
      ['no id', JSON.stringify({ status: 'ACTIVE', purchaseInformation: page })],
      [
        'an amount it cannot read',
        JSON.stringify({
          id: 'PARK-5',
          status: 'ACTIVE',
          purchaseInformation: { purchaseNumber: 'PARK-5', ...page },
          orderInformation: { amountDetails: { totalAmount: '3.005', currency: 'GBP' } },
        }),
      ],
      [
        'an amount in a currency stated as a number',
        JSON.stringify({
          id: 'PARK-5',
          status: 'ACTIVE',
          purchaseInformation: { purchaseNumber: 'PARK-5', ...page },
          orderInformation: { amountDetails: { totalAmount: 300, currency: 826 } },
        }),
      ],
    ] as const) {
      pool.intercept({ path: '/ipl/v2/payment-links', method: 'POST' }).reply(201, body);
      await expect(client.paymentLinks.create(input), `create: ${what}`).rejects.toMatchObject({
        outcomeUnknown: true,
      });
      pool.intercept({ path: '/ipl/v2/payment-links/PARK-5', method: 'PATCH' }).reply(200, body);
      await expect(
        client.paymentLinks.update('PARK-5', { ...input, status: 'INACTIVE' }),
        `update: ${what}`,
      ).rejects.toMatchObject({ outcomeUnknown: true });
    }
  });

  it('refuses a read or an update answered with another link: its status is not the status of the link asked for', async () => {
    const other = {
      id: 'OTHER-1',
      status: 'INACTIVE',
      purchaseInformation: { purchaseNumber: 'OTHER-1' },
      orderInformation: {
        amountDetails: { totalAmount: '3.00', currency: 'GBP' },
        lineItems: [{ productName: 'Day ticket', unitPrice: '3.00' }],
      },
    };
    const pool = agent.get(ORIGIN);
    pool.intercept({ path: '/ipl/v2/payment-links/PARK-5', method: 'GET' }).reply(200, other);
    // An ACTIVE link read as INACTIVE would be recorded deactivated while its customer can still pay it.
    await expect(client.paymentLinks.get('PARK-5')).rejects.toMatchObject({ code: 'GW_UNDOCUMENTED' });
    pool.intercept({ path: '/ipl/v2/payment-links/PARK-5', method: 'PATCH' }).reply(200, other);
    await expect(
      client.paymentLinks.update('PARK-5', {
        linkType: 'PURCHASE',
        purchaseNumber: 'PARK-5',
        currency: 'GBP',
        totalAmountMinor: 300,
        lineItems: [{ productName: 'Day ticket', unitPriceMinor: 300 }],
        status: 'INACTIVE',
      }),
    ).rejects.toMatchObject({ code: 'GW_UNDOCUMENTED', outcomeUnknown: true });
  });

  it('lists payment links with offset and limit and reads the next page', async () => {
    agent
      .get(ORIGIN)
      .intercept({ path: '/ipl/v2/payment-links?offset=0&limit=2&status=ACTIVE', method: 'GET' })
      .reply(200, {
        totalLinks: 3,
        links: [
          { id: 'A', status: 'ACTIVE' },
          { id: 'B', status: 'ACTIVE' },
        ],
        _links: { next: { href: '/ipl/v2/payment-links?offset=2&limit=2', method: 'GET' } },
      });
    const page = await client.paymentLinks.list({ offset: 0, limit: 2, status: 'ACTIVE' });
    expect(page.links.map((l) => l.id)).toEqual(['A', 'B']);
    expect(page.next).toEqual({ offset: 2, limit: 2 });
    await expect(client.paymentLinks.list({ limit: 1001 })).rejects.toMatchObject({
      code: 'GW_INVALID_REQUEST',
    });
  });

  it('reports a missing link as GW_NOT_FOUND', async () => {
    agent
      .get(ORIGIN)
      .intercept({ path: '/ipl/v2/payment-links/NOPE', method: 'GET' })
      .reply(404, { status: 'NOTFOUND', reason: 'NOTFOUND' });
    await expect(client.paymentLinks.get('NOPE')).rejects.toMatchObject({ code: 'GW_NOT_FOUND' });
  });

  it('asks for a DCC offer with the card prefix only and reads offer and disclaimer', async () => {
    let body = '';
    agent
      .get(ORIGIN)
      .intercept({ path: '/vas/v1/currencyconversion', method: 'POST' })
      .reply((o) => {
        body = bodyText(o.body);
        return {
          statusCode: 201,
          data: {
            id: 'DCC1',
            status: 'PENDING',
            orderInformation: {
              currencyConversion: {
                type: 'DCC',
                reconciliationId: 'REC1',
                offer: [
                  {
                    amount: '14.67',
                    currency: 'EUR',
                    exchangeRate: '1.1734',
                    marginRate: '3.5',
                    rateId: 'R1',
                    exchangeRateInverted: false,
                  },
                ],
                disclaimer: 'I accept that I have been offered a choice of currencies.',
              },
            },
          },
        };
      });
    const result = await client.dccOffer({
      cardPrefix: '41111111',
      amountMinor: 1250,
      currency: 'GBP',
      entryMode: 'contactless',
    });
    expect(result).toMatchObject({
      kind: 'offer',
      id: 'DCC1',
      reconciliationId: 'REC1',
      offers: [
        { amountMinor: 1467, currency: 'EUR', exchangeRate: '1.1734', marginRate: '3.5', rateId: 'R1' },
      ],
      disclaimer: 'I accept that I have been offered a choice of currencies.',
    });
    expect(JSON.parse(body)).toEqual({
      paymentInformation: { card: { number: '41111111' } },
      orderInformation: {
        amountDetails: { originalAmount: '12.50', originalCurrency: 'GBP' },
        currencyConversion: { type: 'DCC' },
      },
      pointOfSaleInformation: { entryMode: 'CONTACTLESS' },
    });
    await expect(
      client.dccOffer({ cardPrefix: '4111111111111111', amountMinor: 1, currency: 'GBP' }),
    ).rejects.toMatchObject({
      code: 'GW_INVALID_REQUEST',
    });
  });

  it('reads a declined DCC offer as no offer', async () => {
    agent
      .get(ORIGIN)
      .intercept({ path: '/vas/v1/currencyconversion', method: 'POST' })
      .reply(201, { id: 'DCC2', status: 'DECLINED', errorInformation: { reason: 'CURRENCY_MATCH' } });
    expect(await client.dccOffer({ cardPrefix: '411111', amountMinor: 1250, currency: 'GBP' })).toEqual({
      kind: 'no-offer',
      reason: 'CURRENCY_MATCH',
      id: 'DCC2',
    });
  });

  it('checks the status of an alternative-method payment', async () => {
    agent
      .get(ORIGIN)
      .intercept({ path: '/pts/v2/refresh-payment-status/S1', method: 'POST' })
      .reply(201, { id: 'S1', status: 'SETTLED', processorInformation: { responseCode: '00004' } });
    expect(
      await client.paymentStatus({ id: 'S1', code: 'c', paymentTypeName: 'bankTransfer', methodName: 'M1' }),
    ).toMatchObject({
      status: 'SETTLED',
      responseCode: '00004',
    });
  });

  it('refuses a status answer with an id or status it could not keep (GW_PARSE), and leaves out a response code that is no code', async () => {
    const request = { id: 'S1', code: 'c', paymentTypeName: 'bankTransfer', methodName: 'M1' };
    const answered = (body: unknown) =>
      agent
        .get(ORIGIN)
        .intercept({ path: '/pts/v2/refresh-payment-status/S1', method: 'POST' })
        .reply(201, body as Record<string, unknown>);
    answered({ id: 'S'.repeat(200), status: 'SETTLED' });
    await expect(client.paymentStatus(request)).rejects.toMatchObject({ code: 'GW_PARSE' });
    answered({ id: 'S1', status: 'X'.repeat(10_000) });
    await expect(client.paymentStatus(request)).rejects.toMatchObject({ code: 'GW_PARSE' });
    answered({ id: 'S1', status: 'SETTLED', processorInformation: { responseCode: 'R'.repeat(10_000) } });
    const result = await client.paymentStatus(request);
    expect(result).toMatchObject({ id: 'S1', status: 'SETTLED' });
    expect(result).not.toHaveProperty('responseCode');
  });
});

describe('GatewayClient.dccOffer: header fields of spec 001 ("DCC offer calls require Authorization and keyId")', () => {
  const offerRequest = { cardPrefix: '47617390', amountMinor: 1250, currency: 'EUR' };
  const noOffer = { id: 'o1', status: 'DECLINED', errorInformation: { reason: 'CURRENCY_MATCH' } };

  async function offerHeaders(auth?: Authenticator): Promise<{ headers: Headers; body: string }> {
    if (auth) client = makeClient({ auth });
    let seen: { headers: Headers; body: string } | undefined;
    agent
      .get(ORIGIN)
      .intercept({ path: '/vas/v1/currencyconversion', method: 'POST' })
      .reply((opts) => {
        seen = { headers: headersOf(opts.headers), body: bodyText(opts.body) };
        return { statusCode: 201, data: noOffer };
      });
    expect(await client.dccOffer(offerRequest)).toEqual({
      kind: 'no-offer',
      reason: 'CURRENCY_MATCH',
      id: 'o1',
    });
    return seen!;
  }

  it('signed: Authorization carries the signature in the Signature scheme and keyId its key id', async () => {
    const { headers, body } = await offerHeaders();
    expect(verifies('POST', '/vas/v1/currencyconversion', headers, body)).toBe(true);
    expect(headers.authorization).toBe(`Signature ${headers.signature}`);
    expect(headers.keyid).toBe(KEY_ID);
  });

  it("JWT: keyId is the token's kid", async () => {
    const part = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url');
    const token = `${part({ alg: 'RS256', typ: 'JWT', kid: 'serial-7' })}.${part({ iat: 1 })}.c2ln`;
    const { headers } = await offerHeaders({
      method: 'jwt',
      authenticate: () => Promise.resolve({ authorization: `Bearer ${token}` }),
    });
    expect(headers.authorization).toBe(`Bearer ${token}`);
    expect(headers.keyid).toBe('serial-7');
  });

  it('OAuth: the access token as Authorization, no keyId (no merchant key made it)', async () => {
    const { headers } = await offerHeaders({
      method: 'oauth',
      authenticate: () => Promise.resolve({ authorization: 'Bearer opaque' }),
    });
    expect(headers.authorization).toBe('Bearer opaque');
    expect(headers.keyid).toBeUndefined();
  });

  it('adds neither header to a payment request', async () => {
    let seen: Headers | undefined;
    agent
      .get(ORIGIN)
      .intercept({ path: '/pts/v2/payments', method: 'POST' })
      .reply((opts) => {
        seen = headersOf(opts.headers);
        return { statusCode: 201, data: approved };
      });
    expect((await client.send(client.prepare(preauth))).kind).toBe('approved');
    expect(seen!.signature).toBeDefined();
    expect(seen!.authorization).toBeUndefined();
    expect(seen!.keyid).toBeUndefined();
  });
});
