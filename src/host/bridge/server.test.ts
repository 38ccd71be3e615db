import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServer } from 'node:net';
import type { TerminalApi, TerminalSnapshot, WsMessage } from '../api.js';
import { FakeTerminal, FAKE_PIN } from '../../../test/e2e/fake-terminal.js';
import {
  makeStaticDir,
  openSocket,
  ownHost,
  rawRequest,
  SocketLog,
} from '../../../test/e2e/bridge-client.js';
import { BridgeError, contentSecurityPolicy, startBridge, type Bridge } from './server.js';
import { MAX_MESSAGE_BYTES } from './protocol.js';
import { MAX_CONNECTIONS } from '../../gateway/server-limits.js';
import { createLogger } from '../../log/index.js';
import { slowClient, within } from '../../gateway/testing/raw-request.js';
import { uiCheck } from '../service-watchdog.js';

let dir: Awaited<ReturnType<typeof makeStaticDir>>;
let bridge: Bridge;
let fake: FakeTerminal;

beforeEach(async () => {
  dir = await makeStaticDir();
  fake = new FakeTerminal({ stepMs: 5 });
  bridge = await startBridge(fake, { port: 0, staticDir: dir.staticDir });
});

afterEach(async () => {
  fake.dispose();
  await bridge.close();
  await dir.cleanup();
});

function auth(): Record<string, string> {
  return { ...ownHost(bridge.port) };
}

async function sessionCookie(): Promise<string> {
  const res = await rawRequest(bridge.port, `/?s=${bridge.secret}`, auth());
  const setCookie = res.headers['set-cookie']?.[0] ?? '';
  return setCookie.split(';')[0]!;
}

async function connect(): Promise<SocketLog> {
  const outcome = await openSocket(bridge.port, `/ws?s=${bridge.secret}`, {
    ...auth(),
    Origin: `http://127.0.0.1:${bridge.port}`,
  });
  if (!outcome.opened) throw new Error(`refused with ${outcome.status}`);
  return new SocketLog(outcome.socket);
}

