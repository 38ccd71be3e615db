import { extname } from 'node:path';
import { ConfigError, loadConfig, parseConfig, usableSectionsOf, type Config } from '../config/index.js';
import { watchConfigFile } from '../config/file-watch.js';
import { assertConfiguredSecretFiles, SecretFileError } from '../config/secret-file.js';
import { resolveLocale, supportedLocale, translator, type SupportedLocale } from '../i18n/index.js';
import { redactString, type Logger } from '../log/index.js';
import type { CustomerApi, CustomerSnapshot, ParkingModel, Result, UserEvent } from './api.js';
import type { BridgeAccess } from './bridge/access.js';
import { startCustomerBridge, type Bridge } from './bridge/server.js';
import { notReadyProgress } from './kiosk-service.js';
import { assertReaderConfiguration } from './reader-configuration.js';
import { assertPrintableConfiguration } from './receipts.js';
import { startRefusedFleetLink, type RefusedFleetLink } from './refused-fleet.js';
import { outOfServiceScreen } from './screens.js';
import type { ServiceNotifier } from './systemd-notify.js';

/**
 * What the start checks of a configuration before anything listens or opens the journal — the one copy of that rule,
 * which `parking-terminal start` runs and runs again on a configuration that was refused: the schema (unknown keys,
 * bad values), every secret file (missing, or readable by group or others), every text the receipts print and the
 * simulated reader's card.
 */
export function checkStartConfiguration(configFile: string | undefined, cwd: string): Config {
  const config = loadConfig(configFile);
  assertConfiguredSecretFiles(config, cwd);
  assertPrintableConfiguration(config, configFile ?? '<embedded defaults>');
  assertReaderConfiguration(config, configFile ?? '<embedded defaults>');
  return config;
}

/** Why a configuration file was refused: the typed error's code, key and file. Never a value of the file. */
export interface ConfigurationRefusal {
  /**
   * The typed error's code: the file's own content refused (`ConfigError`), or, once that content passes, a secret
   * file it names that cannot be used (`SecretFileError`).
   */
  code: ConfigError['code'] | SecretFileError['code'];
  /** The dotted key at fault, when the error names one. */
  key?: string;
  file: string;
  /** The error's text (names the file and the key, and the schema's reason). */
  message: string;
}

/**
 * The refusal a terminal waits out of service for: the configuration file's own content refused (`ConfigError`: an
 * unknown key, a bad value, a file unreadable, not JSON or YAML, empty), which an edit of that file or a configuration
 * the fleet applies can correct. Anything else (a secret file, an error of another kind) is not one: undefined.
 */
export function refusalOf(error: unknown): ConfigurationRefusal | undefined {
  if (!(error instanceof ConfigError)) return undefined;
  return {
    code: error.code,
    ...(error.key !== undefined ? { key: error.key } : {}),
    file: error.file,
    message: redactString(error.code === 'CONFIG_SYNTAX' ? syntaxText(error) : error.message).slice(0, 500),
  };
}

/** A secret file the configuration names that cannot be used, as a refusal: its code, key and file (never its bytes). */
function secretFileRefusalOf(error: unknown): ConfigurationRefusal | undefined {
  if (!(error instanceof SecretFileError)) return undefined;
  return {
    code: error.code,
    key: error.key,
    file: error.file,
    message: redactString(error.message).slice(0, 500),
  };
}

/**
 * A file that does not parse, and where its parser stopped (YAML: line and column; JSON: the position) — not the
 * parser's own text, which quotes the file's lines around the fault (a credential in a URL, say).
 */
function syntaxText(error: ConfigError): string {
  const cause: unknown = error.cause;
  const yaml = (cause as { linePos?: { line: number; col: number }[] } | undefined)?.linePos?.[0];
  const json = cause instanceof Error ? / at position \d+/.exec(cause.message)?.[0] : undefined;
  const at = yaml ? ` at line ${yaml.line}, column ${yaml.col}` : (json ?? '');
  return `${error.file}: not valid ${extname(error.file) || 'JSON'}${at}`;
}

/** Why the terminal is out of service, as the fleet reads it (the heartbeat's `outOfService`, the event's reason). */
export function refusalReason(refusal: ConfigurationRefusal): string {
  return `configuration refused (${refusal.code}${refusal.key ? ` ${refusal.key}` : ''}): ${refusal.message}`;
}

