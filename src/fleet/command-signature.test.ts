import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  canonicalCommandBytes,
  canonicalJson,
  checkCommand,
  readFleetKey,
  signCommand,
  signatureValid,
} from './command-signature.js';
import { COMMAND_MAX_DEPTH, nestedDeeperThan, type UnsignedCommand } from './messages.js';

const dir = mkdtempSync(join(tmpdir(), 'pt-fleet-key-'));
const file = (name: string, text: string, mode = 0o600): string => {
  const path = join(dir, name);
  writeFileSync(path, text, { mode });
  return path;
};
const pair = generateKeyPairSync('ed25519');
const privateFile = file('private.pem', pair.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string);
const publicFile = file('public.pem', pair.publicKey.export({ type: 'spki', format: 'pem' }) as string);
const hmacFile = file('hmac.key', 'x'.repeat(40));

const NOW = Date.parse('2026-11-24T12:00:00Z');
const unsigned: UnsignedCommand = {
  v: 1,
  id: 'c-1',
  terminalId: 'PT000001',
  command: 'out-of-service',
  args: { notice: 'works', nested: { b: 1, a: [true, null] } },
  issuedAt: '2026-11-24T12:00:00Z',
  expiresAt: '2026-11-24T12:05:00Z',
};
const expectFor = (key: ReturnType<typeof readFleetKey>) => ({
  key,
  terminalId: 'PT000001',
  nowMs: NOW,
  maxAgeMs: 600_000,
});

