import { statfsSync } from 'node:fs';
import { z } from 'zod';
import { writePrivateFileDurably } from '../config/durable-file.js';
import { appVersion } from './app-version.js';
import { dirname, extname, resolve } from 'node:path';
import { stringify as toYaml } from 'yaml';
import { ConfigError, parseConfig, type Config } from '../config/index.js';
import {
  assertConfiguredSecretFiles,
  SecretFileError,
  withSecretFilesResolved,
} from '../config/secret-file.js';
import {
  checkFleetFiles,
  checkFleetMove,
  FleetLink,
  inMaintenanceWindow,
  REPLY_MAX_BYTES,
  unknownArguments,
  type CommandOutcome,
  type FleetCommandName,
  type FleetEvent,
  type FleetTerminal,
  type TerminalHealth,
} from '../fleet/index.js';
import { ConfigurationState, FleetCommandLog, type AuditQuery } from '../journal/index.js';
import type { Logger } from '../log/index.js';
import type { OperatorStatus, RecoveryItem, ServiceResult } from './api.js';
import { recordConfiguration } from './configuration-audit.js';
import type { IdleVerdict } from './idle.js';
import { serviceNotice, transactionId } from './bridge/protocol.js';
import { isoDateTimeMs } from '../vocabulary/gateway-time.js';
import { assertPrintableConfiguration } from './receipts.js';
import { leftInFlight } from './status-board.js';
import type { TerminalHost } from './terminal-host.js';

/** How often a scheduled restart looks whether the maintenance window has come and the terminal is idle. */
const RESTART_CHECK_MS = 30_000;
/** Most audit records one `audit-log` command returns (an MQTT message stays small). */
const AUDIT_RECORDS_MAX = 500;
/** Bytes of JSON the records of one `audit-log` reply may take: the reply's limit, less room for the rest of it. */
const AUDIT_REPLY_BUDGET_BYTES = REPLY_MAX_BYTES - 4 * 1024;
/**
 * How long `rerun-recovery` waits for recovery before it answers that recovery is still running. Recovery retries
 * until the gateway answers; the fleet's commands run one after the other, so a reply that waited for it would hold
 * every later command (out-of-service, restart) for as long as the gateway is down.
 */
const RECOVERY_REPLY_MS = 10_000;
/**
 * Most open stays one `open-stays` reply lists (operator mode's list, the last entry first): one is about 250 bytes of
 * JSON, so a reply stays well within {@link REPLY_MAX_BYTES}.
 */
const STAYS_MAX = 100;
/** The arguments of `open-stays` and `release-stay`: nothing else is taken. */
const openStaysArgs = z.strictObject({ limit: z.number().int().min(1).max(STAYS_MAX).optional() });
const releaseStayArgs = z.strictObject({ holdId: transactionId });

export interface HostFleetOptions {
  /** The configuration file the terminal was started with; `apply-config` replaces it. None: embedded defaults. */
  configFile: string | undefined;
  /** Relative paths of the configuration resolve against it. */
  cwd: string;
  /**
   * Restarts the terminal: `parking-terminal start` stops it (what is in flight finishes and is journaled) and exits
   * with its restart code, which the service manager restarts on (README, Fleet).
   */
  restart: (reason: string) => void;
  logger: Logger;
  now?: () => Date;
  /** How long `rerun-recovery` waits before it answers that recovery is still running, ms (tests). */
  recoveryReplyMs?: number;
  /** How long `apply-config` waits for a new broker to accept a connection, ms (default 10 s). */
  brokerCheckMs?: number;
}

/**
 * Why the terminal takes no card, as the fleet reads it: out of service (an unexpected error, service mode), or still
 * starting while recovery resolves what the last run left in flight (it may wait for the gateway).
 */
function notInServiceOf(status: OperatorStatus): string | undefined {
  if (status.outOfService !== undefined) return status.outOfService;
  if (status.recovery.running)
    return `starting: resolving ${leftInFlight(status.recovery.inFlight)} before the first card`;
  return undefined;
}

