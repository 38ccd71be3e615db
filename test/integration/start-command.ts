import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, beforeEach } from 'vitest';
import { WebSocket } from 'ws';
import type { Result, WsMessage } from '../../src/host/api.js';

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
 * by default), its stdout read line by line and its stderr kept — or, given as `stdout` or `stderr`, a file
 * descriptor of the caller's (a pipe) instead, not read here. The caller kills what is still running at the end.
 */
export function startCommand(
  cwd: string,
  configFile: string,
  options: {
    headless?: boolean;
    port?: string;
    env?: NodeJS.ProcessEnv;
    stdout?: number;
    stderr?: number;
  } = {},
): StartRun {
  const headless = options.headless === false ? [] : ['--headless'];
  const child = spawn(
    process.execPath,
    [BIN, 'start', ...headless, '--port', options.port ?? '0', '--config', configFile],
    {
      cwd,
      env: { ...process.env, NODE_ENV: 'test', ...options.env },
      stdio: ['ignore', options.stdout ?? 'pipe', options.stderr ?? 'pipe'],
    },
  );
  const lines: string[] = [];
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  if (child.stdout) createInterface({ input: child.stdout }).on('line', (l) => lines.push(l));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once('exit', (code, signal) => done({ code, signal })),
  );
  return { child, lines, stderr: () => stderr, exited };
}

/**
 * Waits, for at most `hangMs`, until `run` has printed a line matching `re`; fails naming what it printed when the
 * process exits first or the time is up (it bounds a hang, it measures no speed).
 */
export async function printed(run: StartRun, re: RegExp, hangMs: number): Promise<RegExpExecArray> {
  const until = Date.now() + hangMs;
  for (;;) {
    for (const l of run.lines) {
      const m = re.exec(l);
      if (m) return m;
    }
    if (run.child.exitCode !== null || Date.now() > until)
      throw new Error(`no line ${re}: ${run.lines.join('\n')}\n${run.stderr()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * The screen of `run` once it has printed a line matching `re`: its port and this start's secret, read from its
 * `bridge.urlFile` (`urlFile`, absolute) — standard output, a pipe here and the journal under systemd, carries the URL
 * without its secret (src/host/bridge/url-file.ts), as the kiosk browser's launcher reads it.
 */
export async function screenOf(
  run: StartRun,
  re: RegExp,
  urlFile: string,
  hangMs: number,
): Promise<{ port: string; secret: string; url: string }> {
  await printed(run, re, hangMs);
  const url = new URL(readFileSync(urlFile, 'utf8').trim());
  return { port: url.port, secret: url.searchParams.get('s') ?? '', url: url.href };
}

/** One request over the started terminal's bridge WebSocket (its port and the start's secret), answered by its result. */
export async function bridgeRequest(
  port: string,
  secret: string,
  request: Record<string, unknown>,
): Promise<Result<unknown>> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/ws?s=${secret}`, {
    headers: { Origin: `http://127.0.0.1:${port}` },
  });
  try {
    await new Promise<void>((open, fail) => {
      ws.once('open', () => open());
      ws.once('error', fail);
    });
    const answer = new Promise<WsMessage>((done) =>
      ws.on('message', (data: Buffer) => {
        const m = JSON.parse(data.toString('utf8')) as WsMessage;
        if ('id' in m && m.id === 1) done(m);
      }),
    );
    ws.send(JSON.stringify({ id: 1, ...request }));
    const m = await answer;
    if (!('result' in m)) throw new Error(`no result: ${JSON.stringify(m)}`);
    return m.result;
  } finally {
    ws.terminate();
  }
}

/**
 * Writes `terminal.json` in `dir` — the journal and the offline key under `dir/var`, `extra` merged in — and returns its
 * path, for `start --config`.
 */
export function writeStartConfig(dir: string, extra: Record<string, unknown> = {}): string {
  const file = join(dir, 'terminal.json');
  writeFileSync(
    file,
    JSON.stringify({
      journal: { path: join(dir, 'var', 'journal.db') },
      offline: { keyFile: join(dir, 'var', 'offline.key') },
      ...extra,
    }),
  );
  return file;
}

/**
 * Gives each test of the file a directory of its own (`prefix` names it; `use` is told it before the test) and kills
 * the child processes the test pushed on the returned list, then removes the directory, after it. `cleanUp` runs
 * between the two: what else the test opened. Call it once, at the top of a test file.
 */
export function startTestDirectories(
  prefix: string,
  use: (dir: string) => void,
  cleanUp?: () => void,
): ChildProcess[] {
  const children: ChildProcess[] = [];
  let dir: string | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), prefix));
    use(dir);
  });
  afterEach(() => {
    for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    cleanUp?.();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });
  return children;
}
