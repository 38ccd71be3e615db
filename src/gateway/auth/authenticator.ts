import { readFileSync } from 'node:fs';
import type { Config } from '../../config/index.js';
import { readSecretFile, readSecretText } from '../../config/secret-file.js';
import type { ConnectTarget } from '../connect-probe.js';
import { GatewayAuthError, GatewayError } from '../errors.js';
import { assertSignedIdentity, createHttpSigner } from './http-signature.js';
import { createJwt, hmacKey, rsaKeyFromPem, rsaKeyFromPkcs12, type JwtKey } from './jwt.js';

/** What an authenticator signs: one request, exactly as it will be sent. */
export interface AuthRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** Bare host as sent in the `host` header (port only when not the default). */
  host: string;
  /** Path with query string. */
  path: string;
  /** The exact body bytes (empty for GET). */
  body: Buffer;
  /** The clock, read once for this request: signed and sent dates are the same value. */
  now: Date;
}

/** Renders the credentials of one request. One implementation per `gateway.auth.method`. */
export interface Authenticator {
  readonly method: 'http-signature' | 'jwt' | 'oauth';
  /**
   * The headers (lower-case names) that authenticate `request`, in a new object that the caller owns and may extend
   * with the other headers of the request. Async because an OAuth token may need refreshing.
   * @throws GatewayError (GW_AUTH, GW_OAUTH_*) when no credentials can be produced; nothing is sent then.
   */
  authenticate(request: AuthRequest): Promise<Record<string, string>>;
  /**
   * Called with the body of a 401 answer and the credentials that request was sent with (the headers of its
   * `authenticate`). Returns true when the credentials were renewed (OAuth `ACCESS_TOKEN_EXPIRED`) — by this call, or
   * since the request went out — and the request may be sent once more: a 401 means it was not processed.
   */
  renewAfterUnauthorized?(body: unknown, sent: Readonly<Record<string, string>>): Promise<boolean>;
  /**
   * The connection that the next request's credentials need before it can be sent — an OAuth token host while the
   * access token must be fetched — or undefined when they can be had without one (a signature, a token in hand). The
   * transport's reachability probe opens it too: a request would wait on it, as long as its connect timeout, after
   * it was journaled as sent. Absent: none.
   */
  connectionNeeded?(): ConnectTarget | undefined;
}

/** The OAuth side an authenticator needs (implemented by `OAuthTokenManager`). */
export interface BearerTokenSource {
  /** A valid access token, refreshed first when it is about to expire. */
  accessToken(): Promise<string>;
  /**
   * Forces a refresh after the gateway said the token expired; false when the body says something else.
   * `rejectedToken`, the access token the refused request carried: when it has been replaced since, nothing is
   * refreshed (the requests in flight when a token expires cause one refresh between them).
   */
  renewAfterUnauthorized(body: unknown, rejectedToken?: string): Promise<boolean>;
  /** As {@link Authenticator.connectionNeeded}: the token host while the next access token must be fetched from it. */
  connectionNeeded?(): ConnectTarget | undefined;
}

/** HTTP signature (reference/gateway.md §1): the date header is the `now` of the request, read once. */
export function httpSignatureAuthenticator(
  merchantId: string,
  keyId: string,
  secretBase64: string,
): Authenticator {
  // Decoded once; fails at construction, not at the first payment, when the secret is not base64.
  const sign = createHttpSigner(merchantId, keyId, secretBase64);
  // The date header names whole seconds: formatted once per second, not once per request.
  let second = NaN;
  let date = '';
  return {
    method: 'http-signature',
    authenticate(r) {
      const now = r.now.getTime();
      if (Math.floor(now / 1000) !== second) {
        second = Math.floor(now / 1000);
        date = r.now.toUTCString();
      }
      const headers = sign({
        method: r.method,
        path: r.path,
        host: r.host,
        date,
        body: r.body,
      });
      // A fresh object per request (the contract of `authenticate`); no copy needed.
      return Promise.resolve<Record<string, string>>(headers);
    },
  };
}

/** JWT "v2" bearer tokens (RS256 or HS256); the key may be loaded lazily (PKCS#12 needs an async import). */
export function jwtAuthenticator(merchantId: string, key: JwtKey | (() => Promise<JwtKey>)): Authenticator {
  let loaded: Promise<JwtKey> | undefined = typeof key === 'function' ? undefined : Promise.resolve(key);
  return {
    method: 'jwt',
    async authenticate(r) {
      loaded ??= (key as () => Promise<JwtKey>)();
      const k = await loaded;
      const token = createJwt(k, {
        method: r.method,
        host: r.host,
        path: r.path,
        body: r.body,
        merchantId,
        nowMs: r.now.getTime(),
      });
      return { authorization: `Bearer ${token}` };
    },
  };
}

/** OAuth bearer (spec 000): the access token of a token manager; a 401 ACCESS_TOKEN_EXPIRED renews it once. */
export function oauthAuthenticator(tokens: BearerTokenSource): Authenticator {
  return {
    method: 'oauth',
    async authenticate() {
      return { authorization: `Bearer ${await tokens.accessToken()}` };
    },
    renewAfterUnauthorized: (body, sent) => {
      const authorization = sent.authorization;
      return tokens.renewAfterUnauthorized(
        body,
        authorization?.startsWith('Bearer ') ? authorization.slice('Bearer '.length) : undefined,
      );
    },
    connectionNeeded: () => tokens.connectionNeeded?.(),
  };
}

