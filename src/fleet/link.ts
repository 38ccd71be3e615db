import type { MqttClient } from 'mqtt';
import { redactValue, TokenBucket, type Logger } from '../log/index.js';
import { checkCommand, readFleetKey, type FleetKey } from './command-signature.js';
import { ConfigError } from '../config/index.js';
import { SecretFileError } from '../config/secret-file.js';
import {
  brokerOptions,
  checkBrokerConnection,
  connectBroker,
  type FleetConfig,
  type ReconnectBackoff,
} from './connection.js';
import {
  COMMAND_MAX_BYTES,
  FLEET_COMMANDS,
  REPLY_MAX_BYTES,
  signedCommandSchema,
  unsignedCommandSchema,
  type CommandReply,
  type FleetCommandName,
  type FleetEvent,
  type Heartbeat,
  type ReplyCode,
  type SignedCommand,
} from './messages.js';
import type { FleetTerminal } from './terminal.js';
import { terminalTopics, type TerminalTopics } from './topics.js';

/** Most events kept while the broker is away (the oldest go first); the heartbeat says the rest. */
const EVENTS_KEPT_OFFLINE = 100;
/**
 * Largest MQTT packet the link accepts, bytes: a command and room for its topic, packet id and properties. Advertised
 * to the broker (MQTT 5 Maximum Packet Size, §3.1.2.11.4), which then never sends a larger one — it drops it — since
 * MQTT.js reads a packet whole, up to 256 MB, before anything here could look at it.
 */
const PACKET_MAX_BYTES = COMMAND_MAX_BYTES + 4 * 1024;

/** Longest `message` of a reply, characters: a schema error naming every unknown key of a configuration is cut. */
const REPLY_MESSAGE_MAX_CHARS = 4 * 1024;
/**
 * Refusals of messages not signed with the fleet key (a stranger's, or junk): answered and audited at most
 * {@link STRANGER_REFUSALS_BURST} at once, then {@link STRANGER_REFUSALS_PER_SECOND} a second; beyond that they are
 * counted, and one `RATE_LIMITED` reply and audit record sums them up {@link DROPPED_SUMMARY_AFTER_MS} after the first
 * one dropped (or when the link closes). A command whose signature verifies is always answered, whatever its refusal.
 */
const STRANGER_REFUSALS_BURST = 20;
const STRANGER_REFUSALS_PER_SECOND = 1;
/**
 * Refusals of commands whose signature verifies but that run nothing and claim no id (a captured command published
 * again: `DUPLICATE`, `STALE`, `EXPIRED`; one signed for another terminal; a terminal that carries out nothing): each
 * is answered, and audited at most {@link SIGNED_REFUSAL_AUDITS_BURST} at once, then
 * {@link SIGNED_REFUSAL_AUDITS_PER_SECOND} a second — the rest are counted in the same summary. Each audit record is a
 * durable write in the journal database: a replay at the broker's rate would otherwise grow it, and take disk syncs
 * from the payments, at whatever rate a publisher chose.
 */
const SIGNED_REFUSAL_AUDITS_BURST = 20;
const SIGNED_REFUSAL_AUDITS_PER_SECOND = 1;
const DROPPED_SUMMARY_AFTER_MS = 10_000;

/** Refusals counted, not answered or not audited, by code. */
interface RefusalCount {
  count: number;
  codes: Record<string, number>;
}
/** The refusals given before the signature verified: who sent them is not known to hold the fleet key. */
const UNVERIFIED_REFUSALS: ReadonlySet<ReplyCode> = new Set<ReplyCode>([
  'BAD_COMMAND',
  'COMMANDS_DISABLED',
  'BAD_SIGNATURE',
]);

/**
 * `reply` within {@link REPLY_MAX_BYTES}: a `message` longer than {@link REPLY_MESSAGE_MAX_CHARS} cut with a marker;
 * then, when still too large, `result` and `first` left out and named under `truncated` with the size it had. What is
 * left (an id, a command name, a cut message) always fits. Applied to the reply once redacted: a cut never leaves part
 * of a card number the redaction would have recognised whole.
 */
export function capReply(reply: CommandReply): CommandReply {
  let capped = reply;
  const message = reply.message;
  if (message !== undefined && message.length > REPLY_MESSAGE_MAX_CHARS) {
    // Not in the middle of a surrogate pair.
    const head = message.slice(0, REPLY_MESSAGE_MAX_CHARS).replace(/[\uD800-\uDBFF]$/, '');
    capped = { ...capped, message: `${head}… [truncated: ${message.length} characters in all]` };
  }
  const bytes = Buffer.byteLength(JSON.stringify(capped));
  if (bytes <= REPLY_MAX_BYTES) return capped;
  const { result, first, ...rest } = capped;
  const omitted: Array<'result' | 'first'> = [];
  if (result !== undefined) omitted.push('result');
  if (first !== undefined) omitted.push('first');
  return { ...rest, truncated: { bytes, omitted } };
}