describe('command signatures', () => {
  it('canonical JSON sorts keys at every level, whatever the order they were written in', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 0, y: 'x' }], c: null } })).toBe(
      '{"a":{"c":null,"d":[1,{"y":"x","z":0}]},"b":1}',
    );
    expect(
      canonicalCommandBytes({ ...unsigned, args: { nested: { a: [true, null], b: 1 }, notice: 'works' } }),
    ).toEqual(canonicalCommandBytes(unsigned));
    expect(() => canonicalJson(Number.NaN)).toThrow();
  });

  it('canonical JSON refuses a value nested deeper than a command may be, before its recursion could overflow', () => {
    const nest = (depth: number): unknown => {
      let v: unknown = [];
      for (let i = 1; i < depth; i += 1) v = [v];
      return v;
    };
    expect(canonicalJson({ args: nest(COMMAND_MAX_DEPTH) })).toMatch(/^\{"args":\[\[/);
    expect(() => canonicalJson({ args: nest(COMMAND_MAX_DEPTH + 1) })).toThrow(TypeError);
    expect(() => canonicalJson(nest(100_000))).toThrow(/nested more than/);
    expect(nestedDeeperThan(nest(100_000), COMMAND_MAX_DEPTH)).toBe(true);
    expect(nestedDeeperThan({ a: [{ b: 1 }] }, 3)).toBe(false);
    expect(nestedDeeperThan({ a: [{ b: {} }] }, 3)).toBe(true);
    expect(nestedDeeperThan('text', 0)).toBe(false);
  });

  it('an Ed25519 signature made with the private key verifies with the public key alone', () => {
    const signed = signCommand(unsigned, readFleetKey(privateFile));
    expect(signed.signature.alg).toBe('ed25519');
    expect(checkCommand(signed, expectFor(readFleetKey(publicFile)))).toEqual({ ok: true });
    expect(() => signCommand(unsigned, readFleetKey(publicFile))).toThrow(/cannot sign/);
  });

  it('an HMAC-SHA256 signature verifies with the same key, and not with an Ed25519 key', () => {
    const signed = signCommand(unsigned, readFleetKey(hmacFile));
    expect(signed.signature.alg).toBe('hmac-sha256');
    expect(signatureValid(signed, readFleetKey(hmacFile))).toBe(true);
    expect(signatureValid(signed, readFleetKey(publicFile))).toBe(false);
  });

  it('names the terminal clock and the skew against the signed time when it refuses a command as not yet valid or expired', () => {
    // A terminal whose clock is off by more than the tolerance refuses every command: the operator reads why, and by
    // how much, in the refusal `fleet send` prints.
    const key = readFleetKey(privateFile);
    const signed = signCommand(unsigned, key);
    const behind = checkCommand(signed, { ...expectFor(key), nowMs: NOW - 120_000 });
    expect(behind).toMatchObject({ ok: false, code: 'NOT_YET_VALID' });
    expect(!behind.ok && behind.message).toContain(
      "the terminal's clock reads 2026-11-24T11:58:00.000Z, 120 s behind the command's signed time",
    );
    const ahead = checkCommand(signed, { ...expectFor(key), nowMs: NOW + 700_000 });
    expect(ahead).toMatchObject({ ok: false, code: 'EXPIRED' });
    expect(!ahead.ok && ahead.message).toContain(
      "the terminal's clock reads 2026-11-24T12:11:40.000Z, 700 s after the command's signed time",
    );
  });

  it('refuses a changed argument, another terminal, an expired or too long-lived command', () => {
    const key = readFleetKey(privateFile);
    const signed = signCommand(unsigned, key);
    const check = (c: typeof signed, now = NOW) => checkCommand(c, { ...expectFor(key), nowMs: now });
    expect(check({ ...signed, args: { notice: 'other' } })).toMatchObject({
      ok: false,
      code: 'BAD_SIGNATURE',
    });
    expect(check({ ...signed, terminalId: 'PT000002' })).toMatchObject({ code: 'BAD_SIGNATURE' });
    expect(check(signCommand({ ...unsigned, terminalId: 'PT000002' }, key))).toMatchObject({
      code: 'WRONG_TERMINAL',
    });
    expect(check(signed, Date.parse(unsigned.expiresAt))).toMatchObject({ code: 'EXPIRED' });
    expect(check(signed, NOW - 120_000)).toMatchObject({ code: 'NOT_YET_VALID' });
    expect(check(signCommand({ ...unsigned, expiresAt: '2026-11-25T12:00:00Z' }, key))).toMatchObject({
      code: 'VALIDITY_TOO_LONG',
    });
  });

  it('apply-config is carried out only under a key no terminal can sign with: NEEDS_ASYMMETRIC_KEY otherwise', () => {
    // A shared HMAC key sits on every terminal: one stolen from a kiosk in the street would sign, for every terminal,
    // a configuration that sends card data to another gateway. A terminal given the private key is the same.
    const apply: UnsignedCommand = { ...unsigned, command: 'apply-config', args: { config: {} } };
    const hmac = readFleetKey(hmacFile);
    expect(checkCommand(signCommand(apply, hmac), expectFor(hmac))).toMatchObject({
      ok: false,
      code: 'NEEDS_ASYMMETRIC_KEY',
    });
    const privateKey = readFleetKey(privateFile);
    expect(checkCommand(signCommand(apply, privateKey), expectFor(privateKey))).toMatchObject({
      ok: false,
      code: 'NEEDS_ASYMMETRIC_KEY',
    });
    expect(checkCommand(signCommand(apply, privateKey), expectFor(readFleetKey(publicFile)))).toEqual({
      ok: true,
    });
    // The commands that move neither money nor card data elsewhere keep working with the shared key.
    for (const command of [
      'out-of-service',
      'in-service',
      'flush-queue',
      'rerun-recovery',
      'audit-log',
      'restart',
    ])
      expect(checkCommand(signCommand({ ...unsigned, command }, hmac), expectFor(hmac)), command).toEqual({
        ok: true,
      });
  });

  it('reads keys from owner-only files; a short HMAC key is refused', () => {
    expect(() => readFleetKey(file('short.key', 'too short'))).toThrow(/too short/);
    expect(() => readFleetKey(file('open.key', 'y'.repeat(40), 0o644))).toThrow(/group or others/);
  });

  it('refuses a public key in another form than PEM rather than take its text as a shared HMAC key', () => {
    // An Ed25519 key as OpenSSH or JWK writes it: taken as "any other text", the public key became the terminal's
    // HMAC secret — one anybody holding the public key could sign commands with — and the terminal started without a
    // word, refusing the operator's Ed25519 signatures.
    const jwk = JSON.stringify(pair.publicKey.export({ format: 'jwk' }));
    const openssh = `ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGZ1bGwgb2YgYmFzZTY0IGRpZ2l0cyB0byBsb29r operator@fleet`;
    for (const [name, text] of [
      ['fleet.jwk', jwk],
      ['fleet.pub', openssh],
      ['fleet-ecdsa.pub', `ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAI operator@fleet`],
    ] as const)
      expect(() => readFleetKey(file(name, text)), name).toThrow(/public key.*PEM/);
  });
});
