import type { Config } from '../config/index.js';
import { fleetFilesResolved } from '../config/secret-file.js';
import {
  FleetLink,
  readFleetKey,
  type CommandOutcome,
  type FleetEvent,
  type FleetKey,
  type FleetTerminal,
  type ReportedHealth,
} from '../fleet/index.js';
import type { Logger } from '../log/index.js';
import { appVersion } from './app-version.js';

/**
 * A terminal waiting out of service for its refused configuration, as the fleet link sees it (src/fleet/terminal.ts):
 * no journal, reader or gateway client exists behind it. Its heartbeat says out of service with the refusal, and
 * null for every count it cannot know; it announces itself out of service once (and again when the refusal changes);
 * and it carries out no command — each one whose signature verifies is answered `CONFIG_REFUSED`, unclaimed: at most
 * once needs the command's id in the journal, which this state does not open. Its audit records are log lines only,
 * for the same reason.
 */
export class RefusedFleetTerminal implements FleetTerminal {
  private readonly version = appVersion();
  private readonly listeners = new Set<(event: FleetEvent) => void>();

  constructor(
    readonly terminalId: string,
    private readonly model: string,
    private reason: string,
    private readonly logger: Logger,
    /** What a refused command is told, when the terminal waits for something else than its configuration file. */
    private readonly commandsMessage?: string,
  ) {}

  /** The refusal changed (the file edited, still refused): the heartbeat says the new one, and an event tells it. */
  refused(reason: string): void {
    if (reason === this.reason) return;
    this.reason = reason;
    for (const listener of this.listeners) listener({ type: 'out-of-service', reason });
  }

  health(): ReportedHealth {
    return {
      appVersion: this.version,
      model: this.model,
      inService: false,
      outOfService: this.reason,
      customerSession: false,
      reader: { kind: 'none', health: 'none' },
      gateway: { online: null, clockSkewSeconds: null },
      offline: { depth: null, totals: [], oldestAgeSeconds: null, declinedAfterForward: null },
      openAuthorizations: null,
      journal: { unknown: null, inFlight: null },
      diskFreeMegabytes: null,
    };
  }

  /** The listener hears at once that the terminal is out of service, and why (published when the link connects). */
  onEvent(listener: (event: FleetEvent) => void): () => void {
    this.listeners.add(listener);
    listener({ type: 'out-of-service', reason: this.reason });
    return () => this.listeners.delete(listener);
  }

  commandsRefused(): { code: 'CONFIG_REFUSED'; message: string } {
    return {
      code: 'CONFIG_REFUSED',
      message:
        this.commandsMessage ??
        `the terminal is out of service, its ${this.reason}; no command is carried out until the configuration ` +
          'file on the terminal is corrected (the terminal then starts, and reports as usual)',
    };
  }

  claimCommand(): never {
    throw new Error('a terminal whose configuration is refused claims no command');
  }

  beginCommand(): never {
    throw new Error('a terminal whose configuration is refused claims no command');
  }

  finishCommand(): void {
    throw new Error('a terminal whose configuration is refused claims no command');
  }

  execute(): Promise<CommandOutcome> {
    return Promise.resolve({
      ok: false,
      code: 'CONFIG_REFUSED',
      message: this.commandsRefused().message,
    });
  }

  audit(entry: Parameters<FleetTerminal['audit']>[0]): void {
    // No audit log: it lives in the journal database, which this state leaves closed.
    this.logger.info({ ...entry }, 'fleet command (configuration refused: not in the audit log)');
  }
}

/** The fleet link of a terminal waiting for its refused configuration. */
export interface RefusedFleetLink {
  link: FleetLink;
  terminal: RefusedFleetTerminal;
  /** Closes the link cleanly (`offline` published, no last will): the terminal's own link follows at once. */
  close(): Promise<void>;
}

/**
 * The fleet link of a terminal whose configuration file is refused, when the file's `fleet` section is valid on its
 * own: the same link as a running terminal's ({@link FleetLink}: client id, topics, TLS, credentials, reconnection,
 * last will, the fleet key's signature checks), over a {@link RefusedFleetTerminal}. `terminal` is the file's terminal
 * section when valid on its own (its id names the topics). A fleet key that cannot be read leaves the link without
 * commands (`COMMANDS_DISABLED`, as a link without a key); a broker's file that cannot be read (the CA, the client
 * key, the credentials) leaves no link, logged. Undefined without a link.
 */
export function startRefusedFleetLink(options: {
  fleet: NonNullable<Config['fleet']> | undefined;
  terminal: Config['terminal'] | undefined;
  reason: string;
  /** What a refused command is told, when the terminal waits for something else than its configuration file. */
  commandsMessage?: string;
  cwd: string;
  logger: Logger;
  now?: () => Date;
}): RefusedFleetLink | undefined {
  const { terminal: section, logger } = options;
  if (options.fleet === undefined || section === undefined) return undefined;
  const log = logger.child({ component: 'fleet' });
  const { commandKeyFile, ...config } = fleetFilesResolved(options.fleet, options.cwd);
  let key: FleetKey | undefined;
  if (commandKeyFile !== undefined)
    try {
      key = readFleetKey(commandKeyFile);
    } catch (err) {
      log.error(
        { err },
        'fleet key unusable: the fleet link takes no command while the configuration is refused',
      );
    }
  const terminal = new RefusedFleetTerminal(
    section.id,
    section.model,
    options.reason,
    log,
    options.commandsMessage,
  );
  try {
    const link = FleetLink.start({
      config,
      terminal,
      logger: log,
      ...(key ? { key } : {}),
      ...(options.now ? { now: options.now } : {}),
    });
    return { link, terminal, close: () => link.close() };
  } catch (err) {
    log.error({ err }, 'no fleet link while the configuration is refused');
    return undefined;
  }
}