/** A command refused before it is claimed: its id and name when they could be read, the code and why. */
/** A command id of the UUID form (`fleet send` makes one per command). */
const COMMAND_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type Refusal = [id: string | null, command: string | undefined, code: ReplyCode, message: string];

/** The reply of `refusal`. */
function refusalReply(
  [id, command, code, message]: Refusal,
  extra: Pick<CommandReply, 'first'>,
): Omit<CommandReply, 'v' | 'terminalId' | 'at'> {
  return { id, ...(command ? { command } : {}), ok: false, code, message, ...extra };
}

export interface FleetLinkOptions {
  config: FleetConfig;
  terminal: FleetTerminal;
  logger: Logger;
  now?: () => Date;
  /** The fleet key, when the caller read it already (the simulated fleet shares one); else `config.commandKeyFile`. */
  key?: FleetKey;
}

/**
 * Reads every file the fleet link of `config` reads when it starts — the broker's CA, the client certificate and key,
 * the user name and password, the fleet key — with the readers {@link FleetLink.start} uses, so that a configuration
 * the fleet applies is refused rather than restarted into a start that fails (or into a link no command can reach).
 * Paths as the start sees them (resolved by the caller).
 * @throws ConfigError or SecretFileError naming the key and the file.
 */
export function checkFleetFiles(config: FleetConfig): void {
  brokerOptions(config);
  const file = config.commandKeyFile;
  if (file === undefined) return;
  try {
    readFleetKey(file);
  } catch (e) {
    if (e instanceof SecretFileError) throw e;
    // A key of another kind, too short, or a PEM node:crypto cannot read.
    const detail = e instanceof Error ? e.message : String(e);
    throw new ConfigError(
      'CONFIG_INVALID',
      detail.startsWith('fleet.commandKeyFile') ? detail : `fleet.commandKeyFile: ${file}: ${detail}`,
      file,
      'fleet.commandKeyFile',
      { cause: e },
    );
  }
}

/** The MQTT client id of the link of terminal `terminalId`: `fleet.clientId`, else one made of the terminal id. */
export function linkClientId(config: FleetConfig, terminalId: string): string {
  return config.clientId ?? `parking-terminal-${terminalId}`;
}

/** The settings the link connects to its broker with: another value of any of them is another connection. */
const BROKER_KEYS = [
  'url',
  'mqttVersion',
  'clientId',
  'caFile',
  'certFile',
  'keyFile',
  'usernameFile',
  'passwordFile',
] as const satisfies ReadonlyArray<keyof FleetConfig>;

/** A terminal's place in the fleet: its id and its fleet link's settings (paths resolved by the caller). */
export interface FleetPlace {
  terminalId: string;
  fleet: FleetConfig;
}

/**
 * Whether a new configuration keeps the terminal within the fleet's reach, checked before `apply-config` replaces
 * the running one (README, Fleet, Commands): a terminal restarted onto other topics, or onto a broker it cannot
 * reach, answers no command of its operator any more, and nothing the fleet sends can bring it back.
 * - Another `terminal.id` or `fleet.topicPrefix` is refused (`FLEET_IDENTITY_CHANGE`): the operator addresses the
 *   terminal by both. They are changed on the terminal itself.
 * - Other broker settings (URL, MQTT version, client id, TLS files, credentials) are tried first: a connection with
 *   them, as a client of its own (never the link's session), must be accepted within `timeoutMs`, or the
 *   configuration is refused (`BROKER_UNREACHABLE`) and nothing changes.
 * Resolves with the refusal, or undefined when the move is safe. Never rejects.
 */
export async function checkFleetMove(
  running: FleetPlace,
  next: FleetPlace,
  timeoutMs?: number,
): Promise<{ code: 'FLEET_IDENTITY_CHANGE' | 'BROKER_UNREACHABLE'; message: string } | undefined> {
  for (const [key, from, to] of [
    ['terminal.id', running.terminalId, next.terminalId],
    ['fleet.topicPrefix', running.fleet.topicPrefix, next.fleet.topicPrefix],
  ] as const)
    if (from !== to)
      return {
        code: 'FLEET_IDENTITY_CHANGE',
        message: `the configuration of the command: "${key}": ${to} is not the running ${from}; the fleet would lose the terminal (changed on the terminal itself, not through the fleet)`,
      };
  const changed = BROKER_KEYS.filter((key) => running.fleet[key] !== next.fleet[key]);
  if (changed.length === 0) return undefined;
  try {
    await checkBrokerConnection(next.fleet, `${linkClientId(next.fleet, next.terminalId)}-check`, timeoutMs);
    return undefined;
  } catch (e) {
    return {
      code: 'BROKER_UNREACHABLE',
      message: `the configuration of the command: ${changed.map((k) => `"fleet.${k}"`).join(', ')}: the terminal could not connect to ${next.fleet.url} with them (${e instanceof Error ? e.message : String(e)}); not applied`,
    };
  }
}

