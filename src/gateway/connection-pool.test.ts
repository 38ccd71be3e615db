import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import fc from 'fast-check';
import type { Dispatcher } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { ConnectionPool, type ConnectionPoolOptions } from './connection-pool.js';

/*
 * The pool over real sockets: node:http servers for well-behaved answers, node:net servers writing raw bytes for
 * misbehaving ones. Throughout, what the transport reads of a failure is checked too: whether the request was started
 * (given its controller, on a connected socket) before it failed — "not sent" or "outcome unknown" (transport.ts,
 * transportError).
 */

/** An answer as the handler received it. */
interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** One request dispatched to the pool, seen from its handler. */
interface Sent {
  /** The answer, or the error the pool gave onResponseError. */
  answer: Promise<Answer>;
  /** What dispatch() returned. */
  accepted: boolean;
  /** Whether onRequestStart has been called. */
  started(): boolean;
  /** Whether onRequestStart had been called when onResponseError was: sent (or maybe sent), or not. */
  startedBeforeFailure(): boolean | undefined;
  /** Whether onResponseEnd or onResponseError has been called. */
  settled(): boolean;
  /** The controller given in onRequestStart. */
  controller(): Dispatcher.DispatchController | undefined;
}

interface Hooks {
  onStart?: (controller: Dispatcher.DispatchController) => void;
  onData?: (controller: Dispatcher.DispatchController, chunk: Buffer) => void;
}

/** Breaches of the handler contract (a call after the request settled, a second start…), checked after each test. */
const violations: string[] = [];

/** Dispatches one request (GET / unless told) with a handler that collects its answer and checks the contract. */
function send(
  pool: ConnectionPool,
  options: Partial<Dispatcher.DispatchOptions> = {},
  hooks: Hooks = {},
): Sent {
  const dispatchOptions: Dispatcher.DispatchOptions = { method: 'GET', path: '/', ...options };
  const what = `${dispatchOptions.method} ${dispatchOptions.path}`;
  let started = false;
  let startedBeforeFailure: boolean | undefined;
  let settled = false;
  let controller: Dispatcher.DispatchController | undefined;
  let status = 0;
  let headers: Record<string, string | string[] | undefined> = {};
  const chunks: Buffer[] = [];
  let resolve: (answer: Answer) => void = () => undefined;
  let reject: (error: unknown) => void = () => undefined;
  const answer = new Promise<Answer>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A test that only looks at the pool's side need not await the answer.
  answer.catch(() => undefined);
  const handler: Dispatcher.DispatchHandler = {
    onRequestStart(c) {
      if (started || settled) violations.push(`${what}: onRequestStart twice or after the end`);
      started = true;
      controller = c;
      hooks.onStart?.(c);
    },
    onResponseStart(_c, statusCode, h) {
      if (!started || settled || status !== 0) violations.push(`${what}: onResponseStart out of turn`);
      status = statusCode;
      headers = h;
    },
    onResponseData(c, chunk) {
      if (settled || status === 0) violations.push(`${what}: onResponseData out of turn`);
      chunks.push(Buffer.from(chunk));
      hooks.onData?.(c, chunk);
    },
    onResponseEnd() {
      if (settled || status === 0) violations.push(`${what}: onResponseEnd out of turn`);
      settled = true;
      resolve({ status, headers, body: Buffer.concat(chunks) });
    },
    onResponseError(_c, error) {
      if (settled) violations.push(`${what}: onResponseError after the end (${error.message})`);
      settled = true;
      startedBeforeFailure = started;
      reject(error);
    },
  };
  const accepted = pool.dispatch(dispatchOptions, handler);
  return {
    answer,
    accepted,
    started: () => started,
    startedBeforeFailure: () => startedBeforeFailure,
    settled: () => settled,
    controller: () => controller,
  };
}

/** The error a request failed with, and whether it had been started then; fails the test if it was answered. */
async function failure(
  sent: Sent,
): Promise<{ error: Error & { code?: string }; started: boolean | undefined }> {
  const error = await sent.answer.then(
    (a) => {
      throw new Error(`answered ${a.status} where a failure was expected`);
    },
    (e: unknown) => e as Error & { code?: string },
  );
  return { error, started: sent.startedBeforeFailure() };
}

/** One connection as the server saw it. */
interface Peer {
  socket: Socket;
  /** The bytes received (raw servers only: node:http reads its sockets itself). */
  received: Buffer[];
  /**
   * The pool closed the connection: its end arrived before the server had ended or dropped it (raw servers only, as
   * node:http reads the end of its sockets itself).
   */
  endedByPool: boolean;
  /** Resolves once the server's socket has closed. */
  closed: Promise<void>;
}

/** A request as the server read it. */
interface Received {
  method: string;
  path: string;
  /** Names lower-cased. */
  headers: Record<string, string | string[] | undefined>;
  /** Names as written, one entry per header line. */
  headerNames: string[];
  body: Buffer;
  /** The index of its connection in `peers`. */
  peer: number;
}

interface TestServer {
  url: string;
  peers: Peer[];
  requests: Received[];
  /** Resolves once `count` requests have been read. */
  received(count: number): Promise<void>;
}

const servers: { server: Server; peers: Peer[] }[] = [];
const pools: ConnectionPool[] = [];

