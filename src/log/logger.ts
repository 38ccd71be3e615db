import { constants, mkdirSync, openSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { pino, type Logger, type DestinationStream } from 'pino';
import { redactString, redactValue } from './redact.js';

export type { Logger } from 'pino';

export interface LoggerOptions {
  level?: string;
  /**
   * Where JSON lines go: a stream, or a file (the configuration's `log.file`) appended to, its directory created.
   * Standard error when absent, and when the file cannot be opened (a warning there then says so).
   */
  destination?: DestinationStream | string;
  name?: string;
  /** Standard error: file descriptor 2 unless given (tests give a stream). */
  standardError?: DestinationStream;
}

/** The keys an error is logged under (`logger.error({ err }, …)`). */
const ERROR_KEYS = ['err', 'error'] as const;

/** How many causes of a typed error a log line follows. */
const MAX_CAUSES = 4;

/**
 * An error as a log line states it, card data removed. A typed error — one with a stable string `code`: the
 * terminal's error classes (JournalError, GatewayError, ReaderError, ConfigError …) and the system's (EIO,
 * ECONNRESET …) — is a failure the code expects and handles: its type, code and message, and its cause's, say what
 * happened, in one line without a stack trace. An error without a code is a fault in the code: its stack is kept.
 */
export function loggedError(e: unknown, depth = 0): unknown {
  if (!(e instanceof Error) || typeof (e as { code?: unknown }).code !== 'string') return redactValue(e);
  const { stack: _stack, name: _name, cause: _cause, ...fields } = redactValue(e) as Record<string, unknown>;
  const cause = e.cause;
  if (cause === undefined) return fields;
  return { ...fields, cause: depth < MAX_CAUSES ? loggedError(cause, depth + 1) : '[…]' };
}

/**
 * Creates the directory `dir` and those above it that are missing. Not `mkdirSync(dir, { recursive: true })`: Node's
 * never returns (nor does its asynchronous form call back) when a directory above exists but cannot hold this one and
 * says ENOENT for it — a path under /proc or /sys — it creates the parent (EEXIST) and tries again, forever. Here
 * each directory is tried once more after its parent, and that answer is final. The same rule as `makeDirectory` of
 * src/config/durable-file.ts, which the journal and every durable file use: a copy, as the log imports nothing of
 * ours but emv (DESIGN.md, dependency direction).
 */
function makeDirectory(dir: string): void {
  const make = (): void => {
    try {
      mkdirSync(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  };
  try {
    make();
    return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(dir) === dir) throw error;
  }
  makeDirectory(dirname(dir));
  make();
}

/**
 * The log file opened for appending, its directory created first; or why it cannot be. O_NONBLOCK: a FIFO (a log
 * shipper's) is opened only while its reader is there, else refused at once (ENXIO) — a blocking open would wait for
 * a reader before the first line, and with it the whole start, deaf to SIGTERM. A regular file is not affected; a
 * pipe that is full answers EAGAIN, which the stream retries.
 */
function openLogFile(file: string): { fd: number } | { error: NodeJS.ErrnoException } {
  try {
    makeDirectory(dirname(resolve(file)));
    return {
      fd: openSync(
        file,
        constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NONBLOCK,
        0o666,
      ),
    };
  } catch (error) {
    return { error: error as NodeJS.ErrnoException };
  }
}

/**
 * The terminal's structured logger. Every object and every message passes through the card-data redaction layer
 * before it is serialised: callers cannot log a PAN, track data or EMV card tags even by mistake.
 *
 * A log file is opened here, synchronously, before the first line. Left to pino to open in the background, a file
 * that cannot be opened lost every line of the run without a word (under /proc, or below a symbolic link to a disk
 * not mounted, its directory was never created nor refused: see makeDirectory), and pino's flush at exit threw
 * ("sonic boom is not ready yet"): a crash at every stop. Such a file is replaced by standard error instead — the
 * kiosk keeps running and its lines reach the service manager's journal — and the first line there, a warning,
 * names the file and the system's error code.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const standardError = (): DestinationStream => options.standardError ?? pino.destination(2);
  let dest: DestinationStream;
  let unopened: { file: string; error: NodeJS.ErrnoException } | undefined;
  if (typeof options.destination === 'string') {
    const file = options.destination;
    const opened = openLogFile(file);
    if ('fd' in opened) dest = pino.destination({ dest: opened.fd, sync: false });
    else {
      unopened = { file, error: opened.error };
      dest = standardError();
    }
  } else dest = options.destination ?? standardError();
  const logger = pino(
    {
      level: options.level ?? 'info',
      ...(options.name ? { name: options.name } : {}),
      base: { pid: process.pid },
      formatters: {
        log: (obj) => {
          const out = redactValue(obj) as Record<string, unknown>;
          // Errors under their usual keys as loggedError states them (it redacts them too).
          for (const key of ERROR_KEYS) if (obj[key] !== undefined) out[key] = loggedError(obj[key]);
          return out;
        },
        bindings: (b) => redactValue(b) as Record<string, unknown>,
      },
      serializers: { err: loggedError, error: loggedError },
      hooks: {
        logMethod(args, method) {
          const scrubbed = args.map((a: unknown) => (typeof a === 'string' ? redactString(a) : a));
          method.apply(this, scrubbed as Parameters<typeof method>);
        },
      },
    },
    dest,
  );
  if (unopened) {
    const { file, error } = unopened;
    logger.warn(
      { file, err: error },
      `log.file ${file} cannot be opened (${error.code ?? error.message}): logging to standard error instead`,
    );
  }
  return logger;
}

/** A logger that discards everything (tests, benchmarks). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
