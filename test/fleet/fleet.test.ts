import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import type { MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { SANDBOX_SHARED_SECRET } from '../../src/host/gateway-adapters.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { startFleetLink } from '../../src/host/fleet-terminal.js';
import { modelConfig, sendEvent, startSandboxLane, waitForScreen } from '../integration/models-harness.js';
import { closedPort, leaveSaleInFlight } from '../integration/down-gateway.js';
import {
  connectBroker,
  FleetLink,
  FleetView,
  readFleetKey,
  type BrokerSettings,
  type CommandReply,
  type FleetConfig,
  type FleetKey,
  type SignedCommand,
} from '../../src/fleet/index.js';
import { SimulatedFleetTerminal } from '../../src/fleet/simulated-terminal.js';
import { FleetCommandLog, openJournal } from '../../src/journal/index.js';
import { silentLogger } from '../../src/log/index.js';
import { findCardData, TEST_PANS } from '../crash/card-scan.js';
import { MOSQUITTO, startMosquitto, type Broker } from '../../bench/mosquitto.js';
import { brokerSettingsFor, password, signedCommand, writeFleetKeyPair } from './fixture.js';

/**
 * The fleet link against a real Mosquitto (issue 15): TLS with a CA made here, a password file, an ACL per terminal.
 * A real terminal process (`parking-terminal start`) and simulated terminals running the real FleetLink in this process.
 */

const BIN = resolve(import.meta.dirname, '../../bin/parking-terminal.js');
const PREFIX = 'parking';
const TERMINAL = 'PTFLEET1';
/** A terminal process whose start must first resolve what its last run left in flight. */
const RECOVERING = 'PTRECOV1';
/** A tap-and-go terminal (in this process, on the sandbox) whose open stay the operator releases through the fleet. */
const STAYS = 'PTSTAYS1';
const SIMULATED = Array.from({ length: 200 }, (_, i) => `S${String(i + 1).padStart(4, '0')}`);

// Skipped without Mosquitto on a developer's machine; CI installs it (.ci/run), so there a missing broker fails.
const suite = MOSQUITTO || process.env.CI ? describe : describe.skip;

suite('fleet link over a real Mosquitto', () => {
  let broker: Broker;
  let dir: string;
  let operator: BrokerSettings;
  let operatorConfig: string;
  let fleetKey: FleetKey;
  let wrongKey: FleetKey;
  let hmacKey: FleetKey;
  let hmacKeyFile: string;
  let replies: MqttClient;
  const received: CommandReply[] = [];
  /** Every message the operator's client saw (status, heartbeats, events, replies): scanned for card data. */
  const traffic: Buffer[] = [];
  const events: Array<Record<string, unknown>> = [];

  const settingsFor = (user: string): Promise<BrokerSettings> => brokerSettingsFor(broker, user);

  const command = (terminalId: string, name: string, args: Record<string, unknown> = {}, key = fleetKey) =>
    signedCommand(terminalId, name, key, args);

  /** The replies with `id`, once `count` of them arrived. */
  const repliesTo = (id: string, count = 1): Promise<CommandReply[]> =>
    new Promise((done, failed) => {
      const timer = setTimeout(() => failed(new Error(`no ${count} replies to ${id}`)), 15_000);
      const check = (): void => {
        const mine = received.filter((r) => r.id === id);
        if (mine.length < count) return;
        clearTimeout(timer);
        replies.off('message', check);
        done(mine);
      };
      replies.on('message', check);
      check();
    });

  /** Resolves once `predicate` holds for the view's rows (checked at each status or heartbeat). */
  const until = (view: FleetView, predicate: () => boolean, what: string): Promise<void> =>
    new Promise((done, failed) => {
      const timer = setTimeout(() => {
        stop();
        failed(new Error(`timed out waiting for ${what}`));
      }, 20_000);
      const stop = view.onChange(() => {
        if (!predicate()) return;
        clearTimeout(timer);
        stop();
        done();
      });
      if (predicate()) {
        clearTimeout(timer);
        stop();
        done();
      }
    });

  beforeAll(async () => {
    broker = await startMosquitto({
      prefix: PREFIX,
      terminals: [
        TERMINAL,
        RECOVERING,
        'RECON1',
        'BIGPKT1',
        'BIGPKT4',
        'RETAIN1',
        'FLOOD1',
        'CLOCK1',
        'ACK1',
        STAYS,
        ...SIMULATED,
      ].map((name) => ({
        name,
        password: password(name),
      })),
      operators: [{ name: 'operator', password: password('operator') }],
      others: [{ name: 'intruder', password: password('intruder') }],
    });
    dir = await mkdtemp(join(tmpdir(), 'pt-fleet-'));
    ({ key: fleetKey } = await writeFleetKeyPair(dir));
    await writeFile(
      join(dir, 'wrong-private.pem'),
      generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }),
      { mode: 0o600 },
    );
    wrongKey = readFleetKey(join(dir, 'wrong-private.pem'));
    hmacKeyFile = await broker.secret('fleet.hmac', 'a shared fleet key of at least thirty-two characters');
    hmacKey = readFleetKey(hmacKeyFile);
    operator = await settingsFor('operator');
    operatorConfig = join(dir, 'operator.json');
    await writeFile(
      operatorConfig,
      JSON.stringify({
        fleet: {
          url: operator.url,
          caFile: operator.caFile,
          usernameFile: operator.usernameFile,
          passwordFile: operator.passwordFile,
          topicPrefix: PREFIX,
          commandKeyFile: join(dir, 'fleet-private.pem'),
        },
      }),
    );
    replies = connectBroker(operator, { clientId: 'test-replies', clean: true }).client;
    await new Promise<void>((r) => replies.once('connect', () => r()));
    replies.on('message', (topic, payload) => {
      traffic.push(payload);
      if (topic.endsWith('/replies')) received.push(JSON.parse(payload.toString('utf8')) as CommandReply);
      if (topic.endsWith('/events'))
        events.push(JSON.parse(payload.toString('utf8')) as Record<string, unknown>);
    });
    await replies.subscribeAsync(
      ['replies', 'events', 'status', 'heartbeat'].map((leaf) => `${PREFIX}/+/${leaf}`),
      { qos: 1 },
    );
  });

  afterAll(async () => {
    replies?.end(true);
    await broker?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('a terminal process: retained status, heartbeats, commands executed once, refusals, last will on SIGKILL', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'pt-fleet-terminal-'));
    const terminal = await settingsFor(TERMINAL);
    await writeFile(join(cwd, 'operator.pin'), '73914826\n', { mode: 0o600 });
    await writeFile(
      join(cwd, 'config.json'),
      JSON.stringify({
        terminal: { id: TERMINAL, operatorPinFile: 'operator.pin' },
        // Each command's arrival is logged at info: a failure's message then shows which ones the terminal took.
        log: { level: 'info' },
        fleet: {
          url: terminal.url,
          caFile: terminal.caFile,
          usernameFile: terminal.usernameFile,
          passwordFile: terminal.passwordFile,
          topicPrefix: PREFIX,
          heartbeatSeconds: 1,
          commandKeyFile: join(dir, 'fleet-public.pem'),
        },
      }),
    );
    const view = await FleetView.connect(operator, PREFIX, { clientId: 'test-view' });
    let child: ChildProcess | undefined;
    let output = '';
    /** `parking-terminal start`, as the service manager runs it. */
    const startTerminal = (): ChildProcess => {
      const started = spawn(
        process.execPath,
        [BIN, 'start', '--headless', '--port', '0', '--config', 'config.json'],
        { cwd, env: { ...process.env, NODE_ENV: 'test' }, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      started.stderr?.on('data', (c: Buffer) => (output += c.toString('utf8')));
      createInterface({ input: started.stdout }).on('line', (line) => (output += `${line}\n`));
      return started;
    };
    try {
      child = startTerminal();
      const row = () => view.rows().find((r) => r.terminalId === TERMINAL);

      // Online, and a heartbeat, then another one (periodic).
      await until(
        view,
        () => row()?.online === true && row()?.heartbeat !== undefined,
        'online and a heartbeat',
      );
      const first = row()!.heartbeat!;
      await until(view, () => row()!.heartbeat!.at !== first.at, 'a second heartbeat');
      const beat = row()!.heartbeat!;
      expect(beat).toMatchObject({
        terminalId: TERMINAL,
        appVersion: '0.1.0',
        model: 'kiosk',
        inService: true,
        reader: { kind: 'sim' },
        offline: { depth: 0, declinedAfterForward: 0 },
        openAuthorizations: 0,
        journal: { unknown: 0, inFlight: 0 },
        intervalSeconds: 1,
      });
      expect(beat.diskFreeMegabytes).toBeGreaterThan(0);
      expect(
        typeof beat.gateway.clockSkewSeconds === 'number' || beat.gateway.clockSkewSeconds === null,
      ).toBe(true);

      // The status is retained: a client connecting now reads it at once.
      const late = await FleetView.connect(operator, PREFIX, { clientId: 'test-late-view' });
      await until(
        late,
        () => late.rows().some((r) => r.terminalId === TERMINAL && r.online === true),
        'retained',
      );
      late.close();

      // A command delivered twice is executed once: the second delivery is answered DUPLICATE.
      // The notice carries a card number by mistake: it must not reach the broker.
      const off = command(TERMINAL, 'out-of-service', {
        notice: `works on the barrier, call ${TEST_PANS[0]}`,
      });
      await view.publishRaw(TERMINAL, JSON.stringify(off));
      await view.publishRaw(TERMINAL, JSON.stringify(off));
      const [once, twice] = await repliesTo(off.id, 2);
      expect(once).toMatchObject({ ok: true, code: 'OK', command: 'out-of-service' });
      expect(twice).toMatchObject({ ok: false, code: 'DUPLICATE', first: { ok: true, code: 'OK' } });
      await until(view, () => row()!.heartbeat!.inService === false, 'out of service in the heartbeat');
      expect(row()!.alerts).toContain('out-of-service');
      expect(events).toContainEqual(
        expect.objectContaining({ terminalId: TERMINAL, type: 'out-of-service' }),
      );

      // A wrongly signed command from a client the ACL allows: refused with a typed code.
      const forged = command(TERMINAL, 'in-service', {}, wrongKey);
      await view.publishRaw(TERMINAL, JSON.stringify(forged));
      expect((await repliesTo(forged.id))[0]).toMatchObject({ ok: false, code: 'BAD_SIGNATURE' });
      // Signed for another terminal: not replayable here.
      const elsewhere = command('PTOTHER1', 'in-service');
      await view.publishRaw(TERMINAL, JSON.stringify(elsewhere));
      expect((await repliesTo(elsewhere.id))[0]).toMatchObject({ ok: false, code: 'WRONG_TERMINAL' });
      // An invalid configuration: refused with the schema's error.
      const bad = command(TERMINAL, 'apply-config', { config: { offline: { policy: 'sometimes' } } });
      await view.publishRaw(TERMINAL, JSON.stringify(bad));
      const badReply = (await repliesTo(bad.id))[0]!;
      expect(badReply).toMatchObject({ ok: false, code: 'CONFIG_INVALID' });
      expect(badReply.message).toContain('offline.policy');

      // A client the ACL does not allow to write commands: its correctly signed command never reaches the terminal.
      const intruder = connectBroker(await settingsFor('intruder'), {
        clientId: 'test-intruder',
        clean: true,
      }).client;
      await new Promise<void>((r) => intruder.once('connect', () => r()));
      const sneaked: SignedCommand = command(TERMINAL, 'in-service');
      await intruder.publishAsync(`${PREFIX}/${TERMINAL}/commands`, JSON.stringify(sneaked), { qos: 1 });
      intruder.end(true);

      // Back in service through the CLI (signs with the fleet key, waits for the reply): exit 0.
      const out = new Capture();
      const code = await main(
        ['fleet', 'send', TERMINAL, 'in-service', '--config', operatorConfig, '--timeout', '15'],
        { stdout: out, stderr: new Capture(), signal: new AbortController().signal, cwd: dir },
      );
      expect(code, out.text).toBe(0);
      expect(JSON.parse(out.text)).toMatchObject({ ok: true, code: 'OK', command: 'in-service' });
      // Commands run in the order they arrive: had the intruder's command arrived, it would have been answered first.
      expect(received.filter((r) => r.id === sneaked.id)).toEqual([]);

      // The audit log, fetched by a command: service mode once each way, by the fleet; refusals recorded.
      const audit = command(TERMINAL, 'audit-log', { limit: 100 });
      await view.publishRaw(TERMINAL, JSON.stringify(audit));
      const records = ((await repliesTo(audit.id))[0]!.result as { records: Array<Record<string, unknown>> })
        .records;
      expect(records.filter((r) => r.action === 'service-mode-on')).toMatchObject([{ actor: 'fleet' }]);
      expect(records.filter((r) => r.action === 'service-mode-off')).toMatchObject([{ actor: 'fleet' }]);
      const fleetRecords = records.filter((r) => r.action === 'fleet-command');
      expect(fleetRecords.map((r) => [r.subject, r.result, r.code])).toEqual(
        expect.arrayContaining([
          [off.id, 'ok', 'OK'],
          [off.id, 'refused', 'DUPLICATE'],
          [forged.id, 'refused', 'BAD_SIGNATURE'],
          [elsewhere.id, 'refused', 'WRONG_TERMINAL'],
          [bad.id, 'refused', 'CONFIG_INVALID'],
        ]),
      );
      expect(fleetRecords.every((r) => r.actor === 'fleet')).toBe(true);
      expect(records.some((r) => r.subject === sneaked.id)).toBe(false);

      // A configuration that would cut the terminal off its fleet: refused, the file untouched, no restart. Another
      // terminal id moves its topics; a password the broker refuses is found out by connecting before applying.
      const running = await readFile(join(cwd, 'config.json'), 'utf8');
      const base = JSON.parse(running) as { terminal: object; fleet: object };
      const renamed = command(TERMINAL, 'apply-config', {
        config: { ...base, terminal: { ...base.terminal, id: 'PTFLEET9' } },
      });
      await view.publishRaw(TERMINAL, JSON.stringify(renamed));
      expect((await repliesTo(renamed.id))[0]).toMatchObject({ ok: false, code: 'FLEET_IDENTITY_CHANGE' });
      const wrongPassword = await broker.secret(`${TERMINAL}.wrong-password`, 'not-the-password');
      const locked = command(TERMINAL, 'apply-config', {
        config: { ...base, fleet: { ...base.fleet, passwordFile: wrongPassword } },
      });
      await view.publishRaw(TERMINAL, JSON.stringify(locked));
      const lockedReply = (await repliesTo(locked.id))[0]!;
      expect(lockedReply).toMatchObject({ ok: false, code: 'BROKER_UNREACHABLE' });
      expect(lockedReply.message).toContain('fleet.passwordFile');
      expect(await readFile(join(cwd, 'config.json'), 'utf8')).toBe(running);
      expect(child.exitCode).toBeNull();

      // A new configuration, applied while idle: the file replaced, the change audited (actor fleet), the terminal
      // restarted through its restart exit code; started again as the service manager would, it runs the new one.
      const current = JSON.parse(await readFile(join(cwd, 'config.json'), 'utf8')) as Record<string, unknown>;
      const next = { ...current, fleet: { ...(current.fleet as object), heartbeatSeconds: 2 } };
      const apply = command(TERMINAL, 'apply-config', { config: next });
      const restartCode = new Promise<number | null>((r) => child!.once('exit', (code) => r(code)));
      await view.publishRaw(TERMINAL, JSON.stringify(apply));
      expect((await repliesTo(apply.id))[0]).toMatchObject({ ok: true, code: 'OK' });
      expect(await restartCode).toBe(75);
      expect(JSON.parse(await readFile(join(cwd, 'config.json'), 'utf8'))).toEqual(next);
      await until(view, () => row()?.online === false, 'offline after the restart exit');
      child = startTerminal();
      await until(
        view,
        () => row()?.online === true && row()?.heartbeat?.intervalSeconds === 2,
        'the new configuration running',
      );
      // The id of a command executed before the restart is still known: not executed again.
      await view.publishRaw(TERMINAL, JSON.stringify(off));
      expect((await repliesTo(off.id, 3))[2]).toMatchObject({ code: 'DUPLICATE' });
      const audit2 = command(TERMINAL, 'audit-log', { limit: 200 });
      await view.publishRaw(TERMINAL, JSON.stringify(audit2));
      const after = ((await repliesTo(audit2.id))[0]!.result as { records: Array<Record<string, unknown>> })
        .records;
      expect(after.filter((r) => r.action === 'configuration-change' && r.actor === 'fleet')).toMatchObject([
        { subject: 'fleet.heartbeatSeconds', details: { from: 1, to: 2 } },
      ]);

      // SIGKILL: the broker publishes the last will, retained.
      const exited = new Promise((r) => child!.once('exit', r));
      child.kill('SIGKILL');
      await exited;
      await until(view, () => row()?.online === false, 'the last will');
      expect(row()!.alerts).toContain('offline');
      // Nothing that crossed the broker carries card data.
      expect(traffic.length).toBeGreaterThan(10);
      expect(traffic.flatMap((t) => findCardData(t))).toEqual([]);
    } catch (e) {
      throw new Error(`${e instanceof Error ? e.message : String(e)}\n--- terminal output ---\n${output}`);
    } finally {
      if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      view.close();
      await rm(cwd, { recursive: true, force: true });
    }
  }, 60_000);

  it('a terminal process recovering its journal: reported starting while the gateway is down, then in service', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'pt-fleet-recovering-'));
    const settings = await settingsFor(RECOVERING);
    await leaveSaleInFlight(join(cwd, 'var', 'journal.db'), 'LEFT-BY-LAST-RUN');
    // The gateway is down: a loopback port just released, where the sandbox comes up later.
    const port = await closedPort();
    await writeFile(join(cwd, 'shared-secret'), `${SANDBOX_SHARED_SECRET}\n`, { mode: 0o600 });
    await writeFile(
      join(cwd, 'config.json'),
      JSON.stringify({
        terminal: { id: RECOVERING },
        gateway: {
          kind: 'remote',
          baseUrl: `http://127.0.0.1:${port}`,
          auth: { method: 'http-signature', sharedSecretFile: 'shared-secret' },
        },
        journal: { path: 'var/journal.db', resolutionRetryMs: 100 },
        fleet: {
          url: settings.url,
          caFile: settings.caFile,
          usernameFile: settings.usernameFile,
          passwordFile: settings.passwordFile,
          topicPrefix: PREFIX,
          heartbeatSeconds: 1,
        },
      }),
    );
    const view = await FleetView.connect(operator, PREFIX, { clientId: 'test-recovering-view' });
    let output = '';
    const child = spawn(
      process.execPath,
      [BIN, 'start', '--headless', '--port', '0', '--config', 'config.json'],
      {
        cwd,
        env: { ...process.env, NODE_ENV: 'test' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child.stderr?.on('data', (c: Buffer) => (output += c.toString('utf8')));
    createInterface({ input: child.stdout }).on('line', (line) => (output += `${line}\n`));
    let sandbox: Sandbox | undefined;
    try {
      const row = () => view.rows().find((r) => r.terminalId === RECOVERING);
      await until(
        view,
        () => row()?.online === true && row()?.heartbeat?.inService === false,
        'a heartbeat of the terminal starting',
      );
      expect(row()!.heartbeat).toMatchObject({
        outOfService: 'starting: resolving 1 journal entry left in flight before the first card',
        journal: { inFlight: expect.any(Number) as number },
      });
      expect(row()!.alerts).toContain('out-of-service');
      expect(output).not.toContain(' ready: ');

      sandbox = await startSandbox({ port, logger: silentLogger() });
      await until(view, () => row()?.heartbeat?.inService === true, 'in service once recovery is done');
      expect(row()!.heartbeat).toMatchObject({ journal: { unknown: 0, inFlight: 0 } });
      expect(events).toContainEqual(expect.objectContaining({ terminalId: RECOVERING, type: 'in-service' }));
      expect(output).toContain(' ready: ');
      const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } catch (e) {
      throw new Error(`${e instanceof Error ? e.message : String(e)}\n--- terminal output ---\n${output}`);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      view.close();
      await sandbox?.close();
      await rm(cwd, { recursive: true, force: true });
    }
  }, 60_000);

  it('reconnects after the broker restarts, and says online again', async () => {
    const sim = new SimulatedFleetTerminal('RECON1');
    const config: FleetConfig = {
      ...(await settingsFor('RECON1')),
      topicPrefix: PREFIX,
      heartbeatSeconds: 30,
      reconnectMaxSeconds: 2,
      commandMaxAgeSeconds: 600,
      maintenanceWindow: { start: '03:00', end: '05:00' },
    };
    const link = FleetLink.start({ config, terminal: sim, logger: silentLogger(), key: hmacKey });
    try {
      await link.whenConnected();
      const closed = new Promise<void>((r) => link.onceDisconnected(r));
      await broker.stop();
      await closed;
      expect(link.isConnected).toBe(false);
      // Events while the broker is away wait (bounded); heartbeats are not queued.
      sim.emit({ type: 'out-of-service', reason: 'test' });
      await broker.start();
      await link.whenConnected();
      // The retained status is gone with the broker (no persistence): the link published it again.
      const view = await FleetView.connect(operator, PREFIX, { clientId: 'test-recon-view' });
      try {
        await until(
          view,
          () => view.rows().some((r) => r.terminalId === 'RECON1' && r.online === true),
          'online',
        );
      } finally {
        view.close();
      }
    } finally {
      await link.close();
    }
    // The replies subscription of this test's client reconnects too.
    await new Promise<void>((r) => (replies.connected ? r() : replies.once('connect', () => r())));
  }, 30_000);

  it.each([
    // MQTT 5: refused by the protocol, the broker never sends it to the terminal.
    { mqttVersion: 5 as const, id: 'BIGPKT1', codes: ['OK', 'OK'] },
    // MQTT 3.1.1 (a broker without MQTT 5): sent whole, read, and refused by the link's own size check.
    { mqttVersion: 4 as const, id: 'BIGPKT4', codes: ['OK', 'BAD_COMMAND', 'OK'] },
  ])(
    'a packet larger than a command may be never reaches a command (MQTT $mqttVersion)',
    async ({ mqttVersion, id, codes: expected }) => {
      // MQTT.js reads a packet whole (up to 256 MB) before the link's own 256 KiB check could look at it.
      const sim = new SimulatedFleetTerminal(id);
      // An operator's client of its own (this test's: the shared one may still be resubscribing after the restart).
      const operatorClient = connectBroker(operator, {
        clientId: `test-big-packet-${mqttVersion}`,
        clean: true,
      }).client;
      const seen: Array<{ topic: string; payload: Buffer }> = [];
      const waiters = new Set<() => void>();
      operatorClient.on('message', (topic, payload) => {
        seen.push({ topic, payload });
        for (const check of waiters) check();
      });
      /** Resolves once a message satisfying `predicate` was seen. */
      const seenOne = (predicate: (m: { topic: string; payload: Buffer }) => boolean, what: string) =>
        new Promise<void>((done, failed) => {
          const timer = setTimeout(() => failed(new Error(`not seen: ${what}`)), 15_000);
          const check = (): void => {
            if (!seen.some(predicate)) return;
            clearTimeout(timer);
            waiters.delete(check);
            done();
          };
          waiters.add(check);
          check();
        });
      const replyTo = (id: string) => (m: { topic: string; payload: Buffer }) =>
        m.topic.endsWith('/replies') && (JSON.parse(m.payload.toString('utf8')) as CommandReply).id === id;
      let link: FleetLink | undefined;
      try {
        await new Promise<void>((r) => operatorClient.once('connect', () => r()));
        await operatorClient.subscribeAsync(`${PREFIX}/${id}/+`, { qos: 1 });
        link = FleetLink.start({
          config: {
            ...(await settingsFor(id)),
            mqttVersion,
            topicPrefix: PREFIX,
            heartbeatSeconds: 30,
            reconnectMaxSeconds: 2,
            commandMaxAgeSeconds: 600,
            maintenanceWindow: { start: '03:00', end: '05:00' },
          },
          terminal: sim,
          logger: silentLogger(),
          key: hmacKey,
        });
        // The link subscribes to its commands before it publishes its first heartbeat, on the same connection: once
        // the heartbeat is here, the broker has the subscription.
        await seenOne((m) => m.topic.endsWith('/heartbeat'), 'the first heartbeat');
        let dropped = false;
        link.onceDisconnected(() => (dropped = true));
        const topic = `${PREFIX}/${id}/commands`;
        const before = command(id, 'flush-queue', {}, hmacKey);
        await operatorClient.publishAsync(topic, JSON.stringify(before), { qos: 1 });
        await seenOne(replyTo(before.id), 'the reply to the first command');
        // 300 KiB: the broker takes it from the operator (its max_packet_size is larger) and must not pass it on.
        await operatorClient.publishAsync(topic, JSON.stringify({ v: 1, pad: 'x'.repeat(300 * 1024) }), {
          qos: 1,
        });
        const after = command(id, 'flush-queue', {}, hmacKey);
        await operatorClient.publishAsync(topic, JSON.stringify(after), { qos: 1 });
        await seenOne(replyTo(after.id), 'the reply to the last command');
        // Commands are answered in the order they arrive: the large one, had it arrived, was answered before.
        const codes = seen
          .filter((m) => m.topic.endsWith('/replies'))
          .map((m) => (JSON.parse(m.payload.toString('utf8')) as CommandReply).code);
        expect(codes).toEqual(expected);
        expect(sim.audited.map((a) => a.code)).toEqual(expected);
        expect(dropped).toBe(false);
        expect(link.isConnected).toBe(true);
      } finally {
        await link?.close();
        operatorClient.end(true);
      }
    },
    30_000,
  );

  it('a retained command is refused once, not executed, and not answered again at the next subscription', async () => {
    const sim = new SimulatedFleetTerminal('RETAIN1');
    const operatorClient = connectBroker(operator, { clientId: 'test-retained', clean: true }).client;
    const replyCodes: string[] = [];
    operatorClient.on('message', (topic, payload) => {
      if (topic.endsWith('/replies'))
        replyCodes.push((JSON.parse(payload.toString('utf8')) as CommandReply).code);
    });
    const config: FleetConfig = {
      ...(await settingsFor('RETAIN1')),
      topicPrefix: PREFIX,
      heartbeatSeconds: 30,
      reconnectMaxSeconds: 2,
      commandMaxAgeSeconds: 600,
      maintenanceWindow: { start: '03:00', end: '05:00' },
    };
    const topic = `${PREFIX}/RETAIN1/commands`;
    const waitFor = async (what: string, predicate: () => boolean): Promise<void> => {
      const deadline = Date.now() + 15_000;
      while (!predicate()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${replyCodes.join(',')}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    try {
      await new Promise<void>((r) => operatorClient.once('connect', () => r()));
      await operatorClient.subscribeAsync(`${PREFIX}/RETAIN1/replies`, { qos: 1 });
      const kept = command('RETAIN1', 'out-of-service', {}, hmacKey);
      await operatorClient.publishAsync(topic, JSON.stringify(kept), { qos: 1, retain: true });
      // Two subscriptions (two starts of the link, the second resuming the session): the broker sends it each time.
      for (let start = 0; start < 2; start++) {
        const link = FleetLink.start({ config, terminal: sim, logger: silentLogger(), key: hmacKey });
        await link.whenConnected();
        await waitFor('the refusal', () => replyCodes.length >= 1);
        // The next command is answered after the retained one: by then the retained one was handled.
        const probe = command('RETAIN1', 'flush-queue', {}, hmacKey);
        await operatorClient.publishAsync(topic, JSON.stringify(probe), { qos: 1 });
        await waitFor('the probe', () => replyCodes.length >= 2 + start);
        await link.close();
      }
      expect(replyCodes).toEqual(['RETAINED', 'OK', 'OK']);
      expect(sim.executed.map((e) => e.command)).toEqual(['flush-queue', 'flush-queue']);
      expect(sim.audited.map((a) => [a.id, a.code])).toEqual([
        [kept.id, 'RETAINED'],
        [expect.any(String), 'OK'],
        [expect.any(String), 'OK'],
      ]);
    } finally {
      // Cleared, as README says, for the tests that follow.
      await operatorClient.publishAsync(topic, '', { qos: 1, retain: true });
      operatorClient.end(true);
    }
  }, 30_000);

  it('a flood of unsigned messages gets a bounded number of refusals and one summary; a signed command is answered', async () => {
    const sim = new SimulatedFleetTerminal('FLOOD1');
    const operatorClient = connectBroker(operator, { clientId: 'test-flood', clean: true }).client;
    const got: CommandReply[] = [];
    operatorClient.on('message', (topic, payload) => {
      if (topic.endsWith('/replies')) got.push(JSON.parse(payload.toString('utf8')) as CommandReply);
    });
    const config: FleetConfig = {
      ...(await settingsFor('FLOOD1')),
      topicPrefix: PREFIX,
      heartbeatSeconds: 30,
      reconnectMaxSeconds: 2,
      commandMaxAgeSeconds: 600,
      maintenanceWindow: { start: '03:00', end: '05:00' },
    };
    const topic = `${PREFIX}/FLOOD1/commands`;
    const waitFor = async (what: string, predicate: () => boolean): Promise<void> => {
      const deadline = Date.now() + 20_000;
      while (!predicate()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${got.length} replies`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const link = FleetLink.start({ config, terminal: sim, logger: silentLogger(), key: hmacKey });
    try {
      if (!operatorClient.connected)
        await new Promise<void>((r) => operatorClient.once('connect', () => r()));
      await operatorClient.subscribeAsync(`${PREFIX}/FLOOD1/replies`, { qos: 1 });
      await link.whenConnected();
      const flood = 500;
      const forged = {
        ...command('FLOOD1', 'flush-queue', {}, hmacKey),
        signature: { alg: 'hmac-sha256', value: 'AAAA' },
      };
      await Promise.all(
        Array.from({ length: flood }, (_, i) =>
          operatorClient.publishAsync(
            topic,
            i % 2 ? `junk ${i}` : JSON.stringify({ ...forged, id: `forged-${i}` }),
            {
              qos: 1,
            },
          ),
        ),
      );
      const signed = command('FLOOD1', 'flush-queue', {}, hmacKey);
      await operatorClient.publishAsync(topic, JSON.stringify(signed), { qos: 1 });
      await waitFor('the signed command', () => got.some((r) => r.id === signed.id));
      await link.close();
      await waitFor('the summary', () => got.some((r) => r.code === 'RATE_LIMITED'));
      expect(got.filter((r) => r.id === signed.id)).toMatchObject([{ ok: true, code: 'OK' }]);
      const answered = got.filter((r) => r.code === 'BAD_COMMAND' || r.code === 'BAD_SIGNATURE');
      expect(answered.length).toBeLessThanOrEqual(30);
      const summaries = got.filter((r) => r.code === 'RATE_LIMITED');
      expect(summaries).toHaveLength(1);
      expect((summaries[0]!.result as { dropped: number }).dropped + answered.length).toBe(flood);
      expect(sim.executed.map((e) => e.command)).toEqual(['flush-queue']);
      expect(sim.audited.length).toBeLessThanOrEqual(answered.length + 2);
    } finally {
      await link.close();
      operatorClient.end(true);
    }
  }, 60_000);

  it('a command replayed after the clock was set back past its forgotten id is refused, not executed again', async () => {
    // The command ids live in the journal database (FleetCommandLog) and are pruned a day after their commands
    // expired, by the terminal's clock; freshness is judged by that clock too. Set back two days (a reset real-time
    // clock, a spoofed time server), the terminal took a captured command whose id it had pruned as new.
    const day = 24 * 60 * 60 * 1000;
    const start = Date.now();
    let clock = start;
    const now = (): Date => new Date(clock);
    const journal = openJournal(':memory:', { now });
    const ids = new FleetCommandLog(journal);
    const sim = new SimulatedFleetTerminal('CLOCK1');
    // The real journal's command ids, in place of the simulated terminal's map (FleetTerminal passes the whole claim).
    sim.claimCommand = (input: Parameters<FleetCommandLog['claim']>[0]) => ids.claim(input);
    sim.beginCommand = (id) => ids.begin(id);
    sim.finishCommand = (id, reply) => ids.finish(id, reply);
    const operatorClient = connectBroker(operator, { clientId: 'test-clock', clean: true }).client;
    const got: CommandReply[] = [];
    operatorClient.on('message', (topic, payload) => {
      if (topic.endsWith('/replies')) got.push(JSON.parse(payload.toString('utf8')) as CommandReply);
    });
    const config: FleetConfig = {
      ...(await settingsFor('CLOCK1')),
      topicPrefix: PREFIX,
      heartbeatSeconds: 30,
      reconnectMaxSeconds: 2,
      commandMaxAgeSeconds: 600,
      maintenanceWindow: { start: '03:00', end: '05:00' },
    };
    const signedAt = (at: number, name: string): SignedCommand =>
      signedCommand('CLOCK1', name, hmacKey, {}, at);
    const answer = async (cmd: SignedCommand, nth = 1): Promise<CommandReply> => {
      await operatorClient.publishAsync(`${PREFIX}/CLOCK1/commands`, JSON.stringify(cmd), { qos: 1 });
      const deadline = Date.now() + 15_000;
      for (;;) {
        const mine = got.filter((r) => r.id === cmd.id);
        if (mine.length >= nth) return mine[nth - 1]!;
        if (Date.now() > deadline) throw new Error(`no reply to ${cmd.command}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const link = FleetLink.start({ config, terminal: sim, logger: silentLogger(), key: hmacKey, now });
    try {
      if (!operatorClient.connected)
        await new Promise<void>((r) => operatorClient.once('connect', () => r()));
      await operatorClient.subscribeAsync(`${PREFIX}/CLOCK1/replies`, { qos: 1 });
      await link.whenConnected();
      const captured = signedAt(start, 'out-of-service');
      expect(await answer(captured)).toMatchObject({ ok: true, code: 'OK' });
      // Two days on, back in service: the first command's id is pruned on the way.
      clock = start + 2 * day;
      expect(await answer(signedAt(clock, 'in-service'))).toMatchObject({ ok: true, code: 'OK' });
      expect(await answer(captured, 2)).toMatchObject({ ok: false, code: 'EXPIRED' });
      // Set back to within the captured command's validity, and the command replayed: it would take the terminal out
      // of service again.
      clock = start + 10_000;
      expect(await answer(captured, 3)).toMatchObject({ ok: false, code: 'STALE' });
      expect(sim.inService).toBe(true);
      // A terminal two minutes behind the operator (beyond the minute allowed) refuses even a recovery rerun, and says
      // why: its clock, and by how much it is behind the command's signed time.
      clock = start + 2 * day + 60_000;
      const behind = await answer(signedAt(clock + 120_000, 'rerun-recovery'));
      expect(behind).toMatchObject({ ok: false, code: 'NOT_YET_VALID' });
      expect(behind.message).toContain(
        `the terminal's clock reads ${new Date(clock).toISOString()}, 120 s behind the command's signed time`,
      );
      // A command signed now, whose validity reaches into the ids kept, is still taken once the clock is right.
      expect(await answer(signedAt(clock, 'flush-queue'))).toMatchObject({ ok: true, code: 'OK' });
      expect(sim.executed.map((e) => e.command)).toEqual(['out-of-service', 'in-service', 'flush-queue']);
    } finally {
      await link.close();
      operatorClient.end(true);
      journal.close();
    }
  }, 60_000);

  it('a command whose id could not be recorded is not acknowledged: the broker delivers it again, and it runs once', async () => {
    // MQTT.js acknowledged (PUBACK) every QoS 1 command as it arrived, before the link had claimed its id in the
    // journal: a terminal stopped, or a journal refusing writes, between the two lost the command — the broker, holding
    // its acknowledgement, never delivers it again. A refusal is acknowledged once recorded: never delivered again.
    const sim = new SimulatedFleetTerminal('ACK1');
    const forged = command('ACK1', 'flush-queue', {}, wrongKey);
    const flush = command('ACK1', 'flush-queue', {}, hmacKey);
    // Its id written, then the write reported failed (a sync that failed after the commit reached the disk).
    const half = command('ACK1', 'in-service', {}, hmacKey);
    let journalFailing = true;
    const claim = sim.claimCommand.bind(sim);
    sim.claimCommand = (input) => {
      if (!journalFailing) return claim(input);
      if (input.id === half.id) claim(input);
      throw new Error('SQLITE_IOERR: disk I/O error');
    };
    const operatorClient = connectBroker(operator, { clientId: 'test-ack', clean: true }).client;
    const got: CommandReply[] = [];
    operatorClient.on('message', (topic, payload) => {
      if (topic.endsWith('/replies')) got.push(JSON.parse(payload.toString('utf8')) as CommandReply);
    });
    const config: FleetConfig = {
      ...(await settingsFor('ACK1')),
      topicPrefix: PREFIX,
      heartbeatSeconds: 30,
      reconnectMaxSeconds: 2,
      commandMaxAgeSeconds: 600,
      maintenanceWindow: { start: '03:00', end: '05:00' },
    };
    const topic = `${PREFIX}/ACK1/commands`;
    const answered = async (id: string, count: number): Promise<void> => {
      const deadline = Date.now() + 15_000;
      while (got.filter((r) => r.id === id).length < count) {
        if (Date.now() > deadline) throw new Error(`no reply to ${id}: ${JSON.stringify(got)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    try {
      // Connected already, maybe, while the test's files were written.
      if (!operatorClient.connected)
        await new Promise<void>((r) => operatorClient.once('connect', () => r()));
      await operatorClient.subscribeAsync(`${PREFIX}/ACK1/replies`, { qos: 1 });
      const first = FleetLink.start({ config, terminal: sim, logger: silentLogger(), key: hmacKey });
      try {
        await first.whenConnected();
        for (const sent of [forged, flush, half])
          await operatorClient.publishAsync(topic, JSON.stringify(sent), { qos: 1 });
        await answered(half.id, 1);
      } finally {
        await first.close();
      }
      // The terminal starts again (the same session), its journal writable again.
      journalFailing = false;
      const second = FleetLink.start({ config, terminal: sim, logger: silentLogger(), key: hmacKey });
      try {
        await second.whenConnected();
        // Sent after the session resumed: answered after what the broker delivered again.
        const probe = command('ACK1', 'rerun-recovery', {}, hmacKey);
        await operatorClient.publishAsync(topic, JSON.stringify(probe), { qos: 1 });
        await answered(probe.id, 1);
      } finally {
        await second.close();
      }
      // The command whose id was written is delivered again too: never begun, it is carried out then, once.
      expect(got.map((r) => [r.id, r.code])).toEqual([
        [forged.id, 'BAD_SIGNATURE'],
        [flush.id, 'FAILED'],
        [half.id, 'FAILED'],
        [flush.id, 'OK'],
        [half.id, 'OK'],
        [expect.any(String), 'OK'],
      ]);
      expect(sim.executed.map((e) => e.command)).toEqual(['flush-queue', 'in-service', 'rerun-recovery']);
    } finally {
      operatorClient.end(true);
    }
  }, 60_000);

  it('200 simulated terminals report to one broker; fleet status lists them all within one heartbeat interval', async () => {
    const heartbeatSeconds = 30;
    const started = Date.now();
    const links = await Promise.all(
      SIMULATED.map(async (id) =>
        FleetLink.start({
          config: {
            ...(await settingsFor(id)),
            topicPrefix: PREFIX,
            heartbeatSeconds,
            reconnectMaxSeconds: 5,
            commandMaxAgeSeconds: 600,
            maintenanceWindow: { start: '03:00', end: '05:00' },
          },
          terminal: new SimulatedFleetTerminal(id),
          logger: silentLogger(),
          key: hmacKey,
        }),
      ),
    );
    try {
      await Promise.all(links.map((l) => l.whenConnected()));
      const out = new Capture();
      const code = await main(['fleet', 'status', '--json', '--config', operatorConfig, '--wait', '20'], {
        stdout: out,
        stderr: new Capture(),
        signal: new AbortController().signal,
        cwd: dir,
      });
      expect(code, out.text).toBe(0);
      const doc = JSON.parse(out.text) as {
        terminals: Array<{ terminalId: string; online: boolean; queueDepth: number; alerts: string[] }>;
      };
      const simulated = doc.terminals.filter((t) => t.terminalId.startsWith('S'));
      expect(simulated.map((t) => t.terminalId)).toEqual(SIMULATED);
      expect(simulated.every((t) => t.online && t.queueDepth === 0 && t.alerts.length === 0)).toBe(true);
      expect(Date.now() - started).toBeLessThan(heartbeatSeconds * 1000);

      // A command to one of them with the shared HMAC key, through the CLI.
      const sent = new Capture();
      const sendCode = await main(
        ['fleet', 'send', 'S0042', 'flush-queue', '--config', operatorConfig, '--fleet-key', hmacKeyFile],
        { stdout: sent, stderr: new Capture(), signal: new AbortController().signal, cwd: dir },
      );
      expect(sendCode, sent.text).toBe(0);
      expect(JSON.parse(sent.text)).toMatchObject({ ok: true, command: 'flush-queue', terminalId: 'S0042' });

      // The table form lists them too.
      const table = new Capture();
      await main(['fleet', 'status', '--config', operatorConfig, '--wait', '20'], {
        stdout: table,
        stderr: new Capture(),
        signal: new AbortController().signal,
        cwd: dir,
      });
      expect(table.text).toMatch(/^TERMINAL\s+ONLINE\s+HEARTBEAT\s+QUEUE/);
      expect(table.text).toContain('S0200');

      // watch: the live table, until Ctrl-C (the signal); a terminal going away shows as it happens.
      const live = new Capture();
      const stop = new AbortController();
      const watching = main(['fleet', 'watch', '--config', operatorConfig, '--wait', '20'], {
        stdout: live,
        stderr: new Capture(),
        signal: stop.signal,
        cwd: dir,
      });
      await live.until((text) => text.includes('S0200'));
      await links[0]!.close();
      await live.until((text) => /S0001\s+no\s/.test(text.slice(text.lastIndexOf('TERMINAL'))));
      stop.abort();
      expect(await watching).toBe(0);
    } finally {
      await Promise.all(links.map((l) => l.close()));
    }
  }, 60_000);

  it('fleet status with a password the broker refuses: BROKER_REFUSED, exit 2 (the configuration, not the network)', async () => {
    const wrong = await broker.secret('operator.wrong-password', 'not-the-password');
    const out = new Capture();
    const code = await main(
      [
        'fleet',
        'status',
        '--url',
        operator.url,
        '--ca',
        operator.caFile!,
        '--username-file',
        operator.usernameFile!,
        '--password-file',
        wrong,
      ],
      { stdout: out, stderr: new Capture(), signal: new AbortController().signal, cwd: dir },
    );
    const { error } = JSON.parse(out.text) as { error: { code: string; message: string } };
    expect(error.code).toBe('BROKER_REFUSED');
    expect(error.message).toContain(operator.url);
    expect(error.message).not.toContain('not-the-password');
    expect(code).toBe(2);
  });

  it('an open tap-and-go stay is listed and released through the fleet: one reversal at the gateway, a second release sends nothing', async () => {
    const cleanups: (() => Promise<void> | void)[] = [];
    try {
      const link = await settingsFor(STAYS);
      const { host, sandbox } = await startSandboxLane(
        modelConfig('tap-and-go', {
          terminal: { id: STAYS },
          tariff: { tapAndGoHoldMinor: 598 },
          fleet: {
            url: link.url,
            caFile: link.caFile,
            usernameFile: link.usernameFile,
            passwordFile: link.passwordFile,
            topicPrefix: PREFIX,
            heartbeatSeconds: 1,
            commandKeyFile: join(dir, 'fleet-public.pem'),
          },
        }),
        cleanups,
      );
      const fleet = startFleetLink(host, {
        configFile: undefined,
        cwd: dir,
        logger: silentLogger(),
        restart: () => undefined,
      })!;
      cleanups.push(() => fleet.close());
      // The shared replies client lost its subscriptions when an earlier test restarted the broker (a clean session).
      await replies.subscribeAsync(`${PREFIX}/${STAYS}/+`, { qos: 1 });
      const view = await FleetView.connect(operator, PREFIX, { clientId: 'test-stays-view' });
      cleanups.push(() => view.close());
      await until(
        view,
        // The link subscribes to its commands before its first heartbeat: a command sent after it is taken.
        () =>
          view.rows().some((r) => r.terminalId === STAYS && r.online === true && r.heartbeat !== undefined),
        'the tap-and-go terminal online, and its heartbeat',
      );

      // A car enters; it is let out by hand, so its stay stays open.
      host.simulator!.setCard('n2-contact');
      await sendEvent(host, { type: 'TAP_ENTRY' });
      await waitForScreen(host, (s) => s.customer.screen === 'session', 'the entry');
      await sendEvent(host, { type: 'DONE' });
      await waitForScreen(host, (s) => s.customer.screen === 'idle', 'idle');
      const hold = host.holds.unclaimed()[0]!;
      const reversals = (): number => {
        const ledger = sandbox.ledger().transactions;
        const auth = ledger.find((t) => t.transactionId === hold.holdId);
        return ledger.filter((t) => t.kind === 'reversal' && t.parentId === auth?.id).length;
      };

      // The operator lists the open stays remotely: the masked card, never the card number.
      const list = command(STAYS, 'open-stays');
      await view.publishRaw(STAYS, JSON.stringify(list));
      const listed = (await repliesTo(list.id))[0]!;
      expect(listed).toMatchObject({
        ok: true,
        code: 'OK',
        command: 'open-stays',
        result: {
          stays: [
            {
              holdId: hold.holdId,
              maskedPan: hold.maskedPan,
              enteredAt: new Date(hold.enteredAtMs).toISOString(),
              held: { minor: 598, currency: hold.currency },
              state: 'open',
              allowed: ['release'],
            },
          ],
        },
      });
      expect(JSON.stringify(listed)).not.toContain(hold.fingerprint);

      // And releases it with the operator's command line: the hold reversed in full at the gateway.
      const out = new Capture();
      const code = await main(
        [
          'fleet',
          'send',
          STAYS,
          'release-stay',
          '--args',
          JSON.stringify({ holdId: hold.holdId }),
          '--config',
          operatorConfig,
          '--timeout',
          '15',
        ],
        { stdout: out, stderr: new Capture(), signal: new AbortController().signal, cwd: dir },
      );
      expect(code, out.text).toBe(0);
      const released = JSON.parse(out.text) as CommandReply;
      expect(released).toMatchObject({
        ok: true,
        code: 'OK',
        command: 'release-stay',
        result: {
          holdId: hold.holdId,
          outcome: 'released',
          code: 'APPROVED',
          reversed: { minor: 598, currency: hold.currency },
        },
      });
      await host.settle(10_000);
      expect(host.holds.has(hold.holdId)).toBe(false);
      expect(reversals()).toBe(1);
      const auth = sandbox.ledger().transactions.find((t) => t.transactionId === hold.holdId);
      expect({ captured: auth?.amounts.captured, reversed: auth?.amounts.reversed }).toEqual({
        captured: 0,
        reversed: 598,
      });

      // A second release (a new command): nothing open to release, nothing sent.
      const again = command(STAYS, 'release-stay', { holdId: hold.holdId });
      await view.publishRaw(STAYS, JSON.stringify(again));
      expect((await repliesTo(again.id))[0]).toMatchObject({ ok: false, code: 'HOLD_NOT_FOUND' });
      await host.settle(10_000);
      expect(reversals()).toBe(1);
      expect(
        host.journal
          .list({ limit: 100 })
          .filter((e) => e.referencedTransactionId === hold.holdId)
          .map((e) => `${e.service}:${e.state}`),
      ).toEqual(['reversal:approved']);

      // The audit log: each release with the fleet command that asked for it, and each command.
      const records = host.audit.list({});
      expect(
        records
          .filter((r) => r.action === 'hold-release')
          .map((r) => [r.actor, r.subject, r.result, r.code, r.details.commandId]),
      ).toEqual([
        ['fleet', hold.holdId, 'ok', 'APPROVED', released.id],
        ['fleet', hold.holdId, 'refused', 'HOLD_NOT_FOUND', again.id],
      ]);
      expect(
        records
          .filter((r) => r.action === 'fleet-command' && r.actor === 'fleet')
          .map((r) => [r.subject, r.code]),
      ).toEqual(
        expect.arrayContaining([
          [list.id, 'OK'],
          [released.id, 'OK'],
          [again.id, 'HOLD_NOT_FOUND'],
        ]),
      );
      // The card enters again.
      await sendEvent(host, { type: 'TAP_ENTRY' });
      await waitForScreen(host, (s) => s.customer.screen === 'session', 'the entry after the release');
      // Nothing that crossed the broker carries card data.
      expect(traffic.flatMap((t) => findCardData(t))).toEqual([]);
    } finally {
      for (const c of cleanups.splice(0).reverse()) await c();
    }
  }, 60_000);

  it('starts, heartbeats and closes without delay while the broker is unreachable', async () => {
    const sim = new SimulatedFleetTerminal('RECON1');
    const link = FleetLink.start({
      config: {
        ...(await settingsFor('RECON1')),
        url: 'mqtts://127.0.0.1:1',
        topicPrefix: PREFIX,
        heartbeatSeconds: 1,
        reconnectMaxSeconds: 1,
        commandMaxAgeSeconds: 600,
        maintenanceWindow: { start: '03:00', end: '05:00' },
      },
      terminal: sim,
      logger: silentLogger(),
    });
    // FleetLink.start returns at once (it is synchronous): it never waits for the broker.
    const refused = new Promise<void>((r) => link.onceDisconnected(r));
    link.heartbeat();
    await refused;
    expect(link.isConnected).toBe(false);
    expect(link.heartbeats).toBe(0);
    // Closes at once: nothing waits for a broker that never answered (a wait would run into the test's time limit).
    await link.close();
  });
});

class Capture extends Writable {
  text = '';
  private readonly waiting = new Set<() => void>();
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.text += chunk.toString('utf8');
    for (const check of this.waiting) check();
    done();
  }

  /** Resolves once the text written so far satisfies `predicate`. */
  until(predicate: (text: string) => boolean): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(check);
        reject(new Error(`not written in time; so far:\n${this.text.slice(-2000)}`));
      }, 20_000);
      const check = (): void => {
        if (!predicate(this.text)) return;
        clearTimeout(timer);
        this.waiting.delete(check);
        resolve();
      };
      this.waiting.add(check);
      check();
    });
  }
}
