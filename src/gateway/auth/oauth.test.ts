import * as fs from 'node:fs';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { MockAgent } from 'undici';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  DEFAULT_REFRESH_MARGIN_MS,
  encryptedFileTokenStore,
  EXPIRY_GUARD_MS,
  OAuthTokenManager,
  receiveConsent,
  REFRESH_GRACE_MS,
  type OAuthTokenManagerOptions,
  type OAuthTokens,
  type TokenStore,
} from './oauth.js';
import { rawStatusLine } from '../testing/raw-request.js';

// The file system as it is, with the token store's syncs and rename observable and a failure injectable between them.
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof fs>();
  return {
    ...real,
    fsyncSync: vi.fn(real.fsyncSync),
    renameSync: vi.fn(real.renameSync),
    rmSync: vi.fn(real.rmSync),
  };
});

const TOKEN_URL = 'https://token.test';
const timeouts = { connectMs: 1000, headersMs: 1000, bodyMs: 1000 };

function memoryStore(initial?: OAuthTokens): TokenStore & { saved: OAuthTokens[] } {
  let t = initial;
  const saved: OAuthTokens[] = [];
  return {
    saved,
    load: () => t,
    save: (x) => {
      t = x;
      saved.push(x);
    },
    clear: () => {
      t = undefined;
    },
  };
}

let agent: MockAgent | undefined;
afterEach(async () => {
  const a = agent;
  agent = undefined;
  await a?.close();
});

function manager(
  store: TokenStore,
  now: () => number,
  more: Partial<OAuthTokenManagerOptions> = {},
): OAuthTokenManager {
  const a = new MockAgent();
  a.disableNetConnect();
  agent = a;
  return new OAuthTokenManager({
    tokenUrl: TOKEN_URL,
    clientId: 'c',
    clientSecret: 's',
    store,
    timeouts,
    now,
    dispatcher: a,
    retry: { maxAttempts: 2, initialDelayMs: 1, maxDelayMs: 1 },
    ...more,
  });
}

const tokens = (now: number): OAuthTokens => ({
  accessToken: 'A1',
  accessTokenExpiresAt: now + 899_000,
  refreshToken: 'R1',
  refreshTokenExpiresAt: now + 365 * 86_400_000,
});