async function listen(
  server: Server,
  onPeer: (peer: Peer) => void = () => undefined,
): Promise<Omit<TestServer, 'requests' | 'received'>> {
  const peers: Peer[] = [];
  server.on('connection', (socket: Socket) => {
    const peer: Peer = {
      socket,
      received: [],
      endedByPool: false,
      closed: new Promise((resolve) => socket.once('close', () => resolve())),
    };
    // A reset by the pool is no failure of the server's.
    socket.on('error', () => undefined);
    socket.once('end', () => {
      if (!socket.writableEnded && !socket.destroyed) peer.endedByPool = true;
    });
    peers.push(peer);
    onPeer(peer);
  });
  servers.push({ server, peers });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, peers };
}

function requestLog(): Pick<TestServer, 'requests' | 'received'> & { add(request: Received): void } {
  const requests: Received[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  return {
    requests,
    received(count) {
      if (requests.length >= count) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
    add(request) {
      requests.push(request);
      for (const w of waiters.filter((w) => requests.length >= w.count)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    },
  };
}

/** A well-behaved server (node:http); the request's body is read (and logged) before `handle` runs. */
async function httpServer(
  handle: (request: IncomingMessage, response: ServerResponse) => void,
): Promise<TestServer> {
  const log = requestLog();
  const server = createHttpServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      log.add({
        method: request.method ?? '',
        path: request.url ?? '',
        headers: request.headers,
        headerNames: request.rawHeaders.filter((_, i) => i % 2 === 0),
        body,
        peer: listening.peers.findIndex((p) => p.socket === request.socket),
      });
      handle(request, response);
    });
  });
  const listening = await listen(server);
  return { ...listening, requests: log.requests, received: log.received };
}

/**
 * A server writing raw bytes: it reads each request (head, and body by its content-length) and calls `respond`, which
 * writes whatever the test needs, well-formed or not.
 */
async function rawServer(respond: (request: Received, socket: Socket) => void): Promise<TestServer> {
  const log = requestLog();
  const server = createNetServer();
  const listening = await listen(server, (peer) => {
    const index = listening.peers.indexOf(peer);
    // Each write on its own, at once: answers written in pieces must not wait for an acknowledgement of the last.
    peer.socket.setNoDelay(true);
    let buffered = Buffer.alloc(0);
    peer.socket.on('data', (chunk: Buffer) => {
      peer.received.push(chunk);
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        const end = buffered.indexOf('\r\n\r\n');
        if (end < 0) return;
        const [line = '', ...lines] = buffered.toString('latin1', 0, end).split('\r\n');
        const headers: Record<string, string> = {};
        const headerNames: string[] = [];
        for (const l of lines) {
          const colon = l.indexOf(':');
          headerNames.push(l.slice(0, colon));
          headers[l.slice(0, colon).toLowerCase()] = l.slice(colon + 1).trim();
        }
        const length = Number(headers['content-length'] ?? 0);
        if (buffered.length < end + 4 + length) return;
        const body = buffered.subarray(end + 4, end + 4 + length);
        buffered = buffered.subarray(end + 4 + length);
        const [method = '', path = ''] = line.split(' ');
        const request = { method, path, headers, headerNames, body, peer: index };
        log.add(request);
        respond(request, peer.socket);
      }
    });
  });
  return { ...listening, requests: log.requests, received: log.received };
}

const OK = 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok';

/** A pool to `url`, closed after the test; generous limits unless told. */
function poolTo(url: string, options: Partial<ConnectionPoolOptions> = {}): ConnectionPool {
  const pool = new ConnectionPool(url, {
    connections: 4,
    connectTimeoutMs: 2_000,
    keepAliveMs: 10_000,
    ...options,
  });
  pools.push(pool);
  return pool;
}

/** `n` turns of the event loop: enough for bytes written on loopback to be read. */
async function turns(n = 1): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** Writes `bytes` in pieces cut at `cuts`, a turn of the event loop between pieces, so each is read on its own. */
async function writeInPieces(socket: Socket, bytes: Buffer, cuts: number[]): Promise<void> {
  let from = 0;
  for (const to of [...cuts.filter((c) => c > 0 && c < bytes.length).sort((a, b) => a - b), bytes.length]) {
    if (to <= from) continue;
    if (socket.destroyed) return;
    socket.write(bytes.subarray(from, to));
    from = to;
    await turns();
  }
}

/** Every position of `bytes`: a piece per byte. */
function everyByte(bytes: Buffer): number[] {
  return Array.from({ length: bytes.length }, (_, i) => i);
}

/**
 * Waits for the server's side of a connection to close, and checks that the pool closed it: its end came first, so the
 * server never had to drop a connection the pool might still have written to. Bounded, as a server of these tests
 * never closes an idle connection itself.
 */
async function closedByPool(peer: Peer | undefined): Promise<void> {
  expect(peer).toBeDefined();
  await settles((peer as Peer).closed, "the pool's close of the connection");
  expect(peer?.endedByPool).toBe(true);
}

/** Rejects when `promise` has not settled within `ms`: a hang reported as a failure, not a test timeout. */
async function settles<T>(promise: Promise<T>, what: string, ms = 2_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

afterEach(async () => {
  // The servers first: a request a test left in flight fails at once, a waiting one meets a refused connection, and
  // close() has nothing left to wait for.
  const closed = servers.splice(0).map(({ server, peers }) => {
    const done = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const peer of peers) peer.socket.destroy();
    return done;
  });
  await Promise.all(pools.splice(0).map((pool) => settles(pool.close(), 'close()')));
  await Promise.all(closed);
  expect(violations.splice(0)).toEqual([]);
});

