import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { MqttClient } from 'mqtt';
import { afterAll, beforeAll, expect, it, describe } from 'vitest';
import { connectBroker, FleetView, type BrokerSettings, type FleetKey } from '../../src/fleet/index.js';
import { START_LOOP_FILE } from '../../src/host/start-loop.js';
import { openJournal } from '../../src/journal/index.js';
import { MOSQUITTO, startMosquitto, type Broker } from '../../bench/mosquitto.js';
import { brokerSettingsFor, password, signedCommand, writeFleetKeyPair } from './fixture.js';

/**
 * A terminal that waits to start, over a real Mosquitto: `parking-terminal start` waits out of service and its fleet
 * link says so (retained status, heartbeats with the reason, the out-of-service event), and answers a signed command
 * CONFIG_REFUSED, carrying out nothing:
 * - its configuration file refused: the journal untouched, and the terminal's own link takes over once the file is
 *   corrected;
 * - in a restart loop: after failed starts it waits before starting again (src/host/start-loop.ts).
 */

const BIN = resolve(import.meta.dirname, '../../bin/parking-terminal.js');
const PREFIX = 'parking';
const TERMINAL = 'PTREFUS1';
const LOOPING = 'PTLOOP01';

const suite = MOSQUITTO || process.env.CI ? describe : describe.skip;

