import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { syncDirectory, writePrivateFileDurably } from '../config/durable-file.js';
import { assertPrivateFile, SecretFileError } from '../config/secret-file.js';
import { JournalError } from './errors.js';

/**
 * Card data at rest (DESIGN.md, money safety rule 4): AES-256-GCM, a fresh 96-bit nonce per message, and associated
 * data naming what the bytes are (e.g. the row's transactionId) so that a ciphertext moved to another row fails to
 * decrypt instead of forwarding the wrong card.
 *
 * Sealed format: `0x01 | nonce (12) | ciphertext | tag (16)`.
 */

const FORMAT_V1 = 0x01;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** What {@link seal} adds to a plaintext: format byte, nonce and tag. */
export const SEAL_OVERHEAD_BYTES = 1 + NONCE_BYTES + TAG_BYTES;
/** AES-256 key length in bytes. */
export const KEY_BYTES = 32;

/**
 * Where the AES-256 key for card data at rest comes from. The terminal core ships {@link fileKeyProvider}; the Electron
 * shell (main/) provides one backed by the OS keystore (`safeStorage`), which keeps the key encrypted under the
 * user's login keychain.
 */
export interface KeyProvider {
  /** Short description for logs and errors (never the key), e.g. "key file var/offline.key". */
  readonly description: string;
  /**
   * Returns the 32-byte key, creating and persisting it on first use. Must return the same key on every call and
   * across restarts (stored offline payments cannot be forwarded otherwise). Throws {@link JournalError} code
   * `JOURNAL_KEY` when the key cannot be read or created.
   */
  loadKey(): Buffer;
}

function requireKey(key: Buffer): Buffer {
  if (key.length !== KEY_BYTES)
    throw new JournalError('JOURNAL_KEY', `an AES-256 key has ${KEY_BYTES} bytes, got ${key.length}`);
  return key;
}

/** Random bytes drawn from the system's generator in blocks: one call per 512 nonces instead of one per message. */
const NONCES_PER_DRAW = 512;
let noncePool = Buffer.alloc(0);
let nonceAt = 0;

function freshNonce(): Buffer {
  if (nonceAt + NONCE_BYTES > noncePool.length) {
    noncePool = randomBytes(NONCE_BYTES * NONCES_PER_DRAW);
    nonceAt = 0;
  }
  const nonce = noncePool.subarray(nonceAt, nonceAt + NONCE_BYTES);
  nonceAt += NONCE_BYTES;
  return nonce;
}

/** Encrypts `plaintext` under `key`, binding it to `context` (associated data, not secret). */
export function seal(key: Buffer, plaintext: Buffer, context: string): Buffer {
  const sealed = Buffer.allocUnsafe(SEAL_OVERHEAD_BYTES + plaintext.length);
  sealed[0] = FORMAT_V1;
  const nonce = freshNonce();
  nonce.copy(sealed, 1);
  const cipher = createCipheriv('aes-256-gcm', requireKey(key), nonce);
  cipher.setAAD(Buffer.from(context, 'utf8'));
  // GCM is a stream mode: update() returns as many bytes as it was given and final() none.
  let at = 1 + NONCE_BYTES;
  at += cipher.update(plaintext).copy(sealed, at);
  at += cipher.final().copy(sealed, at);
  cipher.getAuthTag().copy(sealed, at);
  return sealed;
}

/** Decrypts what {@link seal} produced with the same key and context; `JOURNAL_DECRYPT` otherwise. */
export function open(key: Buffer, sealed: Buffer, context: string): Buffer {
  if (sealed.length < 1 + NONCE_BYTES + TAG_BYTES || sealed[0] !== FORMAT_V1)
    throw new JournalError('JOURNAL_DECRYPT', 'encrypted data is truncated or of an unknown format');
  const nonce = sealed.subarray(1, 1 + NONCE_BYTES);
  const tag = sealed.subarray(sealed.length - TAG_BYTES);
  const body = sealed.subarray(1 + NONCE_BYTES, sealed.length - TAG_BYTES);
  try {
    const decipher = createDecipheriv('aes-256-gcm', requireKey(key), nonce);
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(body), decipher.final()]);
  } catch (cause) {
    if (cause instanceof JournalError) throw cause;
    throw new JournalError('JOURNAL_DECRYPT', 'encrypted data does not decrypt: wrong key or altered bytes', {
      cause,
    });
  }
}