describe('OAuthTokenManager', () => {
  it('renews the access token once it is due while the token in hand serves, and persists the rotated refresh token', async () => {
    let now = 1_000_000;
    const store = memoryStore(tokens(now));
    const m = manager(store, () => now);
    m.keepRenewed();
    expect(await m.accessToken()).toBe('A1');
    let form = '';
    agent!
      .get(TOKEN_URL)
      .intercept({ path: '/oauth2/v3/token', method: 'POST' })
      .reply((o) => {
        form = typeof o.body === 'string' ? o.body : Buffer.isBuffer(o.body) ? o.body.toString('utf8') : '';
        return {
          statusCode: 200,
          data: JSON.stringify({
            access_token: 'A2',
            refresh_token: 'R2',
            expires_in: 899,
            refresh_token_expires_in: 31_536_000,
            token_type: 'bearer',
          }),
        };
      });
    now += 850_000; // within the refresh margin of the 899 s lifetime
    // The request goes with the token in hand; the renewal goes on beside it.
    expect(await m.accessToken()).toBe('A1');
    await vi.waitFor(() => expect(store.saved).toHaveLength(1));
    expect(await m.accessToken()).toBe('A2');
    expect(new URLSearchParams(form).get('grant_type')).toBe('refresh_token');
    expect(new URLSearchParams(form).get('refresh_token')).toBe('R1');
    expect(store.saved.at(-1)?.refreshToken).toBe('R2');
    await m.close();
  });

  it('makes a request that finds the token due wait for its renewal when it is not renewed ahead (a command)', async () => {
    let now = 1_000_000;
    const store = memoryStore(tokens(now));
    const m = manager(store, () => now);
    agent!
      .get(TOKEN_URL)
      .intercept({ path: '/oauth2/v3/token', method: 'POST' })
      .reply(200, { access_token: 'A2', refresh_token: 'R2', expires_in: 899 });
    now += 850_000;
    // Nothing left running in the background that the command's exit could cut short after the token host rotated
    // the refresh token: the renewal is the request's, and stored before it goes.
    expect(await m.accessToken()).toBe('A2');
    expect(store.saved.map((t) => t.refreshToken)).toEqual(['R2']);
    await m.close();
  });

  it('reports the grace period, then requires re-authorization without calling the endpoint', async () => {
    const t0 = 5_000_000;
    const store = memoryStore(tokens(t0));
    let now = t0 + 366 * 86_400_000;
    const m = manager(store, () => now);
    expect(m.state()).toBe('grace-period');
    now = t0 + 365 * 86_400_000 + REFRESH_GRACE_MS + 1;
    expect(m.state()).toBe('reauthorization-required');
    await expect(m.accessToken()).rejects.toMatchObject({ code: 'GW_OAUTH_REAUTHORIZE' });
    await m.close();
  });

  it('turns a token-endpoint 500 into a typed error carrying its code, and access_denied into re-authorization', async () => {
    let now = 1;
    const m = manager(memoryStore({ ...tokens(now), accessTokenExpiresAt: 0 }), () => now);
    agent!
      .get(TOKEN_URL)
      .intercept({ path: '/oauth2/v3/token', method: 'POST' })
      .reply(500, { error: 'invalid_client' });
    await expect(m.accessToken()).rejects.toMatchObject({
      code: 'GW_OAUTH_TOKEN',
      oauthError: 'invalid_client',
    });
    agent!
      .get(TOKEN_URL)
      .intercept({ path: '/oauth2/v3/token', method: 'POST' })
      .reply(500, { error: 'access_denied' });
    await expect(m.accessToken()).rejects.toMatchObject({ code: 'GW_OAUTH_REAUTHORIZE' });
    expect(m.state()).toBe('reauthorization-required');
    now += 1;
    await m.close();
  });

  it('refreshes once on ACCESS_TOKEN_EXPIRED and not on UNAUTHORIZED_PARTNER', async () => {
    const m = manager(memoryStore(tokens(1)), () => 1);
    agent!
      .get(TOKEN_URL)
      .intercept({ path: '/oauth2/v3/token', method: 'POST' })
      .reply(200, { access_token: 'A2', refresh_token: 'R2', expires_in: 899 });
    expect(await m.renewAfterUnauthorized({ response: { rmsg: { error: 'UNAUTHORIZED_PARTNER' } } })).toBe(
      false,
    );
    expect(await m.renewAfterUnauthorized({ response: { rmsg: { error: 'ACCESS_TOKEN_EXPIRED' } } })).toBe(
      true,
    );
    expect(await m.accessToken()).toBe('A2');
    await m.close();
  });

  it('needs the token host only while the next access token must be fetched from it', async () => {
    const t0 = 1_000_000;
    let now = t0;
    let stored: OAuthTokens | undefined = tokens(t0);
    // Its own connections (no dispatcher): nothing here opens one.
    const m = new OAuthTokenManager({
      tokenUrl: 'https://auth.token.test',
      clientId: 'c',
      clientSecret: 's',
      store: { load: () => stored, save: (t) => (stored = t), clear: () => (stored = undefined) },
      timeouts,
      now: () => now,
    });
    const tokenHost = { role: 'OAuth token host', hostname: 'auth.token.test', port: 443 };
    // The token in hand serves: whether the token host answers does not matter.
    expect(m.connectionNeeded()).toBeUndefined();
    // Due for renewal, in a command (not renewed ahead): the next request renews it first.
    now = t0 + 850_000;
    expect(m.connectionNeeded()).toEqual(tokenHost);
    // Renewed ahead (the terminal): still sent while it is renewed, no request waits on the token host.
    now = t0;
    m.keepRenewed();
    now = t0 + 850_000;
    expect(m.connectionNeeded()).toBeUndefined();
    // Within the last seconds of its life, then expired: the next request waits on the token host.
    now = t0 + 899_000 - EXPIRY_GUARD_MS;
    expect(m.connectionNeeded()).toEqual(tokenHost);
    now = t0 + 900_000;
    expect(m.connectionNeeded()).toEqual(tokenHost);
    // Past the grace period no token request is made: GW_OAUTH_REAUTHORIZE at once, nothing to connect to.
    now = t0 + 365 * 86_400_000 + REFRESH_GRACE_MS + 1;
    expect(m.connectionNeeded()).toBeUndefined();
    await m.close();
  });
});

