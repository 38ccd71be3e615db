import { spawn } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { usableSectionsOf, type Config } from '../../config/index.js';
import { createLogger, redactString, type Logger } from '../../log/index.js';
import { newBridgeAccess } from '../../host/bridge/access.js';
import { buildRenderer } from '../../host/bridge/build-renderer.js';
import { startBridge, type Bridge } from '../../host/bridge/server.js';
import { printedScreenUrl, ScreenUrlFile } from '../../host/bridge/url-file.js';
import type { StartSecretFile } from '../../host/start-secret-file.js';
import { openedLines, openTerminalHost, type TerminalHost } from '../../host/terminal-host.js';
import { startFleetLink } from '../../host/fleet-terminal.js';
import { startRefusedFleetLink } from '../../host/refused-fleet.js';
import { checkStartConfiguration, refusalOf, waitOutOfService } from '../../host/refused-configuration.js';
import { leftInFlight } from '../../host/status-board.js';
import { closedWithin, STOP_LIMIT_MS, stopTakingCustomers } from '../../host/stopping.js';
import {
  notReadyProgress,
  startKioskService,
  startupProgress,
  type KioskService,
} from '../../host/kiosk-service.js';
import { countStart, START_STEADY_MS, type CountedStart } from '../../host/start-loop.js';
import { electronBinary } from '../../../main/electron-available.js';
import { parseCommandArgs, parsePort } from '../args.js';
import { EXIT_FINDINGS, EXIT_OK, type Command } from '../output.js';

/**
 * The exit code of a restart the terminal asked for itself (a fleet `restart` in the maintenance window, a new
 * configuration applied): EX_TEMPFAIL of sysexits.h. The service manager starts the terminal again on it (systemd:
 * `Restart=always`, or `RestartForceExitStatus=75`).
 */
export const EXIT_RESTART = 75;

/** A start that failed on something that may pass by itself: its error document, exit 1 (the service restarts it). */
export class StartError extends Error {
  override readonly name = 'StartError';
  constructor(
    readonly code: 'ELECTRON_SPAWN',
    message: string,
  ) {
    super(message);
  }
}

/** Resolves when `signal` aborts (at once when it already has). */
function aborted(signal: AbortSignal): Promise<void> {
  return new Promise<void>((done) => {
    if (signal.aborted) done();
    else signal.addEventListener('abort', () => done(), { once: true });
  });
}

/** A one-line reason for the operator's status bar, with anything that looks like card data masked. */
function faultReason(error: unknown, origin: string): string {
  const e = error as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' ? `${e.code}: ` : '';
  const message = typeof e?.message === 'string' ? e.message : String(error);
  return redactString(`unexpected error (${origin}): ${code}${message}`).slice(0, 300);
}

/** Closes what was started, in order, each step on its own: a failing step is logged and does not skip the next. */
async function closeAll(
  logger: Logger,
  host: TerminalHost | undefined,
  bridge: Bridge | undefined,
): Promise<void> {
  // The terminal first (finishing or journaling what is in flight) while the screen can still show how it ended.
  if (host) await host.close().catch((err: unknown) => logger.error({ err }, 'closing the terminal failed'));
  if (bridge)
    await bridge.close().catch((err: unknown) => logger.error({ err }, 'closing the bridge failed'));
}

