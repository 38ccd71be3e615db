import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * A 32-byte secret kept in a file readable only by the service user (created 0600 when absent). Used for the
 * tap-and-go card fingerprint key, which must survive restarts so that a car that entered before a restart can exit.
 */
export function loadOrCreateSecret(path: string): Buffer {
  try {
    const text = readFileSync(path, 'utf8').trim();
    const key = Buffer.from(text, 'hex');
    if (key.length === 32) return key;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  const key = randomBytes(32);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${key.toString('hex')}\n`, { mode: 0o600, flag: 'w' });
  chmodSync(path, 0o600);
  return key;
}
