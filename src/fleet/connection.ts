import { readFileSync } from 'node:fs';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { ConfigError, type Config } from '../config/index.js';
import { readSecretText, readSecretFile } from '../config/secret-file.js';

/** The fleet section of the configuration. */
export type FleetConfig = NonNullable<Config['fleet']>;

/** The broker connection settings shared by the terminal and `parking-terminal fleet` (URL, TLS, credentials). */
export type BrokerSettings = Pick<
  FleetConfig,
  'url' | 'caFile' | 'certFile' | 'keyFile' | 'usernameFile' | 'passwordFile' | 'reconnectMaxSeconds'
>;

function publicFile(file: string, key: string): Buffer {
  try {
    return readFileSync(file);
  } catch (cause) {
    throw new ConfigError('CONFIG_UNREADABLE', `${key}: cannot read ${file}`, file, key, { cause });
  }
}

/**
 * The MQTT.js options of a broker connection: TLS (the CA the broker's certificate must chain to, a client
 * certificate and key), user name and password from their files (secret files checked, src/config/secret-file.ts).
 * Reconnection is not MQTT.js's fixed period: {@link ReconnectBackoff} schedules it (`reconnectPeriod: 0`).
 * @throws ConfigError or SecretFileError naming the key and the file.
 */
export function brokerOptions(settings: BrokerSettings): IClientOptions {
  return {
    ...(settings.caFile ? { ca: publicFile(settings.caFile, 'fleet.caFile') } : {}),
    ...(settings.certFile ? { cert: publicFile(settings.certFile, 'fleet.certFile') } : {}),
    ...(settings.keyFile ? { key: readSecretFile(settings.keyFile, 'fleet.keyFile') } : {}),
    ...(settings.usernameFile
      ? { username: publicFile(settings.usernameFile, 'fleet.usernameFile').toString('utf8').trim() }
      : {}),
    ...(settings.passwordFile
      ? { password: readSecretText(settings.passwordFile, 'fleet.passwordFile') }
      : {}),
    rejectUnauthorized: true,
    reconnectPeriod: 0,
    connectTimeout: 10_000,
    // Nothing waits for a connection: a heartbeat while offline is not queued (the next one replaces it).
    queueQoSZero: false,
  };
}

/**
 * Reconnection with a doubling wait and a cap (kiosk.md §5: MQTT.js's own `reconnectPeriod` is a fixed 1 s; a fleet
 * of hundreds reconnecting to a restarted broker each second is a storm). The wait starts at `minMs`, doubles after
 * each failed attempt up to `maxMs`, with ±20 % jitter, and starts again at `minMs` once connected. Each attempt
 * starts with empty stores: nothing published while offline is replayed.
 */
export class ReconnectBackoff {
  private attempt = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly client: MqttClient,
    private readonly delays: { minMs: number; maxMs: number },
    private readonly random: () => number = Math.random,
  ) {
    client.on('connect', () => {
      this.attempt = 0;
    });
    client.on('close', () => this.schedule());
  }

  /** The wait before the next attempt, ms. */
  nextDelayMs(): number {
    const base = Math.min(this.delays.maxMs, this.delays.minMs * 2 ** this.attempt);
    return Math.round(base * (0.8 + 0.4 * this.random()));
  }

  private schedule(): void {
    if (this.stopped || this.timer !== undefined) return;
    const delay = this.nextDelayMs();
    this.attempt += 1;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (!this.stopped && !this.client.connected) this.client.reconnect();
    }, delay);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** Connects to the broker with {@link brokerOptions} plus `extra`, reconnecting with {@link ReconnectBackoff}. */
export function connectBroker(
  settings: BrokerSettings,
  extra: IClientOptions,
): { client: MqttClient; backoff: ReconnectBackoff } {
  const client = mqtt.connect(settings.url, { ...brokerOptions(settings), ...extra, reconnectPeriod: 0 });
  const backoff = new ReconnectBackoff(client, { minMs: 1_000, maxMs: settings.reconnectMaxSeconds * 1000 });
  return { client, backoff };
}

/**
 * Connects to the broker of `settings` once, as a separate client (`clientId`, a clean session: the running link's
 * persistent session and its connection are left alone), and disconnects: resolves when the broker accepted the
 * connection (URL, TLS, credentials), rejects with the reason otherwise, or after `timeoutMs`.
 */
export function checkBrokerConnection(
  settings: BrokerSettings & { mqttVersion?: 4 | 5 | undefined },
  clientId: string,
  timeoutMs = 10_000,
): Promise<void> {
  const client = mqtt.connect(settings.url, {
    ...brokerOptions(settings),
    clientId,
    clean: true,
    protocolVersion: settings.mqttVersion ?? 5,
    connectTimeout: timeoutMs,
    reconnectPeriod: 0,
  });
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => done(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    const done = (err?: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      client.removeAllListeners('connect');
      client.removeAllListeners('close');
      client.on('error', () => undefined);
      client.end(true);
      if (err) reject(err);
      else resolve();
    };
    client.once('connect', () => done());
    client.once('error', (err) => done(err));
    client.once('close', () => done(new Error('the connection closed before the broker accepted it')));
  });
}