/** `parking-terminal start --headless` in `cwd` with `config.json`; `out` gets its standard output and error. */
function startTerminal(cwd: string, env: NodeJS.ProcessEnv, out: (text: string) => void): ChildProcess {
  const child = spawn(
    process.execPath,
    [BIN, 'start', '--headless', '--port', '0', '--config', 'config.json'],
    {
      cwd,
      env: { ...process.env, NODE_ENV: 'test', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stderr?.on('data', (c: Buffer) => out(c.toString('utf8')));
  createInterface({ input: child.stdout }).on('line', (line) => out(`${line}\n`));
  return child;
}

/** Every file of the journal's directory and a digest of its bytes. */
function journalFiles(dir: string): Record<string, string> {
  return Object.fromEntries(
    readdirSync(dir).map((name) => [
      name,
      createHash('sha256')
        .update(readFileSync(join(dir, name)))
        .digest('hex'),
    ]),
  );
}

suite('a terminal that waits to start, over a real Mosquitto', () => {
  let broker: Broker;
  let dir: string;
  let operator: BrokerSettings;
  let fleetKey: FleetKey;
  let watcher: MqttClient;
  const messages: Array<{ terminal: string; leaf: string; text: string }> = [];

  const settingsFor = (user: string): Promise<BrokerSettings> => brokerSettingsFor(broker, user);

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
      terminals: [TERMINAL, LOOPING].map((name) => ({ name, password: password(name) })),
      operators: [{ name: 'operator', password: password('operator') }],
      others: [],
    });
    dir = await mkdtemp(join(tmpdir(), 'pt-refused-fleet-'));
    ({ key: fleetKey } = await writeFleetKeyPair(dir));
    operator = await settingsFor('operator');
    watcher = connectBroker(operator, { clientId: 'test-refused-watcher', clean: true }).client;
    await new Promise<void>((r) => watcher.once('connect', () => r()));
    watcher.on('message', (topic, payload) => {
      const [, terminal, leaf] = topic.split('/');
      if (terminal !== undefined && leaf !== undefined)
        messages.push({ terminal, leaf, text: payload.toString('utf8') });
    });
    await watcher.subscribeAsync(`${PREFIX}/+/+`, { qos: 1 });
  });

  afterAll(async () => {
    watcher?.end(true);
    await broker?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('reports out of service with the reason, refuses commands without touching the journal, then starts', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'pt-refused-terminal-'));
    const settings = await settingsFor(TERMINAL);
    // A journal an earlier run left: this state must not open it.
    mkdirSync(join(cwd, 'var'));
    openJournal(join(cwd, 'var', 'journal.db')).close();
    const journalBefore = journalFiles(join(cwd, 'var'));
    const usable = {
      terminal: { id: TERMINAL },
      journal: { path: 'var/journal.db' },
      fleet: {
        url: settings.url,
        caFile: settings.caFile,
        usernameFile: settings.usernameFile,
        passwordFile: settings.passwordFile,
        topicPrefix: PREFIX,
        heartbeatSeconds: 1,
        commandKeyFile: join(dir, 'fleet-public.pem'),
      },
    };
    // The terminal and fleet sections are valid on their own; another key is not.
    await writeFile(
      join(cwd, 'config.json'),
      JSON.stringify({ ...usable, offline: { policy: 'sometimes' } }),
    );
    const view = await FleetView.connect(operator, PREFIX, { clientId: 'test-refused-view' });
    let output = '';
    const child = startTerminal(cwd, {}, (text) => (output += text));
    const row = () => view.rows().find((r) => r.terminalId === TERMINAL);
    const heartbeats = () =>
      messages
        .filter((m) => m.terminal === TERMINAL && m.leaf === 'heartbeat')
        .map((m) => JSON.parse(m.text) as Record<string, unknown>);
    try {
      await until(
        () =>
          messages.some((m) => m.terminal === TERMINAL && m.leaf === 'status' && m.text === 'online') &&
          heartbeats().length > 0,
        'online and a heartbeat while the configuration is refused',
      );
      expect(output).toContain('out of service: configuration refused (CONFIG_INVALID offline.policy)');
      const beat = heartbeats()[0]!;
      expect(beat).toMatchObject({
        terminalId: TERMINAL,
        inService: false,
        intervalSeconds: 1,
        reader: { kind: 'none', health: 'none' },
        offline: { depth: null },
        journal: { unknown: null, inFlight: null },
      });
      expect(beat.outOfService).toMatch(
        /^configuration refused \(CONFIG_INVALID offline\.policy\): .*config\.json/,
      );
      // Never a value of the file.
      expect(JSON.stringify(messages)).not.toContain('sometimes');
      await until(
        () => messages.some((m) => m.terminal === TERMINAL && m.leaf === 'events'),
        'the out-of-service event',
      );
      expect(
        messages
          .filter((m) => m.terminal === TERMINAL && m.leaf === 'events')
          .map((m) => JSON.parse(m.text) as Record<string, unknown>),
      ).toEqual([expect.objectContaining({ type: 'out-of-service', reason: beat.outOfService })]);

      // The operator's view: retained status and heartbeat, out of service with the reason.
      await view.settle({ expect: 1 });
      const late = await FleetView.connect(operator, PREFIX, { clientId: 'test-refused-late' });
      await late.settle({ expect: 1 });
      await new Promise<void>((done, failed) => {
        const timer = setTimeout(() => failed(new Error('no retained heartbeat')), 20_000);
        const check = (): void => {
          const r = late.rows().find((x) => x.terminalId === TERMINAL);
          if (r?.online !== true || r.heartbeat === undefined) return;
          clearTimeout(timer);
          stop();
          expect(r.alerts).toEqual(['out-of-service']);
          expect(r.heartbeat.outOfService).toBe(beat.outOfService);
          done();
        };
        const stop = late.onChange(check);
        check();
      });
      late.close();

      // A signed command: answered CONFIG_REFUSED, nothing done, the journal untouched.
      const flush = signedCommand(TERMINAL, 'flush-queue', fleetKey);
      const reply = await view.send(flush, 20_000);
      expect(reply).toMatchObject({
        id: flush.id,
        ok: false,
        code: 'CONFIG_REFUSED',
        command: 'flush-queue',
      });
      expect(reply?.result).toBeUndefined();
      expect(journalFiles(join(cwd, 'var'))).toEqual(journalBefore);

      // Corrected on the kiosk: the terminal starts, and its own link reports it in service.
      const statusesBefore = messages.filter((m) => m.terminal === TERMINAL && m.leaf === 'status').length;
      await writeFile(join(cwd, 'config.json'), JSON.stringify(usable));
      await until(() => heartbeats().some((h) => h.inService === true), 'a heartbeat in service');
      const statuses = messages
        .filter((m) => m.leaf === 'status')
        .slice(statusesBefore)
        .map((m) => m.text);
      // The refused state's link closed cleanly (offline), then the terminal's own link said online.
      expect(statuses).toEqual(['offline', 'online']);
      expect(row()?.online).toBe(true);
      expect(output).toContain(' ready: ');
      const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } catch (e) {
      throw new Error(`${e instanceof Error ? e.message : String(e)}\n--- terminal output ---\n${output}`);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      view.close();
      await rm(cwd, { recursive: true, force: true });
    }
  }, 90_000);

  it('reports out of service with the restart loop while it waits, and carries out no command', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'pt-loop-terminal-'));
    const settings = await settingsFor(LOOPING);
    await writeFile(
      join(cwd, 'config.json'),
      JSON.stringify({
        terminal: { id: LOOPING },
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
    const child = startTerminal(
      cwd,
      { NOTIFY_SOCKET: join(cwd, 'notify.sock'), PATH: `${bin}:${process.env.PATH ?? ''}` },
      (text) => (output += text),
    );
    const heartbeats = () =>
      messages
        .filter((m) => m.terminal === LOOPING && m.leaf === 'heartbeat')
        .map((m) => JSON.parse(m.text) as Record<string, unknown>);
    try {
      await until(
        () =>
          messages.some((m) => m.terminal === LOOPING && m.leaf === 'status' && m.text === 'online') &&
          heartbeats().length > 0,
        'online and a heartbeat while the terminal waits to start again',
      );
      expect(heartbeats()[0]).toMatchObject({
        terminalId: LOOPING,
        inService: false,
        outOfService: 'restart loop: the last 4 start(s) failed; starting again in 80 s',
      });
      const flush = signedCommand(LOOPING, 'flush-queue', fleetKey);
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
