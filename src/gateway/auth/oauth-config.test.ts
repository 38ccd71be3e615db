import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MockAgent } from 'undici';
import { describe, expect, it, vi } from 'vitest';
import { parseConfig } from '../../config/index.js';
import { createOAuthAuthenticatorFromConfig, oauthSettings } from './oauth-config.js';
import { encryptedFileTokenStore, oauthGrantState, REFRESH_GRACE_MS, type OAuthTokens } from './oauth.js';

const KEY = Buffer.alloc(32, 3);

function config(oauth: Record<string, unknown>, baseUrl?: string): ReturnType<typeof parseConfig> {
  return parseConfig({
    gateway: { kind: 'remote', ...(baseUrl !== undefined ? { baseUrl } : {}), auth: { method: 'oauth' } },
    oauth,
  });
}

describe('oauthSettings', () => {
  it('falls back to the gateway base URL for the consent page and token host, and resolves paths', () => {
    const s = oauthSettings(
      config(
        { clientId: 'p', clientSecretFile: 'secret', tokenStoreFile: 'var/t.enc' },
        'https://apitest.example',
      ),
      { cwd: '/opt/terminal' },
    );
    expect(s).toMatchObject({
      portalUrl: 'https://apitest.example',
      tokenUrl: 'https://apitest.example',
      tokenStoreFile: '/opt/terminal/var/t.enc',
      clientSecretFile: '/opt/terminal/secret',
    });
  });

  it.each([
    [{ clientSecretFile: 's' }, 'oauth.clientId'],
    [{ clientId: 'p' }, 'oauth.clientSecretFile'],
    [{ clientId: 'p', clientSecretFile: 's', tokenUrl: 'https://t.example' }, 'oauth.portalUrl'],
    [{ clientId: 'p', clientSecretFile: 's', portalUrl: 'https://p.example' }, 'oauth.tokenUrl'],
  ])('names the missing key (%j → %s) with GW_CONFIG', (oauth, key) => {
    expect(() => oauthSettings(config(oauth))).toThrowError(
      expect.objectContaining({
        code: 'GW_CONFIG',
        message: expect.stringContaining(key) as string,
      }) as Error,
    );
  });
});

describe('createOAuthAuthenticatorFromConfig', () => {
  const oauth = { clientId: 'p', clientSecretFile: '/keys/secret', tokenStoreFile: '/nonexistent/t.enc' };

  it('refuses an unreadable or empty client secret file, naming the key', () => {
    expect(() =>
      createOAuthAuthenticatorFromConfig(config(oauth, 'https://g.example'), {
        key: KEY,
        readSecretFile: () => {
          throw new Error('ENOENT');
        },
      }),
    ).toThrowError(
      expect.objectContaining({
        code: 'GW_CONFIG',
        message: expect.stringContaining('oauth.clientSecretFile') as string,
      }) as Error,
    );
    expect(() =>
      createOAuthAuthenticatorFromConfig(config(oauth, 'https://g.example'), {
        key: KEY,
        readSecretFile: () => '',
      }),
    ).toThrowError(expect.objectContaining({ code: 'GW_CONFIG' }) as Error);
  });

  it('builds without a stored grant; each request then fails with GW_OAUTH_REAUTHORIZE before anything is sent', async () => {
    const setup = createOAuthAuthenticatorFromConfig(config(oauth, 'https://g.example'), {
      key: KEY,
      readSecretFile: () => 'secret',
    });
    try {
      expect(setup.authenticator.method).toBe('oauth');
      expect(setup.tokens.state()).toBe('not-authorized');
      await expect(
        setup.authenticator.authenticate({
          method: 'POST',
          host: 'g.example',
          path: '/pts/v2/payments',
          body: Buffer.from('{}'),
          now: new Date(),
        }),
      ).rejects.toMatchObject({ code: 'GW_OAUTH_REAUTHORIZE' });
    } finally {
      await setup.tokens.close();
    }
  });
});

describe('oauth.renewBeforeExpirySeconds', () => {
  it('is five minutes unless configured', () => {
    expect(config({}).oauth.renewBeforeExpirySeconds).toBe(300);
  });

  it('is the time before expiry at which the token in hand is renewed, beside the requests', async () => {
    const expiresAt = 10_000_000;
    const tokenStoreFile = join(mkdtempSync(join(tmpdir(), 'oauth-renew-')), 't.enc');
    encryptedFileTokenStore(tokenStoreFile, KEY).save({
      accessToken: 'A1',
      accessTokenExpiresAt: expiresAt,
      refreshToken: 'R1',
      refreshTokenExpiresAt: expiresAt + 365 * 86_400_000,
    });
    const agent = new MockAgent();
    agent.disableNetConnect();
    let fetched = 0;
    agent
      .get('https://g.example')
      .intercept({ path: '/oauth2/v3/token', method: 'POST' })
      .reply(() => {
        fetched++;
        return {
          statusCode: 200,
          data: JSON.stringify({ access_token: 'A2', refresh_token: 'R2', expires_in: 899 }),
        };
      });
    let now = expiresAt - 100_000;
    const setup = createOAuthAuthenticatorFromConfig(
      config(
        { clientId: 'p', clientSecretFile: 's', tokenStoreFile, renewBeforeExpirySeconds: 60 },
        'https://g.example',
      ),
      { key: KEY, readSecretFile: () => 'secret', now: () => now, dispatcher: agent },
    );
    try {
      setup.tokens.keepRenewed();
      // 100 s before expiry: not due with 60 s (the default five minutes would renew it now).
      expect(await setup.tokens.accessToken()).toBe('A1');
      expect(fetched).toBe(0);
      now = expiresAt - 50_000;
      expect(await setup.tokens.accessToken()).toBe('A1');
      await vi.waitFor(() => expect(setup.tokens.current()?.accessToken).toBe('A2'));
      expect(fetched).toBe(1);
    } finally {
      await setup.tokens.close();
      await agent.close();
    }
  });
});

describe('oauthGrantState', () => {
  const tokens: OAuthTokens = {
    accessToken: 'a',
    accessTokenExpiresAt: 1_000,
    refreshToken: 'r',
    refreshTokenExpiresAt: 10_000,
  };

  it('moves from authorized to grace period to reauthorization required at the refresh expiry and six months on', () => {
    expect(oauthGrantState(undefined, 0)).toBe('not-authorized');
    expect(oauthGrantState(tokens, 9_999)).toBe('authorized');
    expect(oauthGrantState(tokens, 10_000)).toBe('grace-period');
    expect(oauthGrantState(tokens, 10_000 + REFRESH_GRACE_MS - 1)).toBe('grace-period');
    expect(oauthGrantState(tokens, 10_000 + REFRESH_GRACE_MS)).toBe('reauthorization-required');
  });
});
