import {
  createHash,
  createHmac,
  createPrivateKey,
  createPublicKey,
  randomUUID,
  sign,
  X509Certificate,
  type KeyObject,
} from 'node:crypto';
import type * as Forge from 'node-forge';
import { GatewayAuthError } from '../errors.js';
import { decodeSharedSecret } from './http-signature.js';

/** The key that signs the JWT: an RSA key with its certificate (RS256) or the shared secret (HS256). */
export type JwtKey =
  | { alg: 'RS256'; privateKey: KeyObject; /** Certificate serial number (header `kid`). */ kid: string }
  | { alg: 'HS256'; secret: Buffer; /** Key id of the shared secret (header `kid`). */ kid: string };

/** What a JWT "v2" token is bound to (reference/gateway.md §1, JWT). */
export interface JwtRequest {
  method: string;
  /** Bare host, as in the `host` header. */
  host: string;
  /** Path with query string. */
  path: string;
  /** Exact body bytes (digest claims on POST, PUT, PATCH). */
  body?: Buffer;
  merchantId: string;
  /** Epoch milliseconds of signing. */
  nowMs: number;
}

const base64url = (data: Buffer | string): string => Buffer.from(data).toString('base64url');

/**
 * Builds a JWT "v2" bearer token: header `{alg, kid}`, claims iat, exp = iat + 120 s, jti, iss and
 * v-c-merchant-id (merchant id), v-c-jwt-version "2", request-host, request-resource-path, request-method, and on
 * POST/PUT/PATCH the base64 SHA-256 `digest` of the exact body bytes with `digest-algorithm` "SHA-256".
 */
export function createJwt(key: JwtKey, request: JwtRequest): string {
  const method = request.method.toLowerCase();
  const iat = Math.floor(request.nowMs / 1000);
  const claims: Record<string, unknown> = {
    iat,
    exp: iat + 120,
    jti: randomUUID(),
    iss: request.merchantId,
    'v-c-merchant-id': request.merchantId,
    'v-c-jwt-version': '2',
    'request-host': request.host,
    'request-resource-path': request.path,
    'request-method': method,
  };
  if (method === 'post' || method === 'put' || method === 'patch') {
    claims.digest = createHash('sha256')
      .update(request.body ?? Buffer.alloc(0))
      .digest('base64');
    claims['digest-algorithm'] = 'SHA-256';
  }
  const header = { alg: key.alg, typ: 'JWT', kid: key.kid };
  const input = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
  const signature =
    key.alg === 'RS256'
      ? sign('sha256', Buffer.from(input), key.privateKey)
      : createHmac('sha256', key.secret).update(input).digest();
  return `${input}.${base64url(signature)}`;
}

/**
 * The `kid` of a certificate: the gateway's key pairs carry the key serial number as the subject's `serialNumber`
 * attribute; certificates without it fall back to the certificate serial number.
 */
export function certificateKid(certificatePem: string | Buffer): string {
  return kidOf(readCertificate(certificatePem));
}

function readCertificate(certificatePem: string | Buffer): X509Certificate {
  try {
    return new X509Certificate(certificatePem);
  } catch (e) {
    throw new GatewayAuthError('the JWT certificate is not a PEM or DER X.509 certificate', { cause: e });
  }
}

function kidOf(cert: X509Certificate): string {
  const attr = cert.subject.split('\n').find((line) => line.startsWith('serialNumber='));
  return attr !== undefined ? attr.slice('serialNumber='.length) : cert.serialNumber;
}

/**
 * An RS256 key from PEM (or DER PKCS#8) private key and certificate texts. The certificate must be the key's own (the
 * same public key): its serial number is the `kid` every token names, and the gateway verifies with that certificate's
 * key — a certificate of another key would have every request refused with 401.
 */
export function rsaKeyFromPem(privateKeyPem: string | Buffer, certificatePem: string | Buffer): JwtKey {
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(privateKeyPem);
  } catch (e) {
    throw new GatewayAuthError('the JWT private key is not a readable PEM key', { cause: e });
  }
  if (privateKey.asymmetricKeyType !== 'rsa')
    throw new GatewayAuthError('the JWT private key is not an RSA key');
  const cert = readCertificate(certificatePem);
  const spki = (k: KeyObject): Buffer => k.export({ format: 'der', type: 'spki' });
  if (!spki(cert.publicKey).equals(spki(createPublicKey(privateKey))))
    throw new GatewayAuthError('the JWT certificate does not match the private key');
  return { alg: 'RS256', privateKey, kid: kidOf(cert) };
}

/**
 * An RS256 key from a PKCS#12 file (the gateway's portal issues `.p12`). Node's crypto cannot read PKCS#12, so this
 * loads node-forge on demand: only deployments configured with a PKCS#12 file need it.
 */
export async function rsaKeyFromPkcs12(p12: Buffer, password: string): Promise<JwtKey> {
  let forge: typeof Forge;
  try {
    forge = (await import('node-forge')).default;
  } catch (e) {
    throw new GatewayAuthError('reading a PKCS#12 key needs the node-forge package', { cause: e });
  }
  try {
    const asn1 = forge.asn1.fromDer(forge.util.createBuffer(p12.toString('binary')));
    const store = forge.pkcs12.pkcs12FromAsn1(asn1, false, password);
    const keyOid = forge.pki.oids.pkcs8ShroudedKeyBag ?? '1.2.840.113549.1.12.10.1.2';
    const certOid = forge.pki.oids.certBag ?? '1.2.840.113549.1.12.10.1.3';
    const keyBags = store.getBags({ bagType: keyOid })[keyOid];
    const certBags: Forge.pkcs12.Bag[] = store.getBags({ bagType: certOid })[certOid] ?? [];
    const key = keyBags?.[0]?.key;
    const certs = certBags.map((b) => b.cert).filter((c): c is Forge.pki.Certificate => c !== undefined);
    if (key === undefined || certs.length === 0) {
      throw new GatewayAuthError('the PKCS#12 file holds no private key or no certificate');
    }
    // The file may hold the CA chain too: the signing certificate is the one whose public key matches the key.
    const own = certs.find((c) => (c.publicKey as Forge.pki.rsa.PublicKey).n.equals(key.n));
    if (own === undefined)
      throw new GatewayAuthError('no certificate in the PKCS#12 file matches its private key');
    return rsaKeyFromPem(forge.pki.privateKeyToPem(key), forge.pki.certificateToPem(own));
  } catch (e) {
    if (e instanceof GatewayAuthError) throw e;
    throw new GatewayAuthError('the PKCS#12 file cannot be read (wrong password or not PKCS#12)', {
      cause: e,
    });
  }
}

/** An HS256 key: the shared secret (base64 text) and its key id. */
export function hmacKey(secretBase64: string, keyId: string): JwtKey {
  return { alg: 'HS256', secret: decodeSharedSecret(secretBase64), kid: keyId };
}