/**
 * The terminal's link to the operator's MQTT broker (issue 15; README, Fleet): a retained `status` (`online`, and
 * the last will `offline`), a retained `heartbeat` every `fleet.heartbeatSeconds`, `events`, and signed `commands`
 * answered on `replies` — each executed at most once (its id journaled before it runs) and recorded in the audit log.
 *
 * The terminal works the same without it: nothing here is awaited by a payment, publishing never blocks, and while
 * the broker is away heartbeats are skipped (not queued) and at most {@link EVENTS_KEPT_OFFLINE} events wait.
 */
export class FleetLink {
  private readonly client: MqttClient;
  private readonly backoff: ReconnectBackoff;
  private readonly topics: TerminalTopics;
  private readonly key: FleetKey | undefined;
  private readonly now: () => Date;
  private readonly heartbeatTimer: NodeJS.Timeout;
  private readonly stopEvents: () => void;
  private readonly pendingEvents: string[] = [];
  /** Commands received, each claimed or refused in the order they arrive (see {@link received}). */
  private receipts: Promise<void> = Promise.resolve();
  /** The commands claimed, run one after the other in the order they arrive. */
  private commandChain: Promise<void> = Promise.resolve();
  /** The recording of each command delivered, by its packet: its acknowledgement waits for it. */
  private readonly recordings = new WeakMap<object, Promise<void>>();
  /** Refusals of unsigned messages answered; monotonic time, so that the wall clock jumping changes nothing. */
  private readonly strangerRefusals = new TokenBucket(STRANGER_REFUSALS_BURST, STRANGER_REFUSALS_PER_SECOND);
  /** Audit records of signed commands' repeatable refusals; monotonic time too. */
  private readonly signedRefusalAudits = new TokenBucket(
    SIGNED_REFUSAL_AUDITS_BURST,
    SIGNED_REFUSAL_AUDITS_PER_SECOND,
  );
  /** Since the last summary: the refusals left unanswered, and those answered but not audited. */
  private dropped: { unanswered: RefusalCount; unaudited: RefusalCount; since: string } | undefined;
  private droppedTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** The close stopped waiting for the commands received before it: those not begun by then never begin. */
  private abandoned = false;
  /** Heartbeats published (tests, the benchmark). */
  heartbeats = 0;

  private constructor(private readonly options: FleetLinkOptions) {
    const { config, terminal } = options;
    this.now = options.now ?? (() => new Date());
    this.topics = terminalTopics(config.topicPrefix, terminal.terminalId);
    this.key = options.key ?? (config.commandKeyFile ? readFleetKey(config.commandKeyFile) : undefined);
    const mqttVersion = config.mqttVersion ?? 5;
    const { client, backoff } = connectBroker(config, {
      clientId: linkClientId(config, terminal.terminalId),
      // MQTT 5, for the Maximum Packet Size the broker must respect (MQTT 3.1.1 has none: `fleet.mqttVersion` 4 for a
      // broker that speaks no MQTT 5, where an oversized packet is read and refused by the size check).
      protocolVersion: mqttVersion,
      // A persistent session: QoS 1 commands sent while the terminal is away wait at the broker (bounded there by
      // max_queued_messages), as long as a command may be valid — past its signed expiry it is refused anyway. MQTT
      // 3.1.1 keeps a session that is not clean until the broker's own limit.
      clean: false,
      ...(mqttVersion === 5
        ? {
            properties: {
              maximumPacketSize: PACKET_MAX_BYTES,
              sessionExpiryInterval: config.commandMaxAgeSeconds,
            },
          }
        : {}),
      keepalive: Math.max(10, Math.min(60, config.heartbeatSeconds)),
      will: { topic: this.topics.status, payload: Buffer.from('offline'), qos: 1, retain: true },
    });
    this.client = client;
    this.backoff = backoff;
    client.on('connect', () => this.connected());
    client.on('message', (topic, payload, packet) => {
      if (topic === this.topics.commands) this.recordings.set(packet, this.received(payload, packet.retain));
    });
    // MQTT.js acknowledges a QoS 1 message (PUBACK) once `handleMessage` calls back, after the 'message' event: held
    // until the command is claimed or its refusal recorded, so that a terminal stopped before has the broker deliver
    // it again to its session (a refusal recorded is acknowledged: never delivered again). A recording that failed (a
    // journal that takes no more writes) is not acknowledged: an error skips the PUBACK, and the broker delivers the
    // command again at the next connection. (`customHandleAcks` would do it under MQTT 5 only: MQTT.js replaces it
    // with an immediate acknowledgement under MQTT 3.1.1, `fleet.mqttVersion` 4.) MQTT.js reads no further packet
    // until the callback: the recording never waits for a command to run.
    client.handleMessage = (packet, callback) => {
      const recording = this.recordings.get(packet);
      if (recording === undefined) {
        callback();
        return;
      }
      this.recordings.delete(packet);
      recording.then(
        () => callback(),
        (err: unknown) => callback(err instanceof Error ? err : new Error(String(err))),
      );
    };
    client.on('error', (err) => options.logger.warn({ err: { message: err.message } }, 'fleet broker error'));
    client.on('close', () => {
      if (!this.closed) options.logger.debug('fleet broker connection closed; reconnecting with backoff');
    });
    this.heartbeatTimer = setInterval(() => this.heartbeat(), config.heartbeatSeconds * 1000);
    this.heartbeatTimer.unref();
    this.stopEvents = terminal.onEvent((event) => this.event(event));
  }

