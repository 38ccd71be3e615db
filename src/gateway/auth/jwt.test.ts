import { createPublicKey, verify } from 'node:crypto';
import forge from 'node-forge';
import { describe, expect, it } from 'vitest';
import { GatewayAuthError } from '../errors.js';
import { createAuthenticator } from './authenticator.js';
import { certificateKid, createJwt, rsaKeyFromPem, rsaKeyFromPkcs12 } from './jwt.js';

const NOW_MS = Date.UTC(2026, 0, 1, 12, 0, 0);

interface Issued {
  keys: forge.pki.rsa.KeyPair;
  cert: forge.pki.Certificate;
}

/** A key pair and a self-signed certificate made with node-forge (as a CA or the gateway's portal would). */
function issue(subject: Array<{ name: string; value: string }>, serial: string, signer?: Issued): Issued {
  const keys = forge.pki.rsa.generateKeyPair({ bits: 2048, e: 0x10001 });
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = serial;
  cert.validity.notBefore = new Date(NOW_MS - 86_400_000);
  cert.validity.notAfter = new Date(NOW_MS + 365 * 86_400_000);
  cert.setSubject(subject);
  cert.setIssuer(signer ? signer.cert.subject.attributes : subject);
  cert.sign(signer ? signer.keys.privateKey : keys.privateKey, forge.md.sha256.create());
  return { keys, cert };
}

function pkcs12(
  key: forge.pki.rsa.PrivateKey,
  certs: forge.pki.Certificate[],
  password: string,
  algorithm: '3des' | 'aes256' = 'aes256',
): Buffer {
  const asn1 = forge.pkcs12.toPkcs12Asn1(key, certs, password, { algorithm });
  return Buffer.from(forge.asn1.toDer(asn1).getBytes(), 'binary');
}

function decodePart(token: string, index: 0 | 1): Record<string, unknown> {
  const part = token.split('.')[index] ?? '';
  return JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;
}

/** Verifies the RS256 signature of a compact JWT with the certificate's public key (node:crypto, not forge). */
function verifiesWith(token: string, certificatePem: string): boolean {
  const [header = '', payload = '', signature = ''] = token.split('.');
  const publicKey = createPublicKey(certificatePem);
  return verify(
    'sha256',
    Buffer.from(`${header}.${payload}`),
    publicKey,
    Buffer.from(signature, 'base64url'),
  );
}

const merchantKey = issue(
  [
    { name: 'commonName', value: 'testrest' },
    { name: 'serialNumber', value: '7017893042720176104102' },
  ],
  '0a1b2c',
);
const merchantCertPem = forge.pki.certificateToPem(merchantKey.cert);

describe('certificateKid', () => {
  it("takes the subject's serialNumber attribute, the key serial number the gateway issues", () => {
    expect(certificateKid(merchantCertPem)).toBe('7017893042720176104102');
  });

  it('falls back to the certificate serial number when the subject has no serialNumber attribute', () => {
    const plain = issue([{ name: 'commonName', value: 'no-serial-attribute' }], '00c0ffee42');
    expect(certificateKid(forge.pki.certificateToPem(plain.cert))).toBe('C0FFEE42');
  });

  it('reads a DER certificate as well as PEM', () => {
    const der = Buffer.from(
      forge.asn1.toDer(forge.pki.certificateToAsn1(merchantKey.cert)).getBytes(),
      'binary',
    );
    expect(certificateKid(der)).toBe('7017893042720176104102');
  });

  it('refuses text that is not a certificate with GW_AUTH', () => {
    expect(() =>
      certificateKid('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n'),
    ).toThrowError(expect.objectContaining({ code: 'GW_AUTH' }) as Error);
  });
});