describe('OAuthTokenManager, renewal ahead of expiry', () => {
  const t0 = 1_000_000;
  const granted = (access: string): string =>
    JSON.stringify({ access_token: access, refresh_token: `R-${access}`, expires_in: 899 });
  /** A grant whose access token falls due for renewal `inMs` after t0 (real time: the clock stays at t0). */
  const dueIn = (inMs: number): OAuthTokens => ({
    ...tokens(t0),
    accessTokenExpiresAt: t0 + DEFAULT_REFRESH_MARGIN_MS + inMs,
  });
  /**
   * The token host of the last {@link manager}: it grants every token request, the access token `access` names for
   * its n-th request (A2 unless told), after `delayMs`; `requests` counts what it has answered.
   */
  const grantingTokenHost = (
    access: (n: number) => string = () => 'A2',
    delayMs = 0,
  ): { readonly requests: number } => {
    const host = { requests: 0 };
    const scope = agent!
      .get(TOKEN_URL)
      .intercept({ path: '/oauth2/v3/token', method: 'POST' })
      .reply(() => {
        host.requests++;
        return { statusCode: 200, data: granted(access(host.requests)) };
      });
    (delayMs > 0 ? scope.delay(delayMs) : scope).persist();
    return host;
  };

  it('renews the token before it expires by itself, with no request waiting for it', async () => {
    const store = memoryStore(dueIn(50));
    const m = manager(store, () => t0);
    const tokenHost = grantingTokenHost();
    m.keepRenewed();
    expect(await m.accessToken()).toBe('A1');
    // The clock has not moved: the timer renewed it, not a request.
    await vi.waitFor(() => expect(store.saved.map((t) => t.accessToken)).toEqual(['A2']));
    expect(tokenHost.requests).toBe(1);
    expect(await m.accessToken()).toBe('A2');
    expect(m.connectionNeeded()).toBeUndefined();
    await m.close();
  });

  it('goes on with the token in hand after a failed renewal, and tries the renewal again after a backoff', async () => {
    const store = memoryStore(dueIn(20));
    // Backoff of the first retry: half of its one second.
    const m = manager(store, () => t0, { random: () => 0 });
    let attempts = 0;
    agent!
      .get(TOKEN_URL)
      .intercept({ path: '/oauth2/v3/token', method: 'POST' })
      .reply(() => {
        attempts++;
        // The first renewal fails, both its attempts; the next succeeds.
        return attempts <= 2
          ? { statusCode: 500, data: JSON.stringify({ error: 'server_error' }) }
          : { statusCode: 200, data: granted('A2') };
      })
      .persist();
    m.keepRenewed();
    await vi.waitFor(() => expect(attempts).toBe(2));
    // The failure is the renewal's: the requests have the token in hand, the probe needs no token host.
    expect(await m.accessToken()).toBe('A1');
    expect(m.connectionNeeded()).toBeUndefined();
    expect(store.saved).toEqual([]);
    await vi.waitFor(() => expect(store.saved.map((t) => t.accessToken)).toEqual(['A2']), { timeout: 3_000 });
    expect(attempts).toBe(3);
    expect(await m.accessToken()).toBe('A2');
    await m.close();
  });

  it('hands out the token in hand at once while its renewal waits on a token host that accepts and never answers', async () => {
    const sockets: Socket[] = [];
    const silent: Server = createServer((s) => sockets.push(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const tokenUrl = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
    let now = t0;
    // Thirty seconds left: past the renewal point, still sent for twenty.
    let stored: OAuthTokens | undefined = { ...tokens(t0), accessTokenExpiresAt: t0 + 30_000 };
    // Its own connections, to a real socket.
    const m = new OAuthTokenManager({
      tokenUrl,
      clientId: 'c',
      clientSecret: 's',
      store: { load: () => stored, save: (t) => (stored = t), clear: () => (stored = undefined) },
      timeouts: { connectMs: 1_000, headersMs: 400, bodyMs: 400 },
      retry: { maxAttempts: 1, initialDelayMs: 1, maxDelayMs: 1 },
      now: () => now,
    });
    try {
      m.keepRenewed();
      expect(await m.accessToken()).toBe('A1');
      await vi.waitFor(() => expect(sockets).toHaveLength(1));
      // The renewal hangs on the token host: requests and the forwarding probe do not.
      now += 1_000;
      expect(await m.accessToken()).toBe('A1');
      expect(m.connectionNeeded()).toBeUndefined();
      // Its timeout is the renewal's failure, not a request's.
      await new Promise((r) => setTimeout(r, 500));
      expect(await m.accessToken()).toBe('A1');
      expect(stored?.accessToken).toBe('A1');
    } finally {
      await m.close();
      for (const s of sockets) s.destroy();
      await new Promise((r) => silent.close(r));
    }
  });

  it('makes one token request for every caller: the renewal ahead, requests that find the token due, requests that wait', async () => {
    const store = memoryStore({ ...tokens(t0), accessTokenExpiresAt: t0 + 100_000 });
    let now = t0;
    const m = manager(store, () => now);
    // Its n-th request grants A(n+1), each after 100 ms.
    const tokenHost = grantingTokenHost((n) => `A${n + 1}`, 100);
    // Due (within the margin): the timer's renewal and five requests share one token request; the requests go with
    // the token in hand.
    m.keepRenewed();
    const due = await Promise.all(Array.from({ length: 5 }, () => m.accessToken()));
    expect(due).toEqual(Array(5).fill('A1'));
    await vi.waitFor(() => expect(store.saved).toHaveLength(1));
    expect(tokenHost.requests).toBe(1);
    // Expired (the clock jumped past it): the requests wait, on one token request between them.
    now = store.saved[0]!.accessTokenExpiresAt + 1;
    const waited = await Promise.all(Array.from({ length: 5 }, () => m.accessToken()));
    expect(waited).toEqual(Array(5).fill('A3'));
    expect(tokenHost.requests).toBe(2);
    await m.close();
  });

  it('stops renewing on close, and its timer keeps no process alive', async () => {
    const m = manager(memoryStore(dueIn(30)), () => t0);
    const tokenHost = grantingTokenHost();
    const setTimer = vi.spyOn(globalThis, 'setTimeout');
    try {
      m.keepRenewed();
      const timer = setTimer.mock.results.at(-1)?.value as ReturnType<typeof setTimeout>;
      expect(timer.hasRef()).toBe(false);
    } finally {
      setTimer.mockRestore();
    }
    await m.close();
    await new Promise((r) => setTimeout(r, 100));
    expect(tokenHost.requests).toBe(0);
  });

  it('waits for the renewal of a token that lives longer than a timer can wait, rather than renewing it at once', async () => {
    const m = manager(memoryStore(dueIn(200 * 86_400_000)), () => t0);
    const tokenHost = grantingTokenHost();
    m.keepRenewed();
    await new Promise((r) => setTimeout(r, 50));
    expect(tokenHost.requests).toBe(0);
    await m.close();
  });

  it('does not renew ahead a grant that no refresh can renew', async () => {
    const t1 = t0 + 365 * 86_400_000 + REFRESH_GRACE_MS + 1;
    const m = manager(memoryStore(dueIn(0)), () => t1);
    const tokenHost = grantingTokenHost();
    m.keepRenewed();
    await new Promise((r) => setTimeout(r, 20));
    expect(tokenHost.requests).toBe(0);
    expect(m.state()).toBe('reauthorization-required');
    expect(m.connectionNeeded()).toBeUndefined();
    await m.close();
  });
});

describe('OAuthTokenManager, token answers nobody documented', () => {
  it.each([
    ['an access token that would inject a header line', { access_token: 'A2\r\nx-injected: 1' }],
    ['an access token with a space', { access_token: 'A2 A3' }],
    ['an empty access token', { access_token: '' }],
    ['an empty refresh token', { refresh_token: '' }],
    ['a lifetime of zero', { expires_in: 0 }],
    ['a negative lifetime', { expires_in: -899 }],
    ['a lifetime that is not whole seconds', { expires_in: 899.5 }],
    ['a lifetime no clock can reach', { expires_in: 1e308 }],
  ])('refuses %s as GW_OAUTH_TOKEN and keeps the grant it has', async (_, odd) => {
    const store = memoryStore({ ...tokens(1), accessTokenExpiresAt: 0 });
    const m = manager(store, () => 1_000);
    agent!
      .get(TOKEN_URL)
      .intercept({ path: '/oauth2/v3/token', method: 'POST' })
      .reply(200, { access_token: 'A2', refresh_token: 'R2', expires_in: 899, ...odd });
    await expect(m.refresh()).rejects.toMatchObject({ code: 'GW_OAUTH_TOKEN', outcomeUnknown: false });
    expect(store.saved).toEqual([]);
    expect(m.current()?.refreshToken).toBe('R1');
    await m.close();
  });

  it('uses a token that lives less than the refresh margin for half its life, rather than refreshing before every request', async () => {
    let now = 1_000;
    const store = memoryStore({ ...tokens(1), accessTokenExpiresAt: 0 });
    const m = manager(store, () => now);
    let refreshes = 0;
    agent!
      .get(TOKEN_URL)
      .intercept({ path: '/oauth2/v3/token', method: 'POST' })
      .reply(() => {
        refreshes++;
        return {
          statusCode: 200,
          data: JSON.stringify({ access_token: `A${refreshes + 1}`, refresh_token: 'R2', expires_in: 30 }),
        };
      })
      .persist();
    expect(await m.accessToken()).toBe('A2');
    m.keepRenewed();
    now += 10_000;
    expect(await m.accessToken()).toBe('A2');
    expect(refreshes).toBe(1);
    now += 6_000; // past half of its 30 s: renewed beside the request
    expect(await m.accessToken()).toBe('A2');
    await vi.waitFor(() => expect(store.saved).toHaveLength(2));
    expect(refreshes).toBe(2);
    expect(await m.accessToken()).toBe('A3');
    await m.close();
  });

  it('refreshes first a stored access token that cannot be sent (kept by a version that took any token answer)', async () => {
    const store = memoryStore({ ...tokens(1), accessToken: 'A1\r\nx-injected: 1' });
    const m = manager(store, () => 1_000);
    agent!
      .get(TOKEN_URL)
      .intercept({ path: '/oauth2/v3/token', method: 'POST' })
      .reply(200, { access_token: 'A2', refresh_token: 'R2', expires_in: 899 });
    expect(await m.accessToken()).toBe('A2');
    await m.close();
  });

  it.each([-1, 0, '31536000', 1e308])(
    'reads a refresh-token lifetime of %s as the documented year, keeping the rotated token',
    async (odd) => {
      const store = memoryStore({ ...tokens(1), accessTokenExpiresAt: 0 });
      const m = manager(store, () => 1_000);
      agent!.get(TOKEN_URL).intercept({ path: '/oauth2/v3/token', method: 'POST' }).reply(200, {
        access_token: 'A2',
        refresh_token: 'R2',
        expires_in: 899,
        refresh_token_expires_in: odd,
      });
      expect(await m.refresh()).toMatchObject({
        refreshToken: 'R2',
        refreshTokenExpiresAt: 1_000 + 365 * 86_400_000,
      });
      expect(m.state()).toBe('authorized');
      await m.close();
    },
  );
});

describe('encryptedFileTokenStore', () => {
  it('keeps the tokens encrypted on disk and reads nothing with another key', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'tok-')), 'tokens.enc');
    const store = encryptedFileTokenStore(path, Buffer.alloc(32, 3));
    store.save(tokens(1));
    // Only the envelope is in clear; a token or its field names in the file would mean plaintext (a two-letter value
    // like "R1" can appear in base64 ciphertext by chance, a field name cannot).
    const file = readFileSync(path, 'utf8');
    expect(Object.keys(JSON.parse(file) as object).sort()).toEqual(['data', 'iv', 'tag', 'v']);
    for (const clear of ['refreshToken', 'accessToken', 'ExpiresAt']) expect(file).not.toContain(clear);
    expect(store.load()?.refreshToken).toBe('R1');
    expect(encryptedFileTokenStore(path, Buffer.alloc(32, 4)).load()).toBeUndefined();
  });

  it('syncs the new grant before it replaces the old one, then the directory; mode 0600', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'tok-')), 'tokens.enc');
    const store = encryptedFileTokenStore(path, Buffer.alloc(32, 3));
    store.save(tokens(1));
    vi.mocked(fs.fsyncSync).mockClear();
    vi.mocked(fs.renameSync).mockClear();
    store.save({ ...tokens(2), refreshToken: 'R2' });
    expect(store.load()?.refreshToken).toBe('R2');
    if (process.platform !== 'win32') expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(vi.mocked(fs.renameSync).mock.calls.map(([, to]) => to)).toEqual([path]);
    // Two syncs: the draft's before the rename (the new grant whole on disk), the directory's after it.
    const syncs = vi.mocked(fs.fsyncSync).mock.invocationCallOrder;
    const rename = vi.mocked(fs.renameSync).mock.invocationCallOrder[0] ?? 0;
    expect(syncs.filter((at) => at < rename)).toHaveLength(1);
    expect(syncs.filter((at) => at > rename)).toHaveLength(1);
    expect(readdirSync(dirname(path))).toEqual(['tokens.enc']);
  });

  it('forgets the grant durably: the file removed, then its directory synced', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'tok-')), 'tokens.enc');
    const store = encryptedFileTokenStore(path, Buffer.alloc(32, 3));
    store.save(tokens(1));
    vi.mocked(fs.fsyncSync).mockClear();
    vi.mocked(fs.rmSync).mockClear();
    store.clear();
    expect(store.load()).toBeUndefined();
    expect(readdirSync(dirname(path))).toEqual([]);
    const removed = vi.mocked(fs.rmSync).mock.calls.findIndex(([p]) => p === path);
    expect(removed).toBeGreaterThanOrEqual(0);
    // The removal reaches the disk only with its directory: a power cut after clear() must not bring the grant back.
    const removedAt = vi.mocked(fs.rmSync).mock.invocationCallOrder[removed] ?? Infinity;
    expect(vi.mocked(fs.fsyncSync).mock.invocationCallOrder.filter((at) => at > removedAt)).toHaveLength(1);
  });

  it('keeps the previous grant whole and readable when the write fails between the draft and the rename', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'tok-')), 'tokens.enc');
    const store = encryptedFileTokenStore(path, Buffer.alloc(32, 3));
    store.save(tokens(1));
    vi.mocked(fs.renameSync).mockImplementationOnce(() => {
      throw Object.assign(new Error('EIO: i/o error, rename'), { code: 'EIO' });
    });
    expect(() => store.save({ ...tokens(2), refreshToken: 'R2' })).toThrow('EIO');
    expect(encryptedFileTokenStore(path, Buffer.alloc(32, 3)).load()?.refreshToken).toBe('R1');
    expect(readdirSync(dirname(path))).toEqual(['tokens.enc']);
  });
});