  /**
   * Starts the link: reads the TLS files, credentials and fleet key (a file that cannot be used throws here, at the
   * terminal's start) and connects in the background; it returns at once, whether the broker answers or not.
   */
  static start(options: FleetLinkOptions): FleetLink {
    return new FleetLink(options);
  }

  /** Whether the broker connection is up. */
  get isConnected(): boolean {
    return this.client.connected;
  }

  /** Resolves once the broker connection is up (at once when it is). */
  whenConnected(): Promise<void> {
    if (this.client.connected) return Promise.resolve();
    return new Promise((resolve) => this.client.once('connect', () => resolve()));
  }

  /** Calls `listener` once, when the broker connection next closes (tests). */
  onceDisconnected(listener: () => void): void {
    this.client.once('close', listener);
  }

  private connected(): void {
    const log = this.options.logger;
    log.info({ broker: this.options.config.url }, 'fleet link connected');
    this.publish(this.topics.status, 'online', { qos: 1, retain: true });
    this.client.subscribe(this.topics.commands, { qos: 1 }, (err) => {
      if (err) log.error({ err: { message: err.message } }, 'fleet commands: subscription refused');
    });
    this.heartbeat();
    for (const payload of this.pendingEvents.splice(0)) this.publish(this.topics.events, payload, { qos: 1 });
  }

  private publish(topic: string, payload: string, opts: { qos: 0 | 1; retain?: boolean }): void {
    this.client.publish(topic, payload, { qos: opts.qos, retain: opts.retain ?? false }, (err) => {
      if (err && !this.closed)
        this.options.logger.debug({ topic, err: { message: err.message } }, 'not published');
    });
  }

  /** The heartbeat now (skipped while offline: the next one says the same, newer). */
  heartbeat(): void {
    if (!this.client.connected) return;
    let health;
    try {
      health = this.options.terminal.health();
    } catch (err) {
      this.options.logger.error({ err }, 'fleet heartbeat: the health could not be read');
      return;
    }
    const beat: Heartbeat = {
      ...health,
      terminalId: this.options.terminal.terminalId,
      at: this.now().toISOString(),
      intervalSeconds: this.options.config.heartbeatSeconds,
    };
    this.publish(this.topics.heartbeat, JSON.stringify(redactValue(beat)), { qos: 0, retain: true });
    this.heartbeats += 1;
  }

  private event(event: FleetEvent): void {
    const payload = JSON.stringify(
      redactValue({ ...event, terminalId: this.options.terminal.terminalId, at: this.now().toISOString() }),
    );
    if (this.client.connected) this.publish(this.topics.events, payload, { qos: 1 });
    else {
      this.pendingEvents.push(payload);
      this.pendingEvents.splice(0, Math.max(0, this.pendingEvents.length - EVENTS_KEPT_OFFLINE));
    }
  }

  /**
   * Takes a message of the commands topic: resolves once it is claimed or its refusal recorded ({@link record}), the
   * command itself queued to run after those before it; rejects when that could not be recorded (not acknowledged).
   * `retained`: the packet's RETAIN flag — sent by the broker from its retained store, at a subscription.
   */
  private received(payload: Buffer, retained: boolean): Promise<void> {
    const late = this.closed;
    const recorded = this.receipts
      // One command per turn of the event loop: a burst handled in one run of microtasks (each refusal an audit
      // record synced to disk) would hold the screen's, the reader's and the payments' I/O until its end.
      .then(() => new Promise<void>((next) => setImmediate(next)))
      .then(() => this.record(payload, retained, late))
      .catch((err: unknown) => {
        this.options.logger.error({ err }, 'fleet command handling failed; not acknowledged');
        throw err;
      });
    this.receipts = recorded.catch(() => undefined);
    return recorded;
  }

