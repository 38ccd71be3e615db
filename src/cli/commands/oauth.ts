import { resolve } from 'node:path';
import { loadConfig, type Config } from '../../config/index.js';
import {
  buildConsentUrl,
  createOAuthTokenManagerFromConfig,
  GatewayError,
  GatewayOAuthError,
  newConsentState,
  oauthGrantState,
  oauthSettings,
  oauthTokenStoreFromConfig,
  receiveConsent,
  REFRESH_GRACE_MS,
  type OAuthGrantState,
  type OAuthTokens,
} from '../../gateway/index.js';
import { fileKeyProvider, JournalError } from '../../journal/index.js';
import { settleRotationBeforeReading } from '../../host/pending-rotation.js';
import { parseCommandArgs } from '../args.js';
import {
  EXIT_FINDINGS,
  EXIT_OK,
  printError,
  printJson,
  UsageError,
  type CliIo,
  type Command,
} from '../output.js';

const USAGE = `parking-terminal oauth authorize [--config FILE] [--key-file F] [--wait-s N]
parking-terminal oauth status [--config FILE] [--key-file F]
  authorize  runs the consent redirect of spec 000: listens on oauth.redirectUrl, prints on stderr the consent
             address to open in a browser, checks the returned state (a mismatch is answered 401), exchanges the
             code for tokens and stores them encrypted in oauth.tokenStoreFile.
             Prints {"oauth": {state, accessTokenExpiresAt, refreshTokenExpiresAt, scope?, tokenStoreFile}}.
             Exit 1 with {"error": {code, message, oauthError?}} when the merchant denies, the state differs
             (GW_OAUTH_STATE) or the token endpoint refuses (GW_OAUTH_TOKEN).
  status     prints the stored grant: {"oauth": {state, accessTokenExpiresAt?, accessTokenValid, refreshTokenExpiresAt?,
             graceEndsAt?, scope?, tokenStoreFile}}; state is not-authorized | authorized | grace-period |
             reauthorization-required. Exit 0 while the grant is usable, 1 when the merchant must authorize.
             Never prints a token.
  --config FILE   configuration (JSON or YAML): sections oauth (clientId, clientSecretFile, redirectUrl, portalUrl,
                  tokenUrl, tokenStoreFile) and gateway (baseUrl is the default portal and token host)
  --key-file F    32-byte key of the token store (default offline.keyFile, the key for data at rest; created 0600)
  --wait-s N      how long to wait for the browser's return (default 600: the code lives ten minutes)`;

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** What both subcommands print about a grant: times and state, never a token. */
function describeGrant(
  tokens: OAuthTokens | undefined,
  state: OAuthGrantState,
  nowMs: number,
  tokenStoreFile: string,
): Record<string, unknown> {
  if (tokens === undefined) return { state, tokenStoreFile };
  return {
    state,
    accessTokenExpiresAt: iso(tokens.accessTokenExpiresAt),
    accessTokenValid: nowMs < tokens.accessTokenExpiresAt,
    refreshTokenExpiresAt: iso(tokens.refreshTokenExpiresAt),
    ...(state === 'grace-period'
      ? { graceEndsAt: iso(tokens.refreshTokenExpiresAt + REFRESH_GRACE_MS) }
      : {}),
    ...(tokens.scope !== undefined ? { scope: tokens.scope } : {}),
    tokenStoreFile,
  };
}

/** Settings errors are bad input (exit 2, key named), like any other configuration error. */
function usageFromConfig(e: unknown): never {
  if (e instanceof GatewayError && e.code === 'GW_CONFIG') throw new UsageError('CONFIG_INVALID', e.message);
  throw e;
}

function loadKey(io: CliIo, config: Config, keyFile: string | undefined): Buffer {
  const path = resolve(io.cwd, keyFile ?? config.offline.keyFile);
  try {
    return fileKeyProvider(path).loadKey();
  } catch (e) {
    if (e instanceof JournalError) throw new UsageError('KEY_FILE', e.message);
    throw e;
  }
}

function printGatewayError(io: CliIo, e: GatewayError): number {
  printError(io, e.code, e.message, {
    ...(e instanceof GatewayOAuthError && e.oauthError !== undefined ? { oauthError: e.oauthError } : {}),
    ...(e.httpStatus !== undefined ? { httpStatus: e.httpStatus } : {}),
  });
  return EXIT_FINDINGS;
}

