import { resolve } from 'node:path';
import { removePrivateFileDurably, writePrivateFileDurably } from '../config/durable-file.js';
import type { Logger } from '../log/index.js';

/**
 * A secret of this start (the screen's URL, src/host/bridge/url-file.ts; the operator PIN generated for it) for
 * whoever runs the terminal outside a terminal. The file is private to the service user — written as the terminal's
 * other secrets are (mode 0600, whole and synced, replacing the previous one atomically) — and removed when the start
 * stops. A file a crash left behind names a secret no start holds any more. Only the file's path is ever logged.
 */
export class StartSecretFile {
  private written = false;

  constructor(
    /** The file, resolved against the working directory. */
    readonly path: string,
    /** What it holds, for the log: "screen URL", "operator PIN". */
    private readonly what: string,
    /** The error {@link publish} throws, from a message that names the file (never the secret). */
    private readonly failure: (message: string) => Error,
    private readonly logger: Logger,
  ) {}

  /** The file `file` names relative to `cwd`, or undefined when none is configured. */
  static of(
    file: string | undefined,
    cwd: string,
    what: string,
    failure: (message: string) => Error,
    logger: Logger,
  ): StartSecretFile | undefined {
    return file === undefined ? undefined : new StartSecretFile(resolve(cwd, file), what, failure, logger);
  }

  /** Writes `secret` (one line); throws the configured failure when the file cannot be written. */
  publish(secret: string): void {
    try {
      writePrivateFileDurably(this.path, `${secret}\n`, 'replace');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw this.failure(`${this.path} cannot be written${code ? `: ${code}` : ''}`);
    }
    this.written = true;
    this.logger.info({ file: this.path }, `${this.what} written for this start`);
  }

  /** Removes the file this start wrote; a failure is logged (the secret in it dies with this start anyway). */
  withdraw(): void {
    if (!this.written) return;
    this.written = false;
    try {
      removePrivateFileDurably(this.path);
    } catch (err) {
      this.logger.warn({ err, file: this.path }, `the ${this.what} file could not be removed`);
    }
  }
}

/**
 * A secret of this start as `start` prints it on standard output, which is kept where others read it when it is not
 * a terminal — under systemd the journal, open to the groups systemd-journal and adm; a log collector's files. So it
 * is printed to a terminal only (a person running `start` by hand); anywhere else the line says `elsewhere(file)`:
 * where the secret is (`file`, private to the service user), or how to get it when no file is configured.
 */
export function printedSecret(
  secret: string,
  where: { terminal: boolean; file: StartSecretFile | undefined },
  elsewhere: (file: string | undefined) => string,
): string {
  return where.terminal ? secret : elsewhere(where.file?.path);
}
