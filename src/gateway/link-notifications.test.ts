import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  LinkNotificationListener,
  LinkNotificationRelay,
  verifyLinkNotification,
  type LinkPaymentNotification,
} from './link-notifications.js';

const SECRET = 'yBJxy6LjM2TmcPGu+GaJrHtkke25fPpUX+UY6/L/1tE=';
const key = { merchantId: 'testrest', sharedSecretBase64: SECRET };
const NOW = Date.UTC(2026, 10, 24, 13, 0, 0);

const event = {
  eventType: 'payByLink.payment',
  eventDate: '2026-11-24T13:00:00Z',
  merchantId: 'testrest',
  payload: {
    paymentLinkId: 'T-1',
    purchaseNumber: 'T-1',
    paymentId: '7000000000000000000001',
    status: 'AUTHORIZED',
    amount: '4.50',
    currency: 'GBP',
    card: { maskedNumber: '411111******1111', type: '001' },
  },
};

/** Signed as the sandbox documents it (README, Sandbox): HMAC-SHA256 over "<t>.<body>", base64-decoded secret. */
function signed(body: string, t = Math.floor(NOW / 1000), secret = SECRET) {
  const sig = createHmac('sha256', Buffer.from(secret, 'base64')).update(`${t}.${body}`).digest('base64');
  return {
    'v-c-merchant-id': 'testrest',
    'v-c-signature': `t=${t},sig=${sig}`,
    'content-type': 'application/json',
  };
}

describe('verifyLinkNotification', () => {
  it('reads a correctly signed payment of a link, without the card', () => {
    const body = JSON.stringify(event);
    const n = verifyLinkNotification(signed(body), Buffer.from(body), key, NOW);
    expect(n).toEqual({
      eventDate: '2026-11-24T13:00:00Z',
      linkId: 'T-1',
      paymentId: '7000000000000000000001',
      status: 'AUTHORIZED',
      amountMinor: 450,
      currency: 'GBP',
    });
  });

  it('refuses a changed body, another key, an old signature, another merchant and another event', () => {
    const body = JSON.stringify(event);
    const problem = (h: Record<string, string>, b: string, now = NOW): string => {
      try {
        verifyLinkNotification(h, Buffer.from(b), key, now);
        return 'accepted';
      } catch (e) {
        return (e as { problem: string }).problem;
      }
    };
    expect(problem(signed(body), body.replace('4.50', '0.01'))).toBe('signature');
    expect(problem(signed(body, undefined, Buffer.alloc(32, 1).toString('base64')), body)).toBe('signature');
    expect(problem({ 'v-c-merchant-id': 'testrest' }, body)).toBe('signature');
    expect(problem(signed(body), body, NOW + 301_000)).toBe('stale');
    expect(problem({ ...signed(body), 'v-c-merchant-id': 'other' }, body)).toBe('merchant');
    const other = JSON.stringify({ ...event, eventType: 'something.else' });
    expect(problem(signed(other), other)).toBe('body');
  });
});

describe('LinkNotificationListener', () => {
  let listener: LinkNotificationListener | undefined;
  afterEach(async () => listener?.close());

  it('answers 204 to a verified notification and hands it over once; 401 and 400 otherwise', async () => {
    const got: LinkPaymentNotification[] = [];
    listener = await LinkNotificationListener.start({
      host: '127.0.0.1',
      port: 0,
      key,
      now: () => NOW,
      onNotification: (n) => got.push(n),
    });
    expect(listener.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/payment-links\/notifications$/);
    const body = JSON.stringify(event);
    const post = (headers: Record<string, string>, b: string, url = listener!.url) =>
      fetch(url, { method: 'POST', headers, body: b }).then((r) => r.status);
    expect(await post(signed(body), body)).toBe(204);
    expect(await post({ ...signed(body), 'v-c-signature': 't=1,sig=AAAA' }, body)).toBe(401);
    const notJson = 'nope';
    expect(await post(signed(notJson), notJson)).toBe(400);
    expect(await post(signed(body), body, listener.url.replace('notifications', 'other'))).toBe(404);
    expect(got.map((n) => n.linkId)).toEqual(['T-1']);
  });
});

describe('LinkNotificationRelay', () => {
  it('fetches relayed notifications and verifies each itself', async () => {
    const body = JSON.stringify(event);
    const forged = body.replace('4.50', '0.01');
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          notifications: [
            { headers: signed(body), body },
            { headers: signed(body), body: forged },
          ],
        }),
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    const got: LinkPaymentNotification[] = [];
    const relay = LinkNotificationRelay.start({
      url: `http://127.0.0.1:${port}/relay`,
      pollMs: 60_000,
      key,
      now: () => NOW,
      onNotification: (n) => got.push(n),
    });
    try {
      await relay.fetchOnce();
      expect(got.map((n) => n.amountMinor)).toEqual([450]);
    } finally {
      relay.close();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
