import type { MqttClient } from 'mqtt';
import { connectBroker, type BrokerSettings, type ReconnectBackoff } from './connection.js';
import {
  alertsOf,
  heartbeatSchema,
  type CommandReply,
  type Heartbeat,
  type SignedCommand,
} from './messages.js';
import { everyTerminal, parseTopic, terminalTopics } from './topics.js';

/** One terminal as the operator's view knows it. */
export interface TerminalRow {
  terminalId: string;
  /** From its retained `status`; undefined when none was seen. */
  online: boolean | undefined;
  /** Seconds since its last heartbeat was stamped (its clock against ours); null without one. */
  heartbeatAgeSeconds: number | null;
  queueDepth: number | null;
  alerts: string[];
  heartbeat?: Heartbeat;
}

/** `url` without a user name or password it may carry, as it is printed. */
function withoutCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.username === '' && parsed.password === '') return url;
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  } catch {
    return url;
  }
}

/**
 * The operator's connection to the broker failed: `BROKER_UNREACHABLE` (no connection, or none accepted in time: the
 * broker or the network is down, which may pass) or `BROKER_REFUSED` (the broker answered and refused this client:
 * its credentials, certificate or client id — the operator's configuration).
 */
export class FleetBrokerError extends Error {
  override readonly name = 'FleetBrokerError';

  private constructor(
    readonly code: 'BROKER_UNREACHABLE' | 'BROKER_REFUSED',
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }

  /** The error of a connection to `url` that failed with `cause`. */
  static of(url: string, cause: unknown): FleetBrokerError {
    const message = cause instanceof Error ? cause.message : String(cause);
    // MQTT.js rejects a CONNACK that refuses the client with the broker's reason code, a number.
    const refused = typeof (cause as { code?: unknown } | null)?.code === 'number';
    return new FleetBrokerError(
      refused ? 'BROKER_REFUSED' : 'BROKER_UNREACHABLE',
      `${refused ? 'the broker at' : 'no connection to the broker at'} ${withoutCredentials(url)}: ${message}`,
      { cause },
    );
  }
}

/**
 * The operator's side of the fleet (`parking-terminal fleet`): every terminal under the prefix as its retained
 * `status` and `heartbeat` say, kept current while connected, and commands sent with their replies awaited.
 */
export class FleetView {
  private readonly terminals = new Map<string, { online?: boolean; heartbeat?: Heartbeat }>();
  private readonly listeners = new Set<(terminalId: string) => void>();
  private lastMessageAt = 0;

  private constructor(
    private readonly client: MqttClient,
    private readonly backoff: ReconnectBackoff,
    private readonly prefix: string,
  ) {
    client.on('message', (topic, payload) => this.message(topic, payload));
  }

