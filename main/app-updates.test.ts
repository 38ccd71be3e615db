import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  startAppUpdates,
  startOfVersion,
  startRecordFile,
  versionReady,
  type Updater,
} from './app-updates.js';

class FakeUpdater implements Updater {
  channel: string | null = null;
  allowDowngrade = true;
  autoDownload = false;
  autoInstallOnAppQuit = true;
  feed: unknown;
  installs = 0;
  checks = 0;
  private downloaded: ((info: { version: string }) => void) | undefined;
  setFeedURL(options: unknown): void {
    this.feed = options;
  }
  checkForUpdates(): Promise<unknown> {
    this.checks += 1;
    return Promise.resolve(null);
  }
  on(event: string, listener: (arg: never) => void): this {
    if (event === 'update-downloaded') this.downloaded = listener as (info: { version: string }) => void;
    return this;
  }
  quitAndInstall(): void {
    this.installs += 1;
  }
  download(version: string): void {
    this.downloaded?.({ version });
  }
}

let dir: string;
let appImage: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'updates-'));
  appImage = join(dir, 'ParkingTerminal.AppImage');
  writeFileSync(appImage, 'version 1.0.0');
});
afterEach(() => {
  vi.useRealTimers();
  rmSync(dir, { recursive: true, force: true });
});

function start(updater: FakeUpdater, gate: () => { install: true } | { install: false; why: string }) {
  const stopped: string[] = [];
  const updates = startAppUpdates({
    updater,
    settings: { url: 'https://updates.example.com/pt', channel: 'beta', checkHours: 4 },
    version: '1.0.0',
    appImage,
    stateDir: dir,
    gate,
    stopTakingCards: (reason) => stopped.push(reason),
    gateCheckMs: 1_000,
  });
  return { updates, stopped };
}

describe('app updates', () => {
  it('checks the configured server and channel, never downgrading or installing on quit', () => {
    vi.useFakeTimers();
    const updater = new FakeUpdater();
    const { updates } = start(updater, () => ({ install: true }));
    expect(updater.feed).toEqual({
      provider: 'generic',
      url: 'https://updates.example.com/pt',
      channel: 'beta',
    });
    expect(updater).toMatchObject({ channel: 'beta', allowDowngrade: false, autoDownload: true });
    expect(updater.autoInstallOnAppQuit).toBe(false);
    expect(updater.checks).toBe(1);
    vi.advanceTimersByTime(4 * 3_600_000);
    expect(updater.checks).toBe(2);
    updates.stop();
  });

  it('installs a downloaded update only once the gate opens, keeping the running version to go back to', () => {
    vi.useFakeTimers();
    const updater = new FakeUpdater();
    let gate: { install: true } | { install: false; why: string } = {
      install: false,
      why: '1 authorization(s) open',
    };
    const { stopped } = start(updater, () => gate);
    updater.download('1.1.0');
    vi.advanceTimersByTime(5_000);
    expect(updater.installs).toBe(0);
    gate = { install: true };
    vi.advanceTimersByTime(1_000);
    expect(updater.installs).toBe(1);
    expect(stopped).toEqual(['installing version 1.1.0']);
    expect(readFileSync(join(dir, 'previous.AppImage'), 'utf8')).toBe('version 1.0.0');
    expect(startRecordFile(dir).read()).toMatchObject({
      good: { version: '1.0.0' },
      trial: { version: '1.1.0', attempts: 0 },
    });
  });

  it('puts the previous AppImage back when the new version never reaches READY, and refuses that version again', () => {
    vi.useFakeTimers();
    const updater = new FakeUpdater();
    start(updater, () => ({ install: true }));
    updater.download('1.1.0');
    vi.advanceTimersByTime(1_000);
    writeFileSync(appImage, 'version 1.1.0'); // what the installer did
    for (let i = 0; i < 3; i++) expect(startOfVersion(dir, '1.1.0', appImage).action).toBe('run');
    expect(startOfVersion(dir, '1.1.0', appImage).action).toBe('roll-back');
    expect(readFileSync(appImage, 'utf8')).toBe('version 1.0.0');
    const again = new FakeUpdater();
    start(again, () => ({ install: true }));
    again.download('1.1.0');
    vi.advanceTimersByTime(5_000);
    expect(again.installs).toBe(0);
  });

  it('confirms a new version that reaches READY', () => {
    vi.useFakeTimers();
    const updater = new FakeUpdater();
    start(updater, () => ({ install: true }));
    updater.download('1.1.0');
    vi.advanceTimersByTime(1_000);
    expect(startOfVersion(dir, '1.1.0', appImage).action).toBe('run');
    versionReady(dir, '1.1.0');
    expect(startRecordFile(dir).read()).toEqual({ good: { version: '1.1.0', path: appImage }, rejected: [] });
  });
});