const command: Command = {
  name: 'start',
  summary: 'run the terminal (Electron kiosk window, or headless UI on 127.0.0.1)',
  usage: `parking-terminal start [--config FILE] [--headless] [--port N]
  --config FILE  configuration (JSON or YAML); embedded defaults otherwise
  --headless     serve the UI on 127.0.0.1 for any browser instead of opening the Electron window
  --port N       port of the headless UI (default bridge.port of the configuration; 0 = any free port)
Prints the URL of the screen and, when none is configured, the operator PIN generated for this start. The URL
carries this start's secret on a terminal only; elsewhere (a pipe, a file, systemd's journal, which others may read)
it is printed without it, naming bridge.urlFile, the file the whole URL is written to (mode 0600, replaced atomically
at each start, removed at the stop) for the kiosk browser's launcher. The generated PIN (it opens refunds, voids and
releases of holds) is printed on a terminal only too: elsewhere the line names terminal.generatedPinFile, the file it
is written to (mode 0600, replaced atomically at each start, removed at the stop), or says how to get one. Journal
entries a last run left in flight are resolved before the first card (the screen is served
meanwhile, and says so); the "ready:" line comes once the terminal takes cards. A configuration that cannot be used
(a secret or PIN file missing, or readable by group or others) prints {"error":{code,message,key,file}} and exits 2
with nothing left running. A configuration file whose content is refused (an unknown key, a bad value, not JSON or
YAML, empty, missing) puts the terminal out of service instead: the out-of-service screen is served (headless: the
printed line "out of service: configuration refused (CODE KEY): …" carries its URL, its secret as above), no reader is opened, the
journal is not touched (with its fleet and terminal sections valid, the fleet link reports it out of service and
answers every command CONFIG_REFUSED); the file is watched, and once it passes these checks the terminal starts as
above. SIGINT/SIGTERM stops the terminal (what is in flight is finished or journaled first, waited for at most
${STOP_LIMIT_MS / 1000} s: what is still out then is left to the next start's recovery, logged) and exits 0; a second signal forces the exit. An unexpected error puts the terminal out of service (logged); it then
exits 1 when stopped. With \`fleet\` configured it reports to the operator's MQTT broker and takes signed commands;
a restart asked by the fleet exits ${EXIT_RESTART} (the service manager starts it again). Under a service manager
(NOTIFY_SOCKET), a start after failed ones (ended before ten minutes ready) first waits, 10 s doubling up to five
minutes, and says so (start-loop.json in the working directory).`,
  endsProcess: true,
  async run(args, io) {
    const { values } = parseCommandArgs(
      args,
      { config: { type: 'string' }, headless: { type: 'boolean' }, port: { type: 'string' } },
      false,
    );
    const configFile = values.config ? resolve(io.cwd, values.config) : undefined;
    const givenPort = parsePort(values.port, '--port');
    const out = (line: string): void => void io.stdout.write(`${line}\n`);
    // The screen's URL and the operator PIN generated for this start are printed on a terminal only
    // (src/host/start-secret-file.ts, printedSecret).
    const toTerminal = (io.stdout as { isTTY?: boolean }).isTTY === true;
    // One secret for this start's screen: the out-of-service screen of a refused configuration and then the terminal's
    // (src/host/bridge/access.ts, BridgeAccess).
    const access = newBridgeAccess();
    // Checked before anything listens or opens the journal: the schema, every secret file (a wrong one stops the
    // start here, exit 2) and every text the receipts print (one the printer cannot print would come out as "?").
    let config: Config;
    try {
      config = checkStartConfiguration(configFile, io.cwd);
    } catch (e) {
      const refusal = refusalOf(e);
      if (refusal === undefined || configFile === undefined) throw e;
      // The file's own content refused: out of service until it is corrected (on the kiosk or by the fleet), never
      // an exit the service manager would leave failed, out of the fleet's reach, with nothing on the screen.
      // The file's log section, when it is valid on its own: the refusal is logged where the operator reads the log.
      const log = usableSectionsOf(configFile).log;
      const logger = createLogger({
        level: log?.level ?? 'info',
        ...(log?.file ? { destination: log.file } : {}),
      });
      let usable: Config | undefined;
      let screenUrl: ScreenUrlFile | undefined;
      try {
        usable = await waitOutOfService({
          configFile,
          cwd: io.cwd,
          refusal,
          port: givenPort,
          staticDir: await buildRenderer(),
          access,
          signal: io.signal,
          logger,
          out,
          // The out-of-service screen for the kiosk browser too, when the file's bridge section is valid on its own.
          serving: (url, sections) => {
            screenUrl = ScreenUrlFile.of(sections.bridge?.urlFile, io.cwd, logger);
            screenUrl?.publish(url);
            return printedScreenUrl(url, { terminal: toTerminal, urlFile: screenUrl });
          },
        });
      } finally {
        // Its screen is closed: a terminal started now writes its own.
        screenUrl?.withdraw();
        logger.flush();
      }
      // Stopped, or stopped as the refused state closed (its fleet link, its screen): the terminal does not start.
      if (usable === undefined || io.signal.aborted) return EXIT_OK;
      config = usable;
    }
    const port = givenPort ?? config.bridge.port;

    const electron = values.headless ? undefined : electronBinary();
    if (!values.headless && electron) {
      // The Electron main process builds its own TerminalHost from the same configuration (main/main.ts).
      const child = spawn(electron, [resolve(import.meta.dirname, '../../../dist/main/main.js')], {
        stdio: 'inherit',
        env: { ...process.env, PARKING_TERMINAL_CONFIG: configFile ?? '' },
      });
      // Stopping `start` stops the window, with SIGHUP — not the signal `start` got: the child usually gets that one
      // itself (systemd's default KillMode=control-group sends SIGTERM to every process of the unit; a terminal's
      // Ctrl-C, SIGINT to the foreground group), and Chromium's browser process shuts down gracefully on the first
      // SIGINT, SIGTERM or SIGHUP each, then dies of that signal's default action: a second SIGTERM would kill it with
      // a payment in flight. A SIGHUP comes along with neither stop.
      io.signal.addEventListener('abort', () => child.kill('SIGHUP'), { once: true });
      // Its exit code; one that died of a signal (a crash, the OOM killer) exits with the shell's code for it, as a
      // forced exit does: not 0, a clean stop. A binary that cannot be run (not executable, a noexec mount: EACCES)
      // is reported as an 'error' event, with no 'exit': the start's error document, exit 1 — never an uncaught
      // exception's stack trace.
      return await new Promise<number>((done, fail) => {
        child.once('error', (e: NodeJS.ErrnoException) =>
          fail(
            new StartError('ELECTRON_SPAWN', `cannot run Electron at ${electron}: ${e.code ?? e.message}`),
          ),
        );
        child.once('exit', (code, signal) =>
          done(code ?? (signal ? 128 + osConstants.signals[signal] : EXIT_FINDINGS)),
        );
      });
    }
    if (!values.headless)
      out('Electron is not installed on this machine: running headless (UI served on 127.0.0.1).');

    const logger = createLogger({
      level: config.log.level,
      ...(config.log.file ? { destination: config.log.file } : {}),
    });
    let host: TerminalHost | undefined;
    let bridge: Bridge | undefined;
    const screenUrl = ScreenUrlFile.of(config.bridge.urlFile, io.cwd, logger);
    // The operator PIN generated for this start, for an operator who cannot read standard output (openedLines).
    let pinFile: StartSecretFile | undefined;
    let fleet: ReturnType<typeof startFleetLink> = undefined;
    let service: KioskService | undefined;
    let restartAsked: (reason: string) => void = () => undefined;
    const restart = new Promise<string>((r) => (restartAsked = r));
    const faults: string[] = [];
    // The process boundary (issue 11, bug 7): an error nothing else caught is logged and puts the terminal out of
    // service, so that no new card is taken while recovery keeps the journal consistent — never a silent death.
    const removeFaultHandler = io.process?.onUnexpectedError((error, origin) => {
      const reason = faultReason(error, origin);
      faults.push(reason);
      logger.fatal({ err: error, origin }, 'unexpected error: the terminal goes out of service');
      // No new card is accepted; what is in flight finishes and is journaled, recovery keeps resolving.
      host?.outOfService(reason);
    });
    // Under a service manager, which starts the terminal again however it ends: a terminal whose last starts failed
    // (ended before they had run ready for a while) waits before this one (src/host/start-loop.ts), and says why.
    const counted: CountedStart | undefined = process.env.NOTIFY_SOCKET
      ? countStart(io.cwd, logger)
      : undefined;
    let failed = false;
    let ready = false;
    let steady: NodeJS.Timeout | undefined;
    try {
      if (counted !== undefined && counted.backoffMs > 0) {
        const why =
          `restart loop: the last ${counted.failedBefore} start(s) failed; ` +
          `starting again in ${counted.backoffMs / 1000} s`;
        logger.warn({ failedStarts: counted.failedBefore, backoffMs: counted.backoffMs }, why);
        out(`Parking Terminal ${why}`);
        const waiting = notReadyProgress(() => why, { logger });
        // The fleet sees it too: the terminal's own link, out of service with the reason, carrying out no command
        // (no journal is open to claim its id in), as while a configuration file is refused.
        const link = startRefusedFleetLink({
          fleet: config.fleet,
          terminal: config.terminal,
          reason: why,
          commandsMessage: `the terminal is out of service, ${why}; no command is carried out until it has started`,
          cwd: io.cwd,
          logger,
        });
        const waited = await Promise.race([
          sleep(counted.backoffMs, true, { signal: io.signal }).catch(() => false),
          aborted(io.signal).then(() => false),
        ]);
        await link?.close().catch((err: unknown) => logger.error({ err }, 'closing the fleet link failed'));
        await waiting.stop(!waited);
        if (!waited) return EXIT_OK;
      }
      host = await openTerminalHost(config, { logger, cwd: io.cwd });
      // A fault during start-up, before the host existed, counts as well.
      const [early] = faults;
      if (early !== undefined) host.outOfService(early);
      if (io.signal.aborted) return EXIT_OK;
      const staticDir = await buildRenderer();
      // The screen and operator mode are served before the start: while recovery resolves what the last run left in
      // flight (money safety rule 3; it waits for the gateway as long as it must), the customer reads that the
      // terminal is checking earlier payments, and the operator can sign in and look.
      bridge = await startBridge(host, { port, staticDir, logger, access });
      // This start's URL for the kiosk browser's launcher (bridge.urlFile): the secret is new at every start.
      screenUrl?.publish(bridge.url);
      const shownUrl = printedScreenUrl(bridge.url, { terminal: toTerminal, urlFile: screenUrl });
      const opened = openedLines(host, {
        terminal: toTerminal,
        generatedPinFile: config.terminal.generatedPinFile,
        cwd: io.cwd,
        logger,
      });
      pinFile = opened.pinFile;
      for (const line of opened.lines) out(line);
      // The fleet link (src/fleet/): connects in the background; the terminal works the same without the broker.
      // Started before the recovery too: the fleet reads the terminal as starting, not as gone.
      fleet = startFleetLink(host, {
        configFile,
        cwd: io.cwd,
        logger,
        restart: (reason) => restartAsked(reason),
      });
      if (fleet && config.fleet) out(`Fleet link: ${new URL(config.fleet.url).host}`);
      const left = host.journal.inFlight().length;
      if (left > 0)
        out(
          `Parking Terminal (${config.terminal.model}) resolving ${leftInFlight(left)} before it takes a card: ` +
            shownUrl,
        );
      // Under systemd, until the terminal is ready: STATUS says why not, and the start timeout is extended while
      // recovery keeps going. Stopped, or a restart asked for, while recovery waits: the host's close ends the wait.
      const begun = host.begin().then(() => true);
      const progress = startupProgress(host, { logger });
      let started = false;
      try {
        started = await Promise.race([
          begun,
          aborted(io.signal).then(() => false),
          restart.then(() => false),
        ]);
      } finally {
        await progress.stop(!started);
      }
      if (started) {
        out(`Parking Terminal (${config.terminal.model}) ready: ${shownUrl}`);
        // Under systemd: READY=1 now (recovery has finished), the watchdog's health loop, the daily restart. Headless,
        // the UI is a browser outside this process: its check is the bridge serving (its server still listening).
        const served = bridge;
        service = await startKioskService(host, {
          uiAliveMs: () => served.lastAliveMs(),
          restart: (reason) => restartAsked(reason),
          ...(fleet ? { terminal: fleet.terminal } : {}),
          configFile,
          cwd: io.cwd,
          logger,
        });
        ready = true;
        if (counted !== undefined) steady = setTimeout(() => counted.good(), START_STEADY_MS).unref();
      }
      const restarting = await Promise.race([aborted(io.signal).then(() => undefined), restart]);
      // From here no new customer: telling the service manager and closing the fleet link take a while, and the
      // screen (a browser outside this process) is still served meanwhile; what is in flight finishes as usual.
      stopTakingCustomers(host, restarting !== undefined ? `restarting: ${restarting}` : 'stopping');
      if (restarting !== undefined) {
        logger.info({ reason: restarting }, 'restarting the terminal');
        return EXIT_RESTART;
      }
      logger.info('stopping the terminal');
      return faults.length > 0 ? EXIT_FINDINGS : EXIT_OK;
    } catch (e) {
      failed = true;
      logger.error({ err: e }, 'the terminal could not start');
      throw e;
    } finally {
      // Stopped by a signal or a restart asked for: a good start once it was ready, none before (an unexpected error
      // is a failed one, as is a start that dies).
      clearTimeout(steady);
      if (!failed && faults.length === 0) {
        if (ready) counted?.good();
        else counted?.stopped();
      }
      const closing = (async () => {
        await service
          ?.close()
          .catch((err: unknown) => logger.error({ err }, 'closing the service loop failed'));
        await fleet?.close().catch((err: unknown) => logger.error({ err }, 'closing the fleet link failed'));
        await closeAll(logger, host, bridge);
      })();
      // Bounded, before the service manager's kill (src/host/stopping.ts): what is still out is the next start's.
      if (!(await closedWithin(closing))) {
        logger.error(
          { limitMs: STOP_LIMIT_MS, requestsOut: host?.sender.inFlight },
          "the stop waited its limit: requests still out are left to the next start's recovery",
        );
        await bridge?.close().catch((err: unknown) => logger.error({ err }, 'closing the bridge failed'));
      }
      screenUrl?.withdraw();
      pinFile?.withdraw();
      removeFaultHandler?.();
      logger.flush();
    }
  },
};
export default command;