/** The refusal in one line, for the log and the service manager's status. */
export function refusalText(refusal: ConfigurationRefusal): string {
  return `out of service: ${refusalReason(refusal)}`;
}

/**
 * The customer's side of a terminal whose configuration was refused: the out-of-service screen (the same screen and
 * texts as every other out-of-service state), in the customer's choice of the kiosk's languages. No reader exists
 * behind it: every payment event is refused OUT_OF_SERVICE, and operator mode is not there (no PIN was configured
 * that could be trusted).
 */
export class RefusedConfigurationScreen implements CustomerApi {
  private seq = 0;
  private language: SupportedLocale;
  private readonly listeners = new Set<(snapshot: CustomerSnapshot) => void>();

  constructor(
    terminalLocale: string,
    private readonly model: ParkingModel,
  ) {
    this.language = resolveLocale(terminalLocale);
  }

  private current(): CustomerSnapshot {
    return {
      seq: this.seq,
      model: this.model,
      locale: this.language,
      customer: outOfServiceScreen(this.language),
    };
  }

  snapshot(): Promise<Result<CustomerSnapshot>> {
    return Promise.resolve({ ok: true, value: this.current() });
  }

  send(event: UserEvent): Promise<Result<CustomerSnapshot>> {
    if (event.type === 'SET_LANGUAGE') {
      const locale = supportedLocale(event.locale);
      if (locale === undefined)
        return Promise.resolve({
          ok: false,
          error: { code: 'BAD_LOCALE', message: `no catalogue for locale ${event.locale}` },
        });
      this.language = locale;
      this.seq += 1;
      const snapshot = this.current();
      for (const listener of this.listeners) listener(snapshot);
      return Promise.resolve({ ok: true, value: snapshot });
    }
    return Promise.resolve({
      ok: false,
      error: {
        code: 'OUT_OF_SERVICE',
        message: 'the terminal is out of service: its configuration was refused',
        customerText: translator(this.language).t('label.refused.OUT_OF_SERVICE'),
      },
    });
  }

  operator(): Promise<Result<never>> {
    return Promise.resolve({
      ok: false,
      error: {
        code: 'OUT_OF_SERVICE',
        message: 'the terminal is out of service: its configuration was refused',
      },
    });
  }

