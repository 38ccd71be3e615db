import * as fs from 'node:fs';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { MockAgent } from 'undici';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  encryptedFileTokenStore,
  OAuthTokenManager,
  receiveConsent,
  REFRESH_GRACE_MS,
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

function manager(store: TokenStore, now: () => number): OAuthTokenManager {
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
  });
}

const tokens = (now: number): OAuthTokens => ({
  accessToken: 'A1',
  accessTokenExpiresAt: now + 899_000,
  refreshToken: 'R1',
  refreshTokenExpiresAt: now + 365 * 86_400_000,
});

describe('OAuthTokenManager', () => {
  it('refreshes the access token before it expires and persists the rotated refresh token', async () => {
    let now = 1_000_000;
    const store = memoryStore(tokens(now));
    const m = manager(store, () => now);
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
    expect(await m.accessToken()).toBe('A2');
    expect(new URLSearchParams(form).get('grant_type')).toBe('refresh_token');
    expect(new URLSearchParams(form).get('refresh_token')).toBe('R1');
    expect(store.saved.at(-1)?.refreshToken).toBe('R2');
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
    // Due for refresh (within the margin, then expired): the next request waits on the token host.
    now = t0 + 850_000;
    expect(m.connectionNeeded()).toEqual(tokenHost);
    now = t0 + 900_000;
    expect(m.connectionNeeded()).toEqual(tokenHost);
    // Past the grace period no token request is made: GW_OAUTH_REAUTHORIZE at once, nothing to connect to.
    now = t0 + 365 * 86_400_000 + REFRESH_GRACE_MS + 1;
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
    now += 10_000;
    expect(await m.accessToken()).toBe('A2');
    now += 6_000; // past half of its 30 s
    expect(await m.accessToken()).toBe('A3');
    expect(refreshes).toBe(2);
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
