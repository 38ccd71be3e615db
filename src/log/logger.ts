import { pino, type Logger, type DestinationStream } from 'pino';
import { redactString, redactValue } from './redact.js';

export type { Logger } from 'pino';

export interface LoggerOptions {
  level?: string;
  /** Where JSON lines go; standard error when absent. */
  destination?: DestinationStream | string;
  name?: string;
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
        log: (obj) => redactValue(obj) as Record<string, unknown>,
        bindings: (b) => redactValue(b) as Record<string, unknown>,
      },
      serializers: { err: (e: unknown) => redactValue(e), error: (e: unknown) => redactValue(e) },
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
