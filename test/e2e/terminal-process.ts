import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { ConfigInput } from '../../src/config/index.js';
import { localDateTime } from '../../src/host/local-time.js';

/**
 * The real terminal as a process, as an installer starts it: `parking-terminal start --headless --port 0 --config FILE`
 * (host, catalogues, simulated reader, embedded sandbox, journal) in a temporary directory of its own, with a
 * configuration file written there and a fixed operator PIN from a PIN file.
 */

const BIN = resolve(import.meta.dirname, '../../bin/parking-terminal.js');

/** The operator PIN of every terminal started here (a PIN file, so that it is known before the start). */
export const OPERATOR_PIN = '73914826';

export interface RunningTerminal {
  /** The screen's URL with this start's secret. */
  url: string;
  /** The embedded sandbox gateway's base URL. */
  sandboxUrl: string;
  /** `terminal.id` of its configuration. */
  terminalId: string;
  pin: string;
  /** The terminal's working directory (its `config.json`, journal and keys), for commands run beside it. */
  cwd: string;
  /** What the process printed so far (stdout and stderr), for a failure's message. */
  output(): string;
  /** SIGTERM, waits for the exit, removes the directory. */
  stop(): Promise<void>;
}

/**
 * Starts the terminal with `config` (merged over a terminal id, the PIN file and quiet logs) and resolves once it
 * printed its URL and the sandbox's.
 */
export async function startTerminal(
  config: ConfigInput = {},
  options: { prefix?: string } = {},
): Promise<RunningTerminal> {
  const cwd = await mkdtemp(join(tmpdir(), options.prefix ?? 'pt-e2e-'));
  await writeFile(join(cwd, 'operator.pin'), `${OPERATOR_PIN}\n`, { mode: 0o600 });
  const terminalId = config.terminal?.id ?? 'PT000001';
  const full: ConfigInput = {
    ...config,
    terminal: { ...config.terminal, id: terminalId, operatorPinFile: 'operator.pin' },
    log: { level: 'warn', ...config.log },
    // The screen's URL with its secret, as the kiosk browser's launcher reads it: standard output (a pipe) prints it
    // without the secret.
    bridge: { ...config.bridge, urlFile: 'ui-url' },
  };
  await writeFile(join(cwd, 'config.json'), JSON.stringify(full, null, 2));
  let output = '';
  const child: ChildProcess = spawn(
    process.execPath,
    [BIN, 'start', '--headless', '--port', '0', '--config', 'config.json'],
    { cwd, env: { ...process.env, NODE_ENV: 'test' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stderr?.on('data', (c: Buffer) => {
    output += c.toString('utf8');
  });
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    await rm(cwd, { recursive: true, force: true });
  };
  try {
    const { url, sandboxUrl } = await new Promise<{ url: string; sandboxUrl: string }>((ready, failed) => {
      let url: string | undefined;
      let sandboxUrl: string | undefined;
      child.once('exit', (code) => failed(new Error(`start exited with ${code}:\n${output}`)));
      createInterface({ input: child.stdout! }).on('line', (line) => {
        output += `${line}\n`;
        const sandbox = /^Sandbox gateway: (http:\/\/127\.0\.0\.1:\d+)/.exec(line);
        if (sandbox?.[1]) sandboxUrl = sandbox[1];
        if (/ ready: /.test(line))
          readFile(join(cwd, 'ui-url'), 'utf8').then((text) => {
            url = text.trim();
            if (sandboxUrl) ready({ url, sandboxUrl });
          }, failed);
      });
    });
    return { url, sandboxUrl, terminalId, pin: OPERATOR_PIN, cwd, output: () => output, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

let serial = 42;

/**
 * A kiosk ticket (`YYYYMMDDhhmm` + serial) for an entry `minutesAgo` minutes ago, in the terminal's time zone. Each
 * call is a ticket of its own (the next serial): the pay station records a paid ticket and does not charge it again.
 */
export function ticketFor(minutesAgo: number, timeZone: string): string {
  serial += 1;
  return `${localDateTime(new Date(Date.now() - minutesAgo * 60_000), timeZone).slice(0, 12)}${String(serial).padStart(4, '0')}`;
}
