import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '../log/index.js';
import { rawStatusLine, slowClient, within } from './testing/raw-request.js';
import {
  LinkNotificationListener,
  LinkNotificationRelay,
  verifyLinkNotification,
  type LinkNotificationRefusal,
  type LinkPaymentNotification,
} from './link-notifications.js';
import { MAX_CONNECTIONS } from './server-limits.js';

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
      signedAtMs: NOW,
    });
  });

  it('refuses a signed body that names a key twice: which value counts would be up to the parser', () => {
    const body = JSON.stringify(event).replace(
      '"status":"AUTHORIZED"',
      '"status":"DECLINED","status":"AUTHORIZED"',
    );
    expect(body).toContain('"status":"DECLINED","status":"AUTHORIZED"');
    let error: unknown;
    try {
      verifyLinkNotification(signed(body), Buffer.from(body), key, NOW);
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({
      problem: 'body',
      message: 'the body names a key twice',
      signed: { linkId: 'T-1' },
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

  it('accepts a relayed notification older than the tolerance, but not one signed in the future', () => {
    const body = JSON.stringify(event);
    const read = (now: number) =>
      verifyLinkNotification(signed(body), Buffer.from(body), key, now, { relayed: true });
    // Held by the relay for an hour (a restart): the MAC still binds it to its link and payment.
    expect(read(NOW + 3_600_000)).toMatchObject({ paymentId: '7000000000000000000001', signedAtMs: NOW });
    expect(() => read(NOW - 301_000)).toThrow(expect.objectContaining({ problem: 'stale' }));
  });

  it('says what it knows of a correctly signed notification it refuses, and nothing of a forged one', () => {
    const body = JSON.stringify(event);
    const refusal = (h: Record<string, string>, b: string, now = NOW): unknown => {
      try {
        verifyLinkNotification(h, Buffer.from(b), key, now);
        return 'accepted';
      } catch (e) {
        return (e as { signed?: unknown }).signed;
      }
    };
    expect(refusal(signed(body), body, NOW + 301_000)).toEqual({
      signedAtMs: NOW,
      linkId: 'T-1',
      paymentId: '7000000000000000000001',
    });
    expect(refusal({ ...signed(body), 'v-c-merchant-id': 'other' }, body)).toMatchObject({ linkId: 'T-1' });
    expect(refusal(signed(body), body.replace('4.50', '0.01'))).toBeUndefined();
  });
  it('refuses, as signed, a payment id that is not a gateway id (the journal could not keep it: the payment would be lost)', () => {
    const refused = (paymentId: string): unknown => {
      const body = JSON.stringify({ ...event, payload: { ...event.payload, paymentId } });
      try {
        verifyLinkNotification(signed(body), Buffer.from(body), key, NOW);
        return 'accepted';
      } catch (e) {
        const { problem, signed: s } = e as { problem: string; signed?: { paymentId?: string } };
        return { problem, signed: s !== undefined };
      }
    };
    for (const paymentId of [
      'x'.repeat(65),
      '7000 0001',
      '7000\u202e0001',
      '7000\u200b0001',
      '<script>alert(1)</script>',
      '7000\ud8000001',
      '../../pts/v2/payments/1',
      '7000\n0001',
    ])
      expect(refused(paymentId), JSON.stringify(paymentId)).toEqual({ problem: 'body', signed: true });
    expect(refused('7000000000000000000001')).toBe('accepted');
    expect(refused('a'.repeat(64))).toBe('accepted');
  });
  it('refuses, as signed, a status that is not a status word (its record for the operator could not be written)', () => {
    const refused = (status: string): unknown => {
      const body = JSON.stringify({ ...event, payload: { ...event.payload, status } });
      try {
        return verifyLinkNotification(signed(body), Buffer.from(body), key, NOW).status;
      } catch (e) {
        const { problem, signed: s } = e as { problem: string; signed?: unknown };
        return { problem, signed: s !== undefined };
      }
    };
    for (const status of [
      'P'.repeat(3_000),
      'AUTHORIZED\u202E',
      'AUTHORIZED ',
      'authorized',
      '<b>PAID</b>',
      'AUTH\nORIZED',
    ])
      expect(refused(status), JSON.stringify(status)).toEqual({ problem: 'body', signed: true });
    for (const status of ['AUTHORIZED', 'DECLINED', 'PARTIAL_AUTHORIZED', 'AUTHORIZED_PENDING_REVIEW'])
      expect(refused(status)).toBe(status);
  });
});

describe('the key notifications are verified with', () => {
  // An empty secret file, or one whose text is no base64 (a pasted secret cut short, the wrong file): the HMAC key
  // would be nothing, or some bytes of it, and anyone could sign a payment the terminal counts.
  const unusable = ['', '   ', 'not a base64 secret!', '%%%%'];

  it('is never one anybody can sign with: every notification is refused as unsigned', () => {
    const body = JSON.stringify(event);
    for (const secret of unusable) {
      // Signed as the verifier would key it: the base64 decoding of whatever the file holds.
      const forged = signed(body, undefined, secret);
      expect(
        () => verifyLinkNotification(forged, Buffer.from(body), { ...key, sharedSecretBase64: secret }, NOW),
        JSON.stringify(secret),
      ).toThrow(expect.objectContaining({ code: 'LINK_NOTIFICATION', problem: 'signature' }));
    }
  });

  it('is named as unusable in the log when the listener or the relay starts, once, not at each refusal', async () => {
    for (const secret of unusable) {
      const errors: Array<{ msg: string }> = [];
      const logger = createLogger({
        level: 'error',
        destination: { write: (line: string) => void errors.push(JSON.parse(line) as { msg: string }) },
      });
      const listener = await LinkNotificationListener.start({
        host: '127.0.0.1',
        port: 0,
        key: { ...key, sharedSecretBase64: secret },
        onNotification: () => undefined,
        logger,
      });
      await listener.close();
      LinkNotificationRelay.start({
        url: 'http://127.0.0.1:9/notifications',
        pollMs: 60_000,
        key: { ...key, sharedSecretBase64: secret },
        onNotification: () => undefined,
        logger,
      }).close();
      expect(
        errors.map((e) => e.msg),
        JSON.stringify(secret),
      ).toEqual([
        'payment-link notifications: no usable key, every notification is refused',
        'payment-link notifications: no usable key, every notification is refused',
      ]);
    }
  });
});

describe('LinkNotificationListener', () => {
  let listener: LinkNotificationListener | undefined;
  afterEach(async () => listener?.close());

  it('answers 204 to a verified notification and hands it over once; 401 and 400 otherwise', async () => {
    const got: LinkPaymentNotification[] = [];
    const refused: LinkNotificationRefusal[] = [];
    listener = await LinkNotificationListener.start({
      host: '127.0.0.1',
      port: 0,
      key,
      now: () => NOW,
      onNotification: (n) => got.push(n),
      onRefused: (r) => refused.push(r),
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
    // Only the correctly signed one that was refused is handed on for the operator (the forged one is only logged).
    expect(refused).toEqual([{ problem: 'body', message: 'the body is not JSON', signedAtMs: NOW }]);
  });

  it('logs an error of its server once listening (an accept failing for want of descriptors) and goes on', async () => {
    const errors: { msg?: string; err?: { message?: string } }[] = [];
    const got: LinkPaymentNotification[] = [];
    listener = await LinkNotificationListener.start({
      host: '127.0.0.1',
      port: 0,
      key,
      now: () => NOW,
      onNotification: (n) => got.push(n),
      logger: createLogger({
        level: 'error',
        destination: { write: (line: string) => void errors.push(JSON.parse(line) as (typeof errors)[0]) },
      }),
    });
    // What Node's server emits when accept() fails (EMFILE): with no listener for it, the process would end.
    const server = (listener as unknown as { server: Server }).server;
    expect(() =>
      server.emit('error', Object.assign(new Error('accept EMFILE'), { code: 'EMFILE' })),
    ).not.toThrow();
    expect(errors).toMatchObject([{ msg: 'payment-link listener error', err: { message: 'accept EMFILE' } }]);
    const body = JSON.stringify(event);
    expect((await fetch(listener.url, { method: 'POST', headers: signed(body), body })).status).toBe(204);
    expect(got.map((n) => n.linkId)).toEqual(['T-1']);
  });

  it('answers 400 to a request target no URL parser reads, and goes on listening', async () => {
    const got: LinkPaymentNotification[] = [];
    listener = await LinkNotificationListener.start({
      host: '127.0.0.1',
      port: 0,
      key,
      now: () => NOW,
      onNotification: (n) => got.push(n),
    });
    const { port } = new URL(listener.url);
    // Anyone who reaches the listener can send a request line in absolute form that Node's parser lets through.
    for (const target of ['http://[', 'http://a:99999/payment-links/notifications', 'http://%zz/'])
      expect(await rawStatusLine(Number(port), `POST ${target} HTTP/1.1`), target).toBe(
        'HTTP/1.1 400 Bad Request',
      );
    const body = JSON.stringify(event);
    const answer = await fetch(listener.url, { method: 'POST', headers: signed(body), body });
    expect(answer.status).toBe(204);
    expect(got.map((n) => n.linkId)).toEqual(['T-1']);
  });
});

describe('LinkNotificationListener and slow or many clients', () => {
  let listener: LinkNotificationListener | undefined;
  afterEach(async () => listener?.close());
  const start = async () =>
    (listener = await LinkNotificationListener.start({
      host: '127.0.0.1',
      port: 0,
      key,
      now: () => NOW,
      onNotification: () => undefined,
    }));

  it('drops a client that trickles its headers once the header timeout has passed', async () => {
    const { port } = new URL((await start()).url);
    const slow = slowClient(Number(port), 'POST /payment-links/notifications HTTP/1.1\r\n', 'X-Slow: 1\r\n');
    const closedAfter = await within(slow.closed, 8_000);
    slow.socket.destroy();
    expect(closedAfter, 'closed by the listener within 8 s').not.toBe('pending');
  }, 15_000);

  it('holds a bounded number of connections: those beyond the bound are closed at once', async () => {
    const { port } = new URL((await start()).url);
    const clients = Array.from({ length: MAX_CONNECTIONS + 40 }, () => slowClient(Number(port), ''));
    const closed = await Promise.all(clients.map((c) => within(c.closed, 1_000)));
    for (const c of clients) c.socket.destroy();
    expect(closed.filter((c) => c !== 'pending').length).toBeGreaterThanOrEqual(40);
    await Promise.all(clients.map((c) => c.closed));
    const body = JSON.stringify(event);
    expect((await fetch(listener!.url, { method: 'POST', headers: signed(body), body })).status).toBe(204);
  });
});

describe('LinkNotificationListener and a flood of forged notifications', () => {
  it('logs a burst of refusals, then counts the rest in one summary line, not a line each', async () => {
    const lines: { msg: string; dropped?: number }[] = [];
    const listener = await LinkNotificationListener.start({
      host: '127.0.0.1',
      port: 0,
      key,
      now: () => NOW,
      onNotification: () => undefined,
      logger: createLogger({
        level: 'warn',
        destination: { write: (line: string) => void lines.push(JSON.parse(line) as { msg: string }) },
      }),
    });
    const body = JSON.stringify(event);
    const forged = { ...signed(body), 'v-c-signature': 't=1,sig=AAAA' };
    try {
      // Whoever reaches the listener (the internet, through its proxy) can send these as fast as it likes.
      for (let i = 0; i < 300; i++)
        expect((await fetch(listener.url, { method: 'POST', headers: forged, body })).status).toBe(401);
    } finally {
      await listener.close();
    }
    expect(lines.length).toBeLessThanOrEqual(25);
    // Closing tells how many were left out.
    expect(lines.at(-1)).toMatchObject({ dropped: 300 - (lines.length - 1) });
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

  it('stops reading a relay answer larger than it reads (a relay is trusted with nothing), at once', async () => {
    let closed = false;
    const server = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"notifications":[');
      // Far more than any relay holds, and never an end: only a bound on what is read ends this fetch early.
      res.write(' '.repeat(8 * 1024 * 1024));
      req.socket.on('close', () => (closed = true));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    const got: LinkPaymentNotification[] = [];
    const warnings: { err?: string }[] = [];
    const relay = LinkNotificationRelay.start({
      url: `http://127.0.0.1:${port}/relay`,
      pollMs: 60_000,
      key,
      now: () => NOW,
      onNotification: (n) => got.push(n),
      logger: createLogger({
        level: 'warn',
        destination: { write: (line: string) => void warnings.push(JSON.parse(line) as { err?: string }) },
      }),
    });
    try {
      await relay.fetchOnce();
      // Ended by the bound on what is read, not by the fetch's own 10 s deadline.
      expect(warnings.map((w) => w.err)).toEqual(['answer larger than 4194304 bytes']);
      expect(got).toEqual([]);
      await expect.poll(() => closed).toBe(true);
    } finally {
      relay.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('keeps nothing of forged notifications a relay hands over, however large their signatures', async () => {
    const body = JSON.stringify(event);
    const future = JSON.stringify({
      ...event,
      payload: { ...event.payload, paymentId: '7000000000000000000002' },
    });
    let fetches = 0;
    const server = createServer((_req, res) => {
      fetches += 1;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          notifications: [
            // A new forgery at every fetch, its signature as large as the answer's bound allows.
            {
              headers: { ...signed(body), 'v-c-signature': `t=1,sig=${'A'.repeat(1_000_000)}${fetches}` },
              body,
            },
            { headers: { ...signed(body), 'v-c-signature': `forged ${fetches}` }, body },
            // Signed, but in the future: refused and told to the operator once.
            { headers: signed(future, Math.floor(NOW / 1000) + 4_000), body: future },
          ],
        }),
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    const refused: LinkNotificationRefusal[] = [];
    const relay = LinkNotificationRelay.start({
      url: `http://127.0.0.1:${port}/relay`,
      pollMs: 600_000,
      key,
      now: () => NOW,
      onNotification: () => undefined,
      onRefused: (r) => refused.push(r),
    });
    const remembered = () => (relay as unknown as { reported: Set<string> }).reported;
    try {
      for (let i = 0; i < 3; i += 1) await relay.fetchOnce();
      expect(refused).toMatchObject([{ problem: 'stale', paymentId: '7000000000000000000002' }]);
      // Only the signed one is remembered (as reported): a forgery's signature is never kept.
      const reported = signed(future, Math.floor(NOW / 1000) + 4_000)['v-c-signature'];
      expect([...remembered()].map((s) => s.length)).toEqual([reported.length]);
      expect(remembered().has(reported)).toBe(true);
    } finally {
      relay.close();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('records a genuine payment the relay held longer than the tolerance (a poll of up to 600 s, a restart)', async () => {
    // The relay received the gateway's notification at NOW (signed t = NOW); the terminal fetches it 6 minutes later.
    const body = JSON.stringify(event);
    const future = JSON.stringify({
      ...event,
      payload: { ...event.payload, paymentId: '7000000000000000000002' },
    });
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          notifications: [
            { headers: signed(body), body },
            // Signed an hour after the terminal's now: refused, and told to the operator once however often relayed.
            { headers: signed(future, Math.floor(NOW / 1000) + 4_000), body: future },
          ],
        }),
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    const got: LinkPaymentNotification[] = [];
    const refused: LinkNotificationRefusal[] = [];
    const relay = LinkNotificationRelay.start({
      url: `http://127.0.0.1:${port}/relay`,
      pollMs: 600_000,
      key,
      now: () => NOW + 360_000,
      onNotification: (n) => got.push(n),
      onRefused: (r) => refused.push(r),
    });
    try {
      await relay.fetchOnce();
      await relay.fetchOnce();
      expect(got.map((n) => n.paymentId)).toEqual(['7000000000000000000001', '7000000000000000000001']);
      expect(refused).toMatchObject([
        { problem: 'stale', linkId: 'T-1', paymentId: '7000000000000000000002' },
      ]);
    } finally {
      relay.close();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
