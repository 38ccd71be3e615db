import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../config/load.js';
import { createAuthenticator } from './authenticator.js';

const SECRET = 'yBJxy6LjM2TmcPGu+GaJrHtkke25fPpUX+UY6/L/1tE=';
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'pt-auth-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function file(name: string, text: string, mode: number): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  chmodSync(path, mode);
  return path;
}

function auth(values: Record<string, unknown>) {
  return parseConfig({ gateway: { auth: values } }).gateway.auth;
}

describe('createAuthenticator and secret files', () => {
  it('signs with the secret of an owner-only shared secret file', () => {
    const a = createAuthenticator(auth({ sharedSecretFile: file('s', `${SECRET}\n`, 0o600) }), 'm');
    expect(a.method).toBe('http-signature');
  });

  it.runIf(process.platform !== 'win32').each([
    ['sharedSecretFile', { method: 'http-signature' }],
    ['privateKeyFile', { method: 'jwt', certificateFile: '/dev/null' }],
    ['pkcs12File', { method: 'jwt' }],
  ])('refuses a %s readable by group or others, naming the key and the file', (key, rest) => {
    const path = file('secret', SECRET, 0o640);
    expect(() => createAuthenticator(auth({ ...rest, [key]: path }), 'm')).toThrowError(
      expect.objectContaining({
        code: 'SECRET_FILE_EXPOSED',
        key: `gateway.auth.${key}`,
        file: path,
      }) as Error,
    );
  });

  it('names gateway.merchantId or gateway.auth.keyId when the value cannot be sent in a header', () => {
    const secretFile = file('s', `${SECRET}\n`, 0o600);
    expect(() => createAuthenticator(auth({ sharedSecretFile: secretFile }), 'm\r\nx: 1')).toThrowError(
      expect.objectContaining({
        code: 'GW_CONFIG',
        message: expect.stringContaining('gateway.merchantId') as string,
      }) as Error,
    );
    expect(() =>
      createAuthenticator(auth({ sharedSecretFile: secretFile, keyId: 'k", algorithm="none' }), 'm'),
    ).toThrowError(
      expect.objectContaining({
        code: 'GW_CONFIG',
        message: expect.stringContaining('gateway.auth.keyId') as string,
      }) as Error,
    );
  });

  it('names the key and the file when the shared secret file holds no base64 secret', () => {
    const path = file('s', 'not base64!\n', 0o600);
    expect(() => createAuthenticator(auth({ sharedSecretFile: path }), 'm')).toThrowError(
      expect.objectContaining({
        code: 'GW_AUTH',
        message: expect.stringContaining(`gateway.auth.sharedSecretFile: ${path}`) as string,
      }) as Error,
    );
  });
});