/** Options of {@link createAuthenticator}. */
export interface CreateAuthenticatorOptions {
  /**
   * Reads a secret file. Injected by tests and by keystore integrations. Default: UTF-8 contents, trimmed, of a file
   * accessible to its owner only (src/config/secret-file.ts).
   */
  readSecretFile?: (path: string) => string;
  /** Reads a binary key file (PKCS#12). Default: the bytes of a file accessible to its owner only. */
  readBinaryFile?: (path: string) => Buffer;
  /** Shared secret used when `sharedSecretFile` is absent (the embedded sandbox's public demo key). */
  defaultSharedSecret?: string;
  /** Token source for `method: oauth`. */
  oauth?: BearerTokenSource;
}

function configError(key: string, message: string): GatewayError {
  return new GatewayError('GW_CONFIG', `gateway.auth.${key}: ${message}`);
}

/**
 * The authenticator of the configured method (`gateway.auth`). Key files are read now, so that a wrong path or a
 * bad key fails at start with the configuration key named, not at the first payment. Secret files (shared secret,
 * private key, PKCS#12 file and its password) must be accessible to their owner only; the certificate is public.
 *
 * @throws SecretFileError (src/config/secret-file.ts) naming the key and the file when a secret file is missing,
 *   unreadable or accessible to group or others; GatewayError GW_CONFIG naming the key otherwise, or GW_AUTH when a
 *   key file cannot be used.
 */
export function createAuthenticator(
  auth: Config['gateway']['auth'],
  merchantId: string,
  options: CreateAuthenticatorOptions = {},
): Authenticator {
  const { readSecretFile: readInjected, readBinaryFile: readBinaryInjected } = options;
  const wrap = <T>(key: string, path: string, readFile: (p: string) => T): T => {
    try {
      return readFile(path);
    } catch (e) {
      throw new GatewayError('GW_CONFIG', `gateway.auth.${key}: cannot read ${path}`, { cause: e });
    }
  };
  const read = (key: string, path: string): string =>
    readInjected ? wrap(key, path, readInjected) : readSecretText(path, `gateway.auth.${key}`);
  const readBinary = (key: string, path: string): Buffer =>
    readBinaryInjected ? wrap(key, path, readBinaryInjected) : readSecretFile(path, `gateway.auth.${key}`);
  // A certificate is public: read as it is, without the owner-only rule of secret files.
  const readPublic = (key: string, path: string): string =>
    wrap(key, path, readInjected ?? ((p: string) => readFileSync(p, 'utf8').trim()));
  const sharedSecret = (): string => {
    if (auth.sharedSecretFile !== undefined) return read('sharedSecretFile', auth.sharedSecretFile);
    if (options.defaultSharedSecret !== undefined) return options.defaultSharedSecret;
    throw configError('sharedSecretFile', 'required for this authentication method');
  };
  // A secret file whose text is no usable secret (not base64) is refused naming the key and the file: the operator
  // must know which file to fix.
  const withSharedSecret = <T>(use: (secret: string) => T): T => {
    const secret = sharedSecret();
    try {
      return use(secret);
    } catch (e) {
      if (auth.sharedSecretFile === undefined || !(e instanceof GatewayError)) throw e;
      throw new GatewayAuthError(`gateway.auth.sharedSecretFile: ${auth.sharedSecretFile}: ${e.message}`, {
        cause: e,
      });
    }
  };
  switch (auth.method) {
    case 'http-signature':
      // Named by their configuration keys here, before the secret file's own checks.
      for (const [key, what, value] of [
        ['gateway.merchantId', 'merchant id', merchantId],
        ['gateway.auth.keyId', 'key id', auth.keyId],
      ] as const) {
        try {
          assertSignedIdentity(what, value);
        } catch (e) {
          throw new GatewayError('GW_CONFIG', `${key}: ${(e as Error).message}`, { cause: e });
        }
      }
      return withSharedSecret((secret) => httpSignatureAuthenticator(merchantId, auth.keyId, secret));
    case 'jwt': {
      if (auth.jwtAlgorithm === 'HS256')
        return withSharedSecret((secret) => jwtAuthenticator(merchantId, hmacKey(secret, auth.keyId)));
      if (auth.pkcs12File !== undefined) {
        const p12 = readBinary('pkcs12File', auth.pkcs12File);
        const password =
          auth.pkcs12PasswordFile !== undefined ? read('pkcs12PasswordFile', auth.pkcs12PasswordFile) : '';
        return jwtAuthenticator(merchantId, () => rsaKeyFromPkcs12(p12, password));
      }
      if (auth.privateKeyFile === undefined)
        throw configError('privateKeyFile', 'RS256 needs a key (or pkcs12File)');
      if (auth.certificateFile === undefined)
        throw configError('certificateFile', 'RS256 needs the certificate');
      return jwtAuthenticator(
        merchantId,
        rsaKeyFromPem(
          read('privateKeyFile', auth.privateKeyFile),
          readPublic('certificateFile', auth.certificateFile),
        ),
      );
    }
    case 'oauth':
      if (options.oauth === undefined) {
        throw new GatewayAuthError(
          'OAuth is configured but no token manager was provided (run `oauth authorize`)',
        );
      }
      return oauthAuthenticator(options.oauth);
  }
}