  /**
   * Publishes a reply, redacted of card data, and returns it as published: what the journal keeps of it for a
   * redelivery (`finishCommand`, fleet_commands) is what crossed the broker, never the text before its redaction (a
   * message may echo the command's input, e.g. the schema's error naming an unknown key).
   */
  private reply(reply: Omit<CommandReply, 'v' | 'terminalId' | 'at'>): CommandReply {
    const full: CommandReply = {
      v: 1,
      terminalId: this.options.terminal.terminalId,
      at: this.now().toISOString(),
      ...reply,
    };
    const redacted = redactValue(full) as CommandReply;
    // The id of the UUID form the fleet sends goes back as it came: a UUID's digits can form a run the card-number
    // rule takes for a PAN ("…-4a50-8536-341381880247"), and a reply whose id is redacted answers no command.
    const published = capReply(
      full.id !== null && COMMAND_UUID.test(full.id) ? { ...redacted, id: full.id } : redacted,
    );
    this.publish(this.topics.replies, JSON.stringify(published), { qos: 1 });
    return published;
  }

  /**
   * Refuses a command that claims no id, so that the same refusal may come again and again. One of a message not
   * signed with the fleet key is answered and audited unless more of those came than the terminal answers
   * ({@link STRANGER_REFUSALS_BURST}): then it is only counted. One of a command whose signature verifies is always
   * answered, and audited unless more of those came than the terminal audits ({@link SIGNED_REFUSAL_AUDITS_BURST}):
   * then its audit record is only counted. One summary sums up what was counted.
   */
  private refuseLimited(refusal: Refusal, extra: Pick<CommandReply, 'first'> = {}): void {
    const code = refusal[2];
    const now = performance.now();
    if (!UNVERIFIED_REFUSALS.has(code)) {
      if (this.signedRefusalAudits.take(now)) this.refuse(refusal, extra);
      else {
        this.count('unaudited', code);
        this.reply(refusalReply(refusal, extra));
      }
      return;
    }
    if (this.strangerRefusals.take(now)) this.refuse(refusal);
    else this.count('unanswered', code);
  }

  private count(what: 'unanswered' | 'unaudited', code: ReplyCode): void {
    const dropped = (this.dropped ??= {
      unanswered: { count: 0, codes: {} },
      unaudited: { count: 0, codes: {} },
      since: this.now().toISOString(),
    });
    const counted = dropped[what];
    counted.count += 1;
    counted.codes[code] = (counted.codes[code] ?? 0) + 1;
    if (this.droppedTimer === undefined) {
      this.droppedTimer = setTimeout(() => this.summarizeDropped(), DROPPED_SUMMARY_AFTER_MS);
      this.droppedTimer.unref();
    }
  }

  /** One reply, audit record and log line for the refusals left unanswered or not audited since the last one. */
  private summarizeDropped(): void {
    clearTimeout(this.droppedTimer);
    this.droppedTimer = undefined;
    const dropped = this.dropped;
    if (!dropped) return;
    this.dropped = undefined;
    const { unanswered, unaudited, since } = dropped;
    const message = [
      unanswered.count > 0
        ? `${unanswered.count} refusal(s) of messages not signed with the fleet key left unanswered since ${since} ` +
          `(answered: at most ${STRANGER_REFUSALS_BURST} at once, then ${STRANGER_REFUSALS_PER_SECOND} a second)`
        : undefined,
      unaudited.count > 0
        ? `${unaudited.count} refusal(s) of signed commands that run nothing (sent again, or for another terminal) ` +
          `answered but not audited since ${since} (audited: at most ${SIGNED_REFUSAL_AUDITS_BURST} at once, then ` +
          `${SIGNED_REFUSAL_AUDITS_PER_SECOND} a second)`
        : undefined,
    ]
      .filter((part) => part !== undefined)
      .join('; ');
    const counts = {
      dropped: unanswered.count,
      codes: unanswered.codes,
      ...(unaudited.count > 0 ? { unaudited } : {}),
    };
    this.options.logger.warn(counts, message);
    try {
      this.options.terminal.audit({
        id: null,
        result: 'refused',
        code: 'RATE_LIMITED',
        dropped: unanswered,
        ...(unaudited.count > 0 ? { unaudited } : {}),
      });
    } catch (err) {
      this.options.logger.error({ err }, 'fleet: the summary of refusals dropped could not be audited');
    }
    this.reply({ id: null, ok: false, code: 'RATE_LIMITED', message, result: { ...counts, since } });
  }