describe('ConnectionPool: a request and its answer', () => {
  it('writes the method, path, headers and body bytes given, and hands back the status, lower-cased headers and body', async () => {
    const server = await httpServer((_request, response) => {
      response.statusCode = 201;
      response.setHeader('Content-Type', 'application/json');
      response.setHeader('X-Request-ID', 'r-1');
      response.end('{"status":"AUTHORIZED"}');
    });
    const pool = poolTo(server.url);
    // Every byte value: nothing on the way may read the body as text.
    const body = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const sent = send(pool, {
      method: 'POST',
      path: '/pts/v2/payments?trace=1',
      headers: {
        host: 'gateway.example',
        'content-type': 'application/json',
        'v-c-merchant-id': 'parking_01',
        digest: 'SHA-256=abc',
      },
      body,
    });
    const answer = await sent.answer;
    expect(sent.accepted).toBe(true);
    expect(server.requests).toHaveLength(1);
    const seen = server.requests[0] as Received;
    expect(seen.method).toBe('POST');
    expect(seen.path).toBe('/pts/v2/payments?trace=1');
    // The caller's host (the one the signature covers) in place of the origin's, once; the pool adds only the length.
    expect(seen.headers).toEqual({
      host: 'gateway.example',
      'content-type': 'application/json',
      'v-c-merchant-id': 'parking_01',
      digest: 'SHA-256=abc',
      'content-length': '256',
    });
    expect(seen.headerNames.filter((n) => n.toLowerCase() === 'host')).toHaveLength(1);
    expect(seen.body).toEqual(body);
    expect(answer.status).toBe(201);
    expect(answer.headers).toMatchObject({
      'content-type': 'application/json',
      'x-request-id': 'r-1',
      'content-length': '23',
    });
    expect(Object.keys(answer.headers).filter((n) => n !== n.toLowerCase())).toEqual([]);
    expect(answer.body.toString()).toBe('{"status":"AUTHORIZED"}');
  });

  it("sends the origin's host when the caller gives none, and a string body as its UTF-8 bytes", async () => {
    const server = await httpServer((_request, response) => response.end('ok'));
    const pool = poolTo(server.url);
    await send(pool, { method: 'PATCH', path: '/links/1', body: '{"note":"Überstunden €"}' }).answer;
    const seen = server.requests[0] as Received;
    expect(seen.headers.host).toBe(new URL(server.url).host);
    expect(seen.headers['content-length']).toBe(String(Buffer.byteLength('{"note":"Überstunden €"}')));
    expect(seen.body.toString('utf8')).toBe('{"note":"Überstunden €"}');
  });
});

describe('ConnectionPool: keep-alive connections', () => {
  it('sends requests made one after another on one connection', async () => {
    const server = await httpServer((request, response) => response.end(request.url));
    const pool = poolTo(server.url);
    for (const path of ['/a', '/b', '/c'])
      expect((await send(pool, { path }).answer).body.toString()).toBe(path);
    expect(server.peers).toHaveLength(1);
  });

  it('opens no more connections than allowed, and answers every request that waited for one', async () => {
    let inFlight = 0;
    let most = 0;
    const server = await httpServer((request, response) => {
      inFlight++;
      most = Math.max(most, inFlight);
      setImmediate(() => {
        inFlight--;
        response.end(request.url);
      });
    });
    const pool = poolTo(server.url, { connections: 2 });
    const paths = Array.from({ length: 9 }, (_, i) => `/${i}`);
    const answers = await Promise.all(paths.map((path) => send(pool, { path }).answer));
    expect(answers.map((a) => a.body.toString())).toEqual(paths);
    expect(server.peers).toHaveLength(2);
    expect(most).toBeLessThanOrEqual(2);
  });

  it('opens a new connection for the request after an answer that says connection: close', async () => {
    const server = await httpServer((_request, response) => {
      response.setHeader('connection', 'close');
      response.end('ok');
    });
    const pool = poolTo(server.url);
    await send(pool).answer;
    await send(pool).answer;
    expect(server.peers).toHaveLength(2);
  });

  it('does not reuse the connection of an HTTP/1.0 answer, and closes it itself', async () => {
    const server = await rawServer((_request, socket) =>
      socket.write('HTTP/1.0 200 OK\r\ncontent-length: 2\r\n\r\nok'),
    );
    const pool = poolTo(server.url);
    expect((await send(pool).answer).body.toString()).toBe('ok');
    await closedByPool(server.peers[0]);
    await send(pool).answer;
    expect(server.peers).toHaveLength(2);
  });

  // The servers of these two never close a connection: its close is the pool's.
  it("closes a connection itself at once when the server's keep-alive hint (timeout=1) leaves no second to spare", async () => {
    const server = await rawServer((_request, socket) =>
      socket.write('HTTP/1.1 200 OK\r\nkeep-alive: timeout=1, max=100\r\ncontent-length: 2\r\n\r\nok'),
    );
    const pool = poolTo(server.url, { keepAliveMs: 30_000 });
    expect((await send(pool).answer).body.toString()).toBe('ok');
    await closedByPool(server.peers[0]);
    await send(pool).answer;
    expect(server.peers).toHaveLength(2);
  });

  it('closes a connection itself once it has been idle for keepAliveMs, when the server would keep it longer', async () => {
    const server = await rawServer((_request, socket) =>
      socket.write('HTTP/1.1 200 OK\r\nkeep-alive: timeout=60\r\ncontent-length: 2\r\n\r\nok'),
    );
    const pool = poolTo(server.url, { keepAliveMs: 50 });
    await send(pool).answer;
    await closedByPool(server.peers[0]);
    await send(pool).answer;
    expect(server.peers).toHaveLength(2);
  });

  it('drops a connection on which bytes arrive while no request is in flight, and sends the next request on a new one', async () => {
    const server = await rawServer((_request, socket) => socket.write(OK));
    const pool = poolTo(server.url);
    expect((await send(pool).answer).body.toString()).toBe('ok');
    // The connection is free: an answer nobody asked for, which a later request would otherwise take for its own.
    server.peers[0]?.socket.write(OK);
    await closedByPool(server.peers[0]);
    expect((await send(pool).answer).body.toString()).toBe('ok');
    expect(server.peers).toHaveLength(2);
  });

  it('keeps an answer followed at once by bytes no request asked for, and drops its connection', async () => {
    const server = await rawServer((request, socket) =>
      socket.write(request.peer === 0 ? `${OK}HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nstale` : OK),
    );
    const pool = poolTo(server.url);
    expect((await send(pool).answer).body.toString()).toBe('ok');
    expect((await send(pool).answer).body.toString()).toBe('ok');
    expect(server.peers).toHaveLength(2);
    expect(server.peers[0]?.endedByPool).toBe(true);
  });
});

