import type { Logger } from '../../log/index.js';
import { printedSecret, StartSecretFile } from '../start-secret-file.js';
import { BridgeError } from './server.js';

/**
 * The screen's URL for a kiosk browser outside the terminal (`bridge.urlFile`, headless). Its secret changes at every
 * start (src/host/bridge/access.ts), so a browser given the URL once would lose the screen at the first restart (the
 * watchdog, the daily restart, a power cut): the launcher reads the current one from this file instead. The secret is
 * the bridge's only lock, so the file is private to the service user and removed when the screen stops being served
 * ({@link StartSecretFile}).
 */
export type ScreenUrlFile = StartSecretFile;

export const ScreenUrlFile = {
  /**
   * The file of `bridge.urlFile` (relative to `cwd`), or undefined when none is configured. One that cannot be
   * written throws a {@link BridgeError} `BRIDGE_URL_FILE`: the start fails (exit 1, restarted), as when its port is
   * held; the message names the file, never the URL.
   */
  of(urlFile: string | undefined, cwd: string, logger: Logger): ScreenUrlFile | undefined {
    return StartSecretFile.of(
      urlFile,
      cwd,
      'screen URL',
      (message) => new BridgeError('BRIDGE_URL_FILE', `bridge.urlFile ${message}`),
      logger,
    );
  },
};

/**
 * The screen's URL as `start` prints it on standard output ({@link printedSecret}): whole on a terminal only; anywhere
 * else the address without the secret, saying where the whole URL is: `urlFile`, the kiosk browser's (mode 0600).
 */
export function printedScreenUrl(
  url: string,
  where: { terminal: boolean; urlFile: ScreenUrlFile | undefined },
): string {
  const bare = new URL(url);
  bare.search = '';
  return printedSecret(url, { terminal: where.terminal, file: where.urlFile }, (file) =>
    file !== undefined
      ? `${bare.href} (its URL with the secret: ${file})`
      : `${bare.href} (its URL with the secret is printed on a terminal only; set bridge.urlFile)`,
  );
}
