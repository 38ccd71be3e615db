import { randomBytes } from 'node:crypto';
import { writePrivateFileDurably } from '../config/durable-file.js';
import { readSecretText, SecretFileError } from '../config/secret-file.js';

/**
 * A 32-byte secret kept in a file readable only by the service user (created 0600 when absent, whole and synced: a
 * power cut never leaves an empty key that the next start would replace). Used for the tap-and-go card fingerprint
 * key, which must survive restarts so that a car that entered before a restart can exit.
 * An existing file accessible to group or others is refused like every secret file (src/config/secret-file.ts).
 *
 * @param key the configuration key the file derives from, named in errors (the fingerprint key sits beside the
 *   journal, `journal.path`).
 * @throws SecretFileError SECRET_FILE_EXPOSED or SECRET_FILE_UNREADABLE (other than absent).
 */
export function loadOrCreateSecret(path: string, key = 'journal.path'): Buffer {
  let present = true;
  try {
    const secret = Buffer.from(readSecretText(path, key), 'hex');
    if (secret.length === 32) return secret;
  } catch (e) {
    const absent =
      e instanceof SecretFileError && (e.cause as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
    if (!absent) throw e;
    present = false;
  }
  // A file that holds no key (empty, cut short by an earlier release's unsynced write) is replaced.
  const secret = randomBytes(32);
  try {
    writePrivateFileDurably(path, `${secret.toString('hex')}\n`, present ? 'replace' : 'create');
  } catch (e) {
    // Another process created it first: its key is the one.
    if (!present && (e as NodeJS.ErrnoException).code === 'EEXIST') return loadOrCreateSecret(path, key);
    throw e;
  }
  return secret;
}
