import { execFileSync } from 'node:child_process';
import { closeSync, constants, existsSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  printed,
  startCommand,
  writeStartConfig,
  type StartRun,
  startTestDirectories,
} from './start-command.js';

/**
 * `parking-terminal start --headless` whose standard output or standard error is broken: a pipe whose reader went
 * away (EPIPE), or a full pipe nobody reads. Its lines may be lost there, but SIGTERM stops it as ever, with its usual
 * exit code (0: a clean stop, nothing put out of service by a write that failed).
 */

/** Bounds a hang (loading the sources on a busy machine, a stop that never ends), measures no speed. */
const HANG_MS = 60_000;
/** Each test: a start and a stop, each bounded by {@link HANG_MS}. */
const TEST_MS = 150_000;

let dir: string;
const fds: number[] = [];
const children = startTestDirectories(
  'pt-start-broken-output-',
  (d) => (dir = d),
  () => {
    for (const fd of fds.splice(0)) closeSync(fd);
  },
);

const urlFile = (): string => join(dir, 'ui-url');

const writeConfig = (): string => writeStartConfig(dir, { bridge: { urlFile: urlFile() } });

function start(options: { stdout?: number; stderr?: number } = {}): StartRun {
  const run = startCommand(dir, writeConfig(), options);
  children.push(run.child);
  return run;
}

/** The write end of a pipe (a FIFO in `dir`) filled to the brim, its read end kept open and never read. */
function fullPipe(): number {
  const fifo = join(dir, 'fifo');
  execFileSync('mkfifo', [fifo]);
  fds.push(openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK));
  const write = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
  fds.push(write);
  const block = Buffer.alloc(4096, 0x2e);
  for (;;) {
    try {
      writeSync(write, block);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EAGAIN') return write;
      throw e;
    }
  }
}

/** Waits, for at most `hangMs`, until the terminal has published its screen's URL (it is then ready or nearly). */
async function urlPublished(run: StartRun, hangMs: number): Promise<void> {
  const until = Date.now() + hangMs;
  while (!existsSync(urlFile())) {
    if (run.child.exitCode !== null || Date.now() > until) throw new Error('no screen URL published');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** SIGTERM, then its exit: the code, or a failure naming the hang when it is still running after `hangMs`. */
async function stopped(run: StartRun, hangMs: number): Promise<number | NodeJS.Signals | null> {
  run.child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>(
    (_, fail) =>
      (timer = setTimeout(() => fail(new Error(`still running ${hangMs} ms after SIGTERM`)), hangMs)),
  );
  try {
    const { code, signal } = await Promise.race([run.exited, hung]);
    return signal ?? code;
  } finally {
    clearTimeout(timer);
  }
}

describe('parking-terminal start --headless with a broken standard output or error', () => {
  it(
    'stops with exit 0 when the reader of its standard output has gone',
    async () => {
      const run = start();
      await printed(run, / ready: /, HANG_MS);
      run.child.stdout?.destroy();
      expect(await stopped(run, HANG_MS), run.stderr()).toBe(0);
    },
    TEST_MS,
  );

  it(
    'stops with exit 0 when the reader of its standard error has gone',
    async () => {
      const run = start();
      run.child.stderr?.destroy();
      await printed(run, / ready: /, HANG_MS);
      expect(await stopped(run, HANG_MS)).toBe(0);
    },
    TEST_MS,
  );

  it(
    'stops with exit 0 when its standard output is a full pipe nobody reads',
    async () => {
      const run = start({ stdout: fullPipe() });
      await urlPublished(run, HANG_MS);
      expect(await stopped(run, HANG_MS), run.stderr()).toBe(0);
    },
    TEST_MS,
  );

  it(
    'stops with exit 0 when its standard error is a full pipe nobody reads',
    async () => {
      const run = start({ stderr: fullPipe() });
      await printed(run, / ready: /, HANG_MS);
      expect(await stopped(run, HANG_MS)).toBe(0);
    },
    TEST_MS,
  );
});