/** A chunked answer with chunk extensions (quoted, upper- and lower-case hex, padded sizes) and trailers. */
const CHUNKED = Buffer.from(
  'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\ntrailer: x-checksum\r\n\r\n' +
    '6;name=value\r\n{"stat\r\n' +
    '00e ; note="a;b"\r\nus":"AUTHORIZE\r\n' +
    '3\r\nD"}\r\n' +
    '0A\r\n,"ok":true\r\n' +
    '1\r\n}\r\n' +
    '0;last\r\nx-checksum: 123\r\nx-other: 4\r\n\r\n',
  'latin1',
);
const CHUNKED_BODY = '{"status":"AUTHORIZED"},"ok":true}';

describe('ConnectionPool: reading answers', () => {
  it('reads a chunked answer with chunk extensions and trailers, and reuses the connection after it', async () => {
    const server = await rawServer((request, socket) =>
      socket.write(request.path === '/chunked' ? CHUNKED : OK),
    );
    const pool = poolTo(server.url);
    const answer = await send(pool, { path: '/chunked' }).answer;
    expect(answer.status).toBe(200);
    expect(answer.body.toString()).toBe(CHUNKED_BODY);
    expect((await send(pool).answer).body.toString()).toBe('ok');
    expect(server.peers).toHaveLength(1);
  });

  it('reads a chunked answer written one byte at a time', async () => {
    const server = await rawServer((request, socket) => {
      if (request.path === '/chunked') void writeInPieces(socket, CHUNKED, everyByte(CHUNKED));
      else socket.write(OK);
    });
    const pool = poolTo(server.url);
    expect((await send(pool, { path: '/chunked' }).answer).body.toString()).toBe(CHUNKED_BODY);
    expect((await send(pool).answer).body.toString()).toBe('ok');
    expect(server.peers).toHaveLength(1);
  });

  it('reads a chunked answer cut in two at every position, all on one connection', async () => {
    let cut = 0;
    const server = await rawServer((_request, socket) => void writeInPieces(socket, CHUNKED, [cut]));
    const pool = poolTo(server.url);
    for (cut = 1; cut < CHUNKED.length; cut++) {
      expect((await send(pool).answer).body.toString(), `cut at ${cut}`).toBe(CHUNKED_BODY);
    }
    expect(server.peers).toHaveLength(1);
  });

  it('reads an answer with neither length nor chunks up to the close of the connection, and opens a new one after it', async () => {
    const head = 'HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\n';
    const server = await rawServer((request, socket) => {
      if (request.peer > 0) socket.write(OK);
      else
        void writeInPieces(socket, Buffer.from(`${head}hello world`), [
          head.length - 1,
          head.length + 5,
        ]).then(() => socket.end());
    });
    const pool = poolTo(server.url);
    expect((await send(pool).answer).body.toString()).toBe('hello world');
    expect((await send(pool).answer).body.toString()).toBe('ok');
    expect(server.peers).toHaveLength(2);
  });

  it('reads a 204 as an answer without a body, and sends the next request on the same connection', async () => {
    const server = await httpServer((request, response) => {
      if (request.url === '/empty') response.writeHead(204).end();
      else response.end('ok');
    });
    const pool = poolTo(server.url);
    const answer = await send(pool, { path: '/empty' }).answer;
    expect(answer.status).toBe(204);
    expect(answer.body).toHaveLength(0);
    expect((await send(pool).answer).body.toString()).toBe('ok');
    expect(server.peers).toHaveLength(1);
  });

  it('reads no body after the head of a 304 or of the answer to a HEAD, whatever their content-length says', async () => {
    const server = await rawServer((request, socket) => {
      if (request.method === 'HEAD') socket.write('HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n');
      else if (request.path === '/cached')
        socket.write('HTTP/1.1 304 Not Modified\r\ncontent-length: 5\r\n\r\n');
      else socket.write(OK);
    });
    const pool = poolTo(server.url);
    const head = await send(pool, { method: 'HEAD' }).answer;
    expect([head.status, head.headers['content-length'], head.body.length]).toEqual([200, '5', 0]);
    const cached = await send(pool, { path: '/cached' }).answer;
    expect([cached.status, cached.body.length]).toEqual([304, 0]);
    expect((await send(pool).answer).body.toString()).toBe('ok');
    expect(server.peers).toHaveLength(1);
  });

  it('passes over a 100 Continue and a 103 Early Hints to the real answer', async () => {
    const server = await rawServer((_request, socket) => {
      socket.write('HTTP/1.1 100 Continue\r\n\r\n');
      setImmediate(() =>
        socket.write(
          'HTTP/1.1 103 Early Hints\r\nlink: </style.css>; rel=preload\r\n\r\n' +
            'HTTP/1.1 201 Created\r\ncontent-length: 2\r\n\r\nok',
        ),
      );
    });
    const pool = poolTo(server.url);
    const answer = await send(pool, { method: 'POST', body: '{}' }).answer;
    expect(answer.status).toBe(201);
    expect(answer.headers.link).toBeUndefined();
    expect(answer.body.toString()).toBe('ok');
  });

  it('gives a header the answer repeats as an array of its values, in order', async () => {
    const server = await rawServer((_request, socket) =>
      socket.write(
        'HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nX-Dup: 1\r\nset-cookie: b=2\r\nx-dup:2\r\nX-DUP:  3 \r\ncontent-length: 0\r\n\r\n',
      ),
    );
    const pool = poolTo(server.url);
    const answer = await send(pool).answer;
    expect(answer.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    expect(answer.headers['x-dup']).toEqual(['1', '2', '3']);
    expect(answer.headers['content-length']).toBe('0');
  });

  it('yields exactly the body of any valid answer, framed by length or by chunks, however its bytes are split', async () => {
    let next: { bytes: Buffer; cuts: number[] } | undefined;
    const server = await rawServer((_request, socket) => {
      if (next !== undefined) void writeInPieces(socket, next.bytes, next.cuts);
    });
    const pool = poolTo(server.url);
    const answers = fc
      .record({
        body: fc.uint8Array({ maxLength: 1500 }),
        chunked: fc.boolean(),
        chunkCuts: fc.array(fc.nat(), { maxLength: 8 }),
        extensions: fc.boolean(),
        upperHex: fc.boolean(),
        trailers: fc.boolean(),
        cuts: fc.array(fc.nat(), { maxLength: 24 }),
      })
      .map((a) => {
        const body = Buffer.from(a.body);
        return { body, bytes: framed(body, a), cuts: a.cuts };
      });
    await fc.assert(
      fc.asyncProperty(answers, async ({ body, bytes, cuts }) => {
        next = { bytes, cuts: cuts.map((c) => c % bytes.length) };
        const answer = await send(pool).answer;
        expect(answer.status).toBe(200);
        expect(answer.body.equals(body)).toBe(true);
      }),
      { numRuns: 150 },
    );
    // Each answer ended exactly where its framing said: one connection carried them all.
    expect(server.peers).toHaveLength(1);
  });
});

/** An answer carrying `body`, framed by its length or in chunks cut at `chunkCuts`. */
function framed(
  body: Buffer,
  a: { chunked: boolean; chunkCuts: number[]; extensions: boolean; upperHex: boolean; trailers: boolean },
): Buffer {
  if (!a.chunked)
    return Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\ncontent-length: ${body.length}\r\n\r\n`), body]);
  const bounds = [...new Set([0, ...a.chunkCuts.map((c) => c % (body.length + 1)), body.length])].sort(
    (x, y) => x - y,
  );
  const parts: Buffer[] = [Buffer.from('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n')];
  const ext = a.extensions ? ';ext="x;y"' : '';
  for (let i = 1; i < bounds.length; i++) {
    const data = body.subarray(bounds[i - 1], bounds[i]);
    if (data.length === 0) continue;
    const size = data.length.toString(16);
    parts.push(Buffer.from(`${a.upperHex ? size.toUpperCase() : size}${ext}\r\n`), data, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from(`0${ext}\r\n${a.trailers ? 'x-checksum: 1\r\n' : ''}\r\n`));
  return Buffer.concat(parts);
}

describe('ConnectionPool: failures before anything is sent', () => {
  it('reports a refused connection as ECONNREFUSED, to every request waiting, none of them started', async () => {
    // A port nothing listens on: a server's, once closed.
    const closed = createNetServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const pool = poolTo(`http://127.0.0.1:${port}`, { connections: 2 });
    const sent = [send(pool), send(pool), send(pool)];
    for (const s of sent) {
      const { error, started } = await failure(s);
      expect(error).toMatchObject({ code: 'ECONNREFUSED' });
      expect(started).toBe(false);
    }
  });

  it('gives up on a connection not open within connectTimeoutMs (UND_ERR_CONNECT_TIMEOUT), the request not started', async () => {
    // A TLS handshake that never completes: the server accepts and never answers the client's hello. (A non-routable
    // address would leave the TCP connection itself unopened, but not every network drops it: some refuse it at once,
    // some intercept it.) The same deadline covers both: the connection is open once its handshake is done.
    const server = await rawServer(() => undefined);
    const pool = poolTo(server.url.replace('http:', 'https:'), { connectTimeoutMs: 100 });
    const { error, started } = await failure(send(pool, { path: '/pts/v2/payments' }));
    expect(error).toMatchObject({ code: 'UND_ERR_CONNECT_TIMEOUT' });
    expect(started).toBe(false);
    await settles((server.peers[0] as Peer).closed, 'the close of the connection');
    // Only the client's hello reached the server, nothing of the request.
    expect(Buffer.concat(server.peers[0]?.received ?? []).includes('/pts/v2/payments')).toBe(false);
  });

  const unsendable: { what: string; options: Partial<Dispatcher.DispatchOptions> }[] = [
    { what: 'a header value holding CR LF', options: { headers: { 'x-note': 'a\r\nx-injected: 1' } } },
    { what: 'a header value holding a lone LF', options: { headers: { 'x-note': 'a\nb' } } },
    { what: 'a header value holding a lone CR', options: { headers: { 'x-note': 'a\rb' } } },
    { what: 'a header value holding NUL', options: { headers: { 'x-note': 'a\0b' } } },
    { what: 'a header value beyond Latin-1', options: { headers: { 'x-note': '4,50 €' } } },
    { what: 'a header value holding an emoji', options: { headers: { 'x-note': 'ok 👍' } } },
    {
      what: 'one of the values of a header holding CR LF',
      options: { headers: { 'x-list': ['a', 'b\r\n'] } },
    },
    { what: 'a header name holding a space', options: { headers: { 'x note': '1' } } },
    { what: 'a header name holding a colon', options: { headers: { 'x:note': '1' } } },
    { what: 'a header name holding CR LF', options: { headers: { 'x\r\ny': '1' } } },
    { what: 'an empty header name', options: { headers: { '': '1' } } },
    { what: 'a header name beyond ASCII', options: { headers: { 'x-ü': '1' } } },
    { what: 'a content-length of its own', options: { headers: { 'Content-Length': '2' } } },
    { what: 'a transfer-encoding of its own', options: { headers: { 'transfer-encoding': 'chunked' } } },
    { what: 'a connection header of its own', options: { headers: { connection: 'close' } } },
    { what: 'two host headers', options: { headers: { host: 'a.example', Host: 'b.example' } } },
    { what: 'a host header with two values', options: { headers: { host: ['a.example', 'b.example'] } } },
    { what: 'headers as a flat list', options: { headers: ['x-a', '1'] } },
    { what: 'a path holding a space', options: { path: '/a b' } },
    { what: 'a path that is not absolute', options: { path: 'pts/v2/payments' } },
    {
      what: 'a path beyond Latin-1 whose characters end in the bytes CR LF',
      options: { path: '/a\u010d\u010ax-injected:1' },
    },
    { what: 'a method that is not a token', options: { method: 'GET /x' } },
    { what: 'a body that is a stream', options: { method: 'POST', body: Readable.from(['{}']) } },
  ];

  it.each(unsendable)(
    'refuses a request with $what (UND_ERR_INVALID_ARG): not started, nothing reaches the server',
    async ({ options }) => {
      const server = await httpServer((_request, response) => response.end('ok'));
      const pool = poolTo(server.url);
      const refused = send(pool, { path: '/refused', ...options });
      const { error, started } = await failure(refused);
      expect(error).toMatchObject({ code: 'UND_ERR_INVALID_ARG' });
      expect(started).toBe(false);
      expect(refused.accepted).toBe(false);
      // The next request is the first and only one the server sees, on the only connection.
      await send(pool, { path: '/next' }).answer;
      expect(server.requests.map((r) => r.path)).toEqual(['/next']);
      expect(server.peers).toHaveLength(1);
    },
  );
});