/**
 * A value that identifies a key without revealing it (HMAC of a fixed label), stored beside the data so that a
 * terminal started with another key refuses to run instead of failing on each stored payment later.
 */
export function keyCheckValue(key: Buffer): string {
  return createHmac('sha256', requireKey(key))
    .update('parking-terminal key check v1')
    .digest('hex')
    .slice(0, 32);
}

function parseKeyText(text: string, path: string): Buffer {
  const t = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(t) ? Buffer.from(t, 'hex') : Buffer.from(t, 'base64');
  if (key.length !== KEY_BYTES || (!/^[0-9a-fA-F]{64}$/.test(t) && !/^[A-Za-z0-9+/]{43}=$/.test(t)))
    throw new JournalError(
      'JOURNAL_KEY',
      `${path}: not a 32-byte key in hex (64 digits) or base64; restore the key file from a backup (the terminal ` +
        'never replaces a key file: what was made under the key would no longer match)',
    );
  return key;
}

/** The key file's text: 64 hex digits and a newline. */
function keyText(key: Buffer): string {
  return `${requireKey(key).toString('hex')}\n`;
}

/**
 * Creates the key file whole and durably, or not at all ({@link writePrivateFileDurably}, `create`: linked into place,
 * which fails with EEXIST when a key is there already — never replaced). A power cut therefore never leaves a key file
 * that is empty or cut short, nor payments stored (each synced by the journal) under a key whose file the disk never
 * got: either would make them unreadable.
 */
function createKeyFile(path: string, beforeCreate: (() => void) | undefined): void {
  if (existsSync(path)) return;
  beforeCreate?.();
  writePrivateFileDurably(path, keyText(randomBytes(KEY_BYTES)), 'create');
}

/**
 * The side file of a key rotation of the key file `path`: the new key, durably on disk before anything is sealed under
 * it, until it is renamed over `path` (see `rotateKeyFile`, src/journal/at-rest-key.ts).
 */
export function pendingKeyPath(path: string): string {
  return `${path}.rotating`;
}

/**
 * Writes `key` as the pending key of `path` ({@link pendingKeyPath}), whole and durably ({@link writePrivateFileDurably},
 * `replace`: file and directory synced).
 */
export function writePendingKey(path: string, key: Buffer): void {
  writePrivateFileDurably(pendingKeyPath(path), keyText(key), 'replace');
}

/**
 * The pending key of `path`: `undefined` when there is none, `null` when its file is not a whole key (it cannot be:
 * it is renamed into place only once synced, so nothing was ever sealed under it).
 */
export function readPendingKey(path: string): Buffer | null | undefined {
  let text: string;
  try {
    // Only a file (as the rotation writes it) is read: a pipe's read would wait for a writer.
    if (!statSync(pendingKeyPath(path)).isFile())
      throw new JournalError('JOURNAL_KEY', `${pendingKeyPath(path)}: not a file; a pending key is a file`);
    text = readFileSync(pendingKeyPath(path), 'utf8');
  } catch (e) {
    if (e instanceof JournalError) throw e;
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new JournalError('JOURNAL_KEY', `${pendingKeyPath(path)}: cannot read the pending key`, {
      cause: e,
    });
  }
  try {
    return parseKeyText(text, pendingKeyPath(path));
  } catch {
    return null;
  }
}

/** Moves the pending key over the key file `path` (one rename) and syncs the directory: the rotation's last step. */
export function installPendingKey(path: string): void {
  try {
    renameSync(pendingKeyPath(path), path);
  } catch (e) {
    throw new JournalError('JOURNAL_KEY', `${path}: cannot move the new key into place`, { cause: e });
  }
  syncDirectory(dirname(path));
}

/** Removes the pending key of `path`, durably: a rotation undone (nothing in the journal is sealed under it). */
export function discardPendingKey(path: string): void {
  rmSync(pendingKeyPath(path), { force: true });
  syncDirectory(dirname(path));
}

/** A {@link KeyProvider} whose key is kept in a file: the one kind the terminal can rotate itself. */
export interface FileKeyProvider extends KeyProvider {
  /** Absolute path of the key file (`offline.keyFile`). */
  readonly keyFile: string;
}

/** Whether `provider` keeps its key in a file ({@link fileKeyProvider}). */
export function isFileKeyProvider(provider: KeyProvider): provider is FileKeyProvider {
  return typeof (provider as Partial<FileKeyProvider>).keyFile === 'string';
}