  /**
   * Connects and subscribes to every terminal's `status` and `heartbeat`. Rejects when the broker does not accept
   * the connection within `timeoutMs`.
   */
  static async connect(
    settings: BrokerSettings,
    prefix: string,
    options: { clientId?: string; timeoutMs?: number } = {},
  ): Promise<FleetView> {
    const { client, backoff } = connectBroker(settings, {
      clientId: options.clientId ?? `parking-terminal-fleet-${process.pid}-${Date.now().toString(36)}`,
      clean: true,
      connectTimeout: options.timeoutMs ?? 10_000,
    });
    const view = new FleetView(client, backoff, prefix);
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error('the broker did not accept the connection in time')),
          options.timeoutMs ?? 10_000,
        );
        client.once('connect', () => {
          clearTimeout(timer);
          resolve();
        });
        client.once('error', (err) => {
          clearTimeout(timer);
          reject(err);
        });
      });
      await client.subscribeAsync([everyTerminal(prefix, 'status'), everyTerminal(prefix, 'heartbeat')], {
        qos: 1,
      });
    } catch (e) {
      view.close();
      throw FleetBrokerError.of(settings.url, e);
    }
    view.lastMessageAt = Date.now();
    return view;
  }

  private message(topic: string, payload: Buffer): void {
    const at = parseTopic(this.prefix, topic);
    if (!at || (at.leaf !== 'status' && at.leaf !== 'heartbeat')) return;
    const known = this.terminals.get(at.terminalId) ?? {};
    const text = payload.toString('utf8');
    if (at.leaf === 'status') {
      if (text === 'online') known.online = true;
      else if (text === 'offline') known.online = false;
      else if (text === '') this.terminals.delete(at.terminalId);
    } else {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        return;
      }
      // A heartbeat that does not read as one is not shown as one: the terminal is listed without a heartbeat (an
      // alert), and the rest of the fleet with theirs.
      const beat = heartbeatSchema.safeParse(parsed);
      if (beat.success) known.heartbeat = beat.data as unknown as Heartbeat;
      else delete known.heartbeat;
    }
    if (text !== '') this.terminals.set(at.terminalId, known);
    this.lastMessageAt = Date.now();
    for (const listener of this.listeners) listener(at.terminalId);
  }

  /** Calls `listener` with the terminal id of each status or heartbeat received; returns the function that stops it. */
  onChange(listener: (terminalId: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Waits until the retained messages are in: no new message for `quietMs`, or `maxMs` in all, or — when `expect`
   * is given — once that many terminals are known.
   */
  async settle(options: { quietMs?: number; maxMs?: number; expect?: number } = {}): Promise<void> {
    const quiet = options.quietMs ?? 500;
    const deadline = Date.now() + (options.maxMs ?? 5_000);
    while (Date.now() < deadline) {
      if (options.expect !== undefined && this.terminals.size >= options.expect) return;
      if (options.expect === undefined && Date.now() - this.lastMessageAt >= quiet) return;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** The terminals known, by id. */
  rows(now: Date = new Date()): TerminalRow[] {
    return [...this.terminals.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([terminalId, t]) => {
        const hb = t.heartbeat;
        const age = hb ? Math.max(0, Math.round((now.getTime() - Date.parse(hb.at)) / 1000)) : null;
        return {
          terminalId,
          online: t.online,
          heartbeatAgeSeconds: age,
          queueDepth: hb?.offline.depth ?? null,
          alerts: alertsOf({
            online: t.online,
            ...(hb ? { heartbeat: hb } : {}),
            ...(age !== null ? { ageSeconds: age } : {}),
          }),
          ...(hb ? { heartbeat: hb } : {}),
        };
      });
  }

  /**
   * Publishes a signed command (QoS 1) to its terminal and waits for the reply with its id; undefined when none
   * came within `timeoutMs`, whether or not the broker acknowledged the command by then (a publish it never takes —
   * the connection dropped, or the broker closes it over the command — is sent again at each reconnection and never
   * settles). Rejects when the broker refuses the subscription or the publish.
   */
  async send(command: SignedCommand, timeoutMs: number): Promise<CommandReply | undefined> {
    const topics = terminalTopics(this.prefix, command.terminalId);
    let done: (reply: CommandReply | undefined) => void = () => undefined;
    const answered = new Promise<CommandReply | undefined>((resolve) => (done = resolve));
    const onMessage = (topic: string, payload: Buffer): void => {
      if (topic !== topics.replies) return;
      try {
        const reply = JSON.parse(payload.toString('utf8')) as CommandReply;
        if (reply.id === command.id) done(reply);
      } catch {
        // not a reply: ignored
      }
    };
    this.client.on('message', onMessage);
    const timer = setTimeout(() => done(undefined), timeoutMs);
    try {
      const sent = this.client
        .subscribeAsync(topics.replies, { qos: 1 })
        .then(() => this.client.publishAsync(topics.commands, JSON.stringify(command), { qos: 1 }));
      return await Promise.race([answered, sent.then(() => answered)]);
    } finally {
      clearTimeout(timer);
      this.client.off('message', onMessage);
    }
  }

  /** Publishes raw bytes on a terminal's `commands` topic (tests: a command delivered twice, a forged one). */
  publishRaw(terminalId: string, payload: string): Promise<unknown> {
    return this.client.publishAsync(terminalTopics(this.prefix, terminalId).commands, payload, { qos: 1 });
  }

  close(): void {
    this.backoff.stop();
    this.client.end(true);
  }
}
