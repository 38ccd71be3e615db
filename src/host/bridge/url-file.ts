import { resolve } from 'node:path';
import { removePrivateFileDurably, writePrivateFileDurably } from '../../config/durable-file.js';
import type { Logger } from '../../log/index.js';
import { BridgeError } from './server.js';

/**
 * The screen's URL for a kiosk browser outside the terminal (`bridge.urlFile`, headless). Its secret changes at every
 * start (src/host/bridge/access.ts), so a browser given the URL once would lose the screen at the first restart (the
 * watchdog, the daily restart, a power cut): the launcher reads the current one from this file instead. The secret is
 * the bridge's only lock, so the file is private to the service user — written as the terminal's other secrets are
 * (mode 0600, whole and synced, replacing the previous one atomically) — and removed when the screen stops being
 * served. A file a crash left behind names a secret no start holds any more. Only the file's path is ever logged.
 */
export class ScreenUrlFile {
  private written = false;

  constructor(
    /** The file, resolved against the working directory. */
    readonly path: string,
    private readonly logger: Logger,
  ) {}

  /** The file of `bridge.urlFile` (relative to `cwd`), or undefined when none is configured. */
  static of(urlFile: string | undefined, cwd: string, logger: Logger): ScreenUrlFile | undefined {
    return urlFile === undefined ? undefined : new ScreenUrlFile(resolve(cwd, urlFile), logger);
  }

  /** Writes `url` (one line); throws a {@link BridgeError} `BRIDGE_URL_FILE` when the file cannot be written. */
  publish(url: string): void {
    try {
      writePrivateFileDurably(this.path, `${url}\n`, 'replace');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      // The start fails (exit 1, restarted), as when its port is held; the message names the file, never the URL.
      throw new BridgeError(
        'BRIDGE_URL_FILE',
        `bridge.urlFile ${this.path} cannot be written${code ? `: ${code}` : ''}`,
      );
    }
    this.written = true;
    this.logger.info({ file: this.path }, 'screen URL written for the kiosk browser');
  }

  /** Removes the file this start wrote; a failure is logged (the secret in it dies with this start anyway). */
  withdraw(): void {
    if (!this.written) return;
    this.written = false;
    try {
      removePrivateFileDurably(this.path);
    } catch (err) {
      this.logger.warn({ err, file: this.path }, 'the screen URL file could not be removed');
    }
  }
}

/**
 * The screen's URL as `start` prints it on standard output, which is kept where others read it when it is not a
 * terminal — under systemd the journal, open to the groups systemd-journal and adm; a log collector's files. The secret
 * is the bridge's only lock, so it is printed to a terminal only (a person running `start` by hand); anywhere else the
 * line carries the address without it and says where the whole URL is: `urlFile`, the kiosk browser's (mode 0600).
 */
export function printedScreenUrl(
  url: string,
  where: { terminal: boolean; urlFile: ScreenUrlFile | undefined },
): string {
  if (where.terminal) return url;
  const bare = new URL(url);
  bare.search = '';
  return where.urlFile !== undefined
    ? `${bare.href} (its URL with the secret: ${where.urlFile.path})`
    : `${bare.href} (its URL with the secret is printed on a terminal only; set bridge.urlFile)`;
}
