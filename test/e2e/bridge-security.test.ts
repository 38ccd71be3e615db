import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBridge, type Bridge } from '../../src/host/bridge/server.js';
import { makeStaticDir, openSocket, rawRequest } from './bridge-client.js';
import { FakeTerminal } from './fake-terminal.js';

/**
 * DESIGN.md, Runtime shape: the headless bridge is a door into a payment terminal. It must refuse every request whose
 * Host or Origin is not its own (DNS rebinding, cross-site WebSocket hijacking) and serve the UI and the API only to
 * holders of the secret of this run.
 */

let dir: Awaited<ReturnType<typeof makeStaticDir>>;
let bridge: Bridge;
let fake: FakeTerminal;
let port: number;
let cookie: string;

beforeAll(async () => {
  dir = await makeStaticDir();
  fake = new FakeTerminal();
  bridge = await startBridge(fake, { port: 0, staticDir: dir.staticDir });
  port = bridge.port;
  const exchange = await rawRequest(port, `/?s=${bridge.secret}`, { Host: `127.0.0.1:${port}` });
  cookie = (exchange.headers['set-cookie']?.[0] ?? '').split(';')[0]!;
  expect(cookie).toMatch(/^pt_session_\d+=/);
});

afterAll(async () => {
  fake.dispose();
  await bridge.close();
  await dir.cleanup();
});

/** Header sets that each carry exactly one fault and the proof of the secret otherwise. */
function foreign(): [string, Record<string, string>, number[]][] {
  const own = `127.0.0.1:${port}`;
  const origin = `http://${own}`;
  return [
    [
      'a rebound DNS name as Host',
      { Host: `evil.example:${port}`, Origin: `http://evil.example:${port}` },
      [403],
    ],
    ['a rebound DNS name as Host, no Origin', { Host: `evil.example:${port}` }, [403]],
    ['another port in Host', { Host: `127.0.0.1:${port + 1}`, Origin: origin }, [403]],
    // Node's HTTP parser itself refuses an HTTP/1.1 request without Host (400) before the bridge sees it.
    ['no Host at all', { Origin: origin }, [400, 403]],
    ['a Host without port', { Host: '127.0.0.1', Origin: origin }, [403]],
    ['a foreign Origin', { Host: own, Origin: 'http://evil.example' }, [403]],
    ['Origin null', { Host: own, Origin: 'null' }, [403]],
    ['an Origin on another port', { Host: own, Origin: `http://127.0.0.1:${port + 1}` }, [403]],
    ['an https Origin', { Host: own, Origin: `https://${own}` }, [403]],
    ['a cross-site fetch', { Host: own, Origin: origin, 'Sec-Fetch-Site': 'cross-site' }, [403]],
  ];
}

describe('bridge HTTP access', () => {
  it('serves the UI to a holder of the secret', async () => {
    const first = await rawRequest(port, `/?s=${bridge.secret}`, { Host: `127.0.0.1:${port}` });
    expect(first.status).toBe(303);
    const page = await rawRequest(port, '/', { Host: `localhost:${port}`, Cookie: cookie });
    expect(page.status).toBe(200);
    expect(page.body).toContain('<h1>Parking</h1>');
  });

  it('refuses a request without the secret', async () => {
    const res = await rawRequest(port, '/', { Host: `127.0.0.1:${port}` });
    expect(res.status).toBe(401);
    expect(res.body).not.toContain('Parking');
  });

  it('refuses a wrong secret, and a secret one character short', async () => {
    for (const s of ['wrong', bridge.secret.slice(1), `${bridge.secret}x`]) {
      const res = await rawRequest(port, `/?s=${encodeURIComponent(s)}`, { Host: `127.0.0.1:${port}` });
      expect(res.status).toBe(401);
      expect(res.headers['set-cookie']).toBeUndefined();
    }
  });

  it('refuses assets without the secret', async () => {
    expect((await rawRequest(port, '/assets/app.js', { Host: `127.0.0.1:${port}` })).status).toBe(401);
  });

  it.each([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])(
    'refuses a request with foreign source #%i even with the secret',
    async (i) => {
      const [name, headers, status] = foreign()[i]!;
      const withSecret = await rawRequest(port, `/?s=${bridge.secret}`, headers);
      expect(status, name).toContain(withSecret.status);
      expect(withSecret.headers['set-cookie'], name).toBeUndefined();
      const withCookie = await rawRequest(port, '/', { ...headers, Cookie: cookie });
      expect(status, name).toContain(withCookie.status);
      expect(withCookie.body, name).not.toContain('Parking</h1>');
    },
  );
});

describe('bridge WebSocket access', () => {
  it('opens for a holder of the secret from its own origin', async () => {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`]) {
      const viaCookie = await openSocket(port, '/ws', {
        Host: host,
        Origin: `http://${host}`,
        Cookie: cookie,
      });
      expect(viaCookie.opened).toBe(true);
      if (viaCookie.opened) viaCookie.socket.close();
    }
    const viaQuery = await openSocket(port, `/ws?s=${bridge.secret}`, {
      Host: `127.0.0.1:${port}`,
      Origin: `http://127.0.0.1:${port}`,
    });
    expect(viaQuery.opened).toBe(true);
    if (viaQuery.opened) viaQuery.socket.close();
  });

  it('refuses a socket without the secret', async () => {
    const outcome = await openSocket(port, '/ws', {
      Host: `127.0.0.1:${port}`,
      Origin: `http://127.0.0.1:${port}`,
    });
    expect(outcome).toEqual({ opened: false, status: 401 });
  });

  it('refuses a socket with a wrong secret or a forged cookie', async () => {
    const headers = { Host: `127.0.0.1:${port}`, Origin: `http://127.0.0.1:${port}` };
    expect(await openSocket(port, '/ws?s=wrong', headers)).toEqual({ opened: false, status: 401 });
    expect(await openSocket(port, '/ws', { ...headers, Cookie: `${cookie}x` })).toEqual({
      opened: false,
      status: 401,
    });
  });

  it('refuses a socket without Origin even with the secret', async () => {
    const outcome = await openSocket(port, `/ws?s=${bridge.secret}`, {
      Host: `127.0.0.1:${port}`,
      Cookie: cookie,
    });
    expect(outcome).toEqual({ opened: false, status: 403 });
  });

  it.each([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])(
    'refuses a socket with foreign source #%i even with the secret',
    async (i) => {
      const [name, headers, status] = foreign()[i]!;
      for (const outcome of [
        await openSocket(port, `/ws?s=${bridge.secret}`, headers),
        await openSocket(port, '/ws', { ...headers, Cookie: cookie }),
      ]) {
        expect(outcome.opened, name).toBe(false);
        if (!outcome.opened) expect(status, name).toContain(outcome.status);
      }
    },
  );

  it('never subscribed a refused socket to the terminal', () => {
    expect(fake.subscribers).toBe(0);
  });
});