  private refuse(refusal: Refusal, extra: Pick<CommandReply, 'first'> = {}): void {
    const [id, command, code, message] = refusal;
    this.options.logger.warn({ id, command, code, message }, 'fleet command refused');
    this.options.terminal.audit({ id, ...(command ? { command } : {}), result: 'refused', code });
    this.reply(refusalReply(refusal, extra));
  }

  /** The signature, the terminal and the validity of `command` by the terminal's clock now (command-signature.ts). */
  private checkSigned(command: SignedCommand): ReturnType<typeof checkCommand> {
    const key = this.key;
    if (!key) return { ok: false, code: 'COMMANDS_DISABLED', message: 'no fleet key configured' };
    return checkCommand(command, {
      key,
      terminalId: this.options.terminal.terminalId,
      nowMs: this.now().getTime(),
      maxAgeMs: this.options.config.commandMaxAgeSeconds * 1000,
    });
  }

  /**
   * Reads and verifies a command: the command to carry out, or the refusal it gets. Never throws: whatever its
   * checking throws on (a bug, input no check foresaw) is a refusal, replied and audited like any other.
   */
  private verified(
    payload: Buffer,
  ): { command: SignedCommand; name: FleetCommandName } | { refusal: Refusal } {
    let id: string | null = null;
    let name: string | undefined;
    try {
      // Read whole only by a link on MQTT 3.1.1 (under MQTT 5 the broker drops it): not parsed, and said why.
      if (payload.length > COMMAND_MAX_BYTES)
        return {
          refusal: [
            null,
            undefined,
            'BAD_COMMAND',
            `${payload.length} bytes: larger than a command may be (${COMMAND_MAX_BYTES} bytes)`,
          ],
        };
      let parsed: unknown;
      try {
        parsed = JSON.parse(payload.toString('utf8'));
      } catch {
        return { refusal: [null, undefined, 'BAD_COMMAND', 'not a JSON command'] };
      }
      // Named in the refusal only when it reads as a command id by the schema's own rule: an empty id, which the audit
      // log cannot record, or control characters a stranger chose, are not answered back or written down.
      const rawId = unsignedCommandSchema.shape.id.safeParse((parsed as { id?: unknown } | null)?.id);
      id = rawId.success ? rawId.data : null;
      // The schema bounds the nesting of the arguments (COMMAND_MAX_DEPTH) before anything walks them recursively.
      const result = signedCommandSchema.safeParse(parsed);
      if (!result.success) {
        const issue = result.error.issues[0];
        return {
          refusal: [
            id,
            undefined,
            'BAD_COMMAND',
            `${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`,
          ],
        };
      }
      const command = result.data;
      name = command.command;
      const check = this.checkSigned(command);
      if (!check.ok) return { refusal: [command.id, command.command, check.code, check.message] };
      if (!(FLEET_COMMANDS as readonly string[]).includes(command.command))
        return {
          refusal: [command.id, command.command, 'UNKNOWN_COMMAND', `no command ${command.command}`],
        };
      return { command, name: command.command as FleetCommandName };
    } catch (err) {
      this.options.logger.error({ err }, 'fleet command could not be checked');
      return { refusal: [id, name, 'BAD_COMMAND', 'the command could not be checked'] };
    }
  }

