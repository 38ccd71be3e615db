import type { Writable } from 'node:stream';

/**
 * The process's own standard output and error, made safe to write to once broken: a write to a pipe whose reader has
 * gone fails (EPIPE), and the stream reports it as an 'error' event that, unheard, is an uncaught exception — a
 * terminal put out of service, or a stack trace and exit 1 at the end of a clean stop. Their lines are lost from
 * then on; the process goes on and exits with its own code. Both processes that own their standard streams use it:
 * `parking-terminal` (src/cli/main.ts) and the Electron shell (main/main.ts), which `start` gives the same streams.
 */
export function losingLinesWhenBroken(...streams: Writable[]): void {
  for (const stream of streams) stream.on('error', () => undefined);
}
