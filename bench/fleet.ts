/**
 * `fleet.heartbeats`: how many heartbeats per second one Mosquitto takes from simulated terminals — the real
 * FleetLink (health read, card-data redaction, JSON, retained QoS 0 publish over TLS) of `TERMINALS` terminals in this
 * process, each publishing a heartbeat per round, a round ending when an operator's subscriber has received them all.
 * The peer is the floor of the transport: the same number of bare MQTT.js clients publishing a heartbeat's bytes
 * the same way. Skipped (no result) where Mosquitto is not installed.
 */
import type { MqttClient } from 'mqtt';
import {
  connectBroker,
  FleetLink,
  readFleetKey,
  type BrokerSettings,
  type FleetConfig,
} from '../src/fleet/index.js';
import { MOSQUITTO, startMosquitto, type Broker } from './mosquitto.js';
import { SimulatedFleetTerminal } from '../src/fleet/simulated-terminal.js';
import { silentLogger } from '../src/log/index.js';
import { ratioOf, type Benchmark, type BenchOptions, type BenchResult } from './types.js';

const PREFIX = 'bench';
const password = (user: string): string => `bench-${user}`;

async function settings(broker: Broker, user: string): Promise<BrokerSettings> {
  return {
    url: broker.url,
    caFile: broker.caFile,
    usernameFile: await broker.secret(`${user}.user`, user),
    passwordFile: await broker.secret(`${user}.password`, password(user)),
    reconnectMaxSeconds: 5,
  };
}

function connected(client: MqttClient): Promise<void> {
  return client.connected ? Promise.resolve() : new Promise((r) => client.once('connect', () => r()));
}

/** Heartbeats per second through `publishAll` (one per terminal per round) as the subscriber counts them. */
async function rate(
  subscriber: MqttClient,
  terminals: number,
  publishAll: () => void,
  durationMs: number,
): Promise<{ perSecond: number; received: number; cpuMicrosPerHeartbeat: number }> {
  let received = 0;
  let wake: () => void = () => undefined;
  const onMessage = (): void => {
    received += 1;
    wake();
  };
  subscriber.on('message', onMessage);
  const cpu = process.cpuUsage();
  const started = performance.now();
  try {
    while (performance.now() - started < durationMs) {
      const target = received + terminals;
      publishAll();
      // A round ends when all its heartbeats arrived (QoS 0 may drop under load: a round gives up after 2 s).
      await new Promise<void>((done) => {
        const timer = setTimeout(done, 2_000);
        wake = () => {
          if (received < target) return;
          clearTimeout(timer);
          done();
        };
        wake();
      });
    }
  } finally {
    subscriber.off('message', onMessage);
  }
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  return {
    perSecond: Math.round(received / seconds),
    received,
    // This process's: the publishers' (the links, or the bare clients) and the operator's subscriber's.
    cpuMicrosPerHeartbeat: received === 0 ? 0 : Math.round((used.user + used.system) / received),
  };
}

async function run(options: BenchOptions): Promise<BenchResult[]> {
  if (!MOSQUITTO) return [];
  const terminals = options.quick ? 20 : 200;
  const durationMs = options.quick ? 500 : 5_000;
  const ids = Array.from({ length: terminals }, (_, i) => `B${String(i + 1).padStart(4, '0')}`);
  const broker = await startMosquitto({
    prefix: PREFIX,
    terminals: ids.map((name) => ({ name, password: password(name) })),
    operators: [{ name: 'operator', password: password('operator') }],
  });
  const links: FleetLink[] = [];
  const bare: MqttClient[] = [];
  let subscriber: MqttClient | undefined;
  try {
    const key = readFleetKey(await broker.secret('fleet.key', 'k'.repeat(40)));
    subscriber = connectBroker(await settings(broker, 'operator'), {
      clientId: 'bench-operator',
      clean: true,
    }).client;
    await connected(subscriber);
    await subscriber.subscribeAsync(`${PREFIX}/+/heartbeat`, { qos: 0 });

    for (const id of ids) {
      const config: FleetConfig = {
        ...(await settings(broker, id)),
        topicPrefix: PREFIX,
        heartbeatSeconds: 3_600,
        reconnectMaxSeconds: 5,
        commandMaxAgeSeconds: 600,
        maintenanceWindow: { start: '03:00', end: '05:00' },
      };
      links.push(
        FleetLink.start({ config, terminal: new SimulatedFleetTerminal(id), logger: silentLogger(), key }),
      );
    }
    await Promise.all(links.map((l) => l.whenConnected()));
    const ours = await rate(subscriber, terminals, () => links.forEach((l) => l.heartbeat()), durationMs);
    await Promise.all(links.splice(0).map((l) => l.close()));

    // The floor: bare clients publishing the bytes of a heartbeat, retained, QoS 0.
    const payload = JSON.stringify({
      ...new SimulatedFleetTerminal('B0001').health(),
      at: new Date().toISOString(),
    });
    for (const id of ids) {
      const { client, backoff } = connectBroker(await settings(broker, id), {
        clientId: `bench-bare-${id}`,
        clean: true,
      });
      backoff.stop();
      bare.push(client);
    }
    await Promise.all(bare.map(connected));
    const peer = await rate(
      subscriber,
      terminals,
      () =>
        bare.forEach((c, i) => c.publish(`${PREFIX}/${ids[i]}/heartbeat`, payload, { qos: 0, retain: true })),
      durationMs,
    );
    return [
      {
        name: 'fleet.heartbeats',
        unit: 'heartbeats/s',
        ours: ours.perSecond,
        peer: `bare MQTT.js clients (${terminals}, same broker, TLS, retained QoS 0)`,
        peerValue: peer.perSecond,
        ratio: ratioOf(ours.perSecond, peer.perSecond, true),
        cpuMicrosPerOp: ours.cpuMicrosPerHeartbeat,
        peerCpuMicrosPerOp: peer.cpuMicrosPerHeartbeat,
        extra: { terminals, received: ours.received, broker: 'mosquitto' },
      },
    ];
  } finally {
    await Promise.all(links.map((l) => l.close()));
    for (const c of bare) c.end(true);
    subscriber?.end(true);
    await broker.close();
  }
}

export const benchmarks: Benchmark[] = [
  {
    name: 'fleet.heartbeats',
    description:
      'heartbeats per second one Mosquitto takes from simulated terminals running the real fleet link, against bare MQTT.js clients publishing the same bytes',
    run,
  },
];
