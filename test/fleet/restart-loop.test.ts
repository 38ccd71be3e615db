import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectBroker, FleetView, type BrokerSettings, type FleetKey } from '../../src/fleet/index.js';
import { START_LOOP_FILE } from '../../src/host/start-loop.js';
import { MOSQUITTO, startMosquitto, type Broker } from '../../bench/mosquitto.js';
import { brokerSettingsFor, password, signedCommand, writeFleetKeyPair } from './fixture.js';

/**
 * A terminal in a restart loop, over a real Mosquitto: while `parking-terminal start` waits before starting again
 * after failed starts (src/host/start-loop.ts), its fleet link says so — out of service with the reason — and answers
 * a signed command CONFIG_REFUSED, carrying out nothing.
 */

const BIN = resolve(import.meta.dirname, '../../bin/parking-terminal.js');
const PREFIX = 'parking';
const TERMINAL = 'PTLOOP01';

const suite = MOSQUITTO || process.env.CI ? describe : describe.skip;

suite('a terminal in a restart loop, over a real Mosquitto', () => {
  let broker: Broker;
  let dir: string;
  let operator: BrokerSettings;
  let fleetKey: FleetKey;
  let watcher: MqttClient;
  const messages: Array<{ leaf: string; text: string }> = [];

  /** Resolves once `predicate` holds (checked at each message the operator's client sees); 20 s at most. */
  const until = (predicate: () => boolean, what: string): Promise<void> =>
    new Promise((done, failed) => {
      const check = (): void => {
        if (!predicate()) return;
        clearTimeout(timer);
        watcher.off('message', check);
        done();
      };
      const timer = setTimeout(() => {
        watcher.off('message', check);
        failed(new Error(`timed out waiting for ${what}`));
      }, 20_000);
      watcher.on('message', check);
      check();
    });

  beforeAll(async () => {
    broker = await startMosquitto({
      prefix: PREFIX,
      terminals: [{ name: TERMINAL, password: password(TERMINAL) }],
      operators: [{ name: 'operator', password: password('operator') }],
      others: [],
    });
    dir = await mkdtemp(join(tmpdir(), 'pt-loop-fleet-'));
    ({ key: fleetKey } = await writeFleetKeyPair(dir));
    operator = await brokerSettingsFor(broker, 'operator');
    watcher = connectBroker(operator, { clientId: 'test-loop-watcher', clean: true }).client;
    await new Promise<void>((r) => watcher.once('connect', () => r()));
    watcher.on('message', (topic, payload) => {
      if (topic.startsWith(`${PREFIX}/${TERMINAL}/`))
        messages.push({ leaf: topic.split('/').at(-1)!, text: payload.toString('utf8') });
    });
    await watcher.subscribeAsync(`${PREFIX}/${TERMINAL}/+`, { qos: 1 });
  });

  afterAll(async () => {
    watcher?.end(true);
    await broker?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('reports out of service with the restart loop while it waits, and carries out no command', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'pt-loop-terminal-'));
    const settings = await brokerSettingsFor(broker, TERMINAL);
    await writeFile(
      join(cwd, 'config.json'),
      JSON.stringify({
        terminal: { id: TERMINAL },
        journal: { path: 'var/journal.db' },
        offline: { keyFile: 'var/offline.key' },
        fleet: {
          url: settings.url,
          caFile: settings.caFile,
          usernameFile: settings.usernameFile,
          passwordFile: settings.passwordFile,
          topicPrefix: PREFIX,
          heartbeatSeconds: 1,
          commandKeyFile: join(dir, 'fleet-public.pem'),
        },
      }),
    );
    // Four starts in a row failed before this one; it waits 80 s before it tries again.
    await writeFile(join(cwd, START_LOOP_FILE), JSON.stringify({ failed: 4 }));
    // Under a service manager: a systemd-notify on PATH that takes every message.
    const bin = join(cwd, 'bin');
    mkdirSync(bin);
    await writeFile(join(bin, 'systemd-notify'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    const view = await FleetView.connect(operator, PREFIX, { clientId: 'test-loop-view' });
    let output = '';
    const child: ChildProcess = spawn(
      process.execPath,
      [BIN, 'start', '--headless', '--port', '0', '--config', 'config.json'],
      {
        cwd,
        env: {
          ...process.env,
          NODE_ENV: 'test',
          NOTIFY_SOCKET: join(cwd, 'notify.sock'),
          PATH: `${bin}:${process.env.PATH ?? ''}`,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child.stderr?.on('data', (c: Buffer) => (output += c.toString('utf8')));
    createInterface({ input: child.stdout! }).on('line', (line) => (output += `${line}\n`));
    const heartbeats = () =>
      messages
        .filter((m) => m.leaf === 'heartbeat')
        .map((m) => JSON.parse(m.text) as Record<string, unknown>);
    try {
      await until(
        () => messages.some((m) => m.leaf === 'status' && m.text === 'online') && heartbeats().length > 0,
        'online and a heartbeat while the terminal waits to start again',
      );
      expect(heartbeats()[0]).toMatchObject({
        terminalId: TERMINAL,
        inService: false,
        outOfService: 'restart loop: the last 4 start(s) failed; starting again in 80 s',
      });
      const flush = signedCommand(TERMINAL, 'flush-queue', fleetKey);
      const reply = await view.send(flush, 20_000);
      expect(reply).toMatchObject({
        id: flush.id,
        ok: false,
        code: 'CONFIG_REFUSED',
        command: 'flush-queue',
      });
      expect(reply?.message).toContain('no command is carried out until it has started');

      const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(output).not.toContain(' ready: ');
      expect(JSON.parse(readFileSync(join(cwd, START_LOOP_FILE), 'utf8'))).toEqual({ failed: 4 });
    } catch (e) {
      throw new Error(`${e instanceof Error ? e.message : String(e)}\n--- terminal output ---\n${output}`);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      view.close();
      await rm(cwd, { recursive: true, force: true });
    }
  }, 90_000);
});
