import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  fileKeyProvider,
  keyCheckValue,
  open,
  pendingKeyPath,
  readPendingKey,
  seal,
  staticKeyProvider,
} from './encryption.js';

const KEY = Buffer.alloc(32, 1);

describe('encryption at rest', () => {
  it('round-trips bytes under the same key and context', () => {
    const sealed = seal(KEY, Buffer.from('track data'), 'ctx');
    expect(sealed.toString('latin1')).not.toContain('track data');
    expect(open(KEY, sealed, 'ctx').toString()).toBe('track data');
  });

  it('uses a fresh nonce for every message', () => {
    expect(seal(KEY, Buffer.from('x'), 'c').equals(seal(KEY, Buffer.from('x'), 'c'))).toBe(false);
    // Across several draws from the system's generator (512 nonces each), none repeats and each opens.
    const sealed = Array.from({ length: 2_000 }, (_, i) => seal(KEY, Buffer.from(`m${i}`), 'c'));
    expect(new Set(sealed.map((s) => s.subarray(1, 13).toString('hex'))).size).toBe(2_000);
    expect(sealed.every((s, i) => open(KEY, s, 'c').toString() === `m${i}`)).toBe(true);
  });

  it.each([
    ['another key', (s: Buffer) => open(Buffer.alloc(32, 2), s, 'ctx')],
    ['another context (a ciphertext moved to another row)', (s: Buffer) => open(KEY, s, 'other')],
    ['a flipped byte', (s: Buffer) => open(KEY, Buffer.from(s.map((b, i) => (i === 20 ? b ^ 1 : b))), 'ctx')],
    ['truncated bytes', (s: Buffer) => open(KEY, s.subarray(0, 10), 'ctx')],
  ])('refuses to decrypt with %s', (_name, attempt) => {
    const sealed = seal(KEY, Buffer.from('secret'), 'ctx');
    expect(() => attempt(sealed)).toThrowError(expect.objectContaining({ code: 'JOURNAL_DECRYPT' }) as Error);
  });

  it('refuses a key of the wrong length', () => {
    expect(() => seal(Buffer.alloc(16), Buffer.from('x'), 'c')).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_KEY' }) as Error,
    );
    expect(() => staticKeyProvider(Buffer.alloc(31))).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_KEY' }) as Error,
    );
  });

  it('identifies a key by a check value that differs between keys', () => {
    expect(keyCheckValue(KEY)).toBe(keyCheckValue(Buffer.alloc(32, 1)));
    expect(keyCheckValue(KEY)).not.toBe(keyCheckValue(Buffer.alloc(32, 2)));
    expect(keyCheckValue(KEY)).not.toContain(KEY.toString('hex'));
  });
});

describe('key file', () => {
  it('creates the key file with mode 0600 and returns the same key afterwards', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'key-')), 'sub', 'offline.key');
    const key = fileKeyProvider(path).loadKey();
    expect(key).toHaveLength(32);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readFileSync(path, 'utf8').trim()).toBe(key.toString('hex'));
    expect(fileKeyProvider(path).loadKey().equals(key)).toBe(true);
  });

  it('creates the key file from a synced draft of its own, which it does not leave behind', () => {
    const dir = mkdtempSync(join(tmpdir(), 'key-'));
    const path = join(dir, 'offline.key');
    const key = fileKeyProvider(path).loadKey();
    expect(readFileSync(path, 'utf8')).toBe(`${key.toString('hex')}\n`);
    expect(readdirSync(dir)).toEqual(['offline.key']);
    // A second process starting meanwhile finds the first's key and keeps it (the link never replaces a key).
    expect(fileKeyProvider(path).loadKey().equals(key)).toBe(true);
  });

  it('accepts a base64 key written by an operator', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'key-')), 'k');
    writeFileSync(path, `${Buffer.alloc(32, 5).toString('base64')}\n`, { mode: 0o600 });
    expect(fileKeyProvider(path).loadKey().equals(Buffer.alloc(32, 5))).toBe(true);
  });

  it.skipIf(process.platform === 'win32')('refuses a key file readable by group or others', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'key-')), 'k');
    fileKeyProvider(path).loadKey();
    chmodSync(path, 0o644);
    expect(() => fileKeyProvider(path).loadKey()).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_KEY' }) as Error,
    );
  });

  // Nothing but a file is read as a key: a pipe blocks the read until something writes to it (the start hung for
  // ever, deaf to SIGTERM), and what it gives is nobody's stored key. Here a writer waits on the pipe, so that a read
  // comes back with its key instead of hanging the test.
  it.skipIf(process.platform === 'win32')(
    'refuses a key file or a pending key that is not a file (a named pipe), without reading it',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'key-'));
      const keyFile = join(dir, 'k');
      for (const [pipe, read] of [
        [keyFile, () => fileKeyProvider(keyFile).loadKey()],
        [pendingKeyPath(keyFile), () => readPendingKey(keyFile)],
      ] as const) {
        execFileSync('mkfifo', ['-m', '600', pipe]);
        const writer = spawn('sh', ['-c', 'printf %s "$0" > "$1"', 'ab'.repeat(32), pipe], {
          stdio: 'ignore',
        });
        try {
          expect(read, pipe).toThrowError(
            expect.objectContaining({
              code: 'JOURNAL_KEY',
              message: expect.stringContaining('not a file') as string,
            }) as Error,
          );
        } finally {
          writer.kill();
        }
      }
    },
  );

  it('refuses a key file that does not hold a 32-byte key', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'key-')), 'k');
    writeFileSync(path, 'abcd\n', { mode: 0o600 });
    expect(() => fileKeyProvider(path).loadKey()).toThrowError(
      expect.objectContaining({ code: 'JOURNAL_KEY' }) as Error,
    );
  });
});