/** What a misbehaving server does with the first request; the requests on later connections are answered OK. */
const misbehaviours: { what: string; answer: (socket: Socket) => void; code: string[]; message: RegExp }[] = [
  {
    what: 'a reset before any answer',
    answer: (s) => s.resetAndDestroy(),
    code: ['ECONNRESET', 'UND_ERR_SOCKET'],
    message: /./,
  },
  {
    what: 'a close before any answer',
    answer: (s) => s.end(),
    code: ['UND_ERR_SOCKET'],
    message: /closed before an answer/,
  },
  {
    what: 'a close in the middle of the head',
    answer: (s) => s.end('HTTP/1.1 200 OK\r\ncontent-le'),
    code: ['UND_ERR_SOCKET'],
    message: /closed before an answer/,
  },
  {
    what: 'a body cut short of its content-length',
    answer: (s) => s.end('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabcd'),
    code: ['UND_ERR_SOCKET'],
    message: /cut short/,
  },
  {
    what: 'a chunked body cut short in a chunk',
    answer: (s) => s.end('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nab'),
    code: ['UND_ERR_SOCKET'],
    message: /cut short/,
  },
  {
    what: 'a chunked body cut short before its last chunk',
    answer: (s) => s.end('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n'),
    code: ['UND_ERR_SOCKET'],
    message: /cut short/,
  },
  {
    what: 'bytes that are not HTTP',
    answer: (s) => s.write('SSH-2.0-OpenSSH_9.6\r\n\r\n'),
    code: ['HTTP_MALFORMED_ANSWER'],
    message: /status line/,
  },
  {
    what: 'bytes that are not HTTP, then the close',
    answer: (s) => s.end(Buffer.from([0x16, 0x03, 0x01, 0x00, 0x02, 0x02, 0x28])),
    code: ['UND_ERR_SOCKET'],
    message: /closed before an answer/,
  },
  {
    what: 'a head longer than maxHeadBytes',
    answer: (s) => s.write(`HTTP/1.1 200 OK\r\nx-big: ${'a'.repeat(2_000)}\r\ncontent-length: 0\r\n\r\n`),
    code: ['HTTP_MALFORMED_ANSWER'],
    message: /head longer than 1024 bytes/,
  },
  {
    what: 'a head that grows past maxHeadBytes without ending',
    answer: (s) => s.write(`HTTP/1.1 200 OK\r\nx-big: ${'a'.repeat(2_000)}`),
    code: ['HTTP_MALFORMED_ANSWER'],
    message: /head longer than 1024 bytes/,
  },
  {
    what: 'a header line that is no name and value',
    answer: (s) => s.write('HTTP/1.1 200 OK\r\nno colon here\r\ncontent-length: 0\r\n\r\n'),
    code: ['HTTP_MALFORMED_ANSWER'],
    message: /header line/,
  },
  {
    what: 'a content-length that is not a number',
    answer: (s) => s.write('HTTP/1.1 200 OK\r\ncontent-length: 2x\r\n\r\nok'),
    code: ['HTTP_MALFORMED_ANSWER'],
    message: /content-length/,
  },
  {
    what: 'a negative content-length',
    answer: (s) => s.write('HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\nok'),
    code: ['HTTP_MALFORMED_ANSWER'],
    message: /content-length/,
  },
  {
    what: 'two different content-lengths',
    answer: (s) => s.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\nok!'),
    code: ['HTTP_MALFORMED_ANSWER'],
    message: /content-length/,
  },
  {
    what: 'an unknown transfer-encoding',
    answer: (s) => s.write('HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\n\r\nok'),
    code: ['HTTP_MALFORMED_ANSWER'],
    message: /transfer coding/,
  },
  {
    what: 'a chunk size that is not hexadecimal',
    answer: (s) => s.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\nok\r\n0\r\n\r\n'),
    code: ['HTTP_MALFORMED_ANSWER'],
    message: /chunk size/,
  },
  {
    what: 'a negative chunk size',
    answer: (s) => s.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n-2\r\nok\r\n0\r\n\r\n'),
    code: ['HTTP_MALFORMED_ANSWER'],
    message: /chunk size/,
  },
  {
    what: 'a chunk-size line that never ends',
    answer: (s) => s.write(`HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2;${'x'.repeat(2_000)}`),
    code: ['HTTP_MALFORMED_ANSWER'],
    message: /chunk line/,
  },
  {
    what: 'chunk data longer than its size',
    answer: (s) => s.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nokay\r\n0\r\n\r\n'),
    code: ['HTTP_MALFORMED_ANSWER'],
    message: /longer than its size/,
  },
  {
    what: 'an upgrade nobody asked for',
    answer: (s) => s.write('HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\n\r\n'),
    code: ['HTTP_MALFORMED_ANSWER'],
    message: /upgrade/,
  },
];

