import { pino, type Logger, type DestinationStream } from 'pino';
import { redactString, redactValue } from './redact.js';

export type { Logger } from 'pino';

export interface LoggerOptions {
  level?: string;
  /** Where JSON lines go; standard error when absent. */
  destination?: DestinationStream | string;
  name?: string;
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
 * The terminal's structured logger. Every object and every message passes through the card-data redaction layer
 * before it is serialised: callers cannot log a PAN, track data or EMV card tags even by mistake.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const dest =
    typeof options.destination === 'string'
      ? pino.destination({ dest: options.destination, mkdir: true, sync: false })
      : (options.destination ?? pino.destination(2));
  return pino(
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
}

/** A logger that discards everything (tests, benchmarks). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
