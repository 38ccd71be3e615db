import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../log/index.js';
import type { Authenticator } from './auth/authenticator.js';
import type { ConnectTarget } from './connect-probe.js';
import { createTransport, type Exchange, type Transport } from './transport.js';

const ANSWER = '{"status":"AUTHORIZED"}';

/**
 * A gateway that keeps an idle connection for `idleMs` and then drops it, without announcing that time in a
 * `Keep-Alive` header (as many do): each request is answered 201 with {@link ANSWER}. Counts the connections.
 */
async function idleClosingServer(
  idleMs: number,
): Promise<{ server: Server; url: string; connections: () => number }> {
  let connections = 0;
  const server = createServer((socket: Socket) => {
    connections++;
    socket.setTimeout(idleMs, () => socket.destroy());
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        const end = buffered.indexOf('\r\n\r\n');
        if (end < 0) return;
        const length = Number(
          /content-length: *(\d+)/i.exec(buffered.subarray(0, end).toString('latin1'))?.[1] ?? 0,
        );
        if (buffered.length < end + 4 + length) return;
        buffered = buffered.subarray(end + 4 + length);
        socket.write(
          `HTTP/1.1 201 Created\r\ncontent-type: application/json\r\ncontent-length: ${ANSWER.length}\r\n\r\n${ANSWER}`,
        );
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}`, connections: () => connections };
}

const unsigned: Authenticator = { method: 'http-signature', authenticate: () => Promise.resolve({}) };

const authorization: Exchange = {
  method: 'POST',
  path: '/pts/v2/payments',
  body: Buffer.from('{"orderInformation":{}}'),
  moneyMoving: true,
  label: 'preauth',
};

/** Blocks this thread for `ms`, as a slow disk sync or a long synchronous step does: no event is read meanwhile. */
function stall(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

describe('createTransport', () => {
  let closeAll: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await closeAll?.();
    closeAll = undefined;
  });

  function transportTo(url: string, auth: Authenticator = unsigned, connectMs = 2_000): Transport {
    return createTransport({
      baseUrl: url,
      auth,
      timeouts: { connectMs, headersMs: 5_000, bodyMs: 5_000 },
      retry: { maxAttempts: 1, initialDelayMs: 1, maxDelayMs: 1 },
      logger: silentLogger(),
      now: () => new Date(),
    });
  }

  it('sends a payment after the event loop stalled on a fresh connection, not on one the gateway dropped meanwhile', async () => {
    const gateway = await idleClosingServer(150);
    const transport = transportTo(gateway.url);
    closeAll = async () => {
      await transport.close();
      await new Promise((resolve) => gateway.server.close(resolve));
    };
    // Payments one after another, as a busy lane makes them: the pool keeps its connections open.
    for (let i = 0; i < 3; i++) expect((await transport.send(authorization)).httpStatus).toBe(201);
    const before = gateway.connections();
    // The event loop is held past the gateway's idle time, so the connection's close is not read yet when the next
    // payment is sent right after, in the same turn. Written to that connection, the payment would meet a reset, and
    // its outcome would be unknown: a timeout reversal, and a sale lost.
    stall(400);
    const answer = await transport.send({ ...authorization, label: 'sale' });
    expect(answer.httpStatus).toBe(201);
    expect(gateway.connections()).toBeGreaterThan(before);
  });

  it('tells a request whose header the HTTP client refuses before writing it as not sent, not as of unknown outcome', async () => {
    const gateway = await idleClosingServer(5_000);
    // An authenticator (a custom one, or a credential read from a file) giving a value no HTTP header may carry.
    const transport = transportTo(gateway.url, {
      method: 'http-signature',
      authenticate: () => Promise.resolve({ signature: 'a\r\nx-injected: 1' }),
    });
    closeAll = async () => {
      await transport.close();
      await new Promise((resolve) => gateway.server.close(resolve));
    };
    // Nothing left the terminal: a timeout reversal of it would be a request about a payment that never existed.
    await expect(transport.send(authorization)).rejects.toMatchObject({ outcomeUnknown: false });
    expect(gateway.connections()).toBe(0);
  });

  it('tells whether a connection to the gateway opens, sending nothing', async () => {
    let received = 0;
    const gateway = await idleClosingServer(5_000);
    gateway.server.on('connection', (socket: Socket) => socket.on('data', () => received++));
    const transport = transportTo(gateway.url);
    // A port nothing listens on: the server's, once closed.
    const closed = await idleClosingServer(5_000);
    await new Promise((resolve) => closed.server.close(resolve));
    const down = transportTo(closed.url);
    closeAll = async () => {
      await transport.close();
      await down.close();
      await new Promise((resolve) => gateway.server.close(resolve));
    };
    expect(await transport.reachable()).toEqual({ reachable: true });
    expect(gateway.connections()).toBe(1);
    expect(await down.reachable()).toEqual({
      reachable: false,
      host: `gateway ${new URL(closed.url).host}`,
    });
    // The probe's connection carried no byte.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(received).toBe(0);
  });

  it('refuses a gateway at plain http on another host: card data never crosses a network in clear', () => {
    expect(() => transportTo('http://gateway.example', unsigned)).toThrow(
      /gateway.baseUrl: plain http only to this machine/,
    );
    expect(() => transportTo('http://192.0.2.1:9', unsigned)).toThrow(
      expect.objectContaining({ code: 'GW_CONFIG' }),
    );
    transportTo('http://127.0.0.1:9', unsigned)
      .close()
      .catch(() => undefined);
  });

  it('gives up on a connection that does not open within the connect timeout', async () => {
    // A non-routable address (RFC 5737 TEST-NET-1): the connection neither opens nor is refused.
    const transport = transportTo('https://192.0.2.1:9', unsigned, 100);
    closeAll = () => transport.close();
    expect(await transport.reachable()).toEqual({ reachable: false, host: 'gateway 192.0.2.1:9' });
  });

  it("probes the connection the credentials need first too, unless it is the gateway's own", async () => {
    const gateway = await idleClosingServer(5_000);
    const closed = await idleClosingServer(5_000);
    await new Promise((resolve) => closed.server.close(resolve));
    const refusing = new URL(closed.url);
    // An access token to fetch from a token host whose port refuses: a request would wait on it before its first byte.
    let needed: ConnectTarget | undefined = {
      role: 'OAuth token host',
      hostname: refusing.hostname,
      port: Number(refusing.port),
    };
    const transport = transportTo(gateway.url, { ...unsigned, connectionNeeded: () => needed });
    closeAll = async () => {
      await transport.close();
      await new Promise((resolve) => gateway.server.close(resolve));
    };
    expect(await transport.reachable()).toEqual({
      reachable: false,
      host: `OAuth token host ${refusing.host}`,
    });
    // A token in hand: no connection but the gateway's.
    needed = undefined;
    expect(await transport.reachable()).toEqual({ reachable: true });
    // The token host is the gateway itself: one connection tells of both.
    const before = gateway.connections();
    const own = new URL(gateway.url);
    needed = { role: 'OAuth token host', hostname: own.hostname, port: Number(own.port) };
    expect(await transport.reachable()).toEqual({ reachable: true });
    expect(gateway.connections()).toBe(before + 1);
  });
});
