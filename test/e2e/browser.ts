import { launchChromium, type LaunchedChromium } from '../../certification/report/browser.js';

/**
 * A real headless Chromium for end-to-end tests, never downloaded (reference/environment.md). The launching (which
 * executable, which flags) is the one the certification report prints its PDF with: certification/report/browser.ts.
 */

export type LaunchedBrowser = LaunchedChromium;

/**
 * Launches headless Chromium with `extraArgs` (e.g. --host-resolver-rules).
 *
 * @throws ChromiumUnavailableError when neither @sparticuz/chromium nor /usr/bin/chromium is installed.
 */
export async function launchBrowser(extraArgs: string[] = []): Promise<LaunchedBrowser> {
  return launchChromium(extraArgs);
}