/** How {@link fileKeyProvider} names its file and when it may create it. */
export interface KeyFileOptions {
  /** The configuration key the file derives from, named in errors (default `offline.keyFile`). */
  readonly configKey?: string;
  /**
   * Called when the file is absent, before a new key is created: throws (`JOURNAL_KEY`) when what is kept elsewhere
   * was made under a key the file held, which a new key would not match.
   */
  readonly beforeCreate?: () => void;
}

/**
 * A key kept in a file readable only by the service user: the one rule of the terminal's key files (the key for data
 * at rest, the card fingerprint key of src/host/keys.ts). The file is created with mode 0600 holding 64 hex digits,
 * whole and durably, only when it is absent ({@link createKeyFile}; two processes starting together agree on one key);
 * an existing file must not be readable or writable by group or others (POSIX), and must hold a key: otherwise it is
 * refused (`JOURNAL_KEY`), never used nor replaced.
 */
export function fileKeyProvider(path: string, options: KeyFileOptions = {}): FileKeyProvider {
  const configKey = options.configKey ?? 'offline.keyFile';
  let cached: Buffer | undefined;
  return {
    description: `key file ${path}`,
    keyFile: path,
    loadKey(): Buffer {
      if (cached) return cached;
      try {
        createKeyFile(path, options.beforeCreate);
      } catch (e) {
        if (e instanceof JournalError) throw e;
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST')
          throw new JournalError('JOURNAL_KEY', `${path}: cannot create the key file`, { cause: e });
      }
      let text: string;
      try {
        // The secret files' one rule: a file, accessible to its owner only (never a pipe or a device, whose read
        // waits for a writer that may never come).
        assertPrivateFile(path, configKey);
        text = readFileSync(path, 'utf8');
      } catch (e) {
        if (e instanceof SecretFileError)
          throw new JournalError(
            'JOURNAL_KEY',
            e.code === 'SECRET_FILE_EXPOSED' ? e.message : `${path}: cannot read the key file (${e.message})`,
            { cause: e },
          );
        throw new JournalError('JOURNAL_KEY', `${path}: cannot read the key file`, { cause: e });
      }
      cached = parseKeyText(text, path);
      return cached;
    },
  };
}

/**
 * What the key file `path` holds, read without the checks of {@link fileKeyProvider} (a key readable by group or others
 * is still a key): `missing`, `no-key` (a file that is not a whole key: empty, cut short, not a key), or `key`.
 * `JOURNAL_KEY` for a path that is not a file or cannot be read.
 */
export function keyFileHolds(path: string): 'missing' | 'no-key' | 'key' {
  let text: string;
  try {
    // Only a file is read: a pipe's read would wait for a writer.
    if (!statSync(path).isFile())
      throw new JournalError('JOURNAL_KEY', `${path}: not a file; a key file is a file`);
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if (e instanceof JournalError) throw e;
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw new JournalError('JOURNAL_KEY', `${path}: cannot read the key file`, { cause: e });
  }
  try {
    parseKeyText(text, path);
    return 'key';
  } catch {
    return 'no-key';
  }
}

/**
 * Writes a new random key to the key file `path`, whole and durably ({@link writePrivateFileDurably}), where it is
 * missing (`create`: never over a key written meanwhile) or holds no key (`replace`): the deliberate replacement of a
 * lost key, whatever was made under it. `JOURNAL_KEY`, writing nothing, when the file holds a key (never replaced).
 */
export function writeKeyFileInPlaceOfLost(path: string): void {
  const holds = keyFileHolds(path);
  if (holds === 'key') throw new JournalError('JOURNAL_KEY', `${path}: holds a key, which is never replaced`);
  try {
    writePrivateFileDurably(
      path,
      keyText(randomBytes(KEY_BYTES)),
      holds === 'missing' ? 'create' : 'replace',
    );
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST')
      throw new JournalError(
        'JOURNAL_KEY',
        `${path}: a key file was created meanwhile; it is never replaced`,
        {
          cause: e,
        },
      );
    throw new JournalError('JOURNAL_KEY', `${path}: cannot write the key file`, { cause: e });
  }
}

/** A provider for a key held in memory (tests, benchmarks, keys unwrapped by another mechanism). */
export function staticKeyProvider(key: Buffer, description = 'key in memory'): KeyProvider {
  const copy = Buffer.from(requireKey(key));
  return { description, loadKey: () => copy };
}
