/**
 * A self-signed certificate for the optional HTTPS mode (clients that insist on TLS, such as the gateway's official
 * SDK). The key pair comes from node:crypto; node-forge only writes the X.509 structure, loaded on demand so that
 * plain HTTP use never loads it.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { SandboxError } from './errors.js';

/** PEM texts of the key and the certificate. */
export interface SelfSigned {
  keyPem: string;
  certPem: string;
}

/** A certificate for `host` plus localhost and 127.0.0.1, valid from a day before to a week after now. */
export async function selfSignedCertificate(host: string): Promise<SelfSigned> {
  try {
    const { default: forge } = await import('node-forge');
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const cert = forge.pki.createCertificate();
    cert.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString());
    cert.serialNumber = `01${randomBytes(8).toString('hex')}`;
    cert.validity.notBefore = new Date(Date.now() - 24 * 3600 * 1000);
    cert.validity.notAfter = new Date(Date.now() + 7 * 24 * 3600 * 1000);
    const attrs = [{ name: 'commonName', value: 'parking-terminal sandbox gateway' }];
    cert.setSubject(attrs);
    cert.setIssuer(attrs);
    const altNames: Array<{ type: number; value?: string; ip?: string }> = [
      { type: 2, value: 'localhost' },
      { type: 7, ip: '127.0.0.1' },
    ];
    if (isIP(host)) {
      if (host !== '127.0.0.1') altNames.push({ type: 7, ip: host });
    } else if (host !== 'localhost') altNames.push({ type: 2, value: host });
    cert.setExtensions([
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, keyCertSign: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames },
    ]);
    cert.sign(forge.pki.privateKeyFromPem(keyPem), forge.md.sha256.create());
    return { keyPem, certPem: forge.pki.certificateToPem(cert) };
  } catch (e) {
    throw new SandboxError('SANDBOX_TLS', 'cannot make the self-signed certificate', { cause: e });
  }
}
