import { existsSync } from 'node:fs';
import { chromium as playwright, type Browser } from 'playwright-core';

/**
 * A real headless Chromium for end-to-end tests, never downloaded (reference/environment.md): the one shipped inside
 * @sparticuz/chromium, else Debian's /usr/bin/chromium.
 */

/** Flags of @sparticuz/chromium that would weaken what the tests check (same-origin policy, mixed content). */
const WEAKENING_FLAGS = new Set([
  '--disable-web-security',
  '--allow-running-insecure-content',
  '--single-process',
]);

/** Flags for Debian's chromium run headless as root in a container. */
const DEBIAN_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export interface LaunchedBrowser {
  browser: Browser;
  /** Which executable runs. */
  executable: string;
  close(): Promise<void>;
}

/** Launches headless Chromium with `extraArgs` (e.g. --host-resolver-rules). */
export async function launchBrowser(extraArgs: string[] = []): Promise<LaunchedBrowser> {
  let executable: string | undefined;
  let args: string[] = [];
  try {
    const { default: sparticuz } = await import('@sparticuz/chromium');
    executable = await sparticuz.executablePath();
    args = sparticuz.args.filter((a) => !WEAKENING_FLAGS.has(a));
  } catch {
    executable = undefined;
  }
  if (!executable || !existsSync(executable)) {
    if (!existsSync('/usr/bin/chromium'))
      throw new Error('no Chromium: neither @sparticuz/chromium nor /usr/bin/chromium is installed');
    executable = '/usr/bin/chromium';
    // Playwright gives every launch a fresh temporary profile itself.
    args = DEBIAN_FLAGS;
  }
  const browser = await playwright.launch({
    executablePath: executable,
    args: [...args, ...extraArgs],
    headless: true,
  });
  return {
    browser,
    executable,
    async close() {
      await browser.close();
    },
  };
}
