import { readFile } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config/index.js';
import { createLogger, losingLinesWhenBroken, type Logger } from '../src/log/index.js';
import type { TerminalApi } from '../src/host/api.js';
import { buildRenderer, repositoryRoot } from '../src/host/bridge/build-renderer.js';
import { lookupStatic } from '../src/host/bridge/static-files.js';
import { openedLines, openTerminalHost, type TerminalHost } from '../src/host/terminal-host.js';
import { closedWithin, STOP_LIMIT_MS, stopTakingCustomers } from '../src/host/stopping.js';
import { maintenanceWindowOf } from '../src/host/daily-restart.js';
import { startFleetLink } from '../src/host/fleet-terminal.js';
import { startKioskService, startupProgress } from '../src/host/kiosk-service.js';
import { updateInstallGate } from '../src/host/update-gate.js';
import { startAppUpdates, startOfVersion, versionReady, type Updater } from './app-updates.js';
import { registerTerminalIpc } from './ipc.js';
import { buildPreload } from './preload-build.js';
import { RendererRecovery } from './renderer-recovery.js';
import { APP_HOST, APP_SCHEME, APP_URL, isAppUrl, windowOptions, withSecurityHeaders } from './security.js';

/** A TerminalHost as the Electron shell needs it: the API, going out of service as it stops, an orderly shutdown. */
export type ElectronHost = TerminalApi &
  Pick<TerminalHost, 'status' | 'outOfService'> & {
    /** Starts the terminal (recovery of the journal); the window shows it meanwhile. */
    begin(): Promise<void>;
    close(): Promise<void>;
  };

export interface ElectronOptions {
  /** The built renderer (dist/renderer). */
  staticDir: string;
  /** The bundled preload (dist/main/preload.cjs). */
  preload: string;
  /** Kiosk mode (default): full screen, locked. */
  kiosk?: boolean;
  /** Full screen without kiosk lock. */
  fullscreen?: boolean;
  logger?: Logger;
  /**
   * Started once the window exists and the terminal has started: the kiosk service (health loop with the renderer's
   * last sign of life, daily restart). `restart` closes the window and the terminal and exits with the restart code
   * (75).
   */
  service?: (
    uiAliveMs: () => number | undefined,
    restart: (reason: string) => void,
  ) => Promise<{ close(): Promise<void> }>;
  /**
   * Runs once the window is closed, after the service (when it ran) and before the host closes, however the start
   * ended: before the terminal was ready, or after.
   */
  closing?: (started: boolean) => Promise<void>;
}

/** The exit code of a restart the terminal asks for itself (src/cli/commands/start.ts, EXIT_RESTART). */
const EXIT_RESTART = 75;

/**
 * Runs the kiosk window against `host` inside Electron's main process (DESIGN.md, Runtime shape): a hardened
 * BrowserWindow (main/security.ts) showing the renderer from the privileged `app://renderer/` scheme, TerminalApi on
 * IPC (main/ipc.ts), no navigation, no new windows, no permissions. Resolves when the app quits; the host is closed
 * before that.
 */
