import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadOrCreateSecret } from './keys.js';

function dir(): string {
  return mkdtempSync(join(tmpdir(), 'pt-keys-'));
}

describe('loadOrCreateSecret', () => {
  it('creates a 32-byte key readable by its owner only, and reads the same key back', () => {
    const path = join(dir(), 'var', 'fingerprint.key');
    const first = loadOrCreateSecret(path);
    expect(first).toHaveLength(32);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readFileSync(path, 'utf8')).toBe(`${first.toString('hex')}\n`);
    expect(loadOrCreateSecret(path).equals(first)).toBe(true);
  });

  it('replaces a file that holds no key (empty or cut short) with a new one, whole', () => {
    const path = join(dir(), 'fingerprint.key');
    writeFileSync(path, '', { mode: 0o600 });
    const key = loadOrCreateSecret(path);
    expect(key).toHaveLength(32);
    expect(readFileSync(path, 'utf8')).toBe(`${key.toString('hex')}\n`);
    writeFileSync(path, 'abcd\n', { mode: 0o600 });
    expect(loadOrCreateSecret(path)).toHaveLength(32);
  });

  it('refuses a key file others can read', () => {
    const path = join(dir(), 'fingerprint.key');
    writeFileSync(path, `${'ab'.repeat(32)}\n`, { mode: 0o644 });
    expect(() => loadOrCreateSecret(path)).toThrow(/SECRET_FILE_EXPOSED|group or others|readable/);
  });
});
