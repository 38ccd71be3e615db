import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ReaderError } from '../reader.js';
import { SerialTransport } from '../transports/serial.js';
import type { Transport, TransportConnection, TransportEvents } from '../transports/transport.js';
import type { ReaderSimulator } from './simulator.js';

const RELAY_SCRIPT = fileURLToPath(new URL('./pty-relay.py', import.meta.url));
/** Milliseconds allowed for python3 to start and create the pty. */
const RELAY_START_MS = 5_000;

/**
 * The simulator behind a real pseudo-terminal pair, so that the driver goes through the real `serialport` package and
 * the kernel's tty layer. socat is not on a fresh machine but python3 is (environment.md): a small python3 relay opens
 * the pty, links its slave at a fixed path, and relays the master to the simulator over its stdin/stdout. Unplugging
 * the reader kills the relay (the port gets a hang-up, as when a USB-serial adapter is pulled); plugging starts a new
 * one at the same path.
 */
export class SimulatedPtyTransport implements Transport {
  readonly description = 'simulator (pseudo-terminal)';
  /** Directory of the link, made at the first open so that a transport never opened leaves nothing behind. */
  private dir: string | undefined;
  private relay: ChildProcess | undefined;
  private starting: Promise<void> | undefined;

  constructor(
    private readonly simulator: ReaderSimulator,
    private readonly baudRate = 115_200,
  ) {}

  /** Path of the pseudo-terminal the driver opens (a symlink to /dev/pts/N), fixed for the transport's life. */
  get path(): string {
    this.dir ??= mkdtempSync(join(tmpdir(), 'parking-terminal-pty-'));
    return join(this.dir, 'reader');
  }

  private startRelay(): Promise<void> {
    if (this.relay && this.relay.exitCode === null && !this.relay.killed) return Promise.resolve();
    if (this.starting) return this.starting;
    this.starting = new Promise<void>((resolve, reject) => {
      const child = spawn('python3', [RELAY_SCRIPT, this.path], { stdio: ['pipe', 'pipe', 'pipe'] });
      let settled = false;
      const fail = (message: string, cause?: unknown): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        child.kill('SIGKILL');
        reject(new ReaderError('READER_UNAVAILABLE', `pseudo-terminal relay: ${message}`, {}, { cause }));
      };
      const timer = setTimeout(
        () => fail(`python3 did not start within ${RELAY_START_MS} ms`),
        RELAY_START_MS,
      );
      child.on('error', (e) => fail(`cannot run python3 (${e.message})`, e));
      child.on('exit', (code) => {
        if (this.relay === child) this.relay = undefined;
        fail(`python3 exited with ${code ?? 'a signal'}`);
      });
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (text: string) => {
        if (settled || !text.startsWith('ready')) return;
        settled = true;
        clearTimeout(timer);
        this.relay = child;
        const endpoint = this.simulator.attach({
          send: (bytes) => {
            if (child.stdin.writable) child.stdin.write(bytes);
          },
          unplugged: () => child.kill('SIGTERM'),
        });
        child.stdout.on('data', (chunk: Buffer) => endpoint.deliver(new Uint8Array(chunk)));
        child.on('exit', () => endpoint.detach());
        child.stdin.on('error', () => undefined);
        resolve();
      });
    }).finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  async open(events: TransportEvents): Promise<TransportConnection> {
    if (!this.simulator.plugged) throw new ReaderError('READER_UNAVAILABLE', 'simulated reader is unplugged');
    await this.startRelay();
    return new SerialTransport({ path: this.path, baudRate: this.baudRate }).open(events);
  }

  /** Stops the relay and removes its directory. */
  dispose(): Promise<void> {
    const relay = this.relay;
    this.relay = undefined;
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    this.dir = undefined;
    if (!relay || relay.exitCode !== null) return Promise.resolve();
    return new Promise<void>((resolve) => {
      relay.once('exit', () => resolve());
      relay.kill('SIGTERM');
    });
  }
}