describe('receiveConsent', () => {
  async function port(): Promise<number> {
    return new Promise((resolve) => {
      const s = createServer();
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
  }

  it('answers a different state with 401 and rejects (spec 000: possible forgery)', async () => {
    const redirectUrl = `http://127.0.0.1:${await port()}/cb`;
    let ready!: () => void;
    const listening = new Promise<void>((r) => (ready = r));
    const waiting = receiveConsent({
      redirectUrl,
      state: 'expected',
      timeoutMs: 5000,
      onListening: () => ready(),
    });
    const rejected = expect(waiting).rejects.toMatchObject({ code: 'GW_OAUTH_STATE' });
    await listening;
    const res = await fetch(`${redirectUrl}?code=abc&state=forged`);
    expect(res.status).toBe(401);
    await rejected;
  });

  it('reads a return without parameters as a denial, not a failure', async () => {
    const redirectUrl = `http://127.0.0.1:${await port()}/cb`;
    let ready!: () => void;
    const listening = new Promise<void>((r) => (ready = r));
    const waiting = receiveConsent({ redirectUrl, state: 's', timeoutMs: 5000, onListening: () => ready() });
    await listening;
    await fetch(redirectUrl);
    expect(await waiting).toEqual({ kind: 'denied' });
  });

  it('answers 400 to a request target no URL parser reads, and goes on waiting for the return', async () => {
    const redirectPort = await port();
    const redirectUrl = `http://127.0.0.1:${redirectPort}/cb`;
    let ready!: () => void;
    const listening = new Promise<void>((r) => (ready = r));
    const waiting = receiveConsent({ redirectUrl, state: 's', timeoutMs: 5000, onListening: () => ready() });
    await listening;
    // Node's parser lets a request line in absolute form through that no URL parser reads.
    const statusLine = await rawStatusLine(redirectPort, 'GET http://[ HTTP/1.1');
    expect(statusLine).toBe('HTTP/1.1 400 Bad Request');
    await fetch(`${redirectUrl}?code=abc&state=s`);
    expect(await waiting).toEqual({ kind: 'code', code: 'abc' });
  });
});