describe('rsaKeyFromPkcs12', () => {
  it('reads the key and certificate of a PKCS#12 file and signs a JWT that verifies with the certificate', async () => {
    const p12 = pkcs12(merchantKey.keys.privateKey, [merchantKey.cert], 'p12-password');
    const key = await rsaKeyFromPkcs12(p12, 'p12-password');
    expect(key).toMatchObject({ alg: 'RS256', kid: '7017893042720176104102' });
    const token = createJwt(key, {
      method: 'POST',
      host: 'apitest.cybersource.com',
      path: '/pts/v2/payments',
      body: Buffer.from('{"a":1}'),
      merchantId: 'testrest',
      nowMs: NOW_MS,
    });
    expect(decodePart(token, 0)).toMatchObject({ alg: 'RS256', kid: '7017893042720176104102' });
    expect(decodePart(token, 1)).toMatchObject({ iss: 'testrest', 'request-method': 'post' });
    expect(verifiesWith(token, merchantCertPem)).toBe(true);
  });

  it('gives the same key as the PEM path for the same key and certificate', async () => {
    const p12 = pkcs12(merchantKey.keys.privateKey, [merchantKey.cert], 'pw', '3des');
    const fromP12 = await rsaKeyFromPkcs12(p12, 'pw');
    const fromPem = rsaKeyFromPem(forge.pki.privateKeyToPem(merchantKey.keys.privateKey), merchantCertPem);
    if (fromP12.alg !== 'RS256' || fromPem.alg !== 'RS256') throw new Error('expected RS256 keys');
    expect(fromP12.kid).toBe(fromPem.kid);
    const der = (k: typeof fromP12.privateKey): Buffer => k.export({ type: 'pkcs8', format: 'der' });
    expect(der(fromP12.privateKey).equals(der(fromPem.privateKey))).toBe(true);
  });

  it('picks the certificate that matches the key when the file also holds the CA chain', async () => {
    const ca = issue([{ name: 'commonName', value: 'Test CA' }], '01');
    const leaf = issue(
      [
        { name: 'commonName', value: 'terminal' },
        { name: 'serialNumber', value: 'LEAF-KEY-SERIAL' },
      ],
      '02',
      ca,
    );
    // The CA first: a reader that takes the first certificate would sign with the wrong kid.
    const p12 = pkcs12(leaf.keys.privateKey, [ca.cert, leaf.cert], 'chain');
    const key = await rsaKeyFromPkcs12(p12, 'chain');
    expect(key.kid).toBe('LEAF-KEY-SERIAL');
  });

  it('refuses a wrong password with GW_AUTH', async () => {
    const p12 = pkcs12(merchantKey.keys.privateKey, [merchantKey.cert], 'right');
    await expect(rsaKeyFromPkcs12(p12, 'wrong')).rejects.toBeInstanceOf(GatewayAuthError);
  });

  it('refuses bytes that are not PKCS#12 with GW_AUTH', async () => {
    await expect(rsaKeyFromPkcs12(Buffer.from('not a pkcs12 file'), '')).rejects.toMatchObject({
      code: 'GW_AUTH',
    });
  });

  it('refuses a file with a certificate that does not match its key', async () => {
    const other = issue([{ name: 'commonName', value: 'other' }], '03');
    const p12 = pkcs12(merchantKey.keys.privateKey, [other.cert], 'pw');
    await expect(rsaKeyFromPkcs12(p12, 'pw')).rejects.toMatchObject({
      code: 'GW_AUTH',
      message: expect.stringContaining('matches') as string,
    });
  });
});

describe('rsaKeyFromPem', () => {
  it("refuses a certificate that is not the private key's: every token would name another key", () => {
    const other = issue([{ name: 'commonName', value: 'other' }], '04');
    const keyPem = forge.pki.privateKeyToPem(merchantKey.keys.privateKey);
    expect(() => rsaKeyFromPem(keyPem, forge.pki.certificateToPem(other.cert))).toThrow(
      expect.objectContaining({ code: 'GW_AUTH', message: expect.stringContaining('match') as string }),
    );
    expect(rsaKeyFromPem(keyPem, merchantCertPem).kid).toBe('7017893042720176104102');
  });
});

describe('createAuthenticator with gateway.auth.pkcs12File', () => {
  it('signs requests with the key of the PKCS#12 file and the password of its password file', async () => {
    const files: Record<string, Buffer> = {
      '/keys/testrest.p12': pkcs12(merchantKey.keys.privateKey, [merchantKey.cert], 'from-file'),
    };
    const auth = createAuthenticator(
      {
        method: 'jwt',
        keyId: 'unused-for-rs256',
        jwtAlgorithm: 'RS256',
        pkcs12File: '/keys/testrest.p12',
        pkcs12PasswordFile: '/keys/p12-password',
      },
      'testrest',
      {
        readBinaryFile: (p) => files[p] ?? Buffer.alloc(0),
        readSecretFile: (p) => (p === '/keys/p12-password' ? 'from-file' : ''),
      },
    );
    const headers = await auth.authenticate({
      method: 'GET',
      host: 'apitest.cybersource.com',
      path: '/ipl/v2/payment-links?offset=0&limit=10',
      body: Buffer.alloc(0),
      now: new Date(NOW_MS),
    });
    const token = (headers.authorization ?? '').replace(/^Bearer /, '');
    expect(decodePart(token, 0).kid).toBe('7017893042720176104102');
    expect(decodePart(token, 1)).toMatchObject({
      'request-resource-path': '/ipl/v2/payment-links?offset=0&limit=10',
      'request-method': 'get',
    });
    expect(decodePart(token, 1)).not.toHaveProperty('digest');
    expect(verifiesWith(token, merchantCertPem)).toBe(true);
  });
});
