import { copyFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../src/log/index.js';
import {
  acceptsUpdate,
  beforeInstall,
  confirmReady,
  decideStart,
  StartRecordFile,
  type StartDecision,
} from './update-rollback.js';

/** The part of electron-updater's AppUpdater used here (injected so that tests need no Electron). */
export interface Updater {
  channel: string | null;
  allowDowngrade: boolean;
  autoDownload: boolean;
  autoInstallOnAppQuit: boolean;
  setFeedURL(options: { provider: 'generic'; url: string; channel?: string }): void;
  checkForUpdates(): Promise<unknown>;
  on(event: 'update-downloaded', listener: (info: { version: string }) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  quitAndInstall(isSilent?: boolean, isForceRunAfter?: boolean): void;
}

export interface AppUpdatesOptions {
  updater: Updater;
  settings: { url: string; channel: 'latest' | 'beta' | 'alpha'; checkHours: number };
  /** The running version (app.getVersion()). */
  version: string;
  /** The running AppImage (`$APPIMAGE`): the file an update replaces. */
  appImage: string;
  /** Where the start record and the previous version's AppImage are kept (`$STATE_DIRECTORY`). */
  stateDir: string;
  /** The update gate now (src/host/update-gate.ts). */
  gate: () => { install: true } | { install: false; why: string };
  /** Takes no new customer from now on (the host's out-of-service screen) before the install quits the app. */
  stopTakingCards: (reason: string) => void;
  logger?: Logger;
  /** How often a downloaded update looks at the gate. */
  gateCheckMs?: number;
}

/** The start record's file in the state directory. */
export function startRecordFile(stateDir: string): StartRecordFile {
  return new StartRecordFile(join(stateDir, 'start-record.json'));
}

/**
 * At the very start of the packaged app (AppImage), before the terminal: counts a start of a version on trial, or
 * — when it has used its starts without READY — puts the previous version's AppImage back in place of the running one
 * and says so (the caller exits with the restart code; systemd starts the AppImage again, now the previous version).
 */
export function startOfVersion(stateDir: string, version: string, appImage: string): StartDecision {
  const file = startRecordFile(stateDir);
  const decision = decideStart(file.read(), version);
  if (decision.action === 'roll-back') {
    const temporary = `${appImage}.rollback`;
    copyFileSync(decision.to.path, temporary);
    renameSync(temporary, appImage);
  }
  file.write(decision.record);
  return decision;
}

/** Once the terminal is READY: a version on trial is confirmed. */
export function versionReady(stateDir: string, version: string): void {
  const file = startRecordFile(stateDir);
  file.write(confirmReady(file.read(), version));
}

/**
 * Updates of the packaged kiosk app (issue 15; README, Updates) with electron-updater: from a generic update server
 * (`updates.url`), on the configured channel (a `beta` terminal takes beta and stable releases, never a downgrade),
 * with the server's staged rollout (`stagingPercentage` in latest-linux.yml: electron-updater puts each device in a
 * fixed bucket, so raising the percentage only adds devices). Downloaded any time; installed only when the gate opens
 * (maintenance window, nothing in flight, empty offline queue, no customer), after the running AppImage was copied
 * aside and the new version put on trial (main/update-rollback.ts). A version that failed its trial here is not
 * installed again.
 */
export function startAppUpdates(options: AppUpdatesOptions): { stop(): void } {
  const { updater, settings, logger } = options;
  updater.setFeedURL({ provider: 'generic', url: settings.url, channel: settings.channel });
  updater.channel = settings.channel;
  // Setting the channel allows downgrades in electron-updater; a kiosk never goes back by an update.
  updater.allowDowngrade = false;
  updater.autoDownload = true;
  // Installed only through the gate, never because the app quit for another reason.
  updater.autoInstallOnAppQuit = false;
  let downloaded: string | undefined;
  let gateTimer: NodeJS.Timeout | undefined;
  const check = (): void => {
    void updater.checkForUpdates().catch((err: unknown) => logger?.warn({ err }, 'update check failed'));
  };
  const tryInstall = (): void => {
    if (downloaded === undefined) return;
    const gate = options.gate();
    if (!gate.install) {
      logger?.debug({ version: downloaded, why: gate.why }, 'update waits');
      return;
    }
    const file = startRecordFile(options.stateDir);
    const previous = join(options.stateDir, 'previous.AppImage');
    copyFileSync(options.appImage, previous);
    file.write(
      beforeInstall(
        file.read(),
        { version: options.version, path: previous },
        { version: downloaded, path: options.appImage },
      ),
    );
    logger?.info({ from: options.version, to: downloaded }, 'installing the update');
    options.stopTakingCards(`installing version ${downloaded}`);
    stop();
    updater.quitAndInstall(true, false);
  };
  updater.on('update-downloaded', (info) => {
    if (!acceptsUpdate(startRecordFile(options.stateDir).read(), info.version)) {
      logger?.warn({ version: info.version }, 'update refused: this version failed to start here before');
      return;
    }
    downloaded = info.version;
    logger?.info(
      { version: info.version },
      'update downloaded; installed in the maintenance window when idle',
    );
    gateTimer ??= setInterval(tryInstall, options.gateCheckMs ?? 30_000);
    gateTimer.unref();
  });
  updater.on('error', (err) => logger?.warn({ err }, 'update failed'));
  const checkTimer = setInterval(check, settings.checkHours * 3_600_000);
  checkTimer.unref();
  check();
  function stop(): void {
    clearInterval(checkTimer);
    if (gateTimer) clearInterval(gateTimer);
  }
  return { stop };
}
