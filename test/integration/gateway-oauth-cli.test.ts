import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { loadConfig } from '../../src/config/index.js';
import {
  createGatewayClient,
  createOAuthAuthenticatorFromConfig,
  encryptedFileTokenStore,
  type ServiceRequest,
} from '../../src/gateway/index.js';
import { fileKeyProvider } from '../../src/journal/index.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';

const CLIENT_ID = 'partner-1';
const CLIENT_SECRET = 'partner-secret';

let sandbox: Sandbox;
let callbackPort: number;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const address = s.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      s.close(() => resolve(port));
    });
  });
}

beforeAll(async () => {
  callbackPort = await freePort();
  sandbox = await startSandbox({
    oauthClients: [
      {
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        redirectUrl: `http://127.0.0.1:${callbackPort}/oauth/callback`,
        merchantId: 'testrest',
        scope: 'payments',
      },
    ],
  });
});

afterAll(async () => {
  await sandbox.close();
});

/** A terminal directory with a configuration for the sandbox's partner application. */
function terminalDir(clientSecret = CLIENT_SECRET): { dir: string; configFile: string } {
  const dir = mkdtempSync(join(tmpdir(), 'oauth-cli-'));
  writeFileSync(join(dir, 'client-secret'), `${clientSecret}\n`, { mode: 0o600 });
  const configFile = join(dir, 'terminal.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      gateway: { kind: 'remote', baseUrl: sandbox.url, auth: { method: 'oauth' } },
      offline: { keyFile: 'var/offline.key' },
      oauth: {
        clientId: CLIENT_ID,
        clientSecretFile: 'client-secret',
        redirectUrl: `http://127.0.0.1:${callbackPort}/oauth/callback`,
        portalUrl: sandbox.url,
        tokenUrl: sandbox.url,
        tokenStoreFile: 'var/oauth-tokens.enc',
      },
    }),
  );
  return { dir, configFile };
}

interface Run {
  exit: Promise<number>;
  stdout: () => string;
  /** Resolves with the consent address once the command printed it (its listener is then up). */
  consentUrl: Promise<string>;
}

function run(args: string[], cwd: string): Run {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  const consentUrl = new Promise<string>((resolve) => {
    stderr.on('data', (c: Buffer) => {
      err += c.toString('utf8');
      const m = /(http:\/\/\S+\/ebc2\/oauth\/authorize\?\S+)/.exec(err);
      if (m?.[1] !== undefined) resolve(m[1]);
    });
  });
  const exit = main(args, { stdout, stderr, cwd, signal: new AbortController().signal });
  return { exit, stdout: () => out, consentUrl };
}

/** The merchant's browser: opens the consent page, chooses a decision, follows the redirect to the terminal. */
async function browse(
  consentUrl: string,
  decision: 'allow' | 'deny',
  tamper?: (q: URLSearchParams) => void,
): Promise<{ status: number; location: string }> {
  const page = await fetch(consentUrl);
  expect(page.status).toBe(200);
  expect(await page.text()).toContain('id="allow"');
  const form = new URL(consentUrl).searchParams;
  tamper?.(form);
  form.set('decision', decision);
  const decided = await fetch(`${sandbox.url}/ebc2/oauth/authorize`, {
    method: 'POST',
    body: form,
    redirect: 'manual',
  });
  expect(decided.status).toBe(302);
  const location = decided.headers.get('location') ?? '';
  const back = await fetch(location);
  await back.text();
  return { status: back.status, location };
}

function json(text: string): Record<string, Record<string, unknown>> {
  return JSON.parse(text) as Record<string, Record<string, unknown>>;
}

const preauth: ServiceRequest = {
  service: 'preauth',
  code: 'OAUTH-CLI-1',
  partner: { developerId: '12345678', solutionId: 'PARKTERM', thirdPartyCertificationNumber: 'PT0000000001' },
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
    // A stripe-only card (service code 101): a chip card is swiped only as an EMV fallback.
    trackData: ';4111111111111111=30121011234567890?',
  },
};