/**
 * The terminal as the fleet link sees it (src/fleet/terminal.ts): the heartbeat read from the operator status the
 * status bar shows (nothing computed twice), events from its changes, command ids in the journal database
 * (migration 0011), and the commands carried out through the host's own paths — service mode, the offline queue's
 * forwarding, recovery, the audit log, the configuration recorded by configuration-audit.ts — never around the
 * journal or its sender.
 */
export class HostFleetTerminal implements FleetTerminal {
  readonly terminalId: string;
  private readonly commands: FleetCommandLog;
  private readonly version = appVersion();
  private readonly now: () => Date;
  private readonly listeners = new Set<(event: FleetEvent) => void>();
  private readonly stopWatching: () => void;
  private last: { outOfService: string | undefined; declined: number; seen: WeakSet<RecoveryItem> };
  private restartTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly host: TerminalHost,
    private readonly options: HostFleetOptions,
  ) {
    this.terminalId = host.config.terminal.id;
    this.commands = new FleetCommandLog(host.journal);
    this.now = options.now ?? (() => new Date());
    const status = host.status();
    this.last = {
      outOfService: notInServiceOf(status),
      declined: status.offline.declinedAfterForward,
      seen: new WeakSet(status.recovery.resolved),
    };
    this.stopWatching = host.subscribe((snapshot) => this.changed(snapshot.status));
  }

  /** Events from a change of the operator status: service, declines after forwarding, what recovery resolved. */
  private changed(status: OperatorStatus): void {
    const events: FleetEvent[] = [];
    const notInService = notInServiceOf(status);
    if (notInService !== this.last.outOfService)
      events.push(
        notInService !== undefined
          ? { type: 'out-of-service', reason: notInService }
          : { type: 'in-service' },
      );
    if (status.offline.declinedAfterForward > this.last.declined)
      events.push({ type: 'declined-after-forward', count: status.offline.declinedAfterForward });
    for (const item of [...status.recovery.resolved].reverse())
      if (!this.last.seen.has(item)) {
        this.last.seen.add(item);
        events.push({
          type: 'recovery',
          transactionId: item.transactionId,
          service: item.service,
          resolution: item.resolution,
        });
      }
    this.last.outOfService = notInService;
    this.last.declined = status.offline.declinedAfterForward;
    for (const event of events) for (const listener of this.listeners) listener(event);
  }

  onEvent(listener: (event: FleetEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private diskFreeMegabytes(): number | null {
    try {
      const fs = statfsSync(dirname(resolve(this.options.cwd, this.host.config.journal.path)));
      return Math.floor((fs.bavail * fs.bsize) / (1024 * 1024));
    } catch {
      return null;
    }
  }

  health(): TerminalHealth {
    const s = this.host.status();
    const counts = this.host.journal.counts();
    const notInService = notInServiceOf(s);
    return {
      appVersion: this.version,
      model: s.model,
      inService: notInService === undefined,
      ...(notInService !== undefined ? { outOfService: notInService } : {}),
      customerSession: this.host.customerSession(),
      reader: {
        kind: s.reader.kind,
        health: s.reader.health,
        ...(s.reader.firmware ? { firmware: s.reader.firmware } : {}),
      },
      ...(s.printer ? { printer: { kind: s.printer.kind, status: s.printer.status } } : {}),
      gateway: {
        online: s.gateway.online,
        ...(s.gateway.problem ? { problem: s.gateway.problem } : {}),
        ...(s.gateway.lastError ? { lastError: s.gateway.lastError } : {}),
        ...(s.gateway.unreachableHost ? { unreachableHost: s.gateway.unreachableHost } : {}),
        clockSkewSeconds: s.gateway.clockSkewSeconds ?? null,
      },
      offline: {
        depth: s.offline.depth,
        totals: s.offline.totals.map((t) => ({ currency: t.currency, minor: t.minor })),
        oldestAgeSeconds: s.offline.oldestAgeSeconds,
        ageUnknown: s.offline.ageUnknown,
        declinedAfterForward: s.offline.declinedAfterForward,
      },
      feeShortfalls: s.feeShortfalls,
      openAuthorizations: this.host.openAuthorizationCount(),
      journal: { unknown: counts.unknown, inFlight: counts.inFlight },
      diskFreeMegabytes: this.diskFreeMegabytes(),
    };
  }

  /**
   * Idle: no customer session, no open authorization, no journal entry unknown or in flight, recovery not running
   * (the host's one rule, `TerminalHost.idle`). Only an idle terminal takes a new configuration or restarts.
   */
  idle(): IdleVerdict {
    return this.host.idle();
  }

  claimCommand(input: { id: string; command: string; expiresAtMs: number }) {
    return this.commands.claim(input);
  }

  beginCommand(id: string) {
    return this.commands.begin(id);
  }

  finishCommand(id: string, reply: Record<string, unknown>): void {
    this.commands.finish(id, reply);
  }

  audit(entry: {
    id: string | null;
    command?: string;
    result: 'ok' | 'refused' | 'failed';
    code: string;
    dropped?: { count: number; codes: Record<string, number> };
    unaudited?: { count: number; codes: Record<string, number> };
  }): void {
    this.host.audit.record({
      actor: 'fleet',
      action: 'fleet-command',
      subject: entry.id ?? (entry.dropped ? '(refusals dropped)' : '(unreadable command)'),
      result: entry.result,
      code: entry.code,
      details: {
        ...(entry.command ? { command: entry.command } : {}),
        ...(entry.dropped ? { dropped: entry.dropped.count, codes: entry.dropped.codes } : {}),
        ...(entry.unaudited ? { unaudited: entry.unaudited } : {}),
      },
    });
  }

  async execute(
    command: FleetCommandName,
    args: Record<string, unknown>,
    context: { id: string },
  ): Promise<CommandOutcome> {
    const unknown = unknownArguments(command, args);
    if (unknown !== undefined) return { ok: false, code: 'BAD_ARGUMENTS', message: unknown };
    try {
      switch (command) {
        case 'out-of-service': {
          // Operator mode's rule for the notice (the one the screen is laid out for).
          const notice = args.notice === undefined ? undefined : serviceNotice.safeParse(args.notice);
          if (notice !== undefined && !notice.success)
            return {
              ok: false,
              code: 'BAD_ARGUMENTS',
              message: `notice: a text of 1 to ${serviceNotice.maxLength} characters (white space around it left out)`,
            };
          return this.serviceOutcome(await this.host.service('on', notice?.data, 'fleet'));
        }
        case 'in-service':
          return this.serviceOutcome(await this.host.service('off', undefined, 'fleet'));
        case 'rerun-recovery':
          return await this.rerunRecovery();
        case 'flush-queue': {
          // Nothing is forwarded before the start has resolved what the last run left in flight (rule 3).
          if (this.host.status().recovery.running)
            return { ok: false, code: 'BUSY', message: 'recovery of the journal is running' };
          const summary = await this.host.startForwarding();
          return { ok: true, message: `forwarded ${summary.forwarded}`, result: summary };
        }
        case 'audit-log':
          return this.auditLog(args);
        case 'apply-config':
          return await this.applyConfig(args);
        case 'restart':
          return this.restart();
        case 'open-stays':
          return this.openStays(args);
        case 'release-stay':
          return await this.releaseStay(args, context.id);
      }
    } catch (e) {
      return { ok: false, code: 'FAILED', failed: true, message: e instanceof Error ? e.message : String(e) };
    }
  }

  /** A service task's result as the fleet's reply: refused with its code (BUSY: not idle), NOT_ALLOWED if it failed. */
  private serviceOutcome(done: ServiceResult): CommandOutcome {
    switch (done.outcome) {
      case 'ok':
        return { ok: true, message: done.message };
      case 'refused':
        return { ok: false, code: done.code, message: done.message };
      case 'failed':
        return { ok: false, code: 'NOT_ALLOWED', message: done.message };
    }
  }

  /**
   * Recovery run again: its outcome when it finishes within {@link RECOVERY_REPLY_MS}; otherwise the answer that it is
   * still running (it goes on, as the host's recovery always does, until the gateway answers or the host stops).
   */
  private async rerunRecovery(): Promise<CommandOutcome> {
    // service() never rejects: a failure is its outcome, read here or, after the answer, by nobody.
    const run = this.host.service('rerun-recovery', undefined, 'fleet');
    let timer: NodeJS.Timeout | undefined;
    const done = await Promise.race([
      run,
      new Promise<undefined>((r) => {
        timer = setTimeout(() => r(undefined), this.options.recoveryReplyMs ?? RECOVERY_REPLY_MS);
      }),
    ]);
    clearTimeout(timer);
    if (done !== undefined) return this.serviceOutcome(done);
    const inFlight = this.host.journal.inFlight().length;
    return {
      ok: true,
      message: `recovery still running: ${leftInFlight(inFlight)}; it goes on until the gateway answers`,
      result: { running: true, inFlight },
    };
  }

  private auditLog(args: Record<string, unknown>): CommandOutcome {
    const query: AuditQuery = {};
    if (args.since !== undefined) {
      // The one rule for ISO 8601 date-times: with seconds and a zone (a time without one has no single instant).
      const since = isoDateTimeMs(args.since);
      if (since === undefined)
        return {
          ok: false,
          code: 'BAD_ARGUMENTS',
          message: 'since: an ISO 8601 date-time with seconds and a zone, e.g. 2026-01-31T08:00:00Z',
        };
      query.sinceMs = since;
    }
    const limit = args.limit ?? 100;
    if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1 || limit > AUDIT_RECORDS_MAX)
      return { ok: false, code: 'BAD_ARGUMENTS', message: `limit: 1 to ${AUDIT_RECORDS_MAX}` };
    query.limit = limit;
    const records = this.host.audit.list(query);
    // Within a reply's size (REPLY_MAX_BYTES, with room for the rest of the reply): the newest records that fit, the
    // oldest left out and counted — a reply over it would carry no record at all.
    let size = Buffer.byteLength(JSON.stringify(records));
    let omitted = 0;
    while (size > AUDIT_REPLY_BUDGET_BYTES && omitted < records.length)
      size -= Buffer.byteLength(JSON.stringify(records[omitted++])) + 1;
    const kept = records.slice(omitted);
    return {
      ok: true,
      message:
        `${kept.length} record(s)` +
        (omitted > 0
          ? `; the ${omitted} oldest left out (a reply is at most ${REPLY_MAX_BYTES} bytes): ask again with a smaller limit`
          : ''),
      result: { records: kept, ...(omitted > 0 ? { omitted } : {}) },
    };
  }

  /**
   * The open tap-and-go stays as operator mode lists them (`TerminalHost.openStays`: masked card, amount held, entry,
   * state; never the card number or its fingerprint), the last entry first, at most `limit`; `more` when there are more.
   */
  private openStays(args: Record<string, unknown>): CommandOutcome {
    const parsed = openStaysArgs.safeParse(args);
    if (!parsed.success)
      return { ok: false, code: 'BAD_ARGUMENTS', message: `limit: 1 to ${STAYS_MAX}, and no other argument` };
    const limit = parsed.data.limit ?? STAYS_MAX;
    const listed = this.host.openStays(limit + 1);
    const stays = listed.slice(0, limit);
    const more = listed.length > limit;
    return {
      ok: true,
      message: `${stays.length} open stay(s)${more ? '; more are open: the last entries listed' : ''}`,
      result: { stays, ...(more ? { more: true } : {}) },
    };
  }

  /**
   * Passback reset from the fleet: the driver stuck at the entry calls the operator, nobody is on site. Operator mode's
   * release (`TerminalHost.releaseStay`: the hold watch's reversal in full, every rule of it), recorded in the audit log
   * with the command's id as who asked. Refused, nothing sent: a hold not open (`HOLD_NOT_FOUND`, `HOLD_BUSY`,
   * `HOLD_RELEASING`), `BUSY` while the start's recovery runs. Answered OK once the reversal ran, with its outcome
   * (`result.outcome`, as operator mode's: `released` with the amount `reversed`, or `later`, `unknown`, `refused`).
   */
  private async releaseStay(args: Record<string, unknown>, commandId: string): Promise<CommandOutcome> {
    const parsed = releaseStayArgs.safeParse(args);
    if (!parsed.success)
      return {
        ok: false,
        code: 'BAD_ARGUMENTS',
        message: 'holdId: the id of an open stay as open-stays lists it, and no other argument',
      };
    if (this.host.status().recovery.running)
      return { ok: false, code: 'BUSY', message: 'recovery of the journal is running' };
    const done = await this.host.releaseStay(parsed.data.holdId, commandId);
    if (!done.ok) {
      const code = done.error.code;
      return code === 'HOLD_NOT_FOUND' || code === 'HOLD_BUSY' || code === 'HOLD_RELEASING'
        ? { ok: false, code, message: done.error.message }
        : { ok: false, code: 'BUSY', message: done.error.message };
    }
    const { type: _type, ...result } = done.value;
    return { ok: true, message: done.value.message, result };
  }

  /**
   * A new configuration: validated by the schema (refused with its error), its secret files checked, accepted only
   * when idle and when it keeps the terminal within the fleet's reach (the same topics, a broker that accepts the
   * connection: `checkFleetMove`); then the file replaced atomically, the change recorded in the audit log (actor
   * fleet), and the terminal restarted to run it.
   */
  private async applyConfig(args: Record<string, unknown>): Promise<CommandOutcome> {
    const input = args.config;
    if (typeof input !== 'object' || input === null || Array.isArray(input))
      return { ok: false, code: 'BAD_ARGUMENTS', message: 'config: the new configuration as an object' };
    let config: Config;
    try {
      config = parseConfig(input, 'the configuration of the command');
      assertConfiguredSecretFiles(config, this.options.cwd);
      // Texts the printer cannot print would restart the terminal into a start that refuses them.
      assertPrintableConfiguration(config, 'the configuration of the command');
      // The files the fleet link reads at the start, read as it reads them: a CA, user name or fleet key it could not
      // use would restart the terminal into a start that fails, again at each restart, out of the fleet's reach.
      const fleet = withSecretFilesResolved(config, this.options.cwd).fleet;
      if (fleet) checkFleetFiles(fleet);
    } catch (e) {
      if (e instanceof ConfigError || e instanceof SecretFileError)
        return { ok: false, code: 'CONFIG_INVALID', message: e.message };
      throw e;
    }
    // A configuration without the fleet link, or without the fleet key (a link that takes no command), would leave the
    // terminal out of the operator's reach: refused here (a terminal's fleet link is removed on the terminal itself).
    if (!config.fleet)
      return {
        ok: false,
        code: 'CONFIG_INVALID',
        message: 'the configuration of the command: "fleet": required when applied through the fleet',
      };
    if (config.fleet.commandKeyFile === undefined)
      return {
        ok: false,
        code: 'CONFIG_INVALID',
        message:
          'the configuration of the command: "fleet.commandKeyFile": required when applied through the fleet',
      };
    // The journal database and its at-rest key stay where they are: another journal forgets the stored offline
    // payments (never forwarded), the command ids (the commands of the last minutes replayable) and the audit log;
    // another key cannot open the card data sealed in the journal, and the start refuses it, at every restart. Both
    // are moved on the terminal itself (`offline rotate-key` for the key).
    const at = (p: string): string => resolve(this.options.cwd, p);
    for (const [key, next, running] of [
      ['journal.path', config.journal.path, this.host.config.journal.path],
      ['offline.keyFile', config.offline.keyFile, this.host.config.offline.keyFile],
    ] as const)
      if (at(next) !== at(running))
        return {
          ok: false,
          code: 'CONFIG_INVALID',
          message: `the configuration of the command: "${key}": ${next} is not the running ${running}; moved on the terminal itself, not through the fleet`,
        };
    const file = this.options.configFile;
    if (!file)
      return {
        ok: false,
        code: 'NO_CONFIG_FILE',
        message: 'the terminal runs on its embedded defaults (no --config)',
      };
    const idle = this.idle();
    if (!idle.idle) return { ok: false, code: 'BUSY', message: `not idle: ${idle.why}` };
    const running = withSecretFilesResolved(this.host.config, this.options.cwd).fleet;
    if (running) {
      const refusal = await checkFleetMove(
        { terminalId: this.host.config.terminal.id, fleet: running },
        {
          terminalId: config.terminal.id,
          fleet: withSecretFilesResolved(config, this.options.cwd).fleet ?? config.fleet,
        },
        this.options.brokerCheckMs,
      );
      if (refusal) return { ok: false, ...refusal };
      // A customer may have come while the new broker was tried.
      const still = this.idle();
      if (!still.idle) return { ok: false, code: 'BUSY', message: `not idle: ${still.why}` };
    }
    const yaml = ['.yml', '.yaml'].includes(extname(file).toLowerCase());
    // Whole and synced, or not at all: a power cut never leaves a configuration the next start cannot read.
    writePrivateFileDurably(file, yaml ? toYaml(input) : `${JSON.stringify(input, null, 2)}\n`, 'replace');
    const changes = recordConfiguration(
      this.host.journal,
      new ConfigurationState(this.host.journal),
      this.host.audit,
      withSecretFilesResolved(config, this.options.cwd),
      'fleet',
    );
    this.options.logger.info(
      { keys: changes.map((c) => c.key) },
      'configuration replaced by the fleet: restarting',
    );
    this.options.restart('a new configuration from the fleet');
    return {
      ok: true,
      message: `configuration applied (${changes.length} change(s)); restarting`,
      result: { changes: changes.length },
    };
  }

  /** Restarts now when inside the maintenance window and idle; otherwise at the first moment both hold. */
  private restart(): CommandOutcome {
    const fleet = this.host.config.fleet;
    if (!fleet) return { ok: false, code: 'NOT_ALLOWED', message: 'no fleet configuration' };
    const due = (): boolean =>
      inMaintenanceWindow(this.now(), fleet.maintenanceWindow, this.host.config.terminal.timezone) &&
      this.idle().idle;
    const window = `${fleet.maintenanceWindow.start}–${fleet.maintenanceWindow.end} ${this.host.config.terminal.timezone}`;
    if (due()) {
      this.options.restart('a restart from the fleet');
      return { ok: true, message: 'restarting', result: { restarting: true } };
    }
    if (this.restartTimer === undefined) {
      this.restartTimer = setInterval(() => {
        if (!due()) return;
        this.stop();
        this.options.restart('a restart from the fleet, in the maintenance window');
      }, RESTART_CHECK_MS);
      this.restartTimer.unref();
    }
    return {
      ok: true,
      message: `restart scheduled in the maintenance window ${window}`,
      result: { scheduled: window },
    };
  }

  stop(): void {
    if (this.restartTimer) clearInterval(this.restartTimer);
    this.restartTimer = undefined;
  }

  /** Stops watching the host. */
  close(): void {
    this.stop();
    this.stopWatching();
  }
}

/**
 * Starts the fleet link of a running terminal when `fleet` is configured (undefined otherwise). Its files are read
 * here: one that cannot be used stops the start, like every other configuration error.
 */
export function startFleetLink(
  host: TerminalHost,
  options: HostFleetOptions,
): { link: FleetLink; terminal: HostFleetTerminal; close(): Promise<void> } | undefined {
  const config = host.config.fleet;
  if (!config) return undefined;
  const terminal = new HostFleetTerminal(host, options);
  try {
    const link = FleetLink.start({
      config,
      terminal,
      logger: options.logger.child({ component: 'fleet' }),
      ...(options.now ? { now: options.now } : {}),
    });
    return {
      link,
      terminal,
      close: async () => {
        terminal.close();
        await link.close();
      },
    };
  } catch (e) {
    terminal.close();
    throw e;
  }
}