async function authorize(io: CliIo, config: Config, key: Buffer, waitMs: number): Promise<number> {
  const settings = (() => {
    try {
      return oauthSettings(config, { cwd: io.cwd });
    } catch (e) {
      return usageFromConfig(e);
    }
  })();
  const manager = (() => {
    try {
      return createOAuthTokenManagerFromConfig(config, { key, cwd: io.cwd });
    } catch (e) {
      return usageFromConfig(e);
    }
  })();
  try {
    const state = newConsentState();
    const consentUrl = buildConsentUrl({
      portalUrl: settings.portalUrl,
      clientId: settings.clientId,
      redirectUrl: settings.redirectUrl,
      state,
    });
    const result = await receiveConsent({
      redirectUrl: settings.redirectUrl,
      state,
      timeoutMs: waitMs,
      signal: io.signal,
      // Only once the listener is up: a merchant quick enough must not reach a closed port.
      onListening: () =>
        io.stderr.write(`Open this address in a browser, sign in and choose Allow:\n${consentUrl}\n`),
    });
    if (result.kind === 'denied') {
      // spec 000: a denial (or too little privilege) returns with no parameters; not a failure of the terminal.
      printError(io, 'GW_OAUTH_DENIED', 'the merchant did not authorize the terminal', {
        state: manager.state(),
      });
      return EXIT_FINDINGS;
    }
    const tokens = await manager.exchangeCode(result.code);
    const nowMs = Date.now();
    printJson(io, {
      oauth: describeGrant(tokens, oauthGrantState(tokens, nowMs), nowMs, settings.tokenStoreFile),
    });
    return EXIT_OK;
  } catch (e) {
    if (e instanceof GatewayError && e.code !== 'GW_CONFIG') return printGatewayError(io, e);
    return usageFromConfig(e);
  } finally {
    await manager.close();
  }
}

function status(io: CliIo, config: Config, key: Buffer): number {
  const tokenStoreFile = resolve(io.cwd, config.oauth.tokenStoreFile);
  // A store that cannot be decrypted reads as no grant: the merchant authorizes again.
  const tokens = oauthTokenStoreFromConfig(config, { key, cwd: io.cwd }).load();
  const nowMs = Date.now();
  const state = oauthGrantState(tokens, nowMs);
  printJson(io, { oauth: describeGrant(tokens, state, nowMs, tokenStoreFile) });
  return state === 'authorized' || state === 'grace-period' ? EXIT_OK : EXIT_FINDINGS;
}

const command: Command = {
  name: 'oauth',
  summary: 'authorize the terminal for a merchant (OAuth consent, spec 000) or show the stored grant',
  usage: USAGE,
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, {
      config: { type: 'string' },
      'key-file': { type: 'string' },
      'wait-s': { type: 'string' },
    });
    const [sub, ...extra] = positionals;
    if (extra.length > 0) throw new UsageError('BAD_ARGUMENTS', `unexpected argument "${extra[0]}"`);
    if (sub !== 'authorize' && sub !== 'status') {
      throw new UsageError('BAD_ARGUMENTS', 'expected "oauth authorize" or "oauth status"');
    }
    const waitText = values['wait-s'];
    const waitS = waitText === undefined ? 600 : Number(waitText);
    if (!Number.isInteger(waitS) || waitS < 1 || waitS > 3600) {
      throw new UsageError('BAD_ARGUMENTS', '--wait-s must be a whole number of seconds, 1 to 3600');
    }
    if (sub === 'status' && waitText !== undefined) {
      throw new UsageError('BAD_ARGUMENTS', '--wait-s is used with authorize only');
    }
    const config = loadConfig(values.config ? resolve(io.cwd, values.config) : undefined);
    // The token store is sealed under the at-rest key: a rotation a crash interrupted is finished or undone first.
    settleRotationBeforeReading(config, io.cwd, `parking-terminal oauth ${sub}`);
    const key = loadKey(io, config, values['key-file']);
    return sub === 'authorize' ? authorize(io, config, key, waitS * 1000) : status(io, config, key);
  },
};
export default command;