  /**
   * Handles a message of the commands topic. A retained one (RETAIN flag set: the broker sends its retained message on
   * this topic at every subscription, so at every reconnection) is never executed: the fleet publishes commands
   * unretained, and a retained copy is at best an old command again. It is refused `RETAINED` once per id — the id
   * claimed in the journal database with that reply, answered and audited — and any later delivery of it, or a retained
   * message that is not a valid command for this terminal, is only logged: the audit log records commands, not each
   * reconnection. (A broker clears the flag of a message it forwards to a subscription already there, MQTT 3.1.1
   * §3.3.1.3: that copy is handled as any command, and its retained copy later finds its id known.)
   *
   * Claims or refuses the command and returns: a command claimed runs in its turn ({@link run}), after those before
   * it. Throws when the claim, or the audit record of a refusal, could not be written: the command is then not
   * acknowledged.
   */
  private record(payload: Buffer, retained: boolean, late: boolean): void {
    const { terminal } = this.options;
    const verified = this.verified(payload);
    if ('refusal' in verified) {
      if (!retained) return this.refuseLimited(verified.refusal);
      const [id, command, code] = verified.refusal;
      this.options.logger.warn(
        { id, command, code },
        'retained message on the fleet commands topic ignored: not a command for this terminal',
      );
      return;
    }
    const { command, name } = verified;
    // A terminal that carries out nothing (its configuration refused) claims no id: it has no journal to claim it in.
    const refused = terminal.commandsRefused?.();
    if (refused !== undefined) {
      if (retained) {
        this.options.logger.warn(
          { id: command.id, command: name, code: refused.code },
          'retained fleet command ignored: the terminal carries out no command',
        );
        return;
      }
      this.refuseLimited([command.id, name, refused.code, refused.message]);
      return;
    }
    // At most once: the id is durable before anything is done; a redelivery finds it.
    let claim: ReturnType<FleetTerminal['claimCommand']>;
    try {
      claim = terminal.claimCommand({
        id: command.id,
        command: name,
        expiresAtMs: Date.parse(command.expiresAt),
      });
    } catch (err) {
      // A journal that takes no more writes (a failed disk sync, a full disk): not executed, and said so — the
      // operator's `fleet send` would otherwise wait for a reply and read the terminal as away.
      // Not acknowledged either (thrown on): the broker delivers it again at the next connection.
      // Its id may have reached the journal all the same (a sync that failed after the commit): never begun, it is
      // carried out at that delivery (a claim answers `waiting`).
      this.options.logger.error({ err, id: command.id, command: name }, 'fleet command id not recorded');
      this.failed(
        command.id,
        name,
        'the command id could not be recorded in the journal: not executed; not acknowledged either, so the ' +
          'broker delivers it again when the terminal next connects, and it is carried out then unless it expired',
      );
      throw err;
    }
    if (retained) {
      if (!claim.fresh) {
        this.options.logger.warn(
          { id: command.id, command: name },
          'retained fleet command ignored: its id was recorded before',
        );
        return;
      }
      this.options.logger.warn({ id: command.id, command: name }, 'fleet command refused: retained');
      this.refuseClaimed(
        command.id,
        name,
        'RETAINED',
        'a retained message is not executed: publish commands without retain, and clear this one',
      );
      return;
    }
    if ('forgotten' in claim) {
      this.refuseLimited([
        command.id,
        name,
        'STALE',
        `expires at ${command.expiresAt}, before ${new Date(claim.keptFromMs).toISOString()}: the ids of older ` +
          `commands are not kept, so it may have been executed already; not executed (the terminal's clock reads ` +
          `${this.now().toISOString()}: set back?)`,
      ]);
      return;
    }
    // Claimed before and never begun (the terminal stopped while it waited its turn, or its claim reported a failure):
    // it never took effect, and runs in its turn as a new one — its start mark decides, once, which delivery runs it.
    if (!claim.fresh && !('waiting' in claim)) {
      this.refuseDuplicate(command.id, name, claim.reply);
      return;
    }
    if (late) {
      this.refuseStopping(command.id, name);
      return;
    }
    this.commandChain = this.commandChain
      .then(() => this.run(command, name))
      .catch((err: unknown) => this.options.logger.error({ err, id: command.id }, 'fleet command failed'));
  }

  /** Carries out a command claimed, in its turn: answered, its reply kept with its id, audited. */
  private async run(command: SignedCommand, name: FleetCommandName): Promise<void> {
    const { terminal } = this.options;
    if (this.abandoned) {
      this.refuseStopping(command.id, name);
      return;
    }
    // Checked when it came; it may have waited its turn past its signed expiry since.
    const check = this.checkSigned(command);
    if (!check.ok) {
      this.refuseClaimed(command.id, name, check.code, check.message);
      return;
    }
    // At most once: the start is durable before anything is done; a delivery of the id from now on is DUPLICATE.
    let start: ReturnType<FleetTerminal['beginCommand']>;
    try {
      start = terminal.beginCommand(command.id);
    } catch (err) {
      this.options.logger.error({ err, id: command.id, command: name }, 'fleet command start not recorded');
      this.failed(
        command.id,
        name,
        'the start of the command could not be recorded in the journal: not executed',
      );
      return;
    }
    // Begun by another delivery of the id (one the broker sent again while this one waited its turn).
    if (!start.begun) {
      this.refuseDuplicate(command.id, name, start.reply);
      return;
    }
    this.options.logger.info({ id: command.id, command: name }, 'fleet command');
    const outcome = await terminal.execute(name, command.args, { id: command.id });
    const reply = this.reply(
      outcome.ok
        ? {
            id: command.id,
            command: name,
            ok: true,
            code: 'OK',
            ...(outcome.message ? { message: outcome.message } : {}),
            ...(outcome.result !== undefined ? { result: outcome.result } : {}),
          }
        : { id: command.id, command: name, ok: false, code: outcome.code, message: outcome.message },
    );
    this.finish(command.id, reply);
    terminal.audit({
      id: command.id,
      command: name,
      result: outcome.ok ? 'ok' : outcome.failed ? 'failed' : 'refused',
      code: reply.code,
    });
  }

