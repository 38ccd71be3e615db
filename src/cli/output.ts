import type { Writable } from 'node:stream';

/** Exit codes of every subcommand (DESIGN.md): 0 success, 1 a check found errors, 2 bad input or usage. */
export const EXIT_OK = 0;
export const EXIT_FINDINGS = 1;
export const EXIT_USAGE = 2;

/** Where a command writes; injectable so that tests run commands in-process. */
export interface CliIo {
  stdout: Writable;
  stderr: Writable;
  /** Aborted on SIGINT/SIGTERM for long-running commands (start, sandbox). */
  signal: AbortSignal;
  cwd: string;
  /**
   * The process itself: present only when the command runs as the `parking-terminal` process, absent when a test
   * runs it in-process (a test runner's process is not the command's to change).
   */
  process?: ProcessBoundary;
}

/** What a command may change of the process it runs as. */
export interface ProcessBoundary {
  /**
   * Calls `handler` for an error that nothing else caught (`unhandledRejection`, `uncaughtException`) instead of
   * Node's default (print and die). Returns the function that removes the handler again.
   */
  onUnexpectedError(
    handler: (error: unknown, origin: 'unhandledRejection' | 'uncaughtException') => void,
  ): () => void;
}

/**
 * The longest a command that ends the process (`start`) waits, at its end, for standard output to take its last
 * lines, ms: a pipe nobody reads any more stays full, and the stop must still end (STOP_EXIT_MS of
 * src/host/stopping.ts); what it has not taken by then is lost.
 */
export const OUTPUT_TAKEN_LIMIT_MS = 5_000;

/**
 * Resolves once `stream` has taken what was written to it (or failed), or after `limitMs` when it does not (a full
 * pipe nobody reads).
 */
export function outputTaken(stream: Writable, limitMs = OUTPUT_TAKEN_LIMIT_MS): Promise<void> {
  return new Promise<void>((taken) => {
    const timer = setTimeout(taken, limitMs);
    stream.write('', () => {
      clearTimeout(timer);
      taken();
    });
  });
}

/** Thrown by a command for bad input or usage; printed as `{"error":{code,message,...details}}` with exit 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  constructor(
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** Prints one JSON document on its own line. */
export function printJson(io: Pick<CliIo, 'stdout'>, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Prints the error document of DESIGN.md. */
export function printError(
  io: Pick<CliIo, 'stdout'>,
  code: string,
  message: string,
  details: Record<string, unknown> = {},
): void {
  printJson(io, { error: { code, message, ...details } });
}

/** One subcommand of `parking-terminal`. `run` receives the arguments after the subcommand name. */
export interface Command {
  readonly name: string;
  /** One line for `--help`. */
  readonly summary: string;
  /** Usage lines shown by `parking-terminal NAME --help`. */
  readonly usage: string;
  /**
   * The command is the process (`start`): when it runs as the process, the process exits with its code as soon as
   * `run` returns, even if a library left a timer or a socket open — a terminal that failed to start must not linger
   * half-alive.
   */
  readonly endsProcess?: boolean;
  run(args: string[], io: CliIo): Promise<number>;
}
