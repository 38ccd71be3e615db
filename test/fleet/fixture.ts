import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  readFleetKey,
  signCommand,
  type BrokerSettings,
  type FleetKey,
  type SignedCommand,
} from '../../src/fleet/index.js';
import type { Broker } from '../../bench/mosquitto.js';

/** The broker password of each user of the fleet tests' Mosquitto. */
export const password = (user: string): string => `pw-${user}-${user.length}`;

/** How `user` connects to the test broker: its CA, and its user name and password in files, as a terminal reads them. */
export async function brokerSettingsFor(broker: Broker, user: string): Promise<BrokerSettings> {
  return {
    url: broker.url,
    caFile: broker.caFile,
    usernameFile: await broker.secret(`${user}.user`, user),
    passwordFile: await broker.secret(`${user}.password`, password(user)),
    reconnectMaxSeconds: 2,
  };
}

/**
 * An Ed25519 fleet key pair written in `dir` (owner-only): `fleet-public.pem`, which a terminal's
 * `fleet.commandKeyFile` names, and `fleet-private.pem`, the operator's signing key, returned read.
 */
export async function writeFleetKeyPair(dir: string): Promise<{ publicFile: string; key: FleetKey }> {
  const pair = generateKeyPairSync('ed25519');
  const publicFile = join(dir, 'fleet-public.pem');
  const privateFile = join(dir, 'fleet-private.pem');
  await writeFile(publicFile, pair.publicKey.export({ type: 'spki', format: 'pem' }), { mode: 0o600 });
  await writeFile(privateFile, pair.privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  return { publicFile, key: readFleetKey(privateFile) };
}

/** A command for `terminalId` signed with `key`, issued at `at` (ms) and valid two minutes. */
export function signedCommand(
  terminalId: string,
  command: string,
  key: FleetKey,
  args: Record<string, unknown> = {},
  at = Date.now(),
): SignedCommand {
  return signCommand(
    {
      v: 1,
      id: randomUUID(),
      terminalId,
      command,
      args,
      issuedAt: new Date(at).toISOString(),
      expiresAt: new Date(at + 120_000).toISOString(),
    },
    key,
  );
}
