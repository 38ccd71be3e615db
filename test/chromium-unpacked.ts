import { findChromium } from '../certification/report/browser.js';

/**
 * Vitest's global setup, after test/temp-root.ts: unpacks the Chromium of @sparticuz/chromium into the run's
 * temporary directory once, before any test file starts. Unpacked by the first browser test instead, it raced: the
 * package returns its executable's path as soon as the file exists, so a second test file starting a browser at the
 * same moment spawned a file still being written (`spawn ETXTBSY`), or fonts half unpacked. Where the package cannot
 * unpack (or is not installed) this finds the system browser, or none, as the tests themselves would.
 */
export default async function setup(): Promise<void> {
  await findChromium();
}
