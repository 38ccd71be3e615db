import {
  createHmac,
  createPrivateKey,
  createPublicKey,
  sign as signBytes,
  timingSafeEqual,
  verify as verifyBytes,
  type KeyObject,
} from 'node:crypto';
import { readSecretText } from '../config/secret-file.js';
import {
  ASYMMETRIC_KEY_COMMANDS,
  COMMAND_CLOCK_TOLERANCE_SECONDS,
  COMMAND_MAX_DEPTH,
  nestedDeeperThan,
  type ReplyCode,
  type SignedCommand,
  type SignatureAlgorithm,
  type UnsignedCommand,
} from './messages.js';

/**
 * Command signatures (README, Fleet, "Signature"). The signed bytes are a fixed label and the canonical JSON of every
 * field of the command but the signature — keys sorted at every level, no white space — so the terminal id, the id,
 * the arguments and the validity are all signed: a command cannot be replayed on another terminal, after its expiry,
 * or with other arguments.
 *
 * Two kinds of fleet key:
 * - **Ed25519** (recommended): the operator signs with the private key; terminals hold only the public key, so a
 *   terminal's key cannot sign commands for the fleet.
 * - **HMAC-SHA256**: one shared secret (a file's text, at least 32 characters) on the operator's side and on the
 *   terminals.
 */

const LABEL = 'parking-terminal fleet command v1\n';

/** Least length of a shared HMAC key, characters. */
export const HMAC_KEY_MIN_CHARS = 32;

/** Deepest value {@link canonicalJson} writes: a command (one level) around arguments of the deepest kind. */
const CANONICAL_MAX_DEPTH = COMMAND_MAX_DEPTH + 1;

/**
 * JSON with object keys sorted at every level and no white space; refuses (TypeError) what JSON cannot carry exactly,
 * and a value nested more than a command may be, before its recursive walk could overflow the stack.
 */
export function canonicalJson(value: unknown): string {
  if (nestedDeeperThan(value, CANONICAL_MAX_DEPTH))
    throw new TypeError(`nested more than ${CANONICAL_MAX_DEPTH} levels deep`);
  return canonical(value);
}

function canonical(value: unknown): string {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError('a number that JSON cannot carry');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  throw new TypeError(`a ${typeof value} cannot be signed`);
}

/** The exact bytes a command's signature covers. */
export function canonicalCommandBytes(command: UnsignedCommand): Buffer {
  const { v, id, terminalId, command: name, args, issuedAt, expiresAt } = command;
  return Buffer.from(
    LABEL + canonicalJson({ v, id, terminalId, command: name, args, issuedAt, expiresAt }),
    'utf8',
  );
}

/** A fleet key, read from its file: what it can do depends on its kind. */
export type FleetKey =
  { kind: 'hmac-sha256'; secret: Buffer } | { kind: 'ed25519'; publicKey: KeyObject; privateKey?: KeyObject };

/**
 * Reads the fleet key of `file` (a secret file: owner-only, src/config/secret-file.ts). A PEM public key is an Ed25519
 * key to verify with; a PEM private key signs (and verifies); an OpenSSH public key or a JWK is refused; any other text
 * is a shared HMAC-SHA256 key.
 * @throws SecretFileError for a file that cannot be used; Error for a key of another kind or too short.
 */
