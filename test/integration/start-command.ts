import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';

/** The command line's entry, as an installer runs it. */
const BIN = resolve(import.meta.dirname, '../../bin/parking-terminal.js');

/** `parking-terminal start` running as its own process, as the kiosk service runs it. */
export interface StartRun {
  child: ChildProcess;
  /** stdout lines so far. */
  lines: string[];
  stderr: () => string;
  /** Resolves with the exit code (or the signal) once the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts `parking-terminal start --port PORT --config FILE` in `cwd` (headless unless `headless` is false; `port` 0
 * by default), its stdout read line by line and its stderr kept. The caller kills what is still running at the end.
 */
export function startCommand(
  cwd: string,
  configFile: string,
  options: { headless?: boolean; port?: string; env?: NodeJS.ProcessEnv } = {},
): StartRun {
  const headless = options.headless === false ? [] : ['--headless'];
  const child = spawn(
    process.execPath,
    [BIN, 'start', ...headless, '--port', options.port ?? '0', '--config', configFile],
    {
      cwd,
      env: { ...process.env, NODE_ENV: 'test', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const lines: string[] = [];
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  createInterface({ input: child.stdout }).on('line', (l) => lines.push(l));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once('exit', (code, signal) => done({ code, signal })),
  );
  return { child, lines, stderr: () => stderr, exited };
}