describe('bridge HTTP', () => {
  it('prints a URL on 127.0.0.1 carrying a fresh secret each start', async () => {
    expect(bridge.url).toBe(`http://127.0.0.1:${bridge.port}/?s=${bridge.secret}`);
    expect(bridge.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const other = await startBridge(fake, { port: 0, staticDir: dir.staticDir });
    expect(other.secret).not.toBe(bridge.secret);
    await other.close();
  });

  it('exchanges the secret for an HttpOnly SameSite=Strict cookie and redirects it out of the address bar', async () => {
    const res = await rawRequest(bridge.port, `/?s=${bridge.secret}`, auth());
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/');
    const cookie = res.headers['set-cookie']?.[0] ?? '';
    expect(cookie).toMatch(
      new RegExp(`^pt_session_${bridge.port}=[A-Za-z0-9_-]+; Path=/; HttpOnly; SameSite=Strict$`),
    );
    expect(cookie).not.toContain(bridge.secret);
  });

  it('serves the page to a session cookie with the strict security headers', async () => {
    const res = await rawRequest(bridge.port, '/', { ...auth(), Cookie: await sessionCookie() });
    expect(res.status).toBe(200);
    expect(res.body).toContain('<h1>Parking</h1>');
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toBe(contentSecurityPolicy(bridge.port));
    expect(res.headers['content-security-policy']).toBe(
      `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self' ws://127.0.0.1:${bridge.port}; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`,
    );
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
  });

  it('refuses a forged session cookie and a cookie of another port', async () => {
    const good = await sessionCookie();
    const value = good.split('=')[1]!;
    expect(
      (await rawRequest(bridge.port, '/', { ...auth(), Cookie: `pt_session_${bridge.port}=x${value}` }))
        .status,
    ).toBe(401);
    expect((await rawRequest(bridge.port, '/', { ...auth(), Cookie: `pt_session_1=${value}` })).status).toBe(
      401,
    );
  });

  it('serves assets with their content type and answers HEAD without a body', async () => {
    const cookie = await sessionCookie();
    const js = await rawRequest(bridge.port, '/assets/app.js', { ...auth(), Cookie: cookie });
    expect(js.status).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    const head = await rawRequest(bridge.port, '/assets/app.js', { ...auth(), Cookie: cookie }, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
  });

  it.each([
    ['/../secret.txt'],
    ['/assets/../../secret.txt'],
    ['/%2e%2e/secret.txt'],
    ['/assets/%2e%2e%2f%2e%2e%2fsecret.txt'],
    ['/..%5csecret.txt'],
    ['/assets/link.txt'],
    ['/assets'],
    ['/assets/'],
    ['/%00'],
    ['/%E0%A4%A'],
  ])('never serves anything outside the renderer directory (%s)', async (path) => {
    const res = await rawRequest(bridge.port, path, { ...auth(), Cookie: await sessionCookie() });
    expect([400, 404]).toContain(res.status);
    expect(res.body).not.toContain('TOP SECRET');
  });

  it('refuses methods other than GET and HEAD', async () => {
    const res = await rawRequest(bridge.port, '/', { ...auth(), Cookie: await sessionCookie() }, 'POST');
    expect(res.status).toBe(405);
  });

  it('fails with BRIDGE_STATIC_DIR when the renderer was not built', async () => {
    const err = await startBridge(fake, { port: 0, staticDir: `${dir.root}/missing` }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(BridgeError);
    expect((err as BridgeError).code).toBe('BRIDGE_STATIC_DIR');
  });

  it('fails with BRIDGE_LISTEN when the port is taken', async () => {
    const err = await startBridge(fake, { port: bridge.port, staticDir: dir.staticDir }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(BridgeError);
    expect((err as BridgeError).code).toBe('BRIDGE_LISTEN');
  });

  it('frees its port on close', async () => {
    const port = bridge.port;
    await bridge.close();
    await bridge.close();
    await new Promise<void>((resolve, reject) => {
      const s = createServer();
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => s.close(() => resolve()));
    });
  });
});

describe('bridge liveness (the headless UI check of the kiosk service)', () => {
  it('is alive while it serves, with no screen connected, and goes stale once it no longer serves', async () => {
    const staleMs = 5_000;
    const check = uiCheck(() => bridge.lastAliveMs(), staleMs, 0);
    const before = Date.now();
    expect(bridge.lastAliveMs()).toBeGreaterThanOrEqual(before);
    expect(check.healthy(Date.now())).toBe(true);

    await bridge.close();
    const stopped = bridge.lastAliveMs();
    expect(stopped).toBeGreaterThanOrEqual(before);
    expect(bridge.lastAliveMs()).toBe(stopped);
    expect(check.healthy(stopped + staleMs - 1)).toBe(true);
    expect(check.healthy(stopped + staleMs)).toBe(false);
  });
});

describe('bridge WebSocket', () => {
  it('accepts the session cookie as proof of the secret', async () => {
    const outcome = await openSocket(bridge.port, '/ws', {
      ...auth(),
      Origin: `http://localhost:${bridge.port}`,
      Cookie: await sessionCookie(),
    });
    expect(outcome.opened).toBe(true);
    if (outcome.opened) outcome.socket.close();
  });

  it('answers snapshot, send and operator requests with their results', async () => {
    const log = await connect();
    const snap = await log.ask(JSON.stringify({ id: 1, method: 'snapshot' }), 1);
    expect(snap).toMatchObject({ id: 1, result: { ok: true, value: { customer: { screen: 'idle' } } } });
    // The page is the customer's screen: the operator status never travels to it with a snapshot.
    expect(JSON.stringify(snap)).not.toContain('"status"');
    const sent = await log.ask(JSON.stringify({ id: 2, method: 'send', params: { type: 'START' } }), 2);
    expect(JSON.stringify(sent)).not.toContain('"status"');
    expect(sent).toMatchObject({
      id: 2,
      result: { ok: true, value: { customer: { screen: 'enter-ticket' } } },
    });
    const op = await log.ask(
      JSON.stringify({
        id: 3,
        method: 'operator',
        params: { pin: FAKE_PIN, action: { type: 'flush-queue' } },
      }),
      3,
    );
    expect(op).toMatchObject({ id: 3, result: { ok: true, value: { type: 'flush-queue' } } });
    const refused = await log.ask(JSON.stringify({ id: 4, method: 'send', params: { type: 'DONE' } }), 4);
    expect(refused).toMatchObject({ id: 4, result: { ok: false, error: { code: 'NOT_ALLOWED_NOW' } } });
    const active = await log.ask(JSON.stringify({ id: 5, method: 'send', params: { type: 'ACTIVITY' } }), 5);
    expect(active).toMatchObject({ id: 5, result: { ok: true } });
    expect(fake.activity).toBe(1);
    log.socket.close();
  });

  it('pushes every snapshot to every open socket', async () => {
    const a = await connect();
    const b = await connect();
    await a.ask(JSON.stringify({ id: 1, method: 'send', params: { type: 'START' } }), 1);
    const isEnterTicket = (m: WsMessage): boolean =>
      'type' in m && m.snapshot.customer.screen === 'enter-ticket';
    await expect(a.next(isEnterTicket)).resolves.toBeTruthy();
    await expect(b.next(isEnterTicket)).resolves.toBeTruthy();
    a.socket.close();
    b.socket.close();
  });

  it('unsubscribes a socket when it closes', async () => {
    const a = await connect();
    expect(fake.subscribers).toBe(1);
    const closed = new Promise((r) => a.socket.once('close', r));
    a.socket.close();
    await closed;
    await expect.poll(() => fake.subscribers).toBe(0);
  });

  it('tells the terminal that a page gone away has stopped saying what it said it was saying', async () => {
    const report = (
      id: number,
      speaking: boolean,
    ): { type: 'SPEECH_STATE'; id: number; speaking: boolean } => ({
      type: 'SPEECH_STATE',
      id,
      speaking,
    });
    const speaking = await connect();
    const silent = await connect();
    const ask = (log: SocketLog, id: number, event: object): Promise<WsMessage> =>
      log.ask(JSON.stringify({ id, method: 'send', params: event }), id);
    const first = fake.speechStates.length;
    await ask(speaking, 1, report(3, true));
    await ask(speaking, 2, report(3, false));
    await ask(speaking, 3, report(4, true));
    await ask(silent, 1, report(2, true));
    await ask(silent, 2, report(2, false));
    // Each page's reports name the page they are from, one of its own.
    const pageOf = (i: number): unknown => (fake.speechStates[first + i] as { page?: unknown }).page;
    expect(pageOf(0)).toEqual(expect.any(Number));
    expect([pageOf(1), pageOf(2)]).toEqual([pageOf(0), pageOf(0)]);
    expect(pageOf(3)).not.toBe(pageOf(0));
    const told = fake.speechStates.length;
    speaking.socket.close();
    silent.socket.close();
    await expect.poll(() => fake.subscribers).toBe(0);
    // The page still saying utterance 4 is gone: its end is told, once, as its own; the other page had said all it
    // said.
    expect(fake.speechStates.slice(told)).toEqual([{ ...report(4, false), page: pageOf(0) }]);
  });

  it.each([
    ['not JSON', '{"id": 1,', null, 'BAD_MESSAGE'],
    ['a JSON number', '42', null, 'BAD_REQUEST'],
    ['null', 'null', null, 'BAD_REQUEST'],
    ['an unknown method', '{"id": 5, "method": "shutdown"}', 5, 'BAD_REQUEST'],
    ['an unknown event', '{"id": 6, "method": "send", "params": {"type": "PAY_NOTHING"}}', 6, 'BAD_REQUEST'],
    ['an extra field', '{"id": 7, "method": "send", "params": {"type": "START", "x": 1}}', 7, 'BAD_REQUEST'],
    [
      'a fractional amount',
      '{"id": 8, "method": "send", "params": {"type": "ENTER_AMOUNT", "minor": 1.5}}',
      8,
      'BAD_REQUEST',
    ],
    [
      'an echo longer than a control’s name',
      `{"id": 10, "method": "send", "params": {"type": "ECHO", "text": "${'x'.repeat(201)}"}}`,
      10,
      'BAD_REQUEST',
    ],
    [
      'an empty echo',
      '{"id": 11, "method": "send", "params": {"type": "ECHO", "text": " "}}',
      11,
      'BAD_REQUEST',
    ],
    [
      'an activity carrying what was typed',
      '{"id": 12, "method": "send", "params": {"type": "ACTIVITY", "text": "42"}}',
      12,
      'BAD_REQUEST',
    ],
    [
      'a speech report of no utterance',
      '{"id": 13, "method": "send", "params": {"type": "SPEECH_STATE", "id": 0, "speaking": true}}',
      13,
      'BAD_REQUEST',
    ],
    [
      'a speech report of a fractional utterance',
      '{"id": 14, "method": "send", "params": {"type": "SPEECH_STATE", "id": 1.5, "speaking": true}}',
      14,
      'BAD_REQUEST',
    ],
    [
      'a speech report that is neither a start nor an end',
      '{"id": 15, "method": "send", "params": {"type": "SPEECH_STATE", "id": 1, "speaking": "yes"}}',
      15,
      'BAD_REQUEST',
    ],
    [
      'a speech report naming a page (the transport names it)',
      '{"id": 17, "method": "send", "params": {"type": "SPEECH_STATE", "id": 1, "speaking": false, "page": 1}}',
      17,
      'BAD_REQUEST',
    ],
    [
      'a speech report carrying more',
      '{"id": 16, "method": "send", "params": {"type": "SPEECH_STATE", "id": 1, "speaking": true, "ms": 9}}',
      16,
      'BAD_REQUEST',
    ],
    ['a negative id', '{"id": -1, "method": "snapshot"}', null, 'BAD_REQUEST'],
    [
      'an operator request without PIN',
      '{"id": 9, "method": "operator", "params": {"action": {"type": "flush-queue"}}}',
      9,
      'BAD_REQUEST',
    ],
  ])('answers %s with a typed error and stays usable', async (_name, payload, id, code) => {
    const log = await connect();
    const reply = await log.ask(payload, id);
    expect(reply).toMatchObject({ id, result: { ok: false, error: { code } } });
    const after = await log.ask(JSON.stringify({ id: 100, method: 'snapshot' }), 100);
    expect(after).toMatchObject({ id: 100, result: { ok: true } });
    log.socket.close();
  });

  it('answers a binary frame with BAD_MESSAGE', async () => {
    const log = await connect();
    const reply = await log.ask(Buffer.from(JSON.stringify({ id: 1, method: 'snapshot' })), null, true);
    expect(reply).toMatchObject({ id: null, result: { ok: false, error: { code: 'BAD_MESSAGE' } } });
    log.socket.close();
  });

  it('closes a socket that sends a message above the size bound, and keeps serving others', async () => {
    const big = await connect();
    const closed = new Promise<number>((r) => big.socket.once('close', (code: number) => r(code)));
    big.socket.send('x'.repeat(MAX_MESSAGE_BYTES + 1));
    expect(await closed).toBe(1009);
    const other = await connect();
    expect(await other.ask(JSON.stringify({ id: 1, method: 'snapshot' }), 1)).toMatchObject({
      result: { ok: true },
    });
    other.socket.close();
  });

  it('answers INTERNAL when TerminalApi throws instead of returning a Result', async () => {
    const broken: TerminalApi = {
      snapshot: () => Promise.reject(new Error('database is locked')),
      send: () => {
        throw new Error('sync throw');
      },
      operator: () => Promise.resolve(undefined as never),
      subscribe: () => () => undefined,
    };
    const b = await startBridge(broken, { port: 0, staticDir: dir.staticDir });
    const outcome = await openSocket(b.port, `/ws?s=${b.secret}`, {
      Host: `127.0.0.1:${b.port}`,
      Origin: `http://127.0.0.1:${b.port}`,
    });
    if (!outcome.opened) throw new Error('refused');
    const log = new SocketLog(outcome.socket);
    for (const [id, body] of [
      [1, { id: 1, method: 'snapshot' }],
      [2, { id: 2, method: 'send', params: { type: 'START' } }],
      [3, { id: 3, method: 'operator', params: { pin: '1', action: { type: 'flush-queue' } } }],
    ] as const) {
      const reply = await log.ask(JSON.stringify(body), id);
      expect(reply).toMatchObject({ id, result: { ok: false, error: { code: 'INTERNAL' } } });
      expect(JSON.stringify(reply)).not.toContain('database is locked');
    }
    outcome.socket.close();
    await b.close();
  });

  it('answers BUSY beyond the in-flight bound instead of queueing without limit', async () => {
    const pending: ((v: { ok: true; value: TerminalSnapshot }) => void)[] = [];
    const slow: TerminalApi = {
      snapshot: () => new Promise((resolve) => pending.push(resolve)),
      send: () => Promise.reject(new Error('unused')),
      operator: () => Promise.reject(new Error('unused')),
      subscribe: () => () => undefined,
    };
    const b = await startBridge(slow, { port: 0, staticDir: dir.staticDir });
    const outcome = await openSocket(b.port, `/ws?s=${b.secret}`, {
      Host: `127.0.0.1:${b.port}`,
      Origin: `http://127.0.0.1:${b.port}`,
    });
    if (!outcome.opened) throw new Error('refused');
    const log = new SocketLog(outcome.socket);
    for (let id = 1; id <= 8; id++) outcome.socket.send(JSON.stringify({ id, method: 'snapshot' }));
    const busy = await log.ask(JSON.stringify({ id: 9, method: 'snapshot' }), 9);
    expect(busy).toMatchObject({ id: 9, result: { ok: false, error: { code: 'BUSY' } } });
    outcome.socket.close();
    await b.close();
  });
});

describe('bridge slow and idle clients', () => {
  it('drops a client that trickles its headers once the header timeout has passed', async () => {
    const slow = slowClient(bridge.port, 'GET / HTTP/1.1\r\n', 'X-Slow: 1\r\n');
    // The header timeout is 5 s: not half a minute of a connection held by a client that never finishes.
    const closedAfter = await within(slow.closed, 8_000);
    slow.socket.destroy();
    expect(closedAfter).not.toBe('pending');
  }, 15_000);

  it('drops a client that trickles a body the bridge refused once the request timeout has passed', async () => {
    const host = `127.0.0.1:${bridge.port}`;
    const slow = slowClient(
      bridge.port,
      `POST / HTTP/1.1\r\nHost: ${host}\r\nTransfer-Encoding: chunked\r\n\r\n`,
      '1\r\na\r\n',
    );
    const closedAfter = await within(slow.closed, 13_000);
    slow.socket.destroy();
    expect(closedAfter).not.toBe('pending');
  }, 20_000);

  it('holds a bounded number of connections: those beyond the bound are closed at once', async () => {
    const clients = Array.from({ length: MAX_CONNECTIONS + 40 }, () => slowClient(bridge.port, ''));
    const closed = await Promise.all(clients.map((c) => within(c.closed, 1_000)));
    for (const c of clients) c.socket.destroy();
    expect(closed.filter((c) => c !== 'pending').length).toBeGreaterThanOrEqual(40);
    // Once they are gone, the kiosk's page is served again.
    await Promise.all(clients.map((c) => c.closed));
    expect((await rawRequest(bridge.port, `/?s=${bridge.secret}`, auth())).status).toBe(303);
  });
});

describe('bridge refusals in the log', () => {
  it('logs a burst of refused requests, then counts the rest in one summary line, not a line each', async () => {
    const lines: { msg: string; dropped?: number }[] = [];
    const logger = createLogger({
      level: 'warn',
      destination: { write: (line: string) => void lines.push(JSON.parse(line) as { msg: string }) },
    });
    const b = await startBridge(fake, { port: 0, staticDir: dir.staticDir, logger });
    // Any process on the machine can send these without the secret, as fast as it likes.
    for (let i = 0; i < 300; i++)
      expect((await rawRequest(b.port, '/', { Host: `127.0.0.1:${b.port}` })).status).toBe(401);
    await b.close();
    const refused = lines.filter((l) => l.msg !== 'bridge listening on 127.0.0.1');
    expect(refused.length).toBeLessThanOrEqual(25);
    expect(refused.at(-1)).toMatchObject({ dropped: 300 - (refused.length - 1) });
  });
});
