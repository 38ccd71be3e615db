import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from './load.js';
import {
  assertConfiguredSecretFiles,
  assertPrivateFile,
  configuredSecretFiles,
  exposedToOthers,
  readSecretText,
  SecretFileError,
  withSecretFilesResolved,
} from './secret-file.js';

const posix = process.platform !== 'win32';
let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'pt-secret-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function secret(name: string, text: string, mode: number): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  chmodSync(file, mode);
  return file;
}

function thrown(f: () => unknown): SecretFileError {
  try {
    f();
  } catch (e) {
    if (e instanceof SecretFileError) return e;
    throw e;
  }
  throw new Error('expected a SecretFileError');
}

describe('exposedToOthers', () => {
  it('accepts owner-only modes and refuses any group or other bit on POSIX', () => {
    expect(exposedToOthers(0o100600, 'linux')).toBe(false);
    expect(exposedToOthers(0o100400, 'linux')).toBe(false);
    expect(exposedToOthers(0o100700, 'linux')).toBe(false);
    for (const bit of [0o040, 0o020, 0o010, 0o004, 0o002, 0o001])
      expect(exposedToOthers(0o100600 | bit, 'linux')).toBe(true);
  });

  it('does not apply on Windows, which has no POSIX mode bits', () => {
    expect(exposedToOthers(0o100666, 'win32')).toBe(false);
  });
});

describe.runIf(posix)('readSecretText', () => {
  it('reads an owner-only file, trimmed', () => {
    expect(readSecretText(secret('pin', ' 4321\n', 0o600), 'terminal.operatorPinFile')).toBe('4321');
  });

  it('refuses a group-readable file, naming the key and the file', () => {
    const file = secret('pin', '4321\n', 0o640);
    const e = thrown(() => readSecretText(file, 'terminal.operatorPinFile'));
    expect(e).toMatchObject({ code: 'SECRET_FILE_EXPOSED', key: 'terminal.operatorPinFile', file });
    expect(e.message).toContain('terminal.operatorPinFile');
    expect(e.message).toContain(file);
  });

  it('refuses a file others can write', () => {
    const file = secret('secret', 'c2VjcmV0', 0o602);
    expect(thrown(() => readSecretText(file, 'gateway.auth.sharedSecretFile')).code).toBe(
      'SECRET_FILE_EXPOSED',
    );
  });

  it('reports a missing file as unreadable, naming the key and the file', () => {
    const file = join(dir, 'absent');
    expect(thrown(() => readSecretText(file, 'gateway.auth.sharedSecretFile'))).toMatchObject({
      code: 'SECRET_FILE_UNREADABLE',
      key: 'gateway.auth.sharedSecretFile',
      file,
    });
  });

  it('reports a directory as unreadable', () => {
    const sub = join(dir, 'sub');
    mkdirSync(sub, { mode: 0o700 });
    expect(thrown(() => assertPrivateFile(sub, 'oauth.clientSecretFile')).code).toBe(
      'SECRET_FILE_UNREADABLE',
    );
  });
});

describe('configuredSecretFiles', () => {
  it('lists every configured secret file with its key, resolved against the directory given', () => {
    const config = parseConfig({
      terminal: { operatorPinFile: 'pin' },
      gateway: {
        auth: {
          sharedSecretFile: 'shared',
          privateKeyFile: '/keys/key.pem',
          certificateFile: '/keys/cert.pem',
          pkcs12File: 'p.p12',
          pkcs12PasswordFile: 'p.pass',
        },
      },
      oauth: { clientSecretFile: 'client' },
    });
    expect(configuredSecretFiles(config, '/etc/pt')).toEqual([
      { key: 'gateway.auth.sharedSecretFile', file: '/etc/pt/shared' },
      { key: 'gateway.auth.privateKeyFile', file: '/keys/key.pem' },
      { key: 'gateway.auth.pkcs12File', file: '/etc/pt/p.p12' },
      { key: 'gateway.auth.pkcs12PasswordFile', file: '/etc/pt/p.pass' },
      { key: 'oauth.clientSecretFile', file: '/etc/pt/client' },
      { key: 'terminal.operatorPinFile', file: '/etc/pt/pin' },
    ]);
  });

  it('lists nothing for the embedded defaults', () => {
    expect(configuredSecretFiles(parseConfig({}), dir)).toEqual([]);
  });

  it.runIf(posix)('stops at the first file that cannot be used', () => {
    secret('shared', 'c2VjcmV0', 0o600);
    secret('pin', '1234', 0o644);
    const config = parseConfig({
      terminal: { operatorPinFile: 'pin' },
      gateway: { auth: { sharedSecretFile: 'shared' } },
    });
    expect(thrown(() => assertConfiguredSecretFiles(config, dir))).toMatchObject({
      code: 'SECRET_FILE_EXPOSED',
      key: 'terminal.operatorPinFile',
    });
  });
});

describe('withSecretFilesResolved', () => {
  it('makes every secret path absolute against the start directory and leaves the rest alone', () => {
    const config = parseConfig({
      terminal: { operatorPinFile: 'secrets/pin' },
      gateway: { auth: { sharedSecretFile: 'secrets/shared', certificateFile: '/etc/pt/cert.pem' } },
    });
    const resolved = withSecretFilesResolved(config, '/srv/kiosk');
    expect(resolved.terminal.operatorPinFile).toBe('/srv/kiosk/secrets/pin');
    expect(resolved.gateway.auth.sharedSecretFile).toBe('/srv/kiosk/secrets/shared');
    expect(resolved.gateway.auth.certificateFile).toBe('/etc/pt/cert.pem');
    expect(resolved.gateway.auth.privateKeyFile).toBeUndefined();
    expect(resolved.journal.path).toBe(config.journal.path);
  });
});
