import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

/**
 * A real Mosquitto for the fleet benchmark (`fleet.heartbeats`) and the fleet tests (test/fleet/), on a free port of
 * 127.0.0.1, with a configuration generated here: TLS (a CA and a server certificate for 127.0.0.1 made with
 * openssl), a password file hashed by mosquitto_passwd, and an ACL that lets each terminal (user name = terminal id)
 * write only its own status, heartbeat, events and replies and read only its own commands, and the operator read
 * everything and write commands.
 */

export const MOSQUITTO = ['/usr/sbin/mosquitto', '/usr/bin/mosquitto'].find((p) => existsSync(p));
const PASSWD = ['/usr/bin/mosquitto_passwd', '/usr/sbin/mosquitto_passwd'].find((p) => existsSync(p));

export interface BrokerUser {
  name: string;
  password: string;
}

export interface Broker {
  url: string;
  port: number;
  dir: string;
  /** The CA the server certificate chains to (PEM file). */
  caFile: string;
  /** Writes a 0600 file holding `text` in the broker's directory and returns its path. */
  secret(name: string, text: string): Promise<string>;
  stop(): Promise<void>;
  /** Starts it again on the same port (after {@link stop}). */
  start(): Promise<void>;
  close(): Promise<void>;
  log(): string;
}

/** Resolves once 127.0.0.1:`port` accepts a TCP connection (tries every 20 ms for 10 s). */
async function listening(port: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (up) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`nothing listens on 127.0.0.1:${port}`);
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: 'ignore' });
}

/** A CA and a server certificate for 127.0.0.1 / localhost (EC P-256: quick to make and to handshake). */
function makeCertificates(dir: string): void {
  openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'ca.key'], dir);
  openssl(
    [
      'req',
      '-x509',
      '-new',
      '-key',
      'ca.key',
      '-sha256',
      '-days',
      '2',
      '-subj',
      '/CN=Fleet Test CA',
      '-out',
      'ca.crt',
    ],
    dir,
  );
  openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'server.key'], dir);
  openssl(['req', '-new', '-key', 'server.key', '-subj', '/CN=127.0.0.1', '-out', 'server.csr'], dir);
  execFileSync(
    'openssl',
    [
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '2',
      '-sha256',
      '-extfile',
      'san.ext',
      '-out',
      'server.crt',
    ],
    { cwd: dir, stdio: 'ignore' },
  );
}

export async function startMosquitto(options: {
  prefix: string;
  terminals: BrokerUser[];
  operators: BrokerUser[];
  /** Users who may connect and read their own topics but not write any command. */
  others?: BrokerUser[];
}): Promise<Broker> {
  if (!MOSQUITTO) throw new Error('mosquitto is not installed (Debian package mosquitto)');
  const dir = await mkdtemp(join(tmpdir(), 'pt-mosquitto-'));
  await writeFile(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  makeCertificates(dir);
  const users = [...options.terminals, ...options.operators, ...(options.others ?? [])];
  const passwd = join(dir, 'passwd');
  await writeFile(passwd, users.map((u) => `${u.name}:${u.password}`).join('\n') + '\n', { mode: 0o600 });
  if (!PASSWD) throw new Error('mosquitto_passwd is not installed');
  // Hashes the plain-text file in place (PBKDF2-SHA512).
  execFileSync(PASSWD, ['-U', passwd], { stdio: 'ignore' });
  const p = options.prefix;
  const acl = [
    // Every terminal: its own topics only (%u = its user name = its terminal id).
    `pattern write ${p}/%u/status`,
    `pattern write ${p}/%u/heartbeat`,
    `pattern write ${p}/%u/events`,
    `pattern write ${p}/%u/replies`,
    `pattern read ${p}/%u/commands`,
    ...options.operators.flatMap((o) => [
      `user ${o.name}`,
      `topic read ${p}/+/status`,
      `topic read ${p}/+/heartbeat`,
      `topic read ${p}/+/events`,
      `topic read ${p}/+/replies`,
      `topic write ${p}/+/commands`,
    ]),
  ].join('\n');
  await writeFile(join(dir, 'acl'), `${acl}\n`, { mode: 0o600 });
  for (const f of ['ca.key', 'server.key']) await chmod(join(dir, f), 0o600);
  const port = await freePort();
  const user = userInfo().username;
  await writeFile(
    join(dir, 'mosquitto.conf'),
    [
      `user ${user}`,
      'per_listener_settings false',
      'allow_anonymous false',
      `password_file ${passwd}`,
      `acl_file ${join(dir, 'acl')}`,
      'persistence false',
      'max_queued_messages 1000',
      // As README, Fleet, "Attaching a real broker".
      'max_packet_size 1048576',
      'log_dest stderr',
      'log_type error',
      'log_type warning',
      'log_type notice',
      `listener ${port} 127.0.0.1`,
      `cafile ${join(dir, 'ca.crt')}`,
      `certfile ${join(dir, 'server.crt')}`,
      `keyfile ${join(dir, 'server.key')}`,
      'require_certificate false',
      '',
    ].join('\n'),
  );
  let child: ChildProcess | undefined;
  let output = '';
  const start = async (): Promise<void> => {
    const proc = spawn(MOSQUITTO, ['-c', join(dir, 'mosquitto.conf')], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child = proc;
    proc.stderr?.on('data', (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-20_000);
    });
    const exited = new Promise<never>((_, failed) =>
      proc.once('exit', (code) => failed(new Error(`mosquitto exited with ${code}:\n${output}`))),
    );
    // Ready once the listener accepts a connection (Mosquitto prints nothing at start at these log levels).
    await Promise.race([exited, listening(port)]);
  };
  const stop = async (): Promise<void> => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGTERM');
    await exited;
  };
  await start();
  return {
    url: `mqtts://127.0.0.1:${port}`,
    port,
    dir,
    caFile: join(dir, 'ca.crt'),
    secret: async (name, text) => {
      const file = join(dir, name);
      await writeFile(file, text, { mode: 0o600 });
      return file;
    },
    stop,
    start: async () => {
      output = '';
      await start();
    },
    close: async () => {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
    log: () => output,
  };
}
