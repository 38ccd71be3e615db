import { constants, fsyncSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { pino, type Logger, type DestinationStream } from 'pino';
import { redactString, redactValue } from './redact.js';

export type { Logger } from 'pino';

export interface LoggerOptions {
  level?: string;
  /**
   * Where JSON lines go: a stream, or a file (the configuration's `log.file`) appended to, its directory created.
   * Standard error when absent, when the file cannot be opened, and from the first write to it that fails (a warning
   * there then says so).
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

/** The stream pino writes a file descriptor with (sonic-boom). */
type FileStream = ReturnType<typeof pino.destination>;

/**
 * What sonic-boom (4.x, text mode) holds of the lines not written yet: the chunk being written (a string until part of
 * it was written, then the rest as a Buffer) and the chunks queued behind it, whole lines each.
 */
interface FileStreamBuffers {
  destroyed: boolean;
  _writing: boolean;
  _writingBuf: string | Buffer;
  _bufs: string[];
  _len: number;
}

/**
 * Takes from `stream` the lines it has not written, but not the chunk of a write in flight: whole lines, the rest of
 * a line already written in part left out (it would not read as one).
 */
function takeUnwritten(stream: FileStream): Buffer {
  const buffers = stream as unknown as FileStreamBuffers;
  const chunks: Buffer[] = [];
  if (!buffers._writing && buffers._writingBuf.length > 0) {
    const chunk = buffers._writingBuf;
    let rest = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    // A Buffer is what remains of a chunk written in part: it starts within a line unless at a line's start.
    if (typeof chunk !== 'string' && rest[0] !== 0x7b)
      rest = rest.subarray(rest.indexOf(0x0a) + 1 || rest.length);
    chunks.push(rest);
    buffers._writingBuf = '';
  }
  for (const chunk of buffers._bufs) chunks.push(Buffer.from(chunk));
  buffers._bufs = [];
  const unwritten = Buffer.concat(chunks);
  buffers._len = Math.max(0, buffers._len - unwritten.length);
  return unwritten;
}

/** How long a synchronous flush waits in all for a pipe whose reader is slow (EAGAIN), ms. */
const FLUSH_SYNC_WAIT_MS = 1_000;

/**
 * A synchronous flush of `stream`, writing file descriptor `fd`, to take the place of sonic-boom's own — pino's at
 * exit — which retries a failed write every 100 ms for as long as it fails, except EAGAIN, which it retries forever: a
 * disk full at exit, or a full pipe nobody reads (standard error under a reader that stopped), held the process
 * forever. This one waits for a slow pipe (EAGAIN) at most {@link FLUSH_SYNC_WAIT_MS} in all and gives up on any
 * other error: `failed` gets the error and the lines from the first one not begun (the rest of one the descriptor
 * took in part would not read as a line).
 */
function boundedFlushSync(
  stream: FileStream,
  fd: number,
  failed: (error: NodeJS.ErrnoException, unwritten: Buffer) => void,
): () => void {
  return () => {
    if ((stream as unknown as FileStreamBuffers).destroyed) return;
    const unwritten = takeUnwritten(stream);
    let written = 0;
    const giveUpAt = Date.now() + FLUSH_SYNC_WAIT_MS;
    while (written < unwritten.length) {
      try {
        written += writeSync(fd, unwritten, written);
      } catch (e) {
        const error = e as NodeJS.ErrnoException;
        if ((error.code === 'EAGAIN' || error.code === 'EBUSY') && Date.now() < giveUpAt) {
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
          continue;
        }
        const lineStart =
          written === 0 || unwritten[written - 1] === 0x0a
            ? written
            : unwritten.indexOf(0x0a, written) + 1 || unwritten.length;
        failed(error, unwritten.subarray(lineStart));
        return;
      }
    }
    try {
      fsyncSync(fd);
    } catch {
      // Not every file can be synced (a FIFO): written is what counts here, as in sonic-boom's own flush.
    }
  };
}

/**
 * Standard error (file descriptor 2) as pino writes it, its flush at exit bounded ({@link boundedFlushSync}): standard
 * error that cannot take the last lines then — its reader gone, or a full pipe nobody reads — loses them, and the
 * process exits all the same.
 */
function standardErrorStream(): FileStream {
  const stream = pino.destination(2);
  stream.flushSync = boundedFlushSync(stream, 2, () => {
    // Standard error itself cannot be written: nothing is left to tell, the lines are lost.
  });
  return stream;
}

/**
 * A log file's destination: the file until a write to it fails — the disk full (ENOSPC), its device gone (EIO), a
 * FIFO whose reader went away (EPIPE) — then standard error, for the rest of the run.
 *
 * sonic-boom reports a failed write as an 'error' event: unheard, it crashed the process; pino's own listener heard
 * only EPIPE, and dropped every later line without a word. Here the first failure of any kind switches to standard
 * error, with one warning naming the file and the code, and the lines the file had not taken are written there. The
 * file's stream is then destroyed (its descriptor closed; pino's flush at exit skips it). Its flush at exit is
 * bounded ({@link boundedFlushSync}); the lines it could not write go to standard error.
 */
function fileOrStandardError(
  fd: number,
  fileStream: FileStream,
  standardError: () => DestinationStream,
  warn: (error: NodeJS.ErrnoException) => void,
): DestinationStream & { flush(cb?: (err?: Error) => void): void; flushSync(): void } {
  let current: DestinationStream = fileStream;
  const fail = (error: NodeJS.ErrnoException, unwritten: Buffer): void => {
    if (current !== fileStream) return;
    current = standardError();
    try {
      fileStream.destroy();
    } catch {
      // Destroyed already.
    }
    warn(error);
    if (unwritten.length > 0) current.write(unwritten.toString('utf8'));
  };
  // Before pino's listener, which disables the stream on EPIPE before anyone could take its lines; kept for the rest
  // of the run, so that no later error of the stream (its close) is left unheard.
  fileStream.prependListener('error', (error: NodeJS.ErrnoException) => {
    if (current === fileStream) fail(error, takeUnwritten(fileStream));
  });
  const flushFile = boundedFlushSync(fileStream, fd, (error, unwritten) => {
    fail(error, unwritten);
    const standard = current as { flushSync?: () => void };
    try {
      standard.flushSync?.();
    } catch {
      // Standard error itself cannot be written: nothing is left to tell.
    }
  });
  fileStream.flushSync = (): void => {
    if (current === fileStream) flushFile();
  };
  return {
    write: (line: string) => current.write(line),
    flush: (cb?: (err?: Error) => void) => {
      const stream = current as { flush?: (cb: (err?: Error) => void) => void };
      if (stream.flush) stream.flush(cb ?? (() => undefined));
      else cb?.();
    },
    flushSync: () => (current as { flushSync?: () => void }).flushSync?.(),
  };
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
 * names the file and the system's error code. A file whose writes fail later is replaced the same way, for the rest
 * of the run (fileOrStandardError).
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const standardError = (): DestinationStream => options.standardError ?? standardErrorStream();
  let dest: DestinationStream;
  let unopened: { file: string; error: NodeJS.ErrnoException } | undefined;
  // The logger, once made, for the warning of a log file that fails later.
  const made: { logger?: Logger } = {};
  if (typeof options.destination === 'string') {
    const file = options.destination;
    const opened = openLogFile(file);
    if ('fd' in opened)
      dest = fileOrStandardError(
        opened.fd,
        pino.destination({ dest: opened.fd, sync: false }),
        standardError,
        (error) =>
          made.logger?.warn(
            { file, err: error },
            `log.file ${file} could not be written (${error.code ?? error.message}): logging to standard error instead`,
          ),
      );
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
  made.logger = logger;
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
