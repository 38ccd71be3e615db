import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { readSecretText, SecretFileError } from '../config/secret-file.js';

/**
 * A 32-byte secret kept in a file readable only by the service user (created 0600 when absent). Used for the
 * tap-and-go card fingerprint key, which must survive restarts so that a car that entered before a restart can exit.
 * An existing file accessible to group or others is refused like every secret file (src/config/secret-file.ts).
 *
 * @param key the configuration key the file derives from, named in errors (the fingerprint key sits beside the
 *   journal, `journal.path`).
 * @throws SecretFileError SECRET_FILE_EXPOSED or SECRET_FILE_UNREADABLE (other than absent).
 */
export function loadOrCreateSecret(path: string, key = 'journal.path'): Buffer {
  try {
    const secret = Buffer.from(readSecretText(path, key), 'hex');
    if (secret.length === 32) return secret;
  } catch (e) {
    const absent =
      e instanceof SecretFileError && (e.cause as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
    if (!absent) throw e;
  }
  const secret = randomBytes(32);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${secret.toString('hex')}\n`, { mode: 0o600, flag: 'w' });
  chmodSync(path, 0o600);
  return secret;
}
