import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startCommand, type StartRun } from './start-command.js';

/**
 * `parking-terminal start` where the Electron binary is installed: `start` runs the Electron main process
 * (main/main.ts) as its child, and stopping `start` stops it. The child here stands in for Electron's browser process
 * as far as signals go: Chromium's handlers of SIGINT, SIGTERM and SIGHUP each start the graceful shutdown once and
 * then put the default action back ("We had one shot at graceful shutdown": the next such signal kills it on the spot).
 * Its graceful shutdown lasts until the test lets it end (the file `go`), as a payment in flight keeps the real one.
 */
const FAKE_ELECTRON = `
const { appendFileSync, existsSync, writeFileSync } = require('node:fs');
const [dir] = process.argv.slice(2);
const log = (line) => appendFileSync(dir + '/signals', line + '\\n');
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  const once = () => {
    process.removeListener(signal, once);
    log(signal);
    const wait = setInterval(() => {
      if (!existsSync(dir + '/go')) return;
      clearInterval(wait);
      writeFileSync(dir + '/closed', 'closed cleanly');
      process.exit(0);
    }, 20);
  };
  process.on(signal, once);
}
writeFileSync(dir + '/pid', String(process.pid));
setInterval(() => undefined, 1000);
`;

let dir: string;
const runs: StartRun[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'pt-start-electron-'));
});
afterEach(() => {
  for (const run of runs.splice(0)) if (run.child.exitCode === null) run.child.kill('SIGKILL');
  if (existsSync(join(dir, 'pid')))
    try {
      process.kill(Number(readFileSync(join(dir, 'pid'), 'utf8')), 'SIGKILL');
    } catch {
      // Gone already.
    }
  rmSync(dir, { recursive: true, force: true });
});

/** `start` with the stand-in Electron installed; resolves once the child runs, with its pid. */
async function startWithElectron(): Promise<{ run: StartRun; electronPid: number }> {
  const electronDir = join(dir, 'electron');
  mkdirSync(electronDir);
  writeFileSync(join(dir, 'fake-electron.cjs'), FAKE_ELECTRON);
  writeFileSync(
    join(electronDir, 'electron'),
    `#!/bin/sh\nexec '${process.execPath}' '${join(dir, 'fake-electron.cjs')}' '${dir}'\n`,
    { mode: 0o755 },
  );
  const config = join(dir, 'terminal.json');
  writeFileSync(config, JSON.stringify({ journal: { path: join(dir, 'var', 'journal.db') } }));
  const run = startCommand(dir, config, {
    headless: false,
    env: { ELECTRON_OVERRIDE_DIST_PATH: electronDir },
  });
  runs.push(run);
  await expect.poll(() => existsSync(join(dir, 'pid')), { timeout: 60_000 }).toBe(true);
  return { run, electronPid: Number(readFileSync(join(dir, 'pid'), 'utf8')) };
}

const signals = (): string[] =>
  existsSync(join(dir, 'signals'))
    ? readFileSync(join(dir, 'signals'), 'utf8')
        .split('\n')
        .filter((l) => l !== '')
    : [];

describe('parking-terminal start running the Electron shell', () => {
  it('stopped by systemd, which sends SIGTERM to every process of the unit, lets the window close cleanly', async () => {
    const { run, electronPid } = await startWithElectron();
    // systemd's default KillMode=control-group: SIGTERM to each process of the service, the Electron main process too.
    process.kill(electronPid, 'SIGTERM');
    await expect.poll(signals, { timeout: 60_000 }).toEqual(['SIGTERM']);
    run.child.kill('SIGTERM');
    // What `start` passes on reaches the child as a graceful stop, or kills it.
    await expect
      .poll(() => signals().length > 1 || run.child.exitCode !== null, { timeout: 60_000 })
      .toBe(true);
    writeFileSync(join(dir, 'go'), '');
    expect(await run.exited).toEqual({ code: 0, signal: null });
    expect(existsSync(join(dir, 'closed'))).toBe(true);
    expect(signals()).toEqual(['SIGTERM', 'SIGHUP']);
  }, 120_000);

  it('stopped alone (its child not signalled), stops the window cleanly too', async () => {
    const { run } = await startWithElectron();
    run.child.kill('SIGTERM');
    await expect.poll(signals, { timeout: 60_000 }).toEqual(['SIGHUP']);
    writeFileSync(join(dir, 'go'), '');
    expect(await run.exited).toEqual({ code: 0, signal: null });
    expect(existsSync(join(dir, 'closed'))).toBe(true);
  }, 120_000);

  it('whose Electron main process dies of a signal (a crash, the OOM killer) does not exit as a clean stop', async () => {
    const { run, electronPid } = await startWithElectron();
    process.kill(electronPid, 'SIGKILL');
    // The shell's code for a death by that signal: the service manager and its log see a failure, not a stop.
    expect(await run.exited).toEqual({ code: 137, signal: null });
  }, 120_000);
});

describe('parking-terminal start with an Electron binary it cannot run', () => {
  it('prints the error document and exits 1 (restarted by the service), not a stack trace', async () => {
    // Installed but not executable (a copy that lost its mode bits, a noexec mount): the spawn fails with EACCES.
    const electronDir = join(dir, 'electron');
    mkdirSync(electronDir);
    writeFileSync(join(electronDir, 'electron'), '#!/bin/sh\nexit 0\n', { mode: 0o644 });
    const config = join(dir, 'terminal.json');
    writeFileSync(config, JSON.stringify({ journal: { path: join(dir, 'var', 'journal.db') } }));
    const run = startCommand(dir, config, {
      headless: false,
      env: { ELECTRON_OVERRIDE_DIST_PATH: electronDir },
    });
    runs.push(run);
    expect(await run.exited).toEqual({ code: 1, signal: null });
    const doc = JSON.parse(run.lines.join('\n')) as { error: { code: string; message: string } };
    expect(doc.error.code).toBe('ELECTRON_SPAWN');
    expect(doc.error.message).toContain('EACCES');
    expect(run.stderr()).not.toContain('    at ');
  }, 120_000);
});