export async function runElectron(host: ElectronHost, options: ElectronOptions): Promise<void> {
  const { app, BrowserWindow, ipcMain, protocol, session } = await import('electron');
  const logger = options.logger;
  app.enableSandbox();
  protocol.registerSchemesAsPrivileged([
    {
      scheme: APP_SCHEME,
      privileges: { standard: true, secure: true, supportFetchAPI: false, corsEnabled: false },
    },
  ]);
  await app.whenReady();

  const root = options.staticDir;
  protocol.handle(APP_SCHEME, async (request) => {
    const url = new URL(request.url);
    if (url.host !== APP_HOST || request.method !== 'GET') return new Response('Not found', { status: 404 });
    const found = await lookupStatic(root, url.pathname);
    if (found.kind !== 'file') return new Response('Not found', { status: 404 });
    return new Response(await readFile(found.path), {
      headers: Object.entries(withSecurityHeaders({ 'Content-Type': found.contentType })).map(
        ([name, values]) => [name, values.join(', ')] as [string, string],
      ),
    });
  });

  const ses = session.defaultSession;
  ses.webRequest.onHeadersReceived((details, callback) =>
    callback({ responseHeaders: withSecurityHeaders(details.responseHeaders) }),
  );
  ses.setPermissionRequestHandler((_wc, _permission, callback) => callback(false));
  ses.setPermissionCheckHandler(() => false);

  app.on('web-contents-created', (_event, contents) => {
    contents.on('will-navigate', (event, url) => {
      if (!isAppUrl(url)) event.preventDefault();
    });
    contents.on('will-redirect', (event, url) => {
      if (!isAppUrl(url)) event.preventDefault();
    });
    contents.on('will-attach-webview', (event) => event.preventDefault());
    contents.setWindowOpenHandler(() => ({ action: 'deny' }));
  });

  const win = new BrowserWindow(
    windowOptions({
      preload: options.preload,
      kiosk: options.kiosk ?? true,
      fullscreen: options.fullscreen ?? false,
    }),
  );
  const contents = win.webContents;
  const dispose = registerTerminalIpc(
    ipcMain,
    host,
    {
      send: (channel, snapshot) => contents.send(channel, snapshot),
      isDestroyed: () => contents.isDestroyed(),
      onPageGone: (listener) => {
        contents.on('did-start-loading', listener);
        contents.on('render-process-gone', listener);
      },
    },
    isAppUrl,
  );
  win.once('ready-to-show', () => win.show());
  // A renderer that dies or hangs is loaded again (main/renderer-recovery.ts); its probes feed the UI health check.
  const recovery = new RendererRecovery(win, {
    url: APP_URL,
    log: (message, details) => logger?.error(details, message),
  }).start();
  let exitCode = 0;
  let quit = false;
  // However the window closes (a restart asked for, SIGTERM quitting the app, the window closed): no new customer from
  // then on, while the service manager is told and the fleet link and the terminal close (src/host/stopping.ts).
  let stopping = 'stopping';
  win.on('close', () => stopTakingCustomers(host, stopping));
  // A quit of the app — app.quit(), and Electron's own answer to SIGTERM, SIGINT or SIGHUP (`systemctl stop`) — closes
  // the window without `window-all-closed` and ends the process: the terminal would never be closed, what is in flight
  // neither finished nor journaled. Until the terminal is closed a quit is turned into closing the window, which leads
  // to the orderly close below; the quit that ends it goes through.
  let closedDown = false;
  app.on('before-quit', (event) => {
    if (closedDown) return;
    event.preventDefault();
    stopTakingCustomers(host, stopping);
    if (!win.isDestroyed()) win.close();
  });
  const closed = new Promise<void>((resolve) => {
    app.once('window-all-closed', () => {
      quit = true;
      stopTakingCustomers(host, stopping);
      resolve();
    });
    void win.loadURL(APP_URL);
  });
  // The window shows the terminal starting, and checking earlier payments, while the journal is recovered; closed
  // meanwhile, the terminal is closed below (what recovery did not resolve waits for the next start).
  await Promise.race([host.begin(), closed]);
  const service = quit
    ? undefined
    : await options.service?.(
        () => recovery.lastAliveMs,
        (reason) => {
          logger?.info({ reason }, 'restarting the terminal');
          exitCode = EXIT_RESTART;
          stopping = `restarting: ${reason}`;
          stopTakingCustomers(host, stopping);
          if (!win.isDestroyed()) win.close();
        },
      );

  await closed;
  recovery.stop();
  const closing = (async () => {
    await service?.close();
    await options.closing?.(service !== undefined);
    dispose();
    await host.close();
  })();
  // Bounded, before the service manager's kill (src/host/stopping.ts): what is still out is the next start's. A step
  // that failed in time fails the run, as before.
  if (await closedWithin(closing)) await closing;
  else
    logger?.error(
      { limitMs: STOP_LIMIT_MS },
      "the stop waited its limit: requests still out are left to the next start's recovery",
    );
  closedDown = true;
  if (exitCode !== 0) app.exit(exitCode);
  else app.quit();
}

/** electron-updater's updater (a CommonJS module: its exports may sit on the default export). */
async function loadUpdater(): Promise<Updater> {
  const mod = (await import('electron-updater')) as unknown as {
    autoUpdater?: Updater;
    default?: { autoUpdater: Updater };
  };
  const updater = mod.autoUpdater ?? mod.default?.autoUpdater;
  if (!updater) throw new Error('electron-updater has no autoUpdater');
  return updater;
}

/**
 * The Electron entry (`electron dist/main/main.js`, launched by `parking-terminal start`): builds a TerminalHost from
 * the configuration named by PARKING_TERMINAL_CONFIG (embedded defaults when empty) and runs the window.
 * PARKING_TERMINAL_KIOSK=0 opens a normal window instead of kiosk mode. `stdout` and `stderr` are the process's own
 * (those `start` gave it, the service's journal under systemd), whose reader may go away: their lines are lost then,
 * and the shell goes on.
 */