export function readFleetKey(file: string, key = 'fleet.commandKeyFile'): FleetKey {
  const text = readSecretText(file, key);
  if (text.startsWith('-----BEGIN')) {
    const isPrivate = /-----BEGIN (ENCRYPTED )?PRIVATE KEY-----/.test(text);
    const privateKey = isPrivate ? createPrivateKey(text) : undefined;
    const publicKey = privateKey ? createPublicKey(privateKey) : createPublicKey(text);
    if (publicKey.asymmetricKeyType !== 'ed25519')
      throw new Error(
        `${key}: ${file} holds a ${publicKey.asymmetricKeyType ?? 'non-asymmetric'} key, not Ed25519`,
      );
    return { kind: 'ed25519', publicKey, ...(privateKey ? { privateKey } : {}) };
  }
  // A key in a form read nowhere here would be "any other text": a public key taken as the shared secret, which
  // anybody holding the public key could sign commands with.
  const form = /^(ssh-|ecdsa-sha2-|sk-)\S+ AAAA/.test(text)
    ? 'an OpenSSH public key'
    : /^\{[\s\S]*"kty"\s*:/.test(text)
      ? 'a JWK key'
      : undefined;
  if (form !== undefined)
    throw new Error(
      `${key}: ${file} holds ${form}, not a shared HMAC key: give the fleet's Ed25519 public key as PEM ` +
        `(openssl pkey -pubout writes it)`,
    );
  if (text.length < HMAC_KEY_MIN_CHARS)
    throw new Error(
      `${key}: ${file} is too short for an HMAC key (at least ${HMAC_KEY_MIN_CHARS} characters)`,
    );
  return { kind: 'hmac-sha256', secret: Buffer.from(text, 'utf8') };
}

/** Signs a command. @throws Error when the key cannot sign (an Ed25519 public key). */
export function signCommand(command: UnsignedCommand, key: FleetKey): SignedCommand {
  const bytes = canonicalCommandBytes(command);
  let alg: SignatureAlgorithm;
  let value: Buffer;
  if (key.kind === 'hmac-sha256') {
    alg = 'hmac-sha256';
    value = createHmac('sha256', key.secret).update(bytes).digest();
  } else {
    if (!key.privateKey) throw new Error('an Ed25519 public key cannot sign: give the private key');
    alg = 'ed25519';
    value = signBytes(null, bytes, key.privateKey);
  }
  return { ...command, signature: { alg, value: value.toString('base64') } };
}

/** Whether the signature of `command` is valid under `key` (an algorithm other than the key's is invalid). */
export function signatureValid(command: SignedCommand, key: FleetKey): boolean {
  const { signature, ...unsigned } = command;
  const bytes = canonicalCommandBytes(unsigned);
  const given = Buffer.from(signature.value, 'base64');
  if (key.kind === 'hmac-sha256') {
    if (signature.alg !== 'hmac-sha256') return false;
    const expected = createHmac('sha256', key.secret).update(bytes).digest();
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
  if (signature.alg !== 'ed25519') return false;
  try {
    return verifyBytes(null, bytes, key.publicKey, given);
  } catch {
    return false;
  }
}

/**
 * Whether a command verified with `key` may be one of {@link ASYMMETRIC_KEY_COMMANDS}: only when the terminal holds a
 * key that verifies and cannot sign — an Ed25519 public key alone. A shared HMAC key, or a private key given to a
 * terminal, signs for every terminal of the fleet as well.
 */
export function keySignsForTheFleet(key: FleetKey): boolean {
  return key.kind === 'hmac-sha256' || key.privateKey !== undefined;
}

/**
 * Checks a signed command for this terminal at `nowMs`: signature, terminal id, validity, and that a command of
 * {@link ASYMMETRIC_KEY_COMMANDS} was verified with a key no terminal can sign with. Clocks may differ by up to
 * `clockToleranceMs` (a command signed slightly "in the future" is accepted).
 */
export function checkCommand(
  command: SignedCommand,
  expect: { key: FleetKey; terminalId: string; nowMs: number; maxAgeMs: number; clockToleranceMs?: number },
): { ok: true } | { ok: false; code: ReplyCode; message: string } {
  const tolerance = expect.clockToleranceMs ?? COMMAND_CLOCK_TOLERANCE_SECONDS * 1000;
  if (!signatureValid(command, expect.key))
    return { ok: false, code: 'BAD_SIGNATURE', message: 'the signature does not verify with the fleet key' };
  if (command.terminalId !== expect.terminalId)
    return { ok: false, code: 'WRONG_TERMINAL', message: `signed for terminal ${command.terminalId}` };
  const issued = Date.parse(command.issuedAt);
  const expires = Date.parse(command.expiresAt);
  if (expires - issued > expect.maxAgeMs || expires < issued)
    return { ok: false, code: 'VALIDITY_TOO_LONG', message: 'the command is valid for longer than allowed' };
  // Freshness is judged by the terminal's clock, and stays so: the ids of executed commands are kept until their expiry
  // by that clock (link.ts, STALE), which is what keeps a captured command from running twice. A terminal whose clock
  // is off therefore refuses every command, the harmless ones too; the refusal says by how much, measured against the
  // signed time (the operator's clock when `fleet send` signed it), so that the operator sets the terminal's time.
  const clock = `the terminal's clock reads ${new Date(expect.nowMs).toISOString()}`;
  const skewSeconds = Math.round(Math.abs(expect.nowMs - issued) / 1000);
  if (issued > expect.nowMs + tolerance)
    return {
      ok: false,
      code: 'NOT_YET_VALID',
      message:
        `issued at ${command.issuedAt}, in the future: ${clock}, ${skewSeconds} s behind the command's signed time ` +
        `(${tolerance / 1000} s allowed); set the terminal's time (NTP), then send it again`,
    };
  if (expires <= expect.nowMs)
    return {
      ok: false,
      code: 'EXPIRED',
      message:
        `expired at ${command.expiresAt}: ${clock}, ${skewSeconds} s after the command's signed time; sent just ` +
        `now, it means the terminal's clock is that far ahead: set the terminal's time (NTP), then send it again`,
    };
  if (ASYMMETRIC_KEY_COMMANDS.has(command.command) && keySignsForTheFleet(expect.key))
    return {
      ok: false,
      code: 'NEEDS_ASYMMETRIC_KEY',
      message:
        `${command.command} is carried out only under an Ed25519 fleet key (the terminal holding the public key ` +
        `alone); this terminal's fleet key is ${expect.key.kind === 'hmac-sha256' ? 'a shared HMAC key' : 'a private key'}, which a terminal could sign with`,
    };
  return { ok: true };
}