  subscribe(listener: (snapshot: CustomerSnapshot) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** How often the configuration is checked again besides the file's watch: a watch that missed a change, or ended. */
export const REFUSED_RECHECK_MS = 60_000;

export interface RefusedStartOptions {
  /** The configuration file that was refused (a start without one runs on the embedded defaults, never refused). */
  configFile: string;
  cwd: string;
  refusal: ConfigurationRefusal;
  /** `--port`, when given; otherwise the file's `bridge.port` when that section is valid, else the default. */
  port: number | undefined;
  /** The built renderer the screen is served from. */
  staticDir: string;
  /** The bridge's secret and sessions of this start, which the terminal's own bridge keeps once it starts. */
  access?: BridgeAccess;
  signal: AbortSignal;
  logger: Logger;
  /** A line on standard output (the screen's URL). */
  out: (line: string) => void;
  /**
   * The screen's URL once it is served: published for the kiosk browser (the file's `bridge.urlFile`), and returned as
   * standard output may show it (src/cli/commands/start.ts; without its secret there). Absent: printed as it is.
   */
  serving?: (url: string, usable: Partial<Config>) => string;
  env?: NodeJS.ProcessEnv;
  notifier?: ServiceNotifier;
  debounceMs?: number;
  recheckMs?: number;
  /** The fleet link's clock (tests). */
  now?: () => Date;
}

/**
 * A start whose configuration file was refused waits here, out of service, instead of ending: the kiosk shows the
 * out-of-service screen in its languages (served like every screen, on the port the file asks for when that section
 * is valid), no reader is opened and the journal is not touched (recovery of what an earlier run left in flight runs
 * when the terminal really starts, before its first card: money safety rule 3), the refusal is logged and told to the
 * service manager (`STATUS=`, with the start timeout extended as during recovery, so that systemd neither kills nor
 * restarts it), and the file is watched (and checked again every {@link REFUSED_RECHECK_MS}). Resolves with the
 * configuration once the file passes the start's checks, or with undefined when `signal` aborts (stopped).
 *
 * The caller then starts the terminal in this same process rather than exiting for the service manager to start it:
 * that start is the ordinary one (recovery, then READY=1 and the watchdog), it works the same without a service
 * manager, and systemd — which has not had READY=1 yet — simply sees a start that took longer. An exit would need a
 * code systemd restarts on even from a start that never became ready, and a terminal run by hand would just end.
 */
export async function waitOutOfService(options: RefusedStartOptions): Promise<Config | undefined> {
  const { configFile, cwd, logger } = options;
  const defaults = parseConfig({});
  const usable = usableSectionsOf(configFile);
  const terminal = usable.terminal ?? defaults.terminal;
  let refusal = options.refusal;
  logger.error({ refusal }, refusalText(refusal));
  const screen = new RefusedConfigurationScreen(terminal.locale, terminal.model);
  const port = options.port ?? usable.bridge?.port ?? defaults.bridge.port;
  const progress = notReadyProgress(() => refusalText(refusal), {
    logger,
    ...(options.env ? { env: options.env } : {}),
    ...(options.notifier ? { notifier: options.notifier } : {}),
  });
  let bridge: Bridge | undefined;
  let fleet: RefusedFleetLink | undefined;
  let settle: (config: Config | undefined) => void = () => undefined;
  const settled = new Promise<Config | undefined>((r) => (settle = r));
  const check = (): void => {
    try {
      settle(checkStartConfiguration(configFile, cwd));
    } catch (e) {
      // The file corrected, but a secret file it names cannot be used (missing, readable by others): still refused,
      // and for that reason now — the log, the service manager and the fleet say so, not the refusal mended already.
      const next = refusalOf(e) ?? secretFileRefusalOf(e);
      if (next === undefined) {
        logger.error({ err: e }, 'the configuration is still refused');
        return;
      }
      if (next.message !== refusal.message) {
        refusal = next;
        logger.error({ refusal }, refusalText(refusal));
        progress.tell();
        fleet?.terminal.refused(refusalReason(refusal));
      }
    }
  };
  const watch = watchConfigFile(configFile, check, {
    ...(options.debounceMs !== undefined ? { debounceMs: options.debounceMs } : {}),
    failed: (err) =>
      logger.warn({ err }, 'the configuration file is no longer watched: checked every minute'),
  });
  // Through the watch, which acts on the file only once it reads the same twice: a file being written is not read
  // half-way by the minute's check either.
  const recheck = setInterval(() => watch.recheck(), options.recheckMs ?? REFUSED_RECHECK_MS);
  recheck.unref();
  const onAbort = (): void => settle(undefined);
  options.signal.addEventListener('abort', onAbort, { once: true });
  if (options.signal.aborted) settle(undefined);
  let config: Config | undefined;
  try {
    bridge = await startCustomerBridge(screen, {
      port,
      staticDir: options.staticDir,
      logger,
      ...(options.access ? { access: options.access } : {}),
    });
    const shown = options.serving?.(bridge.url, usable) ?? bridge.url;
    options.out(`Parking Terminal ${refusalText(refusal)}: ${shown}`);
    // The fleet hears of it, when the file's fleet and terminal sections are each valid on their own: the terminal's
    // own link (same client id, topics, broker and fleet key), out of service with the refusal, executing nothing.
    fleet = startRefusedFleetLink({
      fleet: usable.fleet,
      terminal: usable.terminal,
      reason: refusalReason(refusal),
      cwd,
      logger,
      ...(options.now ? { now: options.now } : {}),
    });
    config = await settled;
    if (config) logger.info({ file: configFile }, 'the configuration is usable: starting the terminal');
    return config;
  } finally {
    options.signal.removeEventListener('abort', onAbort);
    watch.close();
    clearInterval(recheck);
    // Closed cleanly before the terminal's own link opens: `offline` published (no last will), then that link's
    // `online` as it connects with the same client id and session.
    await fleet?.close().catch((err: unknown) => logger.error({ err }, 'closing the fleet link failed'));
    await progress.stop(config === undefined);
    await bridge?.close();
  }
}