describe('ConnectionPool: failures once the request is sent', () => {
  it.each(misbehaviours)(
    'reports $what as a failure of a started request, and sends the next request on a new connection',
    async ({ answer, code, message }) => {
      const server = await rawServer((request, socket) => {
        if (request.peer === 0) answer(socket);
        else socket.write(OK);
      });
      const pool = poolTo(server.url, { maxHeadBytes: 1024 });
      const { error, started } = await failure(
        send(pool, { method: 'POST', path: '/pts/v2/payments', body: '{}' }),
      );
      expect(code).toContain(error.code);
      expect(error.message).toMatch(message);
      // Started: the transport reads the payment's outcome as unknown.
      expect(started).toBe(true);
      // Never reused: the pool closed it, if the server had not.
      await settles((server.peers[0] as Peer).closed, 'the close of the connection');
      expect((await send(pool).answer).body.toString()).toBe('ok');
      expect(server.peers).toHaveLength(2);
    },
  );

  it("takes its handler's own failure while the answer is read as a failure of the answer, and drops the connection", async () => {
    const server = await rawServer((_request, socket) => socket.write(OK));
    const pool = poolTo(server.url);
    const { error, started } = await failure(
      send(
        pool,
        {},
        {
          onData: () => {
            throw new Error('the handler broke');
          },
        },
      ),
    );
    expect(error).toMatchObject({ code: 'UND_ERR_SOCKET', cause: { message: 'the handler broke' } });
    expect(started).toBe(true);
    await settles((server.peers[0] as Peer).closed, 'the close of the connection');
    await send(pool).answer;
    expect(server.peers).toHaveLength(2);
  });
});