  /**
   * Refuses a delivery of an id begun before: with the reply it got under `first`; without one when it began and its
   * end was never recorded (the terminal stopped, or the link closed, during it) — whether it took effect is not known
   * here, and it is not begun again. An id claimed and never begun is no duplicate: it runs (`waiting`).
   */
  private refuseDuplicate(
    id: string,
    name: FleetCommandName,
    first: Record<string, unknown> | undefined,
  ): void {
    this.refuseLimited(
      [
        id,
        name,
        'DUPLICATE',
        first
          ? 'this command id was executed before; not executed again'
          : 'this command id was begun before and its end not recorded (the terminal stopped during it): not ' +
            'executed again; whether it took effect is not known here (look at the terminal: its audit-log, its state)',
      ],
      first ? { first } : {},
    );
  }

  /** A command not carried out because the journal refused a write: audited (when it can be) and answered `FAILED`. */
  private failed(id: string, name: FleetCommandName, message: string): void {
    try {
      this.options.terminal.audit({ id, command: name, result: 'failed', code: 'FAILED' });
    } finally {
      this.reply({ id, command: name, ok: false, code: 'FAILED', message });
    }
  }

  /**
   * The terminal stops (a restart, a signal) and its host closes after the link: a command that came once the link was
   * closing, or still waiting when the close stopped waiting, would run on a host closing under it, its reply past the
   * link's end. Refused, with its id claimed: a redelivery after the restart is DUPLICATE, never run.
   */
  private refuseStopping(id: string, name: FleetCommandName): void {
    this.refuseClaimed(
      id,
      name,
      'NOT_ALLOWED',
      'the terminal is stopping: not executed; send it again once it is back online',
    );
  }

  /** Refuses a command whose id it claimed: answered, the reply kept with the id ({@link finish}), audited. */
  private refuseClaimed(id: string, name: FleetCommandName, code: ReplyCode, message: string): void {
    this.finish(id, this.reply({ id, command: name, ok: false, code, message }));
    this.options.terminal.audit({ id, command: name, result: 'refused', code });
  }

  /** Gives the claimed id its reply as published (what a redelivery's DUPLICATE repeats under `first`). */
  private finish(id: string, reply: CommandReply): void {
    this.options.terminal.finishCommand(id, {
      ok: reply.ok,
      code: reply.code,
      ...(reply.message !== undefined ? { message: reply.message } : {}),
      ...(reply.truncated !== undefined ? { truncated: reply.truncated } : {}),
      at: reply.at,
    });
  }

  /**
   * Stops the link: the command running given `timeoutMs` to finish and be answered, `offline` published (retained)
   * when connected, then the connection closed. The terminal's own close waits no longer than `timeoutMs` for either:
   * a command may run until the host stops (`rerun-recovery` retries while the gateway is down), and the host stops
   * after the link. A command left running has its start recorded: a redelivery is answered `DUPLICATE`, never run
   * again. A command that comes while the link closes, or that still waits its turn when the close stops waiting, is
   * not begun: refused `NOT_ALLOWED` (the terminal is stopping), its id claimed with that reply. One still waiting its
   * turn when the terminal stops before it is refused (the host closed under it) stays claimed and not begun: a
   * delivery of it after the restart carries it out.
   */
  async close(timeoutMs = 2_000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.heartbeatTimer);
    this.stopEvents();
    this.backoff.stop();
    let commandTimer: NodeJS.Timeout | undefined;
    let timedOut = false;
    const limit = new Promise<void>(
      (r) =>
        (commandTimer = setTimeout(() => {
          timedOut = true;
          r();
        }, timeoutMs)),
    );
    // Commands that came meanwhile too: each is refused at once (record), its reply out before `offline`.
    for (
      let seen: Array<Promise<void>> = [];
      !timedOut && (seen[0] !== this.receipts || seen[1] !== this.commandChain);
    ) {
      seen = [this.receipts, this.commandChain];
      await Promise.race([Promise.all(seen), limit]);
    }
    clearTimeout(commandTimer);
    this.abandoned = timedOut;
    this.summarizeDropped();
    const done = new Promise<void>((resolve) => {
      if (!this.client.connected) {
        this.client.end(true, {}, () => resolve());
        return;
      }
      this.client.publish(this.topics.status, 'offline', { qos: 1, retain: true }, () => {
        this.client.end(false, {}, () => resolve());
      });
    });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([done, new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)))]);
    clearTimeout(timer);
    if (!this.client.disconnected) this.client.end(true);
  }
}