export async function electronEntry(
  stdout: Writable = process.stdout,
  stderr: Writable = process.stderr,
): Promise<void> {
  losingLinesWhenBroken(stdout, stderr);
  const configFile = process.env.PARKING_TERMINAL_CONFIG || undefined;
  const config = loadConfig(configFile);
  const logger = createLogger({
    level: config.log.level,
    ...(config.log.file ? { destination: config.log.file } : {}),
  });
  // From the sources or from dist/main/main.js in a checkout; in a packaged app (no sources) the app directory,
  // where dist/renderer and dist/main/preload.cjs were built before packaging.
  let root: string;
  try {
    root = repositoryRoot();
  } catch {
    root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
  }
  // A packaged AppImage under the service (README, Updates): a version on trial that keeps failing to reach READY
  // gives way to the previous one before anything else runs.
  const { app } = await import('electron');
  const version = app.getVersion();
  const appImage = process.env.APPIMAGE || undefined;
  const stateDir = process.env.STATE_DIRECTORY?.split(':')[0] ?? process.cwd();
  if (appImage) {
    const decision = startOfVersion(stateDir, version, appImage);
    if (decision.action === 'roll-back') {
      logger.error(
        { reason: decision.reason, to: decision.to.version },
        'rolling back to the previous version',
      );
      logger.flush();
      app.exit(EXIT_RESTART);
      return;
    }
  }
  const [staticDir, preload] = await Promise.all([buildRenderer({ root }), buildPreload(root)]);
  // Opened, not started: the window shows it while it recovers the journal (runElectron starts it).
  const host = await openTerminalHost(config, { logger, cwd: process.cwd() });
  // As `start --headless` prints them (the operator PIN generated for this start is shown nowhere else): stdout is
  // the one `parking-terminal start` gave this process, the service's journal under systemd — the PIN is printed on a
  // terminal only, and otherwise written to terminal.generatedPinFile.
  const opened = openedLines(host, {
    terminal: (stdout as { isTTY?: boolean }).isTTY === true,
    generatedPinFile: config.terminal.generatedPinFile,
    cwd: process.cwd(),
    logger,
  });
  for (const line of opened.lines) stdout.write(`${line}\n`);
  // The process boundary: an error nothing else caught is logged and puts the terminal out of service (no new card,
  // the journal consistent) — never a silent death of the kiosk.
  const fault = (origin: string) => (err: unknown) => {
    logger.fatal({ err, origin }, 'unexpected error: the terminal goes out of service');
    host.outOfService(`unexpected error (${origin})`);
  };
  process.on('unhandledRejection', fault('unhandledRejection'));
  process.on('uncaughtException', fault('uncaughtException'));
  // The fleet link, as `parking-terminal start --headless` runs it: from before the recovery, so that the fleet reads
  // the terminal as starting. A restart it asks for closes the window and the terminal; one asked for before the kiosk
  // service runs (the fleet waits for the terminal to be idle, so hardly ever) is carried out once it does.
  let restartAsked: string | undefined;
  let restartWindow = (reason: string): void => {
    restartAsked = reason;
  };
  const fleet = startFleetLink(host, {
    configFile,
    cwd: process.cwd(),
    logger,
    restart: (reason) => restartWindow(reason),
  });
  const kiosk = process.env.PARKING_TERMINAL_KIOSK !== '0';
  // Started now (runElectron waits for it, and a failure is its): the window shows the recovery as it goes. Under
  // systemd, until the terminal is ready: why not (STATUS), and the start timeout extended while recovery runs.
  host.begin().catch(() => undefined);
  const progress = startupProgress(host, { logger });
  await runElectron(host, {
    staticDir,
    preload,
    kiosk,
    logger,
    // The fleet link and the start's progress end however the window closed, before the terminal closes; the PIN
    // generated for this start is withdrawn then (runElectron ends the process once the terminal is closed).
    closing: async (started) => {
      await progress.stop(!started);
      await fleet?.close().catch((err: unknown) => logger.error({ err }, 'closing the fleet link failed'));
      opened.pinFile?.withdraw();
    },
    service: async (uiAliveMs, restart) => {
      await progress.stop(false);
      restartWindow = restart;
      if (restartAsked !== undefined) restart(restartAsked);
      const kiosk = await startKioskService(host, {
        uiAliveMs,
        restart,
        ...(fleet ? { terminal: fleet.terminal } : {}),
        configFile,
        cwd: process.cwd(),
        logger,
      });
      if (appImage) versionReady(stateDir, version);
      const updates =
        config.updates && appImage
          ? startAppUpdates({
              updater: await loadUpdater(),
              settings: config.updates,
              version,
              appImage,
              stateDir,
              gate: () =>
                updateInstallGate({
                  now: new Date(),
                  window: maintenanceWindowOf(config),
                  timeZone: config.terminal.timezone,
                  health: kiosk.terminal.health(),
                  recoveryRunning: host.status().recovery.running,
                }),
              stopTakingCards: (reason) => host.outOfService(reason),
              logger: logger.child({ component: 'updates' }),
            })
          : undefined;
      return {
        close: async () => {
          updates?.stop();
          await kiosk.close();
        },
      };
    },
  });
}

if (process.versions.electron !== undefined && process.type === 'browser') {
  electronEntry().catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}
