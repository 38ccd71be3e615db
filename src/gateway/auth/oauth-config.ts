import { resolve } from 'node:path';
import type { Config } from '../../config/index.js';
import { readSecretText } from '../../config/secret-file.js';
import type { Logger } from '../../log/index.js';
import type { ExchangeDispatcher } from '../connection-pool.js';
import { GatewayError } from '../errors.js';
import { oauthAuthenticator, type Authenticator } from './authenticator.js';
import { encryptedFileTokenStore, OAuthTokenManager, type TokenStore } from './oauth.js';

/** Options of the configuration-driven OAuth constructors below. */
export interface OAuthConfigOptions {
  /**
   * The 32-byte AES-256-GCM key of the token store. The caller loads it (the terminal uses its key file for data at
   * rest, `offline.keyFile`): src/gateway reads no key files of other layers.
   */
  key: Buffer;
  /**
   * Base URL used when `oauth.tokenUrl` / `oauth.portalUrl` are absent: the gateway's base URL, or the URL of the
   * embedded sandbox, which serves the consent page and the token endpoint itself.
   */
  baseUrl?: string;
  /** Directory that relative paths of the configuration (token store, client secret file) are resolved against. */
  cwd?: string;
  /**
   * Reads the client secret file. Default: UTF-8 contents, trimmed, of a file accessible to its owner only
   * (src/config/secret-file.ts).
   */
  readSecretFile?: (path: string) => string;
  logger?: Logger;
  /** Clock in epoch milliseconds (tests). */
  now?: () => number;
  /** Replaces the token endpoint's connection pool (tests). */
  dispatcher?: ExchangeDispatcher;
}

/** The resolved `oauth` section: every address known, every path absolute. */
export interface OAuthSettings {
  clientId: string;
  /** Base URL of the consent page host (`{portal_url}`, spec 000 A.1). */
  portalUrl: string;
  /** Base URL of the token host (`{token_url}`, spec 000 A.2). */
  tokenUrl: string;
  /** The registered redirect URL; the consent listener binds its host and port. */
  redirectUrl: string;
  /** Absolute path of the encrypted token store. */
  tokenStoreFile: string;
  /** Absolute path of the client secret file. */
  clientSecretFile: string;
}

function configError(key: string, message: string): GatewayError {
  return new GatewayError('GW_CONFIG', `oauth.${key}: ${message}`);
}

/**
 * Resolves the `oauth` section.
 * @throws GatewayError GW_CONFIG naming the key when clientId, clientSecretFile or an address is missing.
 */
export function oauthSettings(
  config: Config,
  options: { baseUrl?: string; cwd?: string } = {},
): OAuthSettings {
  const o = config.oauth;
  const cwd = options.cwd ?? process.cwd();
  if (o.clientId === undefined)
    throw configError('clientId', 'required for OAuth (the registered client ID)');
  if (o.clientSecretFile === undefined)
    throw configError('clientSecretFile', 'required for OAuth (a file holding the client secret)');
  const fallback = options.baseUrl ?? config.gateway.baseUrl;
  const portalUrl = o.portalUrl ?? fallback;
  const tokenUrl = o.tokenUrl ?? fallback;
  if (portalUrl === undefined) throw configError('portalUrl', 'required when gateway.baseUrl is not set');
  if (tokenUrl === undefined) throw configError('tokenUrl', 'required when gateway.baseUrl is not set');
  return {
    clientId: o.clientId,
    portalUrl,
    tokenUrl,
    redirectUrl: o.redirectUrl,
    tokenStoreFile: resolve(cwd, o.tokenStoreFile),
    clientSecretFile: resolve(cwd, o.clientSecretFile),
  };
}

/** The encrypted token store of `oauth.tokenStoreFile` under `key`. */
export function oauthTokenStoreFromConfig(
  config: Config,
  options: { key: Buffer; cwd?: string },
): TokenStore {
  return encryptedFileTokenStore(
    resolve(options.cwd ?? process.cwd(), config.oauth.tokenStoreFile),
    options.key,
  );
}

/**
 * The token manager of the configured partner application: client secret read now (a wrong path fails at start,
 * naming the key), tokens in the encrypted store, timeouts and retry budget of `gateway`.
 * @throws SecretFileError naming `oauth.clientSecretFile` and the file when it is missing, unreadable or accessible
 *   to group or others; GatewayError GW_CONFIG naming the key otherwise.
 */
export function createOAuthTokenManagerFromConfig(
  config: Config,
  options: OAuthConfigOptions,
): OAuthTokenManager {
  const settings = oauthSettings(config, options);
  const injected = options.readSecretFile;
  let clientSecret: string;
  if (injected === undefined)
    clientSecret = readSecretText(settings.clientSecretFile, 'oauth.clientSecretFile');
  else {
    try {
      clientSecret = injected(settings.clientSecretFile);
    } catch (e) {
      throw new GatewayError(
        'GW_CONFIG',
        `oauth.clientSecretFile: cannot read ${settings.clientSecretFile}`,
        {
          cause: e,
        },
      );
    }
  }
  if (clientSecret === '') throw configError('clientSecretFile', `${settings.clientSecretFile} is empty`);
  return new OAuthTokenManager({
    tokenUrl: settings.tokenUrl,
    clientId: settings.clientId,
    clientSecret,
    store: encryptedFileTokenStore(settings.tokenStoreFile, options.key),
    timeouts: config.gateway.timeouts,
    retry: config.gateway.retry,
    refreshMarginMs: config.oauth.renewBeforeExpirySeconds * 1000,
    ...(options.logger !== undefined ? { logger: options.logger } : {}),
    ...(options.now !== undefined ? { now: options.now } : {}),
    ...(options.dispatcher !== undefined ? { dispatcher: options.dispatcher } : {}),
  });
}

/** What `gateway.auth.method: oauth` needs at run time. */
export interface OAuthSetup {
  /** Pass as `auth` to `createGatewayClient`. */
  authenticator: Authenticator;
  /** The grant: `state()` for the operator's status bar; `close()` when the terminal stops. */
  tokens: OAuthTokenManager;
}

/**
 * The authenticator of `gateway.auth.method: oauth` (spec 000): bearer tokens of the grant stored by
 * `parking-terminal oauth authorize`, renewed `oauth.renewBeforeExpirySeconds` before they expire — in the background
 * while the token in hand goes on serving once the terminal calls `tokens.keepRenewed()`, else by the request that
 * finds the token due — and once after a 401 ACCESS_TOKEN_EXPIRED. With no stored grant it still builds; each request
 * then fails with GW_OAUTH_REAUTHORIZE (nothing sent) until the merchant authorizes, and `tokens.state()` says so.
 * @throws SecretFileError or GatewayError GW_CONFIG naming the key (see {@link createOAuthTokenManagerFromConfig}).
 */
export function createOAuthAuthenticatorFromConfig(config: Config, options: OAuthConfigOptions): OAuthSetup {
  const tokens = createOAuthTokenManagerFromConfig(config, options);
  return { authenticator: oauthAuthenticator(tokens), tokens };
}