describe('ConnectionPool: abort', () => {
  it('stops a request aborted through its controller while it waits for the answer, and never reuses the connection', async () => {
    // The first connection never answers; later ones do.
    const server = await rawServer((request, socket) => {
      if (request.peer > 0) socket.write(OK);
    });
    const pool = poolTo(server.url);
    const waiting = send(pool, { method: 'POST', path: '/pts/v2/payments', body: '{}' });
    await server.received(1);
    const reason = new Error('no answer in time');
    waiting.controller()?.abort(reason);
    const { error, started } = await failure(waiting);
    expect(error).toBe(reason);
    expect(started).toBe(true);
    await closedByPool(server.peers[0]);
    expect((await send(pool).answer).body.toString()).toBe('ok');
    expect(server.peers).toHaveLength(2);
  });

  it('writes nothing of a request aborted as soon as it is started (its caller gave up before)', async () => {
    const server = await rawServer((_request, socket) => socket.write(OK));
    const pool = poolTo(server.url);
    const reason = new Error('cancelled');
    const { error } = await failure(send(pool, { path: '/cancelled' }, { onStart: (c) => c.abort(reason) }));
    expect(error).toBe(reason);
    await settles((server.peers[0] as Peer).closed, 'the close of the connection');
    expect(server.peers[0]?.received).toEqual([]);
  });

  it('never sends a request whose handler gave up while it waited for a free connection: it fails with the reason', async () => {
    const held: Socket[] = [];
    const server = await rawServer((request, socket) => {
      if (request.path === '/stalls') held.push(socket);
      else socket.write(OK);
    });
    const pool = poolTo(server.url, { connections: 1 });
    const first = send(pool, { path: '/stalls' });
    await server.received(1);
    // As the transport's handler does: it gave up (its deadline) before it had a controller, and aborts when given one.
    const reason = new Error('no answer in time');
    let gaveUp = false;
    const second = send(pool, { path: '/gave-up' }, { onStart: (c) => gaveUp && c.abort(reason) });
    await turns(3);
    expect(second.started()).toBe(false);
    gaveUp = true;
    held[0]?.write(OK);
    expect((await first.answer).body.toString()).toBe('ok');
    expect((await failure(second)).error).toBe(reason);
    expect((await send(pool, { path: '/after' }).answer).body.toString()).toBe('ok');
    expect(server.requests.map((r) => r.path)).toEqual(['/stalls', '/after']);
  });

  it('stops reading an answer aborted in the middle of its body, and never reuses the connection', async () => {
    const server = await rawServer((request, socket) => {
      if (request.peer === 0) socket.write('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nfirst part');
      else socket.write(OK);
    });
    const pool = poolTo(server.url);
    // As the transport does with an answer larger than it reads.
    const reason = new Error('answer too large');
    const { error, started } = await failure(send(pool, {}, { onData: (c) => c.abort(reason) }));
    expect(error).toBe(reason);
    expect(started).toBe(true);
    await settles((server.peers[0] as Peer).closed, 'the close of the connection');
    await send(pool).answer;
    expect(server.peers).toHaveLength(2);
  });

  it('ignores an abort after the answer is complete: the connection serves the next request', async () => {
    const server = await rawServer((_request, socket) => socket.write(OK));
    const pool = poolTo(server.url);
    const sent = send(pool);
    await sent.answer;
    sent.controller()?.abort(new Error('too late'));
    await send(pool).answer;
    expect(server.peers).toHaveLength(1);
  });
});

