import { existsSync } from 'node:fs';
import type * as Playwright from 'playwright-core';
import type { Browser } from 'playwright-core';

/**
 * A real headless Chromium, never downloaded (reference/environment.md): the one shipped inside @sparticuz/chromium,
 * else Debian's /usr/bin/chromium. The report uses it to print report.html to PDF; the end-to-end tests use it too,
 * through test/e2e/browser.ts. playwright-core and @sparticuz/chromium are development dependencies, so both are
 * imported only when a browser is asked for, and their absence is a {@link ChromiumUnavailableError}, not a crash.
 */

/** Flags of @sparticuz/chromium that would weaken what a page may do (same-origin policy, mixed content). */
const WEAKENING_FLAGS = new Set([
  '--disable-web-security',
  '--allow-running-insecure-content',
  '--single-process',
]);

const DEBIAN_CHROMIUM = '/usr/bin/chromium';

/** Flags for Debian's chromium run headless as root in a container. */
const DEBIAN_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** No browser can be started here: `reason` says which piece is missing. */
export class ChromiumUnavailableError extends Error {
  readonly code = 'CHROMIUM_UNAVAILABLE';
  constructor(reason: string, options?: { cause?: unknown }) {
    super(reason, options);
    this.name = 'ChromiumUnavailableError';
  }
}

export interface LaunchedChromium {
  browser: Browser;
  /** Which executable runs. */
  executable: string;
  close(): Promise<void>;
}

/** The executable to run and its flags, or why there is none. */
export async function findChromium(): Promise<{ executable: string; args: string[] } | { reason: string }> {
  try {
    const { default: sparticuz } = await import('@sparticuz/chromium');
    const executable = await sparticuz.executablePath();
    if (executable && existsSync(executable))
      return { executable, args: sparticuz.args.filter((f) => !WEAKENING_FLAGS.has(f)) };
  } catch {
    // Not installed (production install) or its archive cannot be unpacked here: try the system browser.
  }
  // Playwright gives every launch a fresh temporary profile itself.
  if (existsSync(DEBIAN_CHROMIUM)) return { executable: DEBIAN_CHROMIUM, args: DEBIAN_FLAGS };
  return { reason: `no Chromium: neither @sparticuz/chromium nor ${DEBIAN_CHROMIUM} is installed` };
}

/**
 * Launches headless Chromium with `extraArgs` (e.g. `--host-resolver-rules=…`).
 *
 * @throws ChromiumUnavailableError when playwright-core is not installed or no executable exists; other launch
 *   failures are thrown as Playwright reports them.
 */
export async function launchChromium(
  extraArgs: string[] = [],
  options: { timeoutMs?: number } = {},
): Promise<LaunchedChromium> {
  let playwright: typeof Playwright;
  try {
    playwright = await import('playwright-core');
  } catch (cause) {
    throw new ChromiumUnavailableError('playwright-core is not installed (a development dependency)', {
      cause,
    });
  }
  const found = await findChromium();
  if ('reason' in found) throw new ChromiumUnavailableError(found.reason);
  const browser = await playwright.chromium.launch({
    executablePath: found.executable,
    args: [...found.args, ...extraArgs],
    headless: true,
    ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
  });
  return {
    browser,
    executable: found.executable,
    async close() {
      await browser.close();
    },
  };
}
