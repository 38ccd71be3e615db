import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

/**
 * The kiosk browser's launcher of a headless terminal (deploy/kiosk/parking-terminal-browser; README, "Running as a
 * kiosk service"): it shows the screen whose URL the terminal writes to `bridge.urlFile`. That URL carries the start's
 * secret, the bridge's only lock, so it must never be on a command line, which every local user reads (`ps`,
 * /proc/PID/cmdline). The browser here is a stand-in that records its arguments and what it is told on the DevTools
 * pipe (file descriptor 3), as Chromium's --remote-debugging-pipe reads it.
 */

const LAUNCHER = resolve(import.meta.dirname, '../../deploy/kiosk/parking-terminal-browser');
/** Bounds a hang (the launcher looks at the file every 2 s), measures no speed. */
const HANG_MS = 30_000;
const SECRET = 'Z3k9sQ0m1VnT4cXbR7pLw2yHdA8eJfKu6GiOtNqWxYs';

let dir: string;
let launcher: ChildProcess | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'pt-kiosk-browser-'));
});
afterEach(() => {
  // The launcher and its browser: a process group of their own.
  if (launcher?.pid !== undefined && launcher.exitCode === null) process.kill(-launcher.pid, 'SIGKILL');
  launcher = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** Polls `read` until it returns something, for at most {@link HANG_MS}. */
async function eventually<T>(read: () => T | undefined, what: string): Promise<T> {
  const until = Date.now() + HANG_MS;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`not seen: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('the kiosk browser launcher', () => {
  it('opens the screen of the URL file without the URL on any command line', async () => {
    const urlFile = join(dir, 'ui-url');
    const url = `http://127.0.0.1:8470/?s=${SECRET}`;
    writeFileSync(urlFile, `${url}\n`, { mode: 0o600 });
    // The stand-in browser: its arguments, then what arrives on descriptor 3 (nothing when it has none).
    const browser = join(dir, 'browser');
    writeFileSync(
      browser,
      `#!/bin/sh\nprintf '%s\\n' "$@" > '${dir}/argv'\nexec cat <&3 > '${dir}/pipe' 2>/dev/null\n`,
      { mode: 0o755 },
    );
    launcher = spawn('sh', [LAUNCHER], {
      env: {
        ...process.env,
        PARKING_TERMINAL_URL_FILE: urlFile,
        PARKING_TERMINAL_BROWSER: browser,
        PARKING_TERMINAL_BROWSER_PROFILE: join(dir, 'profile'),
      },
      stdio: 'ignore',
      detached: true,
    });
    const argv = await eventually(
      () => (existsSync(join(dir, 'argv')) ? readFileSync(join(dir, 'argv'), 'utf8') : undefined),
      'the browser started',
    );
    expect(argv).toContain('--kiosk');
    expect(argv).not.toContain(SECRET);
    // Told on its DevTools pipe to open the screen: a navigation of the browser's own (Sec-Fetch-Site: none), which
    // the bridge takes, where a page redirecting to it would be refused as cross-site.
    const told = await eventually(() => {
      const text = existsSync(join(dir, 'pipe')) ? readFileSync(join(dir, 'pipe'), 'utf8') : '';
      return text.includes('\0') ? text : undefined;
    }, 'a DevTools message');
    const message = JSON.parse(told.split('\0')[0]!) as { method: string; params: { url: string } };
    expect(message).toMatchObject({ method: 'Target.createTarget', params: { url } });
  }, 60_000);
});
