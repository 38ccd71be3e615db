import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Config } from './schema.js';

/**
 * Files that hold secrets (DESIGN.md, Configuration: "secrets come from files or the OS keystore"): the gateway's
 * shared secret and private keys, the OAuth client secret, the operator PIN, the key for card data at rest. One rule
 * for all of them, stated once here: on POSIX a secret file must be accessible to its owner only (no group or other
 * permission bits, i.e. mode 0600 or 0400); a file others can read may already have leaked and is refused rather than
 * used. Windows has no POSIX mode bits (ACLs guard the file there), so the rule does not apply.
 */

/** Stable codes of {@link SecretFileError}. */
export type SecretFileErrorCode =
  /** The file is absent or cannot be read by the service user. */
  | 'SECRET_FILE_UNREADABLE'
  /** The file is readable or writable by group or others. */
  | 'SECRET_FILE_EXPOSED';

/** A secret file that cannot be used; names the configuration key and the file (exit 2 at start). */
export class SecretFileError extends Error {
  override readonly name = 'SecretFileError';
  constructor(
    readonly code: SecretFileErrorCode,
    message: string,
    /** The configuration key that names the file, e.g. `terminal.operatorPinFile`. */
    readonly key: string,
    /** The file as resolved (absolute when the caller resolved it). */
    readonly file: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * The rule itself: whether a file of this `mode` (from `stat`) is accessible to group or others. Every secret file
 * of the terminal goes through this one predicate, including the offline key file of src/journal/encryption.ts.
 */
export function exposedToOthers(mode: number, platform: NodeJS.Platform = process.platform): boolean {
  return platform !== 'win32' && (mode & 0o077) !== 0;
}

/**
 * Checks that `file` exists, is a regular file and is accessible to its owner only.
 * @throws SecretFileError SECRET_FILE_UNREADABLE or SECRET_FILE_EXPOSED, naming `key` and `file`.
 */
export function assertPrivateFile(file: string, key: string): void {
  let mode: number;
  try {
    const stats = statSync(file);
    if (!stats.isFile())
      throw new SecretFileError('SECRET_FILE_UNREADABLE', `${key}: ${file} is not a file`, key, file);
    mode = stats.mode;
  } catch (e) {
    if (e instanceof SecretFileError) throw e;
    throw new SecretFileError('SECRET_FILE_UNREADABLE', `${key}: cannot read ${file}`, key, file, {
      cause: e,
    });
  }
  if (exposedToOthers(mode))
    throw new SecretFileError(
      'SECRET_FILE_EXPOSED',
      `${key}: ${file} is accessible to group or others; make it mode 0600 (chmod 600 ${file})`,
      key,
      file,
    );
}

/**
 * The bytes of a secret file, after {@link assertPrivateFile}.
 * @throws SecretFileError naming `key` and `file`.
 */
export function readSecretFile(file: string, key: string): Buffer {
  assertPrivateFile(file, key);
  try {
    return readFileSync(file);
  } catch (e) {
    throw new SecretFileError('SECRET_FILE_UNREADABLE', `${key}: cannot read ${file}`, key, file, {
      cause: e,
    });
  }
}

/**
 * The text of a secret file (UTF-8, surrounding whitespace trimmed), after {@link assertPrivateFile}.
 * @throws SecretFileError naming `key` and `file`.
 */
export function readSecretText(file: string, key: string): string {
  return readSecretFile(file, key).toString('utf8').trim();
}

/**
 * The secret files a configuration names, each with its key, resolved against `cwd`. The certificate
 * (`gateway.auth.certificateFile`) is public and not listed; `offline.keyFile` is created by the terminal when absent
 * and checked by the journal when it is read.
 */
export function configuredSecretFiles(config: Config, cwd: string): Array<{ key: string; file: string }> {
  const auth = config.gateway.auth;
  const named: Array<[string, string | undefined]> = [
    ['gateway.auth.sharedSecretFile', auth.sharedSecretFile],
    ['gateway.auth.privateKeyFile', auth.privateKeyFile],
    ['gateway.auth.pkcs12File', auth.pkcs12File],
    ['gateway.auth.pkcs12PasswordFile', auth.pkcs12PasswordFile],
    ['oauth.clientSecretFile', config.oauth.clientSecretFile],
    ['terminal.operatorPinFile', config.terminal.operatorPinFile],
    // The fleet link: its TLS key, broker password and fleet key (the CA, certificate and user name are public).
    ['fleet.keyFile', config.fleet?.keyFile],
    ['fleet.passwordFile', config.fleet?.passwordFile],
    ['fleet.commandKeyFile', config.fleet?.commandKeyFile],
  ];
  return named.flatMap(([key, file]) => (file === undefined ? [] : [{ key, file: resolve(cwd, file) }]));
}

/**
 * Checks every secret file the configuration names ({@link configuredSecretFiles}) before anything starts, so that
 * a wrong one stops the start before a server listens or the journal opens.
 * @throws SecretFileError for the first file that cannot be used.
 */
export function assertConfiguredSecretFiles(config: Config, cwd: string): void {
  for (const { key, file } of configuredSecretFiles(config, cwd)) assertPrivateFile(file, key);
}

/**
 * The configuration with every secret file path absolute, resolved against `cwd` (README: relative paths resolve
 * against the directory the terminal is started in), so that no reader of a secret depends on the process's own
 * working directory.
 */
export function withSecretFilesResolved(config: Config, cwd: string): Config {
  const auth = config.gateway.auth;
  const pick = <K extends string>(key: K, file: string | undefined): Partial<Record<K, string>> =>
    file === undefined ? {} : ({ [key]: resolve(cwd, file) } as Record<K, string>);
  return {
    ...config,
    terminal: { ...config.terminal, ...pick('operatorPinFile', config.terminal.operatorPinFile) },
    gateway: {
      ...config.gateway,
      auth: {
        ...auth,
        ...pick('sharedSecretFile', auth.sharedSecretFile),
        ...pick('privateKeyFile', auth.privateKeyFile),
        ...pick('certificateFile', auth.certificateFile),
        ...pick('pkcs12File', auth.pkcs12File),
        ...pick('pkcs12PasswordFile', auth.pkcs12PasswordFile),
      },
    },
    oauth: { ...config.oauth, ...pick('clientSecretFile', config.oauth.clientSecretFile) },
    ...(config.fleet ? { fleet: fleetFilesResolved(config.fleet, cwd) } : {}),
  };
}

/**
 * The fleet section with the paths of the files its link reads (CA, certificate, key, user name, password, fleet key)
 * absolute, resolved against `cwd`: {@link withSecretFilesResolved}'s rule for that section alone (a terminal whose
 * configuration was refused links to the fleet with the section when it is valid on its own).
 */
export function fleetFilesResolved(
  fleet: NonNullable<Config['fleet']>,
  cwd: string,
): NonNullable<Config['fleet']> {
  const pick = <K extends string>(key: K, file: string | undefined): Partial<Record<K, string>> =>
    file === undefined ? {} : ({ [key]: resolve(cwd, file) } as Record<K, string>);
  return {
    ...fleet,
    ...pick('caFile', fleet.caFile),
    ...pick('certFile', fleet.certFile),
    ...pick('keyFile', fleet.keyFile),
    ...pick('usernameFile', fleet.usernameFile),
    ...pick('passwordFile', fleet.passwordFile),
    ...pick('commandKeyFile', fleet.commandKeyFile),
  };
}