describe('parking-terminal oauth', () => {
  it('reports not-authorized (exit 1) before any consent', async () => {
    const { dir, configFile } = terminalDir();
    const r = run(['oauth', 'status', '--config', configFile], dir);
    expect(await r.exit).toBe(1);
    expect(json(r.stdout()).oauth).toMatchObject({ state: 'not-authorized' });
  });

  it('stores the tokens after Allow, encrypted, and the configured oauth authenticator pays with them', async () => {
    const { dir, configFile } = terminalDir();
    const r = run(['oauth', 'authorize', '--config', configFile, '--wait-s', '20'], dir);
    const consentUrl = await r.consentUrl;
    const q = new URL(consentUrl).searchParams;
    expect(q.get('sub')).toBe('oauth');
    expect(q.get('client_id')).toBe(CLIENT_ID);
    expect(q.get('redirect_url')).toBe(`http://127.0.0.1:${callbackPort}/oauth/callback`);
    expect(q.get('state')?.length).toBeGreaterThanOrEqual(32);

    const browser = await browse(consentUrl, 'allow');
    expect(browser.status).toBe(200);
    expect(browser.location).toContain('code=');
    expect(await r.exit).toBe(0);
    const printed = json(r.stdout()).oauth;
    expect(printed).toMatchObject({ state: 'authorized', accessTokenValid: true, scope: 'payments' });
    expect(Date.parse(String(printed?.accessTokenExpiresAt)) - Date.now()).toBeGreaterThan(10 * 60_000);

    // The store is encrypted under the terminal's key file: it decrypts with that key and holds no clear token.
    const key = fileKeyProvider(join(dir, 'var/offline.key')).loadKey();
    const storeFile = join(dir, 'var/oauth-tokens.enc');
    const stored = encryptedFileTokenStore(storeFile, key).load();
    expect(stored?.accessToken).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(readFileSync(storeFile, 'utf8')).not.toContain(stored?.accessToken ?? '(none)');
    expect(encryptedFileTokenStore(storeFile, Buffer.alloc(32, 7)).load()).toBeUndefined();
    expect(r.stdout()).not.toContain(stored?.accessToken ?? '(none)');
    expect(r.stdout()).not.toContain(stored?.refreshToken ?? '(none)');

    const status = run(['oauth', 'status', '--config', configFile], dir);
    expect(await status.exit).toBe(0);
    expect(json(status.stdout()).oauth).toMatchObject({ state: 'authorized', accessTokenValid: true });
    expect(status.stdout()).not.toContain(stored?.accessToken ?? '(none)');

    // gateway.auth.method: oauth from the same configuration, as the host builds it.
    const config = loadConfig(configFile);
    const setup = createOAuthAuthenticatorFromConfig(config, { key, cwd: dir });
    const client = createGatewayClient({
      baseUrl: sandbox.url,
      merchantId: config.gateway.merchantId,
      auth: setup.authenticator,
      timeouts: config.gateway.timeouts,
    });
    try {
      expect(setup.tokens.state()).toBe('authorized');
      const outcome = await client.send(client.prepare(preauth));
      expect(outcome.kind).toBe('approved');
    } finally {
      await client.close();
      await setup.tokens.close();
    }
  });

  it('refuses a return whose state differs: the browser gets 401, the command GW_OAUTH_STATE, nothing stored', async () => {
    const { dir, configFile } = terminalDir();
    const r = run(['oauth', 'authorize', '--config', configFile, '--wait-s', '20'], dir);
    const consentUrl = await r.consentUrl;
    const browser = await browse(consentUrl, 'allow', (form) => form.set('state', 'forged-state-value'));
    expect(browser.location).toContain('state=forged-state-value');
    expect(browser.status).toBe(401);
    expect(await r.exit).toBe(1);
    expect(json(r.stdout()).error).toMatchObject({ code: 'GW_OAUTH_STATE' });
    expect(existsSync(join(dir, 'var/oauth-tokens.enc'))).toBe(false);
  });

  it('turns the token endpoint refusal (HTTP 500 invalid_client) into GW_OAUTH_TOKEN', async () => {
    const { dir, configFile } = terminalDir('not-the-client-secret');
    const r = run(['oauth', 'authorize', '--config', configFile, '--wait-s', '20'], dir);
    const browser = await browse(await r.consentUrl, 'allow');
    expect(browser.status).toBe(200);
    expect(await r.exit).toBe(1);
    expect(json(r.stdout()).error).toMatchObject({
      code: 'GW_OAUTH_TOKEN',
      oauthError: 'invalid_client',
      httpStatus: 500,
    });
    expect(existsSync(join(dir, 'var/oauth-tokens.enc'))).toBe(false);
  });

  it('reports a denial as GW_OAUTH_DENIED with the grant still not authorized', async () => {
    const { dir, configFile } = terminalDir();
    const r = run(['oauth', 'authorize', '--config', configFile, '--wait-s', '20'], dir);
    const browser = await browse(await r.consentUrl, 'deny');
    expect(new URL(browser.location).search).toBe('');
    expect(await r.exit).toBe(1);
    expect(json(r.stdout()).error).toMatchObject({ code: 'GW_OAUTH_DENIED', state: 'not-authorized' });
  });

  it('names the missing key when the oauth section lacks the client id (exit 2)', async () => {
    const { dir, configFile } = terminalDir();
    const config = JSON.parse(readFileSync(configFile, 'utf8')) as { oauth: Record<string, unknown> };
    delete config.oauth.clientId;
    writeFileSync(configFile, JSON.stringify(config));
    const r = run(['oauth', 'authorize', '--config', configFile], dir);
    expect(await r.exit).toBe(2);
    expect(json(r.stdout()).error).toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringContaining('oauth.clientId') as string,
    });
  });
});
