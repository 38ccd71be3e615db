import { readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../log/index.js';

/**
 * The record of the failed starts in a row, in the service's state directory (the working directory under
 * systemd): a small JSON file, not the journal database — it is read before the journal is opened, and a start may
 * fail at the journal itself.
 */
export const START_LOOP_FILE = 'start-loop.json';

/**
 * How long a start must have run ready before it is a good one: a terminal killed soon after READY (it crashes at its
 * first customer, its watchdog starves) loops as surely as one that never gets there.
 */
export const START_STEADY_MS = 600_000;

/** The wait before the second start in a row that follows a failed one. */
export const START_BACKOFF_BASE_MS = 10_000;
/** The longest wait between two starts of a terminal that keeps failing (the unit's RestartSec comes on top). */
export const START_BACKOFF_MAX_MS = 300_000;

/**
 * How long a start waits after `failed` failed starts in a row: nothing after a good start,
 * then 10 s, doubling up to five minutes. systemd's own backoff is fixed (RestartSec=10: a growing one needs systemd
 * 254), and a terminal that fails at every start would otherwise open its journal, its gateway and broker connections
 * again every ten seconds, a whole fleet at once after a bad release.
 */
export function startBackoffMs(failed: number): number {
  if (failed <= 0) return 0;
  return Math.min(START_BACKOFF_BASE_MS * 2 ** Math.min(failed - 1, 20), START_BACKOFF_MAX_MS);
}

/** A start counted in the record: what came before it, and how it ends. */
export interface CountedStart {
  /**
   * Failed starts in a row before this one: ended — crashed, killed, failed, hung — before they had run ready for
   * {@link START_STEADY_MS}.
   */
  readonly failedBefore: number;
  /** The wait before this start goes on ({@link startBackoffMs}). */
  readonly backoffMs: number;
  /** A good start (run ready for {@link START_STEADY_MS}, or stopped cleanly once ready): the record removed. */
  good(): void;
  /** Stopped before it was ready (a signal, a restart asked for): not a failure, the count is what it was. */
  stopped(): void;
}

/**
 * Counts this start in the record of `dir` before anything else runs: the count goes up now and comes down only when
 * the start turns out good (or is stopped before it was ready), so that a start that dies in any way — an exception,
 * a crash, the watchdog, the start timeout — counts. A record that cannot be read counts one failed start; one that cannot be written (a
 * read-only or full disk, a permission) is logged, and the start goes on without a count: the backoff is a courtesy to
 * the gateway and the broker, never a reason for a terminal not to start.
 */
export function countStart(dir: string, logger: Logger): CountedStart {
  const path = join(dir, START_LOOP_FILE);
  const failedBefore = readFailed(path, logger);
  const write = (failed: number): void => {
    try {
      if (failed <= 0) {
        unlinkSync(path);
        return;
      }
      const temporary = `${path}.new`;
      writeFileSync(temporary, `${JSON.stringify({ failed })}\n`, { mode: 0o600 });
      renameSync(temporary, path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' && failed <= 0) return;
      logger.warn({ err, file: path }, 'the record of failed starts cannot be written');
    }
  };
  write(failedBefore + 1);
  let settled = false;
  const settle = (failed: number): void => {
    if (settled) return;
    settled = true;
    write(failed);
  };
  return {
    failedBefore,
    backoffMs: startBackoffMs(failedBefore),
    good: () => settle(0),
    stopped: () => settle(failedBefore),
  };
}

function readFailed(path: string, logger: Logger): number {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return 0;
    logger.warn({ err, file: path }, 'the record of failed starts cannot be read: counted as one');
    return 1;
  }
  try {
    const failed = (JSON.parse(text) as { failed?: unknown }).failed;
    if (typeof failed === 'number' && Number.isSafeInteger(failed) && failed >= 0) return failed;
  } catch {
    // Below: a record that is not the terminal's counts one failed start.
  }
  logger.warn({ file: path }, 'the record of failed starts is not readable JSON: counted as one');
  return 1;
}