describe('ConnectionPool: close', () => {
  it('waits for the request in flight to be answered, then resolves', async () => {
    const held: Socket[] = [];
    const server = await rawServer((_request, socket) => held.push(socket));
    const pool = poolTo(server.url);
    const sent = send(pool);
    await server.received(1);
    let closed = false;
    const closing = pool.close().then(() => {
      closed = true;
      return sent.settled();
    });
    await turns(5);
    expect(closed).toBe(false);
    held[0]?.write(OK);
    expect((await sent.answer).body.toString()).toBe('ok');
    // Resolved only once the handler had its whole answer.
    expect(await closing).toBe(true);
    await closedByPool(server.peers[0]);
  });

  it.each(['keep-alive', 'close'])(
    'answers the requests still waiting for a connection before it resolves (answers with connection: %s)',
    async (connection) => {
      const server = await httpServer((request, response) => {
        response.setHeader('connection', connection);
        response.end(request.url);
      });
      const pool = poolTo(server.url, { connections: 1 });
      const sent = ['/1', '/2', '/3'].map((path) => send(pool, { path }));
      await settles(pool.close(), 'close()');
      const answers = await Promise.all(sent.map((s) => s.answer));
      expect(answers.map((a) => a.body.toString())).toEqual(['/1', '/2', '/3']);
    },
  );

  it('refuses a request dispatched after close() (UND_ERR_CLOSED), without starting it', async () => {
    const server = await httpServer((_request, response) => response.end('ok'));
    const pool = poolTo(server.url);
    await pool.close();
    const refused = send(pool);
    expect(refused.accepted).toBe(false);
    const { error, started } = await failure(refused);
    expect(error).toMatchObject({ code: 'UND_ERR_CLOSED' });
    expect(started).toBe(false);
    expect(server.peers).toHaveLength(0);
  });

  it('resolves at once when its connections are idle, and closes them', async () => {
    const server = await rawServer((_request, socket) => socket.write(OK));
    const pool = poolTo(server.url);
    await Promise.all([send(pool).answer, send(pool).answer]);
    expect(server.peers).toHaveLength(2);
    await pool.close();
    for (const peer of server.peers) await closedByPool(peer);
  });

  it('resolves when the request in flight fails', async () => {
    const server = await rawServer((_request, socket) => socket.end());
    const pool = poolTo(server.url);
    const sent = send(pool);
    await server.received(1);
    await settles(pool.close(), 'close()');
    expect((await failure(sent)).error).toMatchObject({ code: 'UND_ERR_SOCKET' });
  });
});
