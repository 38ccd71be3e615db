import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  printed,
  screenOf,
  startCommand,
  writeStartConfig,
  type StartRun,
  startTestDirectories,
} from './start-command.js';

/**
 * `bridge.urlFile`: a headless terminal's screen URL for the kiosk browser's launcher. The URL's secret changes at
 * every start, so a kiosk browser given it once loses the screen at the first restart; the file always holds the
 * running start's URL, readable by the service user only, and is gone once the terminal stops.
 */

/** Bounds a hang (loading the sources on a busy machine), measures no speed. */
const HANG_MS = 60_000;

let dir: string;
const children = startTestDirectories('pt-start-url-file-', (d) => (dir = d));

const writeConfig = (config: Record<string, unknown>): string => writeStartConfig(dir, config);

function start(configFile: string): StartRun {
  const run = startCommand(dir, configFile);
  children.push(run.child);
  return run;
}

const READY = / ready: /;
/** The whole URL, as the file holds it: the screen's address and this start's secret. */
const SCREEN_URL = /^http:\/\/127\.0\.0\.1:\d+\/\?s=[A-Za-z0-9_-]{43}$/;

describe('parking-terminal start --headless with bridge.urlFile', () => {
  it('writes the URL of each start for the kiosk browser, private to the service user, and removes it at the stop', async () => {
    // Relative to the working directory (the service's state directory).
    const urlFile = join(dir, 'state', 'ui-url');
    const configFile = writeConfig({ bridge: { urlFile: 'state/ui-url' } });

    const first = start(configFile);
    const { url: firstUrl } = await screenOf(first, READY, urlFile, HANG_MS);
    expect(firstUrl).toMatch(SCREEN_URL);
    expect(statSync(urlFile).mode & 0o777).toBe(0o600);
    first.child.kill('SIGTERM');
    expect(await first.exited).toEqual({ code: 0, signal: null });
    expect(existsSync(urlFile)).toBe(false);

    // The next start (a restart): a new secret, and the file names it.
    const second = start(configFile);
    const { url: secondUrl } = await screenOf(second, READY, urlFile, HANG_MS);
    expect(secondUrl).toMatch(SCREEN_URL);
    expect(secondUrl).not.toBe(firstUrl);
    second.child.kill('SIGTERM');
    expect(await second.exited).toEqual({ code: 0, signal: null });
    expect(existsSync(urlFile)).toBe(false);
  }, 180_000);

  it('writes the out-of-service screen URL while the configuration file is refused', async () => {
    const urlFile = join(dir, 'ui-url');
    const configFile = writeConfig({ bridge: { urlFile }, terminal: { noSuchKey: true } });
    const run = start(configFile);
    // Standard output says where the URL is, without its secret.
    const { port, url } = await screenOf(
      run,
      /configuration refused .*: http:\/\/127\.0\.0\.1:(\d+)\//,
      urlFile,
      HANG_MS,
    );
    expect(url).toMatch(SCREEN_URL);
    expect(run.lines.join('\n')).toContain(
      `: http://127.0.0.1:${port}/ (its URL with the secret: ${urlFile})`,
    );
    expect(run.lines.join('\n')).not.toContain(new URL(url).searchParams.get('s'));
    run.child.kill('SIGTERM');
    expect(await run.exited).toEqual({ code: 0, signal: null });
    expect(existsSync(urlFile)).toBe(false);
  }, 120_000);

  it('prints no secret on standard output, which is not a terminal (under systemd: the journal, open to others)', async () => {
    const urlFile = join(dir, 'ui-url');
    const run = start(writeConfig({ bridge: { urlFile } }));
    const [line] = await printed(run, /^.* ready: .*$/, HANG_MS);
    const url = readFileSync(urlFile, 'utf8').trim();
    const secret = new URL(url).searchParams.get('s');
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // The screen's address and where its secret URL is, for the operator reading the log.
    expect(line).toContain(
      `ready: http://127.0.0.1:${new URL(url).port}/ (its URL with the secret: ${urlFile})`,
    );
    expect(run.lines.join('\n')).not.toContain(secret);
    run.child.kill('SIGTERM');
    expect(await run.exited).toEqual({ code: 0, signal: null });
    expect(run.lines.join('\n')).not.toContain(secret);
  }, 120_000);

  it('fails the start with exit 1 and BRIDGE_URL_FILE, without the secret, when the file cannot be written', async () => {
    // Its directory is a regular file.
    writeFileSync(join(dir, 'not-a-dir'), '');
    const run = start(writeConfig({ bridge: { urlFile: join(dir, 'not-a-dir', 'ui-url') } }));
    expect(await run.exited).toEqual({ code: 1, signal: null });
    const out = run.lines.join('\n');
    const doc = JSON.parse(out.slice(out.indexOf('{'))) as { error: { code: string; message: string } };
    expect(doc.error.code).toBe('BRIDGE_URL_FILE');
    expect(doc.error.message).toContain('not-a-dir');
    expect(doc.error.message).not.toContain('?s=');
  }, 120_000);
});
